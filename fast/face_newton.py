"""Damped Newton steps on the free face of a dual, taken between epochs of the engine.

Pattern-wise coordinate descent converges linearly, and slowly where the dual is ill-conditioned:
the inhibitory machine's pattern Hessian K_ii (I - y_i y_i^T / L) is singular, and with the
linear kernel on 100 000 points it needed ~23 000 epochs of the shrunk set to reach tol = 0.01
while only a few thousand patterns still had free variables.  On those variables the dual is a
quadratic: with F the free variables (0 < alpha < hi) and everything else held, the step d solves

    (Q_FF + lambda I) d = g_F,      Q d = S^T (K + offset 11^T) (S d) M   (pattern by pattern),

g the dual gradient lin - S^T K B (``msvm.fast.patterns`` has S, M and the kinds).  Where every
S_i is diagonal (one-vs-all, inhibitory, Lee-Lin-Wahba) and the rows are short, the system is
solved exactly through the d x L weights (Woodbury, ``_diagonal_face_direction``); otherwise by
conjugate gradients.  For Crammer-Singer a pattern whose budget sum_r alpha_ir = C binds keeps
it: d moves in sum_{r free} d_ir = 0 there (projected conjugate gradients).  The damping lambda
(at first a fraction ``DAMPING`` of the mean kernel diagonal) bounds the step along the
directions where Q is flat, where the box, not the curvature, decides: a face holds far more
variables than the weights have entries (600 000 against 500 early on the linear benchmark), so
Q_FF is mostly flat, and there the step is a move that keeps the weights and trades the linear
term alone.  The step is the best of clip(alpha + t d) for t = 1, 1/2, 1/4 (for Crammer-Singer
an over-full budget is scaled back onto C), taken only if it increases the dual -- far from the
optimum, where the free face is still wrong, it often does not, and the engine then waits longer
before the next one.  With the exact direction lambda follows the lengths taken
(``next_damping``).  The gain is computed exactly through the weights' change X_P^T Delta Z:

    D(alpha + Delta) - D(alpha) = lin . Delta - <Delta Z, K B> - 1/2 <Delta Z, K Delta B>,
    <Delta Z, (X_P X_P^T + offset 11^T) Delta Z M> = <dW, dW M> + offset <dz, dz M>,

dW = X_P^T Delta Z and dz = 1^T Delta Z.

This is projected Newton on the free face in the manner of More and Toraldo's GPCG (SIAM J.
Optim. 1, 1991) and of the truncated Newton method TRON that LIBLINEAR uses for its primal
problems (Lin and More, SIAM J. Optim. 9, 1999), here on the dual, between coordinate-descent
epochs.  The engine's KKT check still decides convergence; a step accelerates, it never stops
the run.  Only the explicit-weights (linear kernel) path takes these steps: there a product with
K_PP costs O(|P| d) through the rows X_P, while with a kernel matrix it costs O(|P|^2), about an
epoch of the shrunk set (measured on digits: the epochs saved did not pay for the steps).  The
kernel path of Weston-Watkins and Crammer-Singer takes exact steps instead, on the faces of wide
kernels at large C and within a work budget (``msvm.fast.kernel_face``).
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

from msvm.fast.patterns import (
    CS,
    LLW,
    SIGN,
    output_shift,
    outputs_of_state,
    pattern_apply,
    pattern_transpose,
    state_change,
)

GRAM_CHUNK = 4096  # rows gathered at a time for the class Gram matrices (``class_grams``)
DAMPING = 1e-2  # lambda / mean kernel diagonal (1e-4 let CG run off along flat directions)
# lambda after a step: scaled so that the length that won would have been ADAPT_CENTRE, times
# ADAPT_FAIL after a step without gain (``next_damping``).  Measured with the exact direction,
# inhibitory, 20k / 50k rows of the linear benchmark (median of 4 / 2 seeds): 3.65 -> 3.22 s and
# 9.9 -> 9.4 s, coordinate steps 3.6M -> 1.3M and 8.6M -> 3.2M, against the fixed lambda; a
# fixed lambda with lengths down to 1/16 took as few coordinate steps but five products a step.
ADAPT_FAIL, ADAPT_CENTRE = 8.0, 0.5
DAMPING_FLOOR = 1e-8  # lambda never falls below this fraction of its start (at 0, D is singular
# wherever a class has no free variable; halved 1 100 times in a row it reached 0)
CG_ITERATIONS = 20  # conjugate-gradient iterations per step at most
CG_REDUCTION = 1e-2  # ... or until the residual has fallen by this factor
WEIGHT_SPACE_FEATURES = 200  # solve exactly through the weights for at most this many features
# Epochs between two steps (after a step that gained; doubled after one that did not): a step
# solved through the weights costs about three epochs of the linear benchmark's shrunk set, one
# by conjugate gradients about ten (measured there: inhibitory 23.3 -> 19.9 s at 3 instead of 10;
# Crammer-Singer and Weston-Watkins, by CG, 7.0 -> 8.2 s and 9.8 -> 11.4 s at 3).
PERIOD_WEIGHT_SPACE, PERIOD_CG = 3, 10
STEP_LENGTHS = (1.0, 0.5, 0.25)  # the best is taken (halving further: more steps accepted for
# little gain, measured slower: Crammer-Singer 100k 6.5 -> 9.5 s)
# The steps' fixed costs in Python and numpy (STEP_OVERHEAD_NS each: 1.0 ms a step on iris,
# whose epochs take a few microseconds) may reach ALLOWANCE_NS, and beyond it WORK_SHARE of the
# epochs' modelled work (``due``).  Without a bound a tiny problem at a huge effective C (iris
# x 1e5 with the linear kernel, that is C = 1e10) took a step every few epochs until the step
# budget ran out: Lee-Lin-Wahba ran for more than 300 s, 13 000 steps in its first 15 s (stop
# 40).  The share alone starved the steps where they pay most (raw wine: inhibitory 0.57 ->
# 28 s, Weston-Watkins 0.15 -> 2.3 s); the allowance keeps those fits as they were.  On large
# data the epochs' work between two steps is far above a step's fixed cost.
STEP_OVERHEAD_NS, ALLOWANCE_NS, WORK_SHARE = 1.0e6, 2.0e9, 0.5


def weight_space(kind, n_features) -> bool:
    """Whether the step is solved exactly through the weights (``_diagonal_face_direction``)."""
    return kind in (SIGN, LLW) and n_features <= WEIGHT_SPACE_FEATURES


class FaceNewton:
    """Damped Newton steps on the free face of one dual, with the state carried between steps.

    Parameters: the dual (``kind``, ``c``, ``lin``, ``hi``, ``y_index``; ``msvm.fast.patterns``),
    the training rows X (dense or CSR, as the engine holds them), the ``offset`` of
    K + offset 11^T, and the initial damping lambda.  ``period``: the epochs between two steps
    for this machine and width of the rows.

    Carried state, for the weight-space direction: lambda, adapted to the step lengths the line
    search takes (``next_damping``), and the class Gram matrices
    G_j = sum over the free (i, j) of x_i x_i^T, updated by the rows whose variables entered or
    left the face since the last step (between two steps a few epochs apart most of the face
    stays; recomputing G_j was most of a step's cost on the linear benchmark).
    """

    def __init__(self, kind, c, lin, hi, y_index, X, offset, damping):
        self.kind, self.c, self.lin, self.hi, self.y_index = kind, c, lin, hi, y_index
        self.X, self.offset, self.damping = X, offset, damping
        self.min_damping = DAMPING_FLOOR * damping
        width = X.shape[1] + (offset != 0.0)  # the offset enters as a constant column
        self.exact = weight_space(kind, width)
        self.period = PERIOD_WEIGHT_SPACE if self.exact else PERIOD_CG
        # the face G_j was last computed for: its rows (sorted) and their free variables
        self.face_rows, self.face_mask = np.empty(0, np.int64), np.empty((0, hi.shape[1]), bool)
        self.grams = np.zeros((hi.shape[1], width, width))
        self.spent = 0.0  # the steps' modelled fixed cost so far (ns)

    def due(self, work: float) -> bool:
        """Whether a step may be taken after the epochs' modelled ``work`` (ns) so far: the
        steps' fixed costs, this one's included, within ALLOWANCE_NS or WORK_SHARE of it; if
        so, it is charged."""
        if self.spent + STEP_OVERHEAD_NS > max(ALLOWANCE_NS, WORK_SHARE * work):
            return False
        self.spent += STEP_OVERHEAD_NS
        return True

    def rows(self, P):
        """X_P for sorted P without repeats (X itself for every row)."""
        return self.X if P.size == self.X.shape[0] else self.X[P]

    def update_grams(self, rows, mask):
        """G_j for the face given by the rows that hold free variables (sorted) and their mask
        (rows x L), from the variables that entered or left it since the last call (or afresh,
        if that is cheaper).  The comparison works on the rows of either face, not on all N x L
        variables (which cost a small step more than its own work)."""
        N, L = self.hi.shape
        marks = np.zeros(N, dtype=bool)  # the rows of either face (O(N) bytes, no sort)
        marks[self.face_rows] = marks[rows] = True
        union, position = np.flatnonzero(marks), np.cumsum(marks) - 1
        before, now = np.zeros((union.size, L), dtype=bool), np.zeros((union.size, L), dtype=bool)
        before[position[self.face_rows]] = self.face_mask
        now[position[rows]] = mask
        changed, classes = np.nonzero(before != now)
        if changed.size < np.count_nonzero(mask):
            entered = now[changed, classes]
            left = ~entered
            self.grams += class_grams(self.X, union[changed[entered]], classes[entered], L,
                                      self.offset)  # fmt: skip
            self.grams -= class_grams(self.X, union[changed[left]], classes[left], L, self.offset)
        else:
            free_rows, free_classes = np.nonzero(mask)
            self.grams = class_grams(self.X, rows[free_rows], free_classes, L, self.offset)
        self.face_rows, self.face_mask = rows, mask

    def step(self, alpha, patterns, Wt, w0):
        """One damped Newton step on the free face; updates ``alpha``, ``Wt`` and ``w0`` (the
        engine's explicit weights (X^T [Z, Z 1])^T and offset 1^T [Z, Z 1]) if the dual
        increases, and adapts the damping.  ``patterns`` lists the patterns that may hold free
        variables (the engine's active ones, each once).  Returns the gain (0 if none).

        Each product with X_P is a pass over |P| d numbers that BLAS cannot make faster than
        memory (9 ms at |P| = 100 000, d = 50): when most patterns hold free variables the step
        works on every row (no copy of X), and the line search takes all its lengths in one
        product.
        """
        kind, offset, hi, L = self.kind, self.offset, self.hi, alpha.shape[1]
        patterns = np.sort(patterns)  # gathers in memory order
        a_all, hi_all = alpha[patterns], hi[patterns]
        inside = (a_all > 0.0) & (a_all < hi_all)
        has_free = inside.any(axis=1)
        if not has_free.any():
            return 0.0
        N = alpha.shape[0]
        if 2 * np.count_nonzero(has_free) > N:  # every row, those without free variables masked
            P, mask = np.arange(N), np.zeros(alpha.shape, dtype=bool)
            mask[patterns] = inside
            a, hi_P = alpha.copy(), hi
        else:
            P, mask = patterns[has_free], inside[has_free]
            a, hi_P = a_all[has_free], hi_all[has_free]
        XP, y, lin_P = self.rows(P), self.y_index[P], self.lin[P]
        if sp.issparse(XP) and XP.shape[1] > XP.nnz:
            return 0.0  # very sparse, very wide rows: the dense d x L products would dominate
        shift = output_shift(kind, self.c, L)

        def coefficients(d):  # Z = S d, pattern by pattern
            return pattern_apply(kind, d, y)

        budget = hi_P.max(axis=1) if kind == CS else np.empty(0)
        if kind == CS:  # the budgets sum_r alpha_ir <= C that bind are kept
            binding = full_budgets(kind, a, budget)
            counts = np.maximum(mask.sum(axis=1), 1)
        keep_budgets = kind == CS and binding.any()

        def project(v):  # onto the face: free variables only, binding budgets kept
            v *= mask
            if keep_budgets:
                v -= np.where(binding, v.sum(axis=1) / counts, 0.0)[:, None]
                v *= mask
            return v

        KB = outputs_of_state(np.asarray(XP @ Wt.T) + w0, kind, self.c, L)  # on the rows X_P
        g = project(lin_P - pattern_transpose(kind, KB, y))
        if self.exact:
            has = mask.any(axis=1)  # (every row, when P is)
            self.update_grams(P[has], mask[has])
            signs = pattern_apply(kind, np.ones_like(a), y)  # the diagonal of S_i
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                d = _diagonal_face_direction(g, XP, signs, mask, shift, self.damping, offset,
                                             self.grams)  # fmt: skip
            if not np.isfinite(d).all():  # beyond the floating range (features ~1e100)
                self.damping = max(next_damping(self.damping, 0.0), self.min_damping)
                return 0.0
        else:

            def outputs(Z):  # (K + offset 11^T)_PP Z M, M = I - shift 11^T
                KZ = np.asarray(XP @ np.asarray(XP.T @ Z)) + offset * Z.sum(axis=0)
                return KZ - shift * KZ.sum(axis=1, keepdims=True) if shift != 0.0 else KZ

            d = _conjugate_gradients(
                lambda v: (
                    project(pattern_transpose(kind, outputs(coefficients(v)), y)) + self.damping * v
                ),
                g,
            )
        lengths = np.array(STEP_LENGTHS)
        moves = np.empty((lengths.size, *a.shape))
        dZ = np.empty((a.shape[0], lengths.size * L))
        gains = line_moves(kind, a, d, hi_P, y, lin_P, KB, budget, lengths, moves, dZ)
        dWs = np.split(np.asarray(XP.T @ dZ), lengths.size, axis=1)  # X_P^T dZ for each length
        dzs = np.split(dZ.sum(axis=0), lengths.size)
        best, best_k = 0.0, -1
        for k in range(lengths.size):
            gain = gains[k] - 0.5 * (_m_norm(dWs[k], shift) + offset * _m_norm(dzs[k][None], shift))
            if gain > best:
                best, best_k = gain, k
        if self.exact:  # (with conjugate gradients a fixed lambda was faster: CS 100k 7.3 -> 6.6 s)
            t = STEP_LENGTHS[best_k] if best_k >= 0 else 0.0
            self.damping = max(next_damping(self.damping, t), self.min_damping)
        if best_k < 0:
            return 0.0
        dW, dz = dWs[best_k], dzs[best_k]
        alpha[P] = a + moves[best_k]
        if Wt.shape[0] > L:  # [Z, Z 1]: the sum column too
            dW, dz = np.column_stack([dW, dW.sum(axis=1)]), np.append(dz, dz.sum())
        Wt += dW.T
        w0 += offset * dz
        return best


@nb.njit(cache=True)
def line_moves(kind, a, d, hi, y, lin, KB, budget, lengths, moves, dZ):
    """For each length t_k, pattern by pattern: moves[k] = clip(a + t_k d, 0, hi) - a (for CS,
    where that overfills the budget sum_r alpha_ir <= budget_i, the increases are scaled back
    until it fits and the decreases kept: scaling the whole move instead dropped it whenever a
    binding budget's direction summed to +1e-16 by rounding, 15 % of such moves in a review's
    run, and Crammer-Singer on 3 000 rows then did not converge in 30 000 epochs),
    dZ[:, kL:(k+1)L] = S moves[k] (``patterns.state_change``); returns the linear part of each
    gain, lin . moves[k] - <dZ_k, K B>.  One pass, without the temporaries of the numpy
    expression (a third of a step's time at 100 000 rows)."""
    n, L = a.shape
    identity = np.arange(L).reshape(1, L)
    delta, dS = np.empty(L), np.empty(L + 1)
    gains = np.zeros(lengths.size)
    for i in range(n):
        used = 0.0
        for j in range(L):
            used += a[i, j]
        for k in range(lengths.size):
            added, removed = 0.0, 0.0  # the increases and the decreases
            for j in range(L):
                delta[j] = min(max(a[i, j] + lengths[k] * d[i, j], 0.0), hi[i, j]) - a[i, j]
                if delta[j] > 0.0:
                    added += delta[j]
                else:
                    removed += delta[j]
            if kind == CS and added > 0.0 and used + removed + added > budget[i]:
                scale = min(max(budget[i] - used - removed, 0.0) / added, 1.0)
                for j in range(L):
                    if delta[j] > 0.0:
                        delta[j] *= scale
            state_change(kind, L, delta, identity, np.int64(0), y[i], 0.0, dS)
            for j in range(L):
                moves[k, i, j] = delta[j]
                dZ[i, k * L + j] = dS[j]
                gains[k] += lin[i, j] * delta[j] - dS[j] * KB[i, j]
    return gains


def full_budgets(kind, a, budget):
    """Which patterns' budgets sum_r alpha_ir <= budget_i bind, to rounding (none but for CS)."""
    if kind != CS:
        return np.zeros(a.shape[0], dtype=bool)
    return a.sum(axis=1) >= budget * (1.0 - 1e-12)


def next_damping(damping, t):
    """The damping for the next step after one whose best length was t (0: none gained).

    The face has far more variables than the weights have entries, so Q_FF is mostly flat and
    the direction is dominated by its flat part, which scales as 1 / lambda (on the linear
    benchmark a step with 4 lambda at t = 1 gained exactly what one with lambda gained at
    t = 1/4).  lambda is rescaled so that the length that won would have been ADAPT_CENTRE,
    the middle of the line search, and multiplied by ADAPT_FAIL after a step without gain
    (Levenberg-Marquardt's rule, with the line search as the test).
    """
    if t == 0.0:
        return damping * ADAPT_FAIL
    return damping * (ADAPT_CENTRE / t)


def _m_norm(W, shift):
    """<W, W M> for M = I - shift 11^T (the weights' part of <dZ, K dZ M>)."""
    return float(np.vdot(W, W) - shift * np.vdot(W.sum(axis=1), W.sum(axis=1)))


def _diagonal_face_direction(g, XP, signs, mask, shift, damping, offset, grams):
    """(Q_FF + damping I)^{-1} g exactly where every S_i is diagonal (``signs``: y_i for the
    one-vs-all and inhibitory machines, -1 for Lee-Lin-Wahba).

    With R = I - beta 11^T the square root of M = I - shift 11^T, Q = A^T A for the map
    A d = X_P^T (S d) R from the face to the d x L weights, so by Woodbury

        (lambda I + A^T A)^{-1} g = (g - A^T H^{-1} A g) / lambda,   H = lambda I + A A^T,

    and A A^T W = [G_j (W R)_j]_j R with G_j = sum over the free (i, j) of x_i x_i^T (the offset
    of K + offset 11^T enters as a constant column of X_P).  H is block-diagonal plus rank 2d:
    with E = 1 (x) I_d, F = [G_1; ...; G_L] and G_s = sum_j G_j,

        H = D + V C V^T,   D = lambda I + diag(G_j),   V = [E, F],
        C = [[beta^2 G_s, -beta I], [-beta I, 0]],

    solved by Woodbury once more: L solves with d x d blocks and one 2d x 2d system, O(L d^3)
    instead of O((L d)^3).  (numpy's LAPACK throughout: scipy.linalg brings a second OpenBLAS
    whose spinning threads slowed the next epochs fourfold on two cores.)
    """
    L = g.shape[1]
    if offset != 0.0:
        XP = _with_constant(XP, np.sqrt(offset))
    width = XP.shape[1]
    beta = (1.0 - np.sqrt(max(1.0 - shift * L, 0.0))) / L
    D_inv = np.linalg.inv(grams + damping * np.eye(width))  # D^{-1}, block by block (SPD)
    b = (np.asarray(XP.T @ (signs * g)) @ (np.eye(L) - beta)).T[:, :, None]  # A g as (L, d, 1)
    x = D_inv @ b
    if beta != 0.0:
        identity = np.broadcast_to(np.eye(width), (L, width, width))
        V = np.concatenate([identity, grams], axis=2)  # (L, d, 2d): [E, F] block by block
        DV = np.concatenate([D_inv, D_inv @ grams], axis=2)
        G_s = grams.sum(axis=0)
        C_inv = np.block([[np.zeros((width, width)), -np.eye(width) / beta],
                          [-np.eye(width) / beta, -G_s]])  # fmt: skip
        V2, DV2 = V.reshape(L * width, 2 * width), DV.reshape(L * width, 2 * width)
        inner = C_inv + V2.T @ DV2
        x = x - DV @ np.linalg.solve(inner, V2.T @ x.reshape(L * width))[:, None]
    W = x[:, :, 0].T @ (np.eye(L) - beta)  # H^{-1} A g, times R
    return (g - mask * signs * np.asarray(XP @ W)) / damping


def _with_constant(X, value):
    """[X, value 1]: the rows with a constant appended (the offset of K + offset 11^T)."""
    column = np.full((X.shape[0], 1), value)
    return sp.hstack([X, column], format="csr") if sp.issparse(X) else np.hstack([X, column])


def class_grams(X, rows, classes, L, offset):
    """G_j = sum over the pairs (i, j) in (rows, classes) of x_i x_i^T for each class j < L, x_i
    row i of X with a constant sqrt(offset) appended when offset != 0.  The rows are gathered
    GRAM_CHUNK at a time: gathering them all at once took hundreds of MB early in a run (600 000
    free variables on the linear benchmark), page-faulted in afresh on every step."""
    width = X.shape[1] + (offset != 0.0)
    grams = np.zeros((L, width, width))
    order = np.argsort(classes, kind="stable")
    rows, bounds = rows[order], np.searchsorted(classes[order], np.arange(L + 1))
    for j in range(L):
        for start in range(bounds[j], bounds[j + 1], GRAM_CHUNK):
            block = X[rows[start : min(start + GRAM_CHUNK, bounds[j + 1])]]
            if offset != 0.0:
                block = _with_constant(block, np.sqrt(offset))
            product = block.T @ block
            grams[j] += product.toarray() if sp.issparse(product) else product
    return grams


def _conjugate_gradients(apply, b):
    """Approximately solve apply(x) = b (symmetric positive definite), from x = 0.  Beyond the
    floating range (features near 1e107: gradients ~1e90 times K ~1e214) a product, the next
    iterate or its residual overflows: the iterations end at the last finite x, and the line
    search judges it."""
    x, r = np.zeros_like(b), b.copy()
    p, rr = r.copy(), float(np.vdot(r, r))
    stop = CG_REDUCTION**2 * rr
    for _ in range(CG_ITERATIONS):
        if rr <= stop:
            break
        with np.errstate(over="ignore", invalid="ignore"):
            Ap = apply(p)
            curvature = float(np.vdot(p, Ap))
            if not curvature > 0.0:  # overflowed, or no damping and a flat face (zero rows)
                break
            step = rr / curvature
            x_next, r = x + step * p, r - step * Ap
            rr, previous = float(np.vdot(r, r)), rr
            if not (np.isfinite(rr) and np.isfinite(x_next).all()):
                break
        x = x_next
        p = r + (rr / previous) * p
    return x
