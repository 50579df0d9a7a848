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
(a fraction ``DAMPING`` of the mean kernel diagonal) bounds the step along the directions where
Q is flat (the inhibitory machine's y_i), where the box, not the curvature, decides.  The step is
the best of clip(alpha + t d) for t = 1, 1/2, 1/4 (for Crammer-Singer an over-full budget is
scaled back onto C), taken only if it increases the dual -- far from the optimum, where the free
face is still wrong, it often does not, and the engine then waits longer before the next one.
Its exact gain is computed on the face's patterns alone:

    D(alpha + Delta) - D(alpha) = lin . Delta - <Delta Z, K B> - 1/2 <Delta Z, K Delta B>.

This is projected Newton on the free face in the manner of More and Toraldo's GPCG (SIAM J.
Optim. 1, 1991) and of the truncated Newton method TRON that LIBLINEAR uses for its primal
problems (Lin and More, SIAM J. Optim. 9, 1999), here on the dual, between coordinate-descent
epochs.  The engine's KKT check still decides convergence; a step accelerates, it never stops
the run.  Only the explicit-weights (linear kernel) path takes these steps: there a product with
K_PP costs O(|P| d) through the rows X_P, while with a kernel matrix it costs O(|P|^2), about an
epoch of the shrunk set (measured on digits: the epochs saved did not pay for the steps).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from msvm.fast.patterns import CS, LLW, SIGN, output_shift, pattern_apply, pattern_transpose

DAMPING = 1e-2  # lambda / mean kernel diagonal (1e-4 let CG run off along flat directions)
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


def weight_space(kind, n_features) -> bool:
    """Whether the step is solved exactly through the weights (``_diagonal_face_direction``)."""
    return kind in (SIGN, LLW) and n_features <= WEIGHT_SPACE_FEATURES


def newton_period(kind, n_features) -> int:
    """Epochs between two steps for this machine and width of the rows (offset column included)."""
    return PERIOD_WEIGHT_SPACE if weight_space(kind, n_features) else PERIOD_CG


def face_newton_step(kind, c, lin, hi, y_index, alpha, patterns, subset, Wt, w0, offset,
                     kdiag_mean):  # fmt: skip
    """One damped Newton step on the free face; updates ``alpha``, ``Wt`` and ``w0`` (the
    engine's explicit weights (X^T [Z, Z 1])^T and offset 1^T [Z, Z 1]) if the dual increases.

    ``patterns`` lists the patterns that may hold free variables (the engine's active ones);
    ``subset(P)`` returns the data rows X_P (dense or CSR).  Returns the gain (0 if none).
    """
    patterns = np.asarray(patterns)
    inside = (alpha[patterns] > 0.0) & (alpha[patterns] < hi[patterns])
    has_free = inside.any(axis=1)
    P = patterns[has_free]
    if P.size == 0:
        return 0.0
    L = alpha.shape[1]
    shift = output_shift(kind, c, L)
    XP, y, mask, a = subset(P), y_index[P], inside[has_free], alpha[P]
    lin_P, hi_P = lin[P], hi[P]
    if sp.issparse(XP) and XP.shape[1] > XP.nnz:
        return 0.0  # very sparse, very wide rows: the dense d x L products would dominate

    def coefficients(d):  # Z = S d, pattern by pattern
        return pattern_apply(kind, d, y)

    def outputs(Z):  # (K + offset 11^T)_PP Z M, M = I - shift 11^T
        KZ = np.asarray(XP @ np.asarray(XP.T @ Z)) + offset * Z.sum(axis=0)
        return KZ - shift * KZ.sum(axis=1, keepdims=True) if shift != 0.0 else KZ

    if kind == CS:  # the budgets sum_r alpha_ir <= C that bind are kept
        budget = hi_P.max(axis=1)
        binding = a.sum(axis=1) >= budget * (1.0 - 1e-12)
        counts = np.maximum(mask.sum(axis=1), 1)
    keep_budgets = kind == CS and binding.any()

    def project(v):  # onto the face: free variables only, binding budgets kept
        v *= mask
        if keep_budgets:
            v -= np.where(binding, v.sum(axis=1) / counts, 0.0)[:, None]
            v *= mask
        return v

    damping = DAMPING * kdiag_mean
    KB = _current_outputs(XP, Wt, w0, shift, L)
    g = project(lin_P - pattern_transpose(kind, KB, y))
    if weight_space(kind, XP.shape[1] + (offset != 0.0)):
        signs = pattern_apply(kind, np.ones_like(a), y)  # the diagonal of S_i
        d = _diagonal_face_direction(g, XP, signs, mask, shift, damping, offset)
    else:
        d = _conjugate_gradients(
            lambda v: project(pattern_transpose(kind, outputs(coefficients(v)), y)) + damping * v,
            g,
        )
    best, best_alpha = 0.0, None
    for t in STEP_LENGTHS:
        new = np.clip(a + t * d, 0.0, hi_P)
        if kind == CS:
            new = _onto_budget(a, new, budget)
        dZ = coefficients(new - a)
        gain = np.vdot(lin_P, new - a) - np.vdot(dZ, KB) - 0.5 * np.vdot(dZ, outputs(dZ))
        if gain > best:
            best, best_alpha = gain, new
    if best_alpha is None:
        return 0.0
    dZ = coefficients(best_alpha - a)
    dS = np.column_stack([dZ, dZ.sum(axis=1)]) if Wt.shape[0] > L else dZ  # [Z, Z 1]
    alpha[P] = best_alpha
    Wt += np.asarray(XP.T @ dS).T
    w0 += offset * dS.sum(axis=0)
    return best


def _current_outputs(XP, Wt, w0, shift, L):
    """(K + offset 11^T) B on the rows X_P from the explicit weights of [Z, Z 1]."""
    U = np.asarray(XP @ Wt.T) + w0
    return U[:, :L] - shift * U[:, L:] if shift != 0.0 else U


def _diagonal_face_direction(g, XP, signs, mask, shift, damping, offset):
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
        column = np.full((XP.shape[0], 1), np.sqrt(offset))
        XP = sp.hstack([XP, column], format="csr") if sp.issparse(XP) else np.hstack([XP, column])
    width = XP.shape[1]
    beta = (1.0 - np.sqrt(max(1.0 - shift * L, 0.0))) / L
    grams = np.empty((L, width, width))
    for j in range(L):
        rows = XP[mask[:, j]]
        product = rows.T @ rows
        grams[j] = product.toarray() if sp.issparse(product) else product
    blocks = grams + damping * np.eye(width)

    def solve_D(B):  # D^{-1} B for B of shape (L, width, k), one batched LAPACK call
        return np.linalg.solve(blocks, B)

    b = (np.asarray(XP.T @ (signs * g)) @ (np.eye(L) - beta)).T[:, :, None]  # A g as (L, d, 1)
    x = solve_D(b)
    if beta != 0.0:
        identity = np.broadcast_to(np.eye(width), (L, width, width))
        V = np.concatenate([identity, grams], axis=2)  # (L, d, 2d): [E, F] block by block
        DV = solve_D(V)
        G_s = grams.sum(axis=0)
        C_inv = np.block([[np.zeros((width, width)), -np.eye(width) / beta],
                          [-np.eye(width) / beta, -G_s]])  # fmt: skip
        V2, DV2 = V.reshape(L * width, 2 * width), DV.reshape(L * width, 2 * width)
        inner = C_inv + V2.T @ DV2
        x = x - DV @ np.linalg.solve(inner, V2.T @ x.reshape(L * width))[:, None]
    W = x[:, :, 0].T @ (np.eye(L) - beta)  # H^{-1} A g, times R
    return (g - mask * signs * np.asarray(XP @ W)) / damping


def _conjugate_gradients(apply, b):
    """Approximately solve apply(x) = b (symmetric positive definite), from x = 0."""
    x, r = np.zeros_like(b), b.copy()
    p, rr = r.copy(), float(np.vdot(r, r))
    stop = CG_REDUCTION**2 * rr
    for _ in range(CG_ITERATIONS):
        if rr <= stop:
            break
        Ap = apply(p)
        curvature = float(np.vdot(p, Ap))
        if curvature <= 0.0:  # no damping and a flat face (zero rows): nothing more to find
            break
        step = rr / curvature
        x += step * p
        r -= step * Ap
        rr, previous = float(np.vdot(r, r)), rr
        p = r + (rr / previous) * p
    return x


def _onto_budget(old, new, budget):
    """Scale back, pattern by pattern, the move old -> new where it overfills the budget: the
    result stays >= 0 (a convex combination of two points that are) and sums to the budget
    (or keeps old's sum where rounding had already put that at the budget)."""
    move = new - old
    added = move.sum(axis=1)
    over = (new.sum(axis=1) > budget) & (added > 0.0)
    if over.any():
        room = np.maximum(budget[over] - old[over].sum(axis=1), 0.0)
        new[over] = old[over] + move[over] * np.minimum(room / added[over], 1.0)[:, None]
    return new
