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

The engine keeps U = K [Z, Z 1] (``state_coef``) and reads K B = K Z - s (K Z 1) 1^T for
M = I - s 11^T (``pattern_outputs``); for M = I (WW, CS) U = K Z = K B has no sum column.
"""

from __future__ import annotations

import numba as nb
import numpy as np

SIGN, LLW, WW, CS = 0, 1, 2, 3


@nb.njit(cache=True, inline="always")
def pattern_gradient(kind: int, u, y: int, lin, i: int, g):
    """g = lin_i - S_i^T u, with u pattern i's row of K B: the dual gradient in its variables.

    The pattern-wise functions take the (N, L) arrays and a row index, not row views: a view
    costs numba two atomic reference-count updates, a third of a visit on the linear path.
    """
    L = g.size
    if kind == SIGN or kind == LLW:  # S_i = diag(y_i) or -I
        for j in range(L):
            g[j] = lin[i, j] + u[j]
        if kind == SIGN:
            g[y] = lin[i, y] - u[y]
    else:
        u_y = u[y]
        for j in range(L):
            g[j] = lin[i, j] - (u_y - u[j])


@nb.njit(cache=True)
def output_shift(kind: int, c: float, L: int) -> float:
    """s with M = I - s 11^T (SIGN: the inhibition c; LLW: 1/L; WW, CS: M = I, s = 0)."""
    if kind == SIGN:
        return c
    if kind == LLW:
        return 1.0 / L
    return 0.0


def state_width(kind: int, c: float, L: int) -> int:
    """Columns of the engine's outputs: L, plus the row sums of K Z when M != I."""
    return L + (output_shift(kind, c, L) != 0.0)


@nb.njit(cache=True)
def state_change(kind: int, delta, y: int, shift: float, dS):
    """dS = the change of row i of [Z, Z 1] for a change delta of pattern i's variables.

    The engine keeps U = K [Z, Z 1] rather than K B = K Z M: with M = I - s 11^T, a step changes
    only the outputs of the classes that moved (and the sum column), O(N (moved + 1)) instead of
    O(N L).  dS has L + 1 entries; the last is the row sum when ``shift`` != 0, else 0.
    """
    L = delta.size
    total = 0.0
    for j in range(L):
        if kind == SIGN:
            dS[j] = delta[j] if j == y else -delta[j]
        else:
            dS[j] = -delta[j]
        total += dS[j]
    if kind == WW or kind == CS:
        dS[y] -= total  # e_y 1^T delta - delta (delta_y = 0): sums to 0
        total = 0.0
    dS[L] = total if shift != 0.0 else 0.0


@nb.njit(cache=True, inline="always")
def pattern_outputs(U, i: int, shift: float, u):
    """u = row i of K B from the engine's row U_i = [(K Z)_i, (K Z 1)_i]: u_j = U_ij - s U_iL."""
    s = shift * U[i, u.size] if shift != 0.0 else 0.0
    for j in range(u.size):
        u[j] = U[i, j] - s


@nb.njit(cache=True)
def hessian_structure(kind: int, y: int, c: float, L: int, v):
    """Fill v and return c such that the pattern Hessian is K_ii (I - c v v^T)."""
    for j in range(L):
        v[j] = (1.0 if j == y else -1.0) if kind == SIGN else 1.0
    if kind == SIGN:
        return c
    if kind == LLW:
        return 1.0 / L
    return -1.0


@nb.njit(cache=True)
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


@nb.njit(cache=True)
def _step_at(t, g, inv_k, c, v, lo, hi, delta):
    """delta_j(t) = clip(g_j / k + c v_j t, lo_j, hi_j); returns sum_j v_j delta_j(t) - t."""
    total = 0.0
    for j in range(g.size):
        d = min(max(g[j] * inv_k + c * v[j] * t, lo[j]), hi[j])
        delta[j] = d
        total += v[j] * d
    return total - t


@nb.njit(cache=True)
def box_rank_one(g, k, c, v, lo, hi, delta, work):
    """Exactly maximise g.d - k/2 (||d||^2 - c (v.d)^2) over lo <= d <= hi (needs c ||v||^2 <= 1).

    With t = v.d fixed the problem separates, d_j(t) = clip(g_j / k + c v_j t, lo_j, hi_j), and
    the optimum is the root of phi(t) = v.d(t) - t, a continuous non-increasing piecewise-linear
    function.  Variable j is unclipped between its two breakpoints, where it adds c v_j^2 to
    phi's slope (-1 outside every such interval).  The breakpoints are sorted once, with the
    slope change at each, and phi is followed from the leftmost by its slope: O(L log L)
    arithmetic instead of one O(L) evaluation of phi per breakpoint.  ``work`` is a work array
    of size >= 8L (breakpoints and their slope changes, unsorted and sorted).
    """
    L = g.size
    if k <= 0.0:  # zero kernel diagonal: the objective is linear in d
        for j in range(L):
            delta[j] = hi[j] if g[j] > 0 else (lo[j] if g[j] < 0 else 0.0)
        return
    inv_k, m = 1.0 / k, 0
    if c != 0.0:
        for j in range(L):
            if v[j] != 0.0 and hi[j] > lo[j]:
                a, q = g[j] * inv_k, 1.0 / (c * v[j])
                t_lo, t_hi = (lo[j] - a) * q, (hi[j] - a) * q
                work[m], work[m + 1] = min(t_lo, t_hi), max(t_lo, t_hi)
                work[2 * L + m], work[2 * L + m + 1] = c * v[j] * v[j], -c * v[j] * v[j]
                m += 2
    if m == 0:  # c = 0, or no variable with both room and a share in v.d: phi's root is t = 0
        _step_at(0.0, g, inv_k, c, v, lo, hi, delta)
        return
    ts, slopes = work[4 * L : 4 * L + m], work[6 * L : 6 * L + m]
    sort_small_pairs(work[:m], work[2 * L : 2 * L + m], ts, slopes)
    phi = _step_at(ts[0], g, inv_k, c, v, lo, hi, delta)
    if phi <= 0.0:  # root left of every breakpoint, where phi has slope -1
        _step_at(ts[0] + phi, g, inv_k, c, v, lo, hi, delta)
        return
    slope = -1.0
    for s in range(m - 1):
        slope += slopes[s]
        phi_next = phi + slope * (ts[s + 1] - ts[s])
        if phi_next <= 0.0:  # the root is on this segment
            drop = phi - phi_next
            t = ts[s] + (phi * (ts[s + 1] - ts[s]) / drop if drop > 0.0 else 0.0)
            _step_at(t, g, inv_k, c, v, lo, hi, delta)
            return
        phi = phi_next
    _step_at(ts[m - 1] + phi, g, inv_k, c, v, lo, hi, delta)  # right of every breakpoint, slope -1


@nb.njit(cache=True)
def budget_rank_one(g, k, alpha, hi, i, delta, work):
    """Exactly maximise g.d - k/2 (||d||^2 + (1.d)^2) over alpha + d >= 0, sum(alpha + d) <= C.

    The KKT conditions give alpha_r + d_r = max(0, a_r - tau) with a_r = alpha_r + g_r / k, where
    either the budget is slack and tau solves S(tau) - s0 = tau (S(tau) = sum max(0, a_r - tau),
    s0 = sum alpha), or it binds and tau solves S(tau) = C.  Both are found on the sorted a_r, as
    in LIBLINEAR's Crammer-Singer sub-solver, for pattern i (row i of alpha and hi).  Variables
    with hi = 0 stay fixed at 0; ``work`` is a work array of size >= 2L.
    """
    m, s0, budget = 0, 0.0, 0.0
    for j in range(g.size):
        delta[j] = 0.0
        if hi[i, j] > 0.0:
            m += 1
            s0 += alpha[i, j]
            budget = max(budget, hi[i, j])
    if m == 0:
        return
    if k <= 0.0:  # linear objective: the whole budget on the best variable, if it gains
        best = -1
        for j in range(g.size):
            if hi[i, j] > 0.0 and (best < 0 or g[j] > g[best]):
                best = j
        for j in range(g.size):
            if hi[i, j] > 0.0:
                delta[j] = -alpha[i, j]
        if g[best] > 0.0:
            delta[best] += budget
        return
    p = 0
    for j in range(g.size):
        if hi[i, j] > 0.0:
            work[p] = -(alpha[i, j] + g[j] / k)
            p += 1
    a = work[m : 2 * m]
    sort_small_pairs(work[:m], work[:m], a, a)  # ascending in -a_r
    for p in range(m):
        a[p] = -a[p]  # a_r in descending order
    # Budget slack: on the segment with the top p values above tau, tau = (sum_p a - s0) / (p+1).
    tau, total = -s0, 0.0
    for p in range(m + 1):
        if p > 0:
            total += a[p - 1]
        t = (total - s0) / (p + 1)
        upper = a[p - 1] if p > 0 else np.inf
        lower = a[p] if p < m else -np.inf
        if lower <= t < upper:
            tau = t
            break
    used = 0.0
    for p in range(m):
        used += max(0.0, a[p] - tau)
    if used > budget:  # the budget binds: S(tau) = C on the segment with p values above tau
        total = 0.0
        for p in range(1, m + 1):
            total += a[p - 1]
            t = (total - budget) / p
            lower = a[p] if p < m else -np.inf
            if t >= lower:
                tau = t
                break
    for j in range(g.size):
        if hi[i, j] > 0.0:
            delta[j] = max(0.0, alpha[i, j] + g[j] / k - tau) - alpha[i, j]


@nb.njit(cache=True, inline="always")
def budget_levels(g, alpha, hi, i):
    """(g_max, g_min, slack_empty) of a budget-constrained pattern (CS).

    With the slack alpha_0 = C - sum_r alpha_r (gradient 0) the variables and the slack share the
    mass C.  g_max is the largest gradient over all of them (the slack's 0 always counts), g_min
    the smallest over those holding mass (inf if none); a budget met up to rounding leaves the
    slack empty.
    """
    budget, used = 0.0, 0.0
    g_max, g_min = 0.0, np.inf
    for j in range(g.size):  # branch-free (a fixed variable has hi = alpha = 0)
        budget = max(budget, hi[i, j])
        used += alpha[i, j]
        g_max = max(g_max, g[j] if hi[i, j] > 0.0 else 0.0)
        g_min = min(g_min, g[j] if alpha[i, j] > 0.0 else np.inf)
    slack_empty = used >= budget * (1.0 - 1e-12)
    if not slack_empty:
        g_min = min(g_min, 0.0)
    return g_max, g_min, slack_empty


@nb.njit(cache=True, inline="always")
def budget_violation(g, alpha, hi, i):
    """KKT violation of a budget-constrained pattern (CS): optimality is g_max <= g_min.

    This is LIBLINEAR's stopping quantity maxG - minG (Solver_MCSVM_CS) on the same scale: its
    alpha^m_i is -alpha_im for m != y_i and sum_r alpha_ir for m = y_i, its G_m - G_{y_i} our g_m.
    """
    g_max, g_min, _ = budget_levels(g, alpha, hi, i)
    return max(g_max - g_min, 0.0) if g_min < np.inf else g_max


@nb.njit(cache=True, inline="always")
def pattern_violation(kind, g, alpha, hi, i):
    """Largest KKT violation among pattern i's variables (projected gradient; CS: see above)."""
    if kind == CS:
        return budget_violation(g, alpha, hi, i)
    worst = 0.0
    for j in range(g.size):  # branch-free: alpha's position in its box varies at random
        up = g[j] if alpha[i, j] < hi[i, j] else 0.0  # room to increase
        down = g[j] if alpha[i, j] > 0.0 else 0.0  # room to decrease
        worst = max(worst, max(up, 0.0) - min(down, 0.0))
    return worst


@nb.njit(cache=True)
def budget_is_shrinkable(g, alpha, hi, i, threshold):
    """LIBLINEAR's rule (Solver_MCSVM_CS::be_shrunk) for a whole CS pattern.

    An entry -- a variable or the slack -- without mass whose gradient lies more than
    ``threshold`` below g_min would not receive mass in a step; the pattern is set aside when at
    most one entry is not of that kind (one entry alone cannot move: the mass is fixed).
    """
    _, g_min, slack_empty = budget_levels(g, alpha, hi, i)
    limit = g_min - threshold
    movable = 0 if (slack_empty and 0.0 < limit) else 1
    for j in range(g.size):
        if hi[i, j] > 0.0 and (alpha[i, j] > 0.0 or g[j] >= limit):
            movable += 1
    return movable <= 1


@nb.njit(cache=True, inline="always")
def pattern_is_shrinkable(kind, g, alpha, hi, i, threshold):
    """True when pattern i's variables are not expected to move in the next epochs.

    Box-constrained kinds: every variable sits at a bound with its gradient pointing out by more
    than ``threshold``.  CS: see ``budget_is_shrinkable``.
    """
    if kind == CS:
        return budget_is_shrinkable(g, alpha, hi, i, threshold)
    for j in range(g.size):
        if hi[i, j] <= 0.0:
            continue
        if alpha[i, j] <= 0.0:
            if g[j] > -threshold:
                return False
        elif alpha[i, j] >= hi[i, j]:
            if g[j] < threshold:
                return False
        else:
            return False
    return True


def dual_vectors(kind: int, alpha: np.ndarray, y_index: np.ndarray, c: float):
    """Z = S alpha and B = Z M for all patterns at once (numpy)."""
    N, L = alpha.shape
    if kind == SIGN:
        Y = -np.ones((N, L))
        Y[np.arange(N), y_index] = 1.0
        Z = Y * alpha
        B = Z - c * Z.sum(axis=1, keepdims=True)
    elif kind == LLW:
        Z = -alpha
        B = Z - Z.sum(axis=1, keepdims=True) / L
    else:
        Z = -alpha.copy()
        Z[np.arange(N), y_index] += alpha.sum(axis=1)
        B = Z
    return Z, B


def state_coef(kind: int, alpha: np.ndarray, y_index: np.ndarray, c: float) -> np.ndarray:
    """The engine's coefficients [Z, Z 1] (just Z when M = I), so that U = K state_coef."""
    Z, _ = dual_vectors(kind, alpha, y_index, c)
    if state_width(kind, c, alpha.shape[1]) == alpha.shape[1]:
        return Z
    return np.column_stack([Z, Z.sum(axis=1)])


def outputs_of_state(U: np.ndarray, kind: int, c: float, L: int) -> np.ndarray:
    """K B (N, L) from the engine's outputs U = K [Z, Z 1]."""
    shift = output_shift(kind, c, L)
    return U[:, :L] - shift * U[:, L:] if shift != 0.0 else U[:, :L]
