"""Simplex-coded multiclass learning (Mroueh, Poggio, Rosasco & Slotine 2011) as an estimator.

Classes are coded by the simplex code a_1..a_T in R^{T-1} (Definition 1.1) and a point is decoded
by argmax_t <f(x), a_t>.

Hinge loss.  The dual of §1.3 is max sum_i alpha_i - 1/2 alpha^T Q alpha, 0 <= alpha <= C, with
Q_ij = K_ij y_i^T y_j.  Since <a_s, a_t> = kappa [I(s = t) - 1/T], kappa = T/(T-1), Q is the
inhibitory kernel K [I(j = j') - 1/T] (ISVM 6.3) restricted to each pattern's own class and scaled
by kappa.  With beta = kappa alpha the problem is kappa^-1 times the inhibitory dual (mu = 1/T)
with only the true-class variables free and the box [0, kappa C]; the engine solves exactly that,
one variable per pattern, and its outputs are the decoding scores <f(x_i), a_t>.

Squared loss.  (K + (n lambda / 2) I) C = Y with C = 1/(n lambda) on the canonical scale is
(K + I / (2C)) B = Y; one eigendecomposition K = V diag(s) V^T gives B for any C as
V diag(1 / (s + 1/(2C))) V^T Y (``coef_path``).  Eigenvalues at or below N eps times the largest
are rounding and taken as 0 (``numerical_spectrum``): B is exact for the kernel on its numerical
range.  The outputs K B and the model's coefficients (B's part on that range, the same k(x, X) B
in exact arithmetic) are computed from the spectral coordinates, not from B, whose components off
the range are 2C times the targets': on iris's linear kernel (rank 4) the outputs K B were 4e-3
off at C = 1e9 and 230 off at C = 1e14, with no warning.

With ``fit_intercept`` the outputs get a bias b in R^{T-1} (scores <b, a_t>, summing to zero
over t).  Hinge: the engine's augmented Lagrangian (as for every machine).  Squared: the bordered
system of a least-squares SVM, b^T = 1^T G^-1 Y / 1^T G^-1 1 and B = G^-1 (Y - 1 b^T) with
G = K + I / (2C) (``msvm.reference.simplex_square``).

Sample weights s_i multiply pattern i's loss term.  Hinge: the bound of beta_i is kappa C s_i.
Squared: the optimality condition K B = 2C K S (Y - K B) is met by B = 2C S (Y - K B), i.e.
B_i = 0 where s_i = 0 and (K_PP + diag(1 / (2C s_P))) B_P = Y_P on the patterns P of positive
weight.  In the eigenbasis of K_PP (its numerical range, as above) that is the primal's weighted
least squares over the features V_r diag(s_r)^1/2, solved for each C by a row-sorted QR
(``_weighted_ridge``): the dual's Cholesky of K_PP + diag(1 / (2C s_P)) gave outputs 2e-3 off at
C = 1e9 on iris's linear kernel with mild weights and refused weights spanning 40 decades, whose
least squares are accurate to 1e-12.  B's part on the range comes from the same coordinates, its
part off the range (a rank-deficient kernel) from the residuals, 2C s_i (Y_i - F_i): with widely
spread weights these round, and the fit warns that ``dual_coef_`` may be inaccurate.  The closed
form holds the whole Gram matrix (and a symmetrised copy and its eigenvectors, a precomputed
kernel's too) and costs O(N^3): a fit whose Gram matrix exceeds ``cache_size`` is refused with
the size it needs (60 000 points: 27 GB for it), so that it is asked for, not met as a
MemoryError or hours of swapping.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.linalg
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from msvm.core import objectives
from msvm.core.coding import one_hot, simplex_code
from msvm.core.kernels import kernel_matrix
from msvm.core.validation import check_finite, check_gram_memory, gram_eigh
from msvm.fast.base import (
    BaseMulticlassSVC,
    loss_weights,
    support_by_class,
    support_counts,
    validate_training_data,
)
from msvm.fast.callable_kernel import fit_with_callable
from msvm.fast.patterns import SIGN
from msvm.fast.threads import with_fit_threads

# A weighted squared-loss fit warns that dual_coef_ may be inaccurate where the rounding of its
# part off the kernel's range (eps (|Y_i| + |F_i|) 2C s_i a pattern) passes this fraction of its
# largest entry (iris's linear kernel, weights over 40 decades: above; mild weights: far below).
DUAL_COEF_RTOL = 1e-8


class SimplexSVC(BaseMulticlassSVC):
    """Simplex-coded SVM: ``loss="hinge"`` on the engine, ``loss="squared"`` in closed form.

    Parameters
    ----------
    loss : {"hinge", "squared"}, default="hinge"
    C : float, default=1.0
        Canonical scale 1/2 ||f||^2 + C sum(loss); the paper's lambda is 1/(n C).
    kernel, gamma, degree, coef0, tol, max_iter, shrinking, cache_size, random_state, verbose,
    warm_start, class_weight, fit_intercept : as for the other estimators (the hinge loss
        uses the engine; the squared loss's bias: module docstring).
    probability, decision_function_shape : as for the other estimators.
        (``fit``'s ``sample_weight`` multiplies pattern i's loss by s_i: module docstring.)

    Attributes
    ----------
    code_ : (n_classes, n_classes - 1) simplex code, row t is a_t
    dual_coef_ : (n_samples,) alpha for the hinge loss, f(x) = sum_k k(x, x_k) alpha_k y_k;
        (n_samples, n_classes - 1) coefficients C for the squared loss
    code_coef_ : coefficients c_k (rows of the support vectors) in code space, f(x) = sum_k
        k(x, x_k) c_k (squared loss: the part of B on the kernel's numerical range)
    coef_ : (n_classes, n_features) weights of the class scores <f(x), a_t>, linear kernel only
    support_, n_support_ : patterns with a non-zero dual coefficient, and their count per class
    objective_, dual_objective_ : canonical primal and dual values (equal for the squared loss)
    """

    _kind = SIGN
    _single_variable_solvers = False
    _parameter_constraints = {
        **BaseMulticlassSVC._parameter_constraints,
        "loss": [StrOptions({"hinge", "squared"})],
    }

    def __init__(
        self,
        *,
        loss="hinge",
        C=1.0,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        tol=1e-3,
        max_iter=-1,
        shrinking=True,
        cache_size=200,
        random_state=None,
        verbose=0,
        warm_start=False,
        class_weight=None,
        probability=False,
        n_jobs=None,
        fit_intercept=False,
        decision_function_shape="ovr",
    ):
        self.loss = loss
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.class_weight = class_weight
        self.probability = probability
        self.n_jobs = n_jobs
        self.fit_intercept = fit_intercept
        self.decision_function_shape = decision_function_shape

    # the engine's problem for the hinge loss
    solver, selection, eta = "dcd", "cyclic", 0.5

    def _kappa(self, T):
        return T / (T - 1.0)

    def _inhibition(self, T):
        return 1.0 / T

    def _dual_terms(self, y_index, T):
        free = one_hot(y_index, T)
        return free, free

    def _upper_bounds(self, C, free):
        return self._kappa(free.shape[1]) * C * free

    def _initial_alpha(self, hi, C):
        if self.warm_start and getattr(self, "_beta", np.zeros(0)).shape == hi.shape:
            return np.minimum(self._beta * (C / self._fitted_C), hi)
        return np.zeros(hi.shape)

    def _objectives(self, norm_sq, F, beta, lin0, y_index, C):
        """||f||^2 = sum_i alpha_i <y_i, f(x_i)> = norm_sq / kappa; loss on <y_i, f(x_i)>."""
        kappa = self._kappa(F.shape[1])
        margins = F[np.arange(F.shape[0]), y_index]  # <y_i, f(x_i)> = score of the own class
        norm = norm_sq / kappa
        hinge = np.maximum(0.0, 1.0 - margins)
        loss = hinge.sum() if self._weights is None else np.dot(self._weights, hinge)
        primal = objectives.canonical_objective(norm, loss, C)
        return primal, float(beta.sum() / kappa - 0.5 * norm)

    def fit(self, X, y, sample_weight=None):
        """Fit to ``X`` (dense or CSR; Gram matrix if precomputed); ``sample_weight`` multiplies
        each pattern's loss term (module docstring)."""
        if callable(self.kernel):
            return fit_with_callable(self, X, y, sample_weight)
        if self.loss == "squared":
            return self._fit_squared(X, y, sample_weight)
        for stale in ("_eigen", "_targets", "_positive", "_weights"):  # an earlier squared-loss fit
            self.__dict__.pop(stale, None)
        super().fit(X, y, sample_weight)
        T = self.classes_.size
        self._beta = self.dual_coef_
        rows = np.arange(self._beta.shape[0])
        self.dual_coef_ = self._beta[rows, self._y_index] / self._kappa(T)
        self.code_ = simplex_code(T)
        self.code_coef_ = (self.dual_coef_[:, None] * self.code_[self._y_index])[self.support_]
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    @with_fit_threads
    def _fit_squared(self, X, y, sample_weight=None):
        start = time.perf_counter()
        X, self._y_index = validate_training_data(self, X, y)
        what = "loss='squared' (a closed form, O(N^3), with two more arrays of its size)"
        check_gram_memory(X.shape[0], self.cache_size, what, hint=", or use loss='hinge'")
        weights = loss_weights(self, sample_weight, self._y_index)
        T = self.classes_.size
        K = (
            X
            if self.kernel == "precomputed"
            else kernel_matrix(X, X, self.kernel, self._gamma, self.degree, self.coef0)
        )
        K = np.asarray(K)
        check_finite("The Gram matrix", K)
        self._targets = simplex_code(T)[self._y_index]
        symmetric = 0.5 * K  # (halved first: K + K^T overflows near 1.8e308; exact otherwise)
        symmetric += symmetric.T
        # the patterns of positive weight (B is 0 on the others) and their kernel's spectrum
        self._positive = np.arange(K.shape[0]) if weights is None else np.flatnonzero(weights)
        s, V = gram_eigh(symmetric[np.ix_(self._positive, self._positive)])
        self._eigen = (numerical_spectrum(s), V)
        self._weights = weights
        B, b, P = (path[0] for path in self._squared_path([self.C]))
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: check_finite says so
            # K~ B and B's part on K~'s range from their coordinates P (not from B, whose
            # components off that range, 2C times the targets', would round the others by eps
            # times them)
            s, V = self._eigen
            r = s > 0
            kept = V[:, r]  # (a copy: taken once)
            F = kept @ (s[r, None] * P) + b
            norm_sq = float(np.sum(s[r, None] * P * P))
            model = np.zeros_like(B)
            model[self._positive] = kept @ P  # B on K~'s range: k(x, X) B without B's rounding
            w = None if weights is None else weights[self._positive]
            targets = self._targets[self._positive]
            loss = objectives.simplex_square_loss(F, targets, w)
            self.objective_ = objectives.canonical_objective(norm_sq, loss, float(self.C))
            if weights is not None:
                # a heavy pattern's residual Y_i - F_i rounds by eps (|Y_i| + |F_i|): its loss
                # term by w_i eps^2 (a weight of 1e100: 1e51 times the optimum) and its B_i, 2C w_i
                # times the residual, by 2C w_i eps, where B's part off the range comes from
                # them; from B the value is exact where B is, so the lower of the two is kept
                c = _reciprocal_of_twice(self.C, w)[:, None]
                Bp = B[self._positive]
                self.objective_ = min(self.objective_, _primal_value(s, P, Bp, c))
                rounding = np.finfo(float).eps * (np.abs(targets) + np.abs(F)) / c
                if (~r).any() and np.linalg.norm(rounding) > DUAL_COEF_RTOL * np.abs(Bp).max():
                    warnings.warn(
                        "SimplexSVC(loss='squared'): dual_coef_ may be inaccurate (the sample "
                        "weights' spread against the kernel's rank: B's part outside the "
                        "kernel's range is 2C s_i times residuals that round by eps); the "
                        "outputs, predictions and objective_ are not affected.",
                        scipy.linalg.LinAlgWarning,
                        stacklevel=2,
                    )
        check_finite("The fit", self.objective_, B)
        self.dual_objective_ = self.objective_  # closed form: the optimum itself
        self.relative_gap_ = 0.0
        self.n_iter_ = 1  # one closed-form solve
        self.fit_status_ = 0  # (SVC's: converged)
        self.support_ = support_by_class(np.any((B != 0.0) | (model != 0.0), axis=1), self._y_index)
        self.n_support_ = support_counts(self.support_, self._y_index, T)
        self.support_vectors_ = (
            np.empty((0, 0)) if self.kernel == "precomputed" else X[self.support_]
        )
        self._sv_coef = model[self.support_] @ simplex_code(T).T  # class scores <f(x), a_t>
        self.intercept_ = b @ simplex_code(T).T  # class scores <b, a_t>
        self.code_ = simplex_code(T)
        self.dual_coef_ = B  # the dual variables A of the square loss are B
        self.code_coef_ = model[self.support_]
        # the class scores' weights, as the hinge loss's fit has them, and its predictions
        # through them (through the kernel, X coef_^T drifted from the scores by 3 % on
        # features times 1e5)
        self._linear_weights = self.kernel == "linear"
        if self._linear_weights:
            self.coef_ = np.asarray(self.support_vectors_.T @ self._sv_coef).T
        else:
            self.__dict__.pop("coef_", None)  # from an earlier fit with the linear kernel
        self._fit_probability(X, self._y_index)
        if self.verbose:  # (the hinge loss's line is the engine's, ``_report``)
            print(
                f"SimplexSVC(loss='squared'): {self._y_index.size} patterns, {T} classes, "
                f"closed form, primal {self.objective_:.6g}, {time.perf_counter() - start:.2f} s"
            )
        return self

    def coef_path(self, Cs):
        """Squared loss: the coefficients B (n_samples, T-1) for every C in ``Cs`` (one eigh;
        with sample weights one QR of the weighted least squares per C)."""
        if callable(self.kernel):
            return self._precomputed_model.coef_path(Cs)
        return self._squared_path(Cs)[0]

    def _squared_path(self, Cs):
        """(B, b, P) for every C: B (len(Cs), n_samples, T-1), b (len(Cs), T-1), zero without
        ``fit_intercept``, and P (len(Cs), r, T-1), the coordinates of B's part on the numerical
        range of K_PP (its r eigenvectors of positive ``numerical_spectrum``) on the patterns P
        of positive weight.  Unweighted, each C solves G B = Y - 1 b^T with G = K + I / (2C)
        and b the bordered system's bias (module docstring) in K's eigenbasis; weighted, the
        primal's least squares in the range's coordinates (``_weighted_ridge``)."""
        check_is_fitted(self, "_targets")
        Y = self._targets
        coef, bias = np.zeros((len(Cs),) + Y.shape), np.zeros((len(Cs), Y.shape[1]))
        s, V = self._eigen
        r = s > 0
        kept, off = V[:, r], V[:, ~r]  # (copies: taken once, not once a C)
        coords = np.zeros((len(Cs), int(r.sum()), Y.shape[1]))
        if self._weights is not None:
            positive, w = self._positive, self._weights[self._positive]
            ridge = _weighted_ridge(s, V, w, Y[positive], self.fit_intercept)
            for k, C in enumerate(Cs):
                c = _reciprocal_of_twice(C, w)  # 1 / (2 C s_i)
                if np.all(c == np.inf):  # every ridge infinite: B = 0, the limit's bias
                    bias[k] = _limit_bias(Y, self._weights, self.fit_intercept)
                    continue
                coords[k], bias[k] = ridge(C)
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    # B_P = 2C S (Y - F) (the optimality condition): its part off the range from
                    # there, its part on the range from the coordinates (the residuals of heavy
                    # patterns cancel: B 1e6 times off on 15 wine points, weights over 20 decades)
                    F = kept @ (s[r, None] * coords[k]) + bias[k]
                    residual_form = (Y[positive] - F) / c[:, None]
                    coef[k, positive] = kept @ coords[k] + off @ (off.T @ residual_form)
            return coef, bias, coords
        on_range = _constants_on_range(s, V)  # (G^-1 1 from the range only)
        for k, C in enumerate(Cs):
            d = _resolvent(s, C)
            if not d.any():  # 1 / (2 C) infinite or d below the smallest float: B = 0
                bias[k] = _limit_bias(Y, np.ones(Y.shape[0]), self.fit_intercept)
                continue
            with np.errstate(over="ignore", invalid="ignore"):  # (d inf: check_finite)
                coef[k], bias[k] = _bordered(
                    lambda R, d=d: V @ (d[:, None] * (V.T @ R)),
                    Y,
                    self.fit_intercept,
                    lambda R, d=d * on_range: V @ (d[:, None] * (V.T @ R)),
                )
                coords[k] = d[r, None] * (kept.T @ (Y - bias[k]))
        return coef, bias, coords


def numerical_spectrum(s: np.ndarray) -> np.ndarray:
    """The eigenvalues ``s`` of a Gram matrix with those at or below N eps times the largest
    (its numerical rank's bar, as ``numpy.linalg.matrix_rank`` and ``scipy.linalg.pinvh`` have
    it; negative ones too) set to 0: below it an eigenvalue is rounding, and the squared loss's
    solve must not divide by it.  A rank-deficient kernel (linear, N > d) has N - d of them,
    ~1e-13 on iris, above the ridge 1 / (2C) from C ~ 1e9 on."""
    bar = s.size * np.finfo(float).eps * max(float(s.max(initial=0.0)), 0.0)
    return np.where(s > bar, s, 0.0)


def _resolvent(s: np.ndarray, C: float) -> np.ndarray:
    """1 / (s + 1 / (2C)) for s >= 0: G^-1 = (K + I / (2C))^-1 in K's eigenbasis, 1 / (2C) from
    the exponents (``_reciprocal_of_twice``: 0 where it overflows, inf where its reciprocal
    does, at s = 0 and C beyond 9e307)."""
    with np.errstate(over="ignore", divide="ignore"):
        return 1.0 / (s + _reciprocal_of_twice(C, 1.0))


def _limit_bias(Y, w, fit_intercept):
    """The bias as every 1 / (2 C s_i) grows without bound (B -> 0): the minimiser of
    sum_i s_i ||Y_i - b||^2, the weighted mean of the targets (0 without a bias)."""
    if not fit_intercept:
        return np.zeros(Y.shape[1])
    return w @ Y / w.sum()


def _reciprocal_of_twice(C, s):
    """1 / (2 C s) (elementwise for an array s) from the factors' exponents: no intermediate
    overflow or underflow (C s can leave the floating range where the result does not); inf
    beyond the largest float."""
    (mc, ec), (ms, es) = np.frexp(C), np.frexp(s)
    with np.errstate(over="ignore"):
        return np.ldexp(0.5 / (mc * ms), -(ec + es))


def _weighted_ridge(s, V, w, Y, fit_intercept):
    """C -> (P, b) minimising sum_i w_i ||Y_i - b - (Phi z)_i||^2 + ||z||^2 / (2C) (the squared
    loss's primal over the kernel's features Phi = V_r diag(s_r)^1/2 of its numerical range,
    the bias unpenalised; P = diag(s_r)^-1/2 z, the coordinates of B's part on the range).  A
    least-squares problem: a Householder QR of its rows scaled by (w_i / max w)^1/2 and sorted
    by their largest entry, once, then for each C the triangular factor and the ridge's rows
    (1 / (2 C max w))^1/2 I, the heavier first (LAPACK's triangular-pentagonal QR, ``dtpqrt``).
    Householder QR with its rows so sorted is accurate for weights spanning hundreds of decades
    (Powell & Reid 1969; Cox & Higham 1998 prove it with column pivoting as well, not used here:
    the tests measure it without), where the dual's K + diag(1 / (2C w)) is singular to rounding
    from ~40, and no normal equations square the condition.  Where the constants lie in the
    range (``_constants_on_range``), z is kept orthogonal to their coordinates a (Phi a = 1): a
    part along a moves into b at no loss and less penalty, and without it the columns (Phi, 1)
    are dependent and the split between them rounding's at a large C."""
    r = s > 0
    kept = V[:, r]  # (a copy: taken once)
    features = kept * np.sqrt(s[r])
    basis = np.eye(features.shape[1])
    if fit_intercept and not _constants_on_range(s, V).all():
        a = kept.T @ np.ones(s.size) / np.sqrt(s[r])
        basis = np.linalg.qr(a[:, None], mode="complete")[0][:, 1:]  # a's complement
    top = w.max()
    t = np.sqrt(w / top)
    columns = [features @ basis] + ([np.ones((s.size, 1))] if fit_intercept else [])
    rows = t[:, None] * np.hstack(columns)
    m, n = basis.shape[1], rows.shape[1]  # penalised and all unknowns
    order = np.argsort(-np.abs(rows).max(axis=1, initial=0.0), kind="stable")
    Q, R = scipy.linalg.qr(rows[order], mode="economic")
    data = np.zeros((n, n)), np.zeros((n, Y.shape[1]))  # (R, Q^T t Y), zero rows below N
    data[0][: R.shape[0]], data[1][: R.shape[0]] = R, Q.T @ (t[:, None] * Y)[order]

    def solve(C):
        # the ridge's 1 / (2 C max w) from the exponents; at least the smallest float, the
        # limit's minimum-norm z where it underflows
        c = max(_reciprocal_of_twice(C, top), np.nextafter(0.0, 1.0))
        U, x = data
        if n == 0:  # a zero kernel without a bias: nothing to solve, F = 0
            return np.zeros((0, Y.shape[1])), np.zeros(Y.shape[1])
        if m:  # the ridge's rows I sqrt(c) above the data's where they are the heavier (the
            # sorted order; below, 1 - tau rounds to 0 at C = 1e-60 and z with it), else below
            ridge = np.zeros((n, n))
            ridge[:m, :m] = np.sqrt(c) * np.eye(m)
            first = np.sqrt(c) >= np.abs(U).max(initial=0.0)
            upper, lower = (ridge, U) if first else (U, ridge[:m])
            rhs = (np.zeros_like(x), x) if first else (x, np.zeros((m, x.shape[1])))
            l = lower.shape[0]
            U, householder, factor, _ = scipy.linalg.lapack.dtpqrt(l, min(64, n), upper, lower)
            x = scipy.linalg.lapack.dtpmqrt(l, householder, factor, *rhs, trans="T")[0]
        U = np.triu(U)
        if not np.all(np.diag(U)):
            raise ValueError(
                "SimplexSVC(loss='squared'): the weighted least squares are singular to "
                "rounding (sample weights spanning too many decades); rescale or clip the "
                "sample weights, or use loss='hinge'."
            )
        x = scipy.linalg.solve_triangular(U, x)
        z = basis @ x[:m]
        return z / np.sqrt(s[r, None]), (x[m] if fit_intercept else np.zeros(Y.shape[1]))

    return solve


def _primal_value(s, P, B, c):
    """The squared loss's primal value 1/2 ||z||^2 + C sum_i s_i ||Y_i - F_i||^2 from the range's
    coordinates P and the dual coefficients: 1/2 sum s_r P^2 + 1/2 sum_i (c_i B_i) . B_i with
    c_i = 1 / (2 C s_i) (the optimality condition B_i = (Y_i - F_i) / c_i), terms 0 where c_i
    overflows (C s_i below the smallest float)."""
    r = s > 0
    with np.errstate(over="ignore", invalid="ignore"):
        terms = np.where(np.isfinite(c), (np.where(np.isfinite(c), c, 0.0) * B) * B, 0.0)
        value = 0.5 * float(np.sum(s[r, None] * P * P)) + 0.5 * float(np.sum(terms))
    return value if np.isfinite(value) else np.inf


def _bordered(solve, Y, fit_intercept, solve_constants=None):
    """B = G^-1 (Y - 1 b^T), b^T = 1^T G^-1 Y / 1^T G^-1 1 (b = 0 without a bias), ``solve``
    applying G^-1, or any positive multiple of it (b is the same; B is then as many times
    G^-1's), to a matrix; ``solve_constants`` (default ``solve``) applies it to 1 in the bias's
    equation (``_constants_on_range``)."""
    if not fit_intercept:
        return solve(Y), np.zeros(Y.shape[1])
    g = (solve if solve_constants is None else solve_constants)(np.ones((Y.shape[0], 1)))[:, 0]
    b = g @ Y / g.sum()
    return solve(Y - b), b


def _constants_on_range(s: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Which eigenvectors the bias's G^-1 1 takes (a 0/1 mask): those of ``s`` > 0 alone where
    the part of 1 off the kernel's numerical range is at most N eps ||1||, the rounding of
    projecting it on a computed range well apart from the rest of the spectrum; else all.
    There 1 lies in the range, and that rounding times 2C would otherwise outweigh G^-1 1's
    true part: N identical points (K ~ 11^T) at C = 1e6 gave an objective 5 000 times the
    optimum's.  (A bar of N eps s_max / s_min, Davis-Kahan's for the computed range, grows to 1
    as the smallest kept eigenvalue nears the truncation's and masked 1's real part off the
    range: outputs 63 off at C = 1e3, the review of stop 61.)"""
    kept = s > 0
    if kept.any() and not kept.all():
        ones = np.ones(V.shape[0])
        off = np.linalg.norm(ones - V[:, kept] @ (V[:, kept].T @ ones))
        if off <= s.size * np.finfo(float).eps * np.sqrt(s.size):
            return kept.astype(float)
    return np.ones(s.size)
