"""Each registered kernel against scikit-learn's pairwise_kernels, with corner cases."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from msvm.core import KERNELS, isvm_gamma, kernel_matrix, resolve_gamma

SKLEARN_NAME = {"linear": "linear", "rbf": "rbf", "poly": "poly"}


def cases():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 5))
    zero_rows = X.copy()
    zero_rows[[1, 4]] = 0.0
    duplicates = np.vstack([X[:6], X[:6]])
    return {"random": X, "zero_rows": zero_rows, "duplicates": duplicates}


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("case", list(cases()))
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_matches_scikit_learn(kernel, case, sparse):
    X = cases()[case]
    Y = X[::2] + 0.3
    params = {"gamma": 0.7, "degree": 3, "coef0": 1.5}
    ours = kernel_matrix(sp.csr_matrix(X) if sparse else X, Y, kernel, **params)
    kw = {} if kernel == "linear" else ({"gamma": 0.7} if kernel == "rbf" else params)
    theirs = pairwise_kernels(X, Y, metric=SKLEARN_NAME[kernel], **kw)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_gamma_rules_follow_scikit_learn():
    X = cases()["random"]
    assert resolve_gamma("scale", X) == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert resolve_gamma("scale", sp.csr_matrix(X)) == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert resolve_gamma("auto", X) == pytest.approx(1.0 / X.shape[1])
    assert resolve_gamma(0.25, X) == 0.25


def test_isvm_normalised_gaussian():
    """exp(-g ||x - x'||^2 / M) is the RBF kernel with gamma = g / M (ISVM §9)."""
    X = cases()["random"]
    M = X.shape[1]
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(
        kernel_matrix(X, X, "rbf", isvm_gamma(5.0, M)), np.exp(-5.0 * d2 / M), rtol=1e-12
    )


def test_unknown_kernel():
    with pytest.raises(ValueError, match="Unknown kernel"):
        kernel_matrix(np.eye(2), np.eye(2), "sigmoid")


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("sparse", [False, True])
def test_a_gram_matrix_is_exactly_symmetric(kernel, sparse):
    """k(X, X) must pass the precomputed-kernel check: entries (i, j) and (j, i) equal bit for
    bit, also where |x|^2 = 2.7e7 makes the expanded RBF distance round differently."""
    rng = np.random.default_rng(1)
    X = np.vstack([rng.choice([1500.0, -5000.0], size=(40, 3)), rng.standard_normal((40, 3))])
    X = sp.csr_matrix(X) if sparse else X
    K = kernel_matrix(X, X, kernel, gamma=1.0 / 3, degree=2, coef0=1.0)
    np.testing.assert_array_equal(K, K.T)
    kw = {"linear": {}, "rbf": {"gamma": 1.0 / 3}, "poly": {"gamma": 1.0 / 3, "degree": 2}}
    theirs = pairwise_kernels(
        X, metric=kernel, **kw[kernel], **({"coef0": 1.0} if kernel == "poly" else {})
    )
    np.testing.assert_allclose(K, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("Estimator", ["WestonWatkinsSVC", "MKPMClassifier"])
def test_predictions_hold_a_block_of_kernel_rows_not_the_whole_matrix(Estimator, monkeypatch):
    """k(X, support vectors) was built whole: 9.6 GB to predict 60 000 points against 20 000
    support vectors.  Blocks of BLOCK_BYTES give the same outputs, with peak memory bounded by
    the block, not by the number of points predicted."""
    import tracemalloc

    import msvm.fast
    from msvm.core import kernels

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int) + (X[:, 1] > 0.8)
    model = getattr(msvm.fast, Estimator)(random_state=0).fit(X, y)
    X_new = rng.normal(size=(6000, 5))  # k(X_new, 300 training points): 14.4 MB whole
    whole = model.decision_function(X_new)
    monkeypatch.setattr(kernels, "BLOCK_BYTES", 2**20)
    tracemalloc.start()
    blocked = model.decision_function(X_new)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_allclose(blocked, whole, rtol=1e-12, atol=1e-12)
    assert peak < 6 * 2**20  # the block's MB, the outputs and the kernel's temporaries
