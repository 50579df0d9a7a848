"""The interior-point method of the kernel duals (msvm.fast.interior_point: the inhibitory and
Lee-Lin-Wahba duals in their Kronecker form, Weston-Watkins and Crammer-Singer in their sum form)
against dense linear algebra and cvxpy, and in the engine against the epochs alone and the
reference layer."""

from __future__ import annotations

import tracemalloc
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
    base,
    engine,
    interior_point,
    kernel_face,
)
from msvm.fast.interior_point import (
    hessian_product,
    newton_factors,
    newton_solve,
    snap,
    sum_form,
)
from msvm.fast.patterns import CS, dual_vectors, pattern_apply, pattern_transpose
from msvm.reference import FORMULATIONS, Problem

KRONECKER = [InhibitorySVC, LeeLinWahbaSVC]
SUM_FORM = [WestonWatkinsSVC, CrammerSingerSVC]
MACHINES = KRONECKER + SUM_FORM
FORMULATION = {
    InhibitorySVC: "inhibitory",
    LeeLinWahbaSVC: "lee_lin_wahba",
    WestonWatkinsSVC: "weston_watkins",
    CrammerSingerSVC: "crammer_singer",
}


def wide_iris():
    """Standardised iris at gamma = 0.01, C = 1000: the epochs alone crawl (11 000 epochs to
    tol = 1e-3 for the inhibitory machine, 270 000 to 1e-6 for Lee-Lin-Wahba)."""
    X, y = datasets.load("iris")
    return StandardScaler().fit_transform(X), y


def dual_problem(Machine, C, n=40, L=4, seed=0, zero_weights=0, **options):
    """A Kronecker dual of ``Machine(**options)`` on overlapping Gaussian classes: (K, lin, hi,
    sigma, s), ``zero_weights`` patterns with every variable fixed at 0."""
    rng = np.random.default_rng(seed)
    y_index = np.arange(n) % L
    X = rng.normal(size=(n, 3)) + 0.7 * np.eye(3)[y_index % 3]
    machine = Machine(**options)
    lin, free = machine._dual_terms(y_index, L)
    hi = C * free
    hi[rng.choice(n, zero_weights, replace=False)] = 0.0
    kind, c = machine._kind, machine._inhibition(L)
    s = c if Machine is InhibitorySVC else 1.0 / L
    sigma = pattern_apply(kind, np.ones((n, L)), y_index)
    return rbf_kernel(X, gamma=0.05), lin, hi, sigma, s


def sum_problem(Machine, C, n=40, L=4, seed=0, zero_weights=0, fixed=0):
    """A WW or CS dual on the data of ``dual_problem``: (K, lin, hi, y_index, kind), ``fixed``
    further variables fixed at 0 (as MProt fixes a class's other positive prototypes)."""
    rng = np.random.default_rng(seed)
    y_index = np.arange(n) % L
    X = rng.normal(size=(n, 3)) + 0.7 * np.eye(3)[y_index % 3]
    machine = Machine()
    lin, free = machine._dual_terms(y_index, L)
    hi = C * free
    hi[rng.choice(n, zero_weights, replace=False)] = 0.0
    hi.flat[rng.choice(np.flatnonzero(hi), fixed, replace=False)] = 0.0
    return rbf_kernel(X, gamma=0.05), lin, hi, y_index, machine._kind


def cvxpy_sum_optimum(K, lin, hi, y_index, kind):
    """max lin . alpha - 1/2 <Z, K Z>, Z_i = (e_y 1^T - I) alpha_i, 0 <= alpha <= hi, and for
    CS sum_r alpha_ir <= C_i (the largest hi of the pattern), by cvxpy + Clarabel."""
    N, L = lin.shape
    w, V = np.linalg.eigh(K)
    F = np.sqrt(np.maximum(w, 0.0))[:, None] * V.T
    alpha = cp.Variable((N, L))
    own = np.eye(L)[y_index]
    Z = cp.multiply(own, cp.sum(alpha, axis=1, keepdims=True) @ np.ones((1, L))) - alpha
    constraints = [alpha >= 0, alpha <= hi]
    if kind == CS:
        constraints.append(cp.sum(alpha, axis=1) <= hi.max(axis=1))
    objective = cp.sum(cp.multiply(lin, alpha)) - 0.5 * cp.sum_squares(F @ Z)
    problem = cp.Problem(cp.Maximize(objective), constraints)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return problem.value


def cvxpy_optimum(K, lin, hi, sigma, s):
    """max lin . alpha - 1/2 <Z M, K Z>, Z = sigma alpha, 0 <= alpha <= hi, written with the
    factors K = F^T F and M = R R (R = I - r 11^T, r from (1 - r L)^2 = 1 - s L)."""
    N, L = lin.shape
    w, V = np.linalg.eigh(K)
    F = np.sqrt(np.maximum(w, 0.0))[:, None] * V.T
    r = (1.0 - np.sqrt(1.0 - s * L)) / L
    R = np.eye(L) - r * np.ones((L, L))
    alpha = cp.Variable((N, L))
    Z = cp.multiply(sigma, alpha)
    objective = cp.sum(cp.multiply(lin, alpha)) - 0.5 * cp.sum_squares(F @ Z @ R)
    problem = cp.Problem(cp.Maximize(objective), [alpha >= 0, alpha <= hi])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return problem.value


def dual_value(K, lin, sigma, s, alpha):
    Z = sigma * alpha
    return float(np.vdot(lin, alpha) - 0.5 * np.vdot(Z, hessian_product(K, Z, s)))


@pytest.mark.parametrize("s, L", [(0.25, 4), (0.15, 4), (1.0 / 6, 6), (0.0, 3)])
@pytest.mark.parametrize("seed", [0, 1])
def test_newton_solve_matches_the_dense_kronecker_system(s, L, seed):
    # (K (x) M + diag D) dz = R with M = I - s 11^T, classes outermost; some variables fixed
    # (FIXED curvature), the rest with barrier curvatures over eight decades.
    rng = np.random.default_rng(seed)
    N = 15
    X = rng.normal(size=(N, 2))
    K = rbf_kernel(X, gamma=0.3)
    D = 10.0 ** rng.uniform(-4, 4, size=(N, L))
    D[rng.random((N, L)) < 0.2] = interior_point.FIXED
    R = rng.normal(size=(N, L))
    M = np.eye(L) - s * np.ones((L, L))
    dense = np.kron(M, K) + np.diag(D.T.ravel())
    expected = np.linalg.solve(dense, R.T.ravel())
    dz = newton_solve(newton_factors(K, D, s), D, s, R)
    np.testing.assert_allclose(dz.T.ravel(), expected, rtol=1e-8, atol=1e-12)


def test_newton_factors_are_the_symmetric_inverses():
    # 600 points: the inverses mirrored from LAPACK's triangle in three bands of rows; each equals
    # numpy's inverse of K + D_j and is exactly symmetric.
    rng = np.random.default_rng(0)
    N, L = 600, 3
    K = rbf_kernel(rng.normal(size=(N, 4)), gamma=0.2)
    D = 10.0 ** rng.uniform(-3, 1, size=(N, L))
    inverses, _ = newton_factors(K, D, 1.0 / L)
    for j in range(L):
        expected = np.linalg.inv(K + np.diag(D[:, j]))
        np.testing.assert_allclose(inverses[j], expected, rtol=1e-8, atol=1e-8)
        np.testing.assert_array_equal(inverses[j], inverses[j].T)


def test_a_run_that_rounding_takes_over_returns_its_best_iterate(monkeypatch):
    # From the fourth step on, the Newton directions carry an error that grows tenfold a step (as
    # rounding's does near the optimum, where the barrier's curvatures spread over 30 decades):
    # the residual grows, the run stops STALL steps later, not at MAX_ITER, and returns an
    # iterate from before the error took over, flagged as not converged.
    K, lin, hi, sigma, s = dual_problem(InhibitorySVC, 10.0)
    iterates, solves = [], [0]
    product, solve = interior_point.hessian_product, interior_point.newton_solve

    def recorded(K, Z, s):
        iterates.append(Z.copy())
        return product(K, Z, s)

    def inexact(factors, D, s, R, p=None):
        solves[0] += 1
        step = (solves[0] + 1) // 2  # (a predictor and a corrector each step)
        return solve(factors, D, s, R, p) + (0.0 if step < 4 else 10.0 ** (step - 6))

    monkeypatch.setattr(interior_point, "hessian_product", recorded)
    monkeypatch.setattr(interior_point, "newton_solve", inexact)
    x, lower, upper, steps = interior_point.interior_point(K, lin, hi, sigma, s)
    assert steps == interior_point.MAX_ITER
    assert len(iterates) < 12
    assert any(np.array_equal(sigma * x, Z) for Z in iterates[:5])


@pytest.mark.parametrize(
    "Machine, options",
    [(InhibitorySVC, {}), (InhibitorySVC, {"mu": 1.0}), (LeeLinWahbaSVC, {})],
)  # mu = 1 at L = 4: s = mu (2 - mu L) = -2, M = I + 2 11^T
@pytest.mark.parametrize("C, zero_weights", [(10.0, 0), (1000.0, 0), (10.0, 5)])
def test_interior_point_reaches_the_cvxpy_optimum(Machine, options, C, zero_weights):
    K, lin, hi, sigma, s = dual_problem(Machine, C, zero_weights=zero_weights, **options)
    assert s == pytest.approx(-2.0 if options else 0.25)
    alpha, lower, upper, steps = interior_point.interior_point(K, lin, hi, sigma, s)
    assert steps < interior_point.MAX_ITER
    assert np.all((alpha >= 0.0) & (alpha <= hi))
    assert np.all(alpha[hi == 0.0] == 0.0)
    expected = cvxpy_optimum(K, lin, hi, sigma, s)
    assert dual_value(K, lin, sigma, s, alpha) == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize("Machine", MACHINES)
def test_snapped_point_meets_the_kkt_conditions(Machine):
    # Every variable the multipliers put at a bound is moved onto it; the projected gradient of
    # the snapped point is then ~0 (here: below 1e-6 of the linear term).
    K, lin, hi, sigma, s = dual_problem(Machine, 100.0)
    alpha, lower, upper, _ = interior_point.interior_point(K, lin, hi, sigma, s)
    curvature = np.diag(K)[:, None] * (1.0 - s)
    snapped = snap(alpha, lower, upper, hi, curvature)
    at_zero, at_hi = snapped == 0.0, (snapped == hi) & (hi > 0)
    assert at_zero.sum() > hi.size // 10 and at_hi.sum() > hi.size // 10  # not a trivial point
    gradient = lin - sigma * hessian_product(K, sigma * snapped, s)
    violation = np.where(at_zero, np.maximum(gradient, 0.0), np.abs(gradient))
    violation = np.where(at_hi, np.maximum(-gradient, 0.0), violation)
    assert violation[hi > 0].max() < 1e-6 * np.abs(lin).max()


def huge_iris(scale=1e3):
    """Iris times ``scale`` (X) and as a linear Gram matrix (K): entries ~5e7 against C = 1,
    raw data's C times scale^2, where the dual's gradient is lin - Q alpha with max |Q alpha| ~
    1e9 and the KKT test is absolute."""
    X, y = datasets.load("iris")
    X = X * scale
    return X, X @ X.T, y


def kkt_violation(K, lin, hi, sigma, s, alpha):
    """The largest KKT violation of alpha: |g| on the free variables, g at 0, -g at hi."""
    gradient = lin - sigma * hessian_product(K, sigma * alpha, s)
    free = (alpha > 0.0) & (alpha < hi)
    return np.where(free, np.abs(gradient), np.where(alpha <= 0.0, gradient, -gradient)).max()


@pytest.mark.parametrize("Machine", [OneVsAllSVC, *KRONECKER])
def test_the_residual_meets_a_share_of_tol_where_the_held_outputs_are_huge(Machine):
    # A switch's run on 60 of the patterns of iris times 1 000, the others held at the optimum:
    # their outputs make |lin| ~1e8, and the relative test alone (tol = inf) stops with a dual
    # residual of 0.07-1.4 (the snapped point then violated the KKT conditions by 1-100, and the
    # epochs spent up to the step budget).  With tol the method still converges within MAX_ITER,
    # and its residual, from the dense Hessian S^T (K (x) M) S, is at most TOL_SHARE tol.
    X, K, y = huge_iris()
    y_index = np.unique(y, return_inverse=True)[1]
    machine = Machine(C=1.0)
    lin, free = machine._dual_terms(y_index, 3)
    hi = 1.0 * free
    s = {OneVsAllSVC: 0.0, InhibitorySVC: machine._inhibition(3), LeeLinWahbaSVC: 1 / 3}[Machine]
    sigma = pattern_apply(machine._kind, np.ones_like(lin), y_index)
    P = np.sort(np.random.default_rng(0).choice(len(y), 60, replace=False))
    R = np.setdiff1d(np.arange(len(y)), P)
    optimum = Machine(kernel="linear", C=1.0, tol=1e-6, random_state=0).fit(X, y).dual_coef_
    M = np.eye(3) - s
    held = K[np.ix_(P, R)] @ (sigma[R] * optimum[R])
    lin_P, hi_P, sigma_P, K_PP = lin[P] - sigma[P] * (held @ M), hi[P], sigma[P], K[np.ix_(P, P)]
    assert np.abs(lin_P).max() > 1e7
    Q = np.kron(K_PP, M) * np.outer(sigma_P.ravel(), sigma_P.ravel())  # (row-major: (i, r))
    residuals = []
    for tol in (np.inf, 1e-3):
        x, lower, upper, steps = interior_point.interior_point(
            K_PP, lin_P, hi_P, sigma_P, s, False, tol
        )
        assert steps < interior_point.MAX_ITER
        residual = (Q @ x.ravel()).reshape(x.shape) - lin_P - lower + upper
        residuals.append(np.abs(residual[hi_P > 0]).max())
    bound = interior_point.TOL_SHARE * 1e-3
    assert residuals[0] > 100 * bound
    assert residuals[1] <= bound


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("Machine", [OneVsAllSVC, *MACHINES])
def test_a_gram_matrix_of_huge_entries_fits_as_its_features_do(Machine, seed):
    # Iris times 1 000, C = 1, the default settings: the precomputed Gram matrix (the kernel
    # path, its interior point and the one-vs-all classes' switch to it) converges to tol as
    # the linear kernel on the features does (the linear path's solvers), to the same optimum.
    # Before, one-vs-all spent the 10^7-step budget (6 s, a ConvergenceWarning) and the coupled
    # machines took 0.5-5 s.
    X, K, y = huge_iris()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        kernel = Machine(kernel="precomputed", C=1.0, random_state=seed).fit(K, y)
        linear = Machine(kernel="linear", C=1.0, random_state=seed).fit(X, y)
    assert kernel.kkt_violation_ <= kernel.tol
    assert kernel.n_steps_ < 200_000
    assert kernel.dual_objective_ == pytest.approx(linear.dual_objective_, rel=1e-5)
    np.testing.assert_array_equal(kernel.predict(K), linear.predict(X))


@pytest.mark.parametrize("L", [3, 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_sum_zero_newton_solve_matches_the_dense_saddle_point_system(L, seed):
    # (K + D_j) dz_j + dlam = R_j for every class j, sum_j dz_j = -p: the saddle-point system of
    # the sum form, classes outermost, solved densely; barrier curvatures over eight decades.
    rng = np.random.default_rng(seed)
    N = 15
    K = rbf_kernel(rng.normal(size=(N, 2)), gamma=0.3)
    D = 10.0 ** rng.uniform(-4, 4, size=(N, L))
    D[rng.random((N, L)) < 0.2] = interior_point.FIXED
    R, p = rng.normal(size=(N, L)), rng.normal(size=N)
    sums = np.kron(np.ones((1, L)), np.eye(N))  # sum_j dz_j
    dense = np.block([[np.kron(np.eye(L), K) + np.diag(D.T.ravel()), sums.T],
                      [sums, np.zeros((N, N))]])  # fmt: skip
    expected = np.linalg.solve(dense, np.concatenate([R.T.ravel(), -p]))
    dz, dlam = newton_solve(newton_factors(K, D, 0.0, sum_zero=True), D, 0.0, R, p)
    np.testing.assert_allclose(dz.T.ravel(), expected[: N * L], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(dlam, expected[N * L :], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("Machine", SUM_FORM)
@pytest.mark.parametrize(
    "C, zero_weights, fixed", [(10.0, 0, 0), (1000.0, 0, 0), (10.0, 5, 0), (100.0, 0, 12)]
)
def test_sum_form_reaches_the_cvxpy_optimum(Machine, C, zero_weights, fixed):
    # Solved in w (w_ir = alpha_ir, w_iy = the pattern's sum, sum_r Z_ir = 0), read back as
    # alpha: feasible (box, CS budget) and optimal, against cvxpy written in alpha itself.
    K, lin, hi, y_index, kind = sum_problem(Machine, C, zero_weights=zero_weights, fixed=fixed)
    lin_w, hi_w, sigma = sum_form(kind, lin, hi, y_index)
    w, lower, upper, steps = interior_point.interior_point(K, lin_w, hi_w, sigma, 0.0, True)
    assert steps < interior_point.MAX_ITER
    alpha = w.copy()
    alpha[np.arange(len(y_index)), y_index] = 0.0
    assert np.all((alpha >= 0.0) & (alpha <= hi))
    assert np.all(alpha[hi == 0.0] == 0.0)
    np.testing.assert_allclose(w[np.arange(len(y_index)), y_index], alpha.sum(axis=1),
                               rtol=1e-9, atol=1e-9 * C)  # fmt: skip
    if kind == CS:
        assert np.all(alpha.sum(axis=1) <= C * (1.0 + 1e-9))
    Z = pattern_apply(kind, alpha, y_index)
    value = float(np.vdot(lin, alpha) - 0.5 * np.vdot(Z, K @ Z))
    assert value == pytest.approx(cvxpy_sum_optimum(K, lin, hi, y_index, kind), rel=1e-7)


def test_crammer_singer_switch_keeps_every_budget(monkeypatch):
    # The snap may put a variable at hi = C while others of its pattern hold mass; the move is
    # scaled back onto the budget (face_newton.line_moves) before it is taken.
    X, y = wide_iris()
    monkeypatch.setattr(interior_point, "SWITCH", 0.0)
    taken = []
    step = interior_point.InteriorPointSwitch.step

    def recorded(self, alpha, *args):
        gain = step(self, alpha, *args)
        if gain:
            taken.append(alpha.sum(axis=1).max())
        return gain

    monkeypatch.setattr(interior_point.InteriorPointSwitch, "step", recorded)
    fit = CrammerSingerSVC(C=1000.0, gamma=0.01, random_state=0).fit(X, y)
    assert taken and max(taken) <= 1000.0 * (1.0 + 1e-12)  # (SWITCH = 0: a run at every call)
    assert fit.dual_coef_.sum(axis=1).max() <= 1000.0 * (1.0 + 1e-12)


def test_epochs_left_extrapolates_a_linear_rate():
    # violation v(w) = 2 exp(-w / 50): from work 100 (v = 2 e^-2) to tol = 1e-3 the epochs need
    # 50 ln(v / tol) more; the rate is read over the second half of the work (w >= 50).
    works = list(range(0, 100, 10))
    worsts = [2.0 * np.exp(-w / 50.0) for w in works]
    worst = 2.0 * np.exp(-2.0)
    expected = 50.0 * np.log(worst / 1e-3)
    left = interior_point.epochs_left
    assert left(works, worsts, 100.0, worst, 1e-3) == pytest.approx(expected)
    assert left(works, worsts, 100.0, 1e-4, 1e-3) == 0.0  # converged
    assert left([], [], 100.0, worst, 1e-3) == np.inf  # no rate yet
    assert left(works, [worst] * len(works), 100.0, worst, 1e-3) == np.inf  # no progress
    assert left([100.0], [1.0], 100.0, worst, 1e-3) == np.inf  # no earlier work


@pytest.mark.parametrize("Machine", [InhibitorySVC, WestonWatkinsSVC])
def test_the_switch_is_declined_while_the_epochs_look_about_to_end(Machine, monkeypatch):
    # With no work left by the extrapolation every due call finds the epochs "about to end": the
    # method never runs and the fit is the epochs' to the last bit; LEFT = 0 runs it.
    X, y = wide_iris()
    params = dict(C=1000.0, gamma=0.01, random_state=0)
    monkeypatch.setattr(kernel_face, "applies", lambda kind: False)
    runs = []
    run = interior_point.interior_point
    monkeypatch.setattr(interior_point, "interior_point", lambda *a: runs.append(1) or run(*a))
    monkeypatch.setattr(interior_point, "epochs_left", lambda *args: 0.0)
    declined = Machine(**params).fit(X, y)
    assert runs == []
    monkeypatch.setattr(engine, "FACE_NEWTON", False)
    alone = Machine(**params).fit(X, y)
    np.testing.assert_array_equal(declined.dual_coef_, alone.dual_coef_)
    monkeypatch.setattr(engine, "FACE_NEWTON", True)
    monkeypatch.setattr(interior_point, "LEFT", 0.0)
    Machine(**params).fit(X, y)  # (0 < 0 * cost is false: due, it runs)
    assert runs


def recorded_gains(monkeypatch):
    """The gains of the switch's runs (a list, filled as fits run)."""
    gains = []
    step = interior_point.InteriorPointSwitch.step

    def recorded(self, *args):
        gain = step(self, *args)
        if gain is not None:
            gains.append(gain)
        return gain

    monkeypatch.setattr(interior_point.InteriorPointSwitch, "step", recorded)
    return gains


def fits_with_and_without(Machine, monkeypatch, X, y, fit_params=None, **params):
    """(fit with the interior point, fit by the epochs alone, interior-point runs whose point
    was taken, i.e. gained).  Weston-Watkins' and Crammer-Singer's face steps are off: the
    switch alone against the epochs alone (on iris the face steps end the run before the switch
    is due; ``test_sum_form_switch_takes_over_where_the_face_steps_do_not_end_the_run``)."""
    monkeypatch.setattr(kernel_face, "applies", lambda kind: False)
    gains = recorded_gains(monkeypatch)
    fits = []
    for steps in (True, False):
        monkeypatch.setattr(engine, "FACE_NEWTON", steps)
        fits.append(Machine(**params).fit(X, y, **(fit_params or {})))
    return *fits, sum(gain > 0 for gain in gains)


@pytest.mark.parametrize("Machine", KRONECKER)  # (WW, CS: the test after the next)
def test_wide_kernel_large_C_switches_and_takes_a_fraction_of_the_epochs(Machine, monkeypatch):
    X, y = wide_iris()
    params = dict(C=1000.0, gamma=0.01, tol=1e-4, random_state=0, max_iter=-1)
    switched, alone, runs = fits_with_and_without(Machine, monkeypatch, X, y, **params)
    assert runs >= 1
    assert switched.n_iter_ < alone.n_iter_ / 5
    assert switched.kkt_violation_ <= 1e-4
    assert switched.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-7)
    assert switched.dual_objective_ >= alone.dual_objective_ - 1e-9 * abs(alone.dual_objective_)


@pytest.mark.parametrize("Machine", SUM_FORM)
def test_sum_form_switch_takes_over_where_the_face_steps_do_not_end_the_run(Machine, monkeypatch):
    # Default settings, face steps on: six overlapping classes at a wide kernel and C = 1000,
    # where the epochs alone take ~22 000 (WW) / ~35 000 (CS) epochs.  The face steps do not
    # end the run, the switch does: it gains, and the fit takes a small fraction of the epochs.
    X, y = make_classification(150, n_features=9, n_informative=6, n_classes=6,
                               n_clusters_per_class=1, random_state=0)  # fmt: skip
    X = StandardScaler().fit_transform(X)
    runs = recorded_gains(monkeypatch)
    params = dict(C=1000.0, gamma=0.003, random_state=0)
    fit = Machine(**params).fit(X, y)
    monkeypatch.setattr(engine, "FACE_NEWTON", False)
    alone = Machine(**params).fit(X, y)
    assert runs and runs[0] > 0.0
    assert fit.n_iter_ < alone.n_iter_ / 20
    assert fit.kkt_violation_ <= 1e-3
    assert fit.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-5)
    assert fit.dual_objective_ >= alone.dual_objective_ - 1e-6 * abs(alone.dual_objective_)


@pytest.mark.parametrize(
    "Machine, options",
    [
        (InhibitorySVC, {}),
        (InhibitorySVC, {"mu": 0.2}),
        (InhibitorySVC, {"mu": 0.0}),
        (LeeLinWahbaSVC, {}),
        (WestonWatkinsSVC, {}),
        (CrammerSingerSVC, {}),
    ],  # fmt: skip
)
def test_switch_agrees_with_the_reference_layer(Machine, options, monkeypatch):
    # Forced at once (SWITCH = 0) on the 30-point wide-kernel problem, with and without a bias,
    # mu = 1/L (s = 1/L: M singular), 0.2 (M definite) and 0 (one-vs-all, s = 0): the fit's
    # objectives equal the reference layer's to 1e-4 at tol = 1e-6.
    X, y = wide_iris()
    X, y = X[::5], y[::5]
    monkeypatch.setattr(interior_point, "SWITCH", 0.0)
    formulation = FORMULATION[Machine]
    for bias in (False, True):
        params = dict(C=100.0, kernel="rbf", gamma=0.05, tol=1e-6, random_state=0, max_iter=-1)
        switched, alone, runs = fits_with_and_without(
            Machine, monkeypatch, X, y, fit_intercept=bias, selection="cyclic", **options,
            **params,
        )  # fmt: skip
        assert runs >= 1
        p = Problem(X, y, C=100.0, kernel="rbf", gamma=0.05)
        reference = FORMULATIONS[formulation].dual(p, fit_intercept=bias, **options)
        assert switched.dual_objective_ == pytest.approx(reference.objective, rel=1e-4)
        assert switched.objective_ == pytest.approx(reference.objective, rel=1e-4)
        assert switched.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-7)


@pytest.mark.parametrize("Machine", MACHINES)
def test_precomputed_weighted_fit_ends_where_the_epochs_end(Machine, monkeypatch):
    # A precomputed Gram matrix is the source itself; sample weights (a tenth of them 0) give
    # every pattern its own box, and the zero-weight patterns fixed variables.
    X, y = wide_iris()
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.5, 2.0, size=len(y)) * (rng.random(len(y)) > 0.1)
    K = rbf_kernel(X, gamma=0.01)
    params = dict(kernel="precomputed", C=1000.0, tol=1e-6, random_state=0, max_iter=-1)
    switched, alone, runs = fits_with_and_without(
        Machine, monkeypatch, K, y, fit_params={"sample_weight": weights}, **params
    )
    assert runs >= 1
    assert switched.n_iter_ < alone.n_iter_ / 3
    assert switched.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-7)
    np.testing.assert_array_equal(switched.predict(K), alone.predict(K))
    assert np.all(switched.dual_coef_[weights == 0] == 0.0)


@pytest.mark.parametrize("Machine", MACHINES)
def test_a_failed_run_leaves_the_epochs_path_unchanged(Machine, monkeypatch):
    # The method is an accelerator: when it fails (None) the fit is the epochs alone, bit for bit.
    X, y = wide_iris()
    params = dict(C=1000.0, gamma=0.01, random_state=0)
    monkeypatch.setattr(kernel_face, "applies", lambda kind: False)  # (WW, CS: the switch only)
    monkeypatch.setattr(interior_point, "interior_point", lambda *args: None)
    monkeypatch.setattr(interior_point, "SWITCH", 0.0)
    failed = Machine(**params).fit(X, y)
    monkeypatch.setattr(engine, "FACE_NEWTON", False)
    alone = Machine(**params).fit(X, y)
    np.testing.assert_array_equal(failed.dual_coef_, alone.dual_coef_)
    assert failed.n_iter_ == alone.n_iter_


@pytest.mark.parametrize("Machine", MACHINES)
def test_no_run_beyond_the_memory_of_cache_size(Machine, monkeypatch):
    # (L + 8) N^2 doubles: 1.9 MiB for all of iris.  With cache_size = 1 MB the runs wait until
    # the active set is small enough, and each stays within the 1 MB; with 0.0003 MB (below
    # memory(2, 3) = 352 bytes) none runs and the fit is the epochs alone's.
    X, y = wide_iris()
    assert interior_point.memory(150, 3) > 1.8 * 2**20
    assert interior_point.memory(2, 3) > 0.0003 * 2**20
    monkeypatch.setattr(interior_point, "SWITCH", 0.0)
    sizes = []
    run = interior_point.interior_point
    monkeypatch.setattr(
        interior_point, "interior_point", lambda K, *a: sizes.append(len(K)) or run(K, *a)
    )
    params = dict(C=1000.0, gamma=0.01, random_state=0)
    fits_with_and_without(Machine, monkeypatch, X, y, cache_size=1.0, **params)
    assert sizes and max(interior_point.memory(n, 3) for n in sizes) <= 2**20
    sizes.clear()
    switched, alone, _ = fits_with_and_without(Machine, monkeypatch, X, y, cache_size=0.0003,
                                               **params)  # fmt: skip
    assert sizes == []
    np.testing.assert_array_equal(switched.dual_coef_, alone.dual_coef_)


@pytest.mark.parametrize("Machine", MACHINES)
def test_an_indefinite_kernel_fails_quietly(Machine, monkeypatch):
    # A precomputed "kernel" with negative eigenvalues: a Cholesky factor fails, the run returns
    # None and the epochs go on; no RuntimeWarning reaches the user.  Fits refuse such a kernel
    # at the door (``core.validation.check_kernel_psd``); the engine's own failure path, for a
    # Newton system that rounding makes singular, is tested with that check bypassed.
    X, y = wide_iris()
    K = rbf_kernel(X, gamma=0.01) - 0.05 * np.eye(len(y))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        Machine(kernel="precomputed").fit(K, y)
    monkeypatch.setattr(base, "check_kernel_psd", lambda *args: None)
    monkeypatch.setattr(interior_point, "SWITCH", 0.0)
    results = []
    run = interior_point.interior_point
    monkeypatch.setattr(interior_point, "interior_point", lambda *a: results.append(run(*a)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # (50 epochs on this "kernel")
        warnings.simplefilter("error", RuntimeWarning)
        Machine(kernel="precomputed", C=10.0, random_state=0, max_iter=50).fit(K, y)
    assert results == [None]


@pytest.mark.parametrize("Machine", MACHINES)
def test_the_switched_fit_does_not_depend_on_n_jobs(Machine, monkeypatch):
    X, y = wide_iris()
    monkeypatch.setattr(interior_point, "SWITCH", 0.0)
    fits = [
        fits_with_and_without(Machine, monkeypatch, X, y, C=1000.0, gamma=0.01, random_state=0,
                              n_jobs=n_jobs)
        for n_jobs in (1, 2)
    ]  # fmt: skip
    assert fits[0][2] == fits[1][2] >= 1
    np.testing.assert_array_equal(fits[0][0].dual_coef_, fits[1][0].dual_coef_)


def exact_dual_and_violation(fit, K):
    """The dual objective and largest KKT violation of ``fit.dual_coef_``, from K itself."""
    alpha, y_index = fit.dual_coef_, fit._y_index
    L = alpha.shape[1]
    lin, free = fit._dual_terms(y_index, L)
    hi = fit.C * free
    Z, B = dual_vectors(fit._kind, alpha, y_index, fit._inhibition(L))
    F = K @ B
    gradient = lin - pattern_transpose(fit._kind, F, y_index)
    violation = np.where(alpha <= 0.0, np.maximum(gradient, 0.0), np.abs(gradient))
    violation = np.where(alpha >= hi, np.maximum(-gradient, 0.0), violation)
    return float(np.sum(lin * alpha) - 0.5 * np.sum(Z * F)), float(violation[hi > 0].max())


@pytest.mark.parametrize("Machine", MACHINES)
def test_a_compact_phase_run_keeps_the_other_patterns_outputs(Machine, monkeypatch):
    # On a column cache (cache_size = 0.05 MB) the engine solves the active patterns alone when
    # few are left (the compact phase), their outputs holding the held patterns' part.  A run
    # there (forced: in every compact phase, never on the whole problem) must keep that part:
    # the dual and the KKT violation recomputed from dual_coef_ with the exact Gram matrix are
    # the reported ones, and the optimum is the epochs alone's.
    X, y = wide_iris()
    monkeypatch.setattr(interior_point, "SWITCH", 0.0)
    monkeypatch.setattr(interior_point, "memory", lambda n, L: 0 if n < len(y) else np.inf)
    params = dict(C=1000.0, gamma=0.01, tol=1e-4, random_state=0, max_iter=-1, cache_size=0.05)
    switched, alone, runs = fits_with_and_without(Machine, monkeypatch, X, y, **params)
    assert runs >= 1
    dual, violation = exact_dual_and_violation(switched, rbf_kernel(X, gamma=0.01))
    assert dual == pytest.approx(switched.dual_objective_, rel=1e-10)
    assert violation <= 1e-4
    assert switched.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-7)


@pytest.mark.parametrize("Machine", MACHINES)
def test_runs_on_the_active_patterns_keep_the_held_patterns_outputs(Machine, monkeypatch):
    # On the whole Gram matrix, default settings: the runs take the active patterns only, the
    # shrunk ones held (their outputs in U).  At least one run solves fewer than all 150, and
    # the fit is the epochs alone's optimum, its dual and KKT violation recomputed from
    # dual_coef_ with the exact Gram matrix the reported ones.
    X, y = wide_iris()
    sizes = []
    run = interior_point.interior_point
    monkeypatch.setattr(
        interior_point, "interior_point", lambda K, *a: sizes.append(len(K)) or run(K, *a)
    )
    params = dict(C=1000.0, gamma=0.01, tol=1e-4, random_state=0, max_iter=-1)
    switched, alone, runs = fits_with_and_without(Machine, monkeypatch, X, y, **params)
    assert runs >= 1 and min(sizes) < len(y)
    dual, violation = exact_dual_and_violation(switched, rbf_kernel(X, gamma=0.01))
    assert dual == pytest.approx(switched.dual_objective_, rel=1e-10)
    assert violation <= 1e-4
    assert switched.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-7)


@pytest.mark.parametrize("n, L", [(120, 5), (200, 10)])
@pytest.mark.parametrize("sum_zero", [False, True])
def test_memory_bounds_the_measured_peak(n, L, sum_zero):
    # memory(N, L) counts the switch's copy of K and interior_point's arrays at their peak;
    # the run's measured peak (tracemalloc, numpy's allocations) stays below it.
    if sum_zero:
        K, lin, hi, y_index, kind = sum_problem(WestonWatkinsSVC, 100.0, n=n, L=L)
        lin, hi, sigma = sum_form(kind, lin, hi, y_index)
        s = 0.0
    else:
        K, lin, hi, sigma, s = dual_problem(InhibitorySVC, 100.0, n=n, L=L)
    tracemalloc.start()
    try:
        interior_point.interior_point(K, lin, hi, sigma, s, sum_zero)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak + K.nbytes <= interior_point.memory(n, L)
    assert peak + K.nbytes > 0.75 * interior_point.memory(n, L)  # and the model is not loose


@pytest.mark.parametrize(
    "Machine, C, bias, saving",
    [(InhibitorySVC, 1e4, False, 1.0), (LeeLinWahbaSVC, 1e3, False, 1.25),
     (LeeLinWahbaSVC, 1e3, True, 1.25)],
)  # fmt: skip
def test_the_switch_polishes_its_point_onto_its_face_at_a_tight_tol(
    Machine, C, bias, saving, monkeypatch
):
    # At tol = 1e-6 the snap left the run's point violating the KKT conditions by ~1e-4 (a
    # variable near a bound is up to gap / multiplier from it, and moving it shifts the others'
    # gradients), and the epochs closed that on a wide kernel's near-singular face in 1 347
    # (inhibitory, C = 1e4) and 43 092 (Lee-Lin-Wahba, C = 1e3; 65 385 with a bias, over the
    # rounds of its augmented Lagrangian) epochs.  Polished on its face, the fit ends in a
    # fraction of them, at the reference layer's optimum.  The epochs are summed over four
    # seeds: one seed's count moves with the last bits of K (stop 60's symmetric Gram matrix
    # took the inhibitory machine's seed 0 from 752 / 1 362 to 902 / 928 epochs; over seeds
    # 0-3 the polish saves 1.31x on the old matrix and 1.49x on the new).  Stop 63's exact
    # pattern steps (``patterns.box_rank_one`` at any C) cut the inhibitory machine's epochs over
    # the four seeds from 3 438 to 2 798 polished and from 5 100 to 3 076 snapped: the polish
    # still saves epochs there, 1.10x, where it saved 1.48x against the old steps.
    X, y = wide_iris()
    params = dict(C=C, gamma=0.01, tol=1e-6, max_iter=-1, fit_intercept=bias)
    seeds = range(4)
    polished = [Machine(**params, random_state=seed).fit(X, y) for seed in seeds]
    monkeypatch.setattr(interior_point.InteriorPointSwitch, "_polished", lambda self, x, *a: x)
    snapped = [Machine(**params, random_state=seed).fit(X, y) for seed in seeds]
    assert all(m.kkt_violation_ <= 1e-6 for m in polished + snapped)
    assert sum(m.n_iter_ for m in polished) < sum(m.n_iter_ for m in snapped) / saving
    polished = polished[0]
    p = Problem(X, y, C=C, kernel="rbf", gamma=0.01)
    reference = FORMULATIONS[FORMULATION[Machine]].dual(p, fit_intercept=bias)
    assert polished.dual_objective_ == pytest.approx(reference.objective, rel=1e-6)
    assert polished.objective_ == pytest.approx(reference.objective, rel=1e-6)


@pytest.mark.parametrize("Machine", KRONECKER)
def test_a_polish_that_does_not_end_on_its_face_leaves_the_snapped_point(Machine, monkeypatch):
    # face_steps that report they did not reach their face's optimum (their point moved all the
    # same): the fit is, bit for bit, the fit without a polish (POLISH_SOLVES = 0).
    X, y = wide_iris()
    params = dict(C=1e4, gamma=0.01, tol=1e-6, random_state=0, max_iter=-1)
    steps = interior_point.face_steps
    polishes = []

    def unfinished(*args, **kwargs):
        a, U, _ = steps(*args, **kwargs)
        polishes.append(1)
        return a, U, False

    monkeypatch.setattr(interior_point, "face_steps", unfinished)
    kept = Machine(**params).fit(X, y)
    monkeypatch.setattr(interior_point, "POLISH_SOLVES", 0)
    snapped = Machine(**params).fit(X, y)
    assert polishes
    np.testing.assert_array_equal(kept.dual_coef_, snapped.dual_coef_)
    assert kept.n_iter_ == snapped.n_iter_


@pytest.mark.parametrize("size", [1e300, 1e305, 1e307])
def test_a_gram_matrix_near_the_floating_range_ends_in_a_point_or_none_quietly(size):
    """One-vs-all's exact class step (``DecompositionSolver._exact_class``) ran the interior
    point outside ``errstate``: on a Gram matrix of entries near 1e300 its products overflowed
    into numpy's warnings.  Now it returns a finite point in the box or None, silently."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    sign = np.where(np.arange(12) % 2, 1.0, -1.0)[:, None]
    K = X @ X.T * (size / np.abs(X @ X.T).max())
    for C in (1e-6, 1.0):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            x = interior_point.snapped_optimum(
                K, np.zeros((12, 1)), np.ones((12, 1)), np.full((12, 1), C), sign, 0.0, 1e-3
            )
        assert x is None or (np.all(np.isfinite(x)) and np.all((0 <= x) & (x <= C)))
