"""Weston-Watkins as ISVM §9 says the paper trained it: appendix E's printed (simplified) kernel.

ISVM §9: "For the WW ... we used the simplified kernel of Appendix E".  Appendix E's second line,

    G_ijj' = K_ii' (sum_k [y_i = k][y_i' = k] + I(j = j')),        j in j*(i), j' in j*(i'),

drops the terms -[y_i = j'] - [y_i' = j] of the first line, which is the derived dual's quadratic
form (``msvm.reference.weston_watkins.printed_kernel``; ``msvm claims`` shows the two differ).
The machine here solves the dual *with the printed line*,

    maximise sum alpha - 1/2 alpha^T G alpha,   0 <= alpha_ij <= C  (j != y_i, no bias, E.1),

and predicts by (E.2), f(x) = k(x, X) B with B_ik = [k = y_i] sum_j alpha_ij - alpha_ik.

Structure used by the solver: alpha^T G alpha = tr(P^T K P) + tr(A^T K A) with A = alpha and
P_ik = [k = y_i] sum_j alpha_ij, so the gradient in alpha_ij is 1 - (K P)_{i y_i} - (K A)_ij and
pattern i's block of G is K_ii (I + 1 1^T).  Block coordinate ascent solves each pattern's block
exactly (``_block_step``) and keeps U_P = K P and U_A = K A current (one kernel column per pattern
step, O(N) per variable moved); the outputs are K B = U_P - U_A.  Leave-one-out folds start
from the full solution with pattern i's variables at 0 (as ``msvm.fast.loo`` does for the derived
machines); a fold whose left-out pattern is the only one of its class drops that class.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from msvm.core.kernels import kernel_matrix
from msvm.fast.loo import LeaveOneOutPath

DEFAULT_MAX_ITER = 100_000  # passes


@nb.njit(cache=True)
def _block_step(g, a, hi, kappa, x):
    """Pattern i's block, exactly: the new values x = a + d of its variables, d maximising
    g^T d - kappa/2 (||d||^2 + (1^T d)^2) over 0 <= a + d <= hi (the printed G's block is
    K_ii (I + 1 1^T)).

    Stationarity gives x_j = clip(a_j + (g_j - sigma) / kappa, 0, hi_j) with sigma = kappa 1^T d,
    the root of phi(sigma) = kappa sum_j (x_j(sigma) - a_j) - sigma: decreasing and piecewise
    linear, with breakpoints g_j + kappa a_j (x_j = 0 from there up) and g_j - kappa (hi_j - a_j)
    (x_j = hi_j from there down), found between two sorted breakpoints and solved on that piece.
    sigma is in the gradient's units: with s = 1^T d itself the breakpoints would sit at
    g / kappa, where for a tiny kappa each pair rounds to one number.  x is clipped to the box
    exactly.  The engine's ``patterns.box_rank_one`` solves the same block (c = -1, v = 1) in s
    and agrees to 1e-12 (tested) but for such a kappa (1e-200: all variables at 0 there), which
    is why this block has its own root; box_rank_one serves every engine step, whose arithmetic
    a change of its variable would move.
    """
    m = g.size
    points = np.sort(np.concatenate((g + kappa * a, g - kappa * (hi - a))))

    def new_value(j, sigma):
        return min(max(a[j] + (g[j] - sigma) / kappa, 0.0), hi[j])

    def phi(sigma):
        total = -sigma
        for j in range(m):
            total += kappa * (new_value(j, sigma) - a[j])
        return total

    lo, up = 0, points.size - 1  # phi(points[lo]) > 0 > phi(points[up]) once bracketed
    if phi(points[lo]) <= 0.0:
        sigma = points[lo] + phi(points[lo])  # below every breakpoint: every x_j at hi_j
    elif phi(points[up]) >= 0.0:
        sigma = points[up] + phi(points[up])  # above every breakpoint: every x_j at 0
    else:
        while up - lo > 1:
            mid = (lo + up) // 2
            if phi(points[mid]) > 0.0:
                lo = mid
            else:
                up = mid
        # on [points[lo], points[up]] phi is linear (slope -(kappa free variables + 1))
        f_lo, f_up = phi(points[lo]), phi(points[up])
        sigma = points[lo] + f_lo * (points[up] - points[lo]) / (f_lo - f_up)
    for j in range(m):
        x[j] = new_value(j, sigma)


@nb.njit(cache=True)
def _pass(KT, y_index, alpha, hi, UP, UA, patterns, keep):
    """One pass of block coordinate ascent over ``patterns``, each pattern's variables solved
    together (``_block_step``): (worst KKT violation before its step, variables moved).
    ``keep[k]`` is False for a pattern whose variables all sit at a bound with the gradient
    pointing out of the box.  ``KT`` is K transposed: row i is K's column i, read contiguously.
    """
    N, L = alpha.shape
    g, a, top, new = np.empty(L), np.empty(L), np.empty(L), np.empty(L)
    index = np.empty(L, dtype=np.int64)
    worst, moved = 0.0, 0
    for k in range(patterns.size):
        i = patterns[k]
        yi = y_index[i]
        kappa = KT[i, i]
        m, violation, free = 0, 0.0, False
        for j in range(L):
            if hi[i, j] <= 0.0:
                continue
            grad = 1.0 - UP[i, yi] - UA[i, j]
            x = alpha[i, j]
            if x <= 0.0:
                violation = max(violation, grad)
            elif x >= hi[i, j]:
                violation = max(violation, -grad)
            else:
                violation = max(violation, abs(grad))
                free = True
            g[m], a[m], top[m], index[m] = grad, x, hi[i, j], j
            m += 1
        keep[k] = violation > 0.0 or free
        if violation <= 0.0 or kappa <= 0.0:
            continue
        worst = max(worst, violation)
        _block_step(g[:m], a[:m], top[:m], kappa, new[:m])
        total = 0.0
        for q in range(m):
            d = new[q] - a[q]
            if d == 0.0:
                continue
            j = index[q]
            alpha[i, j] = new[q]
            total += d
            moved += 1
            for r in range(N):
                UA[r, j] += KT[i, r] * d
        if total != 0.0:
            for r in range(N):
                UP[r, yi] += KT[i, r] * total
    return worst, moved


@nb.njit(cache=True)
def _epochs(KT, y_index, alpha, hi, UP, UA, tol, max_iter):
    """Block coordinate ascent, pattern by pattern, until a pass over every pattern has KKT
    violation <= tol: (passes, variables moved, done).

    Between full passes the passes skip the patterns that the last pass left with every variable
    at a bound and the gradient pointing out (shrinking, as libsvm's); when the remaining ones
    reach tol a full pass checks every pattern again, and only a full pass ends the run.
    """
    every = np.nonzero((hi > 0.0).sum(axis=1) > 0)[0]
    patterns, full, moved = every, True, 0
    for sweep in range(max_iter):
        keep = np.empty(patterns.size, dtype=np.bool_)
        worst, taken = _pass(KT, y_index, alpha, hi, UP, UA, patterns, keep)
        moved += taken
        if worst <= tol and full:
            return sweep + 1, moved, True
        if worst <= tol:  # the active patterns are done: check them all
            patterns, full = every, True
        else:  # on with the patterns kept (all of them: a full pass again)
            patterns = patterns[keep]
            full = patterns.size == every.size
    return max_iter, moved, False


@nb.njit(cache=True)
def _take_off(KT, i, j, y_index, alpha, UP, UA):
    """Set alpha_ij to 0, keeping U_P and U_A current (``KT`` as in ``_pass``)."""
    d = alpha[i, j]
    if d != 0.0:
        yi = y_index[i]
        for r in range(KT.shape[0]):
            UP[r, yi] -= KT[i, r] * d
            UA[r, j] -= KT[i, r] * d
        alpha[i, j] = 0.0


@nb.njit(cache=True)
def _folds(KT, y_index, counts, full_alpha, hi, full_UP, full_UA, tol, max_iter):
    """Predicted class index of every left-out pattern, engine steps, unconverged folds."""
    N, L = full_alpha.shape
    predictions = np.empty(N, dtype=np.int64)
    steps = unconverged = 0
    for i in range(N):
        yi = y_index[i]
        dropped = counts[yi] == 1  # the fold has no pattern of class y_i: a machine without it
        if np.all(full_alpha[i] == 0.0) and not dropped:
            predictions[i] = np.argmax(full_UP[i] - full_UA[i])
            continue
        alpha, fold_hi = full_alpha.copy(), hi.copy()
        UP, UA = full_UP.copy(), full_UA.copy()
        for j in range(L):
            _take_off(KT, i, j, y_index, alpha, UP, UA)
            fold_hi[i, j] = 0.0
        if dropped:
            for r in range(N):
                _take_off(KT, r, yi, y_index, alpha, UP, UA)
                fold_hi[r, yi] = 0.0
        _, taken, converged = _epochs(KT, y_index, alpha, fold_hi, UP, UA, tol, max_iter)
        steps += taken
        unconverged += not converged
        scores = UP[i] - UA[i]
        if dropped:
            scores[yi] = -np.inf
        predictions[i] = np.argmax(scores)
    return predictions, steps, unconverged


def _difference_coef(alpha, y_index):
    """B of (E.2), numeric: B_ik = [k = y_i] sum_j alpha_ij - alpha_ik."""
    B = -alpha
    B[np.arange(alpha.shape[0]), y_index] += alpha.sum(axis=1)
    return B


class PrintedKernelWestonWatkinsSVC(ClassifierMixin, BaseEstimator):
    """Weston-Watkins trained on ISVM appendix E's printed (simplified) dual kernel, as ISVM §9
    trained its WW; predictions by (E.2).  Not a correct Weston-Watkins machine: it exists to
    reproduce the paper's numbers (``msvm.verify.robustness``, machine ``weston_watkins_printed``).

    Parameters
    ----------
    C : float, default=1.0
    kernel : {"precomputed", "rbf", "linear"}, default="rbf"
    gamma : float, default=1.0
        The RBF kernel's exp(-gamma ||x - x'||^2) (a number: no "scale").
    tol : float, default=1e-3
        Largest KKT violation (projected gradient) at the end of a pass.
    max_iter : int, default=100000
        Passes of coordinate ascent, over every variable or over those not set aside by
        shrinking (``_epochs``).
    random_state : None
        Accepted for the study's common constructor; the passes are cyclic.
    """

    def __init__(
        self, *, C=1.0, kernel="rbf", gamma=1.0, tol=1e-3, max_iter=DEFAULT_MAX_ITER,
        random_state=None,
    ):  # fmt: skip
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"  # cross-validation slices K
        return tags

    def _gram(self, X, Y):
        if self.kernel == "precomputed":
            return np.ascontiguousarray(X, dtype=np.float64)
        return kernel_matrix(X, Y, self.kernel, float(self.gamma))

    def _start(self, y):
        self.classes_, y_index = np.unique(np.asarray(y), return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError("PrintedKernelWestonWatkinsSVC needs at least two classes.")
        negatives = np.ones((y_index.size, self.classes_.size))
        negatives[np.arange(y_index.size), y_index] = 0.0
        return y_index.astype(np.int64), negatives

    def fit(self, X, y):
        y_index, negatives = self._start(y)
        K = self._gram(X, X)
        alpha = np.zeros_like(negatives)
        UP, UA = np.zeros_like(alpha), np.zeros_like(alpha)
        KT = np.ascontiguousarray(K.T)
        *_, converged = _epochs(KT, y_index, alpha, self.C * negatives, UP, UA, self.tol,
                                self.max_iter)  # fmt: skip
        self.converged_ = bool(converged)
        self.dual_coef_ = alpha
        self._y_index = y_index
        self._X = np.asarray(X, dtype=np.float64)
        return self

    def coef(self) -> np.ndarray:
        """B of (E.2): B_ik = [k = y_i] sum_j alpha_ij - alpha_ik."""
        check_is_fitted(self)
        return _difference_coef(self.dual_coef_, self._y_index)

    def decision_function(self, X):
        check_is_fitted(self)
        K = self._gram(X, self._X) if self.kernel != "precomputed" else np.asarray(X, float)
        return K @ self.coef()

    def predict(self, X):
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def leave_one_out_path(self, K, y, Cs) -> LeaveOneOutPath:
        """Leave-one-out predictions for each C of ``Cs`` on the Gram matrix ``K``, each full fit
        warm-started from the previous C (its alpha clipped to the new box), each fold from the
        full fit."""
        if self.kernel != "precomputed":
            raise ValueError("leave_one_out_path takes a Gram matrix: kernel='precomputed'.")
        K = np.asarray(K, dtype=np.float64)
        KT = np.ascontiguousarray(K.T)
        y_index, negatives = self._start(y)
        counts = np.bincount(y_index, minlength=self.classes_.size)
        alpha = np.zeros_like(negatives)
        predictions, steps, unconverged = [], 0, 0
        for C in np.asarray(Cs, dtype=np.float64):
            hi = C * negatives
            alpha = np.minimum(alpha, hi)
            UP, UA = K @ (_difference_coef(alpha, y_index) + alpha), K @ alpha
            _, taken, _ = _epochs(KT, y_index, alpha, hi, UP, UA, self.tol, self.max_iter)
            folds = _folds(KT, y_index, counts, alpha, hi, UP, UA, self.tol, self.max_iter)
            predictions.append(self.classes_[folds[0]])
            steps += taken + folds[1]
            unconverged += folds[2]
        return LeaveOneOutPath(np.asarray(Cs, float), np.array(predictions), steps, unconverged)
