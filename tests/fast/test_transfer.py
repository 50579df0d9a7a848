"""Transfer steps (msvm.fast.transfer): the two-pattern subproblem solved exactly, against an
independent QP solve, and the engine's optimum unchanged by them."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    engine,
)
from msvm.fast.patterns import CS, LLW, SIGN, WW, dual_vectors, pattern_transpose, state_coef
from msvm.fast.transfer import (
    PARTNERS,
    REACH,
    apply_transfer,
    budget_transfer,
    nearest_partners,
    partner_sign,
    transfer_arrays,
    transfer_step,
)

KINDS = [SIGN, LLW, WW, CS]


def dual_value(K, alpha, y, kind, c, lin):
    Z, B = dual_vectors(kind, alpha, y, c)
    return float(np.sum(lin * alpha) - 0.5 * np.sum(Z * (K @ B)))


def random_state_of(kind, rng, N=8, L=4, C=1.0, duplicate=False):
    """A feasible dual point of a random problem of ``kind`` (patterns 0 and 1 share a class;
    with ``duplicate`` they are nearly the same point, the ill-conditioned case)."""
    X = rng.normal(size=(N, 3))
    if duplicate:
        X[1] = X[0] + 1e-4 * rng.normal(size=3)
    K = kernel_matrix(X, X, "rbf", rng.uniform(0.05, 2.0), 3, 0.0)
    y = rng.integers(0, L, N)
    y[:2] = 1
    y[2 : 2 + L] = np.arange(L)  # every class present
    hi = np.full((N, L), C)
    if kind != SIGN:
        hi[np.arange(N), y] = 0.0
    lin = (hi > 0) / (L - 1) if kind == LLW else np.ones((N, L))
    c = 1.0 / L if kind == SIGN else 0.0
    alpha = rng.uniform(0, C, (N, L)) * (rng.uniform(size=(N, L)) < 0.6) * (hi > 0)
    alpha[rng.uniform(size=(N, L)) < 0.2] = C
    alpha = np.minimum(alpha, hi)
    if kind == CS:  # sum_r alpha_ir <= C, some budgets exactly full
        mass = alpha.sum(axis=1, keepdims=True)
        full = rng.uniform(size=(N, 1)) < 0.5
        alpha = np.where((mass > C) | full, alpha * C / np.maximum(mass, 1e-300), alpha)
        alpha = np.minimum(alpha, hi)
    shift = {SIGN: c, LLW: 1.0 / L}.get(kind, 0.0)
    U = np.asfortranarray(K @ state_coef(kind, alpha, y, c))
    return K, y, hi, lin, c, alpha, shift, U


def exact_transfer(K, y, hi, lin, c, alpha, kind, i, q):
    """The largest dual gain over alpha_i + d, alpha_q - P d (cvxpy and Clarabel).

    With Z_i = S_i alpha_i the move is Z_i += S_i d, Z_q -= S_i d (S_q P = S_i), so the dual
    changes by (grad_i - P grad_q) . d - kd/2 (S_i d)^T M (S_i d), kd = K_ii + K_qq - 2 K_iq.
    """
    L = alpha.shape[1]
    P = np.array([partner_sign(kind, j, y[i], y[q]) for j in range(L)])
    S_i = dual_vectors(kind, np.eye(L), np.full(L, y[i]), c)[0].T  # column j: S_i e_j
    M = np.eye(L) - {SIGN: c, LLW: 1.0 / L}.get(kind, 0.0) * np.ones((L, L))
    _, B = dual_vectors(kind, alpha, y, c)
    grad = lin - pattern_transpose(kind, K @ B, y)
    g = grad[i] - P * grad[q]
    kd = K[i, i] + K[q, q] - 2 * K[i, q]
    d = cp.Variable(L)
    a_i, a_q = alpha[i] + d, alpha[q] - cp.multiply(P, d)
    objective = g @ d - 0.5 * kd * cp.quad_form(S_i @ d, cp.psd_wrap(M))
    constraints = [a_i >= 0, a_i <= hi[i], a_q >= 0, a_q <= hi[q]]
    if kind == CS:
        constraints += [cp.sum(a_i) <= hi[i].max(), cp.sum(a_q) <= hi[q].max()]
    problem = cp.Problem(cp.Maximize(objective), constraints)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return problem.value


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("duplicate", [False, True])
def test_transfer_step_is_the_exact_two_pattern_step(kind, duplicate):
    rng = np.random.default_rng(kind + 10 * duplicate)
    for _ in range(12):
        K, y, hi, lin, c, alpha, shift, U = random_state_of(kind, rng, duplicate=duplicate)
        work = transfer_arrays(alpha.shape[1])
        gain = transfer_step(0, 1, K[0], 0.0, U, alpha, hi, lin, y, np.diag(K).copy(), kind, c,
                             shift, work)  # fmt: skip
        moved = alpha.copy()
        apply_transfer(0, 1, work[5], moved, hi, y, kind)
        # the reported gain is the dual's change, the point feasible, and the gain the best
        before, after = dual_value(K, alpha, y, kind, c, lin), dual_value(K, moved, y, kind, c, lin)
        assert after - before == pytest.approx(gain, abs=1e-10)
        assert np.all(moved >= 0) and np.all(moved <= hi)
        if kind == CS:
            assert np.all(moved.sum(axis=1) <= hi.max(axis=1) * (1 + 1e-15))
        best = exact_transfer(K, y, hi, lin, c, alpha, kind, 0, 1)
        assert gain == pytest.approx(best, rel=1e-7, abs=1e-9)


def test_a_binding_budget_is_met_to_the_last_bit():
    """CS: a budget short of C by rounding would count as slack (patterns.budget_levels)."""
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(300):
        n = 5
        g = rng.normal(size=n)
        lo, hi = -rng.uniform(0, 1, n), rng.uniform(0, 1, n)
        lo_sum, hi_sum = -rng.uniform(0, 0.3), rng.uniform(0, 0.3)
        delta, work = np.empty(n), np.empty(8 * n)
        budget_transfer(n, g, rng.uniform(0.1, 2), lo, hi, lo_sum, hi_sum, np.ones(n), delta,
                        work)  # fmt: skip
        total = delta.sum()
        assert lo_sum - 1e-15 <= total <= hi_sum + 1e-15
        assert np.all(delta >= lo) and np.all(delta <= hi)
        if np.isclose(total, hi_sum) or np.isclose(total, lo_sum):
            hits += 1
            # off the bound by the rounding of the sum alone, not of the root's interpolation
            rounding = n * np.finfo(float).eps * np.abs(delta).sum()
            assert min(abs(total - lo_sum), abs(total - hi_sum)) <= rounding
    assert hits > 50  # the binding case is exercised


@pytest.mark.parametrize("kind", KINDS)
def test_nearest_partners_are_the_nearest_admissible_patterns(kind):
    rng = np.random.default_rng(7)
    N = 120
    X = rng.normal(size=(N, 4))
    K = kernel_matrix(X, X, "poly", 0.3, 2, 1.0)  # kernel distance, not Euclidean distance
    y = rng.integers(0, 3, N)
    kdiag = np.diag(K).copy()
    for i in (0, 17, 99):
        row = np.empty(PARTNERS, dtype=np.int64)
        nearest_partners(i, K[i], 0.0, kdiag, y, kind, row, np.empty(PARTNERS))
        kd = kdiag[i] + kdiag - 2 * K[i]
        admissible = (np.arange(N) != i) & ((y == y[i]) if kind in (WW, CS) else True)
        ok = admissible & (kd <= REACH * (kdiag[i] + kdiag))  # coupled enough to pay
        assert 0 < ok.sum() < admissible.sum()  # the reach leaves some out
        expected = np.flatnonzero(ok)[np.argsort(kd[ok], kind="stable")][:PARTNERS]
        found = row[row >= 0]
        assert found.size == min(PARTNERS, ok.sum())
        np.testing.assert_allclose(kd[found], kd[expected], rtol=0, atol=1e-12)
        assert np.all(ok[found])


@pytest.mark.parametrize(
    "Estimator, params",
    [
        (InhibitorySVC, {}),
        (LeeLinWahbaSVC, {}),
        (WestonWatkinsSVC, {}),
        (WestonWatkinsSVC, {"fit_intercept": True}),  # an offset on every kernel entry
        (CrammerSingerSVC, {}),
        (OneVsAllSVC, {"selection": "cyclic"}),
        (SimplexSVC, {}),
    ],
)
def test_transfers_keep_the_engine_optimum(Estimator, params, monkeypatch):
    """Wide kernel, large C (the ill-conditioned case transfers are for): the same optimum with
    and without them, and with them the run takes transfers (its steps differ)."""
    X, y = datasets.load("wine", n_samples=90)
    gamma = 0.1 / (X.shape[1] * X.var())
    common = dict(C=100.0, gamma=gamma, tol=1e-6, random_state=0, **params)
    relative, relax, _ = engine.KERNEL_PATH
    monkeypatch.setattr(engine, "KERNEL_PATH", (relative, relax, 0))  # from the first epoch
    with_transfers = Estimator(**common).fit(X, y)
    monkeypatch.setattr(engine, "KERNEL_PATH", (relative, relax, np.inf))  # never
    without = Estimator(**common).fit(X, y)
    assert with_transfers.kkt_violation_ <= 1e-6 and without.kkt_violation_ <= 1e-6
    assert with_transfers.dual_objective_ == pytest.approx(without.dual_objective_, rel=1e-7)
    assert with_transfers.objective_ == pytest.approx(without.objective_, rel=1e-4)
    assert with_transfers.n_steps_ != without.n_steps_
