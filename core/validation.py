"""Input validation shared by both layers: clear scikit-learn style ``ValueError``s."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_array, check_X_y
from sklearn.utils.multiclass import check_classification_targets

KERNEL_NAMES = ("linear", "rbf", "poly", "precomputed")


def check_C(C) -> float:
    """Return ``C`` as a float, or raise ``ValueError`` unless it is a finite number > 0."""
    if isinstance(C, bool) or not isinstance(C, numbers.Real):
        raise ValueError(f"C must be a positive real number, got {C!r}.")
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be a finite number > 0, got {C!r}.")
    return C


def check_kernel_params(kernel, gamma, degree, coef0) -> None:
    """Check the kernel name and its parameters (values as in scikit-learn's ``SVC``)."""
    if not isinstance(kernel, str) or kernel not in KERNEL_NAMES:
        raise ValueError(f"Unknown kernel {kernel!r}; expected one of {KERNEL_NAMES}.")
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"gamma must be 'scale', 'auto' or a float > 0, got {gamma!r}.")
    elif isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not gamma > 0:
        raise ValueError(f"gamma must be 'scale', 'auto' or a float > 0, got {gamma!r}.")
    elif not np.isfinite(gamma):
        raise ValueError(f"gamma must be finite, got {gamma!r}.")
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
        raise ValueError(f"degree must be an integer >= 1, got {degree!r}.")
    if isinstance(coef0, bool) or not isinstance(coef0, numbers.Real) or not np.isfinite(coef0):
        raise ValueError(f"coef0 must be a finite real number, got {coef0!r}.")


def check_training_data(X, y, *, kernel: str = "linear", accept_sparse=False):
    """Validate a training set and encode its labels.

    Returns ``X`` (float64, finite), ``classes`` (sorted unique labels) and ``y_index`` (integer
    class index of each row, in ``0..L-1``).  Raises ``ValueError`` for NaN/inf, mismatched
    lengths, fewer than two classes, and a precomputed kernel that is not square.
    """
    X, y = check_X_y(X, y, accept_sparse=accept_sparse, dtype=np.float64, y_numeric=False)
    check_classification_targets(y)
    classes, y_index = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {classes.size} class."
        )
    if kernel == "precomputed" and X.shape[0] != X.shape[1]:
        raise ValueError(
            f"A precomputed kernel for training must be a square Gram matrix; got shape {X.shape}."
        )
    return X, classes, y_index.astype(np.int64)


def check_predict_input(X, *, n_features: int, kernel: str, accept_sparse=False) -> np.ndarray:
    """Validate inputs to ``decision_function``: finite, and with the training width.

    With ``kernel="precomputed"`` the input is the kernel between new points and the training
    points, so it must have one column per training point.
    """
    X = check_array(X, accept_sparse=accept_sparse, dtype=np.float64)
    if X.shape[1] != n_features:
        what = "training points" if kernel == "precomputed" else "features"
        raise ValueError(
            f"X has {X.shape[1]} columns, but the model was fitted with {n_features} {what}."
        )
    return X
