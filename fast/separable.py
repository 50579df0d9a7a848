"""One-vs-all's dual, class by class: greedy one- and two-variable steps on a shrinking active set.

With M = I and S_i = diag(y_i) (``OneVsAllSVC``: kind SIGN with c = 0, ISVM §9) the pattern
Hessian K_ii I is diagonal and the dual separates into L binary SVM duals without bias,

    maximise  sum_i lin_il a_i - 1/2 sum_ij s_i s_j K_ij a_i a_j,   0 <= a_i <= hi_il,

with a_i = alpha_il and s_i = +1 for the patterns of class l, -1 for the others.  The pattern-wise
engine's visits gain nothing here (a pattern's L variables do not interact), so each class is
solved as libsvm solves a binary SVM, without the equality constraint of a bias: the variable
whose exact step -- the Newton step g_i / K_ii clipped to the box -- gains most (libsvm's
second-order working-set selection, for a single variable), moved together with the partner
whose exact two-variable step with it gains more still (``best_pair``, over the variables whose
kernel correlation with it is at least 0.5; Steinwart, Hush and Scovel, JMLR 12, 2011, for SVMs
without offset), with the class's outputs u = K (s a) (column l of the engine's U) kept current
on the active variables only.  Every ``SHRINK_EVERY`` steps the variables at a bound with the
gradient pointing out are set aside; when the active set meets ``tol`` the outputs of every
variable are brought up to date (one kernel column for each variable moved since) and all are
checked again.  Each step costs O(active), where a pattern step of the engine costs O(N) per
class moved.  The pair steps matter where the kernel is wide and C large: glass at C = 1000,
gamma = scale / 10 took 0.5 s with single steps and 0.03 s with pairs (SVC: 3 ms).  A class
whose steps reach the interior-point method's modelled cost for it is moved to that method's
optimum by the engine, and its steps go on from there (``DecompositionSolver._exact_class``:
where the kernel's entries are huge against C the steps alone spent the 10^7-step budget).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from msvm.fast.kernels import (
    block_rows,
    finish_column,
    get_column,
    is_lru,
    kernel_block,
    shortened_source,
    take_slot,
)

# Rows of the active-set state (one column per active variable, compacted when shrinking):
U_ROW, A_ROW, HI_ROW, LIN_ROW, SIGN_ROW, INV_K_ROW, K_ROW, GAIN_ROW, VIOL_ROW = range(9)
# Steps between two shrinking checks (a prototype on digits, whole OvA fits: every 25-100 steps
# 10.0-10.6 ms, every 200 steps 12.2 ms, never 24.5 ms).
SHRINK_EVERY = 32
# 1 / K_ii for a zero kernel diagonal: the objective is linear in that variable, and the clipped
# "Newton step" g * INV_K_ZERO goes to the bound the gradient points at (no 0 * inf = nan).
INV_K_ZERO = 1e300
# Pair steps are considered only with variables whose kernel correlation K_bp^2 / (K_bb K_pp) is
# at least PAIR_REACH (0.25: correlation 0.5, as ``transfer.REACH``): for weakly coupled pairs
# two single steps do as well, and the scan is then one comparison per variable.
PAIR_REACH = 0.25
# ... and only once a class has taken PAIRS_AFTER N single steps: a well-conditioned class is
# solved before, and there the scan costs more than it saves (vehicle, gamma = scale, C = 1:
# 26 % slower with pairs from the first step).
PAIRS_AFTER = 1
# On columns computed on demand, a class whose active set falls to COMPACT_FRACTION of its
# variables or fewer is solved on those rows alone, and a variable is set aside only when its
# gradient points out of its box by more than SHRINK_MARGIN times the largest violation
# (``solve_separable``).  Against neither (stop 35, one thread, CPU time, two alternating runs;
# make_classification with 20 features and 10 classes, and 4 000 MNIST images at cache_size=20):
# 16 000 points, C = 1: 5.8-6.6 s against 6.6-8.0 s; 8 000 points, C = 100: 10.9-14.1 against
# 23.3-26.7 s; C = 1 at 8 000 and 12 000 points and MNIST (C = 10): 0.9-1.3x, within the noise.
# (0.5, 2): 6.1-6.8 s, 12.1-13.7 s, and 1.0-1.3x slower at C = 1 (benchmarks/NOTES.md, stop 35).
COMPACT_FRACTION = 0.8
SHRINK_MARGIN = 1.0
# On dense data of PREFETCH_MIN_FEATURES features or more with columns computed on demand, a
# column that is not cached is computed with those of the next steps likely to need theirs,
# PREFETCH at a time by one BLAS product (``class_column``).  Measured (stop 35, one thread,
# alternating runs): 4 000 MNIST images (784 pixels), C = 10, cache_size=20: 3.5-3.8 s against
# 6.9-8.2 s, all 5 000 at cache_size=50 6.9-7.2 against 16.5-19.1 s, the same steps; 100
# features (8 000 points, C = 1): 8.2-9.5 against 9.1-10.5 s; 20 features (8 000-16 000 points):
# no gain or a loss (3.3-3.4 against 2.8-2.9 s at 8 000): the exponential, not the products, is
# most of a column there, and some of the batch's columns are never used.
PREFETCH, PREFETCH_MIN_FEATURES = 8, 100


@nb.njit(cache=True, fastmath=True)
def step_gains(state, m):
    """For the first m active variables: the gain of each one's exact step and its KKT violation.

    The step is d = clip(a + g / K_ii, 0, hi) - a with g = lin - s u, and it gains
    d (g - K_ii d / 2); the violation is the projected gradient.  Branch-free, so it vectorises.
    """
    u, a, hi, lin = state[U_ROW], state[A_ROW], state[HI_ROW], state[LIN_ROW]
    s, inv_k, k, gain, viol = (
        state[SIGN_ROW],
        state[INV_K_ROW],
        state[K_ROW],
        state[GAIN_ROW],
        state[VIOL_ROW],
    )
    for p in range(m):
        g = lin[p] - s[p] * u[p]
        d = min(max(a[p] + g * inv_k[p], 0.0), hi[p]) - a[p]
        gain[p] = d * (g - 0.5 * k[p] * d)
        up = g if a[p] < hi[p] else 0.0
        down = g if a[p] > 0.0 else 0.0
        viol[p] = max(up, 0.0) - min(down, 0.0)


@nb.njit(cache=True, fastmath=True)
def best_and_worst(gain, viol, m):
    """(argmax of gain[:m], max of viol[:m]), with four independent accumulators: numba does not
    vectorise a max reduction, and one dependent chain is four times slower on 1000 values."""
    b0 = b1 = b2 = b3 = 0
    g0 = g1 = g2 = g3 = -1.0
    v0 = v1 = v2 = v3 = 0.0
    m4 = m // 4 * 4
    for p in range(0, m4, 4):
        if gain[p] > g0:
            g0, b0 = gain[p], p
        if gain[p + 1] > g1:
            g1, b1 = gain[p + 1], p + 1
        if gain[p + 2] > g2:
            g2, b2 = gain[p + 2], p + 2
        if gain[p + 3] > g3:
            g3, b3 = gain[p + 3], p + 3
        v0, v1 = max(v0, viol[p]), max(v1, viol[p + 1])
        v2, v3 = max(v2, viol[p + 2]), max(v3, viol[p + 3])
    for p in range(m4, m):
        if gain[p] > g0:
            g0, b0 = gain[p], p
        v0 = max(v0, viol[p])
    for g, b in ((g1, b1), (g2, b2), (g3, b3)):
        if g > g0 or (g == g0 and b < b0):
            g0, b0 = g, b
    return b0, max(max(v0, v1), max(v2, v3))


@nb.njit(cache=True, inline="always")
def pair_box(g1, g2, q11, q12, q22, a1, a2, h1, h2):
    """Exactly maximise g1 d1 + g2 d2 - (q11 d1^2 + 2 q12 d1 d2 + q22 d2^2) / 2 over
    0 <= a + d <= h: (d1, d2, gain).  The unconstrained top if it is inside the box, else the
    best point on the four edges (on an edge the problem is one clipped Newton step)."""
    det = q11 * q22 - q12 * q12
    if det > 1e-12 * q11 * q22:
        d1 = (q22 * g1 - q12 * g2) / det
        d2 = (q11 * g2 - q12 * g1) / det
        if 0.0 <= a1 + d1 <= h1 and 0.0 <= a2 + d2 <= h2:
            return d1, d2, 0.5 * (g1 * d1 + g2 * d2)
    best1, best2, best = 0.0, 0.0, 0.0
    for edge in range(4):
        if edge < 2:
            d1 = -a1 if edge == 0 else h1 - a1
            d2 = (g2 - q12 * d1) / q22 if q22 > 0.0 else (h2 if g2 - q12 * d1 > 0 else -a2)
            d2 = min(max(a2 + d2, 0.0), h2) - a2
        else:
            d2 = -a2 if edge == 2 else h2 - a2
            d1 = (g1 - q12 * d2) / q11 if q11 > 0.0 else (h1 if g1 - q12 * d2 > 0 else -a1)
            d1 = min(max(a1 + d1, 0.0), h1) - a1
        gain = g1 * d1 + g2 * d2 - 0.5 * (q11 * d1 * d1 + 2.0 * q12 * d1 * d2 + q22 * d2 * d2)
        if gain > best:
            best1, best2, best = d1, d2, gain
    return best1, best2, best


@nb.njit(cache=True)
def best_pair(state, active, m, b, col, offset):
    """The variable whose pair step with variable b gains more than b's own step, and the two
    moves (-1, 0, 0 if none does): second-order selection over the active set with b's column,
    as libsvm's, for a dual without the equality constraint (Steinwart, Hush and Scovel, JMLR 12,
    2011)."""
    u, a, hi, lin, s, k = (state[U_ROW], state[A_ROW], state[HI_ROW], state[LIN_ROW],
                           state[SIGN_ROW], state[K_ROW])  # fmt: skip
    g_b = lin[b] - s[b] * u[b]
    best, best_gain, d1, d2 = -1, state[GAIN_ROW, b], 0.0, 0.0
    for p in range(m):
        kbp = col[active[p]] + offset
        if p == b or kbp * kbp < PAIR_REACH * k[b] * k[p]:  # weakly coupled: no better pair
            continue
        q12 = s[b] * s[p] * kbp
        e1, e2, gain = pair_box(g_b, lin[p] - s[p] * u[p], k[b], q12, k[p], a[b], a[p], hi[b],
                                hi[p])  # fmt: skip
        if gain > best_gain:
            best, best_gain, d1, d2 = p, gain, e1, e2
    return best, d1, d2


@nb.njit(cache=True)
def activate_all(state, active, u, alpha_l, hi_l, lin_l, sign, inv_k, kdiag):
    """Make every variable of the class active again, from the full arrays."""
    for n in range(active.size):
        active[n] = n
        state[U_ROW, n], state[A_ROW, n] = u[n], alpha_l[n]
        state[HI_ROW, n], state[LIN_ROW, n], state[SIGN_ROW, n] = hi_l[n], lin_l[n], sign[n]
        state[INV_K_ROW, n], state[K_ROW, n] = inv_k[n], kdiag[n]
    return active.size


@nb.njit(cache=True)
def shrink(state, active, m, alpha_l, margin):
    """Set aside the active variables at a bound with the gradient pointing out by more than
    ``margin``; returns how many stay active (moved to the front, in order).  Their values are
    written back to ``alpha_l``."""
    kept = 0
    for p in range(m):
        a, hi = state[A_ROW, p], state[HI_ROW, p]
        g = state[LIN_ROW, p] - state[SIGN_ROW, p] * state[U_ROW, p]
        if (a <= 0.0 and g < -margin) or (a >= hi and g > margin):
            alpha_l[active[p]] = a
            continue
        active[kept] = active[p]
        for row in range(K_ROW + 1):
            state[row, kept] = state[row, p]
        kept += 1
    return kept


@nb.njit(cache=True)
def sync_outputs(source, offset, u, moved, touched, batch):
    """u += (K + offset) applied to the coefficient changes accumulated since the last sync, a
    column at a time in ``touched``'s order whatever the cache holds (a thread has a share of
    it); when ``batch`` is given (not None), a missing column is computed by ``batch_columns``
    with the next missing ones, which stay cached until they are added."""
    for t in range(touched.size):
        n = touched[t]
        if batch is not None:  # (pruned by numba when None: a fit without batches compiles none)
            slot_of, wanted = source[8], batch[0]
            if slot_of[n] < 0:
                k, size = 0, min(PREFETCH, source[9].size)
                for q in range(t, touched.size):
                    if slot_of[touched[q]] < 0:
                        wanted[k] = touched[q]
                        k += 1
                        if k == size:
                            break
                batch_columns(source, k, batch)
        add_column_to(source, offset, u, moved, n)


@nb.njit(cache=True, inline="always")
def add_column_to(source, offset, u, moved, n):
    col, c = get_column(source, n), moved[n]
    for q in range(u.size):
        u[q] += c * (col[q] + offset)
    moved[n] = 0.0


def batched(source) -> bool:
    """Whether a class on ``source`` computes its columns in batches: dense data of
    PREFETCH_MIN_FEATURES features or more, columns on demand (not the cache's size: a thread
    has a share of it, and the fit must be the same)."""
    return source[3].shape[0] >= PREFETCH_MIN_FEATURES and is_lru(source)


def column_batch(source):
    """``batch_columns``'s work arrays for a class on ``source`` (wanted, their rows of X, the
    product, the gains), or None when its columns are computed one by one (``batched``): with
    None numba compiles none of the batched code, a third of a first fit's compile time."""
    if not batched(source):
        return None
    N, d = source[8].size, source[3].shape[0]
    return (np.empty(PREFETCH, dtype=np.int64), np.empty((PREFETCH, d)), np.empty((PREFETCH, N)),
            np.empty(PREFETCH))  # fmt: skip


@nb.njit(cache=True)
def batch_columns(source, k, batch):
    """The columns of batch[0][:k] (distinct, not cached, k at most the cache's slots) as rows of
    one BLAS product X_B X^T of fixed height PREFETCH (padded with the first), finished into
    least recently used slots.  An OpenBLAS row of such a product has the same bits whatever the
    other rows and columns of the product (stop 35: Haswell kernel, heights 8 and 64, N = 500-12
    000, d = 8-784), so a column is the same whichever batch computed it -- and a fit the same
    whatever its cache."""
    wanted, rows, dots = batch[:3]
    XT, sq_norms, params = source[3], source[4], source[5]
    cache, _, _, last_used, clock = source[7:12]
    kind, gamma, degree, coef0 = int(params[0]), params[1], int(params[2]), params[3]
    for r in range(PREFETCH):
        i = wanted[r] if r < k else wanted[0]
        for f in range(XT.shape[0]):
            rows[r, f] = XT[f, i]
    np.dot(rows, XT, dots)
    for r in range(k - 1, -1, -1):  # wanted[0] last: the most recently used
        i = wanted[r]
        slot = take_slot(source, i)
        finish_column(dots[r], cache[slot], sq_norms, i, kind, gamma, degree, coef0)
        clock[0] += 1
        last_used[slot] = clock[0]


@nb.njit(cache=True)
def class_column(source, n, state, active, m, batch):
    """Column n for a step; when it is not cached (and ``batch`` is not None), computed together
    with the columns, not cached either, of the PREFETCH - 1 active variables whose steps gain
    most (``batch_columns``): they are likely the next steps'."""
    slot_of = source[8]
    if batch is not None and slot_of[n] < 0:
        wanted, top, gain = batch[0], batch[3], state[GAIN_ROW]
        size = min(PREFETCH, source[9].size)  # (the batch stays cached)
        wanted[0], k, low = n, np.int64(1), 0  # low: the least gain among wanted[1:k]; np.int64:
        # a literal 1 compiled batch_columns twice (benchmarks/scale.py specialisations)
        for p in range(m):
            i = active[p]
            if slot_of[i] >= 0 or i == n or gain[p] <= 0.0:
                continue
            if k < size:
                wanted[k], top[k] = i, gain[p]
                k += 1
            elif gain[p] > top[low]:
                wanted[low], top[low] = i, gain[p]
            else:
                continue
            if k == size:
                low = 1
                for r in range(2, size):
                    if top[r] < top[low]:
                        low = r
        batch_columns(source, k, batch)
    return get_column(source, n)


@nb.njit(cache=True, nogil=True)  # classes run on threads (DecompositionSolver._run_separable)
def solve_class(source, offset, u, alpha_l, hi_l, lin_l, sign, kdiag, tol, max_steps, shrinking,
                compact_at, shrink_margin, moved, active, batch):  # fmt: skip
    """Greedy steps on one class's binary dual until every KKT violation is at most ``tol``.

    ``u`` (the class's outputs, (K + offset) (s a)) and ``alpha_l`` are updated in place.  Returns
    (steps, largest violation, -1); stops early after ``max_steps`` steps or when no step gains.
    ``moved`` (zeros, length N) accumulates each variable's coefficient change s d since ``u`` was
    last brought up to date.  When shrinking leaves at most ``compact_at`` variables active (-1:
    never) it returns (steps, inf, m) at once, the m active variables in ``active[:m]`` with their
    outputs current in ``u`` and the others' outputs short of ``moved`` (``solve_separable``).
    ``batch``: ``column_batch(source)``.
    """
    N = u.size
    inv_k = np.empty(N)
    for n in range(N):
        inv_k[n] = 1.0 / (kdiag[n] + offset) if kdiag[n] + offset > 0.0 else INV_K_ZERO
    k_full = kdiag + offset
    state = np.empty((VIOL_ROW + 1, N))
    touched, is_touched = np.empty(N, dtype=np.int64), np.zeros(N, dtype=np.bool_)
    m = activate_all(state, active, u, alpha_l, hi_l, lin_l, sign, inv_k, k_full)
    steps, n_touched, worst = 0, 0, np.inf
    while True:
        step_gains(state, m)
        best, worst = best_and_worst(state[GAIN_ROW], state[VIOL_ROW], m)
        stuck = state[GAIN_ROW, best] <= 0.0 if m > 0 else True
        if worst <= tol or stuck or steps >= max_steps:
            for p in range(m):
                alpha_l[active[p]] = state[A_ROW, p]
            sync_outputs(source, offset, u, moved, touched[:n_touched], batch)
            is_touched[:] = False
            n_touched = 0
            if steps >= max_steps and m < N:  # out of steps: the set-aside variables count too
                m = activate_all(state, active, u, alpha_l, hi_l, lin_l, sign, inv_k, k_full)
                step_gains(state, m)
                _, worst = best_and_worst(state[GAIN_ROW], state[VIOL_ROW], m)
            if m == N or steps >= max_steps:
                return steps, worst, -1
            m = activate_all(state, active, u, alpha_l, hi_l, lin_l, sign, inv_k, k_full)
            continue
        n = active[best]
        col = class_column(source, n, state, active, m, batch)
        partner, d_best, d_partner = -1, 0.0, 0.0
        if steps >= PAIRS_AFTER * N:  # a class that takes this long is ill-conditioned
            partner, d_best, d_partner = best_pair(state, active, m, best, col, offset)
        for which in range(2 if partner >= 0 else 1):
            v = best if which == 0 else partner
            d = d_best if which == 0 else d_partner
            if partner < 0:
                a = state[A_ROW, v]
                g = state[LIN_ROW, v] - state[SIGN_ROW, v] * state[U_ROW, v]
                d = min(max(a + g * state[INV_K_ROW, v], 0.0), state[HI_ROW, v]) - a
            state[A_ROW, v] = min(max(state[A_ROW, v] + d, 0.0), state[HI_ROW, v])
            n = active[v]
            c = state[SIGN_ROW, v] * d
            if not is_touched[n]:
                is_touched[n] = True
                touched[n_touched] = n
                n_touched += 1
            moved[n] += c
            if which == 1:
                col = class_column(source, n, state, active, m, batch)
            out = state[U_ROW]
            for p in range(m):
                out[p] += c * (col[active[p]] + offset)
        steps += 1
        if shrinking and steps % SHRINK_EVERY == 0:
            m = shrink(state, active, m, alpha_l, shrink_margin * worst)
            if 3 <= m <= compact_at and steps < max_steps:
                for p in range(m):
                    alpha_l[active[p]], u[active[p]] = state[A_ROW, p], state[U_ROW, p]
                return steps, np.inf, m


@nb.njit(cache=True)
def class_signs(y_index, l, out):
    """out[n] = +1 for the patterns of class l, -1 for the others (S_i = diag(y_i))."""
    for n in range(y_index.size):
        out[n] = 1.0 if y_index[n] == l else -1.0


def solve_separable(source, offset, u, alpha_l, hi_l, lin_l, sign, kdiag, tol, max_steps,
                    shrinking, block_bytes=None):  # fmt: skip
    """``solve_class`` until every variable meets ``tol``, with compact phases on an LRU source.

    When shrinking leaves at most COMPACT_FRACTION N variables active, the class's dual restricted
    to them -- the others held, their part of the outputs fixed in ``u`` -- is solved on columns of
    that length only (``kernels.shortened_source``: the cache's memory, and the columns it held,
    shortened), and the other variables' outputs are then brought up to date by one kernel block,
    u[rest] += (K[rest, n] + offset) m_n over the variables n that moved since they were last
    current; then every variable is checked again.  libsvm shrinks its binary solver so (Chang and
    Lin, ACM TIST 2, 2011, section 5.1), as ``DecompositionSolver._compact`` does the pattern-wise
    engine: late in a class's run a column computed on demand costs the active share of a whole
    one, and the cache holds as many more.  With compact phases a variable is set aside only when
    its gradient points out of the box by more than SHRINK_MARGIN times the largest violation
    (libsvm's rule is of this kind): each premature one costs a kernel block.  Returns (steps,
    largest violation), as ``solve_class``.  ``block_bytes`` (default: the cache's) bounds the
    kernel blocks: the whole cache's size for a thread's share of it, so that the blocks, and
    so the last bits of OpenBLAS's products, are the same whatever the number of threads.
    """
    N = u.size
    moved, active = np.zeros(N), np.empty(N, dtype=np.int64)
    compact = shrinking and is_lru(source)
    compact_at = int(COMPACT_FRACTION * N) if compact else -1
    margin = SHRINK_MARGIN if compact else 0.0
    steps, batch = 0, column_batch(source)
    while True:
        args = (tol, max_steps - steps, shrinking, compact_at, margin, moved, active, batch)
        taken, worst, m = solve_class(source, offset, u, alpha_l, hi_l, lin_l, sign, kdiag, *args)
        steps += taken
        if m < 0:
            return steps, worst
        A = np.sort(active[:m])
        a_A, u_A, s_A = alpha_l[A], u[A], sign[A]
        before = a_A.copy()
        sub = shortened_source(source, A)
        args = (tol, max_steps - steps, shrinking, -1, margin, np.zeros(m), np.empty(m, np.int64),
                column_batch(sub))  # fmt: skip
        taken, _, _ = solve_class(sub, offset, u_A, a_A, hi_l[A], lin_l[A], s_A, kdiag[A], *args)
        steps += taken
        moved[A] += s_A * (a_A - before)
        alpha_l[A], u[A] = a_A, u_A
        bring_up_to_date(source, offset, u, moved, A, block_bytes or source[7].nbytes)


def bring_up_to_date(source, offset, u, moved, held, block_bytes):
    """u[rest] += (K[rest, n] + offset) moved[n] over the variables n that moved, for the rows
    not in ``held`` (sorted), by kernel blocks of ``block_bytes`` (and BLOCK_BYTES) at most;
    ``moved`` is zeroed."""
    rest = np.setdiff1d(np.arange(u.size), held, assume_unique=True)
    changed = np.flatnonzero(moved)
    if changed.size and rest.size:
        times = moved[changed, None]
        step = block_rows(changed.size, block_bytes)
        buffer = np.empty((min(step, rest.size), changed.size))
        for start in range(0, rest.size, step):
            block = rest[start : start + step]
            u[block] += kernel_block(source, block, changed, out=buffer[: block.size],
                                     times=times)[:, 0] + offset * times.sum()  # fmt: skip
    moved[:] = 0.0
