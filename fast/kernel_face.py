"""Newton steps on the free face of the Weston-Watkins and Crammer-Singer kernel duals.

With a wide kernel and a large C (glass, vowel, vehicle at gamma = scale / 10, C = 1000) the
kernel path's coordinate descent crawls: on glass Weston-Watkins took 16 000 epochs of about 20
pattern steps, Crammer-Singer 25 000, where SVC needs milliseconds.  The dual is a quadratic on
the face of the box where it sits, and there a Newton step solves what the epochs approach
slowly.  With F the free variables (0 < alpha < hi) of the active patterns P and every other
variable held, the step d solves

    (Q_FF + eps I) d = g_F,      Q[(i, r), (j, s)] = (K_ij + offset) (e_y_i - e_r) . (e_y_j - e_s),

g = lin - S^T K Z the dual gradient (``msvm.fast.patterns``: S_i = e_y 1^T - I, M = I), eps a
relative RIDGE that keeps the solve defined where K is numerically singular.  For Crammer-Singer
a budget sum_r alpha_ir <= C that binds is kept: d moves in sum_{r free} d_ir = 0 there (one
multiplier per binding pattern in the linear system).  From alpha the step goes to whichever
gains more of the full step clip(alpha + d) (its budgets scaled back onto C:
``face_newton.line_moves``) and the step along d up to the first bound it meets, that
variable put exactly on its bound (a budget: exactly full); the variables then at a bound leave
the face and the step is repeated, up to INNER_STEPS times, until a full step stays inside the
box -- the optimum of the face (a primal active-set method on the face, Nocedal and Wright,
Numerical Optimization, 2nd ed., section 16.5).  The gains are exact:

    D(alpha + Delta) - D(alpha) = lin . Delta - <dZ, U_P> - 1/2 <dZ, (K_PP + offset) dZ>,

dZ = S Delta, U = (K + offset) Z the engine's outputs.  Measured on glass (149 training points,
6 classes, standardised; gamma = scale / 10, C = 1000): Weston-Watkins 15 600 -> 3 400 epochs,
0.70 -> 0.31 s, Crammer-Singer 24 600 -> 3 800 epochs, 0.99 -> 0.40 s (benchmarks/NOTES.md,
stop 26).

The steps are charged to a work budget so that they cost at most a fraction WORK_SHARE of the
epochs run so far, and none is taken before the epochs have made STEPS_FROM pattern steps per
pattern: a run that converges in a few hundred epochs with most variables free would otherwise
pay for solves of hundreds of variables that it does not need (glass, gamma = 10 scale: 0.010 ->
0.028 s without a budget).  The costs are modelled, not timed (a fit's path must not depend on
the machine's load): ``epoch_work``, ``solve_cost`` and APPLY_COST, fitted on glass, vowel,
vehicle and digits.

The inhibitory and Lee-Lin-Wahba machines do not take these steps: their faces are large and
singular (the inhibitory pattern Hessian K_ii (I - y_i y_i^T / L) at mu = 1/L), the Newton
directions run off along the flat directions to the first bound, one variable per solve, and on
glass every variant tried (ridge, pseudo-inverse, Levenberg-Marquardt damping, a projected
search along the direction) was 1.2-4.9x slower than the epochs alone (benchmarks/NOTES.md,
stops 26 and 27).  Their Hessian is a Kronecker product, and they switch to an interior-point
method instead (``msvm.fast.interior_point``).  Its snapped point sits on nearly the right face,
and from there the same steps (``face_steps``, for any M = I - s 11^T) polish it (stop 54).
"""

from __future__ import annotations

import numpy as np

from msvm.fast.face_newton import full_budgets, line_moves
from msvm.fast.kernels import FLAT, block_rows, is_lru, kernel_block
from msvm.fast.patterns import CS, WW, activate_all, pattern_apply, pattern_transpose
from msvm.fast.threads import blas_threads

RIDGE = 1e-10  # eps / the mean diagonal of Q_FF
INNER_STEPS = 20  # face solves per Newton step at most
FULL_STEP = np.ones(1)  # the line search's one length (``line_moves``)
# Free variables at most: a larger face's solve costs 0.1-0.3 s, and on MNIST-4000 (faces of
# ~1 900 at gamma = scale / 10) the one or two a run could afford gained nothing the epochs did
# not (1.1-1.2x slower); on glass, vowel, vehicle and digits the faces held at most ~450.
MAX_FREE = 1000
WORK_SHARE = 0.5  # the steps' work at most this fraction of the epochs' so far
STEPS_FROM = 20  # ... and no step before the epochs took this many pattern steps per pattern
# The work model, in ns (fitted on glass, vowel, vehicle and digits, stop 26): an epoch's pattern
# step STEP_COST[0] + STEP_COST[1] N L; a face solve with m free variables SOLVE_COST[0] +
# SOLVE_COST[1] m^2 + SOLVE_COST[2] m^3; bringing the outputs up to date APPLY_COST |P| N L.
# The inhibitory and Lee-Lin-Wahba pattern steps solve L coupled variables and cost more:
# COUPLED_STEP_COST, fitted on the epochs alone on glass, vowel, vehicle, yeast, segment and
# digits (N L = 894-12 570; C = 1000, gamma = scale / 10 and C = 10, gamma = scale; stop 32:
# within 0.86-1.26 of the times, where STEP_COST was 0.6-0.9).
# Since stop 45 (the steps compiled without reference counts) the epochs take 0.3-0.75 of this
# model's work; refitted on the same sets (STEP_COST (930, 0.056), COUPLED_STEP_COST (970, 0.10),
# within 0.77-1.23 of the times) the switch and the face steps come later, and the C = 1000
# cells of the coupled machines took 1.2-2.0x the time (WW and CS: medians 0.73-1.08x, the worst
# cells 1.4x; twice the old model, an earlier switch, lost up to 3.5x at C = 100).  So these
# constants are kept as the thresholds that balance the methods (benchmarks/NOTES.md, stop 45).
STEP_COST = (2200.0, 0.13)
COUPLED_STEP_COST = (1800.0, 0.34)
SOLVE_COST = (3.5e5, 11.0, 0.029)
APPLY_COST = 1.2


def applies(kind: int) -> bool:
    """Whether the kernel path takes Newton steps on the free face for this kind of dual."""
    return kind in (WW, CS)


def epoch_work(steps: int, N: int, L: int, kind: int) -> float:
    """The modelled work of ``steps`` pattern steps of the kernel epochs of a ``kind`` of dual
    (ns)."""
    fixed, per_output = STEP_COST if kind in (WW, CS) else COUPLED_STEP_COST
    return steps * (fixed + per_output * N * L)


def solve_cost(m: int) -> float:
    """The modelled work of one face solve with m free variables (ns)."""
    return SOLVE_COST[0] + m * m * (SOLVE_COST[1] + m * SOLVE_COST[2])


class KernelFaceNewton:
    """Newton steps on the free face of one WW or CS kernel dual (see the module docstring).

    Parameters: the dual (``kind``, ``lin``, ``hi``, ``y_index``), the column ``source`` of the
    engine (``msvm.fast.kernels``), the ``offset`` of K + offset 11^T and the dual state tuple
    whose variable lists are reset after a step (``engine.DecompositionSolver._dual``).
    """

    def __init__(self, kind, lin, hi, y_index, source, offset, dual):
        self.kind, self.lin, self.hi, self.y_index = kind, lin, hi, y_index
        self.source, self.offset, self.dual = source, offset, dual
        self.spent = 0.0  # modelled work of the steps so far (ns)

    def step(self, alpha, U, patterns, steps) -> float | None:
        """One Newton step on the free face of ``patterns`` (the engine's active ones); updates
        ``alpha`` and the outputs ``U`` and returns the dual gain: 0 if no step gained, None if
        the epochs' ``steps`` so far do not allow one yet (fewer than STEPS_FROM per pattern, or
        a step's work would exceed WORK_SHARE of theirs)."""
        if steps < STEPS_FROM * alpha.shape[0]:
            return None
        work = epoch_work(steps, *alpha.shape, self.kind)
        P = np.sort(patterns)
        free = (alpha[P] > 0.0) & (alpha[P] < self.hi[P])
        m = int(np.count_nonzero(free))
        if m == 0 or m > MAX_FREE:
            return 0.0
        holding = free.any(axis=1)  # only these patterns move: K_PP is over them alone
        P, free = P[holding], free[holding]
        a0, hi = alpha[P], self.hi[P]
        apply = APPLY_COST * P.size * alpha.size
        if self.spent + apply + solve_cost(m) > WORK_SHARE * work:
            return None
        self.spent += apply
        K_PP = self._block(P, P)
        with blas_threads(1):  # small products: OpenBLAS's threads wait for a busy core
            a, _, _ = face_steps(self.kind, 0.0, a0.copy(), free, hi, K_PP, U[P], self.lin[P],
                                 self.y_index[P], lambda m: self._afford(m, work))  # fmt: skip
            dZ = pattern_apply(self.kind, a - a0, self.y_index[P])
            if not np.any(dZ):
                return 0.0
            gain = face_gain(a - a0, dZ, U[P], K_PP, self.lin[P], 0.0)
            alpha[P] = a
            add_columns(self.source, self.offset, U, P, dZ)
        activate_all(self.dual[1], self.dual[5], self.dual[6])  # the epochs' lists: stale at P
        return gain

    def _afford(self, m, work) -> bool:
        """Whether a face solve of m variables fits in WORK_SHARE of the epochs' ``work`` (then
        charged to the steps)."""
        cost = solve_cost(m)
        if self.spent + cost > WORK_SHARE * work:
            return False
        self.spent += cost
        return True

    def _block(self, rows, cols):
        """(K + offset)[rows, cols]."""
        return offset_block(self.source, self.offset, rows, cols)


def face_steps(kind, s, a, free, hi, K_PP, U_P, lin, y, afford, enough=0.0, solves=INNER_STEPS):
    """The active-set iterations on the face ``free`` from ``a`` (see the module docstring), for
    any dual lin . alpha - 1/2 <Z M, (K + offset) Z>, Z = S alpha, M = I - s 11^T (``s`` = 0 for
    WW and CS; the interior point's polish, ``interior_point.InteriorPointSwitch``, takes them
    for every kind): with v = (i, r) and e_v = S_i e_r, Q_vw = (K_PP)_ij e_v^T M e_w and
    g = lin - S^T (U_P M).  ``afford(m)`` says whether a solve of m variables (and
    multipliers) may be taken (and charges it); at most ``solves`` solves.  Returns the new
    values and outputs U_P + (K_PP) S (a' - a) of the patterns and whether they ended on the
    optimum of their face: with ``enough`` > 0, where the face's KKT violation is at most
    ``enough``; with ``enough`` = 0 (the epochs' face steps), where a full step stayed inside the
    box (its violation then the ridge's, ~RIDGE curvature |d|).  ``free`` is not changed."""
    L = a.shape[1]
    budget = hi.max(axis=1)
    U_P, free = U_P.copy(), free.copy()
    for solve in range(solves + 1):  # (the last pass only checks the face's violation)
        rows, cols = np.nonzero(free)
        full = full_budgets(kind, a, budget)
        bound = np.unique(rows[full[rows]])  # the full budgets among the face's patterns
        if rows.size == 0:
            return a, U_P, True
        UM = U_P - s * U_P.sum(axis=1, keepdims=True)
        g = (lin - pattern_transpose(kind, UM, y))[rows, cols]
        if _face_violation(g, rows, bound) <= enough:
            return a, U_P, True
        if solve == solves or not afford(rows.size + bound.size):
            break
        E = pattern_apply(kind, np.eye(L)[cols], y[rows])  # row v: e_v = S_i e_r, v = (i, r)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # (K ~ 1e307)
            Q = K_PP[np.ix_(rows, rows)] * (E @ (E - s * E.sum(axis=1, keepdims=True)).T)
            curvature = np.trace(Q) / rows.size
            if not curvature > FLAT:  # a flat face: the box decides, the epochs' steps take it
                break
            d = _face_direction(Q, g, RIDGE * curvature, rows, bound)
        if not np.isfinite(d).all():  # (a face nearly flat: curvature ~1e-300)
            break
        D = np.zeros_like(a)
        D[rows, cols] = d
        # the clipped full step (CS: its increases scaled back onto a budget they overfill)
        moves, dZ = np.empty((1, *a.shape)), np.empty(a.shape)
        linear = line_moves(kind, a, D, hi, y, lin, UM, budget, FULL_STEP, moves, dZ)[0]
        best, best_dZ = linear - 0.5 * _m_product(dZ, K_PP @ dZ, s), dZ
        best_a = np.clip(a + moves[0], 0.0, hi)  # (a + (hi - a) can round above hi)
        stopped = _to_first_bound(a, D, hi, budget, kind, full)
        if stopped is not None:
            dZ = pattern_apply(kind, stopped - a, y)
            gain = face_gain(stopped - a, dZ, U_P, K_PP, lin, s)
            if gain > best:
                best, best_a, best_dZ = gain, stopped, dZ
        if not best > 0.0:
            break
        a = best_a
        U_P += K_PP @ best_dZ
        at_bound = free & ((a <= 0.0) | (a >= hi))
        inside = not (at_bound.any() or np.any(full_budgets(kind, a, budget) & ~full))
        if inside and enough <= 0.0:
            return a, U_P, True  # inside the box: the optimum of the face
        # (inside with enough > 0: the next pass checks the face's violation, which the ridge
        # leaves at ~RIDGE curvature |d|, and a further solve refines it)
        free &= ~at_bound
    return a, U_P, False


def _face_violation(g, rows, bound):
    """The largest KKT violation on the face: |g_v| of its free variables, where a pattern's
    budget is full (CS, ``bound``) their deviation from its own mean (the budget's multiplier
    moves them all alike)."""
    if bound.size:
        full = np.isin(rows, bound)
        n = rows.max() + 1
        mean = np.bincount(rows[full], g[full], n) / np.maximum(np.bincount(rows[full], None, n), 1)
        g = np.where(full, g - mean[rows], g)
    return float(np.abs(g).max())


def face_gain(delta, dZ, U_P, K_PP, lin, s):
    """D(alpha + delta) - D(alpha) = lin . delta - <dZ M, U_P> - 1/2 <dZ M, (K_PP) dZ> for the
    patterns' outputs U_P = (K + offset) Z and K_PP + offset (M = I - s 11^T)."""
    return float(np.vdot(lin, delta) - _m_product(dZ, U_P, s) - 0.5 * _m_product(dZ, K_PP @ dZ, s))


def _m_product(A, B, s):
    """<A M, B> for M = I - s 11^T."""
    return float(np.vdot(A, B) - s * np.vdot(A.sum(axis=1), B.sum(axis=1)))


def add_columns(source, offset, U, P, dZ):
    """U += (K + offset)[:, P] dZ, a block of rows at a time within the column cache's memory
    (call it on one BLAS thread: the same result whatever a fit's n_jobs)."""
    N = U.shape[0]
    if not is_lru(source):
        U += source[7][P].T @ dZ + offset * dZ.sum(axis=0)
        return
    step = block_rows(P.size, source[7].nbytes)
    for start in range(0, N, step):
        block = np.arange(start, min(N, start + step))
        U[block] += offset_block(source, offset, block, P) @ dZ


def offset_block(source, offset, rows=None, cols=None):
    """(K + offset)[rows, cols] from the engine's column ``source``; ``rows`` None: every row (and
    then, for a source holding the whole Gram matrix and no offset, that matrix itself, not a
    copy), ``cols`` None: every column (a whole Gram matrix's rows read as rows)."""
    everything = np.arange(source[8].size)
    if rows is None:
        rows = cols = everything
        if not is_lru(source) and offset == 0.0:
            return source[7]
    if is_lru(source):
        K = kernel_block(source, rows, everything if cols is None else cols)
    else:
        K = source[7][rows] if cols is None else source[7][np.ix_(rows, cols)]
    return K + offset if offset != 0.0 else K


def _face_direction(Q, g, ridge, rows, bound):
    """d solving (Q + ridge I) d = g, with sum_{r free} d_ir = 0 exactly for the patterns i in
    ``bound`` (full budgets; a multiplier each: the saddle-point system is regular, as Q + ridge I
    is positive definite and each bound pattern holds a free variable).  (With -ridge on the
    multipliers' diagonal instead, sum_r d_ir = ridge times the multiplier, positive where the
    budget binds: a step to the first bound overfilled it by up to 1e-8 relative.)"""
    m = g.size
    if bound.size == 0:
        return np.linalg.solve(Q + ridge * np.eye(m), g)
    A = (rows[None, :] == bound[:, None]).astype(float)
    system = np.block([[Q + ridge * np.eye(m), A.T], [A, np.zeros((bound.size, bound.size))]])
    return np.linalg.solve(system, np.concatenate([g, np.zeros(bound.size)]))[:m]


def _to_first_bound(a, D, hi, budget, kind, full):
    """a + t D for the largest t <= 1 that stays in the box (and, for CS, within the budgets
    that are not full), the variable that stops it put exactly on its bound (its budget exactly
    full); None when the full step stays inside (the clipped full step is then the same)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        limits = np.where(D > 0.0, (hi - a) / D, np.where(D < 0.0, -a / D, np.inf))
    i, r = np.unravel_index(np.argmin(limits), a.shape)
    t, stop = limits[i, r], ("box", i, r)
    if kind == CS:
        rise = D.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where((rise > 0.0) & ~full, (budget - a.sum(axis=1)) / rise, np.inf)
        k = int(np.argmin(room))
        if room[k] < t:
            t, stop = room[k], ("budget", k, 0)
    if not t < 1.0:
        return None
    new = np.clip(a + max(t, 0.0) * D, 0.0, hi)
    kind_of_stop, i, r = stop
    if kind_of_stop == "box":
        new[i, r] = hi[i, r] if D[i, r] > 0.0 else 0.0
    else:  # the moved variables of pattern i scaled so that its budget is exactly full
        moved = D[i] != 0.0
        excess = new[i].sum() - budget[i]
        share = D[i, moved] / D[i, moved].sum()
        new[i, moved] = np.clip(new[i, moved] - excess * share, 0.0, hi[i, moved])
    return new
