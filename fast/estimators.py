"""The box-constrained multiclass SVMs as scikit-learn estimators.

Each class states only what distinguishes its dual (``msvm.reference`` has the formulas): the
pattern structure, the linear term, which variables are free, and the loss.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from msvm.core import objectives
from msvm.core.coding import one_hot
from msvm.fast.base import BaseMulticlassSVC
from msvm.fast.patterns import CS, LLW, SIGN, WW

_DOC_PARAMETERS = """
    Parameters
    ----------
    C : float, default=1.0
        Weight of the loss on the canonical scale 1/2 ||W||^2 + C sum(loss).
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        With "linear" the dcd solver keeps the weights W = X^T B explicitly (dense or CSR X).
        A callable kernel(A, B), as SVC's, is fitted as "precomputed" on kernel(X, X)
        (``msvm.fast.callable_kernel``).
    gamma : {"scale", "auto"} or float, default="scale"
        As in scikit-learn's SVC. The ISVM paper's exp(-g ||x - x'||^2 / M) is gamma = g / M.
    degree, coef0 : polynomial kernel (gamma <x, x'> + coef0) ** degree.
    solver : {"dcd", "smo", "sgd"}, default="dcd"
        "dcd": the decomposition engine (exact L-variable step per pattern, O(N L) per pattern).
        "smo": ISVM Algorithm 1, one variable per step.  "sgd": ISVM Algorithm 2 with step eta.
    selection : {"auto", "cyclic", "greedy"}, default="auto"
        Order of the dcd steps.  "cyclic": random permutations of the active patterns;
        "greedy": the most violating pattern, or, where the dual separates by class
        (one-vs-all), class by class the single variable of largest gain on a shrinking active
        set (``msvm.fast.separable``).  "auto": greedy for one-vs-all with a non-linear kernel
        whose column cache holds at least 2 % of the columns (``GREEDY_CACHED_SHARE``: N below
        about 36 000 at the default cache_size) and whose kernel is not narrow on at least 200
        patterns (a row's normalised off-diagonal mass at most 0.1 (N - 1),
        ``NARROW_COUPLING``), cyclic otherwise.
    tol : float, default=1e-3
        dcd: largest KKT violation (projected gradient) allowed; smo/sgd: the paper's T = theta.
    max_iter : int, default=-1
        Epochs: passes over the active patterns (a pass over a shrunk set counts as one, as in
        LIBLINEAR), or over the variables for smo/sgd.  -1 (as in SVC): until converged, in
        budgets of libsvm's guard of max(10^7, 100 n_samples) steps: libsvm stops after one,
        the pattern-wise engine (dcd) goes on into another while the last raised the dual
        objective (from the second on, at most half as fast a step as the one before), rounding
        moved its outputs by at most tol, and the fit has not spent ten budgets (a bias's runs
        count together, as they do for max_iter's epochs).  Any run also ends,
        with a ConvergenceWarning, when three epochs in a row can take no step.
    shrinking : bool, default=True
        Set aside variables that sit at a bound with the gradient pointing out (a pattern when
        none is left), as LIBLINEAR's Crammer-Singer solver does; everything is re-checked
        whenever the active set's violation halves (LIBLINEAR's eps_shrink) and before stopping.
    cache_size : float, default=200
        Kernel cache budget in MB; the whole Gram matrix is computed up front when it fits,
        otherwise columns are cached least-recently-used.  The coupled machines (inhibitory,
        Lee-Lin-Wahba, Weston-Watkins, Crammer-Singer) may also hand a slow fit to an
        interior-point method
        (``msvm.fast.interior_point``) whose arrays, (L + 8) N^2 doubles, must fit the same
        budget, besides the cache: a fit may then hold up to twice ``cache_size``.
    random_state : int, RandomState or None
        Seeds the visiting order (dcd) or the variable draws (smo/sgd).
    verbose : int, default=0
        1: a summary line per fit (epochs, steps, KKT violation, objective, time); 2 and up: a
        line per epoch as well.
    warm_start : bool, default=False
        Start from the previous solution (dual variables scaled by C_new / C_old).
    eta : float in (0, 1], default=0.5
        eta_eff of ISVM (8.5), used by solver="sgd".
    class_weight : dict, "balanced" or None, default=None
        As in scikit-learn's SVC: the loss of a pattern of class k is multiplied by
        class_weight[k] ("balanced": n_samples / (n_classes * count of k)), i.e. its dual bound
        is C class_weight[k]; combined with ``fit``'s ``sample_weight`` by product (``fit(X, y,
        sample_weight)`` multiplies pattern i's loss term by s_i, the dual bound C s_i; a weight
        0 takes the pattern out of the fit).
    probability : bool, default=False
        Also calibrate the scores by 5-fold cross-validation (five more fits) into
        ``predict_proba`` / ``predict_log_proba``: a multinomial logistic regression on the L
        held-out class scores (``msvm.fast.calibration``); its argmax may differ from ``predict``.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        As in scikit-learn's SVC: "ovr" has ``decision_function`` return the L class scores
        f_j(x) themselves (SVC builds its "ovr" values from pairwise votes), "ovo" their
        L (L - 1) / 2 pairwise differences f_i(x) - f_j(x), i < j, in SVC's order of the pairs;
        two classes give one column, f_2 - f_1, either way.  ``predict`` is the argmax of the
        scores, which wins every pair, so no tied votes arise for SVC's ``break_ties`` to settle.
    n_jobs : int or None, default=None
        Threads for the Gram matrix, BLAS and one-vs-all's classes: None or -1 every core (no
        more than OMP_NUM_THREADS when set), k > 0 k threads, -k all but k - 1.  The result is
        the same whatever n_jobs (``msvm.fast.threads``).  The coupled machines' steps run one
        after another on one thread; on data larger than the cache their kernel blocks use the
        threads (about 1.2x faster on two cores at 16 000 points: benchmarks/scale.py).
    fit_intercept : bool, default=False
        Give every class a bias that is not penalised, as SVC does (the papers' machines have
        none).  In the dual it is the condition sum_i B_i = 0 (sum_i alpha_ij y_ij = 0 per class
        for one-vs-all), met by an augmented Lagrangian: a constant rho joins every kernel entry
        and the bias is updated between engine runs until it moves less than ``tol``; the runs
        share ``max_iter``'s epochs and the ten step budgets of max_iter=-1, and when they are
        spent the rounds end with a ConvergenceWarning.  For the
        machines whose outputs sum to zero (InhibitorySVC at mu = 1/L, LeeLinWahbaSVC, simplex
        codes) the bias sums to zero too: each classifier's bias is inhibited like its outputs
        (``msvm.reference`` states every biased primal and dual).  Needs solver="dcd".  Where
        the bias is not unique (no dual variable strictly inside its bounds pins it, e.g. at
        small C), the middle of the optimal set is returned, as libsvm does for a binary SVM
        (``msvm.fast.intercept``).

    Attributes
    ----------
    classes_ : labels; dual_coef_ : (n_samples, n_classes) dual variables alpha_ij
    support_, support_vectors_ : patterns with a non-zero dual variable, grouped by class (in the
        order of classes_, blocks of n_support_) as SVC orders them
    n_support_ : (n_classes,) int32, how many of them each class has (as SVC's)
    coef_ : (n_classes, n_features), linear kernel only; intercept_ : (n_classes,)
    objective_, dual_objective_ : canonical primal and dual values at the returned solution
    relative_gap_ : (objective_ - dual_objective_) / |objective_|, a bound on how far both are
        from the optimum.  The stopping test is absolute, as libsvm's (every KKT violation at
        most ``tol``, in units of the margin), so at a large C -- or on features of large
        values, which act as a larger C -- a converged fit can leave a large gap: each margin
        may miss by ``tol``, which costs C tol in the primal (WestonWatkinsSVC on standardised
        wine at C = 1e6: gap 0.999 at tol = 1e-3, 0.41 at tol = 1e-6, the same predictions on
        the training set and on 2 000 random points).  Lower ``tol`` or rescale the features
        to tighten it.  With ``fit_intercept=True`` the dual value is taken where the bias
        condition sum_i B_i = 0 holds to the augmented Lagrangian's tolerance, not exactly, so
        it is not a certified bound: near a converged fit the gap can come out slightly
        negative (standardised wine, 100 points, C = 0.1, tol = 1e-3: OneVsAllSVC -2.5e-5,
        InhibitorySVC -1.5e-5; at tol = 1e-5 both positive).
    n_iter_ : epochs run, over every round of a bias, a started one counted (the greedy
    selection's are its steps over N, one-vs-all's class-by-class solver's its variable steps
    over N L); n_steps_ : pattern updates (variable updates for smo/sgd and one-vs-all's
    class-by-class solver), each one kernel column applied to the outputs; kkt_violation_ : the
    final stopping quantity (the largest KKT violation; for solver="smo"/"sgd" the paper's mean
    KKT distance).  (A cold linear-kernel fit on >= 20 000 samples of a
    box-constrained machine -- all but CrammerSingerSVC -- starts from a 10 % subsample's
    solution: its steps count in n_steps_, its epochs not in n_iter_.)
"""


class OneVsAllSVC(BaseMulticlassSVC):
    __doc__ = (
        """The 1-versus-all machine of ISVM §9: L binary SVMs solved jointly (each with its bias
    with fit_intercept).

    Dual kernel K(x_i, x_i') I(j = j'); per-pattern Hessian K_ii I.
    """
        + _DOC_PARAMETERS
    )
    _kind = SIGN

    def _dual_terms(self, y_index, L):
        return np.ones((y_index.size, L)), np.ones((y_index.size, L))

    def _loss(self, F, y_index, weights=None):
        return objectives.hinge_per_class_loss(F, y_index, weights)


class InhibitorySVC(OneVsAllSVC):
    __doc__ = (
        """The inhibitory multiclass SVM (Huerta et al. 2012, ISVM 3.5, 4.1, 6.1-6.3).

    f_j(x) = <w_j, phi(x)> - mu sum_k <w_k, phi(x)> with the paper's mu = 1/L (Theorem 1 calls
    it optimal; it maximises the optimal value over mu, see ``msvm.verify.inhibition``); dual
    kernel K(x_i, x_i') [I(j = j') - 1/L]; per-pattern Hessian K_ii (I - y_i y_i^T / L).

    mu : float or None, default=None
        A fixed inhibition (None: 1/L), any real number; the dual kernel is
        K [I(j = j') - c] with c = mu (2 - mu L) = (1 - (1 - mu L)^2) / L, symmetric about 1/L.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from msvm.fast import InhibitorySVC
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = InhibitorySVC(C=1.0, random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    """
        + _DOC_PARAMETERS
    )
    _parameter_constraints = {
        **BaseMulticlassSVC._parameter_constraints,
        "mu": [None, Real],
    }

    def __init__(
        self,
        *,
        mu=None,
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
        super().__init__(
            C=C,
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            solver=solver,
            selection=selection,
            tol=tol,
            max_iter=max_iter,
            shrinking=shrinking,
            cache_size=cache_size,
            random_state=random_state,
            verbose=verbose,
            warm_start=warm_start,
            eta=eta,
            class_weight=class_weight,
            probability=probability,
            n_jobs=n_jobs,
            fit_intercept=fit_intercept,
            decision_function_shape=decision_function_shape,
        )
        self.mu = mu

    def _inhibition(self, L):
        mu = 1.0 / L if self.mu is None else float(self.mu)
        if not np.isfinite(mu):
            raise ValueError(f"mu must be finite (mu={mu}).")
        with np.errstate(over="ignore"):
            c = mu * (2.0 - mu * L)  # c = (1 - (1 - mu L)^2) / L: any real mu, G stays PSD
        if not abs(c) * L * np.finfo(float).eps < 1.0:  # G = K (I - c 11^T): I below rounding
            raise ValueError(
                f"mu={mu!r} is too large: the inhibition's constant c = mu (2 - mu L) = {c:.3g} "
                "leaves the identity part of the kernel (6.3) below rounding in float64 (|c| L "
                "must stay below 1 / eps, |mu| below about 7e7 / L; the machine approaches its "
                "limit as |mu| grows, msvm.reference.inhibitory.common_mode_free)."
            )
        return c


class LeeLinWahbaSVC(BaseMulticlassSVC):
    __doc__ = (
        """The Lee-Lin-Wahba multicategory SVM (ISVM Table 1); with fit_intercept, biases that sum
    to zero.

    Margin 1/(L-1) on the negative outputs and sum_j f_j = 0; dual kernel K (I - 11^T/L) over
    the negatives.
    """
        + _DOC_PARAMETERS
    )
    _kind = LLW

    def _dual_terms(self, y_index, L):
        free = 1.0 - one_hot(y_index, L)
        return free / (L - 1), free

    def _loss(self, F, y_index, weights=None):
        return objectives.lee_lin_wahba_loss(F, y_index, weights)


class WestonWatkinsSVC(BaseMulticlassSVC):
    __doc__ = (
        """The Weston-Watkins multiclass SVM (ISVM 5.1 with biases, E.1 without).

    Pairwise margin f_{y_i} - f_j >= margin - eta_ij; per-pattern Hessian K_ii (I + 11^T) over
    the negatives.  With ``fit_intercept=True`` the biases of (5.1).

    fit_intercept : bool, default=False
        The biases of ISVM (5.1); see below.
    margin : float, default=1.0
        ISVM (5.1) prints 2; appendix E and the Lecture's Sum-SVM use 1.
    """
        + _DOC_PARAMETERS
    )
    _kind = WW
    _parameter_constraints = {
        **BaseMulticlassSVC._parameter_constraints,
        "margin": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        fit_intercept=False,
        decision_function_shape="ovr",
        margin=1.0,
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
    ):
        super().__init__(
            C=C,
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            solver=solver,
            selection=selection,
            tol=tol,
            max_iter=max_iter,
            shrinking=shrinking,
            cache_size=cache_size,
            random_state=random_state,
            verbose=verbose,
            warm_start=warm_start,
            eta=eta,
            class_weight=class_weight,
            probability=probability,
            n_jobs=n_jobs,
            fit_intercept=fit_intercept,
            decision_function_shape=decision_function_shape,
        )
        self.margin = margin

    def _dual_terms(self, y_index, L):
        free = 1.0 - one_hot(y_index, L)
        return self.margin * free, free

    def _loss(self, F, y_index, weights=None):
        return objectives.weston_watkins_loss(F, y_index, self.margin, weights)


class CrammerSingerSVC(BaseMulticlassSVC):
    __doc__ = (
        """The Crammer-Singer multiclass SVM (ISVM 5.2 / F.1; MProt 4; the Lecture's Max-SVM).

    f_{y_i}(x_i) - f_j(x_i) >= Delta(y_i, j) - xi_i for j != y_i, one slack per pattern; the dual
    variables of a pattern share the budget sum_j alpha_ij <= C, and each pattern step is solved
    exactly by the sort-based rule of ``msvm.fast.patterns.budget_rank_one``.

    cost : array of shape (n_classes, n_classes) or None, default=None
        Delta for margin rescaling (ISVM Table 1); None is 1 - I, plain Crammer-Singer.
        Rows and columns follow ``classes_``.

    Only ``solver="dcd"``: ISVM's single-variable algorithms do not keep the shared budget.
    """
        + _DOC_PARAMETERS
    )
    _kind = CS
    _single_variable_solvers = False
    _parameter_constraints = {
        **BaseMulticlassSVC._parameter_constraints,
        "cost": [None, "array-like"],
    }

    def __init__(
        self,
        *,
        cost=None,
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
        super().__init__(
            C=C,
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            solver=solver,
            selection=selection,
            tol=tol,
            max_iter=max_iter,
            shrinking=shrinking,
            cache_size=cache_size,
            random_state=random_state,
            verbose=verbose,
            warm_start=warm_start,
            eta=eta,
            class_weight=class_weight,
            probability=probability,
            n_jobs=n_jobs,
            fit_intercept=fit_intercept,
            decision_function_shape=decision_function_shape,
        )
        self.cost = cost

    def _cost(self, L):
        if self.cost is None:
            return 1.0 - np.eye(L)
        message = f"cost must be a finite, non-negative {L} x {L} matrix"
        try:
            Delta = np.asarray(self.cost, dtype=float)
        except (TypeError, ValueError) as error:  # a dict, a ragged list, strings
            raise ValueError(f"{message}; got {type(self.cost).__name__} {self.cost!r}.") from error
        off = ~np.eye(L, dtype=bool)
        if Delta.shape != (L, L) or not np.all(np.isfinite(Delta)) or np.any(Delta[off] < 0):
            raise ValueError(f"{message}.")
        return Delta

    def _dual_terms(self, y_index, L):
        free = 1.0 - one_hot(y_index, L)
        return self._cost(L)[y_index] * free, free

    def _loss(self, F, y_index, weights=None):
        return objectives.crammer_singer_loss(F, y_index, self._cost(F.shape[1]), weights=weights)
