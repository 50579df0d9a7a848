"""The decomposition engine: dual coordinate descent one pattern at a time.

For each visited pattern i the engine computes the gradient of its active variables from the
current outputs U_i, sets aside the variables that settled at a bound (LIBLINEAR's
active_size_i), solves the subproblem of the others exactly (``patterns.box_rank_one``,
``patterns.budget_rank_one``; with a kernel the step is then over-relaxed, ``over_relax``), and,
if they moved, updates the outputs with one kernel column:
U += K[:, i] dS_i^T, an O(N m) step for the m classes that moved.  U is K Z rather than
K B = K Z M: for M = I - s 11^T (inhibitory, Lee-Lin-Wahba) a step would otherwise change every
class's output, O(N L); the pattern reads its row of K B as U_i - s (sum_k U_ik)
(``patterns.pattern_gradient``).  With a kernel a visit that steps may instead move two patterns
at once, the visited one and a near partner, by a transfer (``msvm.fast.transfer``: the pair
step of libsvm's solver, for multiclass duals), whichever gains more; on ill-conditioned duals
(wide kernels, large C) this cuts the epochs 10-40 times.  On columns computed on demand the
updates wait in batches (``DEFERRED_BATCH``): a visit reads its row of U plus the waiting steps'
kernel entries, and a batch's missing columns are computed together by one BLAS product, the
same steps up to rounding.  With the linear kernel the engine
keeps W = X^T [Z, Z 1] instead (the outputs a visit needs are computed on the fly,
W += x_i^T dS_i), an O(d m) step, so no kernel matrix is ever formed.

``kernel_epoch`` / ``linear_epoch`` do one epoch; ``kernel_epochs`` / ``linear_epochs`` run
epochs with the shrinking schedule (``after_epoch``) in numba; :class:`DecompositionSolver` owns
the tolerances, stopping and warnings.  Stopping: the largest KKT violation (projected gradient)
seen in a full pass over every variable is at most ``tol``.  One-vs-all's separable dual has its
own class-by-class solver (``msvm.fast.separable``).  On the explicit-weights path the epochs are
interleaved with damped Newton steps on the free face (``msvm.fast.face_newton``), on the kernel
path of Weston-Watkins and Crammer-Singer with exact ones, within a work budget
(``msvm.fast.kernel_face``): both shorten coordinate descent's slow tail on ill-conditioned duals.
The kernel path of every coupled machine (inhibitory, Lee-Lin-Wahba, and Weston-Watkins and
Crammer-Singer when their face steps have not ended the run) hands the run, once, to an
interior-point method when the epochs' work reaches its cost (``msvm.fast.interior_point``).

Reference counts.  numba counts every array a compiled function takes, unpacks from a tuple or
views up on entry and down on each exit, an atomic operation each; the status check after a
call of another compiled function adds an exit, so LLVM's pruning keeps the counts, and a step
that passes some forty arrays on (the dual state, the work arrays, the column source) spent
about half its time on them (``perf``, benchmarks/NOTES.md, stop 44).  Every function called
on every visit or step that neither allocates nor returns an array -- the pattern's solve and
move, the subproblem solvers, ``transfer_or_step``, the deferred steps, the linear path's
outputs and update -- is therefore compiled without numba's runtime (``_nrt=False``): its
arrays are borrowed from the epoch that allocated them, and numba refuses at compile time an
allocation in such a function or a call in it that returns an array.  The epochs themselves
allocate their work arrays and keep the counts; they take them once an epoch (stop 45: the
same steps in 0.6-0.9x the time).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial

import numba as nb
import numpy as np
import scipy.sparse as sp
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from sklearn.utils import check_random_state

from msvm.fast import interior_point, kernel_face, ssnal
from msvm.fast.convergence import convergence_warning
from msvm.fast.face_newton import DAMPING, FaceNewton
from msvm.fast.interior_point import InteriorPointSwitch, memory, modelled_cost, snapped_optimum
from msvm.fast.kernel_face import KernelFaceNewton, offset_block
from msvm.fast.kernels import (
    block_rows,
    finish_column,
    flat_to_zero,
    forget_columns,
    get_column,
    is_lru,
    kernel_block,
    kernel_diagonal,
    kernel_value,
    restricted_source,
    split_source,
    take_slot,
)
from msvm.fast.patterns import (
    CS,
    SIGN,
    WW,
    activate_all,
    activate_row,
    box_rank_one,
    budget_rank_one,
    dual_value,
    dual_vectors,
    gather_row,
    hessian_structure,
    output_shift,
    outputs_of_state,
    pattern_gradient,
    pattern_transpose,
    pattern_violation,
    separable,
    shrink_variables,
    state_change,
    state_coef,
    state_width,
)
from msvm.fast.separable import batched, class_signs, column_batch, solve_separable, sync_outputs
from msvm.fast.threads import blas_threads
from msvm.fast.transfer import (
    NOT_FOUND,
    add_difference,
    apply_transfer,
    best_partner,
    partner_table,
    quadratic_gain,
    transfer_arrays,
    transfer_step,
)


@intrinsic
def prefetch(typingctx, array, i):
    """Hint the CPU to fetch row i of a 2-d array (element i of a 1-d one) into cache.

    ``llvm.prefetch`` on every 64-byte line of a contiguous row, or on every element of a strided
    one (a row of the Fortran-ordered outputs); a hint only, it never faults, and no array view
    is made.  The epochs visit patterns in random order, and fetching the next patterns' rows
    while one is solved hides most of the memory latency (explicit weights: 0.25 -> 0.09 us a
    row here).
    """
    if not isinstance(array, types.Array) or array.ndim > 2:
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        intp = lambda v: context.get_constant(types.intp, v)  # noqa: E731
        index = [args[1]] + [intp(0)] * (aryty.ndim - 1)
        start = cgutils.get_item_pointer(context, builder, aryty, ary, index)
        itemsize = intp(context.get_abi_sizeof(context.get_data_type(aryty.dtype)))
        if aryty.ndim == 2:
            width = cgutils.unpack_tuple(builder, ary.shape, 2)[1]
            stride = cgutils.unpack_tuple(builder, ary.strides, 2)[1]
        else:
            width, stride = intp(1), itemsize
        contiguous = builder.icmp_signed("==", stride, itemsize)
        step = builder.select(contiguous, intp(64), stride)  # bytes between two prefetches
        nbytes = builder.mul(width, stride)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        base = builder.bitcast(start, i8p)
        with cgutils.for_range_slice(builder, intp(0), nbytes, step) as (offset, _):
            line = builder.gep(base, [offset])
            builder.call(fn, [line, i32(0), i32(3), i32(1)])  # read, keep in cache, data
        return context.get_dummy_value()

    return types.void(array, i), codegen


if nb.config.DISABLE_JIT:  # plain Python: an intrinsic cannot run, and a hint can be dropped

    def prefetch(array, i):  # noqa: F811
        """No-op stand-in for the intrinsic when numba is disabled."""


# A pattern step that gains at most GAIN_FLOOR * K_ii * C^2 is taken as it is, without looking for a
# transfer (``transfer_or_step``).
GAIN_FLOOR = 1e-14
SCREEN = 0.5

# How many patterns ahead the epochs prefetch.
PREFETCH_AHEAD = 4


@nb.njit(cache=True, _nrt=False)
def prefetch_rows(i, alpha, hi, lin, cls):
    """Prefetch pattern i's rows of the dual state and of its active-variable list.  Not inlined:
    an inlined helper's arguments are new references, and in an epoch's loop numba could not
    drop their reference counting (NOTES, stop 28)."""
    prefetch(alpha, i)
    prefetch(hi, i)
    prefetch(lin, i)
    prefetch(cls, i)


@nb.njit(cache=True, _nrt=False)
def prefetch_data_row(i, dense, data, indices, indptr):
    """Prefetch data row i for a linear step (dense or CSR; the arrays singly, as elsewhere)."""
    if dense.shape[0] > 0:
        prefetch(dense, i)
    else:
        prefetch(data, indptr[i])
        prefetch(indices, indptr[i])


# The dual state handed to the numba kernels:
#   dual = (alpha, hi, lin, y_index, kdiag, cls, n_cls, partners)
#          -- (N, L) x 3, (N,), (N,), (N, L), (N,), (N, transfer.PARTNERS)
#          with pattern i's active variables the classes cls[i, :n_cls[i]] (patterns.activate_all)
#          and its transfer partners (transfer.partner_table; empty on the explicit-weights path)
#   kind, c                                  -- the pattern structure (msvm.fast.patterns)
#   shift                                    -- s of M = I - s 11^T (patterns.output_shift)
# The kernel path's outputs U = K Z have L columns; the explicit weights X^T [Z, Z 1] have L + 1
# when shift != 0 (patterns.state_coef).  dS always has L + 1 entries (add_column reads U's).
# Work arrays (``work_arrays``): the visited pattern's gradient g and its alpha and hi on the
# active variables (compact, p < n), v, lo, hi and delta for the subproblem, dS (L + 1) for the
# change of [Z, Z 1], scratch (8L) for the subproblem solvers.  In the epochs, which keep numba's
# reference counts (module docstring), a tuple of arrays unpacked or a row view costs them.


@nb.njit(cache=True)
def work_arrays(L):
    """The epochs' work arrays: g, alpha, hi, v, lo, hi and delta (L each), dS (L + 1), scratch."""
    return (
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L),
        np.empty(L + 1),
        np.empty(8 * L),
    )


@nb.njit(cache=True, inline="always")
def pattern_check(i, U, row, alpha, hi, lin, y_index, cls, n_cls, kind, shift, g, a_c, h_c):
    """KKT violation of pattern i's active variables from row ``row`` of the outputs U; leaves
    their gradient, alpha and hi in g, a_c and h_c (compact).  Most visits end here."""
    n = n_cls[i]
    pattern_gradient(kind, U, row, shift, lin, i, y_index[i], cls, i, n, g)
    gather_row(alpha, i, cls, i, n, a_c)
    gather_row(hi, i, cls, i, n, h_c)
    return pattern_violation(kind, n, g, a_c, h_c)


@nb.njit(cache=True, inline="always")
def over_relax(kind, n, a_c, h_c, relax, d):
    """d *= s, s the largest factor in [1, relax] that keeps the pattern feasible (its box, and
    for CS its budget): successive over-relaxation of the exact block step, truncated at the
    boundary (Mangasarian and Musicant, IEEE TNN 10, 1999, for the SVM dual).  Along d the
    subproblem is a concave parabola with its top at s* >= 1 (s = 1 is the exact step, at s*
    unless a bound stopped it), so every s in [1, 2) still gains.
    """
    s, total, used, budget = relax, 0.0, 0.0, 0.0
    limit, to = -1, 0.0  # the variable whose bound stops the step, and that bound
    for p in range(n):
        if d[p] > 0.0 and (h_c[p] - a_c[p]) / d[p] < s:
            s, limit, to = (h_c[p] - a_c[p]) / d[p], p, h_c[p]
        elif d[p] < 0.0 and a_c[p] / -d[p] < s:
            s, limit, to = a_c[p] / -d[p], p, 0.0
        total += d[p]
        used += a_c[p]
        budget = max(budget, h_c[p])
    if kind == CS and total > 0.0 and (budget - used) / total < s:  # sum_r alpha_ir <= C
        s, limit = (budget - used) / total, -1
    if s > 1.0 + 1e-9:  # not when a bound stops the exact step (s = 1 up to rounding)
        for p in range(n):
            d[p] *= s
        if limit >= 0:  # land on the bound exactly, as the exact steps do
            d[limit] = to - a_c[limit]


@nb.njit(cache=True, _nrt=False)
def pattern_solve(i, n, g, a_c, h_c, y_index, kdiag, cls, kind, c, work):
    """Solve the subproblem of pattern i's n active variables exactly, given pattern_check's
    compact g, a_c and h_c; leaves the step in ``work[6]`` and returns its exact dual gain."""
    _, _, _, v, lo_d, hi_d, d, _, scratch = work
    ch = hessian_structure(kind, y_index[i], c, a_c.size, cls, i, n, v)
    if kind == CS:
        budget_rank_one(n, g, kdiag[i], a_c, h_c, d, scratch)
    else:
        for p in range(n):
            lo_d[p] = -a_c[p]
            hi_d[p] = h_c[p] - a_c[p]
        box_rank_one(n, g, kdiag[i], ch, v, lo_d, hi_d, d, scratch)
    return quadratic_gain(n, g, d, kdiag[i], ch, v)


@nb.njit(cache=True, _nrt=False)
def pattern_move(i, n, a_c, h_c, alpha, y_index, cls, kind, shift, relax, work):
    """Take ``relax`` times the step that ``pattern_solve`` left in ``work[6]``
    (``over_relax``); the other variables stay where they are.  Leaves the change of row i of
    [Z, Z 1] in dS (``work[7]``); returns whether anything moved."""
    d, dS = work[6], work[7]
    if relax != 1.0:
        over_relax(kind, n, a_c, h_c, relax, d)
    moved = False
    for p in range(n):
        if d[p] != 0.0:
            moved = True
            alpha[i, cls[i, p]] = min(max(a_c[p] + d[p], 0.0), h_c[p])
    if moved:
        state_change(kind, n, d, cls, i, y_index[i], shift, dS)
    return moved


@nb.njit(cache=True, inline="always")
def most_violated(kind, n, g, a_c, h_c, cls, i):
    """The classes that ``transfer.best_partner`` screens, with their gradients: (j, g_j, k, g_k).

    Box kinds: j has pattern i's largest projected gradient, k = -1.  CS: j has the largest
    gradient, k the smallest among the variables holding mass (-1 if none): the pair that makes
    CS's violation g_max - g_min."""
    j, worst, g_j = cls[i, 0], -1.0, g[0]
    k, g_k = -1, np.inf
    for p in range(n):
        if kind == CS:
            violation = g[p]
            if a_c[p] > 0.0 and g[p] < g_k:
                k, g_k = cls[i, p], g[p]
        else:
            up = g[p] if a_c[p] < h_c[p] else 0.0
            down = g[p] if a_c[p] > 0.0 else 0.0
            violation = max(up, 0.0) - min(down, 0.0)
        if violation > worst:
            j, worst, g_j = cls[i, p], violation, g[p]
    if k == j:
        k = -1
    return j, g_j, k, g_k


# What a stepping visit did (``transfer_or_step``): a partner q >= 0 for a transfer, else:
OWN_STEP, NO_STEP = -1, -2


@nb.njit(cache=True, _nrt=False)
def transfer_or_step(i, n, g, a_c, h_c, col, offset, U, dual, kind, c, shift, relax, work,
                     pair_work, identity):  # fmt: skip
    """Pattern i's visit when it steps: its own exact step, or the transfer with the partner of
    ``transfer.best_partner`` when that gains more (``msvm.fast.transfer``).  Returns the
    partner q of a transfer (Z_i += dS, Z_q -= dS, dS in ``work[7]``), OWN_STEP (Z_i += dS) or
    NO_STEP; the caller applies dS to the outputs (``apply_step``, or deferred).  ``col`` holds
    K[:, i], at least at i's partners (reading the rows of U of i and its partners is all a
    choice needs); the whole column for i's first transfer, which makes its partner list.

    Compiled without reference counts (module docstring): with them it counted 42 arrays up and
    down on every step (stop 44).  Its callees on the transfer's path (``best_partner``,
    ``transfer_step``, ``apply_transfer``, ``state_change``, ``activate_row``) are inlined (stop
    44: 0.87-0.92x the time for about 2 s more of a cold InhibitorySVC fit; inlining
    ``pattern_solve``, ``pattern_move`` and the subproblem solvers too compiled a cold
    InhibitorySVC fit in 42 s instead of 17 s, benchmarks/NOTES.md)."""
    alpha, hi, lin, y_index, kdiag, cls, n_cls, partners = dual
    gain = pattern_solve(i, n, g, a_c, h_c, y_index, kdiag, cls, kind, c, work)
    # A visit whose own step gains next to nothing (a rounding residue: CS mass of 1e-17 on a
    # variable keeps the violation large) takes that step: it is what clears the residue, and a
    # transfer chosen for a gain of the same size instead would repeat at every visit.
    scale = 0.0
    for p in range(n):
        scale = max(scale, h_c[p])
    q, pair_gain = -1, 0.0
    if gain > GAIN_FLOOR * kdiag[i] * scale * scale:
        j, g_j, k, g_k = most_violated(kind, n, g, a_c, h_c, cls, i)
        q, pair_gain = best_partner(i, j, g_j, k, g_k, col, offset, U, alpha, hi, lin, y_index,
                                    kdiag, kind, c, shift, partners, pair_work[8])  # fmt: skip
    if (
        q >= 0
        and pair_gain > SCREEN * gain
        and transfer_step(
            i, q, col, offset, U, alpha, hi, lin, y_index, kdiag, kind, c, shift, pair_work
        )
        > gain
    ):
        delta, dS = pair_work[5], work[7]
        apply_transfer(i, q, delta, alpha, hi, y_index, kind)
        state_change(kind, alpha.shape[1], delta, identity, np.int64(0), y_index[i], shift, dS)
        activate_row(hi, cls, n_cls, i)  # either pattern may have moved variables set aside
        activate_row(hi, cls, n_cls, q)
        return q
    if not pattern_move(i, n, a_c, h_c, alpha, y_index, cls, kind, shift, relax, work):
        return NO_STEP
    return OWN_STEP


@nb.njit(cache=True, inline="always")
def add_column(U, col, offset, dB):
    """U += (col + offset) dB^T: one kernel column applied to every output (dB may be longer
    than U is wide: the sum column's entry of ``patterns.state_change`` is then ignored).

    U is kept in Fortran order, so each output column is one contiguous, vectorisable axpy.
    """
    for j in range(U.shape[1]):
        b = dB[j]
        if b != 0.0:
            for n in range(U.shape[0]):
                U[n, j] += (col[n] + offset) * b


@nb.njit(cache=True, _nrt=False)
def kernel_entry(x, y, sq_x, sq_y, params):
    """k(x, y) for two data rows of len(x) features, summed as ``kernels.dense_column`` does:
    feature by feature from 0."""
    dot = 0.0
    for f in range(x.size):
        dot += y[f] * x[f]
    kind, gamma, degree, coef0 = int(params[0]), params[1], int(params[2]), params[3]
    return kernel_value(dot, sq_x, sq_y, kind, gamma, degree, coef0)


def pending_arrays(source, W: int, batch: int, n_partners: int):
    """The store of up to ``batch`` deferred steps for ``kernel_epoch``: their patterns and
    transfer partners (rows 0 and 1; -1: none) and those two data rows with the squared norm
    last, changes dS (W each), room for their 2 batch columns; a data row; a column's worth of
    kernel entries and n_partners + 2 rows of outputs for transfers."""
    d, N = source[3].shape
    return (
        np.empty((2, batch), dtype=np.int64),
        np.empty((2, batch, d + 1)),
        np.empty((batch, W)),
        np.empty((2 * batch, N)),
        np.empty(d),
        np.empty(N),
        np.empty((n_partners + 2, W)),
    )


@nb.njit(cache=True, _nrt=False)
def pending_row(i, U, source, offset, pending, n_pending, out):
    """out = U[i] + sum_t k_t dS_t over the n_pending deferred steps t, k_t = k(x_i, x_t) +
    offset, or k(x_i, x_t) - k(x_i, x_q) for a transfer to partner q: pattern i's current
    outputs while the steps' columns wait, summed as ``add_column`` and ``add_difference`` sum
    them."""
    XT, sq_norms, params = source[3], source[4], source[5]
    partner, Xp, D, x_i = pending[0][1], pending[1], pending[2], pending[4]
    d = XT.shape[0]
    for j in range(U.shape[1]):
        out[j] = U[i, j]
    if n_pending == 0:
        return
    for f in range(d):
        x_i[f] = XT[f, i]
    for t in range(n_pending):
        k = kernel_entry(x_i, Xp[0, t], sq_norms[i], Xp[0, t, d], params)
        if partner[t] < 0:
            k += offset
        else:
            k -= kernel_entry(x_i, Xp[1, t], sq_norms[i], Xp[1, t, d], params)
        for j in range(U.shape[1]):
            out[j] += k * D[t, j]


@nb.njit(cache=True, _nrt=False)
def push_pending(i, q, dS, source, pending, n_pending):
    """Defer the step Z_i += dS (and Z_q -= dS for a partner q >= 0); returns the new count."""
    XT, sq_norms = source[3], source[4]
    pats, Xp, D = pending[:3]
    d = XT.shape[0]
    pats[0, n_pending], pats[1, n_pending] = i, q
    for s in range(2 if q >= 0 else 1):
        p = pats[s, n_pending]
        for f in range(d):
            Xp[s, n_pending, f] = XT[f, p]
        Xp[s, n_pending, d] = sq_norms[p]
    for j in range(D.shape[1]):
        D[n_pending, j] = dS[j]
    return n_pending + 1


@nb.njit(cache=True, _nrt=False)
def apply_step(U, col_i, col_q, q, offset, dS):
    """U after Z_i += dS (and Z_q -= dS for q >= 0), as the direct steps apply it."""
    if q < 0:
        add_column(U, col_i, offset, dS)
    else:
        add_difference(U, col_i, col_q, dS)


@nb.njit(cache=True, inline="always")
def flushed_column(p, r, G, source):
    """K[:, p] in a flush: row r of G when computed there (r >= 0), else its cached column,
    marked used."""
    if r >= 0:
        return G[r]
    cache, slot_of, last_used, clock = source[7], source[8], source[10], source[11]
    clock[0] += 1
    last_used[slot_of[p]] = clock[0]
    return cache[slot_of[p]]


@nb.njit(cache=True)
def flush_pending(source, offset, U, pending, n_pending):
    """Apply the deferred steps in the order they were taken (``apply_step``), so that U is
    summed as the direct steps sum it.  The columns not cached are computed together first, as
    rows of X_t X^T by one BLAS product, and put in the least recently used slots after every
    step is applied (a slot taken earlier could hold a column that a later step reads)."""
    XT, sq_norms, params = source[3], source[4], source[5]
    cache, slot_of, _, last_used, clock = source[7:12]
    pats, Xp, D, G = pending[:4]
    kind, gamma, degree, coef0 = int(params[0]), params[1], int(params[2]), params[3]
    row_of = np.full((2, n_pending), -1, dtype=np.int64)  # G's row with the column, or -1
    m = 0
    for t in range(n_pending):
        for s in range(2 if pats[1, t] >= 0 else 1):
            if slot_of[pats[s, t]] < 0:
                row_of[s, t] = m
                m += 1
    if m > 0:
        A = np.empty((m, XT.shape[0]))
        for t in range(n_pending):  # (entry by entry: a row assigned from an array compiles
            for s in range(2):  # numba's shape-error message, 5 s of a first fit)
                if row_of[s, t] >= 0:
                    for f in range(XT.shape[0]):
                        A[row_of[s, t], f] = Xp[s, t, f]
        np.dot(A, XT, G[:m])
        for t in range(n_pending):
            for s in range(2):
                r = row_of[s, t]
                if r >= 0:
                    finish_column(G[r], G[r], sq_norms, pats[s, t], kind, gamma, degree, coef0)
    for t in range(n_pending):
        i, q = pats[0, t], pats[1, t]
        col_i = flushed_column(i, row_of[0, t], G, source)
        col_q = col_i if q < 0 else flushed_column(q, row_of[1, t], G, source)
        apply_step(U, col_i, col_q, q, offset, D[t])
    for t in range(n_pending):
        for s in range(2):
            r, p = row_of[s, t], pats[s, t]
            if r >= 0 and slot_of[p] < 0:  # (a pattern twice: cached by its first)
                slot = take_slot(source, p)
                for n in range(G.shape[1]):  # (entry by entry, as A above)
                    cache[slot, n] = G[r, n]
                clock[0] += 1
                last_used[slot] = clock[0]


@nb.njit(cache=True, _nrt=False)
def apply_or_defer(i, q, dS, source, offset, U, pending, n_pending, flush_first):
    """Z_i += dS (and Z_q -= dS for q >= 0), reaching U in the order the steps are taken, as
    without deferring: deferred (``push_pending``) when a column is not cached or, unless
    ``flush_first``, when steps wait; else applied to U at once, with ``flush_first`` after the
    steps that wait (a flush).  Returns the pending count."""
    slot_of = source[8]
    if slot_of[i] < 0 or (q >= 0 and slot_of[q] < 0) or (n_pending > 0 and not flush_first):
        return push_pending(i, q, dS, source, pending, n_pending)
    if n_pending > 0:
        n_pending = push_pending(i, q, dS, source, pending, n_pending)
        flush_pending(source, offset, U, pending, n_pending)
        return np.int64(0)
    col_i = flushed_column(i, -1, pending[3], source)
    col_q = col_i if q < 0 else flushed_column(q, -1, pending[3], source)
    apply_step(U, col_i, col_q, q, offset, dS)
    return n_pending


@nb.njit(cache=True, _nrt=False)
def deferred_step(i, n, g, a_c, h_c, source, offset, U, dual, kind, c, shift, relax, transfers,
                  work, pair_work, identity, pending, n_pending):  # fmt: skip
    """Pattern i's step with its outputs' update deferred unless its column is cached
    (``apply_or_defer``; ``kernel_epoch``); returns (moved, pending count).  The pending steps
    are applied when the store is full.  A transfer reads the current rows of i and its
    partners: while steps wait they are written into U for the choice (``pending_row``) and put
    back after it; it reads K[:, i] at the partners, from the cache or computed entry by entry.
    (A pattern's first transfer, which makes its partner list from its whole column, is
    ``transfer_or_step``'s at once.)"""
    alpha, _, _, y_index, kdiag, cls, _, partners = dual
    if transfers:
        XT, sq_norms, params, cache, slot_of = source[3], source[4], source[5], source[7], source[8]
        x_i, col, saved = pending[4:]
        rows = partners[i]
        synced = 0
        for p in range(-1, rows.size if n_pending > 0 else -1):
            q = i if p < 0 else rows[p]
            if q < 0:
                break
            for j in range(U.shape[1]):
                saved[synced, j] = U[q, j]
            pending_row(q, U, source, offset, pending, n_pending, saved[synced + 1])
            for j in range(U.shape[1]):
                U[q, j] = saved[synced + 1, j]
            synced += 1
        if slot_of[i] >= 0:
            col_i = cache[slot_of[i]]
        else:
            for f in range(XT.shape[0]):
                x_i[f] = XT[f, i]
            for p in range(rows.size):
                if rows[p] < 0:
                    break
                q = rows[p]
                col[q] = kernel_entry(x_i, XT[:, q], sq_norms[i], sq_norms[q], params)
            col_i = col
        q_step = transfer_or_step(i, n, g, a_c, h_c, col_i, offset, U, dual, kind, c, shift,
                                  relax, work, pair_work, identity)  # fmt: skip
        for p in range(synced):  # put the rows back
            q = i if p == 0 else rows[p - 1]
            for j in range(U.shape[1]):
                U[q, j] = saved[p, j]
        q = q_step
    else:
        pattern_solve(i, n, g, a_c, h_c, y_index, kdiag, cls, kind, c, work)
        moved = pattern_move(i, n, a_c, h_c, alpha, y_index, cls, kind, shift, relax, work)
        q = OWN_STEP if moved else NO_STEP
    if q == NO_STEP:
        return False, n_pending
    # (with transfers a step on cached columns flushes the waiting ones: every transfer syncs its
    # partners' rows against each waiting step, ``pending_row``)
    n_pending = apply_or_defer(i, q, work[7], source, offset, U, pending, n_pending, transfers)
    if n_pending == pending[0].shape[1]:
        flush_pending(source, offset, U, pending, n_pending)
        n_pending = np.int64(0)  # (not a literal 0: kernel_epoch's docstring)
    return True, n_pending


@nb.njit(cache=True)
def kernel_epoch(order, source, offset, U, dual, kind, c, shift, shrink_at, skip_below, relax,
                 transfers, pending, wait):  # fmt: skip
    """One pass over ``order``; returns (max violation, keep mask for shrinking, steps taken).

    Each visit checks the pattern's active variables, sets aside those at a bound with the
    gradient pointing out (``patterns.shrink_variables``; the pattern itself when none is left),
    and steps on the others -- with ``transfers``, by ``transfer_or_step``.  (The visit is
    written out here and in ``linear_epoch``: an inlined helper returning its outcome made the
    linear epochs 25 % slower, measured.)  Not inlined into ``kernel_epochs``, and ``transfers``
    a run-time flag: the body is compiled once, not once per value of a constant flag; and
    ``pattern_solve`` / ``pattern_move``, which ``transfer_or_step`` calls too, are compiled
    once, not inlined into both (a step costs ~1 us, the call a few ns).  A cold first
    InhibitorySVC fit on iris: 24.4 s with two runners, 18.3 s with one, 16.8 s with those two
    functions shared; warm fits the same within the noise (benchmarks/NOTES.md, stop 21).  The
    visit calls them itself: an inlined wrapper of the two took its 16 array arguments as new
    references, counted up and down around both calls on every step (stop 28).

    With a store from ``pending_arrays`` (``DEFERRED_BATCH``) the outputs' updates wait
    (``deferred_step``, ``flush_pending``; at most ``wait`` visits); with None each step updates
    them at once, and numba compiles none of the deferred code: the branches on ``pending is
    None`` are pruned by its type.  The pending count is reset to ``np.int64(0)``, not to 0:
    numba types the calls it reaches while the loop's types are still being inferred, and a
    literal 0 compiled every deferred callee a second time (stop 36: five functions, one of
    them ``deferred_step`` with the transfers linked in).
    """
    alpha, hi, lin, y_index, kdiag, cls, n_cls, partners = dual
    L, W = alpha.shape[1], U.shape[1]
    work, pair_work = work_arrays(L), transfer_arrays(L)
    identity = np.arange(L).reshape(1, L)
    g, a_c, h_c = work[0], work[1], work[2]
    keep = np.ones(order.size, dtype=np.bool_)
    row = np.empty((W, 1)).T  # pattern i's current outputs when deferred (Fortran, as U)
    worst, steps, n_pending, waited = 0.0, 0, np.int64(0), 0
    for pos in range(order.size):
        if pos + PREFETCH_AHEAD < order.size:
            prefetch_rows(order[pos + PREFETCH_AHEAD], alpha, hi, lin, cls)
            prefetch(U, order[pos + PREFETCH_AHEAD])  # Fortran order: one line per column
        i = order[pos]
        if pending is None:
            outputs, r = U, i
        else:
            waited = waited + 1 if n_pending > 0 else 0
            if waited > wait:
                flush_pending(source, offset, U, pending, n_pending)
                n_pending, waited = np.int64(0), 0
            pending_row(i, U, source, offset, pending, n_pending, row[0])
            outputs, r = row, 0
        violation = pattern_check(
            i, outputs, r, alpha, hi, lin, y_index, cls, n_cls, kind, shift, g, a_c, h_c
        )
        worst = max(worst, violation)
        n = shrink_variables(kind, n_cls[i], g, a_c, h_c, cls, i, shrink_at)
        n_cls[i] = n
        if n == 0:
            keep[pos] = False
        elif violation > skip_below:
            at_once = False  # a transfer with its outputs' update now, from i's whole column
            if pending is None:
                if transfers:
                    at_once = True
                else:
                    pattern_solve(i, n, g, a_c, h_c, y_index, kdiag, cls, kind, c, work)
                    if pattern_move(i, n, a_c, h_c, alpha, y_index, cls, kind, shift, relax, work):
                        add_column(U, get_column(source, i), offset, work[7])
                        steps += 1
            elif transfers and partners[i, 0] == NOT_FOUND:  # the first: from i's whole column
                flush_pending(source, offset, U, pending, n_pending)
                n_pending, at_once = np.int64(0), True
            else:
                moved, n_pending = deferred_step(i, n, g, a_c, h_c, source, offset, U, dual,
                                                 kind, c, shift, relax, transfers, work,
                                                 pair_work, identity, pending,
                                                 n_pending)  # fmt: skip
                steps += moved
            if at_once:
                col = get_column(source, i)
                q = transfer_or_step(i, n, g, a_c, h_c, col, offset, U, dual, kind, c, shift,
                                     relax, work, pair_work, identity)  # fmt: skip
                if q != NO_STEP:  # (col stays cached while q's is read: it is the newest)
                    col_q = col if q < 0 else get_column(source, q)
                    apply_step(U, col, col_q, q, offset, work[7])
                    steps += 1
    if pending is not None:
        flush_pending(source, offset, U, pending, n_pending)
    return worst, keep, steps


@nb.njit(cache=True)
def pattern_violations(U, dual, kind, shift, out):
    """out[i] = the largest KKT violation among pattern i's active variables, for every pattern."""
    alpha, hi, lin, y_index, _, cls, n_cls, _ = dual
    g, a_c, h_c = work_arrays(alpha.shape[1])[:3]
    for i in range(U.shape[0]):
        out[i] = pattern_check(
            i, U, i, alpha, hi, lin, y_index, cls, n_cls, kind, shift, g, a_c, h_c
        )


@nb.njit(cache=True)
def greedy_steps(n_steps, source, offset, U, dual, kind, c, shift, tol, viol):
    """Up to ``n_steps`` steps on the pattern of largest KKT violation; returns (steps, max viol).

    ``viol`` holds every pattern's violation and is refreshed while the outputs are updated, so a
    step costs O(N L) like a cyclic one, about three times over.  (No variable is set aside.)
    """
    alpha, hi, lin, y_index, kdiag, cls, n_cls, _ = dual
    work = work_arrays(alpha.shape[1])
    g, a_c, h_c = work[0], work[1], work[2]
    for step in range(n_steps):
        i = np.argmax(viol)
        if viol[i] <= tol:
            return step, viol[i]
        pattern_check(i, U, i, alpha, hi, lin, y_index, cls, n_cls, kind, shift, g, a_c, h_c)
        pattern_solve(i, n_cls[i], g, a_c, h_c, y_index, kdiag, cls, kind, c, work)
        if not pattern_move(i, n_cls[i], a_c, h_c, alpha, y_index, cls, kind, shift, 1.0, work):
            viol[i] = 0.0  # the exact step could not reduce the violation (numerically stuck)
            continue
        add_column(U, get_column(source, i), offset, work[7])
        pattern_violations(U, dual, kind, shift, viol)
    return n_steps, viol.max()


# Rows for the explicit-weights path: (dense, data, indices, indptr); dense is (0, d) for CSR.
# The weights are held class by class, Wt = (X^T [Z, Z 1])^T of shape (L or L + 1, d), so that
# an output is one contiguous dot product and a weight update one contiguous axpy per class that
# moved.


@nb.njit(cache=True, _nrt=False, fastmath={"reassoc", "contract"})
def row_outputs(i, dense, data, indices, indptr, Wt, w0, cls, n, y, kind, shift, out):
    """x_i w_j + w0_j (dense or CSR row i) into out[0, j] (1, L or L + 1) for the outputs pattern
    i's check reads: its active classes, its own class for WW and CS, the sum column when
    shift != 0 -- only these dot products, reassociated so that each vectorises.  (The arrays
    come singly and the loops are written out: a tuple unpacked, or a helper called, per output
    cost more than the dot product.)"""
    own = kind == WW or kind == CS
    for p in range(n + own + (shift != 0.0)):
        if p < n:
            j = cls[i, p]
        elif p == n and own:
            j = y
        else:
            j = Wt.shape[0] - 1  # the sum column
        total = w0[j]
        if dense.shape[0] > 0:
            for f in range(dense.shape[1]):
                total += dense[i, f] * Wt[j, f]
        else:
            for q in range(indptr[i], indptr[i + 1]):
                total += data[q] * Wt[j, indices[q]]
        out[0, j] = total


@nb.njit(cache=True, _nrt=False)
def add_row(i, rows, Wt, dB):
    """Wt += dB x_i (W += x_i^T dB), one axpy for each class whose coefficient changed."""
    dense, data, indices, indptr = rows
    for j in range(Wt.shape[0]):
        b = dB[j]
        if b == 0.0:
            continue
        w = Wt[j]
        if dense.shape[0] > 0:
            for f in range(dense.shape[1]):
                w[f] += b * dense[i, f]
        else:
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += b * data[p]


@nb.njit(cache=True)
def linear_epoch(order, rows, offset, Wt, w0, dual, kind, c, shift, shrink_at, skip_below,
                 relax):  # fmt: skip
    """One pass with explicit weights Wt = (X^T [Z, Z 1])^T and w0 = offset 1^T [Z, Z 1]
    (as ``kernel_epoch``)."""
    alpha, hi, lin, y_index, kdiag, cls, n_cls, _ = dual
    dense, data, indices, indptr = rows
    L = alpha.shape[1]
    work = work_arrays(L)
    g, a_c, h_c, dS = work[0], work[1], work[2], work[7]
    raw = np.zeros((1, L + 1))  # the outputs x_i W + w0 that the visit needs
    keep = np.ones(order.size, dtype=np.bool_)
    worst, steps = 0.0, 0
    for pos in range(order.size):
        if pos + PREFETCH_AHEAD < order.size:
            prefetch_data_row(order[pos + PREFETCH_AHEAD], dense, data, indices, indptr)
            prefetch_rows(order[pos + PREFETCH_AHEAD], alpha, hi, lin, cls)
        i = order[pos]
        row_outputs(
            i, dense, data, indices, indptr, Wt, w0, cls, n_cls[i], y_index[i], kind, shift, raw
        )
        violation = pattern_check(
            i, raw, 0, alpha, hi, lin, y_index, cls, n_cls, kind, shift, g, a_c, h_c
        )
        worst = max(worst, violation)
        n = shrink_variables(kind, n_cls[i], g, a_c, h_c, cls, i, shrink_at)
        n_cls[i] = n
        if n == 0:
            keep[pos] = False
        elif violation > skip_below:
            pattern_solve(i, n, g, a_c, h_c, y_index, kdiag, cls, kind, c, work)
            if pattern_move(i, n, a_c, h_c, alpha, y_index, cls, kind, shift, relax, work):
                steps += 1
                for j in range(Wt.shape[0]):
                    w0[j] += offset * dS[j]
                add_row(i, rows, Wt, dS)
    return worst, keep, steps


@nb.njit(cache=True)
def outputs_from_coef(source, offset, B, rows, U):
    """U = (K + offset 11^T) B using the columns of the patterns listed in ``rows``
    (B is any coefficient matrix with U's columns, e.g. ``patterns.state_coef``)."""
    for i in rows:
        add_column(U, get_column(source, i), offset, B[i])


# Patterns whose KKT violation is at most SKIP_FRACTION * tol are not stepped on (they already
# meet the stopping rule); on digits 0.5 saved about a third of the O(N L) updates, and 0.9 a
# further 7 % (Crammer-Singer 7 086 -> 6 564 steps, Weston-Watkins 7 400 -> 6 921; paired with
# SVC, 25 fits each, in two runs: CS 0.969 -> 0.918x and 1.003 -> 0.961x, WW 0.925 -> 0.907x
# and 0.952 -> 0.940x).  Every pattern above tol is still stepped on.
SKIP_FRACTION = 0.9
# Within an epoch, patterns whose violation is below a fraction of the previous epoch's largest
# are not stepped on either: the steps go where the violation is (the stopping rule still sees
# every visited pattern's violation).  The fraction weighs a step against a visit: a kernel step
# is an O(N) update, so skip more (0.35; on digits 4-9 % faster than 0.2, 0.5 and more slower);
# an explicit-weights step costs about a visit (0.2; 0.3 was 10-20 % slower on the linear
# benchmark's data).  Kernel steps are also over-relaxed (``over_relax``), by up to RELAX_MAX =
# 1.5: on digits 20-25 % fewer steps (Crammer-Singer 10 000 -> 7 500, Weston-Watkins 10 200 ->
# 7 200); 1.4 and 1.7 measured slower, and on the linear benchmark's data any relaxation was
# slower (fewer steps matter less there, and the Newton steps on the free face take the tail).
# Where the kernel is nearly diagonal each exact step is nearly the pattern's final one and 1.5
# overshoots: the relaxation falls with the kernel's coupling (``relaxation``), from RELAX_MAX at
# a median off-diagonal mass of RELAX_MASS[1] or more to 1 at RELAX_MASS[0] or less, linearly in
# its logarithm.  (Stop 42, 540 study-like fits, standardised subsets of 100 and 200 points of
# digits, wine, glass, yeast and vowel, the normalised Gaussian at g = 0.05 ... 5, C = 1 ... 47.6,
# five machines: at a mass below 2 relaxation 1 took 0.43x the steps of 1.5 and 0.72x the time,
# at 2-40 1.25 took 0.81-0.94x the steps, above 40 1.5 took the fewest; the grids of six sets
# agreed: 1.5 best at gamma = scale / 10 and scale, 1 at 10 scale, masses 2-40.)
# A leave-one-out fold starts at the optimum with one pattern taken out, where over-relaxed steps
# overshoot: its kernel steps are exact (with 1.5 the LOO benchmark's warm path was 1.5x slower;
# a warm start along a C path still gains from 1.5).
# Transfers (``transfer_or_step``) are taken from epoch TRANSFERS_FROM of a run on: a run that
# converges within a few dozen epochs is well conditioned, and there the search for a partner
# costs more than the steps it saves.
TRANSFERS_FROM = 20
# (skip fraction, relaxation, first epoch with transfers) for each path (a cold kernel run's
# relaxation is ``relaxation``'s):
RELAX_MAX, RELAX_MASS, RELAX_ROWS, RELAX_COLUMNS = 1.5, (2.0, 40.0), 32, 2048
KERNEL_PATH = (0.35, RELAX_MAX, TRANSFERS_FROM)
WARM_KERNEL_PATH = (0.35, 1.0, TRANSFERS_FROM)
LINEAR_PATH = (0.2, 1.0, np.inf)  # no kernel columns: no transfers

# Newton steps on the free face between the explicit-weights epochs (msvm.fast.face_newton)
# and, for Weston-Watkins and Crammer-Singer, between the kernel epochs every KERNEL_FACE_PERIOD
# epochs, within a work budget (msvm.fast.kernel_face); for every coupled machine the
# interior-point switch, checked as often and first (msvm.fast.interior_point); tests switch them
# off to compare arithmetic paths exactly.
FACE_NEWTON = True
KERNEL_FACE_PERIOD = 10

# With columns computed on demand (LRU), a run whose active set falls to COMPACT_FRACTION of the
# patterns or fewer solves the problem restricted to them (DecompositionSolver._compact) to
# eps_shrink / COMPACT_DEPTH.  On 10 000 points at cache_size=200 (benchmark part "large"),
# 0.5 and 2 took WW / CS 1.7-1.8 / 1.7-1.8 s against 2.5-3.0 / 2.1 s without; depth 1, 8 and
# straight to tol, and fractions 0.35 and 0.7, were slower (benchmarks/NOTES.md, stop 13).
# The inhibitory machine's active set stays larger (a pattern stays while any of its L variables
# is free) and its steps mostly compute their column: it compacts from
# COMPACT_FRACTION_INHIBITORY.  Stop 25: 8 000 / 16 000 synthetic points 6.2 -> 4.9 s / 42.2 ->
# 28.5 s, LETTER's first 16 000 115.8 -> 93.7 s; for WW and CS 0.8 was 4 % faster at 10 000 and
# 5-9 % slower at 16 000, and Lee-Lin-Wahba never came down to 0.8 (8 000 points).
COMPACT_FRACTION, COMPACT_FRACTION_INHIBITORY, COMPACT_DEPTH = 0.5, 0.8, 2.0
# On columns computed on demand (an LRU source over dense data) a step whose column is not
# cached leaves its output update waiting (``kernel_epoch``) until DEFERRED_BATCH - 1 or more
# wait, or the oldest has waited DEFERRED_WAIT visits: the columns are then computed together as
# rows of X_B X^T by one BLAS product (at 16 000 x 20, 22 us a column against 64 us for numba's
# loop over the features), and a visit meanwhile reads its outputs as U_i plus the waiting
# steps' kernel entries (``pending_row``), which costs it O(waiting (d + L)).  The updates reach U
# in the order of the steps, a transfer's as one ``add_difference``, so they are summed as with
# every update at once: on data whose dot products are exact the fit is the same bit for bit
# (tests/fast/test_deferred.py; stop 39: applying cached columns first, as before, changed the
# steps once the partner scan read the sum column).  CSR data and a whole Gram matrix keep the
# updates at once.
DEFERRED_BATCH, DEFERRED_WAIT = 32, 256

# A cold explicit-weights run on at least SEED_MIN_ROWS patterns of a box-constrained dual starts
# from a subsample's solution (``DecompositionSolver._seed``): SEED_FRACTION of the patterns,
# with C scaled by 1 / SEED_FRACTION so that the weights balance the same loss, solved to a KKT
# violation of SEED_TOL; every variable whose gradient at those weights points up starts at its
# upper bound, the others at 0.  On the linear benchmark (100 000 rows, inhibitory) 73 % of the
# optimum's variables sit at C, and the seeded start took 10.3-10.7 s in all against ~18 s from
# 0 (fractions 0.05 and 0.1, SEED_TOL 0.5; 0.1 at 0.1: 13.3 s, the subsample's own solve 4.7 s).
# The subsample's own run is seeded the same way when it is large enough (N >= 200 000: a 1 %
# sample with C x 100 first).  The seed starts far below the cold start's dual (many variables at
# C) and pays off over a long run: runs allowed fewer than SEED_MIN_EPOCHS epochs start from 0.
SEED_MIN_ROWS, SEED_FRACTION, SEED_TOL, SEED_MIN_EPOCHS = 20_000, 0.1, 0.5, 100

# A cold explicit-weights run on dense rows where ``ssnal.applies`` (d L small) starts from the
# semismooth Newton augmented Lagrangian method instead (``DecompositionSolver.
# _proximal_method``; benchmarks/NOTES.md, stops 18, 21 and 31): the inhibitory and Lee-Lin-Wahba
# machines on any number of patterns, the others on at least ssnal.MIN_ROWS, provided the
# method's modelled cost (``ssnal.modelled_cost``) is at most METHOD_FIRST_EPOCHS epochs of one
# pattern step per pattern at LINEAR_STEP_NS . (1, d L) ns a step.  Otherwise the method takes
# over from the epochs' iterate when ssnal.RESCUE_EPOCHS of them have not converged and their
# modelled work has reached its cost, so that a run costs at most about twice the better of the
# two.  (Stop 31: the inhibitory machine on 1 000 x 256 standardised rows, 6 classes, took 10 s
# with the method first, 0.7 s with the epochs alone.)  Tests switch it off to compare the
# epochs alone.
PROXIMAL_START = True
LINEAR_STEP_NS, METHOD_FIRST_EPOCHS = (2000.0, 4.0), 300

# max_iter=-1 runs until converged, as libsvm's does, in budgets of libsvm's own guard against a
# run that cannot end: max(STEP_BUDGET, STEP_BUDGET_PER_PATTERN N) pattern steps (libsvm: 10^7 or
# 100 l iterations, ``Solver::Solve``).  libsvm ends the run there; the epochs of the pattern-wise
# engine go on into another budget while they converge (``DecompositionSolver._next_budget``): at
# a budget's end the outputs kept by increments are recomputed from the dual variables, and the
# run goes on while the last budget raised the dual objective, at most PROGRESS times as fast a
# step as the budget before it did (the first: any rise), rounding moved the outputs by at most
# tol over it (more would make the run's own test unreliable at tol: iris times 10 000 as a
# linear Gram matrix), and MAX_BUDGETS budgets were not spent.  The dual objective, not the
# largest KKT violation: that does not fall steadily (abalone's inhibitory machine at C = 1000,
# gamma = scale / 10: 2.2e-3 after two budgets, 2.6e-3 after three, 8.9e-4 half a budget
# later).  One-vs-all's class-by-class solver, the greedy selection, ISVM's Algorithms 1 and 2
# (``smo``), MProt's paper optimisers, the leave-one-out folds from the full solution and the
# subsample start (``_seed``) keep the one budget.
# Whatever max_iter is, a run also ends when STALL_EPOCHS epochs in a row are stuck: they took no
# step although a pattern's violation was above the step threshold, so its exact step was zero
# in floating point, and more epochs would only repeat that.
# One-vs-all's classes are solved on threads from this many patterns on (smaller fits: the pool
# costs more than it saves).
CLASS_THREADS_MIN = 2000
# A class of one-vs-all whose greedy steps reach the interior point's modelled cost for it, at
# SEPARABLE_STEP_NS[0] + SEPARABLE_STEP_NS[1] N a step, moves to the method's optimum, and its
# steps go on from there (msvm.fast.interior_point): where K's entries are huge against C the
# steps alone spent the 10^7-step budget (iris times 1 000 as a linear Gram matrix, C = 1: 6 s,
# 0.6 us a step); with it, 0.1 s.  (Steps cost O(active): on yeast, N = 1 038, C = 1000,
# gamma = scale, 1.1 us a step; at 4 ns N the method came after 0.46 M of the class's 1.55 M
# steps and the fit took 1.5x as long.  Stop 41.)
SEPARABLE_STEP_NS = (520.0, 0.56)
# verbose=1 prints one summary line per fit (``base.BaseMulticlassSVC.fit``); from EPOCH_LINES
# on, a line for every epoch (or greedy round, class, Newton step) as well.
EPOCH_LINES = 2
UNLIMITED = 2**40  # epochs for max_iter=-1 (the step budget ends such a run first)
STEP_BUDGET, STEP_BUDGET_PER_PATTERN, STALL_EPOCHS = 10**7, 100, 3
PROGRESS, MAX_BUDGETS = 0.5, 10
# Within a run the outputs kept by increments are also recomputed from the dual variables once
# rounding could have moved them by DRIFT_SHARE tol: every max(CHECK_STEPS, CHECK_EPOCHS N) pattern
# steps a run adds ``increment_rounding`` per step to its modelled drift, and recomputes them when
# that reaches DRIFT_SHARE tol (a fit checks the same at its end: ``base._recheck_state``).  A fit
# whose outputs are sums of huge terms otherwise wanders on its drifted outputs: standardised iris,
# gamma = scale / 100, C = 1e8 (dual variables ~1e8, outputs O(1)), tol = 1e-6 took 76 s, 10^7
# steps, and ended with a ConvergenceWarning at a dual 4e-7 below that of tol = 1e-3's 0.2 s fit
# (stop 64).  A fit whose steps times that bound stay below DRIFT_SHARE tol never recomputes (at
# tol = 1e-3 within 10^7 steps: outputs and C L up to ~4e4).  A compact phase's shrunk problem is
# checked too, its outputs holding the held patterns' as well (``solve_kernel``), and one-vs-all's
# classes by chunks of as many steps (``_run_separable``; a class whose own test passed is tested
# again on its recomputed outputs, and runs on from them, while the steps since its first pass are
# at most RETEST_SHARE times those before it: glass at C = 1e8, gamma = scale / 100, tol = 1e-6
# converges after 24 such tests, its worst class 2.5e6 steps before them and 0.9e6 in them, where
# at C = 1e6, tol = 1e-8 each run from the recomputed outputs drifts past tol again, and would go
# on to its step limit, 7x the time, to end with the same warning).
# Where one increment may round them by tol or more, no recomputation makes the run's own test
# reliable at tol: the fit's end says so (``base._recheck_state``'s warning).
DRIFT_SHARE, CHECK_STEPS, CHECK_EPOCHS, RETEST_SHARE = 0.1, 10**5, 10, 1.0
STEP_ROUNDING = 1e-6  # a step limit this close above a whole number of steps is that number
EPS = float(np.finfo(np.float64).eps)


def relaxation(source, offset: float, kdiag: np.ndarray) -> float:
    """The over-relaxation of a cold kernel run's steps: 1 + (RELAX_MAX - 1) t, where t in [0, 1]
    grows linearly in log m from m = RELAX_MASS[0] to RELAX_MASS[1], m the ``coupling_mass``."""
    low, high = RELAX_MASS
    mass = coupling_mass(source, offset, kdiag)
    t = np.clip(np.log(max(mass, low) / low) / np.log(high / low), 0.0, 1.0)
    return float(1.0 + (RELAX_MAX - 1.0) * t)


def coupling_mass(source, offset: float, kdiag: np.ndarray) -> float:
    """The median over rows i of the normalised off-diagonal mass sum_{j != i} |K'_ij| /
    sqrt(K'_ii K'_jj), K' = K + offset (the Jacobi iteration's row sums; from 0 for a diagonal
    kernel to N - 1 for a constant one).  Estimated on at most RELAX_ROWS rows and RELAX_COLUMNS
    columns spaced evenly (no random draw; the sum scaled to N - 1 columns): a few dozen kernel
    columns of RELAX_COLUMNS entries at most, ~33 us on a Gram matrix of 150.  Rows of a zero
    diagonal (their coupling undefined; for a kernel they are zero) are left out: 0 if all are."""
    N = kdiag.size
    row_step, col_step = -(-N // RELAX_ROWS), -(-N // RELAX_COLUMNS)
    rows, cols = np.arange(0, N, row_step), np.arange(0, N, col_step)
    entries = offset_block(source, offset, rows, None if col_step == 1 else cols)
    scale = np.sqrt(np.maximum(kdiag + offset, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        coupling = np.abs(entries) / (scale[rows, None] * scale[cols])
    coupling[~np.isfinite(coupling)] = 0.0  # rows or columns of a zero diagonal
    sums = coupling.sum(axis=1)
    own = np.flatnonzero(rows % col_step == 0)  # rows whose own column is among cols
    sums[own] -= coupling[own, rows[own] // col_step]
    others = np.full(rows.size, cols.size)
    others[own] -= 1
    defined = scale[rows] > 0.0
    if not defined.any():
        return 0.0
    return float(np.median((sums * (N - 1) / np.maximum(others, 1))[defined]))


def increment_rounding(state, k_max: float, rho: float, hi: np.ndarray, bar=np.inf) -> float:
    """The most one step's increments may round an output by. The kernel path's state (source,
    U) is updated as U += (K + rho 11^T) dS_i, |K_ij| <= ``k_max``: eps (max |U| + (k_max + rho)
    s), s = L max hi a step's change of a state entry.  The linear path's (data, W, w0) as W +=
    x_i^T dS_i, read as outputs x W + w0: eps max_i ||x_i||_1 (max |W| + max |x| s), the product
    x_i dS_i rounding too (on the features times 1e5 its rounding, not W's, made coef_ drift by
    10 %); ||x_i||_1 is bounded by sqrt(d) ||x_i||_2 (no pass over X), and computed only where
    that bound puts the rounding above ``bar``."""
    step = float(hi.max(initial=0.0)) * hi.shape[1]
    if len(state) == 2:
        return EPS * (float(np.abs(state[1]).max(initial=0.0)) + (k_max + rho) * step)
    data, W, _ = state
    w_max = float(np.abs(W).max(initial=0.0))
    norm = float(np.sqrt(data.sq_norms.max(initial=0.0)))
    rounding = EPS * np.sqrt(data.X.shape[1]) * norm * (w_max + norm * step)
    if rounding > bar:
        row_sums = float(np.asarray(abs(data.X).sum(axis=1)).max(initial=0.0))
        rounding = EPS * row_sums * (w_max + float(abs(data.X).max()) * step)
    return rounding


def epoch_limit(max_iter: int) -> int:
    """The epochs a run may take: ``max_iter``, or UNLIMITED for -1."""
    return UNLIMITED if max_iter == -1 else int(max_iter)


def step_budget(max_iter: int, n_patterns: int) -> float:
    """The pattern steps a run may take: libsvm's budget for max_iter=-1, else no limit."""
    if max_iter != -1:
        return np.inf
    return float(max(STEP_BUDGET, STEP_BUDGET_PER_PATTERN * n_patterns))


class FitLimits:
    """max_iter's epochs and MAX_BUDGETS of ``step_budget``'s budgets for a whole fit, shared by
    its engine runs (a bias's augmented-Lagrangian rounds, a refresh after a recheck).  Epochs
    are summed as the runs return them (whole ones for the epoch runners, which numba's ranges
    need), steps in budget units: one-vs-all's class-by-class solver gives each class a budget,
    so its steps count per class."""

    def __init__(self, max_iter: int, n_patterns: int):
        self.max_iter = max_iter
        self.epoch_limit = epoch_limit(max_iter)
        self.step_limit = MAX_BUDGETS * step_budget(max_iter, n_patterns)
        self.epochs, self.steps = 0, 0.0  # spent by the runs so far

    def start(self, solver) -> None:
        """Let ``solver``'s run take what the earlier runs left (``continue_fit``)."""
        solver.continue_fit(self.epochs, self.steps)

    def left(self) -> tuple[float, float]:
        """(epochs, steps) the fit has left."""
        return self.epoch_limit - self.epochs, self.step_limit - self.steps

    def charge(self, solver, epochs) -> str | None:
        """Count ``solver``'s run, which returned ``epochs``; returns why the fit may take no
        further run (its epochs or its step budgets spent), or None."""
        self.epochs += epochs
        self.steps += solver.n_steps / (solver.classes_apart or 1)
        if self.epochs >= self.epoch_limit:
            return f"the fit ran max_iter={self.max_iter} epochs"
        if self.steps >= self.step_limit:
            return "the fit spent its step budgets (engine.MAX_BUDGETS)"
        return None


# The schedule carried between calls of the epoch runners: eps_shrink, the step threshold, the
# last epoch's largest violation, the skip fraction, whether the next epoch starts with every
# variable active, the relaxation, the pattern steps left (``step_budget``) and how many epochs
# in a row were stuck (``out_of_steps``; see DecompositionSolver._run).
EPS_SHRINK, SKIP, WORST, RELATIVE, ALL_ACTIVE, RELAX, STEPS_LEFT, IDLE, PAIRS, EPOCH = range(10)


@nb.njit(cache=True)
def new_schedule(tol, skip_floor, path, steps_left):
    """The schedule at the start of a run on a path (skip fraction, relaxation, the epoch from
    which transfers are taken): eps_shrink = max(10 tol, 1), no step skipped yet, every variable
    active, ``steps_left`` pattern steps, no epoch run."""
    relative, relax, pairs = path
    return np.array(
        [
            max(10.0 * tol, 1.0),
            skip_floor,
            np.inf,
            relative,
            1.0,
            relax,
            steps_left,
            0.0,
            pairs,
            0.0,
        ]  # fmt: skip
    )


@nb.njit(cache=True)
def out_of_steps(schedule, steps, worst, skip):
    """Charge an epoch's steps to the schedule; True when the run must end (for max_iter=-1:
    or go on into another budget, ``DecompositionSolver._next_budget``): the step budget is
    spent, or STALL_EPOCHS epochs in a row were stuck -- no step taken although the largest
    violation ``worst`` was above the step threshold ``skip`` (the caller checked convergence)."""
    schedule[STEPS_LEFT] -= steps
    schedule[IDLE] = schedule[IDLE] + 1.0 if steps == 0 and worst > skip else 0.0
    return exhausted(schedule)


@nb.njit(cache=True)
def exhausted(schedule):
    """Whether the run must end short of tol (or, for max_iter=-1, may go on into another
    budget): its step budget is spent or it is stuck."""
    return schedule[STEPS_LEFT] <= 0.0 or schedule[IDLE] >= STALL_EPOCHS


@nb.njit(cache=True)
def after_epoch(order, keep, worst, active, n_active, schedule, tol, skip_floor, dual):
    """Update the schedule after an epoch over ``order``; returns (converged, active count), the
    next epoch's patterns in active[:count] (DecompositionSolver._run has the rules)."""
    schedule[SKIP] = max(skip_floor, schedule[RELATIVE] * worst)
    schedule[WORST] = worst
    N = active.size
    # Converged only after a pass that began with every variable active: a pass over every
    # pattern can still have skipped variables set aside inside them in earlier passes.
    checked_all, schedule[ALL_ACTIVE] = schedule[ALL_ACTIVE] == 1.0, 0.0
    if worst <= tol and checked_all:
        return True, n_active
    if worst < schedule[EPS_SHRINK] or worst <= tol:  # re-check every variable
        for i in range(N):
            active[i] = i
        activate_all(dual[1], dual[5], dual[6])
        schedule[EPS_SHRINK] = max(schedule[EPS_SHRINK] / 2.0, tol)
        schedule[ALL_ACTIVE] = 1.0
        return False, N
    kept = 0
    for p in range(order.size):
        if keep[p]:
            active[kept] = order[p]
            kept += 1
    return False, kept


@nb.njit(cache=True)
def shuffled(active, n_active):
    """A random permutation of active[:n_active] (numba's generator)."""
    order = active[:n_active].copy()
    np.random.shuffle(order)  # noqa: NPY002
    return order


# The runners, one per kind of epoch: numba does not cache a function that takes another as an
# argument (measured: a cache miss in every process), and the first fit must stay fast.
@nb.njit(cache=True)
def kernel_epochs(n_epochs, seed, active, n_active, schedule, tol, floor, at, source, offset, U,
                  dual, kind, c, shift, compact_at, pending, wait):  # fmt: skip
    """Up to ``n_epochs`` epochs of ``kernel_epoch`` over random permutations of the active set
    (numba's generator seeded with ``seed``, or continued for -1; ``at`` is shrink_at, ``floor``
    the least step threshold), with transfers from the schedule's epoch PAIRS on; returns
    (epochs, converged, active count, steps).  The loop runs in numba: in Python it cost ~15 us
    an epoch.  It returns early when at most ``compact_at`` patterns are left active and no
    re-check of every variable is due (``DecompositionSolver._compact``; -1: never)."""
    if seed >= 0:
        np.random.seed(seed)  # noqa: NPY002 -- numba's own generator, seeded from random_state
    steps = 0
    for e in range(n_epochs):
        order = shuffled(active, n_active)
        skip, relax = schedule[SKIP], schedule[RELAX]
        transfers = schedule[EPOCH] >= schedule[PAIRS]
        out = kernel_epoch(order, source, offset, U, dual, kind, c, shift, at, skip, relax,
                           transfers, pending, wait)  # fmt: skip
        schedule[EPOCH] += 1.0
        steps += out[2]
        done, n_active = after_epoch(
            order, out[1], out[0], active, n_active, schedule, tol, floor, dual
        )
        if done:
            return e + 1, True, n_active, steps
        if out_of_steps(schedule, out[2], out[0], skip):
            return e + 1, False, n_active, steps
        if n_active <= compact_at and schedule[ALL_ACTIVE] == 0.0:
            return e + 1, False, n_active, steps
    return n_epochs, False, n_active, steps


@nb.njit(cache=True)
def linear_epochs(n_epochs, seed, active, n_active, schedule, tol, floor, at, rows, offset, Wt,
                  w0, dual, kind, c, shift):  # fmt: skip
    """As ``kernel_epochs``, with ``linear_epoch``."""
    if seed >= 0:
        np.random.seed(seed)  # noqa: NPY002
    steps = 0
    for e in range(n_epochs):
        order = shuffled(active, n_active)
        skip, relax = schedule[SKIP], schedule[RELAX]
        out = linear_epoch(order, rows, offset, Wt, w0, dual, kind, c, shift, at, skip, relax)
        steps += out[2]
        done, n_active = after_epoch(
            order, out[1], out[0], active, n_active, schedule, tol, floor, dual
        )
        if done:
            return e + 1, True, n_active, steps
        if out_of_steps(schedule, out[2], out[0], skip):
            return e + 1, False, n_active, steps
    return n_epochs, False, n_active, steps


def weights_of_state(X, S) -> np.ndarray:
    """The weights X^T S of the dual state S (``patterns.state_coef``), on one BLAS thread: with
    two, OpenBLAS's sums differ in the last bits for some shapes (e.g. 2 000 x 128), and the
    epochs from such a start take another path (the same fit whatever n_jobs)."""
    with blas_threads(1):
        return np.asarray(X.T @ S)


def state_weights(kind, c, X, offset, alpha, y_index):
    """The explicit-weights path's state at ``alpha``: W = X^T S (Fortran order) and
    w0 = offset 1^T S, S = ``patterns.state_coef``."""
    S = state_coef(kind, alpha, y_index, c)
    return np.asfortranarray(weights_of_state(X, S)), offset * S.sum(axis=0)


def state_outputs(kind, c, source, offset, alpha, y_index):
    """The kernel path's state at ``alpha``: U = (K + offset 11^T) S in Fortran order (see
    ``add_column``), S = ``patterns.state_coef``, from the columns of the patterns with S != 0."""
    S = state_coef(kind, alpha, y_index, c)
    U = np.zeros(S.shape, order="F")
    outputs_from_coef(source, offset, S, np.flatnonzero(np.any(S != 0, axis=1)), U)
    return U


class LinearData:
    """Dense or CSR training data for the explicit-weights path, with its squared row norms."""

    def __init__(self, X):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64, copy=True)
            X.sum_duplicates()
            self.rows = (
                np.empty((0, X.shape[1])),
                X.data,
                X.indices.astype(np.int64),
                X.indptr.astype(np.int64),
            )
            self.sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        else:
            dense = np.ascontiguousarray(X, dtype=np.float64)
            self.rows = (dense, np.empty(0), np.empty(0, np.int64), np.zeros(1, np.int64))
            self.sq_norms = np.einsum("ij,ij->i", dense, dense)
        self.X = X

    def subset(self, P):
        """The rows X_P (dense or CSR)."""
        return self.X[P]


class DecompositionSolver:
    """Pattern-wise dual coordinate descent for one box-constrained multiclass dual.

    Parameters
    ----------
    kind, c : the pattern structure (``msvm.fast.patterns``)
    lin : (N, L) linear term of the dual; hi : (N, L) upper bounds (0 fixes a variable)
    y_index : (N,) class index; tol : KKT tolerance; shrinking : bool
    max_iter : epochs, or -1: until converged (in budgets of ``step_budget`` while converging,
        see PROGRESS)
    selection : "cyclic" (random permutations, with shrinking) or "greedy" (largest violation;
        for a dual that separates by class, ``msvm.fast.separable``'s class-by-class steps)
    offset : constant added to every kernel entry (the augmented Lagrangian of a bias)
    stop : callable or None, checked after every epoch of the cyclic selection; True ends the run
        (MProt Figure 11; the greedy and class-separable runs do not call it).  On explicit
        weights a stop with a ``linear_epochs`` method tests itself in numba: that method
        replaces ``linear_epochs`` (same arguments and results), runs as many epochs as asked,
        and the call then says whether its test ended the run
    cache_size : MB, the memory the kernel path's interior-point run may take
        (``msvm.fast.interior_point``; the column cache's own budget is its source's)
    """

    def __init__(
        self,
        kind,
        c,
        lin,
        hi,
        y_index,
        *,
        tol,
        max_iter,
        shrinking,
        random_state,
        selection="cyclic",
        offset=0.0,
        verbose=0,
        stop=None,
        cache_size=200,
    ):
        self.kind, self.c, self.lin, self.hi = kind, float(c), lin, hi
        self.cache_bytes = int(cache_size * 2**20)
        self.shift = output_shift(kind, self.c, lin.shape[1])
        self.y_index, self.tol, self.max_iter = y_index, tol, max_iter
        self.epochs = epoch_limit(max_iter)
        self.budget = step_budget(max_iter, lin.shape[0])  # the steps the run may take so far ...
        self.budget_size = self.budget  # ... grown by this much at each budget's end (_run)
        self.earlier_steps = 0  # the fit's earlier runs' steps (continue_fit: MAX_BUDGETS)
        self.more_budgets = max_iter == -1  # whether a run may go on after a budget (PROGRESS)
        self.budget_end = None  # why a run that spent budgets ended (the warning's text)
        self.held_outputs = False  # U also holds outputs of patterns outside the run (_compact)
        self.shrinking, self.offset, self.verbose = shrinking, float(offset), verbose
        self.selection = selection
        self.n_steps = 0  # pattern updates taken (each an O(N L) or O(d L) step)
        self.classes_apart = None  # L once the separable solver ran: FitLimits's units
        self.worst = np.inf  # the largest KKT violation of the last epochs (_run)
        self.proximal_steps = (0, 0)  # (proximal, Newton) steps of a proximal start
        # A pattern within skip_below of its KKT conditions is not stepped on: it already meets
        # the stopping rule, and an O(N L) update for a negligible change is wasted work.
        self.skip_below = SKIP_FRACTION * tol
        self.rng = check_random_state(random_state)
        self.stop = stop  # optional callable: end the run early when it returns True
        self.warn = True  # a ConvergenceWarning when max_iter ends the run ...
        self.messages = None  # ... or, given a list, its text appended there (the caller warns)

    def continue_fit(self, epochs, steps: float) -> None:
        """Count the ``epochs`` and pattern ``steps`` (budget units) of the fit's earlier runs
        (``FitLimits``): this run may take what they left of max_iter's epochs and of
        MAX_BUDGETS step budgets, so that both limits are the fit's, not each run's."""
        self.epochs -= epochs
        self.earlier_steps = steps
        self.budget = min(self.budget, self._steps_cap())

    def _steps_cap(self) -> float:
        """This solver's steps at which the fit has spent MAX_BUDGETS budgets."""
        return MAX_BUDGETS * self.budget_size - self.earlier_steps

    def _dual(self, alpha, kdiag, partners=None):
        """The dual state tuple, every free variable active (with ``partners``, a table of
        ``transfer.partner_table``, for the kernel path's transfers; a new one by default)."""
        if partners is None:
            partners = partner_table(alpha.shape[0])
        cls, n_cls = np.empty(alpha.shape, dtype=np.int64), np.empty(alpha.shape[0], np.int64)
        activate_all(self.hi, cls, n_cls)
        return (alpha, self.hi, self.lin, self.y_index, kdiag, cls, n_cls, partners)

    def _warn(self, worst, schedule=None):
        """ConvergenceWarning for a run that ended above tol, saying why it ended."""
        if not self.warn:
            return
        if schedule is not None and schedule[IDLE] >= STALL_EPOCHS:
            why = (
                f"{STALL_EPOCHS} epochs in a row took no step (the exact steps cannot reduce it "
                "further in floating point; check the scaling of the data or kernel)"
            )
        elif self.n_steps >= self.budget and self.budget_end is not None:
            why = self.budget_end
        elif self.n_steps >= self.budget and self.earlier_steps > 0:
            why = (
                f"max_iter=-1 spent the {self.budget:.0f} pattern steps that the fit's earlier "
                "runs had left of its step budgets"
            )
        elif self.n_steps >= self.budget:
            why = f"max_iter=-1 spent its budget of {self.budget:.0f} pattern steps"
        else:
            why = f"max_iter={self.max_iter} epochs were run; increase max_iter"
        convergence_warning(
            f"The solver stopped with a KKT violation of {worst:.2e} > tol={self.tol:g} by its own "
            f"test: {why}.",
            self.messages,
        )

    def dual_value(self, alpha, U) -> float:
        """The dual objective lin . alpha - 1/2 <Z M, (K + offset) Z> at ``alpha``, from the
        engine's outputs U = (K + offset) [Z, Z 1] (``patterns.state_coef``)."""
        Z, _ = dual_vectors(self.kind, alpha, self.y_index, self.c)
        return dual_value(
            self.lin, alpha, np.sum(Z * outputs_of_state(U, self.kind, self.c, alpha.shape[1]))
        )

    def weights_dual_value(self, alpha, W, w0) -> float:
        """``dual_value`` from the weights W = X^T [Z, Z 1] and w0 = offset 1^T [Z, Z 1] of the
        linear path, without the outputs X W + w0: <Z M, X X^T Z> = <X^T Z, X^T Z M>, and the
        offset's part is <w0_Z / offset, w0_B> (divided first: w0_Z^2 overflows where w0_Z / offset
        is 1^T Z)."""
        L = alpha.shape[1]
        quadratic = np.sum(W[:, :L] * outputs_of_state(W, self.kind, self.c, L))
        if self.offset > 0.0:
            w0 = w0.reshape(1, -1)
            quadratic += np.sum(
                w0[:, :L] / self.offset * outputs_of_state(w0, self.kind, self.c, L)
            )
        return dual_value(self.lin, alpha, quadratic)

    def _next_budget(self, values, value, exact) -> bool:
        """Whether a run of max_iter=-1 at a budget's end goes on into another (PROGRESS); True
        moves the budget's end a budget on from here.  ``values`` holds (steps, dual objective)
        at the run's start and each earlier budget's end; ``exact()`` recomputes the outputs kept
        by increments from the dual variables and returns how far they had drifted, ``value()``
        the dual objective."""
        drift = exact()
        values.append((self.n_steps, value()))
        steps, duals = np.array(values[-3:]).T
        gains = np.diff(duals)
        rates = gains / np.maximum(np.diff(steps), 1.0)  # over the last (two) budgets, a step
        budgets = (self.earlier_steps + self.n_steps) / self.budget_size  # the fit's
        if drift > self.tol:
            why = (
                f"rounding in its increments had moved its outputs by {drift:.1e} over the last, "
                "so its own test cannot be trusted at tol (rescale the features or kernel)"
            )
        elif budgets >= MAX_BUDGETS:
            why = "the most it takes (MAX_BUDGETS)"
        elif gains[-1] <= 0.0:
            why = f"the last did not raise the dual objective (it changed by {gains[-1]:.2e})"
        elif rates.size == 2 and rates[1] > PROGRESS * rates[0]:
            why = (
                f"the last raised the dual objective by {gains[-1]:.2e}, at more than {PROGRESS:g} "
                "times the rate a step of the one before did: the run was not converging"
            )
        else:
            self.budget = min(self.n_steps + self.budget_size, self._steps_cap())
            return True
        self.budget_end = (
            f"max_iter=-1 ran {budgets:.1f} budgets of {self.budget_size:.0f} pattern steps, {why}"
        )
        return False

    def _run(
        self,
        epochs,
        n_patterns,
        path,
        polish=None,
        every=1,
        compact=None,
        tested=False,
        value=None,
        exact=None,
        rounding=None,
    ):
        """Epochs over a shrinking active set until a pass over every pattern has violation <= tol.

        As in LIBLINEAR's Solver_MCSVM_CS, every variable is made active again whenever the
        active set's largest violation falls below eps_shrink, which starts at max(10 tol, 1)
        and is halved at each re-check (never below tol).  A variable is set aside when it sits
        at a bound with its gradient pointing out (CS: it holds no mass and its gradient lies
        below every entry that does), a pattern when none of its variables is left, with no
        further margin: LIBLINEAR's binary solver asks for a margin of the previous epoch's
        largest violation, which kept almost every pattern active on the linear benchmark, where
        the violation stays above 1 for hundreds of epochs.  ``epochs(n, seed, active, n_active,
        schedule, shrink_at)`` runs up to n epochs in numba (``kernel_epochs``); they are run one
        at a time when ``stop`` or ``verbose`` needs to see each.

        ``polish(patterns)``, if given, takes a Newton step on the free face of the active
        patterns (``msvm.fast.face_newton``, ``msvm.fast.kernel_face``; every free variable is
        active: only variables at a bound are set aside) or the interior-point switch's run
        (``msvm.fast.interior_point``) and returns its dual gain, or None when its budget does
        not allow one yet; it is called every ``period`` epochs, the period ``every`` after a
        step that gained and doubled after one that did not.

        ``tested``: ``epochs`` checks ``stop`` itself after every epoch (a stop with its own
        runner, see the class docstring), so the epochs need not come one at a time.

        ``compact(patterns, epochs, tol)``, if given, solves the problem restricted to the active
        patterns (``_compact``) whenever at most ``compact.at`` of them are left and no re-check
        is due, further than that re-check would come (eps_shrink), within the given epochs, and
        returns the epochs it took and the largest violation over every variable after it;
        every variable is then checked again, as at any re-check.

        ``exact()``, if given, recomputes the outputs kept by increments from the dual variables
        and returns how far they had drifted, at each budget's end (``_next_budget``, with
        ``value()``, the dual objective) and, with ``rounding(bar)`` (``increment_rounding``),
        once the drift that rounding may have caused reaches DRIFT_SHARE tol (checked every
        max(CHECK_STEPS, CHECK_EPOCHS N) steps) while one increment's is below tol.
        """
        active, n_active = np.arange(n_patterns), n_patterns
        check_every = max(CHECK_STEPS, CHECK_EPOCHS * n_patterns) if rounding else np.inf
        check_at, checked, modelled = self.n_steps + check_every, self.n_steps, 0.0
        schedule = new_schedule(
            self.tol, self.skip_below, path, min(self.budget, check_at) - self.n_steps
        )
        shrink_at = 0.0 if self.shrinking else np.inf
        single = (self.stop is not None and not tested) or self.verbose >= EPOCH_LINES
        chunk = 1 if single else (every if polish is not None else self.epochs)
        period, since = every, 0
        n_iter = 0
        # One seed for the run, the generator continued between calls (-1): the visiting order
        # does not depend on how the epochs are chunked (verbose, stop, polish).
        seed = self.rng.randint(np.iinfo(np.int32).max)
        values = None  # (steps, dual objective) at the start and each budget's end (_next_budget)
        if value is not None and self.more_budgets:
            values = [(self.n_steps, value())]
        self.budget_end = None
        while n_iter < self.epochs:
            n = min(chunk, self.epochs - n_iter)
            if polish is not None:  # to the next Newton step, however checks cut the chunks
                n = min(n, max(period - since, 1))
            before = n_active
            ran, converged, n_active, steps = epochs(n, seed, active, n_active, schedule, shrink_at)
            seed = -1
            n_iter += ran
            self.n_steps += steps
            worst = self.worst = schedule[WORST]
            if self.verbose >= EPOCH_LINES:
                print(f"epoch {n_iter}: {before} active, max KKT violation {worst:.3e}")
            if converged or (self.stop is not None and self.stop()):
                return n_iter, worst
            stuck = schedule[IDLE] >= STALL_EPOCHS
            if exhausted(schedule) and not stuck and check_at <= self.n_steps < self.budget:
                # (then on as after any epochs: the steps do not depend on where checks fall)
                steps = self.n_steps - checked
                each = rounding((DRIFT_SHARE * self.tol - modelled) / steps)
                modelled += each * steps
                if DRIFT_SHARE * self.tol <= modelled and each < self.tol:
                    drift, modelled = exact(), 0.0
                    if self.verbose >= EPOCH_LINES:
                        print(f"outputs recomputed: rounding had moved them by {drift:.1e}")
                checked, check_at = self.n_steps, self.n_steps + check_every
                schedule[STEPS_LEFT] = min(self.budget, check_at) - self.n_steps
            elif exhausted(schedule):
                if values is None or stuck or not self._next_budget(values, value, exact):
                    break
                checked, check_at, modelled = self.n_steps, self.n_steps + check_every, 0.0
                schedule[STEPS_LEFT] = min(self.budget, check_at) - self.n_steps
                continue
            small = compact is not None and n_active <= compact.at
            if small and schedule[ALL_ACTIVE] == 0.0 and n_iter < self.epochs:
                # further than the active set alone would have gone (to the re-check at
                # eps_shrink), to eps_shrink / COMPACT_DEPTH: every round costs a kernel block
                # for the other patterns' outputs
                to = max(schedule[EPS_SHRINK] / COMPACT_DEPTH, self.tol)
                before = self.n_steps
                taken, schedule[WORST] = compact(active[:n_active], self.epochs - n_iter, to)
                schedule[STEPS_LEFT] -= self.n_steps - before
                n_iter += taken
                if schedule[WORST] <= self.tol:  # that was a check of every variable
                    return n_iter, schedule[WORST]
                active[:] = np.arange(n_patterns)
                n_active, schedule[ALL_ACTIVE] = n_patterns, 1.0
                schedule[EPS_SHRINK] = max(to / 2.0, self.tol)
                continue
            since += ran
            if polish is not None and since >= period and n_iter < self.epochs:
                gain = polish(active[:n_active])
                if gain is not None:  # (None: the step's work budget did not allow one yet)
                    period = every if gain > 0 else 2 * period
                since = 0
                if self.verbose >= EPOCH_LINES and gain is not None:
                    print(f"Newton step (free face or interior point): dual gain {gain:.3e}")
        self._warn(schedule[WORST], schedule)
        return n_iter, schedule[WORST]

    def _run_greedy(self, source, dual, U):
        """Steps on the most violating pattern; an epoch counts N steps."""
        N = U.shape[0]
        viol = np.empty(N)
        pattern_violations(U, dual, self.kind, self.shift, viol)
        limit = self._step_limit(N)
        while True:
            # whole steps left (a later round's limit is epochs left times N in floating point)
            remaining = int(np.ceil(limit - self.n_steps - STEP_ROUNDING))
            if remaining <= 0:
                break
            args = (source, self.offset, U, dual, self.kind, self.c, self.shift, self.tol, viol)
            taken, worst = greedy_steps(min(N, remaining), *args)
            self.n_steps += taken
            if self.verbose >= EPOCH_LINES:
                print(f"{self.n_steps} greedy steps, max KKT violation {worst:.3e}")
            if worst <= self.tol:
                break
        # patterns found stuck were set aside with violation 0: report the true largest one
        pattern_violations(U, dual, self.kind, self.shift, viol)
        worst = viol.max()
        if worst > self.tol:
            self._warn(worst)
        return self.n_steps / N, worst

    def _run_separable(self, source, alpha, U, kdiag):
        """Class by class, greedy single-variable steps (``msvm.fast.separable``); an epoch
        counts N L variable steps, and each class may take max_iter N of them.  With more than
        one thread (a fit's ``n_jobs``) and at least CLASS_THREADS_MIN patterns the classes are
        solved on threads, each over its own column source (``kernels.split_source``): every
        class's steps are the same as on one thread."""
        N, L = alpha.shape
        self.classes_apart = L
        threads = min(nb.get_num_threads(), L)
        cache_bytes = source[7].nbytes  # (the whole cache's: see separable.solve_separable)
        if batched(source):
            forget_columns(source)  # columns by batches only (separable.batch_columns)
        sources = split_source(source, threads) if threads > 1 and N >= CLASS_THREADS_MIN else None
        limit = int(self._step_limit(N))

        # the interior point for a class whose steps reach its modelled cost (small N only)
        exact = FACE_NEWTON and memory(N, 1) <= self.cache_bytes
        step_ns = SEPARABLE_STEP_NS[0] + SEPARABLE_STEP_NS[1] * N
        first = min(limit, int(modelled_cost(N, 1) / step_ns)) if exact else limit

        k_max, check_every = float(kdiag.max(initial=0.0)), max(CHECK_STEPS, CHECK_EPOCHS * N)

        def solve(l, class_source):
            """The class's run, cut where rounding could have moved its outputs by DRIFT_SHARE
            tol at one increment's rounding (``increment_rounding``) at the outputs so far, and
            no earlier than every max(CHECK_STEPS, CHECK_EPOCHS N) steps: there its outputs are
            recomputed, and a class whose own test passed is tested again on them.  A class that
            rounding cannot move so within its step limit runs in one call, as before stop 65
            (each cut starts the class's shrinking afresh)."""
            sign = np.empty(N)
            class_signs(self.y_index, l, sign)
            a, u = np.ascontiguousarray(alpha[:, l]), U[:, l]
            hi, lin = np.ascontiguousarray(self.hi[:, l]), np.ascontiguousarray(self.lin[:, l])

            def rounding():  # one increment's, at the outputs so far
                return increment_rounding((class_source, u[:, None]), k_max, self.offset,
                                          hi[:, None])  # fmt: skip

            def steps_to_cut(each):  # where the modelled drift would reach the share
                if not 0.0 < each < self.tol:  # (none can help, or none is needed: one call)
                    return limit
                room = (DRIFT_SHARE * self.tol - modelled) / each
                return max(check_every, int(min(room, limit)))

            steps, modelled, tried, passed = 0, 0.0, not exact, None  # (steps at a first pass)
            chunk = steps_to_cut(rounding())
            while True:
                end = min(limit, steps + chunk, limit if tried else first)
                args = (hi, lin, sign, kdiag, self.tol, end - steps, self.shrinking, cache_bytes)
                taken, violation = solve_separable(class_source, self.offset, u, a, *args)
                steps += taken
                retest = False  # (its own test passed: again, on the outputs recomputed)
                if chunk < limit and taken > 0:
                    each = rounding()
                    modelled += each * taken
                    if DRIFT_SHARE * self.tol <= modelled and each < self.tol:
                        fresh = np.zeros(N)  # (by the columns' batches, as the steps add them)
                        sync_outputs(class_source, self.offset, fresh, sign * a, np.flatnonzero(a),
                                     column_batch(class_source))  # fmt: skip
                        drift = float(np.abs(u - fresh).max(initial=0.0))
                        u[:], modelled = fresh, 0.0
                        each = rounding()
                        if self.verbose >= EPOCH_LINES:
                            print(f"class {l}, {steps} steps: outputs recomputed: rounding "
                                  f"had moved them by {drift:.1e}")  # fmt: skip
                        if violation <= self.tol:
                            passed = steps if passed is None else passed
                            retest = steps - passed <= RETEST_SHARE * passed
                    chunk = steps_to_cut(each)
                if retest:
                    continue
                if violation <= self.tol or steps >= limit:
                    break
                stuck = steps < end  # (no step gains)
                if not tried and (stuck or steps >= first):
                    tried = True
                    self._exact_class(class_source, u, a, hi, lin, sign)
                elif stuck:
                    break
            alpha[:, l] = a
            return steps, violation

        if sources is None:
            with blas_threads(1):  # (the batches' products: the same whatever n_jobs)
                outcomes = [solve(l, source) for l in range(L)]
        else:  # worker w solves classes w, w + threads, ... over sources[w]

            def worker(w):
                nb.set_num_threads(1)  # (this thread's: its compact phases' blocks on it alone)
                return [(l, solve(l, sources[w])) for l in range(w, L, threads)]

            pool = ThreadPoolExecutor(threads, thread_name_prefix="msvm-class")
            with blas_threads(1), pool:
                done = dict(pair for part in pool.map(worker, range(threads)) for pair in part)
            outcomes = [done[l] for l in range(L)]
        worst = 0.0
        for l, (steps, violation) in enumerate(outcomes):
            self.n_steps += steps
            worst = max(worst, violation)
            if self.verbose >= EPOCH_LINES:
                print(f"class {l}: {steps} steps, max KKT violation {violation:.3e}")
        if worst > self.tol:
            self._warn(worst)
        return self.n_steps / (N * L), worst

    def _exact_class(self, source, u, a, hi, lin, sign):
        """Move one class of the separable dual to the interior point's optimum of it
        (``interior_point.snapped_optimum``, M = I) and set its outputs u = (K + offset)(s a)
        there, exactly (not by an increment that would keep the rounding the steps had left in
        u); where the method fails, nothing changes."""
        K = offset_block(source, self.offset)
        held = np.zeros((u.size, 1))  # (every pattern in the run)
        x = snapped_optimum(K, held, lin[:, None], hi[:, None], sign[:, None], 0.0, self.tol)
        if x is not None:
            a[:] = x[:, 0]
            u[:] = K @ (sign * a)

    def _step_limit(self, N):
        """Steps the greedy solvers may take (each class, for the separable one): max_iter
        epochs of N steps, or the step budget of max_iter=-1."""
        return min(self.budget, self.epochs * N)

    def _check_width(self, n_columns):
        width = state_width(self.kind, self.c, self.lin.shape[1])
        if n_columns != width:
            raise ValueError(f"The engine's outputs need {width} columns; got {n_columns}.")

    def solve_kernel(self, source, alpha, U):
        """Run on a kernel column source; ``alpha`` and ``U = (K + offset) S`` (S =
        ``patterns.state_coef``) are updated."""
        self._check_width(U.shape[1])
        kdiag = np.empty(alpha.shape[0])
        kernel_diagonal(source, kdiag)
        if self.selection == "greedy" and separable(self.kind, self.c):
            return self._run_separable(source, alpha, U, kdiag)
        dual = self._dual(alpha, kdiag + self.offset)
        if self.selection == "greedy":
            return self._run_greedy(source, dual, U)

        N = alpha.shape[0]
        compact = None
        if is_lru(source) and self.shrinking and self.stop is None:

            def compact(patterns, epochs, tol):
                return self._compact(source, alpha, U, dual, patterns, epochs, tol)

            inhibitory = self.kind == SIGN and self.c > 0.0
            compact.at = int((COMPACT_FRACTION_INHIBITORY if inhibitory else COMPACT_FRACTION) * N)
        compact_at = compact.at if compact is not None else -1
        pending = None  # the updates at once, or waiting in a store (kernel_epoch)
        if DEFERRED_BATCH > 0 and is_lru(source) and source[3].shape[0] > 0:
            pending = pending_arrays(source, U.shape[1], DEFERRED_BATCH, dual[7].shape[1])

        def epochs(n, seed, active, n_active, schedule, shrink_at):
            run = (n, seed, active, n_active, schedule, self.tol, self.skip_below, shrink_at)
            args = (source, self.offset, U, dual, self.kind, self.c, self.shift, compact_at,
                    pending, DEFERRED_WAIT)  # fmt: skip
            # one BLAS thread: the deferred columns the same whatever n_jobs
            with blas_threads(1) if pending is not None else nullcontext():
                return kernel_epochs(*run, *args)

        skip, _, pairs = KERNEL_PATH
        path = (skip, relaxation(source, self.offset, kdiag), pairs)

        outputs = partial(state_outputs, self.kind, self.c, source, self.offset)
        start = (alpha.copy(), U.copy()) if self.held_outputs else None
        held = []  # a compact phase's: the held patterns' outputs, once a recomputation is due

        def exact():  # U recomputed from alpha (and the held outputs): how far it had drifted
            fresh = outputs(alpha, self.y_index)
            if start is not None:  # U = held + (K_AA + offset) S(alpha_A), held fixed in the phase
                if not held:
                    held.append(start[1] - outputs(start[0], self.y_index))
                fresh += held[0]
            drift = float(np.abs(U - fresh).max(initial=0.0))
            U[:] = fresh
            return drift

        common = dict(compact=compact, value=lambda: self.dual_value(alpha, U), exact=exact,
                      rounding=lambda bar: increment_rounding((source, U), float(kdiag.max()),
                                                              self.offset, self.hi))  # fmt: skip
        dual_terms = (self.kind, self.lin, self.hi, self.y_index)
        if not FACE_NEWTON or self.stop is not None:
            return self._run(epochs, N, path, **common)
        steppers = []  # the first that is due takes the step
        if interior_point.applies(self.kind):
            switch = InteriorPointSwitch(self.kind, self.c, *dual_terms[1:], source, self.offset,
                                         dual, self.cache_bytes, self.tol)  # fmt: skip
            steppers.append(lambda P: switch.step(alpha, U, P, self.n_steps, self.worst))
        if kernel_face.applies(self.kind):
            face = KernelFaceNewton(*dual_terms, source, self.offset, dual)
            steppers.append(lambda P: face.step(alpha, U, P, self.n_steps))
        if not steppers:
            return self._run(epochs, N, path, **common)

        def polish(patterns):
            for stepper in steppers:
                gain = stepper(patterns)
                if gain is not None:
                    return gain
            return None

        return self._run(epochs, N, path, polish, KERNEL_FACE_PERIOD, **common)

    def _compact(self, source, alpha, U, dual, patterns, epochs, tol):
        """Solve the problem restricted to ``patterns`` (the active ones) to ``tol``, the others
        fixed, on columns of that length only (``kernels.restricted_source``, in the memory of
        the column cache), then bring the other patterns' outputs up to date with one kernel
        block: U[rest] += (K[rest, moved] + offset) dZ[moved].  Returns the epochs taken and the
        largest KKT violation over every pattern (what a run that ends here reports).

        libsvm's shrinking does the same within its binary solver (Chang and Lin, ACM TIST 2,
        2011, section 5.1): late in a run most patterns are set aside (here, N = 10 000 of the
        ``large`` benchmark: 2 500 active for 200 epochs), and a step over the active rows costs
        that fraction of one over all, as does a column computed on demand.
        """
        A = np.sort(patterns)
        sub = DecompositionSolver(
            self.kind,
            self.c,
            self.lin[A],
            self.hi[A],
            self.y_index[A],
            tol=tol,
            max_iter=epochs,
            shrinking=True,
            random_state=self.rng,
            offset=self.offset,
            verbose=self.verbose,
            cache_size=self.cache_bytes / 2**20,
        )
        sub.warn = False  # the caller checks every variable next, and warns at its own max_iter
        sub.held_outputs = True  # (U[A] also holds the other patterns' outputs, fixed here)
        alpha_A, U_A = alpha[A], np.asfortranarray(U[A])
        before = state_coef(self.kind, alpha_A, self.y_index[A], self.c)
        taken, _ = sub.solve_kernel(restricted_source(source, A), alpha_A, U_A)
        self.n_steps += sub.n_steps
        dZ = state_coef(self.kind, alpha_A, self.y_index[A], self.c) - before
        alpha[A], U[A] = alpha_A, U_A
        changed = np.any(dZ != 0.0, axis=1)
        moved, dZ = A[changed], dZ[changed]
        rest = np.setdiff1d(np.arange(alpha.shape[0]), A, assume_unique=True)
        step = block_rows(moved.size, source[7].nbytes)
        buffer = np.empty((min(step, rest.size), moved.size))  # (one for every block)
        for start in range(0, rest.size, step):
            block = rest[start : start + step]
            # K dZ by row blocks on one BLAS thread each: the same whatever n_jobs
            U[block] += kernel_block(source, block, moved, out=buffer[: block.size], times=dZ)
        if self.offset != 0.0:
            U[rest] += self.offset * dZ.sum(axis=0)
        activate_all(dual[1], dual[5], dual[6])
        worst = np.empty(alpha.shape[0])
        pattern_violations(U, dual, self.kind, self.shift, worst)
        return int(np.ceil(taken)), worst.max()

    def _seed(self, data: LinearData, alpha, W, w0):
        """Start from a subsample's solution (see SEED_FRACTION): alpha at hi where the dual
        gradient at the subsample's weights is positive, else 0; W and w0 to match."""
        N, L = alpha.shape
        sub = np.sort(self.rng.choice(N, int(SEED_FRACTION * N), replace=False))
        seed_solver = DecompositionSolver(
            self.kind,
            self.c,
            self.lin[sub],
            self.hi[sub] / SEED_FRACTION,
            self.y_index[sub],
            tol=max(self.tol, SEED_TOL),
            max_iter=self.max_iter,
            shrinking=self.shrinking,
            random_state=self.rng,
            offset=self.offset,
        )
        seed_solver.warn = False  # a start, not an answer: its max_iter is not the user's concern
        seed_solver.more_budgets = False
        W_sub, w0_sub = np.zeros(W.shape, order="F"), np.zeros_like(w0)
        seed_solver.solve_linear(LinearData(data.subset(sub)), np.zeros((sub.size, L)), W_sub,
                                 w0_sub)  # fmt: skip
        self.n_steps += seed_solver.n_steps
        with blas_threads(1):  # (the same start whatever n_jobs)
            F_sub = np.asarray(data.X @ W_sub)
        KB = outputs_of_state(F_sub + w0_sub, self.kind, self.c, L)
        gradient = self.lin - pattern_transpose(self.kind, KB, self.y_index)
        alpha[:] = np.where(gradient > 0.0, self.hi, 0.0)
        W[:], w0[:] = state_weights(self.kind, self.c, data.X, self.offset, alpha, self.y_index)

    def _proximal_method(self, data: LinearData, alpha, W, w0):
        """Run the semismooth Newton augmented Lagrangian method (``msvm.fast.ssnal``) from
        alpha: alpha from its proximal steps, W and w0 to match; the epochs then check every
        variable."""
        verbose = max(0, self.verbose - EPOCH_LINES + 1)  # its 1: a line per proximal step
        method = ssnal.SemismoothALM(self.kind, self.c, self.lin, self.hi, self.y_index,
                                     data.X, self.offset, self.tol, verbose)  # fmt: skip
        method.run(alpha)
        outer, newton = self.proximal_steps
        self.proximal_steps = (outer + method.outer_steps, newton + method.newton_steps)
        W[:], w0[:] = state_weights(self.kind, self.c, data.X, self.offset, alpha, self.y_index)

    def _proximal_applies(self, data: LinearData) -> bool:
        return PROXIMAL_START and ssnal.applies(self.kind, self.hi, data.X, self._width(data))

    def _width(self, data: LinearData) -> int:
        """The weights' rows: the features, and the offset's column when there is one."""
        return data.X.shape[1] + (self.offset != 0.0)

    def _method_cost(self, data: LinearData) -> float:
        return ssnal.modelled_cost(data.X.shape[0], self._width(data), self.lin.shape[1])

    def _linear_step_cost(self, data: LinearData) -> float:
        """The modelled time of one pattern step of the linear epochs (ns)."""
        return LINEAR_STEP_NS[0] + LINEAR_STEP_NS[1] * self._width(data) * self.lin.shape[1]

    def _method_pays(self, data: LinearData) -> bool:
        """Whether the method's modelled cost is at most METHOD_FIRST_EPOCHS epochs of one
        pattern step per pattern."""
        epochs = METHOD_FIRST_EPOCHS * data.X.shape[0] * self._linear_step_cost(data)
        return self._method_cost(data) <= epochs

    def _may_start_proximal(self) -> bool:
        """At least ``ssnal.min_rows`` patterns, and not a run that a stop test ends early
        (MProt's partial steps: the method runs to tol; LETTER, 5 000 rows: 25 s where the
        epochs met the test in 0.2 s)."""
        return self.stop is None and self.lin.shape[0] >= ssnal.min_rows(self.shift)

    def proximal_start(self, data: LinearData) -> bool:
        """Whether a cold run on ``data`` starts with the proximal method."""
        return (self._may_start_proximal() and self._proximal_applies(data)
                and self._method_pays(data))  # fmt: skip

    def solve_linear(self, data: LinearData, alpha, W, w0):
        """Run with explicit weights; ``alpha``, ``W = X^T [Z, Z 1]`` (Fortran order) and
        ``w0 = offset 1^T [Z, Z 1]`` are updated.  Where ``ssnal.applies`` the semismooth Newton
        augmented Lagrangian method (``_proximal_method``) starts a cold run (alpha = 0) on at
        least ``ssnal.min_rows`` patterns, and takes over a run on fewer whose first
        ssnal.RESCUE_EPOCHS epochs have not converged; otherwise a cold
        run on many patterns of a box-constrained dual starts from a subsample's solution
        (``_seed``)."""
        self._check_width(W.shape[1])
        cold = self.epochs >= SEED_MIN_EPOCHS and not alpha.any()
        proximal = self._proximal_applies(data)
        started = cold and proximal and self._may_start_proximal() and self._method_pays(data)
        if started:
            self._proximal_method(data, alpha, W, w0)
        elif cold and self.kind != CS and alpha.shape[0] >= SEED_MIN_ROWS:
            self._seed(data, alpha, W, w0)
        dual = self._dual(alpha, flat_to_zero(data.sq_norms + self.offset), partner_table(0))
        Wt = W.T  # (L, d), C-contiguous: one row of weights per class
        runner = getattr(self.stop, "linear_epochs", linear_epochs)  # a stop's own, if it has one

        def epochs(n, seed, active, n_active, schedule, shrink_at):
            run = (n, seed, active, n_active, schedule, self.tol, self.skip_below, shrink_at)
            args = (data.rows, self.offset, Wt, w0, dual, self.kind, self.c, self.shift)
            return runner(*run, *args)

        damping = DAMPING * float(np.mean(dual[4]))
        dual_terms = (self.kind, self.c, self.lin, self.hi, self.y_index)
        newton = FaceNewton(*dual_terms, data.X, self.offset, damping)

        step_ns = self._linear_step_cost(data)

        def polish(patterns):
            if not newton.due(self.n_steps * step_ns):
                return None
            with blas_threads(1):  # small products: OpenBLAS's threads wait for a busy core
                return newton.step(alpha, patterns, Wt, w0)

        def exact():  # W and w0 recomputed from alpha: how far the outputs X W + w0 had drifted
            fresh, fresh0 = state_weights(self.kind, self.c, data.X, self.offset, alpha,
                                          self.y_index)  # fmt: skip
            drift = float(np.abs(np.asarray(data.X @ (W - fresh)) + (w0 - fresh0)).max())
            W[:], w0[:] = fresh, fresh0
            return drift

        def rounding(bar):
            return increment_rounding((data, W, w0), 0.0, self.offset, self.hi, bar)

        hooks = dict(value=lambda: self.weights_dual_value(alpha, W, w0), exact=exact,
                     rounding=rounding)  # fmt: skip

        def run():
            # No Newton steps in a run that a stop test ends early (MProt's partial static
            # steps, tens of epochs): there they measured 1.1-1.4x slower (NOTES, stop 22).
            if not FACE_NEWTON or self.stop is not None:
                tested = runner is not linear_epochs
                return self._run(epochs, alpha.shape[0], LINEAR_PATH, tested=tested, **hooks)
            return self._run(epochs, alpha.shape[0], LINEAR_PATH, polish, newton.period, **hooks)

        hand_over = proximal and not started and self.stop is None
        if not hand_over or self.epochs <= ssnal.RESCUE_EPOCHS:
            return run()
        limit, self.epochs, warn, self.warn = self.epochs, ssnal.RESCUE_EPOCHS, self.warn, False
        budgets, self.more_budgets = self.more_budgets, False  # (the method may follow)
        start = self.n_steps  # (the solver's steps so far: an earlier run's, the seed's)
        first, worst = run()
        method_steps = start + self._method_cost(data) / self._linear_step_cost(data)
        if worst > self.tol and self.n_steps < method_steps:
            # on until their modelled work reaches the method's cost, within half the epochs
            # left (the method and the epochs after it keep the other half of max_iter)
            budget, self.budget = self.budget, min(self.budget, method_steps)
            self.epochs = (limit - first) // 2
            more, worst = run()
            self.budget, first = budget, first + more
        self.epochs, self.warn, self.more_budgets = limit - first, warn, budgets
        if worst > self.tol:
            self._proximal_method(data, alpha, W, w0)  # (the face Newton steps follow the face)
            activate_all(self.hi, dual[5], dual[6])  # the epochs' shrinking is for the old alpha
            more, worst = run()
            first += more
        self.epochs = limit
        return first, worst
