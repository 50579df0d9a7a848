"""One-vs-all's class-by-class greedy solver (msvm.fast.separable) against independent answers."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import OneVsAllSVC, engine, separable
from msvm.fast.kernels import column_source, precomputed_source, shortened_source
from msvm.fast.separable import solve_separable
from msvm.reference import FORMULATIONS


def binary_dual_optimum(K, lin, hi, sign):
    """max lin.a - 1/2 (s a)^T K (s a) over 0 <= a <= hi, by cvxpy + Clarabel."""
    a = cp.Variable(lin.size)
    Q = K * np.outer(sign, sign)
    Q = 0.5 * (Q + Q.T) + 1e-12 * np.eye(lin.size)
    problem = cp.Problem(
        cp.Maximize(lin @ a - 0.5 * cp.quad_form(a, cp.psd_wrap(Q))), [a >= 0, a <= hi]
    )
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return problem.value


def dual_value(K, lin, sign, a):
    z = sign * a
    return lin @ a - 0.5 * z @ K @ z


def random_binary_dual(seed, n=60, zero_rows=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:zero_rows] = 0.0  # a zero kernel diagonal: the objective is linear in those variables
    K = X @ X.T + 0.5 * np.outer(X[:, 0], X[:, 0])
    sign = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    hi = rng.uniform(0.2, 2.0, size=n) * (rng.random(n) > 0.1)  # some variables fixed at 0
    lin = rng.uniform(0.5, 1.5, size=n)
    return K, lin, hi, sign


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("offset", [0.0, 0.7])
@pytest.mark.parametrize("seed", range(4))
def test_solve_class_reaches_the_binary_optimum(seed, offset, shrinking):
    K, lin, hi, sign = random_binary_dual(seed, zero_rows=2 if seed % 2 else 0)
    n = lin.size
    u, a = np.zeros(n), np.zeros(n)
    source, kdiag = precomputed_source(K), np.diag(K).copy()
    args = (sign, kdiag, 1e-9, 10**6, shrinking)
    steps, worst = solve_separable(source, offset, u, a, hi, lin, *args)
    Ko = K + offset
    assert worst <= 1e-9 and steps > 0
    assert np.all(a >= 0.0) and np.all(a <= hi)
    np.testing.assert_allclose(u, Ko @ (sign * a), atol=1e-10)  # outputs synced everywhere
    assert dual_value(Ko, lin, sign, a) == pytest.approx(
        binary_dual_optimum(Ko, lin, hi, sign), rel=1e-7, abs=1e-8
    )


@pytest.mark.parametrize("d", [4, separable.PREFETCH_MIN_FEATURES])  # columns one by one; batches
@pytest.mark.parametrize("offset", [0.0, 0.7])
@pytest.mark.parametrize("seed", range(2))
def test_compact_phases_reach_the_binary_optimum(seed, offset, d, monkeypatch):
    """On columns computed on demand the class is solved in compact phases (solve_separable),
    with many features its columns computed in batches: the same optimum, and every output
    brought up to date, K (s a) to rounding."""
    rng = np.random.default_rng(seed)
    n, gamma = 300, 2.0 / d
    X = rng.normal(size=(n, d))
    sign = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    X[:, 0] += sign  # overlapping classes: many variables between the bounds, some at hi
    hi = rng.uniform(0.5, 2.0, size=n)
    lin = rng.uniform(0.5, 1.5, size=n)
    source = column_source(X, "rbf", gamma, 3, 0.0, 40 * n * 8 / 2**20)  # 40 of 300 columns
    phases = []
    monkeypatch.setattr(separable, "shortened_source",
                        lambda *a: phases.append(1) or shortened_source(*a))  # fmt: skip
    u, a, kdiag = np.zeros(n), np.zeros(n), np.ones(n)
    steps, worst = solve_separable(source, offset, u, a, hi, lin, sign, kdiag, 1e-9, 10**7, True)
    assert phases and worst <= 1e-9
    K = kernel_matrix(X, X, "rbf", gamma, 3, 0.0) + offset
    np.testing.assert_allclose(u, K @ (sign * a), atol=1e-9)
    assert np.all(a >= 0.0) and np.all(a <= hi) and np.any((a > 0) & (a < hi))
    assert dual_value(K, lin, sign, a) == pytest.approx(
        binary_dual_optimum(K, lin, hi, sign), rel=1e-7
    )


def test_columns_one_by_one_compile_no_batch_code(typed_names):
    """Without batches (few features, or the whole Gram matrix) a class's work arrays are None and
    numba prunes the batched code from its syncs (a third of a first fit's compile time); with
    them the syncs compute missing columns in batches, and add them as one by one."""
    rng = np.random.default_rng(0)
    n, d = 40, separable.PREFETCH_MIN_FEATURES
    X = rng.normal(size=(n, d))
    lru = column_source(X, "rbf", 1.0 / d, 3, 0.0, 10 * n * 8 / 2**20)  # 10 of 40 columns
    whole = column_source(X, "rbf", 1.0 / d, 3, 0.0, 1.0)
    assert separable.column_batch(whole) is None
    assert separable.column_batch(column_source(X[:, :4], "rbf", 1.0, 3, 0.0, 0.003)) is None
    moved, touched = rng.normal(size=n), rng.permutation(n)[:25]
    outputs = []
    for source, batch in ((whole, None), (lru, separable.column_batch(lru))):
        u = np.zeros(n)
        names = typed_names(separable.sync_outputs, source, 0.3, u, moved.copy(), touched, batch)
        assert ("batch_columns" in names) == (batch is not None)
        outputs.append(u)
    K = kernel_matrix(X, X, "rbf", 1.0 / d, 3, 0.0)
    expected = (K[:, touched] + 0.3) @ moved[touched]
    np.testing.assert_allclose(outputs[0], expected, atol=1e-12)
    np.testing.assert_allclose(outputs[1], expected, atol=1e-12)


@pytest.mark.parametrize("cache_size", [None, 0.01])  # the Gram matrix; 6 of 200 columns
def test_violation_at_the_step_budget_counts_every_variable(cache_size):
    """A run stopped by its step budget reports the largest violation over every variable, set
    aside or not (it reported the active ones' alone: 0.16 where the true one was 0.50)."""
    rng = np.random.default_rng(0)
    n = 200
    X = rng.normal(size=(n, 4))
    sign = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    X[:, 0] += sign
    hi, lin = rng.uniform(0.5, 2.0, size=n), rng.uniform(0.5, 1.5, size=n)
    K = kernel_matrix(X, X, "rbf", 0.5, 3, 0.0)
    for max_steps in range(1, 800, 13):
        if cache_size is None:
            source = precomputed_source(K)
        else:
            source = column_source(X, "rbf", 0.5, 3, 0.0, cache_size)
        u, a = np.zeros(n), np.zeros(n)
        args = (sign, np.ones(n), 1e-3, max_steps, True)
        _, worst = solve_separable(source, 0.0, u, a, hi, lin, *args)
        g = lin - sign * (K @ (sign * a))
        true = np.max(np.maximum(np.where(a < hi, g, 0), 0) - np.minimum(np.where(a > 0, g, 0), 0))
        assert worst == pytest.approx(true, rel=1e-9, abs=1e-12), max_steps


def test_solve_class_starts_from_a_given_point():
    K, lin, hi, sign = random_binary_dual(7)
    a = np.minimum(hi, 0.3)
    u = K @ (sign * a)
    source, kdiag = precomputed_source(K), np.diag(K).copy()
    solve_separable(source, 0.0, u, a, hi, lin, sign, kdiag, 1e-9, 10**6, True)
    assert dual_value(K, lin, sign, a) == pytest.approx(
        binary_dual_optimum(K, lin, hi, sign), rel=1e-7
    )


@pytest.mark.parametrize("selection", ["greedy", "cyclic"])
def test_both_selections_reach_the_reference_optimum(problem, selection):
    name, p, X, y = problem
    ref = FORMULATIONS["one_vs_all"].dual(p)
    clf = OneVsAllSVC(
        C=p.C, kernel=p.kernel, selection=selection, tol=1e-6, max_iter=100_000, random_state=0
    ).fit(X, y)
    assert clf.objective_ == pytest.approx(ref.objective, rel=1e-5)
    assert clf.dual_objective_ <= ref.objective * (1 + 1e-9) + 1e-9
    assert clf.kkt_violation_ <= 1e-6


def test_auto_selection_is_greedy_for_a_kernel_and_cyclic_for_linear_weights():
    X, y = datasets.load("wine")
    rbf = OneVsAllSVC(random_state=0).fit(X, y)
    greedy = OneVsAllSVC(selection="greedy", random_state=0).fit(X, y)
    np.testing.assert_array_equal(rbf.dual_coef_, greedy.dual_coef_)
    linear = OneVsAllSVC(kernel="linear", C=0.01, random_state=0).fit(X, y)
    cyclic = OneVsAllSVC(kernel="linear", C=0.01, selection="cyclic", random_state=0).fit(X, y)
    np.testing.assert_array_equal(linear.dual_coef_, cyclic.dual_coef_)


@pytest.mark.parametrize("cache_size, expected", [(0.003, "cyclic"), (0.01, "greedy")])
def test_auto_selection_is_cyclic_when_the_cache_holds_few_columns(cache_size, expected):
    # wine, 178 patterns: 0.003 MB holds 2 columns (below GREEDY_CACHED_SHARE = 2 % of them), 0.01
    # MB 7; the greedy solver would recompute its columns over and over (base.py)
    X, y = datasets.load("wine")
    auto = OneVsAllSVC(cache_size=cache_size, random_state=0).fit(X, y)
    chosen = OneVsAllSVC(cache_size=cache_size, selection=expected, random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.dual_coef_, chosen.dual_coef_)
    assert auto.n_steps_ == chosen.n_steps_


@pytest.mark.parametrize(
    "name, factor, expected",
    [("digits", 1.0, "greedy"), ("digits", 10.0, "cyclic"), ("wine", 10.0, "greedy")],
)
def test_auto_selection_is_cyclic_for_a_narrow_kernel(name, factor, expected):
    # a row's normalised off-diagonal mass, over N - 1: 300 digits 0.36 at gamma = scale and
    # 0.0025 at 10 scale, on either side of base.NARROW_COUPLING (0.1); wine 0.0024 at 10 scale,
    # but 178 patterns, below base.NARROW_MIN_PATTERNS (200)
    X, y = datasets.load(name, n_samples=300)
    gamma = factor / (X.shape[1] * X.var())
    auto = OneVsAllSVC(gamma=gamma, random_state=0).fit(X, y)
    chosen = OneVsAllSVC(gamma=gamma, selection=expected, random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.dual_coef_, chosen.dual_coef_)
    assert auto.n_steps_ == chosen.n_steps_
    other = OneVsAllSVC(gamma=gamma, selection=({"greedy", "cyclic"} - {expected}).pop(),
                        random_state=0).fit(X, y)  # fmt: skip
    assert other.n_steps_ != auto.n_steps_  # (the two paths are told apart)


def test_coupling_mass_is_the_median_normalised_row_mass():
    """On 30 patterns every row and column is read: the statistic is exact."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    K = (X @ X.T + 1.0) ** 2
    scale = np.sqrt(np.diag(K))
    normalised = np.abs(K) / np.outer(scale, scale)
    expected = np.median(normalised.sum(axis=1) - 1.0)
    assert engine.coupling_mass(precomputed_source(K), 0.0, np.diag(K).copy()) == pytest.approx(
        expected, rel=1e-12
    )


def test_coupling_mass_on_sampled_rows_and_columns_is_near_the_exact_one():
    """On 3 000 patterns it reads 32 rows and 1 500 columns, spaced evenly: within 5 % of the
    median over every row of an RBF kernel on random data (whose row masses spread 4x)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 5)) * rng.uniform(0.5, 2.0, size=(3000, 1))
    K = kernel_matrix(X, X, "rbf", gamma=0.1)
    exact = np.median(K.sum(axis=1) - 1.0)
    estimate = engine.coupling_mass(precomputed_source(K), 0.0, np.ones(3000))
    assert estimate == pytest.approx(exact, rel=0.05)


def test_coupling_mass_leaves_rows_of_a_zero_diagonal_out():
    """A linear kernel whose patterns are 60 % zero rows: the others' mass, not the zero rows'
    0 (which made one-vs-all's auto selection take the cyclic engine; review, stop 49)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4)) + 2.0
    X[:18] = 0.0
    K = X @ X.T
    scale = np.sqrt(np.diag(K))[18:]
    normalised = np.abs(K[18:, 18:]) / np.outer(scale, scale)
    expected = np.median(normalised.sum(axis=1) - 1.0)
    assert expected > 1.0
    assert engine.coupling_mass(precomputed_source(K), 0.0, np.diag(K).copy()) == pytest.approx(
        expected, rel=1e-12
    )


def test_small_kernel_cache_gives_the_same_solution(monkeypatch):
    """About 20 of 300 columns cached: compact phases, another path, the same optimum (each
    dual objective within the other's duality gap) and the same predictions."""
    X, y = datasets.load("digits", n_samples=300)
    full = OneVsAllSVC(tol=1e-6).fit(X, y)
    phases = []
    monkeypatch.setattr(separable, "shortened_source",
                        lambda *a: phases.append(1) or shortened_source(*a))  # fmt: skip
    lru = OneVsAllSVC(tol=1e-6, cache_size=0.05).fit(X, y)
    assert len(phases) >= 10  # (at least one a class)
    for a, b in ((full, lru), (lru, full)):
        assert b.dual_objective_ >= a.dual_objective_ - (a.objective_ - a.dual_objective_)
    np.testing.assert_allclose(lru.decision_function(X), full.decision_function(X), atol=1e-4)
    np.testing.assert_array_equal(lru.predict(X), full.predict(X))


def test_step_budget_warns():
    X, y = datasets.load("wine")
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        OneVsAllSVC(max_iter=1, tol=1e-8).fit(X, y)


def test_pair_box_is_the_exact_two_variable_step():
    """The pair step of the greedy solver against cvxpy, including singular and edge cases."""
    from msvm.fast.separable import pair_box

    rng = np.random.default_rng(5)
    for trial in range(200):
        A = rng.normal(size=(2, 2)) if trial % 4 else np.outer([1.0, 1.0 + 1e-9], [1.0, 1.0])
        Q = A @ A.T
        g = rng.normal(size=2) * 3
        h = rng.uniform(0.1, 2, size=2)
        a = rng.uniform(0, 1, size=2) * h * (rng.random(2) > 0.3)
        d1, d2, gain = pair_box(g[0], g[1], Q[0, 0], Q[0, 1], Q[1, 1], a[0], a[1], h[0], h[1])
        d = np.array([d1, d2])
        assert np.all(a + d >= -1e-12) and np.all(a + d <= h + 1e-12)
        assert gain == pytest.approx(g @ d - 0.5 * d @ Q @ d, abs=1e-10)
        x = cp.Variable(2)
        best = cp.Problem(
            cp.Maximize(g @ x - 0.5 * cp.quad_form(x, cp.psd_wrap(Q))), [a + x >= 0, a + x <= h]
        )
        best.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
        assert gain == pytest.approx(best.value, rel=1e-7, abs=1e-8)
