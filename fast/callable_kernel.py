"""A callable kernel, as scikit-learn's SVC takes one: ``kernel(A, B)`` returns the matrix of
k(a_i, b_j) for the rows of A and B.

As SVC does, the estimator fits on the Gram matrix ``kernel(X, X)`` with ``kernel="precomputed"``
and predicts from ``kernel(X_new, X)``: a fit with a callable fits a copy of the estimator with
``kernel="precomputed"`` (so every solver, check and option -- sample and class weights,
``probability``, ``fit_intercept`` -- is the precomputed one's, and the results are that fit's bit
for bit), keeps the training rows, and takes that copy's fitted attributes; ``support_vectors_``
are the training rows of ``support_`` (MKPM has none).  A sparse result of the callable is made
dense, as SVC makes it.  With ``warm_start`` the copy of the last fit starts from
its own solution.  The leave-one-out paths and searches
(``msvm.fast.loo``, ``msvm.fast.model_selection``) run on the callable's Gram matrix as on a
precomputed one (a grid of gammas has no meaning there and is refused).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted, validate_data

from msvm.core.kernels import kernel_values


def fit_with_callable(estimator, X, y, sample_weight=None):
    """Fit ``estimator`` (whose ``kernel`` is callable) on ``kernel(X, X)`` as a precomputed
    kernel (module docstring); returns the estimator.  The fitted attributes of an earlier fit
    are dropped first (a linear fit's ``coef_`` would otherwise stay)."""
    for name in [name for name in vars(estimator) if name.endswith("_") and name[0] != "_"]:
        delattr(estimator, name)
    X = validate_data(estimator, X, accept_sparse="csr", dtype=np.float64)
    gram = kernel_values(estimator.kernel, X, X)
    params = {**estimator.get_params(deep=False), "kernel": "precomputed"}
    if getattr(estimator, "warm_start", False) and hasattr(estimator, "_precomputed_model"):
        model = estimator._precomputed_model.set_params(**params)  # from its last solution
    else:
        model = clone(estimator).set_params(**params)
    model.fit(gram, y, sample_weight)
    for name, value in vars(model).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(estimator, name, value)
    estimator.n_features_in_, estimator.shape_fit_ = X.shape[1], X.shape
    if hasattr(model, "support_vectors_"):  # (MKPM has none)
        estimator.support_vectors_ = X[model.support_]
    estimator._fit_X, estimator._precomputed_model = X, model
    return estimator


def forget_callable_fit(estimator) -> None:
    """Drop what a fit with a callable kept (the training rows and the precomputed copy): a fit
    with another kernel calls it, so that they neither hold memory nor answer for it."""
    for name in ("_fit_X", "_precomputed_model"):
        estimator.__dict__.pop(name, None)


def kernel_rows(estimator, X) -> np.ndarray:
    """k(X, training rows) for a fitted estimator with a callable kernel, X validated as its
    training rows were."""
    check_is_fitted(estimator, "_precomputed_model")
    X = validate_data(estimator, X, accept_sparse="csr", dtype=np.float64, reset=False)
    return kernel_values(estimator.kernel, X, estimator._fit_X)
