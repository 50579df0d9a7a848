"""The small data sets that ship with scikit-learn, prepared the same way for every layer.

``iris`` (150 x 4, 3 classes, raw features), ``wine`` (178 x 13, 3 classes, standardised) and
``digits`` (a class-balanced subset of the 8x8 digits, pixel values scaled to [0, 1], 10 classes).
"""

from __future__ import annotations

import csv

import numpy as np
from sklearn import datasets
from sklearn.preprocessing import StandardScaler

NAMES = ("iris", "wine", "digits")


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
    """About ``n_samples`` rows with every class represented equally (as far as it can be)."""
    rng = np.random.default_rng(random_state)
    classes = np.unique(y)
    per_class = max(1, n_samples // classes.size)
    picked = np.concatenate([rng.permutation(np.flatnonzero(y == c))[:per_class] for c in classes])
    picked = np.sort(picked)
    return X[picked], y[picked]


def load_csv(path: str, label_column: str | None = None):
    """Features and labels from a CSV file with a header; the label column defaults to the last.

    Blank lines are skipped; a short row or a feature that is not a number is a ``ValueError``
    naming its line and column.
    """
    with open(path, newline="") as handle:
        rows = [
            (n, row) for n, row in enumerate(csv.reader(handle), 1) if any(f.strip() for f in row)
        ]
    if len(rows) < 2:
        raise ValueError(f"{path} has no data rows under its header.")
    header = rows[0][1]
    if label_column is not None and label_column not in header:
        raise ValueError(f"No column {label_column!r} in {path}; the header is {header}.")
    column = header.index(label_column) if label_column else len(header) - 1
    X, y = [], []
    for line, row in rows[1:]:
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {line}: {len(row)} fields, the header has {len(header)}."
            )
        y.append(row[column])
        features = []
        for k, value in enumerate(row):
            if k == column:
                continue
            try:
                features.append(float(value))
            except ValueError:
                raise ValueError(
                    f"{path}, line {line}, column {header[k]!r}: {value!r} is not a number."
                ) from None
        X.append(features)
    return np.array(X, dtype=np.float64).reshape(len(X), len(header) - 1), np.array(y)
