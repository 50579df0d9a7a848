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


@pytest.fixture(scope="module", params=[False, True], ids=["unweighted", "weighted"])
def path(request):
    """wine-30, unweighted or with real weights in [0.2, 3] (three of them 0)."""
    X, y = datasets.load("wine", n_samples=30)
    w = None
    if request.param:
        w = np.random.default_rng(5).uniform(0.2, 3.0, size=y.size)
        w[[0, 9, 17]] = 0.0
    p = Problem(X, y, kernel="rbf", sample_weight=w)
    return mkpm.regularisation_path(p, n_components=10)


def test_risk_table_against_closed_form_and_direct_least_squares(path):
    """G*_l(d) from cvxpy = MKPM (42) (with the 1/N of 13) = a direct lstsq over span(K A_[d]);
    weighted (s): (42) for the targets S^1/2 y over sum_i s_i, in the basis of S^1/2 K S^1/2, and
    the lstsq of the rows scaled by sqrt(s_i) over span(K S^1/2 A_[d])."""
    p = path.problem
    s = p.pattern_weights()
    root = np.sqrt(s)
    A, _ = mkpm.kpca_basis(p.K, 10, p.sample_weight)
    targets = path.code[p.y_index]
    N = s.sum()
    for l, d in itertools.product(range(targets.shape[1]), range(11)):
        y = root * targets[:, l]  # S^1/2 y_l
        closed = (y @ y - np.sum((A[:, :d].T @ y) ** 2)) / N  # (42) / N
        if d:
            design = root[:, None] * (p.K @ (root[:, None] * A[:, :d]))
            beta, *_ = np.linalg.lstsq(design, y, rcond=None)
            direct = np.sum((design @ beta - y) ** 2) / N
        else:
            direct = y @ y / N
        assert path.risk_table[l, d] == pytest.approx(closed, rel=1e-6, abs=1e-9)
        assert path.risk_table[l, d] == pytest.approx(direct, rel=1e-6, abs=1e-9)


def test_path_is_an_allocation_per_dimension_and_monotone(path):
    D = path.risk_table.shape[1] - 1
    assert path.allocation_path.shape == (D + 1, path.code.shape[1])
    np.testing.assert_array_equal(path.allocation_path.sum(axis=1), np.arange(D + 1))
    assert np.all(np.diff(path.risk_path) <= 1e-9)  # more dimensions never raise training risk
    G = path.risk_table
    for d, alloc in enumerate(path.allocation_path):
        assert path.risk_path[d] == pytest.approx(sum(G[l, k] for l, k in enumerate(alloc)))


def test_predictors_fit_the_training_codes(path):
    p = path.problem
    s = p.pattern_weights()
    D = path.risk_table.shape[1] - 1
    F = path.outputs(p.X, D)
    targets = path.code[p.y_index]
    risk = s @ ((F - targets) ** 2).sum(axis=1) / s.sum()
    assert risk == pytest.approx(path.risk_path[D])


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
