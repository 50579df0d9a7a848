"""The numerics of MKPM's path (``msvm.fast.mkpm``): the dynamic programme of Proposition 1
(20) over a risk table, the choice of d from error rates, and the leave-one-out errors of every
d by PRESS in a fixed basis (plain or weighted, with or without an intercept)."""

from __future__ import annotations

import numba as nb
import numpy as np


def capped_allocation_path(G, width):
    """MKPM Proposition 1 (20) with back-pointers, each column capped at the table's width.

    ``G`` is (L, K+1) with G[l, k] = G*_l(k) for k = 0..K: column l can use its first K
    components at most.  Returns Delta_L(d) for d = 0..width-1 (width - 1 <= L K) and the
    allocation (width, L) reaching it (ties go to the smallest dimension for the earlier
    columns).  The arrays are made here, by numpy: numba's own allocations compiled an
    overload each, a second of MKPM's first fit (stop 37).
    """
    L = G.shape[0]
    delta = np.full((L, width), np.inf)
    back = np.zeros((L, width), dtype=np.int64)
    alloc = np.zeros((width, L), dtype=np.int64)
    allocation_programme(G, delta, back, alloc)
    return delta[L - 1].copy(), alloc


@nb.njit(cache=True)
def allocation_programme(G, delta, back, alloc):
    """``capped_allocation_path``'s dynamic programme: delta[l, d] (inf on entry) is the least
    risk of d dimensions over columns 0..l, back[l, d] the dimensions columns 0..l-1 take,
    alloc[d] the allocation reaching delta[L - 1, d]."""
    L, top, width = G.shape[0], G.shape[1] - 1, delta.shape[1]
    for d in range(min(width, top + 1)):
        delta[0, d] = G[0, d]
    for lam in range(1, L):
        for d in range(width):
            best, arg = np.inf, 0
            for first in range(max(0, d - top), min(d, lam * top) + 1):  # to columns 0..lam-1
                value = delta[lam - 1, first] + G[lam, d - first]
                if value < best:
                    best, arg = value, first
            delta[lam, d] = best
            back[lam, d] = arg
    for d in range(width):
        rest = d
        for lam in range(L - 1, 0, -1):
            first = back[lam, rest]
            alloc[d, lam] = rest - first
            rest = first
        alloc[d, 0] = rest


def allocation_path(G):
    """MKPM Proposition 1 (20) for every total dimension d = 0..D of a table G (L, D+1)."""
    return capped_allocation_path(G, G.shape[1])


SELECTION_TIES = 1e-9  # error rates closer than this to the least count as ties


def select_dimension(errors: np.ndarray) -> int:
    """The smallest d whose error rate is within ``SELECTION_TIES`` of the least.

    Without weights the rates are multiples of 1/N (of 1/(N cv) averaged over folds), so this
    is argmin; weighted rates are sums of weights whose rounding (~N eps) must not turn a tie
    into a strict order (constant weights would otherwise pick another d than no weights).
    """
    return int(np.flatnonzero(errors <= errors.min() + SELECTION_TIES)[0])


def loo_misclassified(
    A,
    rows,
    projections,
    targets,
    alloc,
    code,
    y_index,
    weights,
    lever0,
    offset,
    block=32,
    first=0,
    ova=None,
):
    """Leave-one-out errors of the nearest-codeword rule (8) for every total dimension d, by
    PRESS in the fixed basis A (N, D): the deleted output of column l at dimension k is
    (f_il(k) - h_i(k) y_il) / (1 - h_i(k)) with f_il(k) = offset_l + sum_{k' < k} rows_ik'
    projections_k'l and h_i(k) = lever0_i + sum_{k' < k} A_ik'^2; a pattern with
    1 - h_i <= 1e-10 (interpolated) counts as an error.  ``rows`` is A itself without sample
    weights; with them (the weighted least squares in the basis of the weighted covariance,
    ``msvm.fast.kpca``) it is z(x_i) Gamma^-1/2, and the formula is the weighted PRESS
    (h_i = s_i z_i Gamma^-1 z_i^T = ||A_i||^2).  Without an intercept ``lever0`` and ``offset``
    are 0; with one (``msvm.fast.mkpm``'s docstring) ``offset`` is the intercept (the weighted
    mean of each code column) and ``lever0_i`` = s_i / sum_j s_j, the leverage of the intercept
    column.  Returns the errors for each d (alloc's rows), pattern i counting ``weights[i]``.

    Consecutive allocations differ in few columns (two on average on digits), so the codeword
    products g . c_q are updated for the columns that moved only, and the nearest codeword
    minimises ||c_q||^2 - 2 g . c_q; on a near tie the products are recomputed in a fixed
    order (a column at d_l = 0 has g_l = 0 exactly and ties the codewords that differ only
    there), so that equal distances compare equal and the first codeword wins.  With the
    one-vs-all code (the default, c_q = 2 e_q - 1) ||g - c_q||^2 = ||g||^2 + L - 4 g_q + 2 sum(g),
    so the nearest codeword is the largest g_q (the first of equal ones) and no product is kept.
    Patterns go in blocks of ``block``, innermost, where the loops vectorise.  ``first``: the
    errors of d >= first only (0 below it), every column taken as moved at d = first, as at d = 0: a
    path grown from ``first`` rows has the same allocations below (``allocation_programme``'s
    rows do not depend on its width)."""
    D = A.shape[1]
    L, Q, width = projections.shape[1], code.shape[0], alloc.shape[0]
    # the work arrays, made by numpy (numba's allocations compiled an overload each: stop 37)
    work = (
        np.zeros(width + 1, dtype=np.int64),  # starts: the columns that move at each d,
        np.empty(width * L, dtype=np.int64),  # moved: as CSR lists (all of them at d = 0)
        np.zeros((D + 1, L, block)),  # f[k, l, b]: output of column l at dimension k
        np.zeros((D + 1, block)),  # h[k, b]: leverage at dimension k
        np.zeros((L, block)),  # g: deleted outputs; 0 where undefined, so no branch
        np.ones((L, block), dtype=np.bool_),  # defined
        np.zeros(block, dtype=np.int64),  # undefined: how many of a pattern's columns
        np.zeros((Q, block)),  # dots: g . c_q
        np.empty((2, block)),  # the best and second distances (best: first g's changes)
        np.zeros(block, dtype=np.int64),  # arg: the nearest codeword
        np.empty((2, D, block)),  # a block's rows of A and of ``rows``, transposed
    )
    wrong, norms = np.zeros(width), np.zeros(Q)
    for l in range(L):  # ||c_q||^2, summed over l in order
        norms += code[:, l] * code[:, l]
    if ova is None:  # (False: the codeword products, whatever the code; for the tests)
        ova = code.shape[0] == L and np.array_equal(code, 2.0 * np.eye(L) - 1.0)
    loo_errors(A, rows, projections, targets, alloc, code, y_index, weights, lever0, offset,
               norms, wrong, work, first, ova)  # fmt: skip
    return wrong


@nb.njit(cache=True)
def loo_errors(A, rows, projections, targets, alloc, code, y_index, weights, lever0, offset,
               norms, wrong, work, first, ova):  # fmt: skip
    """``loo_misclassified``'s loops: wrong[d] += the weights of the patterns misclassified at
    dimension d >= first; ``norms`` holds ||c_q||^2, ``work`` the work arrays (made by the
    caller); ``ova``: the code is one-vs-all's (the nearest codeword is the largest output)."""
    N, D = A.shape
    L, Q = projections.shape[1], code.shape[0]
    width = alloc.shape[0]
    starts, moved, f, h, g, defined, undefined, dots, scratch, arg, blocks = work
    best, second = scratch[0], scratch[1]
    lever, out = blocks[0], blocks[1]
    block = h.shape[1]
    for d in range(width):
        starts[d + 1] = starts[d]
        for l in range(L):
            if d < first:
                break
            if d == first or alloc[d, l] != alloc[d - 1, l]:
                moved[starts[d + 1]] = l
                starts[d + 1] += 1
    for start in range(0, N, block):
        B = min(block, N - start)
        for k in range(D):  # the block's rows of A and of ``rows``, transposed (D, B)
            for b in range(B):
                lever[k, b] = A[start + b, k]
                out[k, b] = rows[start + b, k]
        for b in range(B):
            h[0, b] = lever0[start + b]
            for l in range(L):
                f[0, l, b] = offset[l]
        for k in range(D):
            for b in range(B):
                h[k + 1, b] = h[k, b] + lever[k, b] * lever[k, b]
            for l in range(L):
                p = projections[k, l]
                for b in range(B):
                    f[k + 1, l, b] = f[k, l, b] + out[k, b] * p
        g[:] = 0.0
        defined[:] = True
        undefined[:] = 0
        dots[:] = 0.0
        for d in range(first, width):
            for j in range(starts[d], starts[d + 1]):
                l = moved[j]
                k = alloc[d, l]
                for b in range(B):
                    free = 1.0 - h[k, b]
                    new = 0.0
                    if free > 1e-10:
                        new = (f[k, l, b] - h[k, b] * targets[start + b, l]) / free
                        undefined[b] -= not defined[l, b]
                        defined[l, b] = True
                    else:
                        undefined[b] += defined[l, b]
                        defined[l, b] = False
                    best[b] = new - g[l, b]  # the change, kept in best for the update below
                    g[l, b] = new
                if ova:
                    continue
                for q in range(Q):
                    c = code[q, l]
                    for b in range(B):
                        dots[q, b] += best[b] * c
            if ova:  # the largest output, the first of equal ones
                for b in range(B):
                    best[b] = g[0, b]
                    arg[b] = 0
                for q in range(1, Q):
                    for b in range(B):
                        if g[q, b] > best[b]:
                            best[b] = g[q, b]
                            arg[b] = q
                for b in range(B):
                    if undefined[b] or arg[b] != y_index[start + b]:
                        wrong[d] += weights[start + b]
                continue
            best[:B] = np.inf
            second[:B] = np.inf
            arg[:B] = 0
            for q in range(Q):
                for b in range(B):
                    dist = norms[q] - 2.0 * dots[q, b]
                    if dist < best[b]:
                        second[b] = best[b]
                        best[b] = dist
                        arg[b] = q
                    elif dist < second[b]:
                        second[b] = dist
            for b in range(B):
                if undefined[b]:
                    wrong[d] += weights[start + b]
                    continue
                nearest = arg[b]
                if second[b] - best[b] <= 1e-9 * (1.0 + abs(best[b])):  # a near tie
                    low = np.inf
                    for q in range(Q):
                        dots[q, b] = 0.0
                        for l in range(L):
                            dots[q, b] += g[l, b] * code[q, l]
                        dist = norms[q] - 2.0 * dots[q, b]
                        if dist < low:
                            low, nearest = dist, q
                if nearest != y_index[start + b]:
                    wrong[d] += weights[start + b]
