"""Transfer steps: two patterns' dual variables moved together, the multiclass pair step.

Coordinate descent one pattern at a time is slow where two patterns' kernel columns are nearly
equal (wide kernels, large C): their variables are strongly coupled, and alternating exact steps
on one and then the other converge at a rate of about (K_iq)^2 / (K_ii K_qq) per pass.  libsvm's
binary solver escapes this by moving two variables at once along e_i - e_q, the second chosen by
second-order working-set selection (Fan, Chen and Lin, JMLR 6, 2005); for SVMs without an offset
the same pair steps pay off (Steinwart, Hush and Scovel, JMLR 12, 2011).  The multiclass form
moves pattern i's coefficient row Z_i by u and pattern q's by -u:

    Z_i += u,  Z_q -= u,  so  K B changes by (K[:, i] - K[:, q]) (u M)^T,

with curvature kd = K_ii + K_qq - 2 K_iq (an offset added to every kernel entry cancels) times
pattern i's own structure.  In pattern i's variables, delta = Delta alpha_i, and u = S_i delta;
pattern q's variables change by -P delta, where P is diagonal with P_j = +-1 (S_q P = S_i):

==========  ============================  ================================================
kind        partners q                    P_j
==========  ============================  ================================================
SIGN        any                           y_ij y_qj (the sign codes agree or not)
LLW         any                           1 (each own class is fixed at 0 by its box)
WW, CS      the same class (S_q = S_i)    1
==========  ============================  ================================================

(For WW and CS, patterns of different classes span different sets of Z rows: a transfer would need
sum(u) = 0 beyond a box.)  The subproblem in delta is pattern i's own, with kd for K_ii, the
gradient g_i - P g_q and the box where both patterns stay feasible, so it is solved exactly by
``patterns.box_rank_one`` -- or, for CS, whose budgets sum_r alpha_r <= C bound sum(delta) from
both sides, by ``budget_transfer``.

The partner is chosen among pattern i's nearest patterns in kernel distance (found from i's
kernel column the first time i steps, ``nearest_partners``) by second-order selection: the exact
gain of moving one variable pair (i, j), (q, j), j the class of i's largest KKT violation, as
libsvm's selection does for a pair of variables (``best_partner``).  The engine then takes
whichever gains more, the transfer or pattern i's own step.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from msvm.fast.patterns import CS, LLW, SIGN, WW, box_rank_one, row_shift, sort_small_pairs


@nb.njit(cache=True, inline="always")
def sign_code(j, y):
    """y_ij of ISVM (3.1): +1 for the pattern's own class, -1 otherwise."""
    return 1.0 if j == y else -1.0


@nb.njit(cache=True, inline="always")
def partner_sign(kind, j, y_i, y_q):
    """P_j: pattern q's variable j moves by -P_j delta_j when pattern i's moves by delta_j."""
    if kind == SIGN:
        return sign_code(j, y_i) * sign_code(j, y_q)
    return 1.0


@nb.njit(cache=True, inline="always")
def admissible(kind, y_i, y_q):
    """Whether patterns of classes y_i and y_q can exchange their coefficients (table above)."""
    return (kind != WW and kind != CS) or y_i == y_q


@nb.njit(cache=True, inline="always")
def variable_gradient(kind, U, q, j, y_q, shift, lin):
    """The dual gradient of pattern q's variable j from the engine's outputs
    (``patterns.pattern_gradient`` for one variable)."""
    s = row_shift(U, q, shift, lin.shape[1])
    if kind == SIGN:
        u = U[q, j] - s
        return lin[q, j] - u if j == y_q else lin[q, j] + u
    if kind == LLW:
        return lin[q, j] + (U[q, j] - s)
    return lin[q, j] - (U[q, y_q] - U[q, j])


@nb.njit(cache=True, inline="always")
def pair_interval(a_i, h_i, a_q, h_q, sign):
    """The interval of delta keeping alpha_i + delta in [0, h_i] and alpha_q - sign delta in
    [0, h_q]."""
    if sign > 0.0:
        return max(-a_i, a_q - h_q), min(h_i - a_i, a_q)
    return max(-a_i, -a_q), min(h_i - a_i, h_q - a_q)


@nb.njit(cache=True, inline="always")
def clipped_gain(b, a, lo, hi):
    """Gain of the best d in [lo, hi] for b d - a d^2 / 2 (a >= 0; lo <= 0 <= hi)."""
    if a > 0.0:
        d = min(max(b / a, lo), hi)
    else:
        d = hi if b > 0.0 else (lo if b < 0.0 else 0.0)
    return d * (b - 0.5 * a * d)


# Partner lists: row i holds the PARTNERS nearest patterns to i in kernel distance (admissible
# ones only), found from i's column the first time i steps; NOT_FOUND marks a row not yet filled,
# -1 an empty slot.  A full pass over every pattern at every step, libsvm's way, cost 7 us a step
# on digits (N = 1 257) against 1.5 us for the step itself, and chose no better partners than
# the 32 nearest (a numpy prototype: epochs within 10 %).
PARTNERS = 32
NOT_FOUND = -2
REACH = 0.5


def partner_table(n_patterns: int) -> np.ndarray:
    """An empty table of partner lists (``nearest_partners`` fills a row on demand)."""
    table = np.full((n_patterns, PARTNERS), -1, dtype=np.int64)
    table[:, 0] = NOT_FOUND
    return table


@nb.njit(cache=True, _nrt=False)
def nearest_partners(i, col, offset, kdiag, y_index, kind, row, dist):
    """Fill ``row`` with the admissible patterns nearest to pattern i in kernel distance
    kd_iq = kdiag_i + kdiag_q - 2 (K_iq + offset), nearest first (-1 past the last), from i's
    column ``col``: one pass keeping the row.size nearest, the farthest kept replaced, then a
    stable insertion sort of the kept ones; ``dist`` (row.size) is work space."""
    k = row.size
    for p in range(k):
        dist[p], row[p] = np.inf, -1
    worst, at = np.inf, 0  # the largest distance kept (inf while a slot is empty), its slot
    y_i = y_index[i]
    for q in range(col.size):
        if q == i or not admissible(kind, y_i, y_index[q]):
            continue
        kd = kdiag[i] + kdiag[q] - 2.0 * (col[q] + offset)
        if kd > REACH * (kdiag[i] + kdiag[q]):  # K_iq too small for the pair to be coupled
            continue
        if kd < worst or row[at] < 0:
            dist[at], row[at] = kd, q
            at = np.argmax(dist)
            worst = dist[at]
    for p in range(1, k):  # (32 entries, once a pattern and run)
        key, value, r = dist[p], row[p], p
        while r > 0 and dist[r - 1] > key:
            dist[r], row[r] = dist[r - 1], row[r - 1]
            r -= 1
        dist[r], row[r] = key, value


@nb.njit(cache=True, inline="always")
def best_partner(i, j, g_ij, k, g_ik, col, offset, U, alpha, hi, lin, y_index, kdiag, kind, c,
                 shift, partners, dist):  # fmt: skip
    """The partner of pattern i whose transfer in class j alone gains most, and that gain (-1, 0
    if none gains): second-order selection, as libsvm's for a pair of variables, with the exact
    clipped gain of moving the pair (i, j), (q, j), over the q on i's partner list (j: the class
    of i's largest KKT violation, g_ij its gradient).  For CS, whose budgets often bind, also the
    move of mass from class k to j in i and back in q (k >= 0: the class holding mass with the
    smallest gradient, g_ik), which keeps both budgets.

    ``kdiag`` are the step curvatures (kernel diagonal plus ``offset``); the curvature of the
    pair is kd = kdiag_i + kdiag_q - 2 (K_iq + offset) times pattern i's Hessian entry h_jj.
    ``dist``: ``nearest_partners``' work space, for i's first transfer.
    """
    L = alpha.shape[1]
    row = partners[i]
    if row[0] == NOT_FOUND:
        nearest_partners(i, col, offset, kdiag, y_index, kind, row, dist)
    y_i = y_index[i]
    if kind == SIGN:
        h_jj = 1.0 - c
    elif kind == LLW:
        h_jj = 1.0 - 1.0 / L
    else:
        h_jj = 2.0
    a_i, h_i = alpha[i, j], hi[i, j]
    room_i = 0.0  # CS: pattern i's budget left, sum_r (hi_r - alpha_r) capped by C - sum alpha
    if kind == CS:
        used, budget = 0.0, 0.0
        for r in range(L):
            used += alpha[i, r]
            budget = max(budget, hi[i, r])
        room_i = budget - used
    best, best_gain = -1, 0.0
    for p in range(row.size):
        q = row[p]
        if q < 0:
            break
        y_q = y_index[q]
        sign = partner_sign(kind, j, y_i, y_q)
        lo, up = pair_interval(a_i, h_i, alpha[q, j], hi[q, j], sign)
        kd = max(kdiag[i] + kdiag[q] - 2.0 * (col[q] + offset), 0.0)
        g_qj = variable_gradient(kind, U, q, j, y_q, shift, lin)
        if kind == CS:
            used, budget = 0.0, 0.0
            for r in range(L):
                used += alpha[q, r]
                budget = max(budget, hi[q, r])
            if k >= 0:  # mass moved from class k to j in i and back in q: both budgets kept
                lo_k, up_k = pair_interval(alpha[i, k], hi[i, k], alpha[q, k], hi[q, k], 1.0)
                lo_jk, up_jk = max(lo, -up_k), min(up, -lo_k)
                if lo_jk < up_jk:
                    b = (g_ij - g_ik) - (g_qj - variable_gradient(kind, U, q, k, y_q, shift, lin))
                    gain = clipped_gain(b, 2.0 * kd, lo_jk, up_jk)
                    if gain > best_gain:
                        best, best_gain = q, gain
            # the pair in class j alone moves mass between the two budgets
            lo, up = max(lo, used - budget), min(up, room_i)
        if lo >= up:
            continue
        gain = clipped_gain(g_ij - sign * g_qj, kd * h_jj, lo, up)
        if gain > best_gain:
            best, best_gain = q, gain
    return best, best_gain


@nb.njit(cache=True, _nrt=False)
def _clipped_sum(n, a, lo, hi, s):
    total = 0.0
    for p in range(n):
        total += min(max(a[p] - s, lo[p]), hi[p])
    return total


@nb.njit(cache=True, _nrt=False)
def sum_clip_root(n, a, lo, hi, target, work):
    """s with sum_p clip(a_p - s, lo_p, hi_p) = target (a non-increasing, piecewise-linear
    function of s; the target lies between sum lo and sum hi).  ``work`` has >= 4n entries.

    A bisection over the sorted breakpoints, the sum evaluated directly at each, finds the
    segment; there the entries unclipped on all of it, F, give s = (sum_F a_p + sum of the
    others' bounds - target) / |F|, free of the breakpoints' size (a walk from the first
    breakpoint by slopes had carried bounds of 1e15 into s as errors of 1-40)."""
    for p in range(n):  # breakpoints: below a_p - hi_p the entry is hi_p, above a_p - lo_p lo_p
        work[2 * p], work[2 * p + 1] = a[p] - hi[p], a[p] - lo[p]
    m = 2 * n
    ts = work[2 * n : 2 * n + m]
    sort_small_pairs(work[:m], work[:m], ts, ts)
    if _clipped_sum(n, a, lo, hi, ts[0]) <= target:
        return ts[0]
    first, last = 1, m  # the first breakpoint where the sum is <= target (m: none)
    while first < last:
        middle = (first + last) // 2
        if _clipped_sum(n, a, lo, hi, ts[middle]) <= target:
            last = middle
        else:
            first = middle + 1
    if first == m:
        return ts[m - 1]
    left, right = ts[first - 1], ts[first]
    total, free = -target, 0
    for p in range(n):
        if a[p] - hi[p] <= left and a[p] - lo[p] >= right:  # unclipped on [left, right]
            total += a[p]
            free += 1
        else:
            total += hi[p] if a[p] - hi[p] >= right else lo[p]
    if free == 0:  # the sum is the target on the whole segment
        return left
    return min(max(total / free, left), right)


@nb.njit(cache=True, _nrt=False)
def budget_transfer(n, g, k, lo, hi, lo_sum, hi_sum, ones, delta, work):
    """Exactly maximise g.d - k/2 (||d||^2 + (1.d)^2) over lo <= d <= hi and
    lo_sum <= 1.d <= hi_sum (both boxes contain 0): a CS transfer, where pattern i's budget
    bounds sum(d) from above and pattern q's from below.

    Without the sum's bounds this is ``box_rank_one`` with c = -1.  If its sum falls outside,
    the bound it crosses binds (the objective is concave along the sum) and the KKT conditions
    give d_p = clip(g_p / k - s, lo_p, hi_p) with s fixed by sum(d) = the bound.  ``work`` has
    >= 8n entries.
    """
    box_rank_one(n, g, k, -1.0, ones, lo, hi, delta, work)
    total = 0.0
    for p in range(n):
        total += delta[p]
    if lo_sum <= total <= hi_sum or k <= 0.0:
        if k <= 0.0 and not lo_sum <= total <= hi_sum:  # linear: no exact step here
            for p in range(n):
                delta[p] = 0.0
        return
    target = hi_sum if total > hi_sum else lo_sum
    a = work[4 * n : 5 * n]
    for p in range(n):
        a[p] = g[p] / k
    s = sum_clip_root(n, a, lo, hi, target, work)
    total, free = 0.0, 0
    for p in range(n):
        delta[p] = min(max(a[p] - s, lo[p]), hi[p])
        total += delta[p]
        free += lo[p] < delta[p] < hi[p]
    # The interpolated root leaves sum(d) off the bound by rounding (~1e-10 here), and a budget
    # short of C by that much counts as slack (``patterns.budget_levels``): spread the residue
    # over the unclipped entries so that the binding budget is met to the last bit.
    if free > 0:
        share = (target - total) / free
        for p in range(n):
            if lo[p] < delta[p] < hi[p]:
                delta[p] = min(max(delta[p] + share, lo[p]), hi[p])


@nb.njit(cache=True, inline="always")
def quadratic_gain(n, g, d, k, ch, v):
    """g.d - k/2 (||d||^2 - ch (v.d)^2): a step's exact dual gain on a pattern's structure."""
    lin, sq, vd = 0.0, 0.0, 0.0
    for p in range(n):
        lin += g[p] * d[p]
        sq += d[p] * d[p]
        vd += v[p] * d[p]
    return lin - 0.5 * k * (sq - ch * vd * vd)


@nb.njit(cache=True, inline="always")
def transfer_step(i, q, col, offset, U, alpha, hi, lin, y_index, kdiag, kind, c, shift, work):
    """The exact transfer between patterns i and q (module docstring), every class of both.

    Work arrays: ``work`` = (g_i, g_q, lo, hi, v, delta, scratch (8L), ones, ...); returns its
    dual gain (0 if it cannot move) with delta, pattern i's change, in work[5].
    """
    g_i, g_q, lo, up, v, delta, scratch, ones, _ = work
    L = alpha.shape[1]
    y_i, y_q = y_index[i], y_index[q]
    for j in range(L):
        g_i[j] = variable_gradient(kind, U, i, j, y_i, shift, lin)
        g_q[j] = variable_gradient(kind, U, q, j, y_q, shift, lin)
    kd = max(kdiag[i] + kdiag[q] - 2.0 * (col[q] + offset), 0.0)
    used_i = used_q = budget_i = budget_q = 0.0
    for j in range(L):
        sign = partner_sign(kind, j, y_i, y_q)
        lo[j], up[j] = pair_interval(alpha[i, j], hi[i, j], alpha[q, j], hi[q, j], sign)
        if lo[j] > up[j]:  # a bound met only up to rounding: no room either way
            lo[j] = up[j] = 0.0
        g_i[j] -= sign * g_q[j]  # the gradient in delta
        used_i += alpha[i, j]
        used_q += alpha[q, j]
        budget_i, budget_q = max(budget_i, hi[i, j]), max(budget_q, hi[q, j])
    if kind == SIGN:
        for j in range(L):
            v[j] = sign_code(j, y_i)
        ch = c
    elif kind == LLW:
        for j in range(L):
            v[j] = 1.0
        ch = 1.0 / L
    else:
        for j in range(L):
            v[j] = 1.0
        ch = -1.0
    if kind == CS:  # sum(alpha_i + d) <= C and sum(alpha_q - d) <= C
        lo_sum, hi_sum = min(used_q - budget_q, 0.0), max(budget_i - used_i, 0.0)
        budget_transfer(L, g_i, kd, lo, up, lo_sum, hi_sum, ones, delta, scratch)
    else:
        box_rank_one(L, g_i, kd, ch, v, lo, up, delta, scratch)
    return quadratic_gain(L, g_i, delta, kd, ch, v)


@nb.njit(cache=True)
def transfer_arrays(L):
    """``transfer_step``'s work arrays, and ``nearest_partners``' (PARTNERS) last."""
    return (
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(8 * L),
        np.ones(L),
        np.empty(PARTNERS),
    )


@nb.njit(cache=True, inline="always")
def apply_transfer(i, q, delta, alpha, hi, y_index, kind):
    """alpha_i += delta, alpha_q -= P delta, each kept in its box (rounding)."""
    y_i, y_q = y_index[i], y_index[q]
    for j in range(alpha.shape[1]):
        d = delta[j]
        if d != 0.0:
            alpha[i, j] = min(max(alpha[i, j] + d, 0.0), hi[i, j])
            sign = partner_sign(kind, j, y_i, y_q)
            alpha[q, j] = min(max(alpha[q, j] - sign * d, 0.0), hi[q, j])


@nb.njit(cache=True, inline="always")
def add_difference(U, col_i, col_q, dS):
    """U += (col_i - col_q) dS^T: the outputs after Z_i += dS and Z_q -= dS (an offset on every
    kernel entry cancels)."""
    for j in range(U.shape[1]):
        b = dS[j]
        if b != 0.0:
            for n in range(U.shape[0]):
                U[n, j] += (col_i[n] - col_q[n]) * b
