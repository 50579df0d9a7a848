"""Kernel columns in numba: K[:, i] for dense or CSR data, and an LRU cache of columns.

A column source is a tuple of arrays (numba-friendly, cacheable):

    (data, indices, indptr, dense, sq_norms, params, scratch, cache, slot_of, owner, last_used,
     clock)

``dense`` is the dense input transposed, X^T of shape (d, N) (empty, (0, d), for CSR, which uses
data/indices/indptr);
``params = (kind, gamma, degree, coef0)`` with kind 0 = linear, 1 = rbf, 2 = poly;
``cache`` holds ``n_slots`` columns.  When ``n_slots == N`` the whole Gram matrix fits
``cache_size`` and is computed once up front (with BLAS); otherwise columns are computed on demand
in numba and the least recently used one is evicted.  A whole-Gram source's ``clock`` is None:
numba then compiles none of the LRU code into a fit on it (``get_column``), a fifth of a first
fit's compile time.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
import scipy.sparse as sp
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from msvm.core.kernels import kernel_matrix, rbf_factors
from msvm.fast.threads import blas_threads, thread_map

KERNEL_KIND = {"linear": 0, "rbf": 1, "poly": 2}
KERNEL_NAME = {kind: name for name, kind in KERNEL_KIND.items()}


@nb.njit(cache=True)
def kernel_value(dot: float, sq_i: float, sq_j: float, kind: int, gamma: float, degree: int,
                 coef0: float):  # fmt: skip
    """k(x_i, x_j) from x_i . x_j and the squared norms (kind 0 linear, 1 RBF, 2 poly)."""
    if kind == 0:
        return dot
    if kind == 1:
        return exp_scalar(-gamma * max(sq_i + sq_j - 2.0 * dot, 0.0))
    return (gamma * dot + coef0) ** degree


# exp(v) for v <= 0 as v = k ln 2 + r, |r| <= ln 2 / 2: 2^k from its bits, exp(r) by its Taylor
# polynomial of degree 13 (remainder below 2e-16 relative).  Written branch-free so that the
# loop vectorises: numba's np.exp calls libm once per entry (measured, 16 000 entries: 70 us
# against 17 us; largest difference 0.99 ulp), and the exponential was 40 % of an RBF column.
LOG2E = 1.4426950408889634
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
EXP_FLOOR = -708.0  # below it exp underflows to denormals: taken as 0 (exp(-708) = 3.3e-308)
EXP_TAYLOR = np.array([1.0 / math.factorial(n) for n in range(13, -1, -1)])


# Round-to-integer by addition: v log2(e) + 1.5 2^52 has k = round(v log2(e)) in its low mantissa
# bits, so 2^k is an integer add and shift away.  AVX2 has no float64 -> int64 conversion, and
# LLVM made np.int64(floor(...)) four scalar ones a vector: exp_nonpositive took 32-33 against
# 23-29 us for 16 000 entries (stop 34), the same bits on 300 000 test points.
SHIFTER = 6755399441055744.0  # 1.5 * 2^52
SHIFTER_BITS = int(np.float64(SHIFTER).view(np.int64))


@intrinsic
def _bits_to_float(typingctx, bits):
    """The float64 whose bits are the int64 ``bits`` (a register move, no memory)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _float_to_bits(typingctx, x):
    """The int64 whose bits are the float64 ``x`` (a register move, no memory)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


if nb.config.DISABLE_JIT:  # plain Python: an intrinsic cannot run

    def _bits_to_float(bits):  # noqa: F811
        """The float64 whose bits are ``bits`` (numpy's view, for numba disabled)."""
        return float(np.int64(bits).view(np.float64))

    def _float_to_bits(x):  # noqa: F811
        """The int64 whose bits are ``x`` (numpy's view, for numba disabled)."""
        return int(np.float64(x).view(np.int64))


@nb.njit(cache=True, fastmath={"contract"})
def exp_scalar(x):
    """exp(min(x, 0)) (0 below EXP_FLOOR): one entry, the same bits as ``exp_nonpositive``.

    v = k ln 2 + r with k = round(v log2(e)) (``SHIFTER``), a degree-13 Taylor polynomial for
    exp(r), 2^k written into the exponent bits.  Compiled on its own with its fastmath flags,
    which stay on its instructions wherever LLVM inlines it: a kernel entry computed alone
    (``kernel_value``) and the same entry of a column agree to the bit.  The entries computed one
    at a time (``engine.kernel_entry``: the outputs of patterns whose steps wait, a transfer's
    partners) called libm's exp before: 28 % of a Weston-Watkins fit on 16 000 points (perf,
    stop 33); 3.2 against 7.5 ns an entry."""
    v = max(min(x, 0.0), EXP_FLOOR)
    t = v * LOG2E + SHIFTER
    k = t - SHIFTER
    r = (v - k * LN2_HI) - k * LN2_LO
    p = EXP_TAYLOR[0]
    for c in EXP_TAYLOR[1:]:
        p = p * r + c
    return (
        p * _bits_to_float((_float_to_bits(t) - SHIFTER_BITS + 1023) << 52)
        if x >= EXP_FLOOR
        else 0.0
    )


@nb.njit(cache=True, fastmath={"contract"}, nogil=True)
def exp_nonpositive(x):
    """x[j] = exp(min(x[j], 0)) in place (0 below EXP_FLOOR); the loop vectorises.  The clip is
    the RBF exponent's (rounding can leave it a few ulps above 0: ``core.kernels.rbf_exponent``),
    here in the same pass: numpy's ``minimum`` over each kernel block before it took 5 % of a
    Crammer-Singer fit on 16 000 points (perf, stop 34)."""
    for j in range(x.size):
        x[j] = exp_scalar(x[j])


@nb.njit(cache=True, fastmath={"contract"}, nogil=True)
def exp_nonpositive_upper(flat, n, first, last):
    """``exp_nonpositive`` on rows first .. last - 1 of the C-ordered n x n matrix ``flat``, each
    from its diagonal on (a Gram matrix's row block, ``gram``): each row's part is contiguous,
    and its loop vectorises as ``exp_nonpositive``'s."""
    for i in range(first, last):
        x = flat[i * n + i : (i + 1) * n]
        for j in range(x.size):
            x[j] = exp_scalar(x[j])


@nb.njit(cache=True, nogil=True)
def mirror_diagonal_block(flat, n, first, last):
    """Entries (i, j), first <= j < i < last, of the C-ordered n x n matrix ``flat`` set to
    (j, i): a Gram matrix's diagonal block made symmetric from its upper triangle (``gram``)."""
    for i in range(first, last):
        for j in range(first, i):
            flat[i * n + j] = flat[j * n + i]


@nb.njit(cache=True)
def dense_column(XT, sq_norms, i, kind, gamma, degree, coef0, out):
    """out[j] = k(x_j, x_i) for dense data held transposed, XT = X^T (d, N) C-contiguous.

    The dot products accumulate feature by feature, each an axpy over every row that the
    compiler vectorises (with X row by row the inner loop ran over the few features: for
    N = 10 000, d = 20, 68 us against 37 us here; the sums are the same, in the same order)."""
    d, n = XT.shape
    for j in range(n):
        out[j] = 0.0
    for f in range(d):
        a = XT[f, i]
        for j in range(n):
            out[j] += XT[f, j] * a
    finish_column(out, out, sq_norms, i, kind, gamma, degree, coef0)


@nb.njit(cache=True)
def finish_column(dots, out, sq_norms, i, kind, gamma, degree, coef0):
    """out[j] = k(x_j, x_i) from the dot products dots[j] = x_j . x_i (RBF: ``exp_nonpositive``);
    ``dots`` may be ``out``."""
    if kind == 1:
        for j in range(out.size):
            out[j] = -gamma * max(sq_norms[i] + sq_norms[j] - 2.0 * dots[j], 0.0)
        exp_nonpositive(out)
        return
    for j in range(out.size):
        out[j] = kernel_value(dots[j], sq_norms[i], sq_norms[j], kind, gamma, degree, coef0)


@nb.njit(cache=True)
def csr_column(data, indices, indptr, sq_norms, i, scratch, kind, gamma, degree, coef0, out):
    """out[j] = k(x_j, x_i) for CSR X; ``scratch`` is a zeroed length-d work vector."""
    for p in range(indptr[i], indptr[i + 1]):
        scratch[indices[p]] = data[p]
    n = indptr.size - 1
    for j in range(n):
        dot = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            dot += data[p] * scratch[indices[p]]
        out[j] = dot
    for p in range(indptr[i], indptr[i + 1]):
        scratch[indices[p]] = 0.0
    finish_column(out, out, sq_norms, i, kind, gamma, degree, coef0)


@nb.njit(cache=True)
def compute_column(source, i, out):
    """K[:, i] into ``out`` from the data of a column source (no caching)."""
    data, indices, indptr, dense, sq_norms, params, scratch = source[:7]
    kind, gamma, degree, coef0 = int(params[0]), params[1], int(params[2]), params[3]
    if dense.shape[0] > 0:
        dense_column(dense, sq_norms, i, kind, gamma, degree, coef0, out)
    else:
        csr_column(data, indices, indptr, sq_norms, i, scratch, kind, gamma, degree, coef0, out)


@nb.njit(cache=True)
def take_slot(source, i):
    """The least recently used slot of the cache, emptied of its column and given to column i
    (the caller fills it and marks it used)."""
    slot_of, owner, last_used = source[8:11]
    slot = 0
    for s in range(1, owner.size):
        if last_used[s] < last_used[slot]:
            slot = s
    if owner[slot] >= 0:
        slot_of[owner[slot]] = -1
    owner[slot] = i
    slot_of[i] = slot
    return slot


@nb.njit(cache=True)
def get_column(source, i):
    """K[:, i]: a row of the whole Gram matrix, or from the LRU cache (``lru_column``)."""
    return lru_column(source, i, source[11])


@nb.njit(cache=True)
def lru_column(source, i, clock):
    """K[:, i], from the cache when present, else computed into the least recently used slot;
    ``clock`` None: the cache is the whole Gram matrix (numba prunes the rest)."""
    cache = source[7]
    if clock is None:
        return cache[i]
    else:
        slot_of, last_used = source[8], source[10]
        clock[0] += 1
        slot = slot_of[i]
        if slot < 0:
            slot = take_slot(source, i)
            compute_column(source, i, cache[slot])
        last_used[slot] = clock[0]
        return cache[slot]


# A kernel diagonal entry below FLAT is taken as 0 by every step: the curvature is nil and the box
# decides.  (Features ~1e-160 give a denormal linear kernel, and g / k = inf, 0 * inf = NaN.)
FLAT = 1e-300


def flat_to_zero(kdiag: np.ndarray) -> np.ndarray:
    """The step curvatures from a kernel diagonal: entries below FLAT set to 0."""
    return np.where(kdiag > FLAT, kdiag, 0.0)


@nb.njit(cache=True)
def kernel_diagonal(source, out):
    """out[i] = k(x_i, x_i), as a step's curvature (0 below FLAT)."""
    params, sq_norms = source[5], source[4]
    kind, gamma, degree, coef0 = int(params[0]), params[1], int(params[2]), params[3]
    for i in range(out.size):
        k = kernel_value(sq_norms[i], sq_norms[i], sq_norms[i], kind, gamma, degree, coef0)
        out[i] = k if k > FLAT else 0.0


# The Gram matrix is computed in blocks of GRAM_BLOCK rows, each by BLAS on one thread, the blocks
# on up to numba's current count of threads (a fit's ``n_jobs``, ``msvm.fast.threads``; numpy
# releases the GIL): a block's entries do not depend on how many threads there are, where BLAS on
# two threads and on one differ in the last bits (measured: 540 of 2 300^2 entries of X X^T).
GRAM_BLOCK = 256


def blocked_kernel(A, B, kernel: str, gamma: float, degree: int, coef0: float,
                   out=None, times=None) -> np.ndarray:  # fmt: skip
    """k(A, B), as ``msvm.core.kernels.kernel_matrix`` computes it, in row blocks of GRAM_BLOCK on
    threads (the same entries whatever their number).  Dense RBF blocks are computed in place,
    from factors made once (``rbf_factors``): a block's own temporaries, fresh pages each time,
    took a tenth of a 16 000-point fit (benchmarks/NOTES.md, stop 29).  ``out``: a C-contiguous
    (len(A), len(B)) array to fill (a caller's buffer reused from block to block).  ``times``:
    a (len(B), m) matrix T; then k(A, B) T is returned, each row block multiplied by T on the
    thread that computed it (on one BLAS thread, so the product too is the same whatever the
    number of threads).  The RBF exponential is ``exp_nonpositive``'s, as the columns have it,
    not numpy's, which ``kernel_matrix`` uses (the entries differ by at most 1 ulp): numpy's
    float64 exp calls libm entry by entry on a machine without AVX-512, 9.2 against 3.5 ms for
    digits' Gram matrix, and 28 % of a Weston-Watkins fit on 16 000 points in the compact
    phases' blocks (perf, stop 33)."""
    n = A.shape[0]
    if out is not None and not out.flags.c_contiguous:  # (its rows are exponentiated as views)
        raise ValueError("blocked_kernel's out must be C-contiguous.")
    K = np.empty((n, B.shape[0])) if out is None else out
    product = None if times is None else np.empty((n, times.shape[1]))
    in_place = kernel == "rbf" and not (sp.issparse(A) or sp.issparse(B))
    if in_place:
        FA, FB = rbf_factors(A, B, gamma)

    def fill(start):
        rows = slice(start, min(n, start + GRAM_BLOCK))
        if not in_place:
            K[rows] = kernel_matrix(A[rows], B, kernel, gamma, degree, coef0)
        else:
            block = K[rows]
            np.matmul(FA[rows], FB.T, out=block)  # (rbf_kernel: the same product)
            exp_nonpositive(block.reshape(-1))  # clipped at 0; rows of a C-contiguous array
        if times is not None:
            np.matmul(K[rows], times, out=product[rows])

    with blas_threads(1):
        thread_map(fill, range(0, n, GRAM_BLOCK))
    return K if times is None else product


def gram(X, kernel: str, gamma: float, degree: int, coef0: float, out=None) -> np.ndarray:
    """The Gram matrix k(X, X), exactly symmetric, its RBF diagonal exactly 1 (into ``out``, a
    C-contiguous n x n array, if given).  Each row block of GRAM_BLOCK rows is computed from the
    diagonal on, as ``blocked_kernel`` computes entries (dense RBF in place from factors made
    once; ``exp_nonpositive_upper``), and mirrored below it: half the products and
    exponentials, on threads as ``blocked_kernel`` (the same entries whatever their number).
    One thread: full digits (1 257 x 64) 5.6 -> 4.1 ms, 4 000 MNIST images 419 -> 265 ms
    (benchmarks/NOTES.md, stop 60)."""
    n = X.shape[0]
    if out is not None and not out.flags.c_contiguous:  # (flat must be a view of it)
        raise ValueError("gram's out must be C-contiguous.")
    K = np.empty((n, n)) if out is None else out
    flat = K.reshape(-1)
    in_place = kernel == "rbf" and not sp.issparse(X)
    if in_place:
        FA, FB = rbf_factors(X, X, gamma)

    def fill(start):
        stop = min(n, start + GRAM_BLOCK)
        upper = K[start:stop, start:]  # (rows of a C-ordered array: BLAS writes it in place)
        if in_place:
            np.matmul(FA[start:stop], FB[start:].T, out=upper)
            exp_nonpositive_upper(flat, n, start, stop)
        else:
            upper[:] = kernel_matrix(X[start:stop], X[start:], kernel, gamma, degree, coef0)
        mirror_diagonal_block(flat, n, start, stop)
        K[stop:, start:stop] = upper[:, stop - start :].T  # (no other block writes there)

    with blas_threads(1):
        thread_map(fill, range(0, n, GRAM_BLOCK))
    if kernel == "rbf":
        np.fill_diagonal(K, 1.0)
    return K


def column_slots(n: int, cache_size: float) -> int:
    """How many kernel columns of length n a ``cache_size`` MB cache holds (at least 2, at most
    n: then the whole Gram matrix is computed up front)."""
    return int(min(n, max(2, cache_size * 2**20 // (8 * max(n, 1)))))


def column_source(X, kernel: str, gamma: float, degree: int, coef0: float, cache_size: float):
    """Build a column source for ``X`` (dense ndarray or CSR) with a ``cache_size`` MB budget.

    The whole Gram matrix is computed up front when it fits; otherwise at least two columns are
    cached and evicted least-recently-used.
    """
    n = X.shape[0]
    params = np.array([KERNEL_KIND[kernel], gamma, degree, coef0], dtype=np.float64)
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()  # canonical: sorted, one entry per (row, column)
        data, indices, indptr = X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)
        dense = np.empty((0, X.shape[1]))
        sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        X = np.asarray(X, dtype=np.float64)
        dense = np.ascontiguousarray(X.T)  # (d, N): see dense_column
        data, indices, indptr = _no_csr()
        sq_norms = np.einsum("ij,ij->i", X, X)
    n_slots = column_slots(n, cache_size)
    if n_slots == n:  # the whole Gram matrix fits: compute it at once with BLAS
        cache = gram(X, kernel, gamma, degree, coef0)
    else:
        cache = np.empty((n_slots, n))
    return _assemble(data, indices, indptr, dense, sq_norms, params, X.shape[1], cache)


def precomputed_source(K: np.ndarray):
    """A column source over a given (symmetric) Gram matrix (its rows are its columns)."""
    K = np.ascontiguousarray(K, dtype=np.float64)
    sq_norms, params = np.ascontiguousarray(np.diag(K)), np.array([0.0, 0.0, 1.0, 0.0])
    return _assemble(*_no_csr(), np.empty((0, 1)), sq_norms, params, 1, K)


def _no_csr():
    """data, indices, indptr of a source whose data are dense (or absent)."""
    return np.empty(0), np.empty(0, np.int64), np.zeros(1, np.int64)


def _assemble(data, indices, indptr, dense, sq_norms, params, n_features, cache):
    """The source tuple around ``cache`` (n_slots columns of length N): the LRU bookkeeping
    empty, or, when the cache holds all N columns (the whole Gram matrix), column i in slot i and
    no clock."""
    n, n_slots = sq_norms.size, cache.shape[0]
    source = (
        data,
        indices,
        indptr,
        dense,
        sq_norms,
        params,
        np.zeros(n_features),
        cache,
        np.full(n, -1, dtype=np.int64),
        np.full(n_slots, -1, dtype=np.int64),
        np.zeros(n_slots, dtype=np.int64),
        None if n_slots == n else np.zeros(1, dtype=np.int64),
    )
    if n_slots == n:
        source[8][:] = source[9][:] = np.arange(n)
    return source


def split_source(source, parts: int):
    """``parts`` column sources over the data of ``source`` for concurrent use (one per thread),
    each with its own bookkeeping and scratch: all over the same Gram matrix when ``source``
    holds it, otherwise each over an equal share of ``source``'s cache memory, whose columns are
    dropped (so together they stay within cache_size).  None when the cache has fewer than two
    columns for each part."""
    data, indices, indptr, dense, sq_norms, params, scratch, cache = source[:8]
    if not is_lru(source):
        caches = [cache] * parts
    else:
        per = cache.shape[0] // parts
        if per < 2:
            return None
        forget_columns(source)
        caches = [cache[w * per : (w + 1) * per] for w in range(parts)]
    return [
        _assemble(data, indices, indptr, dense, sq_norms, params, scratch.size, part)
        for part in caches
    ]


def forget_columns(source) -> None:
    """Empty an LRU source's cache (its columns are computed again when needed)."""
    slot_of, owner, last_used = source[8:11]
    slot_of[:], owner[:], last_used[:] = -1, -1, 0


def is_lru(source) -> bool:
    """Whether ``source`` computes columns on demand (its cache holds fewer than N columns)."""
    return source[7].shape[0] < source[8].size


def restricted_source(source, rows: np.ndarray):
    """A column source over the patterns ``rows`` only (columns K[rows, i] for i in rows), for
    an LRU ``source`` built by :func:`column_source`.

    It takes over the memory of the last slots of ``source``'s cache — as much as K[rows, rows]
    needs (computed at once with BLAS) or, when that does not fit, all of it for as many columns
    of the shorter length as fit — and empties those slots: the columns they held are computed
    again when needed.  So the two together stay within ``cache_size``; K[rows, rows] is computed
    in place (``gram``).
    """
    assert is_lru(source)  # (a whole Gram matrix's columns are never computed again)
    data, indices, indptr, dense, sq_norms, params, scratch, cache = source[:8]
    slot_of, owner, last_used = source[8:11]
    n, N = rows.size, cache.shape[1]
    taken = min(cache.shape[0], -(-n * n // N))  # main slots whose memory the columns take
    for slot in range(cache.shape[0] - taken, cache.shape[0]):
        if owner[slot] >= 0:
            slot_of[owner[slot]] = -1
        owner[slot], last_used[slot] = -1, 0
    if dense.shape[0] > 0:
        dense, (data, indices, indptr) = np.ascontiguousarray(dense[:, rows]), _no_csr()
    else:
        X = _csr(source)[rows]
        data, indices, indptr = X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)
    memory = cache[cache.shape[0] - taken :].reshape(-1)
    n_slots = int(min(n, max(2, memory.size // max(n, 1))))
    sub_cache = memory[: n_slots * n].reshape(n_slots, n)
    sq_rows = np.ascontiguousarray(sq_norms[rows])
    sub = _assemble(data, indices, indptr, dense, sq_rows, params, scratch.size, sub_cache)
    if n_slots == n:  # K[rows, rows] fits: compute it with BLAS (its RBF diagonal exactly 1,
        X_rows = dense.T if dense.shape[0] > 0 else _csr(sub)  # as kernel_diagonal has it)
        gram(X_rows, *_kernel_params(params), out=sub_cache)
    return sub


def shortened_source(source, rows: np.ndarray):
    """An LRU column source over the patterns ``rows`` (sorted; at least 3) only, for an LRU
    ``source``: it takes over all of ``source``'s cache memory, keeps the columns ``source`` had
    cached for those rows, shortened to them (``carry_columns``), and leaves ``source`` empty.
    libsvm's shrinking keeps its cached columns so (Chang and Lin, ACM TIST 2, 2011, section
    5.1); each other column is computed when needed, as ``source`` would compute it (the same
    entries however much memory there is: one-vs-all's classes on threads each have a share).
    At most ``len(rows) - 1`` columns are held, so the result stays an LRU source."""
    assert is_lru(source)  # (a whole Gram matrix's columns are never computed again)
    data, indices, indptr, dense, sq_norms, params, scratch, cache = source[:8]
    n = rows.size
    if dense.shape[0] > 0:
        dense, (data, indices, indptr) = np.ascontiguousarray(dense[:, rows]), _no_csr()
    else:
        X = _csr(source)[rows]
        data, indices, indptr = X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)
    memory = cache.reshape(-1)  # (a view: the cache, or a thread's share of it, is contiguous)
    n_slots = int(min(n - 1, max(2, memory.size // n)))
    sub_cache = memory[: n_slots * n].reshape(n_slots, n)
    sq_rows = np.ascontiguousarray(sq_norms[rows])
    sub = _assemble(data, indices, indptr, dense, sq_rows, params, scratch.size, sub_cache)
    carry_columns(source, rows, sub)
    forget_columns(source)
    return sub


@nb.njit(cache=True)
def carry_columns(source, rows, sub):
    """Move the columns of ``source``'s cache that belong to ``rows`` into ``sub`` (a source over
    ``rows`` whose cache is the start of the same memory), shortened to those rows, in slot order
    and with their LRU marks (``shortened_source`` then forgets ``source``'s).  In place and
    safe: sub slot s is written from source slot j >= s, entry p from entry rows[p] >= p, so every
    read lies at or beyond every write made so far (n <= N)."""
    cache, slot_of, owner, last_used, clock = source[7:12]
    sub_cache, sub_slot_of, sub_owner, sub_last_used, sub_clock = sub[7:12]
    position = np.full(slot_of.size, -1, dtype=np.int64)
    for p in range(rows.size):
        position[rows[p]] = p
    s = 0
    for j in range(owner.size):
        if s == sub_owner.size:
            break
        i = owner[j]
        if i < 0 or position[i] < 0:
            continue
        column, shortened = cache[j], sub_cache[s]
        for p in range(rows.size):
            shortened[p] = column[rows[p]]
        sub_owner[s], sub_slot_of[position[i]], sub_last_used[s] = position[i], s, last_used[j]
        s += 1
    sub_clock[0] = clock[0]


# Kernel blocks are computed a few rows at a time, BLOCK_BYTES at most each.
BLOCK_BYTES = 32 * 2**20


def block_rows(n_columns: int, budget: int) -> int:
    """How many rows of a kernel block with ``n_columns`` columns fit BLOCK_BYTES and
    ``budget`` bytes (the column cache's: the blocks' memory stays within cache_size)."""
    return max(1, min(BLOCK_BYTES, budget) // (8 * max(n_columns, 1)))


def kernel_block(source, rows: np.ndarray, cols: np.ndarray, out=None, times=None) -> np.ndarray:
    """K[rows, cols] from a source built by :func:`column_source` or :func:`restricted_source`
    (``blocked_kernel``, into ``out`` if given: the same entries whatever a fit's ``n_jobs``);
    with ``times`` T, K[rows, cols] T instead (``out`` then holds the kernel block)."""
    name, gamma, degree, coef0 = _kernel_params(source[5])
    dense = source[3]
    if dense.shape[0] > 0:
        A, B = dense[:, rows].T, dense[:, cols].T
    else:
        X = _csr(source)
        A, B = X[rows], X[cols]
    return blocked_kernel(A, B, name, gamma, degree, coef0, out, times)


def _csr(source):
    data, indices, indptr, dense = source[:4]
    return sp.csr_matrix((data, indices, indptr), shape=(indptr.size - 1, dense.shape[1]))


def _kernel_params(params):
    kind, gamma, degree, coef0 = params
    return KERNEL_NAME[int(kind)], float(gamma), int(degree), float(coef0)
