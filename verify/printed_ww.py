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
the diagonal of G is 2 K_ii.  Coordinate ascent keeps U_P = K P and U_A = K A current (one kernel
column per step, O(N)), and the outputs are K B = U_P - U_A.  Leave-one-out folds start from the
full solution with pattern i's variables at 0 (as ``msvm.fast.loo`` does for the derived
machines); a fold whose left-out pattern is the only one of its class drops that class.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from msvm.core.kernels import kernel_matrix
from msvm.fast.loo import LeaveOneOutPath

DEFAULT_MAX_ITER = 100_000  # epochs


@nb.njit(cache=True)
def _epochs(K, y_index, alpha, hi, UP, UA, tol, max_iter):
    """Cyclic coordinate ascent until a pass has KKT violation <= tol: (epochs, steps, done)."""
    N, L = alpha.shape
    steps = 0
    for epoch in range(max_iter):
        worst = 0.0
        for i in range(N):
            yi = y_index[i]
            h = 2.0 * K[i, i]
            for j in range(L):
                if hi[i, j] <= 0.0:
                    continue
                g = 1.0 - UP[i, yi] - UA[i, j]
                a = alpha[i, j]
                if a <= 0.0:
                    v = max(g, 0.0)
                elif a >= hi[i, j]:
                    v = max(-g, 0.0)
                else:
                    v = abs(g)
                if v <= 0.0 or h <= 0.0:
                    continue
                worst = max(worst, v)
                new = min(max(a + g / h, 0.0), hi[i, j])
                d = new - a
                if d == 0.0:
                    continue
                alpha[i, j] = new
                steps += 1
                for r in range(N):
                    kd = K[r, i] * d
                    UP[r, yi] += kd
                    UA[r, j] += kd
        if worst <= tol:
            return epoch + 1, steps, True
    return max_iter, steps, False


@nb.njit(cache=True)
def _take_off(K, i, j, y_index, alpha, UP, UA):
    """Set alpha_ij to 0, keeping U_P and U_A current."""
    d = alpha[i, j]
    if d != 0.0:
        yi = y_index[i]
        for r in range(K.shape[0]):
            UP[r, yi] -= K[r, i] * d
            UA[r, j] -= K[r, i] * d
        alpha[i, j] = 0.0


@nb.njit(cache=True)
def _folds(K, y_index, counts, full_alpha, hi, full_UP, full_UA, tol, max_iter):
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
            _take_off(K, i, j, y_index, alpha, UP, UA)
            fold_hi[i, j] = 0.0
        if dropped:
            for r in range(N):
                _take_off(K, r, yi, y_index, alpha, UP, UA)
                fold_hi[r, yi] = 0.0
        _, taken, converged = _epochs(K, y_index, alpha, fold_hi, UP, UA, tol, max_iter)
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
        Passes over every variable.
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
        *_, converged = _epochs(K, y_index, alpha, self.C * negatives, UP, UA, self.tol,
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
        K = np.ascontiguousarray(K, dtype=np.float64)
        y_index, negatives = self._start(y)
        counts = np.bincount(y_index, minlength=self.classes_.size)
        alpha = np.zeros_like(negatives)
        predictions, steps, unconverged = [], 0, 0
        for C in np.asarray(Cs, dtype=np.float64):
            hi = C * negatives
            alpha = np.minimum(alpha, hi)
            UP, UA = K @ (_difference_coef(alpha, y_index) + alpha), K @ alpha
            _, taken, _ = _epochs(K, y_index, alpha, hi, UP, UA, self.tol, self.max_iter)
            folds = _folds(K, y_index, counts, alpha, hi, UP, UA, self.tol, self.max_iter)
            predictions.append(self.classes_[folds[0]])
            steps += taken + folds[1]
            unconverged += folds[2]
        return LeaveOneOutPath(np.asarray(Cs, float), np.array(predictions), steps, unconverged)
