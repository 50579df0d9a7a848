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
the codeword nearest in Euclidean distance (8).

With sample weights s every step above is weighted (``MKPMClassifier``'s docstring): the basis
of S^1/2 K S^1/2, (42) for the targets S^1/2 y with 1 / sum_i s_i for 1/N, and the weighted PRESS
(the same deleted-residual formula, h_i = ||A_i||^2 in the weighted basis).

An intercept (``fit_intercept=True``, issue 19).  MKPM (33) does not centre and its fits (36)
have no intercept: every f_l in S_d vanishes at the origin of feature space.  With an intercept
each code column gets an unpenalised bias b_l, f_l(x) = <w_l, phi(x) - mu> + b_l with w_l in
S_d, and the family Psi is the kernel PCA of the centred features phi(x) - mu, mu = sum_i s_i
phi(x_i) / sum_i s_i their (weighted) mean (s = 1 without weights; the standard kernel PCA of
MKPM's reference [13]): (33) becomes C = sum_i s_i (phi(x_i) - mu)(phi(x_i) - mu)^T / sum_i s_i,
whose eigenpairs (a_k, gamma_k) are those of S^1/2 H K H^T S^1/2 with H = I - 1 s^T / sum_i s_i
(H K H^T, the Gram matrix of the centred points, takes K's place in (34)-(35); the test
centring and the Nystroem features are in ``msvm.fast.kpca``).  Every a_k of gamma_k > 0 is
orthogonal to s^1/2, and the training scores satisfy S^1/2 Z = A Gamma^1/2, so
sum_i s_i z(x_i) = s^1/2^T A Gamma^1/2 = 0: the features are weighted-centred.  The weighted
least squares (36) with an intercept, min over alpha and b of sum_i s_i (z_[d](x_i) alpha + b -
y_il)^2, has d/db = 0 at b = ybar_l - (sum_i s_i z_[d](x_i) / sum_i s_i) alpha = ybar_l, the
weighted mean sum_i s_i y_il / sum_i s_i of the column, whatever alpha (the mean's projection
is 0 after centring); then (37)-(41) hold for the centred targets y_l - ybar_l 1:

    alpha* = Gamma_[d]^-1/2 A_[d]^T S^1/2 (y_l - ybar_l 1)                     (41, centred)
    G*_l(d) = (||S^1/2 (y_l - ybar_l 1)||^2 - ||A_[d]^T S^1/2 (y_l - ybar_l 1)||^2) / sum_i s_i
                                                                               (42, centred)

(A^T s^1/2 = 0 makes alpha* equal to Gamma^-1/2 A^T S^1/2 y_l; the centred targets are used
anyway, which keeps (42) exact where rounding leaves A slightly off that orthogonality).  At
d = 0 every column predicts its mean and G*_l(0) is the weighted variance of the column.  The
intercept is not counted in d: the dynamic programme (20) runs on the centred table unchanged.
``intercept_`` holds b (L,), ``coef_`` alpha*, and f_l(x) = z_[d_l](x) coef_[:d_l, l] + b_l.

Leave-one-out with an intercept: the basis stays that of every training input, centred by the
mean mu of every training input (the features z are fixed functions); leaving pattern i out
refits alpha and b on the others, by the weighted least squares on the columns [1, z_[d]].  In
the scaled coordinates (row i times s_i^1/2) that design is [s^1/2, A_[d] Gamma_[d]^1/2], its
columns orthogonal, so the hat matrix is s^1/2 s^1/2^T / sum_j s_j + A_[d] A_[d]^T and the
leverage

    h_i(d) = s_i / sum_j s_j + sum_{k <= d} A_ik^2,

with the same deleted output (f_il(d) - h_i(d) y_il) / (1 - h_i(d)), f_il including b_l
(``msvm.fast.mkpm_path.loo_misclassified``).  ``fit_intercept=False`` (the default) is the
uncentred fit above, bit for bit what it was before the option existed.

Scale (issue 16).  Column l uses only the first d_l components, so the basis holds the top K
(``max_column_dimension``) and the dynamic programme caps every d_l at K while the total runs to
D = min(N, L K): the path equals the exact one wherever no allocation needs more than K
components of a column.  K starts at 256 and doubles while the selected allocation gives some
column all K.  The top K eigenpairs come from a partial eigensolver (``msvm.fast.kpca``).  Above
``NYSTROEM_ABOVE`` = 1000 training points the basis is by default that of m = N / 4 Nystroem
landmarks, clipped to [300, 1000] (MKPM §3; memory O(N m), time O(N m^2)), doubled while the
selected allocation gives a column every component.  The one-vs-all columns of digits and
of 4000 MNIST images used at most N / 6 components each at the exact path's selected d (209 of
1257, 584 of 4000), so N / 4 landmarks leave room; benchmarks/results/mkpm_scale.md has the
times and accuracies.
"""

from __future__ import annotations

from contextlib import nullcontext
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from msvm.core import kernels
from msvm.core.coding import one_vs_all_code
from msvm.core.validation import check_finite, check_sample_weight
from msvm.fast.base import (
    shaped_decision,
    support_by_class,
    support_counts,
    validate_prediction_data,
    validate_training_data,
)
from msvm.fast.callable_kernel import fit_with_callable, kernel_rows
from msvm.fast.kpca import EIGEN_SOLVERS, SERIAL_UP_TO, KernelPCABasis
from msvm.fast.mkpm_path import capped_allocation_path, loo_misclassified, select_dimension
from msvm.fast.threads import blas_threads

NYSTROEM_ABOVE = 1000  # approximation="auto" uses Nystroem for more training points than this
NYSTROEM_LANDMARKS = (300, 1000)  # default landmarks: N / 4 clipped to this range (at most N)
COLUMN_START = 256  # first cap K on d_l that max_column_dimension="auto" tries (then doubles)
TOTAL_BINDS = 0.1  # n_components=None: D doubles while the selected d is in its last tenth
COLUMN_SHARE = 32  # n_components=None: D starts at max(N, 32 code columns)


class MKPMClassifier(ClassifierMixin, BaseEstimator):
    """Multiclass kernel projection machine with output codes (MKPM).

    Parameters
    ----------
    n_components : int or None, default=None
        D, the largest total dimension d = d_1 + ... + d_L on the path.  None: the number of
        training points N, at least 32 components a code column on average (32 times the
        code's columns, L for the default one-vs-all code; at most L K), doubled, up to L N,
        while the selected d lies in the path's last tenth (with many classes N leaves each
        column about N / L components: 30 classes of 5 points selected d = 148 of 150 at 40 %
        cross-validated accuracy, against 87 % with D grown; 40 classes of 3 points, D = N: flat
        errors near 1 put d mid-path, and 17.5 % test accuracy).  The longer path is in the same
        basis (its landmarks too), the same below the old D; with ``selection="loo"`` its errors
        there are kept (the other selections compute them again, on new folds for "cv").
    max_column_dimension : int or None, default=None
        K, the most kernel-PCA components one code column can use: only the top K eigenpairs
        of the Gram matrix are computed.  None: start at min(256, D) and double while some
        column of the selected allocation holds all K (the dynamic programme asked for more
        than it had), up to D; with Nystroem, every component of the landmarks.
    kernel, gamma, degree, coef0 : as in scikit-learn's SVC ("precomputed", and a callable,
        fitted as "precomputed" on kernel(X, X), use the exact basis).
    code : array (n_classes, L) of +-1 or None, default=None
        Output code, one row per class in ``classes_`` order; None is one-vs-all (MKPM §4).
    selection : {"loo", "cv", "validation", "train"}, default="loo"
        How d is chosen: leave-one-out error in the fitted basis (closed form, no refit),
        cross-validated error (the basis refitted per fold), error on a held-out split, or
        training error.
    cv : int, default=5; validation_fraction : float, default=0.2
    approximation : {"auto", None, "nystroem"}, default="auto"
        None: the exact kernel-PCA basis; "nystroem": the basis of ``n_landmarks`` landmark
        points (MKPM §3); "auto": Nystroem for more than 1000 training points, else exact.
    n_landmarks : int or None, default=None
        Nystroem landmarks, drawn by ``random_state``.  None: N / 4 clipped to [300, 1000] (at
        most N), doubled while the selected allocation gives a column every component.
    eigen_solver : {"auto", "dense", "arpack", "randomized"}, default="auto"
        How the exact basis's top K eigenpairs are found (``msvm.fast.kpca``): "auto" is dense
        for N <= 500 or K >= N / 5, else randomized.
    random_state : seeds the splits, the Nystroem landmarks and the partial eigensolvers.
    fit_intercept : bool, default=False
        An unpenalised intercept per code column: the kernel PCA of the (weighted-)centred
        features, the least squares of the centred code columns, b_l their (weighted) means
        (module docstring).  False: MKPM's uncentred basis (33) and fits (36) without one.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        As for the SVMs (``msvm.fast.WestonWatkinsSVC``): the L class scores, or their pairwise
        differences in SVC's order of the pairs.

    Attributes
    ----------
    risk_table_ : (L, K+1) G*_l(k); risk_path_ : (D+1,) Delta_L(d)
    allocation_path_ : (D+1, L) allocation for every total dimension d
    selected_dimension_ : d-hat; selection_errors_ : (D+1,) error rate used to choose it
    coef_ : (K, L) beta_kl in the kernel-PCA basis (centred with ``fit_intercept``)
    intercept_ : (L,) b_l, the intercept of each code column's output f_l (the weighted mean of
        the column's targets; zeros without ``fit_intercept``)
    support_, n_support_ : every training pattern of positive weight, grouped by class as SVC
        orders them, and the count of each class: the least-squares fit (41) has no sparse
        dual, every such pattern's target enters beta.

    Notes
    -----
    Sample weights: ``fit(X, y, sample_weight=s)`` makes every empirical quantity of the fit
    weighted, as if pattern i were in the training set s_i times:

    - the basis is the kernel PCA of the weighted (uncentred, as MKPM 33) covariance
      C_s = sum_i s_i phi(x_i) phi(x_i)^T / sum_i s_i, the eigenpairs of S^1/2 K S^1/2
      (``msvm.fast.kpca``);
    - G*_l(d) is the weighted least squares (MKPM 36, 13)
      min_{f in S_d} sum_i s_i (f(x_i) - y_il)^2 / sum_i s_i = (||S^1/2 y_l||^2 -
      ||A_[d]^T S^1/2 y_l||^2) / sum_i s_i, (42) for the targets S^1/2 y_l, with
      beta = Gamma^-1/2 A^T S^1/2 y_l (41), and the dynamic programme (20) runs on it unchanged;
    - the selection error is the weighted error rate sum_i s_i [wrong_i] / sum_i s_i (training,
      held-out or cross-validated), and leave-one-out is the weighted PRESS: pattern i is left
      out with its whole weight.

    Why the weighted covariance rather than the unweighted basis with weighted least squares:
    the basis decides which directions S_d the fit may use, and an unweighted one would let a
    pattern of tiny weight shape them as much as any other; with the weighted covariance
    integer weights equal repeated rows exactly (the Gram matrix of the repeated rows has the
    nonzero eigenpairs of S^1/2 K S^1/2), so the basis, the risks, the path and its outputs
    coincide (tested to 1e-8 on the exact basis).  What counts patterns rather than weight does
    not: the default ``n_components`` (N patterns), ``selection="loo"`` (leaving one copy of a
    repeated row out keeps the others in the fit), ``"cv"`` and ``"validation"`` (they split
    patterns), and Nystroem's landmarks, drawn uniformly among the patterns (repeating rows
    changes the draw; for given landmarks the basis, the weighted PCA of their features, is
    again that of the repeated rows).  The partial eigensolvers (arpack, randomized) take the
    weighted Gram matrix as they take K.  A pattern of weight 0 is left out before the fit
    (the fit equals the fit without it; ``support_`` lists the others); a constant weight (on
    the patterns of positive weight) runs the unweighted fit, which it does not change.  The
    selected d is the smallest whose error rate is within ``SELECTION_TIES`` = 1e-9 of the
    least (``msvm.fast.mkpm_path.select_dimension``).  As everywhere,
    ``gamma="scale"`` is resolved on every row of X.  There is no ``class_weight`` parameter.
    """

    _parameter_constraints: dict = {
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
        "max_column_dimension": [None, Interval(Integral, 1, None, closed="left")],
        "kernel": [StrOptions({"linear", "rbf", "poly", "precomputed"}), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "code": [None, "array-like"],
        "selection": [StrOptions({"loo", "cv", "validation", "train"})],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "approximation": [None, StrOptions({"auto", "nystroem"})],
        "n_landmarks": [None, Interval(Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions(set(EIGEN_SOLVERS))],
        "random_state": ["random_state"],
        "fit_intercept": ["boolean"],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
    }

    def __init__(
        self,
        *,
        n_components=None,
        max_column_dimension=None,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        code=None,
        selection="loo",
        cv=5,
        validation_fraction=0.2,
        approximation="auto",
        n_landmarks=None,
        eigen_solver="auto",
        random_state=None,
        fit_intercept=False,
        decision_function_shape="ovr",
    ):
        self.n_components = n_components
        self.max_column_dimension = max_column_dimension
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.code = code
        self.selection = selection
        self.cv = cv
        self.validation_fraction = validation_fraction
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.eigen_solver = eigen_solver
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.decision_function_shape = decision_function_shape

    def _code(self, n_classes):
        if self.code is None:
            return one_vs_all_code(n_classes)
        code = check_array(self.code, dtype=np.float64, input_name="code")
        if code.shape[0] != n_classes:
            raise ValueError(f"code must have one row per class ({n_classes}), got {code.shape}.")
        if np.unique(code, axis=0).shape[0] != n_classes:
            raise ValueError("code must give every class a distinct codeword.")
        return code

    def _landmarks(self, n_samples):
        """Nystroem landmarks for a training set of n_samples, or None for the exact basis."""
        approximation = self.approximation
        if approximation == "auto":
            approximation = "nystroem" if n_samples > NYSTROEM_ABOVE else None
        if self.kernel == "precomputed" or approximation is None:
            return None
        if self.n_landmarks is not None:
            return min(n_samples, self.n_landmarks)
        low, high = NYSTROEM_LANDMARKS
        return min(n_samples, max(low, min(high, n_samples // 4)))

    def _path(self, X, y_index, code, rng, top, landmarks, weights=None, basis=None):
        """Basis (top components at most; ``basis``: one already fitted to this training set),
        risk table, DP path, coefficients and intercept (None without ``fit_intercept``) for one
        training set (``weights``: its sample weights, all > 0, or None)."""
        if basis is None:
            basis = KernelPCABasis(
                X,
                self.kernel,
                self._gamma,
                self.degree,
                self.coef0,
                top,
                rng,
                eigen_solver=self.eigen_solver,
                n_landmarks=landmarks,
                weights=weights,
                centre=self.fit_intercept,
            )
        targets = code[y_index]
        total = targets.shape[0]
        intercept = None
        if self.fit_intercept:  # b_l, the weighted mean of column l; y_l - b_l (41-42 centred)
            mass = np.ones(total) if weights is None else weights
            intercept = mass @ targets / mass.sum()
            targets = targets - intercept
        if weights is not None:  # the weighted least squares is the plain one of S^1/2 y
            targets = np.sqrt(weights)[:, None] * targets
            total = weights.sum()
        projections = basis.A.T @ targets  # a_k^T y_l, (K, L)
        K, L = projections.shape
        explained = np.vstack([np.zeros((1, L)), np.cumsum(projections**2, axis=0)])
        # (42) / N, or / sum_i s_i weighted; shape (L, K+1)
        G = ((targets**2).sum(axis=0)[None, :] - explained).T / total
        D = min(self._total, L * K)
        risk, alloc = capped_allocation_path(np.ascontiguousarray(G), D + 1)
        coef = projections / np.sqrt(basis.gamma)[:, None]  # beta_kl (41)
        return basis, G, risk, alloc, coef, intercept

    @staticmethod
    def _cumulative(values):
        """[0, cumsum(values, axis=1)]: running sums over the components, (n, D+1, ...)."""
        out = np.zeros((values.shape[0], values.shape[1] + 1, *values.shape[2:]))
        np.cumsum(values, axis=1, out=out[:, 1:])
        return out

    @classmethod
    def _path_outputs(cls, Z, coef, alloc, intercept=None):
        """Outputs f(x) for every total dimension: (n, D+1, L), by cumulative sums over k, plus
        the intercept (L,) if there is one."""
        cumulative = cls._cumulative(Z[:, :, None] * coef[None, :, :])  # (n, D+1, L)
        F = cumulative[:, alloc, np.arange(coef.shape[1])]
        return F if intercept is None else F + intercept

    @staticmethod
    def _misclassified(F, y_index, code):
        """Where the nearest-codeword rule (8) errs on outputs F (n, D+1, L): (n, D+1) bool."""
        # argmin_q ||f - c_q||^2 = argmin_q ||c_q||^2 - 2 f . c_q
        dist = (code**2).sum(axis=1) - 2.0 * F @ code.T  # (n, D+1, Q)
        return np.argmin(dist, axis=2) != y_index[:, None]

    def _loo_errors(self, y_index, code, weights=None, known=None, ova=None):
        """Leave-one-out error rate for every d by PRESS in the fitted basis (module docstring);
        weighted, the weighted PRESS and error rate sum_i s_i [wrong_i] / sum_i s_i.  ``known``:
        the rates of the first d on a shorter path in the same basis, which are kept."""
        basis = self._basis
        A = np.ascontiguousarray(basis.A)
        targets = code[y_index]
        mass = np.ones(y_index.size) if weights is None else weights
        centred, lever0, offset = targets, np.zeros(y_index.size), np.zeros(code.shape[1])
        if self._intercept is not None:  # h_i(0) = s_i / sum_j s_j, f_il(0) = b_l
            offset = self._intercept
            centred, lever0 = targets - offset, mass / mass.sum()
        if weights is None:
            rows, projections = A, A.T @ centred
        else:  # outputs f_i = z(x_i) beta = (z(x_i) Gamma^-1/2) (A^T S^1/2 y)
            rows = np.ascontiguousarray(basis.training_scores / np.sqrt(basis.gamma))
            projections = A.T @ (np.sqrt(weights)[:, None] * centred)
        wrong = loo_misclassified(
            A,
            rows,
            projections,
            targets,
            self.allocation_path_,
            np.ascontiguousarray(code),
            y_index,
            mass,
            lever0,
            offset,
            first=0 if known is None else known.size,
            ova=ova,
        )
        wrong /= mass.sum()
        if known is not None:
            wrong[: known.size] = known
        return wrong

    def _path_errors(
        self, X, y_index, basis, coef, alloc, code, weights=None, intercept=None, chunk=256
    ):
        """Error rate of the nearest-codeword rule (8) for every d, in chunks of rows; weighted,
        sum_i s_i [wrong_i] / sum_i s_i."""
        Z = basis.scores(X)
        weights = np.ones(Z.shape[0]) if weights is None else weights
        wrong = np.zeros(alloc.shape[0])
        for start in range(0, Z.shape[0], chunk):
            F = self._path_outputs(Z[start : start + chunk], coef, alloc, intercept)
            wrong += weights[start : start + chunk] @ self._misclassified(
                F, y_index[start : start + chunk], code
            )
        return wrong / weights.sum()

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the regularisation path and choose the total dimension d, on ``X`` (dense or CSR;
        the Gram matrix if precomputed).

        ``sample_weight`` (n_samples,), default None: pattern i counts s_i times in the
        kernel PCA, the least squares and the selection error (class docstring); an invalid one
        (wrong length, negative, NaN or inf, all zero) raises ValueError.
        """
        if callable(self.kernel):
            return fit_with_callable(self, X, y, sample_weight)
        X, y_index = validate_training_data(self, X, y)
        weights = check_sample_weight(sample_weight, y_index.size, y_index)
        classes_of, kept = y_index, np.arange(y_index.size)
        if weights is not None and np.any(weights == 0):  # left out (class docstring)
            kept = np.flatnonzero(weights > 0)
            X = X[np.ix_(kept, kept)] if self.kernel == "precomputed" else X[kept]
            y_index, weights = y_index[kept], weights[kept]
        if weights is not None and np.all(weights == weights[0]):
            weights = None  # a constant weight changes nothing of the fit
        rng = check_random_state(self.random_state)
        code = self._code(self.classes_.size)
        N = X.shape[0]
        landmarks = self._landmarks(N)
        limit = N if self.n_components is None else min(self.n_components, N)
        if self.max_column_dimension is not None:
            top = min(self.max_column_dimension, limit)
        else:
            top = min(COLUMN_START, limit) if landmarks is None else limit
        # one BLAS thread for eigenproblems up to SERIAL_UP_TO wide (msvm.fast.kpca)
        serial = (N if landmarks is None else landmarks) <= SERIAL_UP_TO
        self._total = (
            max(N, COLUMN_SHARE * code.shape[1]) if self.n_components is None else self.n_components
        )
        with blas_threads(1) if serial else nullcontext():
            self._fit_path(X, y_index, code, rng, top, landmarks, limit, weights)
        self._n_train = classes_of.size  # a precomputed kernel's rows k(x, X) have this width
        self._kept = kept  # (in row order: the columns of k(x, X) the fit's basis reads)
        self.support_ = support_by_class(np.isin(np.arange(classes_of.size), kept), classes_of)
        self.n_support_ = support_counts(self.support_, classes_of, self.classes_.size)
        self.fit_status_ = 0  # (SVC's: MKPM has no solver that can stop early)
        return self

    def _scores(self, X):
        """z(x) for new points; a precomputed kernel's rows k(x, X) are cut to the patterns the
        fit kept (weight > 0)."""
        if self.kernel == "precomputed" and self._kept.size < self._n_train:
            X = X[:, self._kept]
        return self._basis.scores(X)

    def _fit_path(self, X, y_index, code, rng, top, landmarks, limit, weights=None):
        """Fit with the basis grown until the cap does not bind (max_column_dimension)."""
        N = X.shape[0]
        basis = known = None  # kept where D alone grows: the basis, the first d's errors
        while True:
            path = self._path(X, y_index, code, rng, top, landmarks, weights, basis)
            basis, G, risk, alloc, coef, bias = path
            self._basis, self.code_, self._intercept = basis, code, bias
            self.risk_table_, self.risk_path_ = G, risk
            self.allocation_path_, self.coef_ = alloc, coef
            self.intercept_ = np.zeros(code.shape[1]) if bias is None else bias.copy()
            self.selection_errors_ = self._selection_errors(
                X, y_index, code, rng, top, landmarks, weights, known
            )
            self.selected_dimension_ = select_dimension(self.selection_errors_)
            # The column cap binds where the chosen allocation gives a column every component of
            # the basis: then a larger basis (K doubled, or twice the landmarks) is tried.  The
            # total cap D binds where the chosen d lies in the path's last TOTAL_BINDS share
            # (many classes: D = N leaves each column about N / L components): D doubles, up to
            # L times the most components a column may use.
            K, D, d = coef.shape[0], alloc.shape[0] - 1, self.selected_dimension_
            column = self.max_column_dimension is None and alloc[d].max() >= K
            total = (
                self.n_components is None
                and D == self._total < code.shape[1] * limit
                and d >= (1.0 - TOTAL_BINDS) * D
            )
            if column and landmarks is None and K == top < limit:
                top, basis, known = min(2 * top, limit), None, None
            elif (
                column and landmarks is not None and self.n_landmarks is None and K == landmarks < N
            ):
                landmarks, basis, known = min(2 * landmarks, N), None, None
            elif total:  # the same basis (its landmarks too) and path below D, a longer path
                self._total = min(2 * self._total, code.shape[1] * limit)
                known = self.selection_errors_ if self.selection == "loo" else None
            else:
                return self

    def _selection_errors(self, X, y_index, code, rng, top, landmarks, weights=None, known=None):
        """Error rate for every d = 0..D under the chosen selection rule (weighted by
        ``weights``, the sample weights, all > 0, or None)."""
        width = self.allocation_path_.shape[0]
        if self.selection == "loo":
            return self._loo_errors(y_index, code, weights, known)
        if self.selection == "train":
            return self._path_errors(
                X,
                y_index,
                self._basis,
                self.coef_,
                self.allocation_path_,
                code,
                weights,
                self._intercept,
            )
        if self.kernel == "precomputed":
            raise ValueError(
                "selection='cv' or 'validation' needs a feature matrix, not a "
                "precomputed kernel; use selection='train'."
            )
        counts = np.bincount(y_index)
        counts = counts[counts > 0]  # a class all of weight 0 has no pattern left
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
            L = counts.size
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
            fit_w, test_w = (None, None) if weights is None else (weights[train], weights[test])
            basis, _, _, alloc, coef, bias = self._path(
                X[train], y_index[train], code, rng, top, landmarks, fit_w
            )
            fold = self._path_errors(X[test], y_index[test], basis, coef, alloc, code, test_w, bias)
            errors += np.pad(fold, (0, max(0, width - fold.size)), mode="edge")[:width]
        return errors / len(splits)

    def path_outputs(self, X):
        """f(x) for every total dimension d = 0..D, shape (n_samples, D+1, L)."""
        if callable(self.kernel):
            return self._precomputed_model.path_outputs(kernel_rows(self, X))
        X = validate_prediction_data(self, X)
        return self._path_outputs(
            self._scores(X), self.coef_, self.allocation_path_, self._intercept
        )

    def decision_function(self, X):
        """Class scores -||f(x) - c_q||^2 at the selected dimension (MKPM 8), laid out as
        ``decision_function_shape`` asks (``msvm.fast.base.shaped_decision``; two classes: one
        column, positive for classes_[1])."""
        return shaped_decision(self._decision_scores(X), self.decision_function_shape)

    def _decision_scores(self, X):
        """The class scores (n_samples, L), a block of rows at a time: the projections z(x) have
        as many columns as the basis (up to N), so that at most about
        ``core.kernels.BLOCK_BYTES`` of them are held."""
        if callable(self.kernel):
            return self._precomputed_model._decision_scores(kernel_rows(self, X))
        X = validate_prediction_data(self, X)
        # floats a row: k(x, landmarks), z(x) and the (classes x code) differences
        width = sum(self._basis.to_scores.shape) + self.code_.size
        step = max(1, kernels.BLOCK_BYTES // (8 * width))
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: check_finite says so
            blocks = [self._class_scores(X[i : i + step]) for i in range(0, X.shape[0], step)]
        scores = np.concatenate(blocks) if blocks else np.empty((0, self.classes_.size))
        check_finite("The decision values", scores)
        return scores

    def _class_scores(self, X):
        """-||f(x) - c_q||^2 for the rows of X (``decision_function``)."""
        alloc = self.allocation_path_[self.selected_dimension_]
        Z = self._scores(X)
        F = np.column_stack([Z[:, :d] @ self.coef_[:d, l] for l, d in enumerate(alloc)])
        if self._intercept is not None:
            F += self._intercept
        return -((F[:, None, :] - self.code_[None, :, :]) ** 2).sum(axis=2)

    def predict(self, X):
        """The class with the largest score."""
        scores = self._decision_scores(X)  # (first: it checks that the model is fitted)
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = True
        return tags
