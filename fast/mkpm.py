"""Multiclass Kernel Projection Machine (Takerkart & Ralaivola 2011) with its dynamic programme.

Least-squares MKPM in the kernel-PCA basis (MKPM 33-42): with the training Gram matrix
K = A Gamma A^T (uncentred, eigenvalues gamma_1 >= gamma_2 >= ...), the k-th principal score of a
point is z_k(x) = a_k^T k(X, x) / sqrt(gamma_k), and the least-squares fit of code column l in the
first d components has coefficients beta_kl = a_k^T y_l / sqrt(gamma_k) (41) and empirical risk

    G*_l(d) = (1/N) (||y_l||^2 - sum_{k <= d} (a_k^T y_l)^2)          (42, with the 1/N of 13).

The allocation (d_1..d_L) of a total dimension d that minimises sum_l G*_l(d_l) (MKPM 10, 17) is
found for every d = 0..D in one pass of the dynamic programme of Proposition 1 (20),

    Delta_1(d) = G*_1(d),   Delta_l(d) = min_{delta <= d} Delta_{l-1}(delta) + G*_l(d - delta),

with back-pointers, so the whole regularisation path comes out at once.  d is then chosen by
leave-one-out in the fitted basis, on a validation split, by cross-validation, or on the
training error (as MKPM §4 did).

Leave-one-out costs no refit: in a fixed basis the fit of column l at dimension d is the
projection f_l = H_d y_l, H_d = A_d A_d^T, and dropping pattern i from the least-squares fit
gives the classical deleted residual (Allen's PRESS)

    f_l^(-i)(x_i) = (f_l(x_i) - h_i(d) y_il) / (1 - h_i(d)),   h_i(d) = sum_{k <= d} A_ik^2,

for every d from cumulative sums.  The basis itself is the kernel PCA of every training input
(unsupervised: no label of the left-out pattern enters it); ``selection="cv"`` refits it per
fold instead, at the price of one eigendecomposition per fold.  Prediction is
the codeword nearest in Euclidean distance (8).  For large N, ``approximation="nystroem"`` builds
the basis from n_components landmark points (memory O(N D)).
"""

from __future__ import annotations

from numbers import Integral, Real

import numba as nb
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from msvm.core.coding import one_vs_all_code
from msvm.core.kernels import kernel_matrix
from msvm.core.validation import check_finite, check_sample_weight, gram_eigh
from msvm.fast.base import support_counts, validate_training_data

_EIGEN_CUTOFF = 1e-10
NYSTROEM_DEFAULT = 500  # landmarks when approximation="nystroem" and n_components is None


@nb.njit(cache=True)
def allocation_path(G):
    """MKPM Proposition 1 (20) with back-pointers.

    ``G`` is (L, D+1) with G[l, d] = G*_l(d).  Returns Delta_L(d) for d = 0..D and the allocation
    (D+1, L) reaching it (ties go to the smallest dimension for the earlier columns).
    """
    L, width = G.shape
    delta = np.empty((L, width))
    back = np.zeros((L, width), dtype=np.int64)
    delta[0] = G[0]
    for lam in range(1, L):
        for d in range(width):
            best, arg = np.inf, 0
            for first in range(d + 1):  # dimensions given to columns 0..lam-1
                value = delta[lam - 1, first] + G[lam, d - first]
                if value < best:
                    best, arg = value, first
            delta[lam, d] = best
            back[lam, d] = arg
    alloc = np.zeros((width, L), dtype=np.int64)
    for d in range(width):
        rest = d
        for lam in range(L - 1, 0, -1):
            first = back[lam, rest]
            alloc[d, lam] = rest - first
            rest = first
        alloc[d, 0] = rest
    return delta[L - 1].copy(), alloc


@nb.njit(cache=True)
def loo_misclassified(A, projections, targets, alloc, code, y_index):
    """Leave-one-out errors of the nearest-codeword rule (8) for every total dimension d, by
    PRESS in the fixed basis A (N, D): the deleted output of column l at dimension k is
    (f_il(k) - h_i(k) y_il) / (1 - h_i(k)) with f_il(k) = sum_{k' < k} A_ik' projections_k'l and
    h_i(k) = sum_{k' < k} A_ik'^2; a pattern with 1 - h_i <= 1e-10 (interpolated) counts as an
    error.  Returns the number of errors for each d = 0..D (alloc's rows)."""
    N, D = A.shape
    L, Q = projections.shape[1], code.shape[0]
    wrong = np.zeros(alloc.shape[0], dtype=np.int64)
    f = np.zeros((D + 1, L))
    h = np.zeros(D + 1)
    g = np.empty(L)
    for i in range(N):
        for k in range(D):
            h[k + 1] = h[k] + A[i, k] * A[i, k]
            for l in range(L):
                f[k + 1, l] = f[k, l] + A[i, k] * projections[k, l]
        for d in range(alloc.shape[0]):
            defined = True
            for l in range(L):
                k = alloc[d, l]
                free = 1.0 - h[k]
                if free <= 1e-10:
                    defined = False
                    break
                g[l] = (f[k, l] - h[k] * targets[i, l]) / free
            if not defined:
                wrong[d] += 1
                continue
            best, arg = np.inf, 0
            for q in range(Q):
                dist = 0.0
                for l in range(L):
                    dist += (g[l] - code[q, l]) ** 2
                if dist < best:
                    best, arg = dist, q
            if arg != y_index[i]:
                wrong[d] += 1
    return wrong


class KernelPCABasis:
    """The uncentred kernel-PCA scores z_k(x) of MKPM (33-35), exact or by Nystroem landmarks."""

    def __init__(self, X, kernel, gamma, degree, coef0, n_components, approximation, rng):
        self.params = (kernel, gamma, degree, coef0)
        if approximation == "nystroem":
            m = min(n_components or NYSTROEM_DEFAULT, X.shape[0])
            self.landmarks = X[np.sort(rng.choice(X.shape[0], m, replace=False))]
            s, V = gram_eigh(self._kernel(self.landmarks, self.landmarks))
            keep = s > _EIGEN_CUTOFF * max(s.max(), 0.0)
            self.to_features = V[:, keep] / np.sqrt(s[keep])  # phi~(x) = k(x, L) U S^-1/2
            features = self._kernel(X, self.landmarks) @ self.to_features
            Q, sigma, Wt = np.linalg.svd(features, full_matrices=False)
            # A zero landmark Gram matrix leaves no feature (sigma empty): an empty basis, as
            # the exact path gives for a zero Gram matrix (every class ties at d = 0).
            keep = sigma > np.sqrt(_EIGEN_CUTOFF) * (sigma[0] if sigma.size else 0.0)
            self.A, self.gamma = Q[:, keep], sigma[keep] ** 2
            self.to_scores = self.to_features @ Wt[keep].T  # z(x) = phi~(x) W
        else:
            self.landmarks = X
            s, V = gram_eigh(self._kernel(X, X))
            order = np.argsort(s)[::-1]
            s, V = s[order], V[:, order]
            keep = s > _EIGEN_CUTOFF * max(s[0], 0.0)
            self.A, self.gamma = V[:, keep], s[keep]
            self.to_scores = self.A / np.sqrt(self.gamma)  # z(x) = k(x, X) A Gamma^-1/2
        if n_components is not None:
            self.A, self.gamma = self.A[:, :n_components], self.gamma[:n_components]
            self.to_scores = self.to_scores[:, :n_components]

    def _kernel(self, X, Y):
        """k(X, Y); with a precomputed kernel X already holds the rows k(X, training points)."""
        kernel, gamma, degree, coef0 = self.params
        if kernel == "precomputed":
            return X
        return kernel_matrix(X, Y, kernel, gamma, degree, coef0)

    def scores(self, X):
        """z(x) for every row of X, shape (n, D)."""
        return np.asarray(self._kernel(X, self.landmarks) @ self.to_scores)


class MKPMClassifier(ClassifierMixin, BaseEstimator):
    """Multiclass kernel projection machine with output codes (MKPM).

    Parameters
    ----------
    n_components : int or None, default=None
        D, the largest total dimension (None: the rank of the Gram matrix).
    kernel, gamma, degree, coef0 : as in scikit-learn's SVC ("precomputed" uses the exact basis).
    code : array (n_classes, L) of +-1 or None, default=None
        Output code, one row per class in ``classes_`` order; None is one-vs-all (MKPM §4).
    selection : {"loo", "cv", "validation", "train"}, default="loo"
        How d is chosen: leave-one-out error in the fitted basis (closed form, no refit),
        cross-validated error (the basis refitted per fold), error on a held-out split, or
        training error.
    cv : int, default=5; validation_fraction : float, default=0.2
    approximation : {None, "nystroem"}, default=None
        With "nystroem", n_components landmarks (500 if None) give the basis.
    random_state : seeds the splits and the Nystroem landmarks.

    Attributes
    ----------
    risk_table_ : (L, D+1) G*_l(d); risk_path_ : (D+1,) Delta_L(d)
    allocation_path_ : (D+1, L) allocation for every total dimension d
    selected_dimension_ : d-hat; selection_errors_ : (D+1,) error rate used to choose it
    coef_ : (D, L) beta_kl in the kernel-PCA basis
    support_, n_support_ : every training pattern, and the count of each class: the
        least-squares fit (41) has no sparse dual, every pattern's target enters beta.

    Sample weights: ``fit(X, y, sample_weight)`` accepts None or a constant weight (which does
    not change a least-squares minimiser) and raises ValueError for any other: the dynamic
    programme (20) needs the risks G*_l(d) of nested least-squares fits in one orthonormal
    basis, and both that basis and the PRESS leave-one-out (``loo_misclassified``) are those of
    the unweighted fit.  There is no ``class_weight`` parameter for the same reason.
    """

    _parameter_constraints: dict = {
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
        "kernel": [StrOptions({"linear", "rbf", "poly", "precomputed"})],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "code": [None, "array-like"],
        "selection": [StrOptions({"loo", "cv", "validation", "train"})],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "approximation": [None, StrOptions({"nystroem"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        n_components=None,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        code=None,
        selection="loo",
        cv=5,
        validation_fraction=0.2,
        approximation=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.code = code
        self.selection = selection
        self.cv = cv
        self.validation_fraction = validation_fraction
        self.approximation = approximation
        self.random_state = random_state

    def _code(self, n_classes):
        if self.code is None:
            return one_vs_all_code(n_classes)
        code = check_array(self.code, dtype=np.float64, input_name="code")
        if code.shape[0] != n_classes:
            raise ValueError(f"code must have one row per class ({n_classes}), got {code.shape}.")
        if np.unique(code, axis=0).shape[0] != n_classes:
            raise ValueError("code must give every class a distinct codeword.")
        return code

    def _path(self, X, y_index, code, rng):
        """Basis, risk table, DP path and coefficients for one training set."""
        kernel = self.kernel
        approximation = None if kernel == "precomputed" else self.approximation
        basis = KernelPCABasis(
            X, kernel, self._gamma, self.degree, self.coef0, self.n_components, approximation, rng
        )
        targets = code[y_index]
        projections = basis.A.T @ targets  # a_k^T y_l, (D, L)
        N = targets.shape[0]
        explained = np.vstack([np.zeros((1, code.shape[1])), np.cumsum(projections**2, axis=0)])
        G = ((targets**2).sum(axis=0)[None, :] - explained).T / N  # (42) / N, shape (L, D+1)
        risk, alloc = allocation_path(np.ascontiguousarray(G))
        coef = projections / np.sqrt(basis.gamma)[:, None]  # beta_kl (41)
        return basis, G, risk, alloc, coef

    @staticmethod
    def _cumulative(values):
        """[0, cumsum(values, axis=1)]: running sums over the components, (n, D+1, ...)."""
        out = np.zeros((values.shape[0], values.shape[1] + 1, *values.shape[2:]))
        np.cumsum(values, axis=1, out=out[:, 1:])
        return out

    @classmethod
    def _path_outputs(cls, Z, coef, alloc):
        """Outputs f(x) for every total dimension: (n, D+1, L), by cumulative sums over k."""
        cumulative = cls._cumulative(Z[:, :, None] * coef[None, :, :])  # (n, D+1, L)
        return cumulative[:, alloc, np.arange(coef.shape[1])]

    @staticmethod
    def _misclassified(F, y_index, code):
        """Where the nearest-codeword rule (8) errs on outputs F (n, D+1, L): (n, D+1) bool."""
        # argmin_q ||f - c_q||^2 = argmin_q ||c_q||^2 - 2 f . c_q
        dist = (code**2).sum(axis=1) - 2.0 * F @ code.T  # (n, D+1, Q)
        return np.argmin(dist, axis=2) != y_index[:, None]

    def _loo_errors(self, y_index, code):
        """Leave-one-out error rate for every d by PRESS in the fitted basis (module docstring)."""
        A = np.ascontiguousarray(self._basis.A)
        targets = code[y_index]
        wrong = loo_misclassified(
            A, A.T @ targets, targets, self.allocation_path_, np.ascontiguousarray(code), y_index
        )
        return wrong / A.shape[0]

    def _path_errors(self, X, y_index, basis, coef, alloc, code, chunk=256):
        """Error rate of the nearest-codeword rule (8) for every d, in chunks of rows."""
        Z = basis.scores(X)
        wrong = np.zeros(alloc.shape[0])
        for start in range(0, Z.shape[0], chunk):
            F = self._path_outputs(Z[start : start + chunk], coef, alloc)  # (n, D+1, L)
            wrong += self._misclassified(F, y_index[start : start + chunk], code).sum(axis=0)
        return wrong / Z.shape[0]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the regularisation path and choose the total dimension d.

        ``sample_weight``: None or a constant (see the class docstring); any other raises
        ValueError, as does an invalid one (wrong length, negative, NaN or inf, all zero).
        """
        X, y_index = validate_training_data(self, X, y, accept_sparse=False)
        weights = check_sample_weight(sample_weight, y_index.size, y_index)
        if weights is not None and np.ptp(weights) > 0:
            raise ValueError(
                "MKPMClassifier does not support non-uniform sample weights (weights that differ "
                "between samples or classes): its dynamic "
                "programme (MKPM Proposition 1) and leave-one-out are those of the unweighted "
                "least-squares fit.  Pass sample_weight=None (or a constant)."
            )
        rng = check_random_state(self.random_state)
        code = self._code(self.classes_.size)
        basis, G, risk, alloc, coef = self._path(X, y_index, code, rng)
        self._basis, self.code_ = basis, code
        self.risk_table_, self.risk_path_, self.allocation_path_, self.coef_ = G, risk, alloc, coef
        self.selection_errors_ = self._selection_errors(X, y_index, code, rng)
        self.selected_dimension_ = int(np.argmin(self.selection_errors_))
        self.support_ = np.arange(y_index.size)
        self.n_support_ = support_counts(self.support_, y_index, self.classes_.size)
        return self

    def _selection_errors(self, X, y_index, code, rng):
        """Error rate for every d = 0..D under the chosen selection rule."""
        width = self.allocation_path_.shape[0]
        if self.selection == "loo":
            return self._loo_errors(y_index, code)
        if self.selection == "train":
            return self._path_errors(
                X, y_index, self._basis, self.coef_, self.allocation_path_, code
            )
        if self.kernel == "precomputed":
            raise ValueError(
                "selection='cv' or 'validation' needs a feature matrix, not a "
                "precomputed kernel; use selection='train'."
            )
        counts = np.bincount(y_index)
        if self.selection == "cv" and counts.max() < self.cv:  # StratifiedKFold cannot split
            raise ValueError(
                f"selection='cv' with cv={self.cv} folds: every class has fewer members (the "
                f"largest {counts.max()}). Use selection='train' or a smaller cv."
            )
        if self.selection == "validation" and counts.min() < 2:
            raise ValueError(
                "selection='validation' splits every class; the smallest class has 1 member. "
                "Use selection='train'."
            )
        if self.selection == "validation":
            n_test = int(np.ceil(self.validation_fraction * y_index.size))
            L = self.classes_.size
            if min(n_test, y_index.size - n_test) < L:
                raise ValueError(
                    f"selection='validation' with validation_fraction={self.validation_fraction}"
                    f" splits {y_index.size} samples into {y_index.size - n_test} and {n_test}; "
                    f"each part needs one sample of every class ({L}). Use selection='train'."
                )
            splits = [
                train_test_split(
                    np.arange(y_index.size),
                    test_size=self.validation_fraction,
                    stratify=y_index,
                    random_state=rng,
                )
            ]
        else:
            folds = StratifiedKFold(self.cv, shuffle=True, random_state=rng)
            splits = list(folds.split(X, y_index))
        errors = np.zeros(width)
        for train, test in splits:
            basis, _, _, alloc, coef = self._path(X[train], y_index[train], code, rng)
            fold = self._path_errors(X[test], y_index[test], basis, coef, alloc, code)
            errors += np.pad(fold, (0, max(0, width - fold.size)), mode="edge")[:width]
        return errors / len(splits)

    def path_outputs(self, X):
        """f(x) for every total dimension d = 0..D, shape (n_samples, D+1, L)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._path_outputs(self._basis.scores(X), self.coef_, self.allocation_path_)

    def decision_function(self, X):
        """Class scores -||f(x) - c_q||^2 at the selected dimension (MKPM 8)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        alloc = self.allocation_path_[self.selected_dimension_]
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: check_finite says so
            Z = self._basis.scores(X)
            F = np.column_stack([Z[:, :d] @ self.coef_[:d, l] for l, d in enumerate(alloc)])
            scores = -((F[:, None, :] - self.code_[None, :, :]) ** 2).sum(axis=2)
        check_finite("The decision values", scores)
        return scores[:, 1] - scores[:, 0] if self.classes_.size == 2 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
