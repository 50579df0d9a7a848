"""A semismooth Newton augmented Lagrangian method for the linear-kernel duals (the d x L weights).

The engine's duals (``msvm.fast.patterns``) read, with the linear kernel K = X X^T,

    maximise  D(alpha) = sum_i lin_i . alpha_i - 1/2 || X^T Z R ||^2,   alpha_i in P_i,

Z_i = S_i alpha_i and R = I - beta 11^T the symmetric square root of M = I - s 11^T (R = I for
Weston-Watkins and Crammer-Singer), P_i the box 0 <= alpha_i <= hi_i, for Crammer-Singer with the
budget sum_r alpha_ir <= C.  Coordinate descent on it slows down where the classes overlap: on
``make_classification(20000, 50 features, 10 classes)`` at C = 1, 87 % of the patterns violate
their margin, the optimum's weights balance thousands of patterns held at their bounds, and 1 000
epochs left the Crammer-Singer KKT violation at 2.5.  Yet the weights have d L = 500 entries.

This module solves the dual by the proximal point method (Rockafellar, SIAM J. Control Optim. 14,
1976; on the primal it is the method of multipliers): from alpha^k,

    alpha^{k+1} = argmax_alpha  D(alpha) - ||alpha - alpha^k||^2 / (2 sigma_k).

Writing -1/2 ||X^T Z R||^2 = min_P 1/2 ||P||^2 - <P, X^T Z R> and exchanging max and min, the
step is a smooth, strongly convex problem over the weights P (d x L) alone:

    P^{k+1} = argmin_P  phi(P) = 1/2 ||P||^2
                        + sum_i max_{a in P_i} [a . g_i(P) - ||a - alpha^k_i||^2 / (2 sigma)],
    g_i(P) = lin_i - S_i^T (R P^T x_i)       (the dual gradient at weights P),

whose inner maximiser is the projection alpha_i(P) = Proj_{P_i}(alpha^k_i + sigma g_i(P)), and
alpha^{k+1} = alpha(P^{k+1}).  phi is the Moreau envelope of the primal loss about alpha^k: its
gradient is P - X^T S alpha(P) R (zero exactly when P is the weights of alpha(P)), and a
generalised Hessian (Clarke's, of the projection: Hiriart-Urruty, Strodiot and Nguyen, Appl. Math.
Optim. 11, 1984) is

    I + sigma sum_i (x_i x_i^T) (x) R S_i J_i S_i^T R,

J_i the Jacobian of the projection at alpha^k_i + sigma g_i: the identity on the variables strictly
inside their box, and for a binding budget I_F - 11^T / |F| on its support F.  A pattern whose
projection lands on a vertex of P_i -- at 0, at C, or all its mass on one class -- has J_i = 0 and
adds nothing: far from the start only the patterns near a tie between classes build the Newton
matrix, an (d L) x (d L) system (500 x 500 here), solved exactly.  This is the semismooth Newton
augmented Lagrangian method of Li, Sun and Toh (SIAM J. Optim. 28, 2018, Algorithms SSNAL and
SSN: semismooth Newton with an Armijo line search on phi, the proximal weight sigma raised
between steps); the multiplier alpha^{k+1} is always exactly feasible, so D(alpha^{k+1}) and the
primal value at its weights X^T S alpha^{k+1} R bracket the optimum.

The engine runs the method on a cold start (``DecompositionSolver.solve_linear``) and then checks
every variable with its own epochs, which decide convergence as for any other start: a start,
never an answer taken on trust.  On the problem above the method ends at KKT 6.5e-4 after ~8
proximal and ~75 Newton steps (about 2.5 s), and one epoch confirms it; LIBLINEAR's
Crammer-Singer solver stops at its 100 000-pass limit after ~63 s, 1.5 above the optimum
(``benchmarks/linear_overlap.py``).

Two measured details.  sigma starts at 1 / (mean kernel diagonal) from alpha = 0, where every
pattern is on the face (the Newton matrix is then dense in the classes, one BLAS product per
class pair, ~50 ms), and grows tenfold after each step that took few Newton steps: started at
1e2-3e3 times that, the first step from alpha = 0 sits on a vertex of every P_i (the Newton
matrix is the identity) and the inhibitory machine's did not converge in 40 Newton steps.  And
the method runs with BLAS on one thread (threadpoolctl): its products are small (N x d by d x L,
a (d L)^2 solve), and on the shared two-core machine two OpenBLAS threads made them 5-8 times
slower (Crammer-Singer above: 13-18 s against 1.9-2.4 s in all).
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np
import scipy.sparse as sp

from msvm.fast.patterns import CS, LLW, SIGN, WW, output_shift, pattern_violation
from msvm.fast.threads import blas_threads

# Where the method can run (``applies``): dense rows and a Newton system of at most MAX_WEIGHTS
# unknowns (its O((d L)^3) solve must stay a small part of a pass).  When it runs
# (``DecompositionSolver.solve_linear``): a cold run of the inhibitory or Lee-Lin-Wahba machine
# starts with it (their Newton system is solved exactly, ``newton_direction``), and a cold run of
# the other machines on at least MIN_ROWS patterns, when its ``modelled_cost`` is cheap against
# the epochs (``engine.METHOD_FIRST_EPOCHS``); otherwise it takes over epochs that have not
# converged after RESCUE_EPOCHS epochs and a modelled work equal to its own cost (their epochs are
# cheap and often enough: digits, 1 797 rows, 180 epochs in 0.1 s against 0.9-1.3 s with the
# method first).  Measured in benchmarks/NOTES.md, stops 21, 23 and 31.
MIN_ROWS, MAX_WEIGHTS, RESCUE_EPOCHS = 5_000, 1_600, 200
# The modelled cost of a run in ns: EXPECTED_NEWTON Newton steps (41-114 on the shapes measured)
# of NEWTON_NS . (1, N d L, (d L)^3) each -- the line search's passes over the rows and the dense
# (d L)^2 solve (fitted at stop 31 on standardised make_classification, N = 1 000 and 4 000,
# d = 16-256, L = 6, inhibitory and WW: within 0.7-1.4x of the measured time per Newton step;
# 107 ms a step at d = 256, where the epochs took 1.5-2 ms an epoch).
NEWTON_NS, EXPECTED_NEWTON = (9e5, 4.0, 0.03), 90


def modelled_cost(n_rows: int, n_columns: int, L: int) -> float:
    """The modelled time (ns) of a run of the method on n_rows x n_columns data, L classes."""
    width = float(n_columns) * L
    return EXPECTED_NEWTON * (
        NEWTON_NS[0] + NEWTON_NS[1] * n_rows * width + NEWTON_NS[2] * width**3
    )


def min_rows(shift: float) -> int:
    """The patterns from which a cold run starts with the method (above): any number for the
    machines whose outputs sum to zero (M = I - s 11^T with s != 0, ``output_shift``: the
    inhibitory machine and LLW), MIN_ROWS for the others (WW, CS, one-vs-all)."""
    return 0 if shift != 0.0 else MIN_ROWS


# sigma, in units of 1 / (mean kernel diagonal): the first, the factor between two outer steps,
# the largest while the proximal steps make progress, and the least.  (See benchmarks/NOTES.md,
# stop 18, for the measurements.)
SIGMA_START, SIGMA_GROWTH, SIGMA_MAX, SIGMA_FLOOR = 1.0, 10.0, 1e5, 1e-2
# Beyond SIGMA_MAX sigma grows only while a step at the cap cuts the KKT violation by less than
# SLOW_PROGRESS, up to SIGMA_LIMIT.  The mean diagonal says nothing of the spread of X^T X's
# eigenvalues: on badly scaled features (raw wine, proline ~1e3 beside ratios ~1) the steps at
# 1e5 cut the violation by ~5 % each, the 40 steps ended at 0.06 and the epochs took 23 s;
# with the cap raised, 0.03 s.  On well-scaled data the steps at 1e5 cut it 2-10x, and a larger
# sigma there only costs failed Newton iterations (stop 23).
SLOW_PROGRESS, SIGMA_LIMIT = 0.8, 1e12
# sigma grows only after a proximal step that took at most FAST_STEP Newton steps; after a step
# that failed, sigma stays below the failed value until RETRY_AFTER fast steps in a row (far from
# the optimum a large sigma fails where later it would not: standardised digits, inhibitory,
# linear, failed at 1e2 in step 3 and crawled at 1e1 for the remaining 37 steps, KKT 0.13)
FAST_STEP, RETRY_AFTER = 20, 3
OUTER_STEPS, NEWTON_STEPS = 40, 40  # proximal steps in all, Newton steps per proximal step
ARMIJO, HALVINGS = 1e-4, 40  # sufficient decrease of the line search; its halvings at most
# A proximal step is solved when ||grad phi|| <= INNER_TOL (1 + ||P||), or when the line search
# cannot decrease phi in floating point and ||grad phi|| is within INNER_SLACK of that.
INNER_TOL, INNER_SLACK = 1e-6, 1e3


def applies(kind, hi, X, n_columns) -> bool:
    """Whether the method can run: a machine it knows, dense rows, a small Newton system, and
    (Crammer-Singer) every upper bound 0 or the pattern's budget, as in ``CrammerSingerSVC``
    (MProt's prototypes have other bounds).  When it runs: ``min_rows`` and RESCUE_EPOCHS."""
    if kind not in (SIGN, LLW, WW, CS) or sp.issparse(X):
        return False
    if n_columns * hi.shape[1] > MAX_WEIGHTS:
        return False
    if kind == CS:
        top = hi.max(axis=1, keepdims=True)
        return bool(np.all((hi == 0.0) | (hi == top)))
    return True


def root_beta(kind, c, L) -> float:
    """beta of R = I - beta 11^T with R R = M = I - s 11^T (s = ``output_shift``)."""
    s = output_shift(kind, c, L)
    return (1.0 - np.sqrt(max(1.0 - s * L, 0.0))) / L


@nb.njit(cache=True)
def pattern_gradients(kind, F, i, lin, y, g):
    """g = lin_i - S_i^T F_i: the dual gradient of pattern i from its outputs F_i (= (K B)_i)."""
    L = F.shape[1]
    yi = y[i]
    for j in range(L):
        if kind == SIGN:
            g[j] = lin[i, j] - F[i, j] if j == yi else lin[i, j] + F[i, j]
        elif kind == LLW:
            g[j] = lin[i, j] + F[i, j]
        else:
            g[j] = lin[i, j] - (F[i, yi] - F[i, j])


@nb.njit(cache=True)
def project_budget(v, hi, a):
    """a = the projection of v onto {0 <= a <= hi, sum a <= max hi} where every hi is 0 or that
    maximum B; returns tau (0 when the budget is slack): a = max(v - tau, 0) where hi > 0.

    Slack budget: a = max(v, 0) (each entry at most the sum, so at most B).  Binding: tau solves
    sum max(v - tau, 0) = B, found on the entries sorted in decreasing order (Held, Wolfe and
    Crowder 1974; the simplex projection of Duchi et al., ICML 2008), computed relative to the
    top entry a_0: delta = a_0 - tau = (B + sum_{k<=q} (a_0 - a_k)) / (q + 1) for the last q with
    a_0 - a_q < delta, and a_j = max(delta - (a_0 - v_j), 0), each at most the budget left by
    the entries before it (a no-op but for rounding).  So a carries B to its rounding
    (v - tau had v's rounding: all of a budget below it, MultiPrototypeSVC at C = 5e-324, was lost
    or, by the first test failing, left a = v)."""
    n = v.size
    B, total = 0.0, 0.0
    for j in range(n):
        B = max(B, hi[j])
        if hi[j] > 0.0 and v[j] > 0.0:
            total += v[j]
    if not total > B:
        for j in range(n):
            a[j] = max(v[j], 0.0) if hi[j] > 0.0 else 0.0
        return 0.0
    # the positive entries in decreasing order (insertion sort: n is the number of classes)
    m = 0
    for j in range(n):
        if hi[j] > 0.0 and v[j] > 0.0:
            x = v[j]
            q = m
            while q > 0 and a[q - 1] < x:
                a[q] = a[q - 1]
                q -= 1
            a[q] = x
            m += 1
    top, gaps, delta = a[0], 0.0, B
    for q in range(m):
        gaps += top - a[q]
        d = (B + gaps) / (q + 1)
        if top - a[q] < d:
            delta = d
    spent = 0.0  # each entry at most the budget left: ties below B's resolution (B / m rounds
    for j in range(n):  # to 0 where B is subnormal) would each take delta = B
        a[j] = max(min(delta - (top - v[j]), B - spent), 0.0) if hi[j] > 0.0 else 0.0
        spent += a[j]
    return top - delta


@nb.njit(cache=True)
def proximal_map(kind, F, FD, t, anchor, sigma, lin, hi, y, alpha, free):
    """alpha_i = Proj_{P_i}(anchor_i + sigma g_i) for every pattern, g from the outputs
    F + t FD (F alone when FD is (0, 0): the line search moves along X D R without a product
    per trial); returns sum_i [alpha_i . g_i - ||alpha_i - anchor_i||^2 / (2 sigma)], phi's loss
    part.

    With ``free`` of shape (N, L) (else (0, 0)), also marks the Jacobian J_i of the projection:
    free[i, j] = 1 for a variable strictly inside its box (box kinds) or holding mass (CS), and
    for CS 2 where the budget binds (J_i = I_F - 11^T / |F| on those, module docstring), 0
    elsewhere."""
    N, L = F.shape
    g, v, a, f = np.empty(L), np.empty(L), np.empty(L), np.empty((1, L))
    marks, along = free.shape[0] > 0, FD.shape[0] > 0
    total = 0.0
    for i in range(N):
        for j in range(L):
            f[0, j] = F[i, j] + t * FD[i, j] if along else F[i, j]
        yi = y[i]
        for j in range(L):  # pattern_gradients on the row f
            if kind == SIGN:
                g[j] = lin[i, j] - f[0, j] if j == yi else lin[i, j] + f[0, j]
            elif kind == LLW:
                g[j] = lin[i, j] + f[0, j]
            else:
                g[j] = lin[i, j] - (f[0, yi] - f[0, j])
        for j in range(L):
            v[j] = anchor[i, j] + sigma * g[j]
        tau = 0.0
        if kind == CS:
            tau = project_budget(v, hi[i], a)
        else:
            for j in range(L):
                a[j] = min(max(v[j], 0.0), hi[i, j])
        for j in range(L):
            alpha[i, j] = a[j]
            if hi[i, j] > 0.0:
                delta = a[j] - anchor[i, j]
                total += a[j] * g[j] - delta * delta / (2.0 * sigma)
            if marks:
                inside = hi[i, j] > 0.0 and a[j] > 0.0 and (kind == CS or a[j] < hi[i, j])
                free[i, j] = (2 if tau > 0.0 else 1) if inside else 0
    return total


def newton_blocks(kind, X, free, y_index):
    """T = sum_i x_i x_i^T (x) S_i J_i S_i^T as (L, L, d, d) blocks, from the marks of
    ``proximal_map``: gathered rows and one BLAS product per class (SIGN, LLW: S J S^T = J), per
    (own class, class) pair (WW, CS with a slack budget: each free variable j adds
    (e_y - e_j)(e_y - e_j)^T), and per pair of classes holding mass under a binding budget (CS:
    I_F - 11^T / |F|, its own class cancels).  Only the rows with a mark are read: far from the
    start they are the few patterns near a tie."""
    N, L = free.shape
    d = X.shape[1]
    T = np.zeros((L, L, d, d))
    marked = np.flatnonzero(free.any(axis=1))
    if marked.size == 0:
        return T, 0
    Xm, fm, ym = X[marked], free[marked], y_index[marked]
    if kind in (SIGN, LLW):
        for j in range(L):
            R = Xm[fm[:, j] == 1]
            if R.shape[0]:
                T[j, j] = R.T @ R
        return T, marked.size
    slack = fm == 1
    for own in range(L):
        mine = ym == own
        for j in range(L):
            R = Xm[mine & slack[:, j]]
            if R.shape[0]:
                Q = R.T @ R
                T[j, j] += Q
                T[own, own] += Q
                T[min(own, j), max(own, j)] -= Q
    if kind == CS:
        bound = fm == 2
        count = bound.sum(axis=1)
        keep = count >= 2  # one variable with all the mass: J = 0
        if keep.any():
            Xb, bound, w = Xm[keep], bound[keep], 1.0 / count[keep]
            for a in range(L):
                for b in range(a, L):
                    rows = bound[:, a] & bound[:, b]
                    if rows.any():
                        R = Xb[rows]
                        weight = (1.0 - w[rows]) if a == b else -w[rows]
                        T[a, b] += R.T @ (R * weight[:, None])
    return T, marked.size


@nb.njit(cache=True)
def kkt_violation(kind, F, alpha, lin, hi, y):
    """The engine's stopping quantity at alpha with outputs F: the largest KKT violation of any
    pattern (``patterns.pattern_violation``; CS: LIBLINEAR's maxG - minG)."""
    N, L = F.shape
    g, a, h = np.empty(L), np.empty(L), np.empty(L)
    worst = 0.0
    for i in range(N):
        pattern_gradients(kind, F, i, lin, y, g)
        n = 0
        for j in range(L):
            if hi[i, j] > 0.0:
                g[n], a[n], h[n] = g[j], alpha[i, j], hi[i, j]
                n += 1
        worst = max(worst, pattern_violation(kind, n, g, a, h))
    return worst


@nb.njit(cache=True)
def loss_value(kind, F, lin, hi, y):
    """sum_i max_{a in P_i} a . g_i: the primal's loss term C sum(loss) at outputs F (the support
    function of P_i at the dual gradient: box kinds sum_j hi_ij max(g_ij, 0), CS
    C max(0, max_j g_ij)), so that 1/2 ||P||^2 plus it is the canonical primal at weights P."""
    N, L = F.shape
    g = np.empty(L)
    total = 0.0
    for i in range(N):
        pattern_gradients(kind, F, i, lin, y, g)
        top, budget = 0.0, 0.0
        for j in range(L):
            if hi[i, j] > 0.0:
                if kind == CS:
                    top, budget = max(top, g[j]), max(budget, hi[i, j])
                else:
                    total += hi[i, j] * max(g[j], 0.0)
        total += budget * top
    return total


def pattern_coef(kind, alpha, y_index):
    """Z = S alpha, row by row (``patterns.pattern_apply``)."""
    rows = np.arange(alpha.shape[0])
    if kind == SIGN:
        Z = -alpha
        Z[rows, y_index] = alpha[rows, y_index]
    elif kind == LLW:
        Z = -alpha
    else:
        Z = -alpha
        Z[rows, y_index] += alpha.sum(axis=1)
    return Z


def block_diagonal_solve(T, grad, sigma, beta):
    """vec(D) = (I + sigma R T R)^{-1} vec(grad), vec class by class, for T with blocks T_jj only
    (``newton_blocks`` of SIGN and LLW) and R = I - beta 11^T, by Woodbury.

    With E = 1 (x) I_d, G = T E (block j: T_jj) and S = sum_j T_jj,
    I + sigma R T R = A + U C U^T,  A = I + sigma T (L blocks d x d),  U = [E, G],
    C = [[sigma beta^2 S, -sigma beta I], [-sigma beta I, 0]],  C^{-1} = [[0, -I/(sigma beta)],
    [-I/(sigma beta), -S/sigma]]:  L solves with d x d blocks and one 2d x 2d system in place of
    one (L d) x (L d) system (digits, d = 64, L = 10: ~19 ms a Newton step before).  numpy's
    LAPACK only (scipy.linalg's own OpenBLAS spun its threads on the shared machine)."""
    L, d = T.shape[0], T.shape[2]
    eye = np.eye(d)
    blocks = T[np.arange(L), np.arange(L)]  # (L, d, d): T_jj
    # A_j^{-1} [grad_j, I, T_jj] for every class in one batched solve
    rhs = np.concatenate([grad.T[:, :, None], np.broadcast_to(eye, (L, d, d)), blocks], axis=2)
    X = np.linalg.solve(sigma * blocks + eye, rhs)
    A_inv_b, A_inv, A_inv_T = X[:, :, 0], X[:, :, 1 : d + 1], X[:, :, d + 1 :]
    if beta == 0.0:
        return A_inv_b.T
    M = np.empty((2 * d, 2 * d))  # C^{-1} + U^T A^{-1} U
    M[:d, :d] = A_inv.sum(axis=0)
    M[:d, d:] = A_inv_T.sum(axis=0) - eye / (sigma * beta)
    M[d:, :d] = np.einsum("jab,jbc->ac", blocks, A_inv) - eye / (sigma * beta)
    M[d:, d:] = np.einsum("jab,jbc->ac", blocks, A_inv_T) - blocks.sum(axis=0) / sigma
    U_A_inv_b = np.concatenate([A_inv_b.sum(axis=0), np.einsum("jab,jb->a", blocks, A_inv_b)])
    z = np.linalg.solve(M, U_A_inv_b)
    D = A_inv_b - np.einsum("jab,b->ja", A_inv, z[:d]) - np.einsum("jab,b->ja", A_inv_T, z[d:])
    return D.T


class SemismoothALM:
    """The proximal point method on one linear-kernel dual, each step by semismooth Newton.

    Parameters: the dual (``kind``, ``c``, ``lin``, ``hi``, ``y_index``; ``msvm.fast.patterns``),
    the dense rows X (with a constant column sqrt(offset) appended for K + offset 11^T), and the
    engine's ``tol``.  ``run(alpha)`` improves alpha in place (every iterate is feasible) and
    returns its KKT violation.
    """

    def __init__(self, kind, c, lin, hi, y_index, X, offset, tol, verbose=0):
        self.kind, self.lin, self.hi, self.y_index = kind, lin, hi, y_index
        X = np.ascontiguousarray(X, dtype=np.float64)
        if offset != 0.0:
            X = np.hstack([X, np.full((X.shape[0], 1), np.sqrt(offset))])
        self.X, self.tol, self.verbose = X, tol, verbose
        L = lin.shape[1]
        self.beta = root_beta(kind, c, L)
        self.R = np.eye(L) - self.beta if self.beta != 0.0 else None
        self.scale = float(np.mean(np.einsum("ij,ij->i", X, X))) or 1.0
        self.outer_steps = self.newton_steps = 0
        # per proximal step: (time.perf_counter(), sigma K, Newton steps, face, primal, dual, KKT)
        self.history = []

    def outputs(self, P):
        """F = X P R: the outputs K B on the training rows for weights P (d x L)."""
        F = self.X @ P
        return F if self.R is None else F @ self.R

    def weights(self, alpha):
        """P = X^T S alpha R: the weights of alpha (phi's minimiser is the weights of its alpha)."""
        P = self.X.T @ pattern_coef(self.kind, alpha, self.y_index)
        return P if self.R is None else P @ self.R

    def dual(self, alpha, P):
        """D(alpha) with P = weights(alpha)."""
        return float(np.sum(self.lin * alpha) - 0.5 * np.sum(P * P))

    def phi(self, P, anchor, sigma, alpha, free=None, F=None, FD=None, t=0.0):
        """phi(P + t D) (module docstring) from the outputs F = X P R (computed if not given) and
        FD = X D R; leaves alpha(P + t D) in alpha and, with ``free`` (N, L), the marks of
        ``proximal_map`` there.  Without FD, t and D play no part."""
        if free is None:
            free = np.empty((0, 0), dtype=np.int8)
        F = self.outputs(P) if F is None else F
        along = FD is not None
        FD = FD if along else np.empty((0, 0))
        loss = proximal_map(self.kind, F, FD, t, anchor, sigma, self.lin, self.hi, self.y_index,
                            alpha, free)  # fmt: skip
        return 0.5 * float(np.sum(P * P)) + loss

    def newton_direction(self, T, grad, sigma):
        """Solve (I + sigma R T R) vec(D) = -vec(grad), vec class by class."""
        if self.kind in (SIGN, LLW):
            return -block_diagonal_solve(T, grad, sigma, self.beta)
        L, d = T.shape[0], T.shape[2]
        for a in range(L):  # mirror the blocks below the diagonal (those above hold the sums)
            for b in range(a + 1, L):
                T[b, a] = T[a, b].T
        if self.R is not None:  # (R (x) I) T (R (x) I)
            T = np.tensordot(np.tensordot(self.R, T, axes=(1, 0)), self.R, axes=(1, 0))
            T = T.transpose(0, 3, 1, 2)
        H = sigma * T.transpose(0, 2, 1, 3).reshape(L * d, L * d)
        H[np.diag_indices_from(H)] += 1.0
        return -np.linalg.solve(H, grad.T.ravel()).reshape(L, d).T

    def solve_step(self, P, anchor, sigma, alpha):
        """Semismooth Newton with an Armijo line search on phi from P (Li, Sun and Toh's SSN).

        Returns (P, Newton steps, face, solved): solved when ||grad phi|| <= INNER_TOL (1 + ||P||),
        or when the line search finds no decrease in floating point with the gradient already
        within INNER_SLACK times that; alpha is left at alpha(P)."""
        free = np.empty(alpha.shape, dtype=np.int8)
        trial, face = np.empty_like(alpha), 0
        F = self.outputs(P)  # kept current along the steps: F += t X D R
        for steps in range(NEWTON_STEPS + 1):
            value = self.phi(P, anchor, sigma, alpha, free, F)
            grad = P - self.weights(alpha)
            norm, target = float(np.linalg.norm(grad)), INNER_TOL * (1.0 + np.linalg.norm(P))
            if norm <= target:
                return P, steps, face, True
            if steps == NEWTON_STEPS:
                break
            T, face = newton_blocks(self.kind, self.X, free, self.y_index)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                D = self.newton_direction(T, grad, sigma)
            if not np.isfinite(D).all():  # beyond the floating range (features ~1e80)
                return P, steps, face, norm <= INNER_SLACK * target  # (as no decrease, below)
            slope = float(np.sum(grad * D))
            FD = self.outputs(D)
            PP, PD, DD = float(np.sum(P * P)), float(np.sum(P * D)), float(np.sum(D * D))
            t = 1.0
            for _ in range(HALVINGS):
                loss = proximal_map(self.kind, F, FD, t, anchor, sigma, self.lin, self.hi,
                                    self.y_index, trial, free[:0, :0])  # fmt: skip
                new = 0.5 * (PP + 2.0 * t * PD + t * t * DD) + loss
                if new < value and new <= value + ARMIJO * t * slope:  # (a decrease that
                    # rounds away is none: phi then cannot tell the points apart)
                    break
                t *= 0.5
            else:  # no decrease that floating point can see
                return P, steps, face, norm <= INNER_SLACK * target
            P = P + t * D
            F += t * FD
            self.newton_steps += 1
            if self.verbose > 1:
                print(f"   Newton step {steps}: phi {value:.6f}, |grad| {norm:.3e}, t {t:g}, "
                      f"face {face}")  # fmt: skip
        return P, NEWTON_STEPS, face, False

    def run(self, alpha):
        """Proximal steps from alpha (updated in place; every iterate exactly feasible) until its
        KKT violation is at most tol, OUTER_STEPS were taken, or sigma had to fall below
        SIGMA_FLOOR; returns the KKT violation.

        sigma grows by SIGMA_GROWTH after a step whose Newton steps were few (at most
        FAST_STEP), up to a ceiling, SIGMA_MAX, which itself grows by SIGMA_GROWTH (up to
        SIGMA_LIMIT) after a step at the ceiling that cut the KKT violation by less than
        SLOW_PROGRESS; a step whose Newton iteration did not converge is undone and sigma divided
        by SIGMA_GROWTH, and sigma stays below the failed value until RETRY_AFTER fast steps in a
        row (the larger sigma, the fewer proximal steps but the rougher phi: a pattern's
        projection jumps from vertex to vertex of P_i over gradient changes of 1 / sigma)."""
        sigma, top = SIGMA_START / self.scale, SIGMA_MAX / self.scale
        ceiling = top
        at_cap = 0  # fast steps in a row at the cap ``top`` that a failed step set
        P = self.weights(alpha)
        anchor = alpha.copy()
        kkt = kkt_violation(self.kind, self.outputs(P), alpha, self.lin, self.hi, self.y_index)
        with blas_threads(1):
            while self.outer_steps < OUTER_STEPS and kkt > self.tol:
                self.outer_steps += 1
                P_new, steps, face, solved = self.solve_step(P, anchor, sigma, alpha)
                if not solved:
                    alpha[:] = anchor
                    top = sigma / SIGMA_GROWTH
                    sigma = top
                    if self.verbose:
                        print(f"proximal step at sigma {sigma * self.scale:.0e}/K not solved "
                              f"in {steps} Newton steps: undone")  # fmt: skip
                    if sigma < SIGMA_FLOOR / self.scale:
                        break
                    continue
                self.phi(P_new, anchor, sigma, alpha)  # alpha = alpha(P): the multiplier step
                anchor[:] = alpha
                P = self.weights(alpha)
                F = self.outputs(P)
                previous = kkt
                kkt = kkt_violation(self.kind, F, alpha, self.lin, self.hi, self.y_index)
                dual = self.dual(alpha, P)
                primal = 0.5 * float(np.sum(P * P)) + loss_value(self.kind, F, self.lin, self.hi,
                                                                 self.y_index)  # fmt: skip
                self.history.append((time.perf_counter(), sigma * self.scale, steps, face,
                                     primal, dual, kkt))  # fmt: skip
                if self.verbose:
                    print(f"proximal step {self.outer_steps}: sigma {sigma * self.scale:.0e}/K, "
                          f"{steps} Newton steps, face {face}, primal {primal:.6f}, dual "
                          f"{dual:.6f}, KKT {kkt:.3e}")  # fmt: skip
                if steps <= FAST_STEP:
                    at_cap = at_cap + 1 if sigma >= top else 0
                    if top < ceiling and at_cap >= RETRY_AFTER:  # the iterate moved on: try a
                        top, at_cap = min(top * SIGMA_GROWTH, ceiling), 0  # larger sigma again
                    elif sigma >= ceiling and kkt > SLOW_PROGRESS * previous:
                        ceiling = top = min(ceiling * SIGMA_GROWTH, SIGMA_LIMIT / self.scale)
                    sigma = min(sigma * SIGMA_GROWTH, top)
        return kkt
