"""MKPMClassifier: the dynamic programme against enumeration, and the path against the reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.utils.estimator_checks import parametrize_with_checks

from msvm.core import datasets, random_code
from msvm.fast import MKPMClassifier
from msvm.fast.base import expected_failed_checks
from msvm.fast.mkpm_path import allocation_path
from msvm.reference import Problem, mkpm


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 7)),
        elements=st.floats(0, 10, allow_nan=False),
    ),
)
def test_dynamic_programme_equals_enumeration(G):
    """Proposition 1 on arbitrary G* tables, every total dimension (ties: equal risk)."""
    risk, alloc = allocation_path(np.ascontiguousarray(G))
    for d in range(G.shape[1]):
        value, _ = mkpm.brute_force(G, d)
        assert risk[d] == pytest.approx(value, abs=1e-12)
        assert alloc[d].sum() == d
        assert sum(G[l, k] for l, k in enumerate(alloc[d])) == pytest.approx(risk[d], abs=1e-12)


@pytest.fixture(scope="module")
def small():
    X, y = datasets.load("wine", n_samples=30)
    return X, y, mkpm.regularisation_path(Problem(X, y, kernel="rbf"), n_components=10)


def test_path_equals_the_reference(small):
    X, y, ref = small
    clf = MKPMClassifier(n_components=10, selection="train").fit(X, y)
    np.testing.assert_allclose(clf.risk_table_, ref.risk_table, atol=1e-9)
    np.testing.assert_allclose(clf.risk_path_, ref.risk_path, atol=1e-9)
    outputs = clf.path_outputs(X)
    for d in range(11):
        np.testing.assert_allclose(outputs[:, d, :], ref.outputs(X, d), atol=1e-8)
    assert np.all(np.diff(clf.risk_path_) <= 1e-12)  # training risk falls with d


@pytest.fixture(scope="module")
def small_weighted():
    """wine-30 with real weights in [0.2, 3], four of them 0, and its enumerated path."""
    X, y = datasets.load("wine", n_samples=30)
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=y.size)
    w[[1, 7, 12, 20]] = 0.0
    return X, y, w, mkpm.regularisation_path(Problem(X, y, kernel="rbf", sample_weight=w), 10)


def test_weighted_path_equals_the_weighted_reference(small_weighted):
    """The DP on the weighted kernel PCA (patterns of weight 0 left out) against enumeration
    over cvxpy's weighted least squares in the reference's weighted basis (those patterns
    kept, with no say): risks, and the outputs on every training point for every d."""
    X, y, w, ref = small_weighted
    clf = MKPMClassifier(n_components=10, selection="train").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(clf.risk_table_, ref.risk_table, rtol=0, atol=1e-9)
    np.testing.assert_allclose(clf.risk_path_, ref.risk_path, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(clf.allocation_path_, ref.allocation_path)
    outputs = clf.path_outputs(X)
    for d in range(11):
        np.testing.assert_allclose(outputs[:, d, :], ref.outputs(X, d), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X, clf.selected_dimension_))
    # the weights matter: the unweighted risks are other numbers
    plain = MKPMClassifier(n_components=10, selection="train").fit(X, y)
    assert np.abs(plain.risk_table_ - ref.risk_table).max() > 1e-2


def test_selected_dimension_predicts_like_the_path(small):
    X, y, ref = small
    clf = MKPMClassifier(n_components=10, selection="train").fit(X, y)
    d = clf.selected_dimension_
    assert clf.selection_errors_[d] == clf.selection_errors_.min()
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X, d))


def test_user_code_and_nystroem():
    X, y = datasets.load("digits", n_samples=300)
    code = random_code(10, 15, random_state=0)
    clf = MKPMClassifier(code=code, selection="validation", random_state=0).fit(X, y)
    assert clf.allocation_path_.shape[1] == 15
    assert clf.score(X, y) > 0.9
    exact = MKPMClassifier(n_components=40, selection="train").fit(X, y)
    nys = MKPMClassifier(
        n_components=300, approximation="nystroem", selection="train", random_state=0
    ).fit(X, y)
    # with every point a landmark the Nystroem basis spans the same space as the exact one
    np.testing.assert_allclose(nys.risk_path_[:41], exact.risk_path_, rtol=1e-6, atol=1e-9)


@parametrize_with_checks(
    [MKPMClassifier(random_state=0)], expected_failed_checks=expected_failed_checks
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("approximation", [None, "nystroem"])
def test_leave_one_out_selection_equals_refits_in_the_fixed_basis(approximation, weighted):
    """selection="loo" (PRESS) against N least-squares refits per column and dimension, each
    without one pattern, in the same kernel-PCA features z(x) (MKPM 33-41); weighted, weighted
    least-squares refits and the error rate sum_i s_i [wrong_i] / sum_i s_i."""
    X, y = datasets.load("wine", n_samples=40)
    s = np.random.default_rng(4).uniform(0.2, 3.0, size=y.size) if weighted else np.ones(y.size)
    code = random_code(3, 5, random_state=1)
    clf = MKPMClassifier(n_components=12, code=code, approximation=approximation, random_state=0)
    clf.fit(X, y, sample_weight=s if weighted else None)
    Z, y_index = clf._basis.scores(X), np.searchsorted(clf.classes_, y)
    targets = code[y_index]
    root = np.sqrt(s)[:, None]
    wrong = np.zeros(clf.allocation_path_.shape[0])
    for i in range(y.size):
        rest = np.delete(np.arange(y.size), i)
        for d, alloc in enumerate(clf.allocation_path_):
            f = np.zeros(code.shape[1])
            for l, k in enumerate(alloc):
                if k:
                    design, target = root[rest] * Z[rest, :k], root[rest, 0] * targets[rest, l]
                    beta = np.linalg.lstsq(design, target, rcond=None)[0]
                    f[l] = Z[i, :k] @ beta
            wrong[d] += s[i] * (np.argmin(((f - code) ** 2).sum(axis=1)) != y_index[i])
    assert wrong.max() > wrong.min()  # the choice of d matters on this problem
    if weighted:  # sums of real weights, in another order
        np.testing.assert_allclose(clf.selection_errors_ * s.sum(), wrong, rtol=1e-12)
    else:
        np.testing.assert_array_equal(clf.selection_errors_ * y.size, wrong)
