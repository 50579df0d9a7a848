"""The exact per-pattern subproblem against cvxpy, on hypothesis-drawn instances."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msvm.fast.patterns import (
    LLW,
    SIGN,
    WW,
    box_rank_one,
    budget_rank_one,
    budget_violation,
    dual_vectors,
    output_shift,
    outputs_of_state,
    pattern_gradient,
    pattern_transpose,
    state_coef,
    state_width,
)
from msvm.fast.transfer import variable_gradient


def objective(d, g, k, c, v):
    return g @ d - 0.5 * k * (d @ d - c * (v @ d) ** 2)


@settings(max_examples=150, deadline=None)
@given(
    L=st.integers(1, 8),
    seed=st.integers(0, 10_000),
    structure=st.sampled_from(["sign", "sign-singular", "ones-minus", "ones-plus", "none"]),
    k=st.floats(0.05, 5.0),
)
def test_box_rank_one_is_exact(L, seed, structure, k):
    rng = np.random.default_rng(seed)
    g = rng.normal(scale=2.0, size=L)
    lo = -rng.uniform(0, 1.5, size=L) * (rng.random(L) < 0.7)
    hi = rng.uniform(0, 1.5, size=L)
    fixed = rng.random(L) < 0.15
    lo[fixed] = hi[fixed] = 0.0
    if structure.startswith("sign"):  # inhibitory: v = y, c up to 1/L (singular Hessian at 1/L)
        v = -np.ones(L)
        v[rng.integers(L)] = 1.0
        c = 1.0 / L if structure == "sign-singular" else rng.uniform(0, 1.0 / L)
    elif structure == "ones-minus":  # Lee-Lin-Wahba
        v, c = np.ones(L), 1.0 / L
    elif structure == "ones-plus":  # Weston-Watkins: identity plus rank one
        v, c = np.ones(L), -1.0
    else:
        v, c = np.ones(L), 0.0
    d = np.empty(L)
    box_rank_one(L, g, k, c, v, lo, hi, d, np.empty(8 * L))
    assert np.all(d >= lo - 1e-12) and np.all(d <= hi + 1e-12)

    x = cp.Variable(L)
    H = k * (np.eye(L) - c * np.outer(v, v))
    H = 0.5 * (H + H.T)
    prob = cp.Problem(
        cp.Maximize(g @ x - 0.5 * cp.quad_form(x, cp.psd_wrap(H))), [x >= lo, x <= hi]
    )
    prob.solve(solver="CLARABEL")
    assert objective(d, g, k, c, v) >= prob.value - 1e-7 * (1 + abs(prob.value))


def test_zero_kernel_diagonal_goes_to_the_bound_of_the_gradient():
    d = np.empty(3)
    g = np.array([1.0, -1.0, 0.0])
    box_rank_one(3, g, 0.0, 0.5, np.ones(3), -np.ones(3), np.ones(3), d, np.empty(24))
    np.testing.assert_array_equal(d, [1.0, -1.0, 0.0])


@pytest.mark.parametrize("c", [1.0 / 3, -1.0])
def test_unconstrained_optimum_solves_the_linear_system(c):
    g, k, v = np.array([0.3, -0.2, 0.5]), 2.0, np.array([1.0, -1.0, -1.0])
    d = np.empty(3)
    box_rank_one(3, g, k, c * 0.9, v, -10 * np.ones(3), 10 * np.ones(3), d, np.empty(24))
    H = k * (np.eye(3) - 0.9 * c * np.outer(v, v))
    np.testing.assert_allclose(H @ d, g, atol=1e-10)


@settings(max_examples=150, deadline=None)
@given(L=st.integers(1, 10), seed=st.integers(0, 10_000), k=st.floats(0.05, 5.0))
def test_budget_rank_one_is_exact(L, seed, k):
    """The Crammer-Singer / MProt pattern step: max g.d - k/2(|d|^2 + (1.d)^2), simplex budget."""
    rng = np.random.default_rng(seed)
    budget = rng.uniform(0.1, 2.0)
    free = rng.random(L) < 0.8
    alpha = rng.dirichlet(np.ones(L)) * budget * rng.uniform(0, 1) * free
    hi = np.where(free, budget, 0.0)
    g = rng.normal(scale=2.0, size=L)
    d = np.empty(L)
    budget_rank_one(L, g, k, alpha, hi, d, np.empty(2 * L))
    beta = alpha + d
    assert np.all(beta >= -1e-12) and beta.sum() <= budget + 1e-10
    assert np.all(d[~free] == 0.0)

    x = cp.Variable(L)
    H = k * (np.eye(L) + np.ones((L, L)))
    constraints = [alpha + x >= 0, cp.sum(alpha + x) <= budget]
    constraints += [x[j] == 0 for j in range(L) if not free[j]]
    prob = cp.Problem(cp.Maximize(g @ x - 0.5 * cp.quad_form(x, H)), constraints)
    prob.solve(solver="CLARABEL")
    value = g @ d - 0.5 * d @ H @ d
    assert value >= prob.value - 1e-7 * (1 + abs(prob.value))


def test_budget_violation_is_zero_exactly_at_the_subproblem_optimum():
    """After an exact pattern step with K_ii = k, the pattern's own KKT violation vanishes."""
    rng = np.random.default_rng(0)
    L, k, budget = 6, 1.3, 1.0
    alpha = np.zeros(L)
    hi = np.full(L, budget)
    hi[2] = 0.0
    g0 = rng.normal(size=L) + 1.0
    d = np.empty(L)
    budget_rank_one(L, g0, k, alpha, hi, d, np.empty(2 * L))
    g = g0 - k * (d + d.sum())  # the gradient after the step
    assert budget_violation(L, g, alpha + d, hi) < 1e-12
    assert budget_violation(L, g0, alpha, hi) > 0.1


@pytest.mark.parametrize("kind, c", [(SIGN, 0.1), (SIGN, 0.25), (LLW, 0.25), (WW, -1.0)])
def test_pattern_gradient_reads_the_outputs_and_their_sum_column(kind, c):
    """The engine keeps U = K [Z, Z 1] (K Z for WW): its reading gives the dual gradient
    lin - S^T (K B) computed here from K B directly, and so does the transfers' one-variable
    reading (transfer.variable_gradient)."""
    rng = np.random.default_rng(3)
    N, L = 7, 4
    A = rng.normal(size=(N, 3))
    K = A @ A.T
    y_index = rng.integers(L, size=N)
    alpha = rng.uniform(0, 1, size=(N, L))
    lin = rng.normal(size=(N, L))
    _, B = dual_vectors(kind, alpha, y_index, c)
    expected = lin - pattern_transpose(kind, K @ B, y_index)
    U = np.asfortranarray(K @ state_coef(kind, alpha, y_index, c))
    assert U.shape[1] == state_width(kind, c, L) == L + (kind != WW)
    np.testing.assert_allclose(outputs_of_state(U, kind, c, L), K @ B, atol=1e-12)
    every, g = np.arange(L).reshape(1, L), np.empty(L)
    for i in range(N):
        pattern_gradient(kind, U, i, output_shift(kind, c, L), lin, i, y_index[i], every, 0, L, g)
        np.testing.assert_allclose(g, expected[i], atol=1e-12)
        for j in range(L):
            one = variable_gradient(kind, U, i, j, y_index[i], output_shift(kind, c, L), lin)
            assert one == pytest.approx(expected[i, j], abs=1e-12)
