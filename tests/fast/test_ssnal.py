"""The semismooth Newton augmented Lagrangian start of the linear path (msvm.fast.ssnal): its
pieces against direct computations, and whole fits against the reference layer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MultiPrototypeSVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
    engine,
    ssnal,
)
from msvm.fast.patterns import CS, LLW, SIGN, WW, output_shift
from msvm.fast.ssnal import SemismoothALM, newton_blocks, project_budget
from msvm.reference import FORMULATIONS, Problem

MACHINES = [InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC, CrammerSingerSVC, OneVsAllSVC]


def random_dual(Machine, seed, n=200, d=4, L=5, C=0.7, offset=0.0):
    """A small dual of the machine on random data and a feasible anchor off its optimum."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, L, size=n)
    y[:L] = np.arange(L)
    machine = Machine()
    kind, c = machine._kind, machine._inhibition(L)
    lin, free = machine._dual_terms(y, L)
    hi = C * free
    anchor = np.clip(rng.uniform(-0.3, 0.6, size=(n, L)), 0.0, None) * hi
    if kind == CS:
        anchor *= C / np.maximum(anchor.sum(axis=1, keepdims=True), C)
    method = SemismoothALM(kind, c, lin, hi, y, X, offset, 1e-6)
    return method, anchor, rng


def dense_newton_matrix(method, T, sigma):
    """I + sigma (R (x) I) T (R (x) I) from the blocks of ``newton_blocks``, written out."""
    L, d = T.shape[0], T.shape[2]
    full = np.zeros((L * d, L * d))
    for a in range(L):
        for b in range(a, L):
            full[a * d : (a + 1) * d, b * d : (b + 1) * d] = T[a, b]
            full[b * d : (b + 1) * d, a * d : (a + 1) * d] = T[a, b].T
    R = np.eye(L) if method.R is None else method.R
    RI = np.kron(R, np.eye(d))
    return np.eye(L * d) + sigma * RI @ full @ RI


@pytest.mark.parametrize("Machine", MACHINES)
@pytest.mark.parametrize("sigma", [0.05, 0.5, 5.0])
@pytest.mark.parametrize("offset", [0.0, 0.8])
def test_newton_matrix_is_the_derivative_of_the_gradient(Machine, sigma, offset):
    """(I + sigma R T R) D equals the finite difference of grad phi = P - X^T S alpha(P) R along
    D (phi is piecewise quadratic: a random point lies inside one piece)."""
    method, anchor, rng = random_dual(Machine, 1, offset=offset)
    n, L = anchor.shape
    P = 0.3 * rng.normal(size=(method.X.shape[1], L))
    alpha, free = np.empty((n, L)), np.empty((n, L), dtype=np.int8)
    method.phi(P, anchor, sigma, alpha, free)
    T, face = newton_blocks(method.kind, method.X, free, method.y_index)
    assert face > 0
    D = rng.normal(size=P.shape)
    eps = 1e-7
    moved = np.empty((n, L))
    method.phi(P + eps * D, anchor, sigma, moved)
    difference = (eps * D - method.weights(moved) + method.weights(alpha)) / eps
    product = dense_newton_matrix(method, T, sigma) @ D.T.ravel()
    np.testing.assert_allclose(
        product, difference.T.ravel(), rtol=0, atol=1e-5 * np.abs(product).max()
    )
    # and the direction solves that system
    direction = method.newton_direction(T.copy(), P, sigma)
    np.testing.assert_allclose(dense_newton_matrix(method, T, sigma) @ direction.T.ravel(),
                               -P.T.ravel(), atol=1e-8)  # fmt: skip


@pytest.mark.parametrize("Machine", MACHINES)
def test_phi_and_its_gradient(Machine):
    """phi at P matches its definition summed in numpy, its gradient a finite difference, and
    alpha(P) the projection found by brute force over a grid of the box (box kinds) or by the
    KKT conditions of the budget projection (CS)."""
    method, anchor, rng = random_dual(Machine, 2)
    n, L = anchor.shape
    sigma = 0.3
    P = 0.3 * rng.normal(size=(method.X.shape[1], L))
    alpha = np.empty((n, L))
    value = method.phi(P, anchor, sigma, alpha)
    g = gradients(method, P)
    expected = 0.5 * np.sum(P * P) + np.sum(
        (alpha * g - (alpha - anchor) ** 2 / (2 * sigma)) * (method.hi > 0)
    )
    assert value == pytest.approx(expected, rel=1e-12)
    v = anchor + sigma * g
    if method.kind == CS:
        for i in range(n):
            check_budget_projection(v[i], method.hi[i], alpha[i])
    else:
        np.testing.assert_array_equal(alpha, np.clip(v, 0.0, method.hi))
    D = rng.normal(size=P.shape)
    eps = 1e-6
    slope = (method.phi(P + eps * D, anchor, sigma, alpha.copy())
             - method.phi(P - eps * D, anchor, sigma, alpha.copy())) / (2 * eps)  # fmt: skip
    method.phi(P, anchor, sigma, alpha)
    grad = P - method.weights(alpha)
    assert slope == pytest.approx(float(np.sum(grad * D)), rel=1e-5)


def gradients(method, P):
    """The dual gradient lin - S^T (K B) at weights P, from the estimator-side helpers."""
    from msvm.fast.patterns import pattern_transpose

    F = method.outputs(P)
    return method.lin - pattern_transpose(method.kind, F, method.y_index)


def check_budget_projection(v, hi, a):
    """a is the projection of v onto {0 <= a <= hi, sum a <= max hi} (hi 0 or the budget):
    feasible, and a = max(v - tau, 0) on the free entries with tau >= 0, tau > 0 only when the
    budget is met."""
    B = hi.max()
    free = hi > 0
    assert np.all(a >= 0) and np.all(a[~free] == 0) and a.sum() <= B * (1 + 1e-12)
    held = free & (a > 0)
    taus = (v - a)[held]
    tau = taus[0] if taus.size else max(0.0, v[free].max())
    np.testing.assert_allclose(taus, tau, atol=1e-12)
    assert np.all(v[free & (a == 0)] <= tau + 1e-12)
    assert tau >= -1e-12
    if tau > 1e-12:
        assert a.sum() == pytest.approx(B, rel=1e-12)


def test_budget_projection_against_sorting_free_bisection():
    rng = np.random.default_rng(3)
    a = np.empty(7)
    for _ in range(500):
        v = rng.normal(scale=rng.choice([0.1, 1.0, 10.0]), size=7)
        hi = np.where(rng.random(7) < 0.2, 0.0, 1.3)
        hi[0] = 1.3
        project_budget(v, hi, a)
        check_budget_projection(v, hi, a)
        lo, up = 0.0, max(np.abs(v).max(), 1.0)  # bisection on sum max(v - tau, 0) = B
        if np.maximum(v[hi > 0], 0).sum() > 1.3:
            for _ in range(200):
                mid = 0.5 * (lo + up)
                lo, up = (mid, up) if np.maximum(v[hi > 0] - mid, 0).sum() > 1.3 else (lo, mid)
            np.testing.assert_allclose(a[hi > 0], np.maximum(v[hi > 0] - lo, 0), atol=1e-9)
        else:
            np.testing.assert_allclose(a, np.maximum(v, 0) * (hi > 0), atol=0)


@pytest.mark.parametrize("B", [5e-324, 1e-315, 1e-200])
def test_a_budget_below_the_entries_rounding_goes_to_the_top_entry(B):
    """With B below v's rounding (MultiPrototypeSVC at C = 5e-324), the first sorted entry's
    test a_0 > a_0 - B failed (a_0 - B rounds to a_0) and the projection returned v itself (50.8
    for 5e-324); tested as a true inequality, v - tau still lost B in v's rounding (all zeros,
    the review's case).  The exact projection puts B on the top entry (a_0 - a_1 = 1e-14 >> B);
    computed relative to a_0 it does."""
    v = np.array([50.78, 50.78 - 1e-14, 3.0, -1.0, 50.78 - 2e-14, 7.0])
    hi = np.where(np.arange(6) == 2, 0.0, B)
    a = np.empty(6)
    project_budget(v, hi, a)
    np.testing.assert_array_equal(a, [B, 0, 0, 0, 0, 0])
    # four equal entries: B / 4 each, not representable below 2e-323; the budget goes to the
    # first rather than delta = B to each (four times the budget)
    project_budget(np.full(4, 3.0), np.full(4, B), a[:4])
    slack = 4 * np.finfo(float).smallest_subnormal + 1e-15 * B  # (the subnormals' spacing)
    assert B - slack <= a[:4].sum() <= B + 1e-15 * B


def test_crammer_singer_at_the_smallest_c_reaches_its_optimum():
    """Linear Crammer-Singer on 6 000 rows starts from the proximal method: at C = 5e-324 every
    pattern's budget is full at the optimum (the review's case), which the v - tau projection
    lost (dual variables 0, a ConvergenceWarning with KKT 1.0)."""
    X, y = make_classification(6000, 20, n_informative=10, n_classes=5, random_state=0)
    X = StandardScaler().fit_transform(X)
    C = 5e-324
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = CrammerSingerSVC(kernel="linear", C=C, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.dual_coef_.sum(axis=1), C)
    assert clf.fit_status_ == 0


@pytest.mark.parametrize("q", [1, 3])
@pytest.mark.parametrize("C", [5e-324, 1e-315])
def test_multi_prototype_dual_within_a_subnormal_c(C, q):
    """The review's case: MultiPrototypeSVC at a subnormal C returned dual variables of 50.8
    (q = 1) and 5.7e-14 (q = 3), its proximal start's budget projection broken as above.  At
    such a C every output is ~0 < 1: the optimum fills every pattern's budget."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(6, 2)), np.array([0, 1, 2, 0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MultiPrototypeSVC(C=C, kernel="poly", n_prototypes=q, random_state=0).fit(X, y)
    assert np.all((0 <= clf.dual_coef_) & (clf.dual_coef_ <= C))
    # (each variable is a subnormal multiple of 4.9e-324: the sum to that spacing per term)
    spacing = np.finfo(float).smallest_subnormal * clf.dual_coef_.shape[1]
    np.testing.assert_allclose(clf.dual_coef_.sum(axis=1), C, rtol=0, atol=spacing)


@pytest.mark.parametrize("Machine", MACHINES)
def test_primal_value_is_the_canonical_objective(Machine):
    """1/2 ||P||^2 + loss_value at the weights of a dual point is the estimator's canonical
    primal of those weights (msvm.core.objectives)."""
    method, anchor, _ = random_dual(Machine, 4)
    from msvm.core.objectives import canonical_objective
    from msvm.fast.ssnal import loss_value

    P = method.weights(anchor)
    F = method.outputs(P)
    ours = 0.5 * np.sum(P * P) + loss_value(method.kind, F, method.lin, method.hi, method.y_index)
    machine = Machine()
    expected = canonical_objective(np.sum(P * P), machine._loss(F, method.y_index), 0.7)
    assert ours == pytest.approx(expected, rel=1e-12)


REFERENCE = {
    InhibitorySVC: ("inhibitory", {}),
    OneVsAllSVC: ("one_vs_all", {}),
    WestonWatkinsSVC: ("weston_watkins", {}),
    LeeLinWahbaSVC: ("lee_lin_wahba", {}),
    CrammerSingerSVC: ("crammer_singer", {}),
}


@pytest.fixture(scope="module")
def wine():
    X, y = datasets.load("wine")
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y, Problem(X, y, C=0.5, kernel="linear")


def fit_with_start(Machine, X, y, monkeypatch, **params):
    """Fit with the proximal start forced on (MIN_ROWS lowered); returns (model, methods run)."""
    runs = []
    original = ssnal.SemismoothALM.run

    def run(self, alpha):
        runs.append(self)
        return original(self, alpha)

    monkeypatch.setattr(ssnal, "MIN_ROWS", 10)
    monkeypatch.setattr(ssnal.SemismoothALM, "run", run)
    params = dict(kernel="linear", random_state=0) | params
    return Machine(**params).fit(X, y), runs


@pytest.mark.parametrize("Machine", MACHINES)
def test_proximal_start_reaches_the_reference_optimum(Machine, wine, monkeypatch):
    X, y, p = wine
    formulation, options = REFERENCE[Machine]
    ref = FORMULATIONS[formulation].dual(p, **options)
    model, runs = fit_with_start(Machine, X, y, monkeypatch, C=p.C, tol=1e-6)
    assert runs and runs[0].outer_steps > 0
    assert model.objective_ == pytest.approx(ref.objective, rel=1e-6)
    assert model.dual_objective_ <= ref.objective * (1 + 1e-9) <= model.objective_ * (1 + 1e-9)
    assert model.kkt_violation_ <= 1e-6
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_proximal_start_with_a_bias_and_with_costs(wine, monkeypatch):
    X, y, p = wine
    ref = FORMULATIONS["weston_watkins"].dual(p, fit_intercept=True)
    model, runs = fit_with_start(WestonWatkinsSVC, X, y, monkeypatch, C=p.C, tol=1e-6,
                                 fit_intercept=True)  # fmt: skip
    assert runs and model.objective_ == pytest.approx(ref.objective, rel=1e-5)
    cost = np.random.default_rng(5).uniform(0.5, 2.0, size=(3, 3))
    np.fill_diagonal(cost, 0.0)
    ref = FORMULATIONS["crammer_singer"].dual(p, cost=cost)
    model, runs = fit_with_start(CrammerSingerSVC, X, y, monkeypatch, C=p.C, tol=1e-6, cost=cost)
    assert runs and model.objective_ == pytest.approx(ref.objective, rel=1e-6)


@pytest.mark.parametrize("Machine", MACHINES)
def test_same_optimum_with_and_without_the_start(Machine, monkeypatch):
    """Overlapping classes (many variables at C): the start, then the epochs, end where the
    epochs alone end, and every iterate of the start is feasible."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, n_features=8, n_informative=6, n_classes=4,
                               n_clusters_per_class=1, random_state=0)  # fmt: skip
    monkeypatch.setattr(engine, "PROXIMAL_START", False)
    cold = Machine(kernel="linear", tol=1e-6, random_state=0).fit(X, y)
    monkeypatch.setattr(engine, "PROXIMAL_START", True)
    model, runs = fit_with_start(Machine, X, y, monkeypatch, tol=1e-6)
    assert runs
    assert model.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    assert model.dual_objective_ == pytest.approx(cold.dual_objective_, rel=1e-6)
    history = runs[0].history
    assert all(primal >= dual for _, _, _, _, primal, dual, _ in history)
    duals = [h[5] for h in history]
    assert duals == sorted(duals)  # each proximal step increases the dual (solved steps only)
    hi = Machine()._dual_terms(np.searchsorted(np.unique(y), y), 4)[1] * 1.0
    alpha = model.dual_coef_
    assert np.all(alpha >= 0) and np.all(alpha <= hi)


def test_a_step_that_fails_is_undone_and_the_epochs_finish(monkeypatch):
    """With one Newton step allowed per proximal step none is solved: each is undone (alpha
    back at the anchor, here 0), sigma falls to its floor, and the epochs reach the optimum."""
    from sklearn.datasets import make_classification

    X, y = make_classification(400, n_features=6, n_informative=4, n_classes=3, random_state=1)
    monkeypatch.setattr(ssnal, "NEWTON_STEPS", 1)
    model, runs = fit_with_start(CrammerSingerSVC, X, y, monkeypatch, tol=1e-5)
    assert runs and runs[0].history == [] and runs[0].outer_steps > 1
    monkeypatch.setattr(engine, "PROXIMAL_START", False)
    cold = CrammerSingerSVC(kernel="linear", tol=1e-5, random_state=0).fit(X, y)
    assert model.objective_ == pytest.approx(cold.objective_, rel=1e-5)


def test_start_applies_only_where_it_can(monkeypatch):
    """Sparse rows, too wide a Newton system and MProt-like bounds: no start; WW, CS and
    one-vs-all start with it on ssnal.MIN_ROWS rows or more, the inhibitory machine and LLW
    (outputs that sum to zero) on any number."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    hi = np.ones((6000, 4))
    X = rng.normal(size=(6000, 5))
    assert ssnal.applies(CS, hi, X, 5)
    assert not ssnal.applies(CS, hi, sp.csr_matrix(X), 5)
    assert not ssnal.applies(CS, hi, X, ssnal.MAX_WEIGHTS)
    assert ssnal.applies(CS, hi[:100], X[:100], 5)
    shifts = {kind: output_shift(kind, c, 4) for kind, c in [(CS, 0), (WW, 0), (LLW, 0)]}
    assert ssnal.min_rows(shifts[CS]) == ssnal.min_rows(shifts[WW]) == ssnal.MIN_ROWS > 100
    assert ssnal.min_rows(output_shift(SIGN, 0.0, 4)) == ssnal.MIN_ROWS  # one-vs-all
    assert ssnal.min_rows(output_shift(SIGN, 0.25, 4)) == ssnal.min_rows(shifts[LLW]) == 0
    odd = hi.copy()
    odd[:, 1] = 0.5
    assert not ssnal.applies(CS, odd, X, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model, runs = fit_with_start(CrammerSingerSVC, sp.csr_matrix(X[:300]),
                                     rng.integers(0, 4, 300), monkeypatch)  # fmt: skip
    assert not runs


@pytest.mark.parametrize("Machine", [WestonWatkinsSVC, OneVsAllSVC, CrammerSingerSVC])
def test_the_method_takes_over_epochs_that_do_not_converge(Machine, monkeypatch):
    """Below MIN_ROWS, WW, CS and one-vs-all start with the epochs; when RESCUE_EPOCHS of them
    have not converged the method continues from their iterate, and the run ends at the optimum
    of the epochs alone (no warning: the first epochs' limit is not the user's max_iter), with
    a few epochs after the method: they start with every variable active again (the first
    epochs' shrinking belonged to the old iterate; with it kept, CS on 4 900 overlapping rows
    took 15 000 epochs after the method had reached tol)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, n_features=8, n_informative=6, n_classes=4,
                               n_clusters_per_class=1, random_state=0)  # fmt: skip
    monkeypatch.setattr(engine, "PROXIMAL_START", False)
    alone = Machine(kernel="linear", tol=1e-6, random_state=0).fit(X, y)
    assert alone.n_iter_ > 5
    monkeypatch.setattr(engine, "PROXIMAL_START", True)
    monkeypatch.setattr(ssnal, "RESCUE_EPOCHS", 5)
    monkeypatch.setattr(ssnal, "EXPECTED_NEWTON", 0)  # a method modelled free: no more epochs
    runs = []
    original = ssnal.SemismoothALM.run

    def run(self, alpha):
        runs.append(alpha.any())  # a start from the epochs' iterate, not from 0
        return original(self, alpha)

    monkeypatch.setattr(ssnal.SemismoothALM, "run", run)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = Machine(kernel="linear", tol=1e-6, random_state=0).fit(X, y)
    assert runs == [True]
    assert 5 < model.n_iter_ <= 5 + 3
    assert model.objective_ == pytest.approx(alone.objective_, rel=1e-6)
    assert model.kkt_violation_ <= 1e-6


@pytest.mark.parametrize("Machine", MACHINES)
def test_badly_scaled_features_converge_in_the_method(Machine, monkeypatch):
    """Raw wine (proline ~1e3 beside ratios ~1): X^T X's eigenvalues span ~1e7, and the steps
    at sigma = SIGMA_MAX cut the KKT violation by ~5 % each (40 of them ended at 0.06; the epochs
    then took 23 s for WW, and CS stopped at its step budget).  sigma grows past SIGMA_MAX while
    the steps are slow: the method itself reaches tol, and the fit the reference optimum."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    p = Problem(X, y, C=1.0, kernel="linear")
    formulation, options = REFERENCE[Machine]
    ref = FORMULATIONS[formulation].dual(p, **options)
    kkt = []
    original = ssnal.SemismoothALM.run

    def run(self, alpha):
        kkt.append(original(self, alpha))
        return kkt[-1]

    monkeypatch.setattr(ssnal.SemismoothALM, "run", run)
    monkeypatch.setattr(ssnal, "MIN_ROWS", 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = Machine(kernel="linear", tol=1e-6, random_state=0).fit(X, y)
    assert len(kkt) == 1 and kkt[0] <= 1e-6
    assert model.objective_ == pytest.approx(ref.objective, rel=1e-5)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


NEWTON_SYSTEMS = [(4, 3, 0.25, 2.0), (10, 7, 0.1, 1e3), (3, 5, 0.0, 0.5), (6, 4, 1 / 6, 1e-2)]


@pytest.mark.parametrize(("L", "d", "beta", "sigma"), NEWTON_SYSTEMS)
def test_block_diagonal_newton_solve_equals_the_dense_solve(L, d, beta, sigma):
    """Woodbury's solve of (I + sigma R T R) for block-diagonal T (SIGN, LLW) against the dense
    (L d) x (L d) system, some blocks zero (classes without a free variable)."""
    from msvm.fast.ssnal import block_diagonal_solve

    rng = np.random.default_rng(L)
    T = np.zeros((L, L, d, d))
    for j in range(L):
        Q = rng.normal(size=(d, 2 * d))
        T[j, j] = Q @ Q.T * (j % 3)
    grad = rng.normal(size=(d, L))
    R = np.eye(L) - beta
    dense = np.zeros((L * d, L * d))
    for a in range(L):
        for b in range(L):
            block = sum(R[a, k] * T[k, k] * R[k, b] for k in range(L))
            dense[a * d : (a + 1) * d, b * d : (b + 1) * d] = block
    H = np.eye(L * d) + sigma * dense
    expected = np.linalg.solve(H, grad.T.ravel()).reshape(L, d).T
    got = block_diagonal_solve(T, grad, sigma, beta)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_the_hand_over_waits_for_the_epochs_work_to_reach_the_method_cost(monkeypatch):
    """After RESCUE_EPOCHS the epochs go on until their modelled work (pattern steps at
    engine.LINEAR_STEP_NS) reaches the method's modelled cost, then the method takes over."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, n_features=8, n_informative=6, n_classes=4,
                               n_clusters_per_class=1, random_state=0)  # fmt: skip
    monkeypatch.setattr(ssnal, "RESCUE_EPOCHS", 5)
    clf = WestonWatkinsSVC(kernel="linear", tol=1e-6, random_state=0)
    solver_steps = []
    original = ssnal.SemismoothALM.run
    made = engine.DecompositionSolver.__init__

    def init(self, *args, **kwargs):
        made(self, *args, **kwargs)
        solver_steps.append(self)

    def run(self, alpha):
        steps = solver_steps[-1].n_steps  # (a fresh solver: its steps are this run's)
        data = engine.LinearData(X)
        work = steps * solver_steps[-1]._linear_step_cost(data)
        runs.append((work, solver_steps[-1]._method_cost(data)))
        return original(self, alpha)

    runs = []
    monkeypatch.setattr(engine.DecompositionSolver, "__init__", init)
    monkeypatch.setattr(ssnal.SemismoothALM, "run", run)
    # the method modelled as dear as 40 epochs of the 600 patterns' steps
    step = engine.LINEAR_STEP_NS[0] + engine.LINEAR_STEP_NS[1] * 8 * 4
    monkeypatch.setattr(ssnal, "EXPECTED_NEWTON", 40 * 600 * step / ssnal.modelled_cost(600, 8, 4)
                        * ssnal.EXPECTED_NEWTON)  # fmt: skip
    clf.fit(X, y)
    assert len(runs) == 1
    work, cost = runs[0]
    assert cost == pytest.approx(40 * 600 * step)
    # the method came once the epochs' work had reached its cost (the last epoch may overshoot)
    assert cost <= work <= cost + 600 * step


def test_the_method_does_not_start_where_it_is_modelled_dear(monkeypatch):
    """On 200 x 120 standardised rows (d L = 484) the method's modelled cost exceeds
    METHOD_FIRST_EPOCHS epochs: the inhibitory machine starts with its epochs (on 1 000 x 256 the
    method first took 10 s against the epochs' 0.7 s), and ends at the same optimum as with the
    method first."""
    from sklearn.datasets import make_classification

    X, y = make_classification(200, n_features=120, n_informative=20, n_classes=4,
                               random_state=0)  # fmt: skip
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    runs = []
    original = ssnal.SemismoothALM.run

    def run(self, alpha):
        runs.append(alpha.any())
        return original(self, alpha)

    monkeypatch.setattr(ssnal.SemismoothALM, "run", run)
    epochs_first = InhibitorySVC(kernel="linear", C=0.1, tol=1e-6, random_state=0).fit(X, y)
    assert runs == []
    monkeypatch.setattr(engine, "METHOD_FIRST_EPOCHS", 1e9)
    method_first = InhibitorySVC(kernel="linear", C=0.1, tol=1e-6, random_state=0).fit(X, y)
    assert runs == [False]  # a cold start
    assert epochs_first.objective_ == pytest.approx(method_first.objective_, rel=1e-6)


def test_a_run_that_ends_at_max_iter_around_the_hand_over_warns(monkeypatch):
    """max_iter bounds every epoch of a run that hands over: the epochs before the method take at
    most half of those left after RESCUE_EPOCHS, and a run left unconverged at max_iter warns
    (here the method is made to do nothing)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, n_features=8, n_informative=6, n_classes=4,
                               n_clusters_per_class=1, random_state=0)  # fmt: skip
    monkeypatch.setattr(ssnal, "RESCUE_EPOCHS", 5)
    monkeypatch.setattr(ssnal, "EXPECTED_NEWTON", 1e6)  # dear: the epochs go on first
    monkeypatch.setattr(ssnal.SemismoothALM, "run", lambda self, alpha: None)
    with pytest.warns(ConvergenceWarning, match="max_iter=15"):
        clf = WestonWatkinsSVC(kernel="linear", tol=1e-9, max_iter=15, random_state=0).fit(X, y)
    assert clf.n_iter_ == 15
