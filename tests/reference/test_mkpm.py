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


@pytest.fixture(scope="module")
def path():
    X, y = datasets.load("wine", n_samples=30)
    p = Problem(X, y, kernel="rbf")
    return mkpm.regularisation_path(p, n_components=10)


def test_risk_table_against_closed_form_and_direct_least_squares(path):
    """G*_l(d) from cvxpy = MKPM (42) (with the 1/N of 13) = a direct lstsq over span(K A_[d])."""
    p = path.problem
    A, _ = mkpm.kpca_basis(p.K, 10)
    targets = path.code[p.y_index]
    N = p.n_samples
    for l, d in itertools.product(range(targets.shape[1]), range(11)):
        y = targets[:, l]
        closed = (y @ y - np.sum((A[:, :d].T @ y) ** 2)) / N  # (42) / N
        if d:
            beta, *_ = np.linalg.lstsq(p.K @ A[:, :d], y, rcond=None)
            direct = np.sum((p.K @ A[:, :d] @ beta - y) ** 2) / N
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
    D = path.risk_table.shape[1] - 1
    F = path.outputs(p.X, D)
    targets = path.code[p.y_index]
    assert np.mean((F - targets) ** 2) * targets.shape[1] == pytest.approx(path.risk_path[D])


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
