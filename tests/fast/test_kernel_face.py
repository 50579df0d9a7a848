"""Newton steps on the free face of the WW and CS kernel duals (msvm.fast.kernel_face) against a
direct evaluation of the dual, and in the engine against the epochs alone."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    WestonWatkinsSVC,
    engine,
    kernel_face,
)
from msvm.fast.engine import DecompositionSolver
from msvm.fast.kernel_face import KernelFaceNewton, face_gain, face_steps
from msvm.fast.kernels import column_source, precomputed_source
from msvm.fast.patterns import CS, dual_vectors, output_shift, pattern_apply, state_width

MACHINES = [WestonWatkinsSVC, CrammerSingerSVC]
GAMMA = 0.2


def dual_value(lin, alpha, y_index, K, kind):
    """sum lin alpha - 1/2 tr(Z^T K Z) (M = I for WW and CS), K offset-augmented."""
    Z, _ = dual_vectors(kind, alpha, y_index, 0.0)
    return float(np.sum(lin * alpha) - 0.5 * np.sum(Z * (K @ Z)))


def problem(Machine, C, offset, cache_size=200.0, n=60, L=3):
    """Overlapping Gaussian classes in 4 dimensions, their dual terms and column source, and
    K + offset."""
    rng = np.random.default_rng(0)
    y_index = np.arange(n) % L
    X = rng.normal(size=(n, 4)) + 0.8 * np.eye(4)[y_index]
    machine = Machine()
    kind = machine._kind
    lin, free = machine._dual_terms(y_index, L)
    source = column_source(X, "rbf", GAMMA, 3, 0.0, cache_size)
    K = rbf_kernel(X, gamma=GAMMA) + offset
    return kind, lin, C * free, y_index, source, K


def random_state(kind, hi, seed):
    """A dual point with many free variables, off the optimum; for CS inside the budgets
    sum_r alpha_ir <= C, a third of them full."""
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.0, 1.0, size=hi.shape) * hi * (rng.random(hi.shape) < 0.7)
    if kind == CS:
        C = hi.max()
        total = np.maximum(alpha.sum(axis=1), 1e-300)
        full = rng.random(hi.shape[0]) < 0.3
        alpha *= np.where(full, C / total, np.minimum(0.9 * C / total, 1.0))[:, None]
    return alpha


def newton(kind, lin, hi, y_index, source, offset, alpha):
    """A KernelFaceNewton over its own dual state tuple (every variable active)."""
    solver = DecompositionSolver(kind, 0.0, lin, hi, y_index, tol=1e-3, max_iter=10,
                                 shrinking=True, random_state=0, offset=offset)  # fmt: skip
    dual = solver._dual(alpha, np.ones(alpha.shape[0]))
    return KernelFaceNewton(kind, lin, hi, y_index, source, offset, dual)


def steps_allowed(N):
    """Pattern steps after which every face step is within the work budget."""
    return 10**9 * N


@pytest.mark.parametrize("Machine", MACHINES)
@pytest.mark.parametrize("offset", [0.0, 0.7])
@pytest.mark.parametrize("cache_size", [200.0, 0.01])  # the whole Gram matrix; columns on demand
@pytest.mark.parametrize("C, seed", [(10.0, 1), (0.01, 2)])  # (0.01, 2): CS steps to a budget
def test_step_gains_what_it_reports_and_keeps_the_outputs(Machine, offset, cache_size, C, seed):
    kind, lin, hi, y_index, source, K = problem(Machine, C, offset, cache_size)
    alpha = random_state(kind, hi, seed=seed)
    Z, _ = dual_vectors(kind, alpha, y_index, 0.0)
    U = np.asfortranarray(K @ Z)
    before = dual_value(lin, alpha, y_index, K, kind)
    step = newton(kind, lin, hi, y_index, source, offset, alpha)
    gain = step.step(alpha, U, np.arange(len(y_index))[::-1], steps_allowed(len(y_index)))
    after = dual_value(lin, alpha, y_index, K, kind)
    assert gain > 1e-3 * abs(before)
    assert gain == pytest.approx(after - before, rel=1e-9)
    assert np.all(alpha >= 0.0) and np.all(alpha <= hi)
    if kind == CS:
        assert np.all(alpha.sum(axis=1) <= hi.max() * (1.0 + 1e-12))
    Z, _ = dual_vectors(kind, alpha, y_index, 0.0)
    np.testing.assert_allclose(U, K @ Z, atol=1e-10 * np.abs(U).max())


@pytest.mark.parametrize("Machine", MACHINES)
def test_one_step_returns_to_the_optimum_from_its_face(Machine, monkeypatch):
    # The dual is a quadratic on the face of its optimum: a step from a point of that face (the
    # optimum's free variables moved, everything else held) lands on the optimum again.
    monkeypatch.setattr(engine, "FACE_NEWTON", False)
    kind, lin, hi, y_index, source, K = problem(Machine, 10.0, 0.0)
    N = len(y_index)
    alpha, U = np.zeros(hi.shape), np.zeros(hi.shape, order="F")
    solver = DecompositionSolver(kind, 0.0, lin, hi, y_index, tol=1e-11, max_iter=-1,
                                 shrinking=True, random_state=0)  # fmt: skip
    solver.solve_kernel(source, alpha, U)
    optimum = dual_value(lin, alpha, y_index, K, kind)
    free = (alpha > 1e-9 * hi) & (alpha < (1.0 - 1e-9) * hi)
    assert free.sum() >= 10  # a face worth the name
    moved = alpha.copy()
    rng = np.random.default_rng(0)
    shrink = rng.uniform(0.0, 0.5, size=alpha.shape) * alpha * free  # decreases: feasible
    if kind == CS:  # a full budget stays full: a pair of free variables trades within it
        full = alpha.sum(axis=1) >= hi.max() * (1.0 - 1e-12)
        shrink[full] = 0.0
        for i in np.flatnonzero(full & (free.sum(axis=1) >= 2)):
            r, s = np.flatnonzero(free[i])[:2]
            delta = 0.3 * min(alpha[i, r], hi[i, s] - alpha[i, s])
            moved[i, r] -= delta
            moved[i, s] += delta
    moved -= shrink
    Z, _ = dual_vectors(kind, moved, y_index, 0.0)
    U_moved = np.asfortranarray(K @ Z)
    start = dual_value(lin, moved, y_index, K, kind)
    assert optimum - start > 1e-6 * abs(optimum)  # the move left the optimum
    step = newton(kind, lin, hi, y_index, source, 0.0, moved)
    step.step(moved, U_moved, np.arange(N), steps_allowed(N))
    assert dual_value(lin, moved, y_index, K, kind) == pytest.approx(optimum, rel=1e-10)


@pytest.mark.parametrize("Machine", MACHINES)
def test_a_flat_kernel_takes_no_step_and_raises_no_warning(Machine):
    kind, lin, hi, y_index, _, _ = problem(Machine, 10.0, 0.0)
    N = len(y_index)
    source = precomputed_source(np.full((N, N), 1e-300))
    alpha = random_state(kind, hi, seed=1)
    U, kept = np.zeros(alpha.shape, order="F"), alpha.copy()
    step = newton(kind, lin, hi, y_index, source, 0.0, alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert step.step(alpha, U, np.arange(N), steps_allowed(N)) == 0.0
    np.testing.assert_array_equal(alpha, kept)


@pytest.mark.parametrize("Machine", MACHINES)
def test_no_step_before_the_budget_allows_one(Machine, monkeypatch):
    kind, lin, hi, y_index, source, K = problem(Machine, 10.0, 0.0)
    alpha = random_state(kind, hi, seed=2)
    Z, _ = dual_vectors(kind, alpha, y_index, 0.0)
    U = np.asfortranarray(K @ Z)
    kept, kept_U = alpha.copy(), U.copy()
    N = len(y_index)
    step = newton(kind, lin, hi, y_index, source, 0.0, alpha)
    assert step.step(alpha, U, np.arange(N), kernel_face.STEPS_FROM * N - 1) is None
    monkeypatch.setattr(kernel_face, "WORK_SHARE", 1e-9)  # a face solve costs more than that
    assert step.step(alpha, U, np.arange(N), 10 * kernel_face.STEPS_FROM * N) is None
    np.testing.assert_array_equal(alpha, kept)
    np.testing.assert_array_equal(U, kept_U)


@pytest.mark.parametrize("Machine", MACHINES)
def test_wide_kernel_large_C_takes_a_fraction_of_the_epochs(Machine, monkeypatch):
    # Standardised iris at gamma = 0.01, C = 1000: the epochs alone crawl (8 500 to tol = 1e-4),
    # with the face steps 800 epochs end on the face's optimum (KKT violation ~5e-8).
    X, y = datasets.load("iris")
    X = StandardScaler().fit_transform(X)
    params = dict(C=1000.0, gamma=0.01, tol=1e-4, random_state=0, max_iter=-1)
    with_steps = Machine(**params).fit(X, y)
    monkeypatch.setattr(engine, "FACE_NEWTON", False)
    alone = Machine(**params).fit(X, y)
    assert with_steps.n_iter_ < alone.n_iter_ / 3
    assert with_steps.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-6)
    assert with_steps.kkt_violation_ <= 1e-4
    assert with_steps.objective_ <= alone.objective_  # the primal, nearer its minimum


@pytest.mark.parametrize("Machine", MACHINES)
def test_precomputed_and_weighted_fits_take_the_steps_too(Machine, monkeypatch):
    # A precomputed Gram matrix is the source itself; sample weights make the boxes (and CS's
    # budgets) differ by pattern.  Either way the steps end where the epochs alone end.
    X, y = datasets.load("iris")
    X = StandardScaler().fit_transform(X)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    params = dict(C=1000.0, tol=1e-6, random_state=0, max_iter=-1)
    K = rbf_kernel(X, gamma=0.01)
    fits = []
    for newton_steps in (True, False):
        monkeypatch.setattr(engine, "FACE_NEWTON", newton_steps)
        fits.append(Machine(kernel="precomputed", **params).fit(K, y, sample_weight=weights))
    with_steps, alone = fits
    assert with_steps.n_iter_ < alone.n_iter_ / 2
    assert with_steps.dual_objective_ == pytest.approx(alone.dual_objective_, rel=1e-8)
    np.testing.assert_array_equal(with_steps.predict(K), alone.predict(K))


@pytest.mark.parametrize("Machine", [InhibitorySVC, LeeLinWahbaSVC, *MACHINES])
def test_face_steps_return_to_the_optimum_from_its_face_for_every_kind(Machine, monkeypatch):
    # face_steps on the dual lin . alpha - 1/2 <Z M, K Z> of every kind (M = I - s 11^T: the
    # interior point's polish), from the optimum's free variables shrunk (everything else held),
    # returns to the optimum's value and says that it ended on its face's optimum.
    monkeypatch.setattr(engine, "FACE_NEWTON", False)
    kind, lin, hi, y_index, source, K = problem(Machine, 10.0, 0.0)
    N, L = hi.shape
    c, s = coupling(Machine, L)
    alpha, U = np.zeros(hi.shape), np.zeros((N, state_width(kind, c, L)), order="F")
    solver = DecompositionSolver(kind, c, lin, hi, y_index, tol=1e-11, max_iter=-1,
                                 shrinking=True, random_state=0)  # fmt: skip
    solver.solve_kernel(source, alpha, U)

    def value(a):
        return m_dual(kind, s, lin, K, y_index, a)

    optimum = value(alpha)
    free = (alpha > 1e-9 * hi) & (alpha < (1.0 - 1e-9) * hi)
    assert free.sum() >= 10
    shrink = np.random.default_rng(0).uniform(0.0, 0.5, size=alpha.shape) * alpha * free
    if kind == CS:  # a full budget stays full (the test above moves within it)
        shrink[alpha.sum(axis=1) >= hi.max() * (1.0 - 1e-12)] = 0.0
    moved = alpha - shrink
    assert optimum - value(moved) > 1e-6 * abs(optimum)
    U_moved = K @ pattern_apply(kind, moved, y_index)
    a, U_a, done = face_steps(kind, s, moved, free, hi, K, U_moved, lin, y_index, lambda m: True)
    assert done
    assert value(a) == pytest.approx(optimum, rel=1e-10)
    np.testing.assert_allclose(
        U_a, K @ pattern_apply(kind, a, y_index), atol=1e-9 * np.abs(U_a).max()
    )
    # a face already within `enough` of its optimum takes no solve and is done
    calls = []
    U = K @ pattern_apply(kind, alpha, y_index)
    _, _, done = face_steps(kind, s, alpha, free, hi, K, U, lin, y_index,
                            lambda m: calls.append(m) or True, enough=1e-6)  # fmt: skip
    assert done and calls == []


def coupling(Machine, L):
    """(c, s): the engine's inhibition c and M = I - s 11^T of the machine's dual."""
    machine = Machine()
    c = machine._inhibition(L)
    return c, output_shift(machine._kind, c, L)


def m_dual(kind, s, lin, K, y_index, a):
    """lin . alpha - 1/2 <Z M, K Z>, M = I - s 11^T, evaluated directly."""
    Z = pattern_apply(kind, a, y_index)
    return float(np.sum(lin * a) - 0.5 * np.sum((Z - s * Z.sum(axis=1, keepdims=True)) * (K @ Z)))


@pytest.mark.parametrize("Machine", [InhibitorySVC, LeeLinWahbaSVC, *MACHINES])
@pytest.mark.parametrize("offset", [0.0, 0.7])
def test_face_gain_is_the_change_of_the_dual(Machine, offset):
    kind, lin, hi, y_index, _, K = problem(Machine, 10.0, offset)
    _, s = coupling(Machine, hi.shape[1])
    rng = np.random.default_rng(3)
    alpha = random_state(kind, hi, seed=3)
    delta = rng.normal(size=hi.shape) * (hi > 0)
    dZ = pattern_apply(kind, delta, y_index)
    U = K @ pattern_apply(kind, alpha, y_index)
    expected = m_dual(kind, s, lin, K, y_index, alpha + delta) - m_dual(
        kind, s, lin, K, y_index, alpha
    )
    assert face_gain(delta, dZ, U, K, lin, s) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("Machine", [InhibitorySVC, LeeLinWahbaSVC])
def test_face_steps_from_a_wrong_face_stop_at_its_bounds_and_say_so(Machine):
    # Every variable called free, from the optimum shrunk: the face solve runs into the bounds of
    # the optimum's bound variables; each step gains, stays in the box, leaves `free` as it was,
    # and with one solve the steps do not claim the face's optimum.
    kind, lin, hi, y_index, source, K = problem(Machine, 10.0, 0.0)
    N, L = hi.shape
    c, s = coupling(Machine, L)
    alpha, U = np.zeros(hi.shape), np.zeros((N, state_width(kind, c, L)), order="F")
    DecompositionSolver(kind, c, lin, hi, y_index, tol=1e-11, max_iter=-1, shrinking=True,
                        random_state=0).solve_kernel(source, alpha, U)  # fmt: skip
    at_bound = (alpha <= 1e-9 * hi) | (alpha >= (1.0 - 1e-9) * hi)
    assert np.count_nonzero(at_bound & (hi > 0)) >= 10
    start = 0.5 * alpha + 0.25 * hi  # every variable strictly inside its box
    free = hi > 0
    kept = free.copy()
    U_start = K @ pattern_apply(kind, start, y_index)
    before = m_dual(kind, s, lin, K, y_index, start)
    for solves, claims in ((1, False), (kernel_face.INNER_STEPS, None)):
        a, U_a, done = face_steps(kind, s, start, free, hi, K, U_start, lin, y_index,
                                  lambda m: True, enough=1e-9, solves=solves)  # fmt: skip
        np.testing.assert_array_equal(free, kept)
        assert np.all(a >= 0.0) and np.all(a <= hi)
        assert m_dual(kind, s, lin, K, y_index, a) > before
        np.testing.assert_allclose(
            U_a, K @ pattern_apply(kind, a, y_index), atol=1e-9 * np.abs(U_a).max()
        )
        if claims is not None:
            assert done is claims
