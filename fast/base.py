"""The scikit-learn estimator shared by the box-constrained machines (``msvm.fast.estimators``).

A subclass names its pattern structure (``_kind``), the inhibition constant c of its M matrix,
the linear term and free variables of its dual, and its loss; ``fit`` does the rest: validation,
the kernel column source or explicit linear weights, the solver, warm starts, the bias of
Weston-Watkins (5.1) by an augmented Lagrangian, and the objectives on the canonical scale.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from msvm.core.kernels import kernel_matrix, kernel_times
from msvm.core.objectives import canonical_objective
from msvm.core.validation import (
    check_finite,
    check_fit_scale,
    check_gram,
    check_kernel_psd,
    check_labels,
    check_sample_weight,
    class_weight_vector,
    psd_by_construction,
    resolve_kernel,
)
from msvm.fast.calibration import ProbabilityMixin
from msvm.fast.callable_kernel import fit_with_callable, forget_callable_fit, kernel_rows
from msvm.fast.convergence import FitWarnings
from msvm.fast.engine import (
    DRIFT_SHARE,
    STEP_ROUNDING,
    DecompositionSolver,
    FitLimits,
    LinearData,
    coupling_mass,
    increment_rounding,
    state_outputs,
    state_weights,
)
from msvm.fast.intercept import augmented_lagrangian, canonical_bias, centre_bias
from msvm.fast.kernels import column_slots, column_source, kernel_diagonal, precomputed_source
from msvm.fast.patterns import (
    biased_terms,
    dual_value,
    dual_vectors,
    outputs_of_state,
    separable,
)
from msvm.fast.smo import SingleVariableSolver, mean_kkt
from msvm.fast.ssnal import kkt_violation
from msvm.fast.threads import blas_threads, with_fit_threads


def validate_training_data(estimator, X, y, accept_sparse="csr"):
    """A fit's checks, the same for every estimator (``msvm.core.validation``): the kernel
    parameters, finite X with one label per row, classification targets with at least two
    classes, a square symmetric Gram matrix when the kernel is precomputed, kernel values
    representable in float64, a kernel without significantly negative eigenvalues
    (``check_kernel_psd``: a precomputed one, or poly with coef0 < 0).  Sets ``classes_``,
    ``shape_fit_`` (X's shape, as SVC's) and ``_gamma`` (the numeric gamma); returns X
    (writable: numba reads it as a mutable array; C order, so that a fit does not depend on the
    memory layout) and the class index of each row.
    """
    X, y = validate_data(estimator, X, y, accept_sparse=accept_sparse, dtype=np.float64)
    if sp.issparse(X):
        if estimator.kernel == "precomputed":
            X = X.toarray()  # a Gram matrix is dense
        else:
            X = X.tocsr(copy=True)
            X.sum_duplicates()  # canonical CSR: the numba kernels read one entry per column
    elif not (X.flags.writeable and X.flags.c_contiguous):
        X = np.array(X, order="C")  # (a Fortran-ordered X gave BLAS's kernel blocks other last
        # bits, and Crammer-Singer another path: 304 against 297 steps on the same data)
    estimator.classes_, y_index = check_labels(y)
    forget_callable_fit(estimator)
    if estimator.kernel == "precomputed":
        X = check_gram(X)
    estimator.shape_fit_ = X.shape
    estimator._gamma = resolve_kernel(
        X, estimator.kernel, estimator.gamma, estimator.degree, estimator.coef0
    )
    if not psd_by_construction(estimator.kernel, estimator.coef0):
        with blas_threads(1):  # a Cholesky of <= 2 000 points: 222 ms on the fit's two threads
            # under load, 0.14 ms on one (digits, 199 points; benchmarks/NOTES.md, stop 44)
            params = (estimator._gamma, estimator.degree, estimator.coef0)
            check_kernel_psd(X, estimator.kernel, *params)
    return X, y_index


def validate_prediction_data(estimator, X):
    """X for a fitted estimator's outputs, as ``validate_data`` checks it (finite, the training
    width, feature names), with a precomputed kernel's wrong width named for what it is: one
    column per training point, k(X_new, X_train) (as SVC says it)."""
    check_is_fitted(estimator)
    if getattr(estimator, "kernel", None) == "precomputed" and np.ndim(X) == 2:
        if np.shape(X)[1] != estimator.n_features_in_:
            raise ValueError(
                f"X has {np.shape(X)[1]} columns, but a precomputed kernel for prediction needs "
                f"one per training point, k(X_new, X_train): {estimator.n_features_in_}."
            )
    return validate_data(estimator, X, accept_sparse="csr", dtype=np.float64, reset=False)


def loss_weights(estimator, sample_weight, y_index):
    """s_i = sample_weight_i * class_weight[y_i] for a fit (``core.validation.check_sample_weight``:
    a ValueError for a wrong length, negative, NaN or inf entries, or every weight zero), or None
    when every s_i is 1 (an unweighted fit runs exactly as before).  Stored as ``_weights``;
    the weight of each class as ``class_weight_`` (SVC's attribute: ones without class_weight)."""
    class_weight = class_weight_vector(estimator.class_weight, estimator.classes_, y_index)
    estimator.class_weight_ = (
        np.ones(estimator.classes_.size) if class_weight is None else class_weight
    )
    estimator._weights = check_sample_weight(sample_weight, y_index.size, y_index, class_weight)
    return estimator._weights


def weighted_bounds(hi, weights):
    """The dual's upper bounds C s_i (times the machine's own factor) of pattern i: row i of
    ``hi`` times s_i.  A pattern of weight 0 gets bound 0, every variable fixed at 0 (as a
    leave-one-out fold fixes the left-out pattern's, ``msvm.fast.loo``)."""
    return hi if weights is None else hi * weights[:, None]


# One-vs-all's greedy class-by-class solver (``msvm.fast.separable``) revisits its variables in
# the order of their gains, so it needs their columns cached: below a cache of N / 50 columns it
# recomputes them over and over (one thread, C = 1, make_classification with 10 classes: 7.6 /
# 21.8 / 199 s at 16 000 / 32 000 / 60 000 points against 6.6 / 22.7 / 67 s for the cyclic
# pattern-wise engine, which shares each column among the classes; stop 34).  With the default
# 200 MB this is N above about 36 000.  The rule counts the whole cache whatever n_jobs, so that
# the solver and the result do not depend on it; with the classes on T threads each has 1 / T of
# the cache (on two, below 2 % of the columns from about 25 600 points: not measured).
GREEDY_CACHED_SHARE = 0.02
# ... and where the kernel is narrow -- a row's normalised off-diagonal mass (``engine.
# coupling_mass``) at most NARROW_COUPLING (N - 1) -- it visits nearly every variable, each a
# few times, at O(active) a visit for every class apart, where a pattern step of the cyclic
# engine moves all L classes with one column.  At gamma = 10 scale (coupling 0.0001-0.044) on
# the ten grid sets of at least 200 patterns the cyclic engine's median time over C was
# 0.22-0.83x the greedy solver's (single cells up to 1.1x); at gamma = scale (0.14-0.38) and
# scale / 10 the greedy solver's median was lower on every set but DNA at scale
# (benchmarks/results/ova_selection.md; the threshold was chosen on seven sets before DNA,
# abalone and Landsat were measured).  With fit_intercept the bias's constant joins the kernel,
# which is then hardly ever narrow.  Not below NARROW_MIN_PATTERNS patterns, where the
# greedy solver's passes are short: at gamma = 10 scale the cyclic engine took 1.3-1.7x its time
# on iris (105 patterns), 1.0-1.1x on wine (124), 1.2-1.4x on glass (149), 0.9x on E. coli
# (235), 0.5x on vowel (369) (benchmarks/NOTES.md, stop 49).
NARROW_COUPLING, NARROW_MIN_PATTERNS = 0.1, 200
# The kernel path keeps its outputs U = (K + rho 11^T) state_coef by increments, the linear path
# its weights W, and each increment may round the outputs by up to ``engine.increment_rounding``.
# Where n_steps_ such roundings could reach DRIFT_SHARE tol, they are recomputed from the dual
# variables at the end and the KKT violation checked with them (``_recheck_state``; the engine's
# runs check the same as they go).  Iris times 10 000 as a linear Gram matrix (max |U| ~ 1e12, a
# rounding of ~3e-4 an update, at tol = 1e-3): Lee-Lin-Wahba's outputs had drifted by 58 after
# its 10^7 steps, and it reported a dual objective of 90.7 at an optimum of 67.5; on the features
# times 100 000 its coef_ was 10 % off X^T B and its dual objective -1 765 for 65.4.  On the
# grids' data sets the check runs on 15 of 756 fits and passes on each (stop 41).
REFRESHES = 3  # recomputations of the state at most, each followed by the epochs

_EQUIVALENCE = (
    "sample_weight is equivalent to repeating samples only up to the solver's tol and at a "
    "fixed gamma: gamma='scale' is resolved on X, whose variance repeating rows changes (SVC "
    "fails this check for the same reason); tests/fast/test_weights.py checks the equivalence "
    "at gamma=0.5, tol=1e-8."
)


def weight_equivalence_fails(reason: str) -> dict:
    """scikit-learn's two sample-weight equivalence checks (dense and sparse data), expected to
    fail for ``reason``."""
    return {
        f"check_sample_weight_equivalence_on_{data}_data": reason for data in ("dense", "sparse")
    }


def expected_failed_checks(estimator) -> dict:
    """scikit-learn checks that a fast estimator is expected to fail, with the reason
    (``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)``)."""
    if type(estimator).__name__ == "LeaveOneOutSearchCV":
        reason = (
            "A weighted leave-one-out fold leaves a pattern's whole weight out, while with "
            "repeated rows one copy stays in: the searches differ by design (and gamma='scale' "
            "counts rows).  tests/fast/test_model_selection.py checks the weighted search "
            "against weighted refits."
        )
        return weight_equivalence_fails(reason)
    if type(estimator).__name__ == "MKPMClassifier":
        reason = (
            "The check hands its own splits to cv, which for MKPMClassifier is a fold count; "
            "and the default selection='loo', n_components and gamma='scale' count patterns, "
            "not weight.  tests/fast/test_weights.py checks integer weights = repeated rows at "
            "selection='train', a fixed n_components and gamma=0.5."
        )
        return weight_equivalence_fails(reason)
    linear = estimator.kernel == "linear" or (estimator.kernel == "poly" and estimator.degree == 1)
    closed_form = getattr(estimator, "loss", None) == "squared"  # exact: no tol
    expected = {}
    if not (closed_form and estimator.kernel == "linear"):  # no gamma either
        expected = weight_equivalence_fails(_EQUIVALENCE)
    if linear and not getattr(estimator, "fit_intercept", False):
        expected["check_class_weight_classifiers"] = (
            "The check asks a linear model to predict class 0 on 87 % of make_blobs' points "
            "with class_weight {0: 1000, others: 1e-4}; without a bias the decision regions "
            "are cones at the origin and cannot (InhibitorySVC converged: 54 %; SVC and "
            "LinearSVC fit an intercept); with the bias regularised (kernel <x, y> + 1) it "
            "depends on the fit (MultiPrototypeSVC's annealed q = 2 fit on explicit weights "
            "passes, an expected failure that may pass)."
        )
    return expected


def relative_gap(primal: float, dual: float) -> float:
    """(primal - dual) / |primal|; 0 when both are 0 (a bias that meets every margin of a
    problem left with one class: sample weights zero on the others).  The floor is the smallest
    subnormal, not the smallest normal float: at C = 5e-324 a primal of 3e-320 over a dual of 0
    is a gap of 1, not of 1e-12."""
    return (primal - dual) / max(abs(primal), np.finfo(float).smallest_subnormal)


def support_by_class(mask, y_index):
    """``support_``: the patterns where ``mask`` holds (a non-zero dual variable), grouped by
    class in the order of ``classes_`` and by index within a class, as SVC orders them (so that
    ``np.split(support_, np.cumsum(n_support_)[:-1])`` gives each class's)."""
    support = np.flatnonzero(mask)
    return support[np.argsort(y_index[support], kind="stable")]


def support_counts(support, y_index, n_classes):
    """``n_support_``: how many support patterns (a non-zero dual variable) each class has."""
    return np.bincount(y_index[support], minlength=n_classes).astype(np.int32)


def shaped_decision(scores: np.ndarray, shape: str) -> np.ndarray:
    """Class scores (n, L) laid out as SVC's ``decision_function``: for two classes f_2 - f_1,
    shape (n,), positive for the second class; ``shape="ovr"`` the L scores themselves;
    ``shape="ovo"`` the L (L - 1) / 2 differences f_i - f_j, i < j, in SVC's order of the pairs
    ((0, 1), (0, 2), ..., (0, L - 1), (1, 2), ...), positive where class i wins the pair.  The
    argmax of the scores wins every one of its pairs, so the pairs' votes elect what ``predict``
    returns."""
    n_classes = scores.shape[1]
    if n_classes == 2:
        return scores[:, 1] - scores[:, 0]
    if shape == "ovo":
        first, second = np.triu_indices(n_classes, k=1)
        return scores[:, first] - scores[:, second]
    return scores


class BaseMulticlassSVC(ProbabilityMixin, ClassifierMixin, BaseEstimator):
    """Common parameters and fitting of the multiclass SVMs solved by ``msvm.fast``."""

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"linear", "rbf", "poly", "precomputed"}), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "solver": [StrOptions({"dcd", "smo", "sgd"})],
        "selection": [StrOptions({"auto", "cyclic", "greedy"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
        "shrinking": ["boolean"],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "eta": [Interval(Real, 0, 1, closed="right")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "probability": ["boolean"],
        "n_jobs": [Integral, None],
        "fit_intercept": ["boolean"],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
    }
    _kind: int
    _single_variable_solvers = True  # ISVM Algorithms 1 and 2 apply (box-constrained duals)
    _leave_one_out = True  # one dual variable per pattern and class (msvm.fast.loo)

    def __init__(
        self,
        *,
        C=1.0,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        solver="dcd",
        selection="auto",
        tol=1e-3,
        max_iter=-1,
        shrinking=True,
        cache_size=200,
        random_state=None,
        verbose=0,
        warm_start=False,
        eta=0.5,
        class_weight=None,
        probability=False,
        n_jobs=None,
        fit_intercept=False,
        decision_function_shape="ovr",
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.selection = selection
        self.tol = tol
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.eta = eta
        self.class_weight = class_weight
        self.probability = probability
        self.n_jobs = n_jobs
        self.fit_intercept = fit_intercept
        self.decision_function_shape = decision_function_shape

    # -- what a machine supplies: _kind, _dual_terms(y_index, L) -> (lin, free mask), and
    # _loss(F, y_index); optionally _inhibition(L). ---------------------------------------------
    def _inhibition(self, n_classes: int) -> float:
        """The constant c of M = I - c 11^T (SIGN kind only)."""
        return 0.0

    @property
    def _largest_violation(self) -> bool:
        """Whether the fit stops on the largest KKT violation (the engine; MultiPrototypeSVC,
        which has no ``solver``), not on ISVM's mean KKT distance (solver="smo"/"sgd")."""
        return getattr(self, "solver", "dcd") == "dcd"

    @property
    def _stopping_measure(self) -> str:
        """The name of ``kkt_violation_``'s quantity, for messages."""
        return "max KKT violation" if self._largest_violation else "mean KKT distance"

    # -- fitting -------------------------------------------------------------------------------
    def _initial_alpha(self, hi, C):
        """Zeros, or with ``warm_start`` the previous dual variables scaled by C / C_previous
        (alpha seeding along a C path), clipped to the new bounds ``hi`` (new weights too)."""
        shape = hi.shape
        if self.warm_start and hasattr(self, "dual_coef_") and self.dual_coef_.shape == shape:
            return np.minimum(self.dual_coef_ * (C / self._fitted_C), hi)
        return np.zeros(shape)

    @_fit_context(prefer_skip_nested_validation=True)
    @with_fit_threads
    def fit(self, X, y, sample_weight=None):
        """Fit the machine to training data ``X`` (dense or CSR; Gram matrix if precomputed).

        ``sample_weight`` (n_samples,), default None: the loss term of pattern i is multiplied by
        s_i = sample_weight_i * class_weight[y_i], which in the dual is the per-pattern bound
        C s_i (0 <= alpha_ij <= C s_i; for Crammer-Singer the budget sum_j alpha_ij <= C s_i).
        A callable ``kernel`` fits on kernel(X, X) as a precomputed one (``callable_kernel``).
        """
        if callable(self.kernel):
            return fit_with_callable(self, X, y, sample_weight)
        start = time.perf_counter()
        X, y_index = validate_training_data(self, X, y)
        self._y_index = y_index
        weights = loss_weights(self, sample_weight, y_index)
        L = self.classes_.size
        if self.solver != "dcd" and not self._single_variable_solvers:
            raise ValueError(f"solver={self.solver!r} is not available for {type(self).__name__}.")
        if self.fit_intercept and self.solver != "dcd":
            raise ValueError(f"solver={self.solver!r} has no bias; use fit_intercept=False.")
        C = float(self.C)
        c = self._inhibition(L)
        lin0, free = self._dual_terms(y_index, L)
        hi = weighted_bounds(self._upper_bounds(C, free), weights)
        alpha = self._initial_alpha(hi, C) * free
        reuse_bias = self.fit_intercept and self.warm_start
        previous = getattr(self, "intercept_", np.zeros(0))
        b = previous.copy() if reuse_bias and previous.shape == (L,) else np.zeros(L)
        self._selection = self._resolve_selection(c, X.shape[0])
        linear = self.kernel == "linear" and self.solver == "dcd" and self._selection == "cyclic"
        rho = self._bias_penalty(X, linear, C) if self.fit_intercept else 0.0
        k_max = None  # (the kernel path's largest entry)
        if linear:
            data = LinearData(X)
            check_fit_scale(float(data.sq_norms.max()) + rho, hi, L)
            W, w0 = state_weights(self._kind, c, data.X, rho, alpha, y_index)
        else:
            source = (
                precomputed_source(X)
                if self.kernel == "precomputed"
                else column_source(
                    X, self.kernel, self._gamma, self.degree, self.coef0, self.cache_size
                )
            )
            kdiag = np.empty(X.shape[0])
            kernel_diagonal(source, kdiag)
            if self._selection == "greedy" and self.selection == "auto":
                self._selection = self._narrow_kernel_selection(source, rho, kdiag)
            k_max = float(np.abs(kdiag).max())  # |K_ij| <= the largest diagonal entry
            check_fit_scale(k_max + rho, hi, L)
            U = self._outputs(source, rho, alpha, y_index, c)

        n_iter = n_steps = 0
        unconverged = FitWarnings()  # given once at the end, with the gap

        limits = FitLimits(self.max_iter, y_index.size)  # shared by every run of the fit

        def run(b, refresh=False):
            """One engine run at bias b (``refresh``: after a recheck, what the fit has left of
            its step budgets in one); returns why the fit may take no further run, or None."""
            nonlocal n_iter, n_steps, violation, last_bias
            last_bias = b
            lin = biased_terms(self._kind, lin0, free, b, y_index)
            solver = self._make_solver(c, lin, hi, y_index, rho)
            solver.messages = unconverged.new_run()
            if self.solver == "dcd":  # (a bias's later rounds, a refresh: what the others left)
                limits.start(solver)
            if refresh:
                solver.budget = limits.left()[1]
                solver.more_budgets = False
            if linear:
                iters, violation = solver.solve_linear(data, alpha, W, w0)
            else:
                iters, violation = solver.solve_kernel(source, alpha, U)
            n_iter += iters
            n_steps += solver.n_steps
            return limits.charge(solver, iters) if self.solver == "dcd" else None  # (no bias)

        violation, last_bias = np.inf, b
        b = augmented_lagrangian(
            run, self._kind, alpha, y_index, c, rho, b, self.tol, messages=unconverged.bias
        )
        # The state recomputed from alpha where rounding may have moved it (DRIFT_SHARE), at the
        # bias of the last run (augmented_lagrangian returns the next one); where the run had
        # ended by its own test and the recomputed violation exceeds tol, the epochs go on from
        # there within what is left of max_iter and of MAX_BUDGETS step budgets (the pattern-wise
        # engine).
        lin = biased_terms(self._kind, lin0, free, last_bias, y_index)
        claimed, steps = violation, n_steps
        for refresh in range(REFRESHES + 1):
            state = (data, W, w0) if linear else (source, U)
            state, exact, rounding = self._recheck_state(
                state, k_max, rho, alpha, y_index, c, lin, hi, steps
            )
            if exact is None:
                break
            if linear:
                _, W, w0 = state
            else:
                _, U = state
            violation = exact
            if exact <= self.tol or claimed > self.tol or refresh == REFRESHES:
                break  # (claimed > tol: max_iter or the step budget ended the run)
            epochs_left, steps_left = limits.left()
            if self.solver != "dcd" or epochs_left <= 0 or steps_left <= 0:
                break
            before = n_steps
            run(last_bias, refresh=True)
            claimed, steps = violation, n_steps - before
        if exact is not None and exact <= self.tol:
            unconverged.run.clear()  # the run's own test was off by rounding: converged
        if exact is not None and exact > self.tol:
            if claimed <= self.tol or rounding >= 0.01 * self.tol:
                # (the rounding grows with C times the kernel's largest entry: standardised
                # features with an RBF kernel at C = 1e8 round by ~7e-8, above tol = 1e-8)
                advice = (
                    f"tol is below that rounding: raise tol above {rounding:.1e}, or lower C"
                    if rounding >= self.tol
                    else "Lower C, rescale a kernel of large entries, or raise tol"
                )
                unconverged.other.append(
                    f"The {self._stopping_measure} recomputed from the dual variables is "
                    f"{exact:.2e} > tol={self.tol:g}, where the fit's own test, on the "
                    f"{'weights' if linear else 'outputs'} it kept by increments (each may "
                    f"round them by {rounding:.1e}), found {claimed:.2e}. {advice}."
                )
        self.n_iter_ = int(np.ceil(n_iter - STEP_ROUNDING))  # (a started epoch counts)
        self.n_steps_ = n_steps
        self.kkt_violation_ = violation
        Z, B = dual_vectors(self._kind, alpha, y_index, c)
        if linear:
            W = outputs_of_state(W, self._kind, c, L)  # X^T B
            F = np.asarray(data.X @ W)
        else:
            F = outputs_of_state(U, self._kind, c, L) - rho * B.sum(axis=0)  # K B
        norm_sq = float(np.sum(Z * F))
        if self.fit_intercept:  # the middle of the optimal biases where they are not unique
            b = b + centre_bias(self._kind, c, alpha, hi, lin0, free, F + b, y_index)
            b = canonical_bias(self._kind, b)
        F = F + b
        self.dual_coef_ = alpha
        self._fitted_C = C
        self.intercept_ = b  # zeros without fit_intercept
        self.objective_, self.dual_objective_ = self._objectives(
            norm_sq, F, alpha, lin0, y_index, C
        )
        check_finite("The fit", self.objective_, self.dual_objective_, F)
        self.relative_gap_ = relative_gap(self.objective_, self.dual_objective_)
        self.fit_status_ = unconverged.warn(self.relative_gap_, self.kkt_violation_)
        self.support_ = support_by_class(np.any(alpha > 0, axis=1), y_index)
        self.n_support_ = support_counts(self.support_, y_index, L)
        self._report(start)
        self._sv_coef = B[self.support_]
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = X[self.support_]
        self._linear_weights = self.kernel == "linear"
        if self._linear_weights:
            self.coef_ = (W if linear else np.asarray(X.T @ B)).T
        else:
            self.__dict__.pop("coef_", None)
        self._fit_probability(X, y_index)  # probability=True: msvm.fast.calibration
        return self

    def _recheck_state(self, state, k_max, rho, alpha, y_index, c, lin, hi, steps):
        """``state`` -- (data, W, w0) on the linear path, (source, U) on the kernel path, whose
        largest kernel entry is ``k_max`` -- as the fit's ``steps`` left it, or, where their
        increments could have rounded the outputs by more than DRIFT_SHARE tol (each by
        ``engine.increment_rounding``), the weights or outputs recomputed from ``alpha``, with
        the KKT violation at ``lin`` (else None) and each increment's rounding.  The violation
        is the solver's own stopping quantity: the largest KKT violation, or for ISVM's
        Algorithms 1 and 2 (``solver="smo"``/``"sgd"``) the mean KKT distance they stop on."""
        linear = len(state) == 3
        rounding = increment_rounding(state, k_max, rho, hi, DRIFT_SHARE * self.tol / max(steps, 1))
        if not steps * rounding > DRIFT_SHARE * self.tol:
            return state, None, rounding
        owner = state[0]  # the linear path's data, the kernel path's column source
        if linear:
            W, w0 = state_weights(self._kind, c, owner.X, rho, alpha, y_index)
            state, outputs = (owner, W, w0), np.asarray(owner.X @ W) + w0
        else:
            outputs = self._outputs(owner, rho, alpha, y_index, c)
            state = (owner, outputs)
        if not self._largest_violation:  # ISVM's Algorithms 1 and 2: their mean KKT distance
            return (
                state,
                mean_kkt(outputs, alpha, hi, lin, y_index, self._kind, c, self.tol),
                rounding,
            )
        F = outputs_of_state(outputs, self._kind, c, lin.shape[1])
        return state, float(kkt_violation(self._kind, F, alpha, lin, hi, y_index)), rounding

    def _report(self, start: float) -> None:
        """verbose >= 1: one line for the fit (engine.EPOCH_LINES and up: one per epoch too)."""
        if not self.verbose:
            return
        steps = f", {self.n_steps_} pattern steps" if hasattr(self, "n_steps_") else ""
        gap = getattr(self, "relative_gap_", None)
        print(
            f"{type(self).__name__}: {self._y_index.size} patterns, {self.classes_.size} classes, "
            f"{self.n_iter_} epochs{steps}, {self._stopping_measure} {self.kkt_violation_:.2e} "
            f"(tol {self.tol:g}), primal {self.objective_:.6g}"
            + ("" if gap is None else f", relative gap {gap:.1e}")
            + f", {time.perf_counter() - start:.2f} s"
        )

    def _resolve_selection(self, c, n_samples: int) -> str:
        """``selection="auto"``: greedy where the dual separates by class (one-vs-all, c = 0),
        the kernel is not linear (the explicit-weights path is cyclic) and the column cache holds
        at least GREEDY_CACHED_SHARE of the columns, unless the kernel is narrow (``fit``,
        ``_narrow_kernel_selection``); cyclic otherwise."""
        if self.selection != "auto":
            return self.selection
        greedy = separable(self._kind, c) and self.kernel != "linear"
        if greedy and self.kernel != "precomputed":
            greedy = column_slots(n_samples, self.cache_size) >= GREEDY_CACHED_SHARE * n_samples
        return "greedy" if greedy else "cyclic"

    def _narrow_kernel_selection(self, source, rho, kdiag) -> str:
        """``selection="auto"`` on the kernel: cyclic where it is narrow (NARROW_COUPLING) and
        there are at least NARROW_MIN_PATTERNS patterns."""
        N = kdiag.size
        narrow = N >= NARROW_MIN_PATTERNS and (
            coupling_mass(source, rho, kdiag) <= NARROW_COUPLING * (N - 1)
        )
        return "cyclic" if narrow else "greedy"

    def _upper_bounds(self, C, free):
        return C * free

    def _objectives(self, norm_sq, F, alpha, lin0, y_index, C):
        """Canonical primal 1/2 ||w||^2 + C loss(F) and dual sum lin alpha - 1/2 ||w||^2."""
        primal = canonical_objective(norm_sq, self._loss(F, y_index, self._weights), C)
        return primal, dual_value(lin0, alpha, norm_sq)

    def _bias_penalty(self, X, linear, C) -> float:
        """rho for the bias's augmented Lagrangian, at least 1 / (C N).

        Each round is a proximal step on the bias, b+ = argmin_b P(b) + ||b - b_prev||^2 / (2 rho),
        and P's slope in b is at most C N: with rho = 1 / (C N) a round can move the bias by O(1)
        at any C (with the mean kernel diagonal alone it moved 1e-3 per round at C = 1e-4), and
        the stop |rho sum_i B_i| <= tol asks |dP/db| <= tol C N, a share of the patterns.
        """
        if self.kernel == "precomputed":  # (the mean of K_ii / max|K_ii|: no overflow at 1e307)
            d = np.diag(X)
            top = float(np.abs(d).max(initial=0.0))
            diag = float(np.mean(d / top)) * top if top > 0.0 else 0.0
        elif linear or self.kernel == "linear":
            sq = X.multiply(X).sum(axis=1) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
            diag = float(np.mean(sq))
        else:
            one = kernel_matrix(X[:1], X[:1], self.kernel, self._gamma, self.degree, self.coef0)
            diag = float(one[0, 0])
        return max(diag, 1.0 / (C * X.shape[0]))

    def _outputs(self, source, rho, alpha, y_index, c):
        """The engine's outputs (K + rho 11^T) [Z, Z 1] (``engine.state_outputs``)."""
        return state_outputs(self._kind, c, source, rho, alpha, y_index)

    def _make_solver(self, c, lin, hi, y_index, rho):
        common = dict(tol=self.tol, max_iter=self.max_iter, random_state=self.random_state)
        if self.solver == "dcd":
            return DecompositionSolver(
                self._kind,
                c,
                lin,
                hi,
                y_index,
                shrinking=self.shrinking,
                selection=self._selection,
                offset=rho,
                verbose=self.verbose,
                cache_size=self.cache_size,
                **common,
            )
        eta = 1.0 if self.solver == "smo" else self.eta
        return SingleVariableSolver(self._kind, c, lin, hi, y_index, eta=eta, **common)

    # -- prediction ----------------------------------------------------------------------------
    def _scores(self, X) -> np.ndarray:
        if callable(self.kernel):
            return self._precomputed_model._scores(kernel_rows(self, X))
        X = validate_prediction_data(self, X)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: check_finite says so
            if getattr(self, "_linear_weights", False):  # explicit weights: no kernel
                outputs = np.asarray(X @ self.coef_.T)
            elif self.kernel == "precomputed":
                K = X[:, self.support_]
                outputs = np.asarray((K.toarray() if sp.issparse(K) else K) @ self._sv_coef)
            else:  # k(X, support vectors) a block of rows at a time
                params = (self.kernel, self._gamma, self.degree, self.coef0)
                outputs = kernel_times(X, self.support_vectors_, self._sv_coef, *params)
            scores = outputs + self.intercept_
        check_finite("The decision values", scores)
        return scores

    def decision_function(self, X):
        """Class scores f_j(x), shape (n_samples, n_classes), or with
        ``decision_function_shape="ovo"`` their pairwise differences (``shaped_decision``); for
        two classes f_2 - f_1, shape (n_samples,)."""
        return shaped_decision(self._scores(X), self.decision_function_shape)

    def predict(self, X):
        """The class with the largest score."""
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
