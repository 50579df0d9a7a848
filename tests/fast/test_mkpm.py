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
from msvm.fast.mkpm import allocation_path
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


@pytest.mark.parametrize("approximation", [None, "nystroem"])
def test_leave_one_out_selection_equals_refits_in_the_fixed_basis(approximation):
    """selection="loo" (PRESS) against N least-squares refits per column and dimension, each
    without one pattern, in the same kernel-PCA features z(x) (MKPM 33-41)."""
    X, y = datasets.load("wine", n_samples=40)
    code = random_code(3, 5, random_state=1)
    clf = MKPMClassifier(n_components=12, code=code, approximation=approximation, random_state=0)
    clf.fit(X, y)
    Z, y_index = clf._basis.scores(X), np.searchsorted(clf.classes_, y)
    targets = code[y_index]
    wrong = np.zeros(clf.allocation_path_.shape[0])
    for i in range(y.size):
        rest = np.delete(np.arange(y.size), i)
        for d, alloc in enumerate(clf.allocation_path_):
            f = np.zeros(code.shape[1])
            for l, k in enumerate(alloc):
                if k:
                    beta = np.linalg.lstsq(Z[rest, :k], targets[rest, l], rcond=None)[0]
                    f[l] = Z[i, :k] @ beta
            wrong[d] += np.argmin(((f - code) ** 2).sum(axis=1)) != y_index[i]
    assert wrong.max() > wrong.min()  # the choice of d matters on this problem
    np.testing.assert_array_equal(clf.selection_errors_ * y.size, wrong)
