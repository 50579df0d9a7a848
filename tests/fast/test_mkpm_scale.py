"""MKPM at scale (issue 16): partial eigensolvers, the capped dynamic programme, Nystroem."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import MKPMClassifier
from msvm.fast import mkpm as mkpm_module
from msvm.fast.kpca import top_eigenpairs
from msvm.fast.mkpm_path import capped_allocation_path
from msvm.reference import mkpm


@pytest.fixture(scope="module")
def digits():
    X, y = datasets.load("digits", n_samples=600)
    return X, y


@pytest.fixture(scope="module")
def spectrum(digits):
    """The RBF Gram matrix of 600 digits and its whole eigendecomposition by numpy (LAPACK
    syevd), descending: the independent computation the partial solvers are checked against."""
    X, _ = digits
    K = kernel_matrix(X, X, "rbf", 1.0 / (X.shape[1] * X.var()), 3, 0.0)
    s, V = np.linalg.eigh(K)
    return K, s[::-1], V[:, ::-1]


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 4)),
        elements=st.floats(0, 10, allow_nan=False),
    ),
    st.integers(0, 12),
)
def test_capped_dynamic_programme_equals_enumeration(G, extra):
    """Proposition 1 with every d_l <= K (G is (L, K+1)) and the total past K, up to L K,
    against enumerating the allocations with d_l <= K."""
    L, top = G.shape[0], G.shape[1] - 1
    width = min(top + 1 + extra, L * top + 1)
    risk, alloc = capped_allocation_path(np.ascontiguousarray(G), width)
    assert risk.shape == (width,) and alloc.shape == (width, L)
    for d in range(width):
        value, _ = mkpm.brute_force(G, d)
        assert risk[d] == pytest.approx(value, abs=1e-12)
        assert alloc[d].sum() == d and alloc[d].max() <= top
        assert sum(G[l, k] for l, k in enumerate(alloc[d])) == pytest.approx(risk[d], abs=1e-12)


@pytest.mark.parametrize("solver", ["dense", "arpack"])
def test_exact_partial_solvers_give_the_top_eigenpairs(spectrum, solver):
    K, s, V = spectrum
    gamma, A = top_eigenpairs(K, 40, solver, np.random.RandomState(0))
    np.testing.assert_allclose(gamma, s[:40], rtol=1e-12)
    # eigenvectors up to sign: |a_k . v_k| = 1 (the top 40 eigenvalues are simple)
    np.testing.assert_allclose(np.abs(np.einsum("ij,ij->j", A, V[:, :40])), 1.0, atol=1e-10)


def test_randomized_solver_approximates_the_top_eigenpairs(spectrum):
    """Halko et al.'s range finder with power iterations: measured 1.7e-5 relative on the
    40th eigenvalue of this matrix, far better on the leading ones."""
    K, s, V = spectrum
    gamma, A = top_eigenpairs(K, 40, "randomized", np.random.RandomState(0))
    np.testing.assert_allclose(gamma, s[:40], rtol=1e-4)
    np.testing.assert_allclose(gamma[:10], s[:10], rtol=1e-10)
    np.testing.assert_allclose(A.T @ A, np.eye(40), atol=1e-12)  # an orthonormal basis
    np.testing.assert_allclose(np.abs(np.einsum("ij,ij->j", A, V[:, :40])), 1.0, atol=1e-4)


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["origin", "intercept"])
@pytest.mark.parametrize("solver", ["arpack", "randomized"])
def test_partial_solvers_predict_like_the_dense_one(digits, solver, fit_intercept):
    """The partial solvers on K (or, with fit_intercept, on the centred H K H^T) against the
    dense one."""
    X, y = digits
    Xtr, ytr, Xte = X[:450], y[:450], X[450:]
    params = dict(
        approximation=None, max_column_dimension=40, fit_intercept=fit_intercept, random_state=0
    )
    dense = MKPMClassifier(eigen_solver="dense", **params).fit(Xtr, ytr)
    partial = MKPMClassifier(eigen_solver=solver, **params).fit(Xtr, ytr)
    assert dense.coef_.shape == partial.coef_.shape == (40, 10)
    assert dense.allocation_path_.shape == (401, 10)  # the total runs to L K = 400
    if solver == "arpack":  # exact to machine precision
        np.testing.assert_allclose(partial.risk_table_, dense.risk_table_, rtol=1e-10)
    else:  # approximate in the trailing components (measured 6e-10 at k = 20, 4e-3 at k = 40)
        np.testing.assert_allclose(
            partial.risk_table_[:, :21], dense.risk_table_[:, :21], rtol=1e-7
        )
        np.testing.assert_allclose(partial.risk_table_, dense.risk_table_, rtol=1e-2)
    d = dense.selected_dimension_
    assert partial.selected_dimension_ == d
    np.testing.assert_array_equal(partial.allocation_path_[d], dense.allocation_path_[d])
    np.testing.assert_array_equal(partial.predict(Xte), dense.predict(Xte))
    assert dense.score(Xte, y[450:]) > 0.85  # a non-trivial problem


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["origin", "intercept"])
def test_nystroem_with_every_point_a_landmark_is_the_exact_path(digits, fit_intercept):
    """With every training point a landmark the Nystroem features span the exact basis's; with
    fit_intercept, centring them by their mean over the training points is the exact
    centring."""
    X, y = digits
    Xtr, ytr, Xte = X[:300], y[:300], X[300:]
    kw = dict(max_column_dimension=60, fit_intercept=fit_intercept)
    exact = MKPMClassifier(approximation=None, eigen_solver="dense", **kw)
    nys = MKPMClassifier(approximation="nystroem", n_landmarks=300, **kw)
    exact.fit(Xtr, ytr)
    nys.fit(Xtr, ytr)
    np.testing.assert_allclose(nys._basis.gamma, exact._basis.gamma, rtol=1e-8)
    np.testing.assert_allclose(nys.risk_table_, exact.risk_table_, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(nys.allocation_path_, exact.allocation_path_)
    np.testing.assert_array_equal(nys.selection_errors_, exact.selection_errors_)
    np.testing.assert_allclose(
        nys.decision_function(Xte), exact.decision_function(Xte), rtol=1e-6, atol=1e-8
    )
    np.testing.assert_array_equal(nys.predict(Xte), exact.predict(Xte))


def test_the_capped_path_is_the_exact_path_where_no_column_needs_more(digits):
    """K = 30 against every component: equal risks wherever the uncapped allocation gives no
    column more than 30, and never a lower risk elsewhere (a cap only removes allocations)."""
    X, y = digits
    params = dict(approximation=None, eigen_solver="dense", selection="train")
    full = MKPMClassifier(max_column_dimension=600, **params)
    capped = MKPMClassifier(max_column_dimension=30, **params)
    full.fit(X, y)
    capped.fit(X, y)
    width = capped.risk_path_.size
    assert width == 301  # L K
    fits = full.allocation_path_[:width].max(axis=1) <= 30
    assert fits.sum() > 100 and not fits.all()
    np.testing.assert_allclose(capped.risk_path_[fits], full.risk_path_[:width][fits], atol=1e-12)
    assert np.all(capped.risk_path_ >= full.risk_path_[:width] - 1e-12)


def test_the_automatic_cap_doubles_until_the_selected_allocation_fits(digits, monkeypatch):
    X, y = digits
    monkeypatch.setattr(mkpm_module, "COLUMN_START", 4)
    auto = MKPMClassifier(approximation=None, random_state=0).fit(X, y)
    K = auto.coef_.shape[0]
    assert K in (8, 16, 32, 64, 128, 256, 512)  # grown from 4 by doubling
    assert auto.allocation_path_[auto.selected_dimension_].max() < K
    fixed = MKPMClassifier(approximation=None, max_column_dimension=K, random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.selection_errors_, fixed.selection_errors_)


def test_default_switches_to_nystroem_above_the_documented_size():
    X, y = datasets.load("digits")  # 1797 points > NYSTROEM_ABOVE = 1000
    assert X.shape[0] > mkpm_module.NYSTROEM_ABOVE
    clf = MKPMClassifier(random_state=0).fit(X, y)
    assert clf._basis.landmarks.shape[0] == X.shape[0] // 4  # N / 4 landmarks
    clf = MKPMClassifier(random_state=0).fit(X[:1000], y[:1000])
    assert clf._basis.landmarks.shape[0] == 1000  # the exact basis: every point


@pytest.mark.parametrize(
    "params",
    [
        {"eigen_solver": "lobpcg"},
        {"eigen_solver": None},
        {"n_components": 0},
        {"max_column_dimension": 0},
        {"max_column_dimension": 2.5},
        {"n_landmarks": 0},
        {"n_landmarks": -3},
        {"approximation": "nystrom"},
    ],
)
def test_bad_parameters_are_refused(params):
    X, y = datasets.load("iris")
    with pytest.raises(ValueError, match=next(iter(params))):
        MKPMClassifier(**params).fit(X, y)
