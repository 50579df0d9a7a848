"""scikit-learn conformance, inputs, warm starts, the kernel cache and the linear path."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
    engine,
)
from msvm.fast.base import expected_failed_checks
from msvm.reference import Problem, inhibitory

ESTIMATORS = [InhibitorySVC, OneVsAllSVC, WestonWatkinsSVC, LeeLinWahbaSVC, CrammerSingerSVC]


@parametrize_with_checks(
    [
        InhibitorySVC(random_state=0),
        OneVsAllSVC(random_state=0),
        WestonWatkinsSVC(random_state=0),
        WestonWatkinsSVC(fit_intercept=True, random_state=0),
        LeeLinWahbaSVC(random_state=0),
        InhibitorySVC(kernel="linear", random_state=0),
        InhibitorySVC(kernel="linear", fit_intercept=True, random_state=0),
        InhibitorySVC(solver="smo", random_state=0),
        CrammerSingerSVC(random_state=0),
        CrammerSingerSVC(kernel="linear", random_state=0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_scikit_learn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.fixture(scope="module")
def wine():
    return datasets.load("wine")


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_bad_input_raises_value_errors(Estimator, wine):
    X, y = wine
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Estimator().fit(bad, y)
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        Estimator().fit(bad, y)
    with pytest.raises(ValueError, match="class"):
        Estimator().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="inconsistent"):
        Estimator().fit(X, y[:-1])
    for C in (0.0, -1.0):
        with pytest.raises(ValueError, match="C"):
            Estimator(C=C).fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        Estimator(kernel="sigmoid").fit(X, y)
    with pytest.raises(ValueError, match="square"):
        Estimator(kernel="precomputed").fit(X @ X[:20].T, y)
    K = X @ X.T
    clf = Estimator(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="one per training point"):
        clf.predict(K[:, :-1])
    with pytest.raises(ValueError, match="features"):
        Estimator().fit(X, y).predict(X[:, :4])


def test_any_real_inhibition_fits_its_primal_and_a_non_finite_one_is_refused(wine):
    """mu beyond [0, 2/L] is a valid (4.1): the fit at mu = 1 equals the reference primal there,
    and E*(mu) = E*(2/L - mu) (the dual kernel depends on (1 - mu L)^2 only)."""
    X, y = wine
    options = dict(C=1.0, tol=1e-8, max_iter=-1, random_state=0)
    far = InhibitorySVC(mu=1.0, **options).fit(X, y)
    mirrored = InhibitorySVC(mu=2.0 / 3 - 1.0, **options).fit(X, y)
    reference = inhibitory.primal(Problem(X, y, C=1.0, kernel="rbf"), mu=1.0).objective
    assert far.objective_ == pytest.approx(reference, rel=1e-6)
    assert mirrored.objective_ == pytest.approx(far.objective_, rel=1e-9)
    with pytest.raises(ValueError, match="mu must be finite"):
        InhibitorySVC(mu=np.inf).fit(X, y)


def test_precomputed_kernel_equals_the_named_kernel(wine):
    X, y = wine
    from msvm.core import kernel_matrix

    a = InhibitorySVC(kernel="rbf", gamma=0.05, tol=1e-6, random_state=0).fit(X, y)
    K = kernel_matrix(X, X, "rbf", 0.05)
    b = InhibitorySVC(kernel="precomputed", tol=1e-6, random_state=0).fit(K, y)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-9)
    np.testing.assert_allclose(a.decision_function(X[:9]), b.decision_function(K[:9]), atol=1e-9)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_reproducible_with_random_state(Estimator, wine):
    a = Estimator(random_state=3).fit(*wine)
    b = Estimator(random_state=3).fit(*wine)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)


def test_max_iter_warns(wine):
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        InhibitorySVC(max_iter=1, random_state=0).fit(*wine)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        InhibitorySVC(max_iter=1, solver="smo", random_state=0).fit(*wine)


def test_small_kernel_cache_gives_the_same_solution():
    X, y = datasets.load("digits", n_samples=300)
    full = WestonWatkinsSVC(tol=1e-6, random_state=0).fit(X, y)
    # 0.05 MB holds about 20 of the 300 columns: most are recomputed on demand.
    lru = WestonWatkinsSVC(tol=1e-6, random_state=0, cache_size=0.05).fit(X, y)
    assert lru.objective_ == pytest.approx(full.objective_, rel=1e-12)
    np.testing.assert_allclose(lru.dual_coef_, full.dual_coef_, atol=1e-12)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_linear_path_dense_sparse_and_kernel_path_agree(Estimator, monkeypatch):
    # Without the Newton steps on the free face the dense and CSR epochs do the same arithmetic;
    # with them (BLAS for dense rows, scipy's sparse products for CSR) the paths part by rounding
    # and tests/fast/test_face_newton.py compares what they reach.  Likewise the proximal start
    # of dense rows (msvm.fast.ssnal; tests/fast/test_ssnal.py compares its optimum).
    monkeypatch.setattr(engine, "FACE_NEWTON", False)
    monkeypatch.setattr(engine, "PROXIMAL_START", False)
    X, y = datasets.load("digits", n_samples=200)
    params = dict(kernel="linear", C=0.1, tol=1e-6, max_iter=100_000)
    dense = Estimator(random_state=0, **params).fit(X, y)
    sparse = Estimator(random_state=0, **params).fit(sp.csr_matrix(X), y)
    kernel = Estimator(selection="greedy", **params).fit(X, y)
    np.testing.assert_allclose(sparse.dual_coef_, dense.dual_coef_, atol=1e-10)
    assert kernel.objective_ == pytest.approx(dense.objective_, rel=1e-5)
    assert dense.coef_.shape == (10, 64)
    np.testing.assert_allclose(dense.decision_function(X), X @ dense.coef_.T, atol=1e-8)
    np.testing.assert_allclose(
        sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-8
    )


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_warm_start_along_a_C_path(Estimator):
    X, y = datasets.load("digits", n_samples=300)
    warm = Estimator(C=1.0, tol=1e-5, random_state=0, warm_start=True).fit(X, y)
    warm.set_params(C=1.1).fit(X, y)
    cold = Estimator(C=1.1, tol=1e-5, random_state=0).fit(X, y)
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-4)
    assert warm.n_steps_ < 0.85 * cold.n_steps_


def test_jit_disabled_gives_the_same_answer(tmp_path):
    """The numba kernels run as plain Python with NUMBA_DISABLE_JIT=1 (catches typing shortcuts)."""
    script = (
        "import numpy as np\n"
        "from msvm.core import datasets\n"
        "from msvm.fast import engine\n"
        "engine.FACE_NEWTON = False  # the Newton steps amplify last-digit rounding differences\n"
        "engine.PROXIMAL_START = False  # (those of msvm.fast.ssnal too)\n"
        "from msvm.fast import InhibitorySVC, WestonWatkinsSVC\n"
        "X, y = datasets.load('iris', n_samples=30)\n"
        "for E in (InhibitorySVC, WestonWatkinsSVC):\n"
        "    for kw in ({}, {'kernel': 'linear'}, {'cache_size': 0.0005}, {'solver': 'smo'}):\n"
        "        print(repr(E(random_state=0, **kw).fit(X, y).objective_))\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    plain = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    jitted = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    np.testing.assert_allclose(np.array(plain, float), np.array(jitted, float), rtol=1e-12)


def test_crammer_singer_refuses_single_variable_solvers_and_bad_costs(wine):
    X, y = wine
    with pytest.raises(ValueError, match="solver"):
        CrammerSingerSVC(solver="smo").fit(X, y)
    with pytest.raises(ValueError, match="cost"):
        CrammerSingerSVC(cost=np.ones((2, 2))).fit(X, y)
    for cost in ({0: 1.0}, [[0, 1, 1], [1, 0]], [["a"] * 3] * 3):  # not a matrix of numbers
        with pytest.raises(ValueError, match="cost must be a finite"):
            CrammerSingerSVC(cost=cost).fit(X, y)


@pytest.mark.parametrize("Estimator", [InhibitorySVC, OneVsAllSVC])
def test_verbose_levels(Estimator, capsys):
    """verbose=0 prints nothing, 1 one summary line per fit, 2 a line per epoch (or class) too."""
    X, y = datasets.load("iris")
    lines = []
    for verbose in (0, 1, 2):
        Estimator(verbose=verbose, random_state=0).fit(X, y)
        lines.append(capsys.readouterr().out.splitlines())
    assert lines[0] == []
    assert len(lines[1]) == 1 and lines[1][0].startswith(f"{Estimator.__name__}: 150 patterns")
    assert len(lines[2]) > 1  # the same fit (random_state): verbose does not change the order
    assert lines[2][-1].split(", max KKT")[0] == lines[1][0].split(", max KKT")[0]
