"""Kernels: a small registry tested against scikit-learn's ``pairwise_kernels``.

``gamma`` follows scikit-learn: ``"scale"`` is ``1 / (n_features * X.var())``, ``"auto"`` is
``1 / n_features``.  The ISVM paper (§9) uses the *normalised* Gaussian
``exp(-g ||x - x'||^2 / M)`` with ``M`` the number of features; that is the RBF kernel with
``gamma = g / M`` (see :func:`isvm_gamma`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _dot(X, Y) -> np.ndarray:
    out = X @ Y.T
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def squared_norms(X) -> np.ndarray:
    """|x|^2 for every row of X (dense or sparse)."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def linear_kernel(X, Y, gamma, degree, coef0) -> np.ndarray:
    """k(x, y) = <x, y>."""
    return _dot(X, Y)


def _augmented(Z, *columns) -> np.ndarray:
    """[Z, c_1, c_2, ...]: Z (dense or CSR) with the given vectors appended as columns."""
    columns = [np.asarray(c, dtype=Z.dtype)[:, None] for c in columns]
    return sp.hstack([Z, *columns], format="csr") if sp.issparse(Z) else np.hstack([Z, *columns])


def rbf_exponent(X, Y, gamma) -> np.ndarray:
    """-gamma ||x - y||^2 for every pair, in one matrix product:
    ``[2 gamma X, -gamma |x|^2, 1] [Y, 1, -gamma |y|^2]^T = -gamma (|x|^2 + |y|^2 - 2 <x, y>)``.

    Rounding can leave the exponent of (nearly) equal points above 0: a few ulps at moderate
    gamma, but at gamma = 1e300 as much as 1e285, whose exponential is inf; ``rbf_kernel``
    clips it at 0 (numba's ``kernels.kernel_value`` clips the distance likewise).

    For ``Y is X`` the result is exactly symmetric, as a Gram matrix must be (the augmented
    product rounds entry (i, j) and (j, i) differently: 2e-9 apart at gamma |x|^2 = 1e7):
    2 gamma X X^T (BLAS's symmetric rank-k product) minus gamma (|x_i|^2 + |x_j|^2), by row
    blocks so that no second N x N array is made.
    """
    if Y is X:
        sq = gamma * squared_norms(X)
        E = _dot(X, X)
        step = max(1, 2**22 // max(X.shape[0], 1))
        for start in range(0, X.shape[0], step):
            rows = slice(start, start + step)
            if np.isfinite(2.0 * gamma):
                E[rows] *= 2.0 * gamma
            else:  # gamma above 9e307: gamma, then 2 (the same rounding, one pass more)
                E[rows] *= gamma
                E[rows] *= 2.0
            E[rows] -= sq[rows, None] + sq[None, :]
        return E
    return _dot(*rbf_factors(X, Y, gamma))


def rbf_factors(X, Y, gamma):
    """(A, B) with A B^T = -gamma ||x - y||^2 (``rbf_exponent``): A = [2 gamma X, -gamma |x|^2, 1],
    B = [Y, 1, -gamma |y|^2]; rows of A give rows of the product."""
    A = _augmented(2.0 * (gamma * X), -gamma * squared_norms(X), np.ones(X.shape[0]))
    B = _augmented(Y, np.ones(Y.shape[0]), -gamma * squared_norms(Y))
    return A, B


def rbf_kernel(X, Y, gamma, degree, coef0) -> np.ndarray:
    """k(x, y) = exp(-gamma ||x - y||^2): ``rbf_exponent`` clipped at 0 and exponentiated in
    place (three passes over the N x M result instead of eight); the diagonal of k(X, X) is set
    to its exact value 1.
    """
    K = rbf_exponent(X, Y, gamma)
    np.minimum(K, 0.0, out=K)
    np.exp(K, out=K)
    if X is Y:
        np.fill_diagonal(K, 1.0)
    return K


def poly_kernel(X, Y, gamma, degree, coef0) -> np.ndarray:
    """k(x, y) = (gamma <x, y> + coef0) ** degree."""
    return (gamma * _dot(X, Y) + coef0) ** degree


KERNELS = {"linear": linear_kernel, "rbf": rbf_kernel, "poly": poly_kernel}


def resolve_gamma(gamma, X) -> float:
    """The numeric ``gamma`` for training data ``X`` (scikit-learn's rules for the strings)."""
    if gamma == "scale":
        if X.size == 0 or X.max() == X.min():
            return 1.0  # zero variance, exactly (X.var() of equal entries can round to 1e-317)
        var = (X.multiply(X).mean() - X.mean() ** 2) if sp.issparse(X) else X.var()
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


def isvm_gamma(gamma_paper: float, n_features: int) -> float:
    """``gamma`` for the ISVM paper's normalised Gaussian exp(-g ||x - x'||^2 / M) (ISVM §9)."""
    return float(gamma_paper) / n_features


# Kernel entries held at a time by ``kernel_times`` (bytes).
BLOCK_BYTES = 2**26


def kernel_times(X, Y, coef, kernel: str, gamma: float = 1.0, degree: int = 3, coef0: float = 0.0):
    """k(X, Y) @ coef, a block of rows of X at a time so that about BLOCK_BYTES of kernel entries
    (and the kernel's copies of the rows) are held: a model's outputs on new points without the
    whole matrix k(X, Y) (for a prediction on 60 000 points against 20 000 support vectors,
    9.6 GB)."""
    coef = np.asarray(coef)
    # floats a row: its kernel entries, and the RBF's copies of its features
    step = max(1, BLOCK_BYTES // (8 * (Y.shape[0] + 2 * X.shape[1] + 1)))
    if X.shape[0] <= step:
        return np.asarray(kernel_matrix(X, Y, kernel, gamma, degree, coef0) @ coef)
    out = np.empty((X.shape[0], *coef.shape[1:]))
    for start in range(0, X.shape[0], step):
        rows = slice(start, start + step)
        out[rows] = kernel_matrix(X[rows], Y, kernel, gamma, degree, coef0) @ coef
    return out


def kernel_matrix(X, Y, kernel: str, gamma: float = 1.0, degree: int = 3, coef0: float = 0.0):
    """The kernel matrix ``k(X, Y)`` of shape ``(len(X), len(Y))`` for a registered kernel.

    ``gamma`` must already be numeric (see :func:`resolve_gamma`).
    """
    try:
        fn = KERNELS[kernel]
    except KeyError:
        raise ValueError(f"Unknown kernel {kernel!r}; expected one of {sorted(KERNELS)}.") from None
    return fn(X, Y, gamma, degree, coef0)


def kernel_values(kernel, A, B) -> np.ndarray:
    """A callable kernel's ``kernel(A, B)`` (as scikit-learn's SVC takes one) as a dense float64
    array (a sparse result made dense, as SVC does), checked: one row per row of A, one column
    per row of B, finite.  Both layers evaluate a callable kernel through it."""
    values = kernel(A, B)
    values = np.asarray(values.toarray() if sp.issparse(values) else values, dtype=np.float64)
    expected = (A.shape[0], B.shape[0])
    if values.shape != expected:
        raise ValueError(
            f"The kernel callable returned an array of shape {values.shape} for inputs of "
            f"{A.shape[0]} and {B.shape[0]} rows; expected {expected}: k(a_i, b_j)."
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("The kernel callable returned NaN or inf.")
    return values
