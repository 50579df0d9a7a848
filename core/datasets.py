"""The small data sets that ship with scikit-learn, prepared the same way for every layer.

``iris`` (150 x 4, 3 classes, raw features), ``wine`` (178 x 13, 3 classes, standardised) and
``digits`` (a class-balanced subset of the 8x8 digits, pixel values scaled to [0, 1], 10 classes).
"""

from __future__ import annotations

import csv
import difflib
import warnings
from pathlib import Path

import numpy as np
from sklearn import datasets
from sklearn.preprocessing import StandardScaler

NAMES = ("iris", "wine", "digits")
DELIMITERS = (",", ";", "\t", "|")


def load(name: str, n_samples: int | None = None, random_state: int = 0):
    """``X, y`` for a named data set; ``n_samples`` draws a class-balanced subset."""
    if name == "iris":
        X, y = datasets.load_iris(return_X_y=True)
    elif name == "wine":
        X, y = datasets.load_wine(return_X_y=True)
        X = StandardScaler().fit_transform(X)
    elif name == "digits":
        X, y = datasets.load_digits(return_X_y=True)
        X = X / 16.0
    else:
        raise ValueError(f"Unknown data set {name!r}; expected one of {NAMES}.")
    if n_samples is not None and n_samples < y.size:
        X, y = balanced_subset(X, y, n_samples, random_state)
    return X, y


def balanced_subset(X, y, n_samples: int, random_state: int = 0):
    """``n_samples`` rows, the classes as equal in number as their sizes allow
    (``balanced_counts``; every row where there are no more); fewer rows than classes is a
    ``ValueError``."""
    if n_samples >= y.size:
        return X, y
    rng = np.random.default_rng(random_state)
    classes, sizes = np.unique(y, return_counts=True)
    if n_samples < classes.size:
        raise ValueError(
            f"A class-balanced subset of {n_samples} rows cannot hold all {classes.size} classes; "
            f"ask for {classes.size} rows or more."
        )
    orders = [rng.permutation(np.flatnonzero(y == c)) for c in classes]
    counts = balanced_counts(sizes, n_samples, rng)
    picked = np.sort(np.concatenate([o[:k] for o, k in zip(orders, counts, strict=True)]))
    return X[picked], y[picked]


def balanced_counts(sizes, n_samples: int, rng) -> np.ndarray:
    """Rows to take of each class, ``n_samples`` (< sizes.sum()) in all: every class min(size, t)
    at the largest level t that fits, the rows left over one each to classes drawn at random
    among those with rows to spare."""
    level = n_samples // sizes.size
    while level < sizes.max() and np.minimum(sizes, level + 1).sum() <= n_samples:
        level += 1
    counts = np.minimum(sizes, level)
    spare = np.flatnonzero(sizes > level)
    counts[rng.choice(spare, n_samples - counts.sum(), replace=False)] += 1
    return counts


def load_any(name: str, label_column: str | None = None, n_samples: int | None = None):
    """A bundled data set by name (prepared as :func:`load` prepares it) or a CSV file (raw
    features, :func:`load_csv`), checked for the fit: finite features and two classes or more.

    ``n_samples`` draws a class-balanced subset of either.  An unknown name that is not a file is
    a ``ValueError`` listing the bundled names (and the closest one, for a typo).
    """
    if name in NAMES:
        X, y = load(name)
    elif Path(name).is_file():
        X, y = load_csv(name, label_column)
    else:
        close = difflib.get_close_matches(name, NAMES, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"Unknown data set {name!r}: not one of {NAMES} nor a CSV file.{hint}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"Data set {name!r} contains NaN or infinite values.")
    if np.unique(y).size < 2:
        raise ValueError(f"Data set {name!r} has one class; a classifier needs at least two.")
    if n_samples is not None and n_samples < y.size:
        X, y = balanced_subset(X, y, n_samples)
    return X, y


def load_csv(path: str, label_column: str | None = None):
    """Features and labels from a CSV file with a header; the label column defaults to the last.

    The delimiter (comma, semicolon, tab or bar) is the one that splits the header; the table is
    read once by pandas' C reader when pandas is installed (a 5 000 x 784 file in about 0.3 s),
    else by numpy's.  Blank lines are skipped; a short row or a feature that is not a number is a
    ``ValueError`` naming its line and column.
    """
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            sample = handle.read(2**16)
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not a UTF-8 text file ({error.reason}).") from None
    except OSError as error:
        raise ValueError(f"{path} cannot be read: {error.strerror or error}.") from None
    lines = sample.splitlines()
    header_at = next((k for k, line in enumerate(lines) if line.strip()), None)
    if header_at is None:
        raise ValueError(f"{path} is empty.")
    delimiter = _sniff_delimiter(lines[header_at])
    header = [h.strip() for h in next(csv.reader([lines[header_at]], delimiter=delimiter))]
    if len(header) < 2:
        raise ValueError(
            f"{path}: the header {lines[header_at].strip()[:60]!r} has one column; a CSV file "
            "needs feature columns and a label column, separated by commas, semicolons, tabs "
            "or bars."
        )
    if all(_is_number(h) for h in header) and not _column_numbers(header):
        raise ValueError(
            f"{path}: the first line {lines[header_at].strip()[:60]!r} is numbers, not a "
            "header (numbered columns count as one: 0, 1, 2, ...); add a header line naming "
            "the columns (the label column last, or --label-column)."
        )
    if label_column is not None and label_column not in header:
        raise ValueError(f"No column {label_column!r} in {path}; the header is {header}.")
    column = header.index(label_column) if label_column else len(header) - 1
    features = [k for k in range(len(header)) if k != column]
    X, y = _read_table(path, header_at, delimiter, header, column, features)
    names = [header[k] for k in features]
    numbers = all(_is_number(h) for h in names) and not _column_numbers(names)
    if label_column is None and numbers and header[column] in set(y.tolist()):  # a data row
        raise ValueError(
            f"{path}: the first line {lines[header_at].strip()[:60]!r} is a data row (numbers, "
            f"and {header[column]!r} is a label of the rows below), not a header; add a header "
            "line naming the columns (the label column last, or --label-column)."
        )
    return X, y


def _read_table(path, header_at: int, delimiter: str, header, column: int, features):
    """``X, y`` under the header: pandas' reader, else numpy's, which names a bad line."""
    fast = _read_with_pandas(path, header_at, delimiter, header, column, features)
    if fast is not None:
        return fast
    read = dict(delimiter=delimiter, skiprows=header_at + 1, quotechar='"', comments=None)
    try:
        with warnings.catch_warnings():  # numpy's notes on empty input and blank lines
            warnings.simplefilter("ignore", UserWarning)
            y = np.loadtxt(path, dtype=str, usecols=[column], ndmin=1, encoding="utf-8", **read)
            X = np.loadtxt(path, dtype=np.float64, usecols=features, ndmin=2, **read)
        if y.size and _fields(path, header_at, delimiter) != len(header):
            raise ValueError("the first row's length differs from the header's")
    except ValueError as error:
        _raise_row_error(path, header, column, delimiter)  # names the line; else numpy's message
        raise ValueError(f"{path}: {error}") from None
    if y.size == 0:
        raise ValueError(f"{path} has no data rows under its header.")
    return X.reshape(y.size, len(features)), np.char.strip(y)


def _column_numbers(header) -> bool:
    """Whether a header of numbers names its columns 0, 1, 2, ... or 1, 2, 3, ... (pandas'
    default names, as a DataFrame without names writes them), not a first data row."""
    try:
        values = [int(h) for h in header]
    except ValueError:
        return False
    return values in (list(range(len(header))), list(range(1, len(header) + 1)))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_with_pandas(path, header_at: int, delimiter: str, header, column: int, features):
    """``X, y`` in one pass of pandas' C reader, or None when pandas is missing or the file is
    anything but clean (then numpy's reader, which names the offending line, takes over)."""
    try:
        import pandas as pd
    except ImportError:
        return None
    try:
        frame = pd.read_csv(
            path,
            sep=delimiter,
            header=None,
            skiprows=header_at + 1,
            names=list(range(len(header))),
            dtype={column: str},  # the labels as written; the features' types are inferred
            na_filter=False,
            quotechar='"',
            engine="c",
        )
    except (ValueError, TypeError, IndexError, OverflowError, pd.errors.ParserError):
        return None
    if frame.shape[0] == 0 or not all(
        pd.api.types.is_float_dtype(t) or pd.api.types.is_integer_dtype(t)
        for t in frame.dtypes.iloc[features]
    ):
        return None
    X = frame[features].to_numpy(dtype=np.float64)
    if np.isnan(X).any():  # a short row or a NaN field: numpy's path has the message
        return None
    y = frame[column].to_numpy(dtype=str)
    return X, np.char.strip(y)


def _sniff_delimiter(header: str) -> str:
    """The delimiter of a CSV file: the candidate that splits its header most (comma if none)."""
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else ","


def _fields(path, header_at: int, delimiter: str) -> int:
    """The number of fields of the first data row."""
    with open(path, newline="") as handle:
        rows = csv.reader(handle, delimiter=delimiter)
        for n, row in enumerate(rows):
            if n > header_at and any(f.strip() for f in row):
                return len(row)
    return 0


def _raise_row_error(path, header, column: int, delimiter: str) -> None:
    """Find the first malformed row of a CSV file (the slow way, only after numpy refused it) and
    raise a ``ValueError`` naming its line and column."""
    with open(path, newline="") as handle:
        rows = [
            (n, row)
            for n, row in enumerate(csv.reader(handle, delimiter=delimiter), 1)
            if any(f.strip() for f in row)
        ]
    for line, row in rows[1:]:
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {line}: {len(row)} fields, the header has {len(header)}."
            )
        for k, value in enumerate(row):
            if k == column:
                continue
            try:
                float(value)
            except ValueError:
                raise ValueError(
                    f"{path}, line {line}, column {header[k]!r}: {value!r} is not a number."
                ) from None
