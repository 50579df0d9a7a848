"""The per-pattern structure of each box-constrained multiclass dual, and its exact subproblem.

Every dual here has the form (see ``msvm.reference``)

    maximise sum_i lin_i . alpha_i - 1/2 tr(Z^T K Z M),  0 <= alpha_ij <= hi_ij,  Z_i = S_i alpha_i

with B = Z M the expansion coefficients, so K B holds the outputs on the training points.
The gradient in pattern i is lin_i - S_i^T (K B)_i, and the Hessian of pattern i's variables is
K_ii S_i^T M S_i = K_ii (I - c v v^T), a structured L x L matrix:

==========  ======================  ===========  ============  ==================================
kind        machine                 S_i          M             K_ii (I - c v v^T)
==========  ======================  ===========  ============  ==================================
SIGN (0)    one-vs-all, inhibitory  diag(y_i)    I - c 11^T    v = y_i, c = mu (2 - mu L)
LLW (1)     Lee-Lin-Wahba           -I           I - 11^T/L    v = 1, c = 1/L
WW (2)      Weston-Watkins          e_y 1^T - I  I             v = 1, c = -1 (identity + rank 1)
CS (3)      Crammer-Singer, MProt   e_y 1^T - I  I             v = 1, c = -1, and sum_r alpha <= C
==========  ======================  ===========  ============  ==================================

(for LLW, WW and CS the variable of the pattern's own class -- for MProt, of its assigned positive
prototype -- is fixed at 0 by hi = 0, as are MProt's other positive prototypes).  The box-
constrained kinds solve their pattern subproblem with ``box_rank_one``; CS, whose variables share
the budget sum_r alpha_ir <= C (MProt 10-11, ISVM F.3-F.4), with ``budget_rank_one``.

The engine reads K B = K Z - s (K Z 1) 1^T for M = I - s 11^T from its outputs
(``pattern_gradient``).  It keeps the row sums as one more column: U = K [Z, Z 1] with a kernel,
X^T [Z, Z 1] with explicit weights (``state_coef``).  A transfer's partner scan then reads one
entry of each partner's row for its sum rather than all L (yeast: 0.83-0.86x at stop 38, per-round
medians 0.83-1.05x at stop 39, benchmarks/NOTES.md), and on explicit weights a visit computes its
active classes' outputs and the sum as one more.  For M = I (WW, CS)
K Z = K B and there is no sum column.
"""

from __future__ import annotations

import numba as nb
import numpy as np

SIGN, LLW, WW, CS = 0, 1, 2, 3

# A pattern subproblem's phi (``box_rank_one``) is flat on a segment whose slope 1 - c sum v_p^2 is
# at most this: the rounding of c = 1/L times L free variables (the inhibitory machine at
# mu = 1/L), not a curvature.
FLAT_SLOPE = 1e-12


# Active variables.  The engine sets aside single variables, as LIBLINEAR's Crammer-Singer solver
# does (active_size_i), not only whole patterns: a visit then reads and solves only the active
# variables of its pattern (on the linear benchmark about 1.5 of 9 per visit).  Pattern i's
# active variables are the classes cls[ci, :n] (ci = i in the engine; the papers' solvers pass
# the identity list np.arange(L)[None] and ci = 0).  The pattern-wise functions work on compact
# arrays indexed by p < n and take the (N, L) arrays with a row index, never row views: a view
# costs numba two atomic reference-count updates, a sizeable part of a visit.


@nb.njit(cache=True)
def output_shift(kind: int, c: float, L: int) -> float:
    """s with M = I - s 11^T (SIGN: the inhibition c; LLW: 1/L; WW, CS: M = I, s = 0)."""
    if kind == SIGN:
        return c
    if kind == LLW:
        return 1.0 / L
    return 0.0


def separable(kind: int, c: float) -> bool:
    """True when the dual separates by class: one-vs-all (SIGN with c = 0), pattern Hessian
    K_ii I (``msvm.fast.separable`` solves it class by class)."""
    return kind == SIGN and c == 0.0


def state_width(kind: int, c: float, L: int) -> int:
    """Columns of the engine's outputs: L, plus the row sums of K Z when M != I."""
    return L + (output_shift(kind, c, L) != 0.0)


@nb.njit(cache=True)
def activate_all(hi, cls, n_cls):
    """Every free variable (hi > 0) of every pattern active: cls[i, :n_cls[i]] lists them."""
    for i in range(hi.shape[0]):
        n = 0
        for j in range(hi.shape[1]):
            if hi[i, j] > 0.0:
                cls[i, n] = j
                n += 1
        n_cls[i] = n


@nb.njit(cache=True, inline="always")
def activate_row(hi, cls, n_cls, i):
    """Every free variable of pattern i active again (after a transfer moved it)."""
    n = 0
    for j in range(hi.shape[1]):
        if hi[i, j] > 0.0:
            cls[i, n] = j
            n += 1
    n_cls[i] = n


@nb.njit(cache=True, inline="always")
def row_shift(U, row: int, shift: float, L: int) -> float:
    """s (K Z 1)_row from the outputs' sum column."""
    if shift == 0.0:
        return 0.0
    return shift * U[row, L]


@nb.njit(cache=True, inline="always")
def pattern_gradient(kind: int, U, row: int, shift: float, lin, i: int, y: int, cls, ci, n, g):
    """g[p] = the dual gradient lin_ij - (S_i^T (K B)_i)_j of pattern i's variable j = cls[ci, p].

    (K B)_i is read from row ``row`` of the engine's outputs U = K [Z, Z 1] (u_j = U_j - s U_L)
    or U = K Z (u_j = U_j - s sum_k U_k): ``row_shift``.
    """
    s = row_shift(U, row, shift, lin.shape[1])
    if kind == SIGN or kind == LLW:  # S_i = diag(y_i) or -I
        for p in range(n):
            j = cls[ci, p]
            u = U[row, j] - s
            g[p] = lin[i, j] - u if (kind == SIGN and j == y) else lin[i, j] + u
    else:  # S_i = e_y 1^T - I
        u_y = U[row, y] - s
        for p in range(n):
            j = cls[ci, p]
            g[p] = lin[i, j] - (u_y - (U[row, j] - s))


@nb.njit(cache=True, inline="always")
def gather_row(M, i, cls, ci, n, out):
    """out[p] = M[i, cls[ci, p]] for p < n (a pattern's values of its active variables)."""
    for p in range(n):
        out[p] = M[i, cls[ci, p]]


@nb.njit(cache=True, _nrt=False)
def hessian_structure(kind: int, y: int, c: float, L: int, cls, ci, n, v):
    """Fill v (on the active variables) and return c: the pattern Hessian is K_ii (I - c v v^T)."""
    for p in range(n):
        v[p] = (1.0 if cls[ci, p] == y else -1.0) if kind == SIGN else 1.0
    if kind == SIGN:
        return c
    if kind == LLW:
        return 1.0 / L
    return -1.0


@nb.njit(cache=True, inline="always")
def state_change(kind: int, n, delta, cls, ci, y: int, shift: float, dS):
    """dS = the change of row i of [Z, Z 1] for a change delta[p] of the variables cls[ci, p].

    The engine keeps K Z (and on the explicit-weights path the sum column) rather than K B = K Z M:
    with M = I - s 11^T, a step changes only the outputs of the classes that moved, O(N moved)
    instead of O(N L).  dS has L + 1 entries; the last is the row sum when ``shift`` != 0, else 0
    (outputs without a sum column ignore it).  Callers pass ``ci`` as a variable (``np.int64(0)``
    for a constant): numba compiles a call with a literal 0 as a second specialisation.
    """
    L = dS.size - 1
    for j in range(L + 1):
        dS[j] = 0.0
    total = 0.0
    for p in range(n):
        j = cls[ci, p]
        dS[j] = delta[p] if (kind == SIGN and j == y) else -delta[p]
        total += dS[j]
    if kind == WW or kind == CS:
        dS[y] -= total  # e_y 1^T delta - delta (delta_y = 0): sums to 0
        total = 0.0
    dS[L] = total if shift != 0.0 else 0.0


@nb.njit(cache=True, _nrt=False)
def sort_small_pairs(keys, values, out_keys, out_values):
    """out_keys = keys sorted (stably), out_values = values in the same order (pass the same
    arrays twice to sort keys alone).

    Each key goes straight to its rank (the number of keys before it in sorted order): O(n^2)
    comparisons, but without branches, and for the 2L breakpoints of one pattern about twice as
    fast as an insertion sort, whose branches the processor cannot predict on such data.
    """
    n = keys.size
    for i in range(n):
        key = keys[i]
        rank = 0
        for j in range(n):
            other = keys[j]
            rank += (other < key) | ((other == key) & (j < i))
        out_keys[rank] = key
        out_values[rank] = values[i]


@nb.njit(cache=True, _nrt=False)
def _step_at(n, t, g, inv_k, c, v, lo, hi, delta):
    """delta_p(t) = clip(g_p / k + c v_p t, lo_p, hi_p); returns sum_p v_p delta_p(t) - t."""
    total = 0.0
    for p in range(n):
        d = min(max(g[p] * inv_k + c * v[p] * t, lo[p]), hi[p])
        delta[p] = d
        total += v[p] * d
    return total - t


@nb.njit(cache=True, _nrt=False)
def _segment_root(n, left, right, g, inv_k, c, v, lo, hi, spans):
    """The root of phi(t) = v.d(t) - t on [left, right], between two consecutive breakpoints (or
    beyond them all: left = -inf or right = inf), where phi(left) > 0 >= phi(right); ``spans``
    holds each variable's two breakpoints (min, max) in order, for those with room and a share.

    On the segment each variable is either unclipped, d_p = g_p / k + c v_p t, or at a bound it
    keeps, so phi(t) = r - t (1 - c sum_free v_p^2) with r = sum_free v_p g_p / k + sum_clipped
    v_p d_p, and t = r / (1 - c sum_free v_p^2): no term of the size of the breakpoints, which a
    bound of C = 1e15 puts near 1e15 / c (the segment's own ends only clip the result).  A
    segment of zero slope (the inhibitory machine at mu = 1/L, every variable free: the pattern
    Hessian's null direction v) has phi = 0 on all of it; there the step of least norm on the
    segment the bisection found (where phi is 0 over several segments, the leftmost of them)."""
    r, free_sq, free_dot, e = 0.0, 0.0, 0.0, 0
    for p in range(n):
        a = g[p] * inv_k
        if v[p] == 0.0 or not hi[p] > lo[p]:
            r += v[p] * min(max(a, lo[p]), hi[p])
            continue
        first, last = spans[e], spans[e + 1]
        e += 2
        if first <= left and last >= right:  # unclipped on the whole segment
            r += v[p] * a
            free_sq += v[p] * v[p]
            free_dot += v[p] * a
        elif (last <= left) == (c * v[p] > 0.0):  # at hi: past its interval, c v_p t rising
            r += v[p] * hi[p]
        else:
            r += v[p] * lo[p]
    slope = 1.0 - c * free_sq
    if slope > FLAT_SLOPE:
        t = r / slope
    else:  # phi = 0 on the segment: the t that minimises sum_free (a_p + c v_p t)^2
        t = -free_dot / (c * free_sq)
    return min(max(t, left), right)


@nb.njit(cache=True, _nrt=False)
def box_rank_one(n, g, k, c, v, lo, hi, delta, work):
    """Exactly maximise g.d - k/2 (||d||^2 - c (v.d)^2) over lo <= d <= hi (needs c ||v||^2 <= 1),
    for the first n entries.

    With t = v.d fixed the problem separates, d_p(t) = clip(g_p / k + c v_p t, lo_p, hi_p), and
    the optimum is the root of phi(t) = v.d(t) - t, a continuous non-increasing piecewise-linear
    function.  The breakpoints (two a variable with room and a share in v.d) are sorted once;
    a bisection over them, phi evaluated directly at each, finds the segment holding the root,
    and ``_segment_root`` solves phi's linear piece there from the variables' own terms.  (A
    walk along phi by its slopes from the leftmost breakpoint had carried that breakpoint's size
    into the root: with bounds of 1e15 the steps were off by 0.5-9 and the fits stalled.)
    ``work`` is a work array of size >= 6n (the breakpoints, unsorted and sorted).  Known limit:
    where c ||v||^2 rounds above 1 (the inhibitory machine at mu = 1/L for L = 5: 0.2 L = 1 +
    2^-54) the float model curves down along v, and with room of ~3e15 or more on both sides of
    v phi's rounding can send the bisection to a far segment: about 1 in 1 000 random steps at
    C = 3e15-1e18 (none in the fits tried; stop 63's review).
    """
    curvature = k * (1.0 - c * v[0] * v[0]) if n == 1 else k
    if curvature <= 0.0:  # zero kernel diagonal (or flat single variable): linear in d
        for p in range(n):
            delta[p] = hi[p] if g[p] > 0 else (lo[p] if g[p] < 0 else 0.0)
        return
    if n == 1:  # one active variable: the clipped Newton step (most steps once variables shrink)
        delta[0] = min(max(g[0] / curvature, lo[0]), hi[0])
        return
    inv_k, m = 1.0 / k, 0
    if c != 0.0:
        for p in range(n):
            if v[p] != 0.0 and hi[p] > lo[p]:
                a, q = g[p] * inv_k, 1.0 / (c * v[p])
                t_lo, t_hi = (lo[p] - a) * q, (hi[p] - a) * q
                work[m], work[m + 1] = min(t_lo, t_hi), max(t_lo, t_hi)
                m += 2
    if m == 0:  # c = 0, or no variable with both room and a share in v.d: phi's root is t = 0
        _step_at(n, 0.0, g, inv_k, c, v, lo, hi, delta)
        return
    ts = work[4 * n : 4 * n + m]
    sort_small_pairs(work[:m], work[:m], ts, ts)
    # the first breakpoint where phi <= 0 (m: none), phi non-increasing
    first, last = 0, m
    while first < last:
        middle = (first + last) // 2
        below = _step_at(n, ts[middle], g, inv_k, c, v, lo, hi, delta) <= 0.0
        last = middle if below else last
        first = first if below else middle + 1
    left = ts[first - 1] if first > 0 else -np.inf
    right = ts[first] if first < m else np.inf
    t = _segment_root(n, left, right, g, inv_k, c, v, lo, hi, work[:m])
    _step_at(n, t, g, inv_k, c, v, lo, hi, delta)


@nb.njit(cache=True, _nrt=False)
def budget_rank_one(n, g, k, alpha, hi, delta, work):
    """Exactly maximise g.d - k/2 (||d||^2 + (1.d)^2) over alpha + d >= 0, sum(alpha + d) <= C,
    for the first n entries (the active variables; the others of the pattern hold no mass).

    The KKT conditions give alpha_r + d_r = max(0, a_r - tau) with a_r = alpha_r + g_r / k, where
    either the budget is slack and tau solves S(tau) - s0 = tau (S(tau) = sum max(0, a_r - tau),
    s0 = sum alpha), or it binds and tau solves S(tau) = C.  Both are found on the sorted a_r, as
    in LIBLINEAR's Crammer-Singer sub-solver.  Everything is computed relative to the variable
    with the largest gradient, b_r = a_r - a_ref = (alpha_r - alpha_ref) + (g_r - g_ref) / k,
    and t = tau - a_ref: with a tiny kernel diagonal g / k is huge, and a_r's own rounding
    (ulp(g / k) >> C) would make the mass sum past C.  Variables with hi = 0 stay fixed at 0
    (C is the largest hi); ``work`` is a work array of size >= 2n.
    """
    m, s0, budget, ref = 0, 0.0, 0.0, -1
    for p in range(n):
        delta[p] = 0.0
        if hi[p] > 0.0:
            m += 1
            s0 += alpha[p]
            budget = max(budget, hi[p])
            if ref < 0 or g[p] > g[ref]:
                ref = p
    if m == 0:
        return
    if n == 1 and k > 0.0:  # one variable: max g d - k d^2 over alpha + d in [0, C]
        delta[0] = min(max(g[0] / (2.0 * k), -alpha[0]), budget - alpha[0])
        return
    if k <= 0.0:  # linear objective: the whole budget on the best variable, if it gains
        for p in range(n):
            if hi[p] > 0.0:
                delta[p] = -alpha[p]
        if g[ref] > 0.0:
            delta[ref] += budget
        return
    q = 0
    for p in range(n):
        if hi[p] > 0.0:
            work[q] = -((alpha[p] - alpha[ref]) + (g[p] - g[ref]) / k)
            q += 1
    b = work[m : 2 * m]
    sort_small_pairs(work[:m], work[:m], b, b)  # ascending in -b_r
    for q in range(m):
        b[q] = -b[q]  # b_r in descending order
    # Budget slack: with the top q values above tau, tau = (sum_q a - s0) / (q + 1), that is
    # t = (sum_q b - s0 - a_ref) / (q + 1).
    a_ref = alpha[ref] + g[ref] / k
    t, total = -s0 - a_ref, 0.0
    for q in range(m + 1):
        if q > 0:
            total += b[q - 1]
        trial = (total - s0 - a_ref) / (q + 1)
        upper = b[q - 1] if q > 0 else np.inf
        lower = b[q] if q < m else -np.inf
        if lower <= trial < upper:
            t = trial
            break
    used = 0.0
    for q in range(m):
        used += max(0.0, b[q] - t)
    if used > budget:  # the budget binds: S(tau) = C on the segment with q values above tau
        total = 0.0
        for q in range(1, m + 1):
            total += b[q - 1]
            trial = (total - budget) / q
            lower = b[q] if q < m else -np.inf
            if trial >= lower:
                t = trial
                break
    for p in range(n):
        if hi[p] > 0.0:
            delta[p] = max(0.0, (alpha[p] - alpha[ref]) + (g[p] - g[ref]) / k - t) - alpha[p]


@nb.njit(cache=True, inline="always")
def budget_levels(n, g, alpha, hi):
    """(g_max, g_min, slack_empty) of a budget-constrained pattern (CS), over its first n entries.

    With the slack alpha_0 = C - sum_r alpha_r (gradient 0) the variables and the slack share the
    mass C.  g_max is the largest gradient over all of them (the slack's 0 always counts), g_min
    the smallest over those holding mass (inf if none); a budget met up to rounding leaves the
    slack empty.
    """
    budget, used = 0.0, 0.0
    g_max, g_min = 0.0, np.inf
    for p in range(n):  # branch-free (a fixed variable has hi = alpha = 0)
        budget = max(budget, hi[p])
        used += alpha[p]
        g_max = max(g_max, g[p] if hi[p] > 0.0 else 0.0)
        g_min = min(g_min, g[p] if alpha[p] > 0.0 else np.inf)
    slack_empty = used >= budget * (1.0 - 1e-12)
    if not slack_empty:
        g_min = min(g_min, 0.0)
    return g_max, g_min, slack_empty


@nb.njit(cache=True, inline="always")
def budget_violation(n, g, alpha, hi):
    """KKT violation of a budget-constrained pattern (CS): optimality is g_max <= g_min.

    This is LIBLINEAR's stopping quantity maxG - minG (Solver_MCSVM_CS) on the same scale: its
    alpha^m_i is -alpha_im for m != y_i and sum_r alpha_ir for m = y_i, its G_m - G_{y_i} our g_m.
    """
    g_max, g_min, _ = budget_levels(n, g, alpha, hi)
    return max(g_max - g_min, 0.0) if g_min < np.inf else g_max


@nb.njit(cache=True, inline="always")
def pattern_violation(kind, n, g, alpha, hi):
    """Largest KKT violation among the first n variables (projected gradient; CS: see above)."""
    if kind == CS:
        return budget_violation(n, g, alpha, hi)
    worst = 0.0
    for p in range(n):  # branch-free: alpha's position in its box varies at random
        up = g[p] if alpha[p] < hi[p] else 0.0  # room to increase
        down = g[p] if alpha[p] > 0.0 else 0.0  # room to decrease
        worst = max(worst, max(up, 0.0) - min(down, 0.0))
    return worst


@nb.njit(cache=True, inline="always")
def shrink_variables(kind, n, g, alpha, hi, cls, ci, threshold):
    """Set aside the active variables that are not expected to move in the next epochs; returns
    how many stay active (first in cls[ci], with g, alpha and hi permuted alike), 0 when the
    whole pattern can be set aside.

    Box-constrained kinds: a variable at a bound with its gradient pointing out by at least
    ``threshold``.  CS (LIBLINEAR's Solver_MCSVM_CS::be_shrunk): a variable without mass whose
    gradient lies more than ``threshold`` below g_min would not receive mass in a step; the
    pattern goes when at most one entry -- a variable or the slack -- can still move (one entry
    alone cannot: the mass is fixed).
    """
    limit, slack_movable = 0.0, True
    if kind == CS:
        _, g_min, slack_empty = budget_levels(n, g, alpha, hi)
        limit = g_min - threshold
        slack_movable = not (slack_empty and 0.0 < limit)
    p = 0
    while p < n:
        if kind == CS:
            out = alpha[p] <= 0.0 and g[p] < limit
        else:
            out = (alpha[p] <= 0.0 and g[p] <= -threshold) or (
                alpha[p] >= hi[p] and g[p] >= threshold
            )
        if out:
            n -= 1
            cls[ci, p], cls[ci, n] = cls[ci, n], cls[ci, p]
            g[p], g[n] = g[n], g[p]
            alpha[p], alpha[n] = alpha[n], alpha[p]
            hi[p], hi[n] = hi[n], hi[p]
        else:
            p += 1
    if kind == CS and n + slack_movable <= 1:
        return 0
    return n


def pattern_apply(kind: int, D: np.ndarray, y_index: np.ndarray) -> np.ndarray:
    """Row i of the result is S_i d_i (numpy, every row at once): Z = pattern_apply(alpha)."""
    rows = np.arange(D.shape[0])
    if kind == SIGN:  # S_i = diag(y_i)
        Z = -D
        Z[rows, y_index] = D[rows, y_index]
    elif kind == LLW:  # S_i = -I
        Z = -D
    else:  # S_i = e_y 1^T - I
        Z = -D
        Z[rows, y_index] += D.sum(axis=1)
    return Z


def dual_vectors(kind: int, alpha: np.ndarray, y_index: np.ndarray, c: float):
    """Z = S alpha and B = Z M for all patterns at once (numpy)."""
    Z = pattern_apply(kind, alpha, y_index)
    shift = output_shift(kind, c, alpha.shape[1])
    B = Z - shift * Z.sum(axis=1, keepdims=True) if shift != 0.0 else Z
    return Z, B


def dual_value(lin0, alpha, norm_sq: float) -> float:
    """The canonical dual sum lin alpha - 1/2 ||w||^2 at ``alpha``."""
    return float(np.sum(lin0 * alpha) - 0.5 * norm_sq)


def pattern_transpose(kind: int, V: np.ndarray, y_index: np.ndarray) -> np.ndarray:
    """Row i of the result is S_i^T v_i (numpy, every row at once): the dual gradient is
    lin - pattern_transpose(K B)."""
    if kind == SIGN:
        out = -V
        rows = np.arange(V.shape[0])
        out[rows, y_index] = V[rows, y_index]
        return out
    if kind == LLW:
        return -V
    return V[np.arange(V.shape[0]), y_index][:, None] - V


def biased_terms(
    kind: int, lin0: np.ndarray, free: np.ndarray, b: np.ndarray, y_index: np.ndarray
) -> np.ndarray:
    """The dual's linear term at a fixed output bias b (F = K B + 1 b^T): the Lagrangian's
    sum_i <Z_i, b> = sum_i <alpha_i, S_i^T b> moves it to lin0 - S_i^T b on the free variables."""
    if not np.any(b):
        return lin0
    return lin0 - free * pattern_transpose(kind, np.broadcast_to(b, lin0.shape), y_index)


def state_coef(kind: int, alpha: np.ndarray, y_index: np.ndarray, c: float) -> np.ndarray:
    """The engine's coefficients [Z, Z 1] (just Z when M = I), so that its outputs are
    K state_coef."""
    Z, _ = dual_vectors(kind, alpha, y_index, c)
    if state_width(kind, c, alpha.shape[1]) == alpha.shape[1]:
        return Z
    return np.column_stack([Z, Z.sum(axis=1)])


def outputs_of_state(U: np.ndarray, kind: int, c: float, L: int) -> np.ndarray:
    """K B (N, L) from the engine's outputs U = K [Z, Z 1] (U = K Z when M = I)."""
    shift = output_shift(kind, c, L)
    if shift == 0.0:
        return U[:, :L]
    return U[:, :L] - shift * U[:, L:]
