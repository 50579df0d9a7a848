"""MKPM's brute-force reference: G*_l(d) and the enumeration of allocations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from msvm.core import datasets, random_code
from msvm.reference import Problem, mkpm


@pytest.fixture(
    scope="module",
    params=itertools.product([False, True], [False, True]),
    ids=["unweighted", "weighted", "unweighted-intercept", "weighted-intercept"],
)
def path(request):
    """wine-30, unweighted or with real weights in [0.2, 3] (three of them 0), without or with
    an intercept."""
    weighted, fit_intercept = request.param
    X, y = datasets.load("wine", n_samples=30)
    w = None
    if weighted:
        w = np.random.default_rng(5).uniform(0.2, 3.0, size=y.size)
        w[[0, 9, 17]] = 0.0
    p = Problem(X, y, kernel="rbf", sample_weight=w)
    return mkpm.regularisation_path(p, n_components=10, fit_intercept=fit_intercept)


def test_risk_table_against_closed_form_and_direct_least_squares(path):
    """G*_l(d) from cvxpy = MKPM (42) (with the 1/N of 13) = a direct lstsq over span(K A_[d]);
    weighted (s): (42) for the targets S^1/2 y over sum_i s_i, in the basis of S^1/2 K S^1/2, and
    the lstsq of the rows scaled by sqrt(s_i) over span(K S^1/2 A_[d]).  With an intercept: K
    is the centred H K H^T (H = I - 1 s^T / sum(s)), (42) is for the centred targets
    y - (s^T y / sum(s)) 1, and the lstsq has a column of ones (the cvxpy intercept is free)."""
    p = path.problem
    s = p.pattern_weights()
    root = np.sqrt(s)
    N = s.sum()
    H = np.eye(s.size) - np.outer(np.ones(s.size), s) / N if path.fit_intercept else np.eye(s.size)
    K = H @ p.K @ H.T
    A, _ = mkpm.kpca_basis(K, 10, p.sample_weight)
    targets = path.code[p.y_index]
    for l, d in itertools.product(range(targets.shape[1]), range(11)):
        y = root * targets[:, l]  # S^1/2 y_l
        spread = y - path.fit_intercept * root * (s @ targets[:, l]) / N  # centred
        closed = (spread @ spread - np.sum((A[:, :d].T @ spread) ** 2)) / N  # (42) / N
        design = root[:, None] * (K @ (root[:, None] * A[:, :d]))
        if path.fit_intercept:
            design = np.column_stack([root, design])
        if design.shape[1]:
            beta, *_ = np.linalg.lstsq(design, y, rcond=None)
            direct = np.sum((design @ beta - y) ** 2) / N
        else:
            direct = y @ y / N
        assert path.risk_table[l, d] == pytest.approx(closed, rel=1e-6, abs=1e-9)
        assert path.risk_table[l, d] == pytest.approx(direct, rel=1e-6, abs=1e-9)
    if path.fit_intercept:  # at d = 0 every column predicts its weighted mean, on any point
        np.testing.assert_allclose(path.outputs(p.X[:5], 0), np.tile(s @ targets / N, (5, 1)))


def test_path_is_an_allocation_per_dimension_and_monotone(path):
    D = path.risk_table.shape[1] - 1
    assert path.allocation_path.shape == (D + 1, path.code.shape[1])
    np.testing.assert_array_equal(path.allocation_path.sum(axis=1), np.arange(D + 1))
    assert np.all(np.diff(path.risk_path) <= 1e-9)  # more dimensions never raise training risk
    G = path.risk_table
    for d, alloc in enumerate(path.allocation_path):
        assert path.risk_path[d] == pytest.approx(sum(G[l, k] for l, k in enumerate(alloc)))


def test_predictors_fit_the_training_codes(path):
    """The stored predictors (coefficients, and intercepts) reproduce the risk of every d."""
    p = path.problem
    s = p.pattern_weights()
    targets = path.code[p.y_index]
    for d in range(path.risk_table.shape[1]):
        F = path.outputs(p.X, d)
        risk = s @ ((F - targets) ** 2).sum(axis=1) / s.sum()
        assert risk == pytest.approx(path.risk_path[d], rel=1e-6, abs=1e-9)


def test_any_code_matrix():
    X, y = datasets.load("iris", n_samples=24)
    p = Problem(X, y, kernel="rbf")
    code = random_code(3, 5, random_state=1)
    path = mkpm.regularisation_path(p, n_components=4, code=code)
    assert path.allocation_path.shape == (5, 5)
    with pytest.raises(ValueError, match="distinct"):
        mkpm.regularisation_path(p, n_components=4, code=np.ones((3, 2)))


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 6)),
        elements=st.floats(0, 10, allow_nan=False),
    ),
    st.integers(0, 8),
)
def test_brute_force_against_itertools_product(G, total):
    """The stars-and-bars enumeration finds the same minimum as a plain product over columns."""
    L, width = G.shape
    candidates = [
        sum(G[l, k] for l, k in enumerate(alloc))
        for alloc in itertools.product(range(width), repeat=L)
        if sum(alloc) == total
    ]
    if not candidates:
        value, alloc = mkpm.brute_force(G, total)
        assert alloc is None
        return
    value, alloc = mkpm.brute_force(G, total)
    assert value == pytest.approx(min(candidates))
    assert sum(alloc) == total


def test_allocations_count():
    from math import comb

    assert sum(1 for _ in mkpm.allocations(3, 5)) == comb(7, 2)
    assert all(sum(a) == 5 for a in mkpm.allocations(3, 5))
