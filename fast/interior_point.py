"""A primal-dual interior-point method for the inhibitory, Lee-Lin-Wahba, Weston-Watkins and
Crammer-Singer kernel duals.

The inhibitory and Lee-Lin-Wahba duals (ISVM dual 6.1 at fixed mu; ISVM Table 1) are, in the
engine's terms (``msvm.fast.patterns``),

    maximise lin . alpha - 1/2 <Z M, (K + offset) Z>,   Z = S alpha,   0 <= alpha <= hi,

with S_i = diag(sigma_i) a sign per variable (inhibitory: y_ij; Lee-Lin-Wahba: -1) and
M = I - s 11^T (inhibitory: s = c = mu (2 - mu L), so s = 1/L at mu = 1/L; Lee-Lin-Wahba: 1/L).
In z = S alpha the Hessian is the Kronecker product K (x) M.  With a wide kernel and a large C
their solutions hold hundreds of free variables on a face that K makes nearly singular, and
coordinate descent crawls there (glass, gamma = scale / 10, C = 1000: 6 600 epochs for the
inhibitory machine, 7 400 for Lee-Lin-Wahba; benchmarks/NOTES.md, stops 14, 26 and 27); Newton
steps on the free face run off along its flat directions, one bound per solve.  An interior
point does not guess the face: Mehrotra's predictor-corrector (Nocedal and Wright, Numerical
Optimization, 2nd ed., Algorithm 16.4, here for bounds 0 <= alpha <= hi, one step length for the
primal and the dual variables) reaches the optimum in 12-21 Newton steps on every problem tried.

Each step solves (K (x) M + D) dz = r, D > 0 diagonal (the barrier's curvature in alpha,
the same in z as S^2 = I).  Class j's block row reads (K + D_j) dz_j - s K v = r_j with
v = sum_j dz_j, so dz_j = (K + D_j)^-1 (r_j + s K v) = a_j + s (v - G_j v) with
a_j = (K + D_j)^-1 r_j and G_j = (K + D_j)^-1 D_j, and summing over j,

    ((1 - s L) I + s G) v = sum_j a_j,     G = sum_j G_j:

L Cholesky factorisations of N x N and one N x N LU per step, O(L N^3), instead of one of
N L x N L, O(L^3 N^3).  The same factors serve the predictor and the corrector.  Variables
fixed at 0 (hi = 0: Lee-Lin-Wahba's own class, zero sample weights) stay out of the
complementarity conditions and get a curvature FIXED times the kernel's, so dz = 0 there.

Weston-Watkins and Crammer-Singer (S_i = e_y 1^T - I, M = I; ISVM Table 1, Lecture's Sum- and
Max-SVM) are solved in their sum form (``sum_form``): with w_ir = alpha_ir for r != y_i and
w_iy = sum_r alpha_ir, Z = sigma w with sigma_ir = +1 at r = y_i and -1 elsewhere, so the
Hessian in z = sigma w is K (x) I, and the price is one linear constraint per pattern,
sum_r Z_ir = 0, with bounds 0 <= w_ir <= hi_ir and 0 <= w_iy <= budget_i (Crammer-Singer's budget
C, ISVM F.3-F.4 and MProt 10-11, becomes a bound on one variable; for Weston-Watkins the bound
sum_r hi_ir is implied, and its barrier keeps every K + D_j below definite).  With the constraints'
multipliers lam the Newton system is (K + D_j) dz_j + dlam = r_j for every class j and
sum_j dz_j = -p (p: the constraints' residual), so dz_j = (K + D_j)^-1 (r_j - dlam) and

    (sum_j (K + D_j)^-1) dlam = sum_j (K + D_j)^-1 r_j + p:

the same L factorisations and one N x N solve.  The start meets the constraints
(``_sum_zero_start``); a variable alpha_ir's multiplier at 0 is then its own plus that of its
pattern's sum at 0.

The method is an accelerator of the engine, never its answer: ``InteriorPointSwitch`` runs it on
the engine's active patterns, the patterns shrinking has set aside held (their outputs enter the
linear term; with ``fit_intercept``, within each round of the augmented Lagrangian; on a column
cache, within a compact phase too), when the epochs' modelled work since its last run reaches
the method's own modelled cost for that many patterns (so the runs never cost more than the
epochs before them) and the epochs do not look about to end: their remaining work, extrapolated
from how fast their largest KKT violation fell over the second half of their work
(``epochs_left``), is at least the method's cost (where the method ran near a run's end it cost
up to 1.7x the epochs alone: glass, C = 100, gamma = scale / 10).  The active set is smaller than
N, often by far (segment, gamma = scale / 10, C = 1000: 920 and then 559 of 1 617 patterns), and
the cost falls with its cube, so a run is due sooner and fits in less memory: on the whole
problem Lee-Lin-Wahba's run there needed 314 MB, over ``cache_size``'s 200, and the epochs
spent the 10^7-step budget; on the active patterns it ran twice and the fit took 12 s, not 38.
Each run moves every variable whose multiplier shows it at a bound onto that bound, and hands
the point back to the epochs, which check the KKT conditions to ``tol`` over every pattern as
for any other start (on glass, vowel and vehicle they met tol = 1e-3 in the next pass, with
0-23 pattern steps: the snapped point's KKT violation was 3e-6 to 3e-5); where a held pattern
violates them, the epochs go on and a later run may follow.  A run that finds a Newton system
singular (an indefinite kernel) ends the runs.

For the Kronecker duals the snapped point is then polished on its face (``_polished``): the snap
moves each variable its multiplier shows at a bound by up to gap / multiplier, which shifts the
other variables' gradients by as much (a KKT violation of ~1e-4 after a run that met its own
tests), and on a wide kernel's nearly singular face the epochs closed that slowly.  With the
face the snap chose, ``kernel_face.face_steps`` solves the dual on it exactly (a primal
active-set method; the ridge of ``kernel_face.RIDGE`` keeps a singular face's solve defined), and
its point is taken only where those solves end on the face's optimum.  At tol = 1e-6 (where the
snap's error shows) it cut the inhibitory and Lee-Lin-Wahba fits of vehicle at C = 1000, gamma =
scale / 10, from 32 801 and 77 301 epochs to 5 002 and 2 742 (4.7 and 8.3 s to 1.1 and 1.6 s),
and 72 cells on glass, E. coli, vehicle and vowel from 41.5 to 27.1 s (their median times
summed; 260.9 to 104.8 s with a bias); a polish that does not end there is lost work (up to
1.59x in a cell).  At the default tol those cells took 1.01x the time (benchmarks/NOTES.md,
stop 54).
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
import scipy.linalg as sl
from scipy.linalg import lapack

from msvm.fast.face_newton import line_moves
from msvm.fast.kernel_face import (
    FULL_STEP,
    add_columns,
    epoch_work,
    face_steps,
    offset_block,
    solve_cost,
)
from msvm.fast.patterns import CS, LLW, SIGN, WW, activate_all, output_shift, pattern_apply
from msvm.fast.threads import blas_threads

MAX_ITER = 50  # Newton steps at most; a run not converged by then offers its last iterate
GAP = 1e-11  # stop when the mean complementarity gap is below GAP (1 + |objective|) / n ...
RESIDUAL = 1e-7  # ... and the dual residual below RESIDUAL (1 + max |lin| + max |Q alpha|)
RIDGE = 1e-13  # added to K's diagonal, relative to its mean (K is often singular to rounding)
# Stop after STALL steps in a row in which the residual grew, and return the iterate whose largest
# ratio of a stopping test to its tolerance was least: near the optimum the barrier's curvatures
# spread over 30 decades and rounding takes over (segment, gamma = scale, C = 1000, 810 active
# patterns: gap 3e-9 and residual 1e-5 of 1e-4 at step 21, then the residual rose to 1e+1 while
# the gap fell, and the other 29 of the 50 steps were lost).
STALL = 3
# The dual residual at most TOL_SHARE times the engine's tol as well, where the relative test
# allows more: on iris times 1 000 as a linear Gram matrix (C = 1) a switch's run, the other
# patterns held, has |lin| ~ 1e8 and was allowed a residual of ~10; its snapped point violated
# the KKT conditions by 1-100, and the epochs then took 1.5-17 s (10^7 steps, a warning, in
# some runs) where they now take 0.1 s (benchmarks/NOTES.md, stop 41).
TOL_SHARE = 0.1
# A run's box is [0, min(hi, ROOM max alpha)]: far below a huge C (a hard margin's optimum does
# not move with C) the interior point starts half-way up its box, and from 0.5e30 it crawled
# (glass, inhibitory, C = 1e30: 757 860 epochs beside runs that gained nothing).  The point is a
# feasible point of the whole box, and the epochs go on from it if the cut bound held it.
ROOM = 1024.0
FIXED = 1e16  # the curvature given to a variable fixed at 0, relative to the mean diagonal
STEP_BACK = 0.995  # the fraction of the step to the boundary taken
# The modelled cost in ns of one Newton step: STEP_NS . (L N^3, N^3, L N^2, 1) (LAPACK's
# factorisations and inverses, the LU, the products and the Python around them; fitted on 15
# sizes N = 100-900, L = 3-11, one thread, stop 27: within 0.7-1.17 of the times; at N = 1 617,
# L = 7, 1.03 s against 1.23 modelled, stop 32), and the steps expected (12-21 on the problems of
# stop 27, 16-25 on the active patterns of segment and yeast at C = 1000, stop 32); the switch
# runs the method once the epochs' modelled work reaches SWITCH times its cost.
STEP_NS = (0.024, 0.044, 18.4, 2.2e5)
EXPECTED_STEPS = 20
SWITCH = 1.0
# ... unless the epochs look about to end: their work still to come, extrapolated from how fast
# the largest KKT violation fell over the second half of their work so far (``epochs_left``),
# below LEFT times the method's cost (stop 29: where the method ran near a run's end, on glass
# at C = 100 and vowel's Lee-Lin-Wahba, it cost 1.2-1.7x the epochs alone).
LEFT = 1.0
# A run takes every pattern where at least FULL_SHARE of them are active (it costs at most
# 1 / FULL_SHARE^3 ~ 2x a run on the active ones, and leaves none held that may then violate the
# KKT conditions: on glass at C = 1000, gamma = scale / 10, a run on 134 of 149 patterns left the
# other 15 at a violation of 0.31, and the epochs took 390 epochs more to the next run).
FULL_SHARE = 0.8
KINDS = (SIGN, LLW, WW, CS)  # the duals the switch runs for (benchmarks narrow it)
# The snapped point's face solves (``InteriorPointSwitch._polished``): at most POLISH_SOLVES of
# them (0: no polish), costing at most POLISH_SHARE of the run's modelled cost in all.  Where they
# do not end on the face's optimum the snapped point is kept: a polish cut short moved a wrong
# face's free variables (E. coli, Lee-Lin-Wahba, gamma = scale / 10, C = 1000, tol = 1e-6: 6 279
# -> 9 162 epochs in one of six orders; with the rule 5 382).
POLISH_SHARE = 0.5
POLISH_SOLVES = 20
# The duals whose snapped point is polished: the Kronecker ones.  Weston-Watkins' and
# Crammer-Singer's epochs take face steps of their own (``kernel_face``), and their polish
# gained nothing on 72 cells of glass, E. coli, vehicle and vowel at tol = 1e-6 (ratios 0.83-1.29,
# the epochs within +-12 %) and lost up to 1.36x at the default tol (benchmarks/NOTES.md, stop 54).
POLISHED = (SIGN, LLW)


def applies(kind: int) -> bool:
    """Whether the dual has the Kronecker Hessian K (x) (I - s 11^T) in Z = S alpha: the
    inhibitory machine at any mu (one-vs-all with the cyclic selection, s = 0, too) and
    Lee-Lin-Wahba; Weston-Watkins and Crammer-Singer in their sum form (``sum_form``)."""
    return kind in KINDS


def modelled_cost(N: int, L: int) -> float:
    """The modelled work of a whole run (ns): EXPECTED_STEPS Newton steps."""
    n2 = float(N) ** 2
    terms = (L * N * n2, N * n2, L * n2, 1.0)
    return EXPECTED_STEPS * float(np.dot(STEP_NS, terms))


def epochs_left(works, worsts, work: float, worst: float, tol: float) -> float:
    """The epochs' work still to come (ns) at the rate at which the largest KKT violation fell
    over the second half of their ``work`` so far (coordinate descent converges linearly), from
    the earlier calls' work (ascending) and violations; inf when it has not fallen."""
    if worst <= tol:
        return 0.0
    k = bisect_left(works, 0.5 * work)  # the first call in the second half
    if k == len(works) or works[k] >= work or not worsts[k] > worst:
        return np.inf
    return (work - works[k]) * np.log(worst / tol) / np.log(worsts[k] / worst)


def memory(N: int, L: int) -> int:
    """Bytes of the run's N x N arrays at their peak: the switch's K and the ridged copy, the L
    inverses (each factorised in its own slot), the scaled copy and the reduced system
    (factorised in place), and the temporaries of the products (L + 7 N x N arrays measured with
    tracemalloc until stop 32, L + 5.1-5.6 since the inverses are factorised in place; the model
    kept, two or three arrays of margin: ``tests/fast/test_interior_point.py``)."""
    return 8 * (L + 8) * N * N


def newton_factors(K, D, s, sum_zero=False):
    """The inverses (K + D_j)^-1 (L, N, N) and the LU of the reduced system: (1 - s L) I + s G,
    or with ``sum_zero`` sum_j (K + D_j)^-1; None when a block is not positive definite.  Each
    inverse is computed in place in its slot, one after another: scipy's LAPACK wrappers hold
    the GIL (measured, stop 32: potrf and potri of 1 200 x 1 200 on two threads 0.95x of one, a
    product 1.78x), so threads would not overlap them."""
    N, L = D.shape
    inverses = np.empty((L, N, N))
    for j, inverse in enumerate(inverses):
        inverse[:] = K
        inverse.flat[:: N + 1] += D[:, j]
        # (inverse.T: the same symmetric matrix in the Fortran order LAPACK factorises in place;
        # its lower triangle is the upper one of inverse, the other set to 0)
        chol, info = lapack.dpotrf(inverse.T, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            return None
        lower, info = lapack.dpotri(chol, lower=1, overwrite_c=1)
        if info != 0:
            return None
        if not np.shares_memory(lower, inverse):  # (a wrapper that copied: take its result)
            inverse[:] = lower.T
        _mirror_upper(inverse)
    G, scaled = np.zeros((N, N)), np.empty((N, N))
    for j in range(L):
        G += inverses[j] if sum_zero else np.multiply(inverses[j], D[:, j], out=scaled)
    # The reduced system, factorised in place: LAPACK overwrites its transpose (a Fortran-ordered
    # view), and newton_solve solves with trans=1.
    if not sum_zero:
        G *= s
        G.flat[:: N + 1] += 1.0 - s * L
    # (LAPACK's getrf itself: scipy's lu_factor warns of an exactly singular G, which errstate
    # does not silence; such a system fails the method, as a failed Cholesky does)
    lu, pivots, info = lapack.dgetrf(G.T, overwrite_a=True)
    if info != 0:
        return None
    return inverses, (lu, pivots)


def _mirror_upper(A, tile=256):
    """Copy the upper triangle of the square A onto its lower one (which holds 0), a band of
    ``tile`` rows at a time (no N x N temporary)."""
    N = A.shape[0]
    for a in range(0, N, tile):
        b = min(N, a + tile)
        A[a:b, :a] = A[:a, a:b].T
        A[a:b, a:b] += np.triu(A[a:b, a:b], 1).T


def newton_solve(factors, D, s, R, p=None):
    """dz solving (K (x) M + diag D) dz = R (N x L arrays), from ``newton_factors``; with
    ``p`` (from ``newton_factors(..., sum_zero=True)``, M = I), (dz, dlam) solving
    (K + D_j) dz_j + dlam = R_j for every class j and sum_j dz_j = -p."""
    inverses, lu = factors
    a, Gv = np.empty_like(R), np.empty_like(R)
    for j in range(R.shape[1]):
        a[:, j] = inverses[j] @ R[:, j]
    if p is not None:
        dlam = sl.lu_solve(lu, a.sum(axis=1) + p, trans=1, check_finite=False)
        for j in range(R.shape[1]):
            Gv[:, j] = inverses[j] @ dlam
        return a - Gv, dlam
    v = sl.lu_solve(lu, a.sum(axis=1), trans=1, check_finite=False)
    for j in range(R.shape[1]):
        Gv[:, j] = inverses[j] @ (D[:, j] * v)
    return a + s * (v[:, None] - Gv)


def hessian_product(K, Z, s):
    """(K (x) M) z for Z (N x L): K (Z - s (Z 1) 1^T)."""
    return K @ (Z - s * Z.sum(axis=1, keepdims=True))


@np.errstate(all="ignore")  # (a kernel of huge entries: non-finite iterates end in None)
def interior_point(K, lin, hi, sigma, s, sum_zero=False, tol=np.inf):
    """Maximise lin . alpha - 1/2 <Z M, K Z>, Z = sigma * alpha, 0 <= alpha <= hi, by Mehrotra's
    predictor-corrector; with ``sum_zero`` (s = 0) also subject to sum_r Z_ir = 0 for every
    pattern (``sum_form``), from a start that meets it.  The dual residual must also fall to
    TOL_SHARE times ``tol``, the engine's absolute KKT tolerance, where that is below the relative
    test (K's entries huge against C).  Returns (alpha, lower, upper, steps),
    lower and upper the multipliers of alpha >= 0 and alpha <= hi (steps = MAX_ITER: not
    converged, the last iterate), or None when a Newton system was singular or the iterates
    stopped being finite."""
    N, L = lin.shape
    fixed = hi <= 0.0
    free = ~fixed
    n = int(np.count_nonzero(free))
    if n == 0:
        return None
    scale = np.trace(K) / N
    K = K.copy()
    K.flat[:: N + 1] += RIDGE * scale
    room = np.where(fixed, 1.0, hi)  # (a fixed variable's bounds drop out)
    x = np.where(fixed, 0.0, _sum_zero_start(room, sigma, fixed) if sum_zero else 0.5 * room)
    slack = room - x  # hi - x, kept as its own variable: recomputed, it rounds to 0 near hi
    lower = np.where(fixed, 0.0, 1.0)
    upper = lower.copy()
    lam = np.zeros(N)  # the multipliers of sum_r Z_ir = 0 (with sum_zero)
    lin_size, hi_size = 1.0 + np.abs(lin).max(), 1.0 + hi.max()
    best, best_merit, worse, last_size = None, np.inf, 0, np.inf
    for step in range(MAX_ITER):
        Qx = sigma * hessian_product(K, sigma * x, s)
        residual = np.where(fixed, 0.0, Qx - lin - lower + upper + sigma * lam[:, None])
        sums = (sigma * x).sum(axis=1) if sum_zero else None
        gap = (np.sum(x * lower) + np.sum(slack * upper)) / (2 * n)
        objective = np.vdot(lin, x) - 0.5 * np.vdot(x, Qx)
        if not np.isfinite(gap + objective):
            return None
        # the largest of the three stopping tests' ratios to their tolerance (<= 1: converged)
        size = np.abs(residual).max()
        merit = max(
            gap / (GAP * (1.0 + abs(objective)) / n),
            size / min(RESIDUAL * (lin_size + np.abs(Qx).max()), TOL_SHARE * tol),
            0.0 if sums is None else np.abs(sums).max() / (RESIDUAL * hi_size),
        )
        if merit <= 1.0:
            return x, lower, upper, step
        if merit < best_merit:
            best, best_merit = (x, lower, upper), merit
        # a step scales the residual by 1 - t in exact arithmetic: where it grows, rounding has
        # taken over; after STALL such steps in a row, the best iterate (not converged)
        worse = worse + 1 if size > last_size else 0
        last_size = size
        if worse == STALL:
            break
        safe_x, safe_slack = np.where(fixed, 1.0, x), np.where(fixed, 1.0, slack)
        D = np.where(fixed, FIXED * scale, lower / safe_x + upper / safe_slack)
        factors = None  # (the previous step's: freed before the new ones are built)
        factors = newton_factors(K, D, s, sum_zero)
        if factors is None:
            return None
        state = (fixed, sigma, residual, sums, safe_x, safe_slack, lower, upper)
        # the affine predictor
        dx, d_lower, d_upper, _ = _direction(factors, D, s, state, -x * lower, -slack * upper)
        t = _step_length(x, slack, lower, upper, dx, d_lower, d_upper, free)
        gap_affine = (
            np.sum((x + t * dx) * (lower + t * d_lower))
            + np.sum((slack - t * dx) * (upper + t * d_upper))
        ) / (2 * n)
        centring = (gap_affine / gap) ** 3 * gap
        r_lower = np.where(fixed, 0.0, centring - x * lower - dx * d_lower)
        r_upper = np.where(fixed, 0.0, centring - slack * upper + dx * d_upper)
        dx, d_lower, d_upper, d_lam = _direction(factors, D, s, state, r_lower, r_upper)
        t = STEP_BACK * _step_length(x, slack, lower, upper, dx, d_lower, d_upper, free)
        x = np.where(fixed, 0.0, x + t * dx)
        slack = np.where(fixed, 1.0, slack - t * dx)
        lower = lower + t * d_lower
        upper = upper + t * d_upper
        lam = lam + t * d_lam
    # not converged: the best iterate is still a feasible point to try
    return None if best is None else (*best, MAX_ITER)


def _sum_zero_start(room, sigma, fixed):
    """A point strictly inside the box with sum_r sigma_ir x_ir = 0: each pattern's variables
    with sigma = -1 at a fraction a of their room, those with sigma = +1 at b, a and b <= 1/2
    (a pattern of fixed variables only: 0)."""
    plus = np.where(fixed | (sigma < 0.0), 0.0, room).sum(axis=1)
    minus = np.where(fixed | (sigma > 0.0), 0.0, room).sum(axis=1)
    a = 0.5 * np.minimum(1.0, plus / np.where(minus > 0.0, minus, 1.0))
    b = a * minus / np.where(plus > 0.0, plus, 1.0)
    return np.where(sigma < 0.0, a[:, None], b[:, None]) * room


def _direction(factors, D, s, state, r_lower, r_upper):
    """(dx, d_lower, d_upper, d_lam): the Newton step of the KKT conditions
    Q x - lin - lower + upper + sigma lam = 0 (and sum_r sigma_ir x_ir = 0 with ``sum_zero``)
    with the complementarity rows lower dx + x d_lower = r_lower and -upper dx + slack d_upper =
    r_upper (the predictor aims at x lower = 0, the corrector at the centring target)."""
    fixed, sigma, residual, sums, x, slack, lower, upper = state
    R = np.where(fixed, 0.0, -residual + r_lower / x - r_upper / slack)
    if sums is None:
        dz, d_lam = newton_solve(factors, D, s, sigma * R), 0.0
    else:
        dz, d_lam = newton_solve(factors, D, s, sigma * R, sums)
    dx = np.where(fixed, 0.0, sigma * dz)
    d_lower = np.where(fixed, 0.0, (r_lower - lower * dx) / x)
    d_upper = np.where(fixed, 0.0, (r_upper + upper * dx) / slack)
    return dx, d_lower, d_upper, d_lam


def _step_length(x, slack, lower, upper, dx, d_lower, d_upper, free):
    """The largest t <= 1 that keeps x, hi - x and both multipliers nonnegative."""
    return min(
        _to_boundary(x, dx, free),
        _to_boundary(slack, -dx, free),
        _to_boundary(lower, d_lower, free),
        _to_boundary(upper, d_upper, free),
    )


def _to_boundary(v, dv, free):
    """The largest t <= 1 with v + t dv >= 0 on the free variables."""
    shrinking = free & (dv < 0.0)
    return min(1.0, float(np.min(-v[shrinking] / dv[shrinking]))) if shrinking.any() else 1.0


def snap(alpha, lower, upper, hi, curvature):
    """Move each variable onto the bound its multiplier shows it at: 0 where its distance to 0
    costs less gradient than the multiplier (alpha_v Q_vv <= lower_v), hi likewise; the rest as
    they are."""
    at_zero = alpha * curvature <= lower
    at_hi = (hi - alpha) * curvature <= upper
    return np.where(at_zero & ~at_hi, 0.0, np.where(at_hi & ~at_zero, hi, alpha))


def sum_form(kind, lin, hi, y_index):
    """The WW or CS dual (S_i = e_y 1^T - I, M = I) in w: w_ir = alpha_ir for r != y_i and
    w_iy = sum_r alpha_ir, so that Z = sigma w with sigma_ir = +1 at r = y_i, -1 elsewhere, and
    sum_r Z_ir = 0 for every pattern (``interior_point(..., sum_zero=True)``).  w_iy lies in
    [0, budget]: for CS the budget C (the largest hi, as ``patterns.budget_rank_one`` reads it),
    for WW sum_r hi_ir, implied by the boxes.  Returns (lin_w, hi_w, sigma)."""
    own = (np.arange(lin.shape[0]), y_index)
    sigma = -np.ones_like(lin)
    sigma[own] = 1.0
    lin_w, hi_w = lin.copy(), hi.copy()
    lin_w[own] = 0.0
    hi_w[own] = hi.max(axis=1) if kind == CS else hi.sum(axis=1)
    return lin_w, hi_w, sigma


class InteriorPointSwitch:
    """Hands a run of the epochs to ``interior_point`` on the active patterns (see the module
    docstring).

    Parameters as ``msvm.fast.kernel_face.KernelFaceNewton``'s, ``c``, the inhibition of
    M = I - c 11^T for the SIGN kind, ``memory_limit``, the bytes a run may take (its
    |P| x |P| arrays, ``memory``: beyond them the epochs go on alone until the active set is
    small enough), and ``tol``, the run's stopping tolerance (``epochs_left``).
    """

    def __init__(self, kind, c, lin, hi, y_index, source, offset, dual, memory_limit, tol):
        self.kind, self.lin, self.hi, self.y_index = kind, lin, hi, y_index
        self.source, self.offset, self.dual, self.tol = source, offset, dual, tol
        self.memory_limit = memory_limit
        self.s = output_shift(kind, c, lin.shape[1])  # M = I - s 11^T
        self.paid = 0.0  # the epochs' modelled work that earlier runs have used up (ns)
        self.failed = False  # a run failed (a Newton system singular: an indefinite kernel)
        self.works, self.worsts = [], []  # the epochs' work and largest violation, each call

    def step(self, alpha, U, patterns, steps, worst) -> float | None:
        """Run the interior-point method on the active ``patterns`` P, the others held, once the
        epochs' modelled work since the last run has reached its cost for |P| patterns and they
        do not look about to end (``epochs_left``, from ``worst``, the largest violation of
        their last epoch); returns the dual gain (0 if it did not gain or failed), None when it
        is not due or a run failed before.  ``U`` may hold outputs of variables outside this
        run (the held patterns, a compact phase's other patterns): they enter the linear term,
        and U is updated by increments."""
        N, L = alpha.shape
        P = np.arange(N) if len(patterns) >= FULL_SHARE * N else np.sort(patterns)
        if self.failed or P.size < 2 or memory(P.size, L) > self.memory_limit:
            return None
        cost = modelled_cost(P.size, L)
        work = epoch_work(steps, N, L, self.kind) - self.paid
        left = epochs_left(self.works, self.worsts, work, worst, self.tol)
        self.works.append(work)
        self.worsts.append(worst)
        if work < SWITCH * cost or left < LEFT * cost:
            return None
        self.paid += work  # the next run waits for as much work again
        self.works, self.worsts = [], []
        K = offset_block(self.source, self.offset, P, P)  # (read only: interior_point copies it)
        lin, hi, y_index = self.lin[P], self.hi[P], self.y_index[P]
        largest = float(alpha[P].max())
        box = np.minimum(hi, ROOM * largest) if largest > 0.0 else hi
        # one thread: the same result whatever a fit's n_jobs; the steps' overflows (a kernel of
        # huge entries) end in a non-finite gap, and the run in None, not in warnings
        with blas_threads(1), np.errstate(all="ignore"):
            # the outputs of the variables outside the run (else ~0)
            held = U[P, :L] - K @ pattern_apply(self.kind, alpha[P], y_index)
            if self.kind in (WW, CS):
                x = self._sum_form_point(K, held, lin, box, y_index)
            else:
                x = self._kronecker_point(K, held, lin, box, y_index)
            if x is None:
                self.failed = True
                return 0.0
            if self.kind == CS:  # increases scaled back where a snap overfilled a budget
                moves, dZ = np.empty((1, P.size, L)), np.empty((P.size, L))
                line_moves(self.kind, alpha[P], x - alpha[P], hi, y_index, lin, U[P],
                           hi.max(axis=1), FULL_STEP, moves, dZ)  # fmt: skip
                x = alpha[P] + moves[0]
            if self.kind in POLISHED:
                x = self._polished(x, alpha[P], U[P, :L], K, lin, hi, y_index, cost)
            dZ = pattern_apply(self.kind, x - alpha[P], y_index)
            dB = dZ - self.s * dZ.sum(axis=1, keepdims=True)
            # D(alpha + delta) - D(alpha) = lin . delta - <dB, U> - 1/2 <dB, dU>, dB = dZ M
            gain = float(np.vdot(lin, x - alpha[P]) - np.vdot(dB, U[P, :L])
                         - 0.5 * np.vdot(dB, K @ dZ))  # fmt: skip
            if not gain > 0.0:
                return 0.0
            if U.shape[1] > L:  # the sum column
                dZ = np.hstack([dZ, dZ.sum(axis=1, keepdims=True)])
            add_columns(self.source, self.offset, U, P, dZ)
        alpha[P] = x
        activate_all(self.dual[1], self.dual[5], self.dual[6])
        return gain

    def _polished(self, x, a, U_P, K, lin, hi, y_index, cost):
        """The snapped point x moved to the optimum of its face by ``kernel_face.face_steps``
        (U_P, the patterns' outputs at ``a``; see the module docstring), in at most
        POLISH_SOLVES solves costing at most POLISH_SHARE of the run's modelled ``cost`` in all
        and within its memory limit, until the face's KKT violation is a tenth of tol; x itself
        where the solves do not end there.  E. coli (100 patterns, standardised), inhibitory,
        gamma = scale / 10, C = 1e4, tol = 1e-6: 136 662 epochs (3.9 s) from the snapped point's
        KKT violation of 4e-4, 442 from the polished one (0.16 s)."""
        left = POLISH_SHARE * cost

        def afford(m):
            nonlocal left
            if solve_cost(m) > left or 8 * 3 * m * m > self.memory_limit:
                return False
            left -= solve_cost(m)
            return True

        U_x = U_P + K @ pattern_apply(self.kind, x - a, y_index)
        free = (x > 0.0) & (x < hi)
        polished, _, done = face_steps(self.kind, self.s, x, free, hi, K, U_x, lin, y_index,
                                       afford, enough=TOL_SHARE * self.tol,
                                       solves=POLISH_SOLVES)  # fmt: skip
        return polished if done else x

    def _kronecker_point(self, K, held, lin, hi, y_index):
        """The optimum of the inhibitory or LLW dual (Z = sigma alpha) of the patterns of K
        (``snapped_optimum``), or None."""
        sigma = pattern_apply(self.kind, np.ones_like(lin), y_index)
        return snapped_optimum(K, held, lin, hi, sigma, self.s, self.tol)

    def _sum_form_point(self, K, held, lin, hi, y_index):
        """The snapped optimum of the WW or CS dual of the patterns of K, solved in its sum form
        (``sum_form``), or None.  A variable alpha_ir's multiplier at 0 is its own plus that of
        its pattern's sum at 0 (w_iy = 0 holds every alpha_ir at 0); at hi, for WW, likewise
        (the sum's bound is implied by the boxes), for CS its own only (the budget binds a sum,
        not the variable)."""
        lin_w, hi_w, sigma = sum_form(self.kind, lin, hi, y_index)
        found = interior_point(K, lin_w - sigma * held, hi_w, sigma, 0.0, True, self.tol)
        if found is None:
            return None
        w, lower, upper, _ = found
        own = (np.arange(w.shape[0]), y_index)
        lower = lower + lower[own][:, None]
        if self.kind == WW:
            upper = upper + upper[own][:, None]
        w[own] = 0.0  # alpha_iy, fixed at 0
        curvature = np.maximum(2.0 * np.diag(K)[:, None], 1e-300)  # Q_vv = 2 K_ii, r != y_i
        return np.clip(snap(w, lower, upper, hi, curvature), 0.0, hi)


@np.errstate(all="ignore")
def snapped_optimum(K, held, lin, hi, sigma, s, tol):
    """The optimum of the dual of ``interior_point`` (the patterns outside K held, their outputs
    ``held``), snapped onto the bounds its multipliers show, or None where the method failed."""
    lin = lin - sigma * (held @ (np.eye(lin.shape[1]) - s))
    found = interior_point(K, lin, hi, sigma, s, False, tol)
    if found is None:
        return None
    x, lower, upper, _ = found
    curvature = np.maximum(np.diag(K)[:, None] * (1.0 - s), 1e-300)  # Q_vv = K_ii (1 - s)
    return np.clip(snap(x, lower, upper, hi, curvature), 0.0, hi)
