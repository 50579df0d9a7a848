"""The multi-prototype SVM of Aiolli & Sperduti (2005), MProt, on the decomposition engine.

q prototypes per class (prototype r belongs to class r // q).  With the assignment of every
pattern to one of its positive prototypes fixed, MProt (8) is the convex problem whose dual is
(11): the Crammer-Singer dual over prototypes, solved here by the engine's budget-constrained
pattern step (``patterns.CS``).  Around it, the assignment is improved as in MProt §6:

* ``assignment="greedy"`` (§6.1): each pattern moves to the positive prototype of least slack
  xi_i^r = [theta_i + 1 - f_r(x_i)]_+, theta_i = max over the other classes' prototypes; the dual
  variables of a pattern whose assignment changed are reset to 0 ("restore KKT conditions"), and
  the static problem is re-optimised from there.  The optimal primal value never increases.
* ``assignment="annealed"`` (§6.2, Figure 11): the new prototype is drawn with probability (17),
  p_i(s) = exp(-C (xi_i^s - xi_i^0) / T) / Z_i, at temperature T(t) = T0 (1 - tau)^t.  The primal
  may rise while T is high; the model kept is the one of least primal value found.

As in Figure 11, each static optimisation (engine epochs, warm-started) runs only until the primal
falls below E(t), the value of the new assignment at the previous dual variables, or for at most
``partial_max_iter`` epochs; after the last assignment step the static problem is solved to
``tol``.  ``primal_path_`` holds E(t) for every step, then the final optimum: non-increasing for
the greedy update (tested; a greedy run ends at a static step that ended without descent, at
``partial_max_iter``, ``max_iter`` or the step budget), and free to rise with the temperature
when annealed.  The model kept is the one of least primal value.

With a linear kernel the static problem is solved on explicit weights (``WeightsState``: the
engine's explicit-weights path, the partial steps' test in numba with the epochs), otherwise on
kernel columns (``KernelState``).
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from numbers import Integral, Real

import numba as nb
import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Options, StrOptions

from msvm.core.objectives import canonical_objective
from msvm.core.validation import check_finite, check_fit_scale
from msvm.fast.base import (
    BaseMulticlassSVC,
    dual_value,
    loss_weights,
    relative_gap,
    support_by_class,
    support_counts,
    validate_training_data,
)
from msvm.fast.callable_kernel import fit_with_callable
from msvm.fast.convergence import FitWarnings, convergence_warning
from msvm.fast.engine import (
    DecompositionSolver,
    FitLimits,
    LinearData,
    epoch_limit,
    exhausted,
    linear_epochs,
    step_budget,
    weights_of_state,
)
from msvm.fast.intercept import augmented_lagrangian, canonical_bias, centre_bias
from msvm.fast.kernels import column_source, kernel_diagonal, precomputed_source
from msvm.fast.mprot_steps import ALL_PAIRS, BASIC, OPT_KKT, optimize_on_pattern, pattern_values
from msvm.fast.patterns import CS, biased_terms, dual_vectors
from msvm.fast.threads import blas_threads, with_fit_threads

OPTIMIZERS = {"basic": BASIC, "all_pairs": ALL_PAIRS, "opt_kkt": OPT_KKT}
CRITERIA = {"kkt": 0, "amg": 1, "bmg": 2}
MAX_FRACTION = 0.5  # mu of the MAX threshold, theta_V = mu max_p V_p (MProt §5.3)


def positive_slacks(F, y_index, proto_class):
    """xi_i^r = [theta_i + 1 - f_r(x_i)]_+ for every prototype (inf for the other classes')."""
    negative = proto_class[None, :] != y_index[:, None]
    theta = np.where(negative, F, -np.inf).max(axis=1)
    return np.where(negative, np.inf, np.maximum(0.0, theta[:, None] + 1.0 - F))


def prototype_sums(alpha, assigned):
    """1^T Z, the sum of the patterns' Z_i = e_pi(i) sum_r alpha_i^r - alpha_i (MProt 11's
    Crammer-Singer structure over prototypes), without forming Z."""
    P = alpha.shape[1]
    return np.bincount(assigned, weights=alpha.sum(axis=1), minlength=P) - alpha.sum(axis=0)


@nb.njit(cache=True)
def prototype_slacks(F, bias, target, proto_class, y_index, out):
    """out_i = max(0, 1 + max_{r of another class} f_r(x_i) - f_target_i(x_i)), f = F_i + bias:
    pattern i's slack in MProt (8) at the assignment ``target`` (``multi_prototype_loss``'s terms,
    in one pass)."""
    for i in range(F.shape[0]):
        theta = -np.inf
        for r in range(F.shape[1]):
            if proto_class[r] != y_index[i]:
                theta = max(theta, F[i, r] + bias[r])
        out[i] = max(0.0, 1.0 + theta - (F[i, target[i]] + bias[target[i]]))


class PartialStepEnd:
    """The stop test of a partial static step, called after every epoch (sweep): the primal at
    the current point below the energy E(t) of the assignment step before (MProt Figure 11), or
    ``limit`` calls without it.  On explicit weights the same test runs in numba with the epochs
    (``WeightsStepEnd``)."""

    def __init__(self, primal, energy, limit):
        self.primal, self.energy, self.limit, self.calls = primal, energy, limit, 0

    def __call__(self):
        self.calls += 1
        return self.calls >= self.limit or self.primal() < self.energy


class WeightsStepEnd:
    """``PartialStepEnd`` on explicit weights, tested in numba after every epoch: the engine runs
    ``linear_epochs`` (``weights_partial_epochs``) instead of its own runner, and a call says
    whether the test ended the run.  Tested from Python, every epoch was a round trip (the
    engine's loop, the test's calls, two dispatches): a third of a raw iris fit, which runs
    15 000-19 000 epochs (NOTES, stop 28).  ``model`` = (columns, constant, sums_scale, rho, b,
    assignment, proto_class, y_index, scales, C, slacks): ``weights_primal``'s terms at the
    step's bias b + rho 1^T Z (``MultiPrototypeSVC.fit``'s ``primal_in_step``)."""

    def __init__(self, model, energy, limit):
        self.model, self.energy, self.limit = model, energy, limit
        self.record = np.zeros(3)  # tests so far, the last primal tested, 1 once the test ended

    @property
    def calls(self):
        return int(self.record[0])

    @property
    def last(self):
        return float(self.record[1])

    def __call__(self):
        return bool(self.record[2])

    def linear_epochs(self, *run):
        """``engine.linear_epochs`` with this test after every epoch."""
        return weights_partial_epochs(*run, (self.model, self.energy, self.limit, self.record))


@nb.njit(cache=True)
def weights_primal_terms(columns, Wt, w0, constant, sums_scale, bias, target, proto_class,
                         y_index, out):  # fmt: skip
    """``prototype_slacks`` on explicit weights, F = X W + constant 1 (1^T Z) with 1^T Z =
    sums_scale w0, and returns ||M||^2 = ||W||^2 + constant ||1^T Z||^2 (``WeightsState``), in
    one pass over the columns of X (``WeightsState.columns``: X^T, or X in CSC) without an
    N x P product.  Prototype by prototype, so that a dense column's loop vectorises over the
    rows: on iris 1.0 us against 3.5 us row by row, with every output summed over the features
    in the same order as row by row (the same values to the last bit)."""
    dense, data, indices, indptr = columns
    N, P = out.size, Wt.shape[0]
    share = constant * sums_scale
    F, theta, own = np.empty(N), np.full(N, -np.inf), np.empty(N)
    for r in range(P):
        start = share * w0[r]
        for i in range(N):
            F[i] = start
        if dense.shape[0] > 0:
            for f in range(dense.shape[0]):
                w = Wt[r, f]
                for i in range(N):
                    F[i] += dense[f, i] * w
        else:
            for f in range(indptr.size - 1):
                w = Wt[r, f]
                for q in range(indptr[f], indptr[f + 1]):
                    F[indices[q]] += data[q] * w
        for i in range(N):
            value = F[i] + bias[r]
            if proto_class[r] != y_index[i]:
                theta[i] = max(theta[i], value)
            if target[i] == r:
                own[i] = value
    for i in range(N):
        out[i] = max(0.0, 1.0 + theta[i] - own[i])
    norm_sq = 0.0
    for r in range(P):
        for f in range(Wt.shape[1]):
            norm_sq += Wt[r, f] * Wt[r, f]
    sums_sq = 0.0  # ||1^T Z||^2, 1^T Z = sums_scale w0 (scaled first: w0^2 may overflow)
    for r in range(P):
        sums_sq += (sums_scale * w0[r]) ** 2
    return norm_sq + constant * sums_sq


@nb.njit(cache=True)
def weights_primal(columns, Wt, w0, constant, sums_scale, bias, target, proto_class, y_index,
                   scales, C, slacks):  # fmt: skip
    """MProt (8)'s primal 1/2 ||M||^2 + C sum_i s_i xi_i on explicit weights
    (``weights_primal_terms``; the loss summed in order, s_i = 1 without weights): every primal
    of the weights path, E(t) as the partial steps' test, is this one sum."""
    terms = (bias, target, proto_class, y_index, slacks)
    norm_sq = weights_primal_terms(columns, Wt, w0, constant, sums_scale, *terms)
    loss = 0.0
    for i in range(slacks.size):
        loss += scales[i] * slacks[i]
    return 0.5 * norm_sq + C * loss  # core.objectives.canonical_objective


@nb.njit(cache=True)
def weights_partial_epochs(n_epochs, seed, active, n_active, schedule, tol, floor, at, rows,
                           offset, Wt, w0, dual, kind, c, shift, test):  # fmt: skip
    """``engine.linear_epochs`` one epoch at a time, each followed by the test of a partial
    static step (``WeightsStepEnd``): the primal at the step's bias b + rho 1^T Z below E(t),
    or the test's epoch limit; 1^T Z = sums_scale w0.  Returns as ``linear_epochs``, with
    record = (tests so far, the last primal tested, 1 if the test ended the run)."""
    model, energy, limit, record = test
    columns, constant, sums_scale, rho, b, target, proto_class, y_index, scales, C, slacks = model
    bias = b.copy()
    steps = 0
    for e in range(n_epochs):
        # (np.int64: numba compiles a call with a literal 1 as another specialisation, ~7 s)
        _, converged, n_active, taken = linear_epochs(np.int64(1), seed, active, n_active,
                                                      schedule, tol, floor, at, rows, offset, Wt,
                                                      w0, dual, kind, c, shift)  # fmt: skip
        seed, steps = -1, steps + taken
        if converged:
            return e + 1, True, n_active, steps
        record[0] += 1
        if record[0] >= limit:
            record[2] = 1.0
            return e + 1, False, n_active, steps
        if rho:
            for r in range(bias.size):
                bias[r] = b[r] + rho * (sums_scale * w0[r])
        terms = (bias, target, proto_class, y_index, scales, C, slacks)
        record[1] = weights_primal(columns, Wt, w0, constant, sums_scale, *terms)
        if record[1] < energy:
            record[2] = 1.0
            return e + 1, False, n_active, steps
        if exhausted(schedule):
            return e + 1, False, n_active, steps
    return n_epochs, False, n_active, steps


class KernelState:
    """The static problem on kernel columns: the engine's outputs U = (K + rho 11^T) Z."""

    def __init__(self, source, alpha, rho, outputs_of):
        self.source, self.alpha, self.offset = source, alpha, rho
        self._outputs_of = outputs_of  # BaseMulticlassSVC._outputs
        self.U = np.zeros(alpha.shape, order="F")

    def kernel_max(self):
        """The largest kernel value in size: the largest |K_ii| plus the offset."""
        kdiag = np.empty(self.alpha.shape[0])
        kernel_diagonal(self.source, kdiag)
        return float(np.abs(kdiag).max()) + self.offset

    def outputs(self, assigned):
        """F = K B (B = Z for MProt's Crammer-Singer structure): U less rho 1 (1^T Z)."""
        if not self.offset:
            return self.U
        return self.U - self.offset * prototype_sums(self.alpha, assigned)

    def primal(self, assigned, bias, target, proto_class, y_index, weights, C, slacks):
        """MProt (8)'s primal 1/2 ||M||^2 + C sum_i s_i xi_i, ||M||^2 = <Z, K Z> (F = K Z), the
        slacks at ``target`` left in ``slacks``."""
        F = self.outputs(assigned)
        prototype_slacks(F, bias, target, proto_class, y_index, slacks)
        Z, _ = dual_vectors(CS, self.alpha, assigned, 0.0)
        loss = slacks.sum() if weights is None else weights @ slacks
        return canonical_objective(float(np.sum(Z * F)), float(loss), C)

    def reset(self, assigned):
        """The outputs recomputed after ``alpha`` changed outside the engine."""
        self.U[:] = self._outputs_of(self.source, self.offset, self.alpha, assigned, 0.0)

    def solve(self, solver, restart=False):
        """Run the engine from the current point (``restart`` is for the weights' path)."""
        return solver.solve_kernel(self.source, self.alpha, self.U)


class WeightsState:
    """The static problem on explicit weights for a kernel <x, y> + constant: W = X^T Z and
    w0 = (constant + rho) 1^T Z, outputs X W + w0 (the engine's explicit-weights path; a pattern
    step costs O(d L q) instead of a kernel column's O(N L q)).  Its products are small: the fit
    runs them on one BLAS thread (``MultiPrototypeSVC.fit``)."""

    def __init__(self, X, constant, alpha, rho):
        if abs(constant) < np.finfo(np.float64).tiny:  # subnormal (coef0 ~ 1e-310): no constant;
            constant = 0.0  # 1 / offset would overflow, and its kernel entries are below 2e-308
        self.data, self.alpha, self.constant = LinearData(X), alpha, constant
        self.rho, self.offset = rho, constant + rho
        self.W = np.zeros((X.shape[1], alpha.shape[1]), order="F")
        self.w0 = np.zeros(alpha.shape[1])
        # 1^T Z = w0 / offset, which the engine keeps (w0 = 0 where offset = 0)
        self._sums_scale = 1.0 / self.offset if self.offset else 0.0
        self._ones = np.ones(alpha.shape[0])  # the loss weights s_i of an unweighted fit
        # X by columns for the primal (weights_primal_terms): X^T, or CSC (dense (0, N))
        if sp.issparse(self.data.X):
            by_column = self.data.X.tocsc()
            index = (by_column.indices.astype(np.int64), by_column.indptr.astype(np.int64))
            self.columns = (np.empty((0, alpha.shape[0])), by_column.data, *index)
        else:
            dense = np.ascontiguousarray(self.data.X.T)
            self.columns = (dense, np.empty(0), np.empty(0, np.int64), np.zeros(1, np.int64))

    def kernel_max(self):
        """The largest kernel value: the largest squared norm plus the offset."""
        return float(self.data.sq_norms.max()) + self.offset

    def outputs(self, assigned):
        """F = K Z = X W + constant 1 (1^T Z), 1^T Z read from w0."""
        return np.asarray(self.data.X @ self.W) + (self.constant * self._sums_scale) * self.w0

    def primal(self, assigned, bias, target, proto_class, y_index, weights, C, slacks):
        """As ``KernelState.primal``, ||M||^2 = ||W||^2 + constant ||1^T Z||^2, in numba
        (``weights_primal``)."""
        model = (self.columns, self.W.T, self.w0, self.constant, self._sums_scale)
        scales = self._ones if weights is None else weights
        return float(weights_primal(*model, bias, target, proto_class, y_index, scales, C, slacks))

    def step_end(self, energy, limit, bias, assigned, proto_class, y_index, weights, C, slacks):
        """The test of a partial step at the step's bias (``WeightsStepEnd``)."""
        scales = self._ones if weights is None else weights
        model = (self.columns, self.constant, self._sums_scale, self.rho, bias, assigned)
        return WeightsStepEnd((*model, proto_class, y_index, scales, C, slacks), energy, limit)

    def reset(self, assigned):
        Z, _ = dual_vectors(CS, self.alpha, assigned, 0.0)
        self.W[:] = weights_of_state(self.data.X, Z)
        self.w0[:] = self.offset * Z.sum(axis=0)

    def solve(self, solver, restart=False):
        """Run the engine; with ``restart``, from alpha = 0 where the proximal method then
        starts (``proximal_start``): for the final static step it is faster than the epochs
        from the annealing's last point (LETTER 5 000 rows, q = 3, C = 10: 25 s against 202 s).
        """
        if restart and solver.proximal_start(self.data):
            self.alpha[:], self.W[:], self.w0[:] = 0.0, 0.0, 0.0
        return solver.solve_linear(self.data, self.alpha, self.W, self.w0)


class MultiPrototypeSVC(BaseMulticlassSVC):
    """Multi-prototype multiclass SVM (MProt 2, 8, 11, §6), kernel or linear.

    Parameters
    ----------
    n_prototypes : int, default=3
        q, prototypes per class; q = 1 is the Crammer-Singer machine.
    assignment : {"annealed", "greedy"}, default="annealed"
    n_assignment_steps : int, default=150
        t_max, the number of assignment updates (each followed by a static optimisation).
    T0, tau : float, default=10.0 and 0.05
        The annealing schedule T(t) = T0 (1 - tau)^t (MProt §8).
    partial_max_iter : int, default=2000
        The epochs (sweeps of MProt's optimisers) a partial static step of the annealing may
        take: it ends when the primal falls below E(t) (MProt Figure 11), converges, or runs
        this many epochs, and the assignment step follows from wherever it ended (valid from
        any alpha; no ConvergenceWarning) -- but for the greedy update, whose path must not rise:
        it ends at a step without descent.  -1 runs each until the test is met or it converges
        (Figure 11 as printed; the engine's step budgets still apply).  Steps on scaled data take
        tens to hundreds of epochs and never reach 2000; on badly scaled data they crawl (one
        step on raw wine: 5e5 epochs), and the limit trades some of the annealing's descent
        for time: raw wine 5.3 s against 67 s (primal 2.16 against 2.05, the same test error),
        raw LETTER 2 000 rows 45 s against 238 s (primal 1 030 against 791, test error 25.0
        against 24.2 %; benchmarks/mprot_partial.py).
    optimizer : {"engine", "basic", "all_pairs", "opt_kkt"}, default="engine"
        The static-step solver: the decomposition engine (exact budget-constrained pattern step),
        or MProt's BasicOptimizeOnPattern, AllPairsOptimizeOnPattern, OptKKTOptimizeOnPattern.
    pattern_selection : {"kkt", "amg", "bmg"}, default="bmg"
    threshold : {"mean", "max", "log"}, default="mean"
        Pattern selection for MProt's optimisers (§5.3): V_p is the KKT violation, the largest
        single-pair gain (AMG) or the gain of solving the pattern (BMG); patterns with
        V_p > theta_V are optimised, theta_V the MEAN of V_p, 0.5 max_p V_p (MAX), or the first
        pass's largest V_p divided by log(t + e - 1) (our reading of logarithmic cooling).
    kernel, gamma, degree, coef0 : default "poly", 1.0, 1, 1.0
        The paper's linear kernel <x, y> + 1.  A linear kernel (``"linear"``, or ``"poly"`` of
        degree 1 with coef0 >= 0) is solved on explicit weights, M = sqrt(gamma) X^T Z (a pattern
        step costs O(d L q), not a kernel column's O(N L q)); any other on kernel columns.
    C, tol, max_iter, shrinking, cache_size, random_state, verbose, class_weight : as for
        CrammerSingerSVC (``max_iter`` counts the epochs of each static optimisation, its
        bias's rounds together, or the
        sweeps of MProt's optimisers; -1, the default, runs each until converged, in the
        engine's step budgets (libsvm's one for MProt's optimisers); the annealing's partial
        steps end earlier, see
        ``partial_max_iter``, and only the final step warns if it ends above tol);
        ``random_state`` seeds the initial assignment, the annealing
        draws and the visiting order.  With ``fit``'s ``sample_weight``, pattern i's slack xi_i
        in (8) is weighted by s_i = sample_weight_i * class_weight[y_i], so its budget in (11)
        is C s_i and its annealing energy in (17) C s_i xi_i; only with ``optimizer="engine"``
        (MProt's own optimisers are written for one C, and a ValueError says so).
    probability : as for CrammerSingerSVC (the class scores calibrated are the best prototype's,
        MProt 2).
    decision_function_shape : as for CrammerSingerSVC, on the class scores (the best
        prototype's).
    fit_intercept : bool, default=False
        Give every prototype a bias that is not penalised, f_r(x) = <M_r, x> + b_r (MProt has
        none: its kernel <x, y> + 1 carries a penalised one), found as CrammerSingerSVC's by an
        augmented Lagrangian in every static step (dual condition sum_i y_i^r alpha_i^r = 0 for
        each prototype, ``msvm.reference.mprot_static``); the annealing energy and the
        assignments use the biased outputs.  Only with ``optimizer="engine"``.

    Attributes
    ----------
    prototype_class_ : (L q,) class of each prototype; assignment_ : (n_samples,) prototype of
    each pattern; primal_path_ : primal value after each assignment step; objective_ : the
    last (the static primal (8) at the final assignment).
    dual_objective_ : the static dual (11) at the final assignment, a lower bound of the static
    primal's optimum there (without ``fit_intercept``: with a bias, as the other machines', the
    bias condition holds to the augmented Lagrangian's tolerance); relative_gap_ :
    (objective_ - dual_objective_) / |objective_|.
    dual_coef_ : (n_samples, L q) dual variables alpha_i^r of the negative prototypes.
    support_, n_support_ : patterns with a non-zero dual variable, and their count per class.
    No ``coef_``, whatever the kernel: a class's score is the largest of its prototypes', not a
    linear function of x.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from msvm.fast import MultiPrototypeSVC
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = MultiPrototypeSVC(n_prototypes=2, random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    _kind = CS
    _single_variable_solvers = False
    _leave_one_out = False  # n_prototypes outputs per class
    _parameter_constraints = {
        **BaseMulticlassSVC._parameter_constraints,
        "n_prototypes": [Interval(Integral, 1, None, closed="left")],
        "assignment": [StrOptions({"annealed", "greedy"})],
        "n_assignment_steps": [Interval(Integral, 0, None, closed="left")],
        "partial_max_iter": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
        "T0": [Interval(Real, 0, None, closed="neither")],
        "tau": [Interval(Real, 0, 1, closed="neither")],
        "optimizer": [StrOptions({"engine", "basic", "all_pairs", "opt_kkt"})],
        "pattern_selection": [StrOptions({"kkt", "amg", "bmg"})],
        "threshold": [StrOptions({"mean", "max", "log"})],
    }

    def __init__(
        self,
        *,
        n_prototypes=3,
        assignment="annealed",
        n_assignment_steps=150,
        T0=10.0,
        tau=0.05,
        partial_max_iter=2000,
        optimizer="engine",
        pattern_selection="bmg",
        threshold="mean",
        C=1.0,
        kernel="poly",
        gamma=1.0,
        degree=1,
        coef0=1.0,
        tol=1e-3,
        max_iter=-1,
        shrinking=True,
        cache_size=200,
        random_state=None,
        verbose=0,
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
        self.tol = tol
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose
        self.n_prototypes = n_prototypes
        self.assignment = assignment
        self.n_assignment_steps = n_assignment_steps
        self.partial_max_iter = partial_max_iter
        self.T0 = T0
        self.tau = tau
        self.optimizer = optimizer
        self.pattern_selection = pattern_selection
        self.threshold = threshold
        self.class_weight = class_weight
        self.probability = probability
        self.n_jobs = n_jobs
        self.fit_intercept = fit_intercept
        self.decision_function_shape = decision_function_shape

    @_fit_context(prefer_skip_nested_validation=True)
    @with_fit_threads
    def fit(self, X, y, sample_weight=None):
        """Fit prototypes and assignments to ``X`` (dense or CSR; Gram matrix if precomputed);
        ``sample_weight`` weighs each pattern's slack (class docstring)."""
        if callable(self.kernel):
            return fit_with_callable(self, X, y, sample_weight)
        start = time.perf_counter()
        X, y_index = validate_training_data(self, X, y)
        weights = loss_weights(self, sample_weight, y_index)
        if weights is not None and self.optimizer != "engine":
            raise ValueError(
                f"sample_weight and class_weight need optimizer='engine'; MProt's "
                f"{self.optimizer!r} optimiser is written for one C shared by every pattern."
            )
        if self.fit_intercept and self.optimizer != "engine":
            raise ValueError(
                f"fit_intercept needs optimizer='engine'; MProt's {self.optimizer!r} optimiser "
                "has no bias."
            )
        L, q, C = self.classes_.size, int(self.n_prototypes), float(self.C)
        self._rho = self._bias_penalty(X, False, C) if self.fit_intercept else 0.0
        self._bias = np.zeros(L * q)
        self._bounds = C * (np.ones(y_index.size) if weights is None else weights)
        rng = check_random_state(self.random_state)
        self.n_iter_ = 0
        proto_class = np.repeat(np.arange(L), q)
        negative = (proto_class[None, :] != y_index[:, None]).astype(float)
        assigned = y_index * q + rng.randint(q, size=y_index.size)  # pi(1), drawn at random
        alpha = np.zeros((y_index.size, L * q))
        static = self._static_problem(X, alpha)
        check_fit_scale(static.kernel_max(), self._bounds[:, None] * negative, L * q)
        self._weights_path = isinstance(static, WeightsState)

        slacks = np.empty(y_index.size)

        def primal(loss_assignment=None, bias=None):
            """1/2 ||M||^2 + C sum_i xi_i at the current model M, the slacks taken at the
            current assignment or at ``loss_assignment`` (E(t+1) = P_pi(t+1)(alpha)), and at
            the current bias or at ``bias``."""
            target = assigned if loss_assignment is None else loss_assignment
            bias = self._bias if bias is None else bias
            terms = (bias, target, proto_class, y_index, weights, C, slacks)
            return static.primal(assigned, *terms)

        def primal_in_step():
            """The primal during a partial step, at the bias the step ends with: with
            ``fit_intercept`` the run solves for the bias b + rho 1^T Z, the multiplier update
            that ``augmented_lagrangian`` applies after its one run (measured at b the test was
            never met: standardised iris at the defaults 2.3 s, at the step's bias 0.2 s)."""
            if not self._rho:
                return primal()
            return primal(bias=self._bias + self._rho * prototype_sums(alpha, assigned))

        # the weights path's products are small (the outputs of each assignment step, the
        # weights' rebuild): one BLAS thread for the whole annealing, set once
        with blas_threads(1) if self._weights_path else nullcontext():
            energy = primal()  # E(1) = P_pi(1)(0)
            partial = epoch_limit(self.partial_max_iter)
            path, best = [energy], None
            for t in range(int(self.n_assignment_steps)):
                if self._weights_path:  # the same test, in numba with the epochs
                    terms = (self._bias, assigned, proto_class, y_index, weights, C, slacks)
                    stop = static.step_end(energy, partial, *terms)
                else:
                    stop = PartialStepEnd(primal_in_step, energy, partial)
                self._static_step(static, alpha, assigned, negative, C, rng, stop=stop)
                if self.assignment == "greedy" and primal() >= energy:
                    break  # no descent (a limit, max_iter, the budget): an update could raise it
                new = self._new_assignment(
                    static.outputs(assigned) + self._bias, y_index, proto_class, assigned, C, t, rng
                )
                changed = new != assigned
                if not changed.any() and self.assignment == "greedy":
                    break
                energy = primal(new)  # E(t+1) = P_pi(t+1)(alpha): same model, new assignment
                assigned = new
                path.append(energy)
                if best is None or energy < best[0]:
                    best = (energy, assigned.copy(), self._bias.copy())
                alpha[changed] = 0.0  # restore the admissibility conditions (MProt §6.1)
                static.reset(assigned)
            if best is not None and best[0] < energy - 1e-12:  # annealing wandered off: go back
                assigned = best[1]
                alpha[:] = 0.0
                static.reset(assigned)
                self._bias[:] = best[2]
            unconverged = FitWarnings()  # the final step's, given once with the gap
            self._static_step(static, alpha, assigned, negative, C, rng, warned=unconverged)
            if self.fit_intercept:  # the middle of the optimal biases where they are not unique
                hi = self._bounds[:, None] * negative
                F = static.outputs(assigned) + self._bias
                self._bias += centre_bias(CS, 0.0, alpha, hi, negative, negative, F, assigned)
                self._bias = canonical_bias(CS, self._bias)
            path.append(primal())
        self.primal_path_ = np.array(path)
        F = static.outputs(assigned)
        self._finish(X, alpha, assigned, proto_class, y_index, negative, F, path[-1])
        self.fit_status_ = unconverged.warn(self.relative_gap_, self.kkt_violation_)
        self._y_index = y_index
        self._report(start)
        self._fit_probability(X, y_index)
        return self

    def _static_problem(self, X, alpha):
        """The static problem's outputs: explicit weights for a linear kernel (``linear``, or
        ``poly`` of degree 1 with coef0 >= 0: gamma <x, y> + coef0 is <sqrt(gamma) x, sqrt(gamma)
        y> plus a constant, the engine's offset) with the engine's optimiser, else kernel columns.
        """
        linear = self.kernel == "linear" or (
            self.kernel == "poly" and self.degree == 1 and self.coef0 >= 0.0
        )
        if linear and self.optimizer == "engine":
            scale, constant = (1.0, 0.0) if self.kernel == "linear" else (self._gamma, self.coef0)
            X = X * np.sqrt(scale) if scale != 1.0 else X
            return WeightsState(X, constant, alpha, self._rho)
        source = (
            precomputed_source(X)
            if self.kernel == "precomputed"
            else column_source(
                X, self.kernel, self._gamma, self.degree, self.coef0, self.cache_size
            )
        )
        return KernelState(source, alpha, self._rho, self._outputs)

    def _static_step(self, static, alpha, assigned, negative, C, rng, stop=None, warned=None):
        """One static optimisation (MProt's problem (11) at the assignment), partial with
        ``stop``; ``warned``, a ``convergence.FitWarnings``, collects the final step's
        ConvergenceWarnings."""
        if self.optimizer != "engine":
            return self._paper_static_step(
                static.source, alpha, static.U, assigned, negative > 0, C, rng, stop,
                None if warned is None else warned.new_run(),
            )  # fmt: skip

        restart = stop is None  # the final static step: its first run may restart (solve)
        limits = FitLimits(self.max_iter, assigned.size)  # shared by its bias's rounds

        def run(b):
            nonlocal restart
            solver = DecompositionSolver(
                CS,
                0.0,
                biased_terms(CS, negative, negative, b, assigned),
                self._bounds[:, None] * negative,
                assigned,
                tol=self.tol,
                max_iter=self.max_iter,
                shrinking=self.shrinking,
                random_state=rng,
                offset=static.offset,
                verbose=self.verbose,
                stop=stop,
            )
            solver.warn = stop is None  # a partial step need not converge: no warning
            limits.start(solver)
            if warned is not None:
                solver.messages = warned.new_run()
            iters, self.kkt_violation_ = static.solve(solver, restart=restart)
            restart = False
            self.n_iter_ += iters
            return limits.charge(solver, iters)

        self._bias = augmented_lagrangian(
            run, CS, alpha, assigned, 0.0, self._rho, self._bias, self.tol,
            partial=stop is not None, messages=None if warned is None else warned.bias,
        )  # fmt: skip

    def _paper_static_step(self, source, alpha, U, assigned, negative, C, rng, stop, messages):
        """Figure 3: passes of pattern selection (KKT / AMG / BMG against the MEAN, MAX or
        logarithmic-cooling threshold, §5.3) and OptimizeOnPattern (Figures 4-6), until the largest
        KKT violation is at most ``tol``."""
        N, P = U.shape
        kdiag = np.empty(N)
        kernel_diagonal(source, kdiag)
        values, kkt = np.empty(N), np.empty(N)
        work = np.empty((5, P))  # rows 3-4: budget_rank_one's work (2P)
        method, criterion = OPTIMIZERS[self.optimizer], CRITERIA[self.pattern_selection]
        phi_v = 1e-3 * self.tol**2  # OptimizeOnPattern's tolerance on the gain
        first, steps_left = None, step_budget(self.max_iter, N)
        for sweep in range(1, epoch_limit(self.max_iter) + 1):
            pattern_values(0, assigned, negative, U, alpha, C, kdiag, kkt, work)
            self.kkt_violation_ = kkt.max()
            if self.kkt_violation_ <= self.tol or (stop is not None and sweep > 1 and stop()):
                break  # (the stop test after every sweep, as the engine's after every epoch)
            pattern_values(criterion, assigned, negative, U, alpha, C, kdiag, values, work)
            first = values.max() if first is None else first
            if self.threshold == "mean":
                theta = values.mean()
            elif self.threshold == "max":
                theta = MAX_FRACTION * values.max()
            else:  # logarithmic cooling of the first pass's largest value
                theta = first / np.log(sweep + np.e - 1.0)
            selected = np.flatnonzero(values > theta)
            if selected.size == 0:
                selected = np.array([np.argmax(values)])
            if steps_left < selected.size:
                break
            steps_left -= selected.size
            for p in rng.permutation(selected):
                optimize_on_pattern(
                    method, p, assigned[p], negative, source, U, alpha, C, kdiag[p], phi_v, 1000
                )
        else:  # max_iter sweeps, each selecting and optimising: is the last one's result at tol?
            pattern_values(0, assigned, negative, U, alpha, C, kdiag, kkt, work)
            self.kkt_violation_ = kkt.max()
        if self.kkt_violation_ > self.tol and stop is None:  # a partial step need not converge
            why = (
                f"max_iter=-1 spent its budget of {step_budget(-1, N):.0f} pattern steps"
                if self.max_iter == -1
                else f"max_iter={self.max_iter} sweeps were run; increase max_iter"
            )
            convergence_warning(
                f"The {self.optimizer!r} optimizer stopped with a KKT violation of "
                f"{self.kkt_violation_:.2e} > tol={self.tol:g}: {why}.",
                messages,
            )
        self.n_iter_ += sweep

    def _new_assignment(self, F, y_index, proto_class, assigned, C, t, rng):
        """Greedy (least slack) or drawn from MProt (17) at temperature T0 (1 - tau)^t."""
        xi = positive_slacks(F, y_index, proto_class)
        if self.assignment == "greedy":
            return np.argmin(xi, axis=1)
        T = self.T0 * (1.0 - self.tau) ** t
        excess = xi - xi.min(axis=1, keepdims=True)  # inf for the other classes' prototypes
        own = np.isfinite(excess)
        logits = np.where(own, -self._bounds[:, None] * np.where(own, excess, 0.0) / T, -np.inf)
        p = np.exp(logits)  # exp(-inf) = 0 for the other classes' prototypes
        p /= p.sum(axis=1, keepdims=True)
        cumulative = p.cumsum(axis=1)
        draws = rng.random_sample(y_index.size)[:, None] * cumulative[:, -1:]
        return (cumulative < draws).sum(axis=1)  # the first prototype whose mass covers the draw

    def _finish(self, X, alpha, assigned, proto_class, y_index, negative, F, primal):
        """The fitted attributes; ``F`` = K Z, the outputs without bias at the final
        assignment, whose static dual (11), the sum of alpha - 1/2 ||M||^2, bounds the
        optimum of the static primal (8) at that assignment from below."""
        Z, B = dual_vectors(CS, alpha, assigned, 0.0)
        self.dual_coef_ = alpha
        self.assignment_ = assigned
        self.prototype_class_ = proto_class
        self.intercept_ = self._bias.copy()
        dual = dual_value(negative, alpha, float(np.sum(Z * F)))
        check_finite("The fit", primal, dual)
        self.objective_, self.dual_objective_ = primal, dual
        self.relative_gap_ = relative_gap(primal, dual)
        self.support_ = support_by_class(np.any(alpha > 0, axis=1), y_index)
        self.n_support_ = support_counts(
            self.support_, y_index, proto_class.size // self.n_prototypes
        )
        self._sv_coef = B[self.support_]
        self.support_vectors_ = (
            np.empty((0, 0)) if self.kernel == "precomputed" else X[self.support_]
        )

    def _scores(self, X):
        """Class scores: the best prototype of each class (MProt 2)."""
        raw = super()._scores(X)
        if callable(self.kernel):  # (the precomputed model's scores: already the best)
            return raw
        return raw.reshape(raw.shape[0], self.classes_.size, -1).max(axis=2)
