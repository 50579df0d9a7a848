"""Newton steps on the free face (msvm.fast.face_newton) against a direct evaluation of the dual."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    WestonWatkinsSVC,
    engine,
    face_newton,
)
from msvm.fast.face_newton import FaceNewton, class_grams
from msvm.fast.patterns import CS, dual_vectors, output_shift, state_coef

MACHINES = [InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC, CrammerSingerSVC]


def dual_value(kind, c, lin, alpha, y_index, K):
    """sum lin alpha - 1/2 tr(Z^T K Z M), with K the full (offset-augmented) Gram matrix."""
    Z, B = dual_vectors(kind, alpha, y_index, c)
    return float(np.sum(lin * alpha) - 0.5 * np.sum(Z * (K @ B)))


def interior_state(Machine, seed, n=80, d=4, L=4):
    """A dual point with many free variables, off the optimum (a mid-run state)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y_index = rng.integers(0, L, size=n)
    y_index[:L] = np.arange(L)
    machine = Machine()
    kind, c = machine._kind, machine._inhibition(L)
    lin, free = machine._dual_terms(y_index, L)
    C = 0.7
    hi = C * free
    alpha = rng.uniform(0.0, 1.0, size=(n, L)) * hi * (rng.random((n, L)) < 0.7)
    if kind == CS:  # inside the budget sum_r alpha_ir <= C, some rows on it
        total = np.maximum(alpha.sum(axis=1), 1e-300)
        on_budget = rng.random(n) < 0.3
        alpha *= np.where(on_budget, C / total, np.minimum(0.9 * C / total, 1.0))[:, None]
    return X, y_index, kind, c, lin, hi, alpha


@pytest.mark.parametrize("Machine", MACHINES)
@pytest.mark.parametrize("offset", [0.0, 0.7])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("rows", ["all", "some"])
def test_step_gains_what_it_reports_and_keeps_the_weights(Machine, offset, sparse, rows):
    # Far from the optimum (a random point) the default damping's step is mostly clipped away;
    # a heavier damping makes it a sure ascent, and the bookkeeping is what is tested here.
    # "all": most patterns hold free variables and the step works on every row; "some": a
    # third of the patterns are offered, and the step works on the rows X_P.
    X, y_index, kind, c, lin, hi, alpha = interior_state(Machine, seed=3)
    L = alpha.shape[1]
    K = X @ X.T + offset
    S = state_coef(kind, alpha, y_index, c)
    Wt, w0 = np.ascontiguousarray((X.T @ S).T), offset * S.sum(axis=0)
    data = sp.csr_matrix(X) if sparse else X
    before = dual_value(kind, c, lin, alpha, y_index, K)
    damping = float(np.mean(np.diag(K)))
    n = alpha.shape[0]
    patterns = np.arange(n) if rows == "all" else np.random.default_rng(0).permutation(n)[: n // 3]
    untouched = np.setdiff1d(np.arange(n), patterns)
    alpha_untouched = alpha[untouched].copy()
    newton = FaceNewton(kind, c, lin, hi, y_index, data, offset, damping)
    gain = newton.step(alpha, patterns, Wt, w0)
    after = dual_value(kind, c, lin, alpha, y_index, K)
    np.testing.assert_array_equal(alpha[untouched], alpha_untouched)
    assert gain > 1e-6  # a point this far from the optimum: the step must find an ascent
    assert gain == pytest.approx(after - before, rel=1e-9, abs=1e-12)
    assert np.all(alpha >= 0.0) and np.all(alpha <= hi)
    if kind == CS:
        assert np.all(alpha.sum(axis=1) <= hi.max(axis=1) * (1 + 1e-12))
    S = state_coef(kind, alpha, y_index, c)
    np.testing.assert_allclose(Wt, (X.T @ S).T, atol=1e-10)
    np.testing.assert_allclose(w0, offset * S.sum(axis=0), atol=1e-10)
    assert S.shape[1] == L + (output_shift(kind, c, L) != 0.0)


@pytest.mark.parametrize("Machine", MACHINES)
def test_no_free_variable_no_step(Machine):
    X, y_index, kind, c, lin, hi, alpha = interior_state(Machine, seed=4)
    alpha = np.where(alpha > 0, hi, 0.0)  # every variable at a bound
    if kind == CS:
        alpha[:] = 0.0
    before = alpha.copy()
    S = state_coef(kind, alpha, y_index, c)
    Wt, w0 = np.ascontiguousarray((X.T @ S).T), np.zeros(S.shape[1])
    everyone = np.arange(alpha.shape[0])
    step = FaceNewton(kind, c, lin, hi, y_index, X, 0.0, 1.0).step(alpha, everyone, Wt, w0)
    assert step == 0.0
    np.testing.assert_array_equal(alpha, before)


@pytest.mark.parametrize("Machine", MACHINES)
def test_linear_path_with_face_steps_reaches_the_kernel_path_optimum(Machine, monkeypatch):
    """The explicit-weights path (with face steps, some of which must gain) and the kernel path
    (without) solve the same dual: equal objectives at a tight tolerance."""
    gains = []

    class Counted(FaceNewton):
        def step(self, *args):
            gains.append(super().step(*args))
            return gains[-1]

    monkeypatch.setattr(engine, "FaceNewton", Counted)
    monkeypatch.setattr(engine, "PROXIMAL_START", False)  # else the face steps find it solved
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = np.argmax(X[:, :4] + 0.8 * rng.normal(size=(300, 4)), axis=1)  # noisy: many margin errors
    params = dict(C=0.5, tol=1e-7, max_iter=100_000, random_state=0)
    linear = Machine(kernel="linear", **params).fit(X, y)
    kernel = Machine(kernel="precomputed", **params).fit(X @ X.T, y)
    assert max(gains) > 0.0
    assert linear.objective_ == pytest.approx(kernel.objective_, rel=1e-6)
    assert linear.dual_objective_ == pytest.approx(kernel.dual_objective_, rel=1e-6)


@pytest.mark.parametrize("Machine", MACHINES)
@pytest.mark.parametrize("seed", [0, 4, 6])
def test_dense_and_csr_paths_reach_the_same_optimum(Machine, seed):
    """With face steps the dense (BLAS) and CSR (sparse products) paths part by rounding, and the
    dual is not strictly concave (rank-64 kernel, singular M), so their dual variables need not
    agree; each side's dual objective must lie below the other side's primal (weak duality), so
    the two agree to within their duality gaps."""
    X, y = datasets.load("digits", n_samples=200)
    params = dict(kernel="linear", C=0.1, tol=1e-6, max_iter=100_000, random_state=seed)
    dense = Machine(**params).fit(X, y)
    sparse = Machine(**params).fit(sp.csr_matrix(X), y)
    slack = 1e-12 * abs(dense.objective_)
    assert sparse.dual_objective_ <= dense.objective_ + slack
    assert dense.dual_objective_ <= sparse.objective_ + slack
    gap = max(dense.objective_ - dense.dual_objective_, sparse.objective_ - sparse.dual_objective_)
    assert abs(dense.dual_objective_ - sparse.dual_objective_) <= gap
    assert gap <= 1e-4 * abs(dense.objective_)


@pytest.mark.parametrize("shift", [0.0, 0.1, 0.25])
@pytest.mark.parametrize("offset", [0.0, 0.7])
@pytest.mark.parametrize("sparse", [False, True])
def test_weight_space_direction_solves_the_damped_face_system(shift, offset, sparse):
    """Woodbury through the d x L weights gives (Q_FF + lambda I)^{-1} g, Q_FF assembled entry by
    entry: Q_(i,j),(k,l) = (K_ik + offset) s_ij M_jl s_kl on the free variables."""
    rng = np.random.default_rng(0)
    n, d, L = 40, 3, 4
    X = rng.normal(size=(n, d))
    signs = np.where(rng.random((n, L)) < 0.3, 1.0, -1.0)
    mask = rng.random((n, L)) < 0.5
    g = rng.normal(size=(n, L)) * mask
    K, M = X @ X.T + offset, np.eye(L) - shift
    free = np.argwhere(mask)
    Q = np.array(
        [[K[i, k] * signs[i, j] * M[j, l] * signs[k, l] for k, l in free] for i, j in free]
    )
    expected = np.linalg.solve(Q + 0.3 * np.eye(len(free)), g[mask])
    data = sp.csr_matrix(X) if sparse else X
    grams = class_grams(data, *np.nonzero(mask), L, offset)
    direction = face_newton._diagonal_face_direction(
        g, data, signs, mask, shift, 0.3, offset, grams
    )
    np.testing.assert_allclose(direction[mask], expected, atol=1e-10)
    assert np.all(direction[~mask] == 0.0)


@pytest.mark.parametrize("offset", [0.0, 0.7])
@pytest.mark.parametrize("sparse", [False, True])
def test_class_grams_follow_the_face_by_its_changes(offset, sparse, monkeypatch):
    """Updated by the rows that entered or left the face (a small change) or afresh (a large
    one), G_j is sum over the free (i, j) of [x_i, sqrt(offset)] [x_i, sqrt(offset)]^T."""
    monkeypatch.setattr(face_newton, "GRAM_CHUNK", 7)  # several chunks per class
    rng = np.random.default_rng(1)
    n, d, L = 60, 3, 4
    X = rng.normal(size=(n, d))
    data = sp.csr_matrix(X) if sparse else X
    rows = np.hstack([X, np.full((n, 1), np.sqrt(offset))]) if offset else X
    newton = FaceNewton(0, 0.0, np.zeros((n, L)), np.ones((n, L)), np.zeros(n, int), data,
                        offset, 1.0)  # fmt: skip
    free = rng.random((n, L)) < 0.5
    for flip in (0.5, 0.05, 0.05, "rows leave", 0.9):  # afresh, changes, changes, changes, afresh
        if flip == "rows leave":
            free[:20] = False
        else:
            free = free ^ (rng.random((n, L)) < flip)
        rows_free = np.flatnonzero(free.any(axis=1))
        newton.update_grams(rows_free, free[rows_free])
        expected = [rows[free[:, j]].T @ rows[free[:, j]] for j in range(L)]
        np.testing.assert_allclose(newton.grams, expected, atol=1e-12)


def test_damping_follows_the_step_length():
    """Centred on the length that won; raised after a step without gain."""
    centre, adapt = face_newton.ADAPT_CENTRE, face_newton.next_damping
    assert adapt(2.0, centre) == 2.0
    assert adapt(2.0, 2 * centre) < 2.0 < adapt(2.0, centre / 2)
    assert adapt(2.0, 0.0) == 2.0 * face_newton.ADAPT_FAIL


def test_a_binding_budget_keeps_its_move_whatever_the_rounding():
    """A Crammer-Singer row on its budget (sum alpha = C) whose direction sums to 0 only up to
    rounding (+2.5e-16 or -2.2e-16, the directions of the same state in the two modes below):
    the move is the direction itself either way.  (Scaling the whole move back onto the budget
    dropped it when the residue was positive; found in review.)"""
    a = np.array([[0.16567590186375158, 0.1323885336398295, 0.0, 0.40193556449641893]])
    hi, budget, L = np.array([[0.7, 0.7, 0.0, 0.7]]), np.array([0.7]), 4
    for d in (
        [0.05958819477274529, 0.0952421933235451, 0.0, -0.15483038809629013],
        [0.05958819477274525, 0.09524219332354504, 0.0, -0.15483038809629052],
    ):
        d = np.array([d])
        moves, dZ = np.empty((3, 1, L)), np.empty((1, 3 * L))
        zeros = np.zeros((1, L))
        lengths = np.array([1.0, 0.5, 0.25])
        face_newton.line_moves(CS, a, d, hi, np.array([2]), zeros, zeros, budget, lengths, moves,
                               dZ)  # fmt: skip
        for k, t in enumerate(lengths):
            np.testing.assert_allclose(moves[k], t * d, atol=1e-15)
            assert (a + moves[k]).sum() <= 0.7 + 1e-15


@pytest.mark.parametrize("Machine", MACHINES)
@pytest.mark.parametrize("sparse", [False, True])
def test_every_row_and_rows_of_a_subset_take_the_same_steps(Machine, sparse):
    """The same state stepped on every row (most hold free variables) and as a subset (padded
    with as many rows at alpha = 0 plus one, so that fewer than half hold free variables): equal
    dual variables, weights and gains over three steps."""
    X, y_index, kind, c, lin, hi, alpha = interior_state(Machine, seed=5)
    n, L = alpha.shape
    rng = np.random.default_rng(5)
    X_pad = np.vstack([X, rng.normal(size=(n + 1, X.shape[1]))])
    y_pad = np.concatenate([y_index, rng.integers(0, L, n + 1)])
    lin_pad, free_pad = Machine()._dual_terms(y_pad, L)
    hi_pad = np.vstack([hi, 0.7 * free_pad[n:]])
    order = rng.permutation(n)
    results = []
    for rows, ys, lins, his, patterns in (
        (X, y_index, lin, hi, order),
        (X_pad, y_pad, lin_pad, hi_pad, np.concatenate([order, n + np.arange(n + 1)])),
    ):
        a = np.vstack([alpha, np.zeros((rows.shape[0] - n, L))])
        S = state_coef(kind, a, ys, c)
        Wt, w0 = np.ascontiguousarray((rows.T @ S).T), 0.7 * S.sum(axis=0)
        data = sp.csr_matrix(rows) if sparse else rows
        newton = FaceNewton(kind, c, lins, his, ys, data, 0.7, 2.0)
        gains = [newton.step(a, patterns, Wt, w0) for _ in range(3)]
        results.append((a[:n], Wt, w0, gains))
    (a1, W1, z1, g1), (a2, W2, z2, g2) = results
    assert max(g1) > 0.0
    np.testing.assert_allclose(a1, a2, atol=1e-9)
    np.testing.assert_allclose(W1, W2, atol=1e-9)
    np.testing.assert_allclose(z1, z2, atol=1e-9)
    np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-12)


def test_damping_never_falls_below_its_floor():
    """However often the longest length wins, lambda stays above DAMPING_FLOOR times its start
    (at 0 the block solve is singular where a class has no free variable)."""
    X, y_index, kind, c, lin, hi, alpha = interior_state(InhibitorySVC, seed=3)
    S = state_coef(kind, alpha, y_index, c)
    Wt, w0 = np.ascontiguousarray((X.T @ S).T), np.zeros(S.shape[1])
    newton = FaceNewton(kind, c, lin, hi, y_index, X, 0.0, 1.0)
    newton.damping = 1e-30
    newton.step(alpha, np.arange(alpha.shape[0]), Wt, w0)
    assert newton.damping >= face_newton.DAMPING_FLOOR


def test_steps_fixed_costs_stay_within_a_share_of_the_epochs_work(monkeypatch):
    """A tiny problem at a huge effective C (iris x 1e5 with the linear kernel, C = 1e10) whose
    epochs cost microseconds: the steps taken, at STEP_OVERHEAD_NS each, stay within
    ALLOWANCE_NS or WORK_SHARE of the epochs' modelled work.  Before the bound a step came every
    few epochs (one per 3.7 here), and such fits ran for minutes."""
    taken = []

    class Counted(FaceNewton):
        def step(self, *args):
            taken.append(1)
            return super().step(*args)

    monkeypatch.setattr(engine, "FaceNewton", Counted)
    X, y = datasets.load("iris")
    machine = LeeLinWahbaSVC(kernel="linear", max_iter=12_000, random_state=0)
    with pytest.warns(ConvergenceWarning):
        machine.fit(X * 1e5, y)
    step_ns = engine.LINEAR_STEP_NS[0] + engine.LINEAR_STEP_NS[1] * X.shape[1] * 3
    work = face_newton.WORK_SHARE * machine.n_steps_ * step_ns
    allowed = max(face_newton.ALLOWANCE_NS, work) / face_newton.STEP_OVERHEAD_NS
    assert 0 < len(taken) <= allowed  # (the code before the bound: 3 276 steps)


def test_conjugate_gradients_stop_at_the_last_finite_iterate():
    """An operator whose products overflow after the first: the first iterate is returned."""
    calls = []

    def apply(p):
        calls.append(1)
        return p * np.array([2.0, 6.0]) * (1.0 if len(calls) == 1 else 1e200) * 1e200

    b = np.array([1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        x = face_newton._conjugate_gradients(apply, b)
    first = b * float(b @ b) / float(b @ (b * np.array([2.0, 6.0]) * 1e200))
    np.testing.assert_array_equal(x, first)
