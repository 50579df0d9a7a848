"""Cross-checks between the reference layer and the fast layer, one row per formulation.

``check(formulation, X, y, ...)`` solves the formulation's primal and dual exactly (cvxpy), fits
the fast estimator that solves the same problem (and, for the box-constrained machines, ISVM's
Algorithms 1 and 2), and compares: the primal-dual gap, the fast objective against the reference
optimum, the fast fit's ``dual_coef_`` against its outputs and objective through the reference's
map from dual variables to weights (``dual_coef_reasons``), the gamma and kernel both layers take
from ``msvm.core`` against scikit-learn's (``primitive_reasons``), the training outputs (unique,
since the regulariser is strictly convex in W: within ``output_tol`` of their scale, and at each
point within the bound that the two solutions' primal values prove, ``output_radius``), and the
predictions, which must agree wherever the reference's top two class scores are not tied -- for
ISVM's Algorithms 1 and 2, which stop at tol=1e-4 with outputs up to ~1e-2 off the optimum,
wherever the lead is also larger than their own duality gap allows them to move
(``certified``).
Multiclass logistic regression is checked against scikit-learn's ``LogisticRegression`` on the
factor features R (K = R R^T), the same problem on the canonical scale, solved by its Newton
method ("newton-cholesky") to tol = 1e-12.  With ``sample_weight``
every one of them solves the weighted problem (pattern i's loss times s_i): the reference's
weighted primal and dual, the fast fit's and scikit-learn's ``sample_weight``.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import SVC

from msvm.core.objectives import canonical_objective, logistic_loss
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)
from msvm.reference import (
    FORMULATIONS,
    Problem,
    crammer_singer,
    inhibitory,
    lee_lin_wahba,
    one_vs_all,
    weston_watkins,
)
from msvm.reference.problem import NotSolvedError
from msvm.reference.values import primal_value

# formulation -> (fast estimator, its options); max_svm / sum_svm are the same problems as
# Crammer-Singer / Weston-Watkins on the canonical scale.
FAST = {
    "inhibitory": (InhibitorySVC, {}),
    "one_vs_all": (OneVsAllSVC, {}),
    "weston_watkins": (WestonWatkinsSVC, {}),
    "crammer_singer": (CrammerSingerSVC, {}),
    "lee_lin_wahba": (LeeLinWahbaSVC, {}),
    "max_svm": (CrammerSingerSVC, {}),
    "sum_svm": (WestonWatkinsSVC, {}),
    "mprot_static": (MultiPrototypeSVC, {"n_prototypes": 2, "n_assignment_steps": 0}),
    "simplex_hinge": (SimplexSVC, {"loss": "hinge"}),
    "simplex_square": (SimplexSVC, {"loss": "squared"}),
}
PAPER_SOLVERS = ("inhibitory", "one_vs_all", "weston_watkins", "lee_lin_wahba")
# formulation -> the reference layer's map from dual variables to (coef, weights), for the fast
# estimators whose ``dual_coef_`` are that dual's variables (``dual_coef_reasons``)
COEF_FROM_DUAL = {
    "inhibitory": inhibitory.coef_from_dual,
    "one_vs_all": one_vs_all.coef_from_dual,
    "weston_watkins": weston_watkins.coef_from_dual,
    "sum_svm": weston_watkins.coef_from_dual,
    "crammer_singer": crammer_singer.coef_from_dual,
    "max_svm": crammer_singer.coef_from_dual,
    "lee_lin_wahba": lee_lin_wahba.coef_from_dual,
}
# The fit's outputs and objective_ against those of its dual_coef_, relative (the same dual
# variables on two kernels, numba's and numpy's: ~1e-12 of the outputs' scale; the objective
# also within what that difference can move the loss, C sum_i s_i L times it).
DUAL_COEF_RTOL = 1e-8
# formulations with a fit_intercept option in both layers (logistic always has its bias)
BIASED = (
    "inhibitory",
    "one_vs_all",
    "weston_watkins",
    "crammer_singer",
    "lee_lin_wahba",
    "mprot_static",
    "simplex_hinge",
    "simplex_square",
)


@dataclass
class CheckRow:
    """The evidence for one formulation on one data set; ``passed`` and ``reasons`` judge it.
    ``notes`` name the comparisons that could not be made (no point to compare predictions on)
    and a reference form that Newton steps polished (``logistic.tightened``): they do not fail
    the row, and the verdict shows them."""

    formulation: str
    dataset: str
    primal: float
    dual: float
    gap: float
    fast: str
    fast_objective: float
    fast_difference: float
    output_difference: float
    output_radius: float = np.nan  # the largest difference of outputs the objectives allow
    agreement: dict = field(default_factory=dict)
    passed: bool = True
    reasons: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def relative(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


def lead(scores: np.ndarray) -> np.ndarray:
    """How far each row's largest score leads its second."""
    top2 = np.sort(scores, axis=1)[:, -2:]
    return top2[:, 1] - top2[:, 0]


def untied(scores: np.ndarray, margin: float) -> np.ndarray:
    """Rows whose top two scores differ by more than ``margin`` times the score scale."""
    return lead(scores) > margin * (1.0 + np.abs(scores).max())


def certified(scores: np.ndarray, k_diag: np.ndarray, gap: float) -> np.ndarray:
    """Rows whose leading class in ``scores`` (the optimum's) leads every other by more than
    sqrt(2 k(x, x) gap): any solution of duality gap ``gap`` predicts that class there
    (``msvm.fast.loo.certain``: ||W - W*||^2 <= gap, and a difference of two outputs moves by
    at most sqrt(2 k(x, x)) ||W - W*||)."""
    return lead(scores) > np.sqrt(2.0 * np.maximum(k_diag, 0.0) * max(gap, 0.0))


def fitted_reasons(model, X, y, sample_weight, name: str) -> list:
    """Fit ``model``; its ConvergenceWarnings become reasons (other warnings pass through)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y, sample_weight=sample_weight)
    reasons = []
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            reasons.append(f"{name}did not converge: {w.message}")
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return reasons


def centred(scores: np.ndarray) -> np.ndarray:
    return scores - scores.mean(axis=1, keepdims=True)


def score_gap(scores, reference, logistic=False) -> np.ndarray:
    """Two solutions' class scores less one another, centred for logistic regression (its
    multinomial scores are free by a common shift)."""
    view = centred if logistic else np.asarray
    return view(scores) - view(reference)


def output_difference(scores, reference, clear, fit_intercept, logistic=False):
    """(largest difference of two solutions' class scores, the points on which their predictions
    must agree, the constant per class taken out).  The outputs are unique where the regulariser
    is strictly convex; logistic regression's are compared centred (its multinomial scores
    are free by a common shift), and with ``fit_intercept`` up to a constant per class: the
    optimal bias need not be unique (no free variable pins it at a small C), so two optimal
    solutions' scores differ by delta_j + e_j(x), with |e| at most the difference reported,
    and their predictions may differ only where the reference's lead is within max delta -
    min delta + 2 |e| (outside it they must agree).  Whether the fast bias is optimal is
    judged apart (``check``: the loss at the exact weights and the fast bias)."""
    gap = score_gap(scores, reference, logistic)
    if fit_intercept:
        delta = gap.mean(axis=0)
        error = float(np.abs(gap - delta).max())
        freedom = float(delta.max() - delta.min()) + 2.0 * error
        return error, clear & (lead(reference) > freedom), delta
    return float(np.abs(gap).max()), clear, np.zeros(reference.shape[1])


def output_radius(p: Problem, reference, fast_value: float) -> np.ndarray:
    """For each training point x_i, the most two solutions' class scores may differ there
    given their primal values: the exact solution ``reference`` (its primal value at its own
    weights, ``primal_value``) and a fit of primal value ``fast_value``, both against the
    reference's certified lower bound of the optimum P*.

    Every primal is 1/2 ||W||^2 plus a convex function of (W, b), so at the optimum
    (W*, b*) the subgradient condition gives 1/2 ||W - W*||^2 <= P(W, b) - P* for any (W, b)
    (a bias too: the condition holds in b with a zero subgradient); two solutions' weights are
    within sqrt(2 g_1) + sqrt(2 g_2) of each other.  Each machine's class score is linear in
    W with a norm of at most sqrt(k(x, x)) per unit of ||W|| (one-vs-all, WW, CS, their
    Lecture forms: w_j . phi(x); inhibitory and LLW: (M g)_j with M_jj <= 1; simplex codes:
    <f(x), a_t> with |a_t| = 1; MProt: the largest of its prototypes' scores; logistic
    regression's centred scores: e_j - 1/L of norm below 1), so the scores differ by at most
    (sqrt(2 g_1) + sqrt(2 g_2)) sqrt(k(x_i, x_i)): the bias's freedom aside (``check``).

    The certificate bounds the problem the reference states, on R R^T, whose quadratic
    1/2 tr(B^T R R^T B) falls short of K's by at most 1/2 ``dropped_eigenvalue`` ||B||^2: the
    optimum on K lies at most that below the certified bound at the reference's coefficients B
    (iris, 90 points, gamma = 0.001, C = 1e4: the fits' primal values 4.9e-4 below the bound),
    and the lower bound is taken that much lower."""
    lower = reference.extras["certificate"].lower
    lower -= 0.5 * p.dropped_eigenvalue * float(np.sum(reference.coef**2))
    floor = ROUNDING * (1.0 + abs(lower))  # (a gap below it is the values' rounding)
    gaps = np.maximum([primal_value(reference) - lower, fast_value - lower], floor)
    return float(np.sum(np.sqrt(2.0 * gaps))) * np.sqrt(np.maximum(np.diag(p.K), 0.0))


def bracket_reasons(name: str, dual_value, primal_value, optimum, gap_tol, dual_tol=None) -> list:
    """A fit's dual value is a lower bound of the exact optimum and its primal value an upper
    one (to gap_tol of the optimum's size, the reference's own accuracy).  ``dual_tol``: the
    dual's own allowance where it is a bound only to a tolerance (with a bias, to that of the
    balance condition sum_i B_i = 0, which the fit meets to its tol: ``fit_intercept``)."""
    slack = gap_tol * abs(optimum)
    dual_slack = slack if dual_tol is None else max(slack, dual_tol * abs(optimum))
    if dual_value - dual_slack <= optimum <= primal_value + slack:
        return []
    return [
        f"{name} dual {dual_value:.9g} and primal {primal_value:.9g} do not bracket the "
        f"optimum {optimum:.9g}"
    ]


def gap_bound(model, C: float, sample_weight) -> float:
    """The widest duality gap a fit of KKT violation eps may have: eps times the sum of its
    dual's upper bounds, at most C s_i per variable (L per pattern: ``dual_coef_``'s width).
    Each variable's term of P - D = sum_v [hi_v max(0, g_v) - alpha_v g_v] (g_v its dual
    gradient, the margin it misses) is at most eps hi_v: free, |g_v| <= eps; at 0, g_v <= eps;
    at hi_v, g_v >= -eps (Crammer-Singer's budget per pattern: at most eps C).  A closed-form
    fit (no ``kkt_violation_``: the simplex square loss) has gap 0."""
    width = 1 if np.ndim(model.dual_coef_) == 1 else np.shape(model.dual_coef_)[1]
    weights = np.shape(model.dual_coef_)[0] if sample_weight is None else np.sum(sample_weight)
    return getattr(model, "kkt_violation_", 0.0) * C * weights * width


def gap_bound_reasons(name: str, model, C: float, sample_weight, dual_tol: float = 0.0) -> list:
    """The fit's own gap (objective_ - dual_objective_) against ``gap_bound``, beyond the
    rounding of its values (and ``dual_tol`` of the objective where the dual value is a bound
    only to a tolerance, as ``bracket_reasons``): a wrong primal or dual value widens it."""
    gap = model.objective_ - model.dual_objective_
    allowed = gap_bound(model, C, sample_weight) + max(1e-9, dual_tol) * abs(model.objective_)
    if gap <= allowed:
        return []
    return [f"{name} duality gap {gap:.3g} exceeds {allowed:.3g}, what its KKT violation allows"]


def dual_coef_reasons(formulation: str, model, p: Problem, exact, X) -> list:
    """The fit's public dual variables against its own outputs and objective, through the
    reference layer's map from dual variables to weights (``COEF_FROM_DUAL``, e.g. ISVM 4.10
    and 4.12): k(X, X) coef + intercept_ must be the fit's class scores on its training points,
    and the primal value at those weights (``values.primal_value``, the reference's numpy loss)
    its ``objective_`` -- but where ``Problem`` solves the positive part of an indefinite Gram
    matrix (a precomputed one, or poly with coef0 < 0), whose objective is not the fit's.  The
    dual variables need not be unique; these two hold for any.  Also: the fit's reported KKT
    violation must be within its tol (``gap_bound`` trusts it; a fit that warned says so
    twice)."""
    reasons = []
    if getattr(model, "kkt_violation_", 0.0) > model.tol:
        reasons.append(
            f"the fast fit reports a KKT violation {model.kkt_violation_:.1e} > tol={model.tol:g}"
        )
    if formulation not in COEF_FROM_DUAL:
        return reasons
    coef, weights = COEF_FROM_DUAL[formulation](p, np.asarray(model.dual_coef_, dtype=float))
    bias = model.intercept_ if model.fit_intercept else None
    at_fit = dataclasses.replace(exact, coef=coef, weights=weights, intercept=bias)
    scores = model._scores(X)
    gap = float(np.abs(at_fit.decision_function(X) - scores).max())
    off = gap / (1 + np.abs(scores).max())
    if off > DUAL_COEF_RTOL:
        reasons.append(f"the fast fit's outputs are {off:.1e} (relative) off its dual_coef_'s")
    if p.positive_part:  # (the reference solves another kernel: another objective)
        return reasons
    value = primal_value(at_fit)
    weight = p.n_samples if p.sample_weight is None else float(np.sum(p.sample_weight))
    allowed = DUAL_COEF_RTOL * abs(value) + p.C * weight * p.n_classes * gap
    if abs(model.objective_ - value) > allowed:
        reasons.append(
            f"the fast fit's objective_ {model.objective_:.9g} is not the primal value "
            f"{value:.9g} at its dual_coef_"
        )
    return reasons


def raw_gram(p: Problem) -> np.ndarray:
    """The Gram matrix ``Problem`` was given or computed: ``p.K``, or before it took the
    positive part of an indefinite one (``p.positive_part``)."""
    if not p.positive_part:
        return p.K
    return 0.5 * (p.X + p.X.T) if p.kernel == "precomputed" else p.kernel_to(p.X)


def primitive_reasons(p: Problem, gamma) -> list:
    """What both layers take from ``msvm.core`` -- the numeric gamma ("scale", "auto") and the
    kernel -- against scikit-learn's: a mistake there would be shared by the two layers and
    no comparison of them could show it.  gamma as ``SVC`` resolves it at fit, the kernel
    (``raw_gram``) by ``pairwise_kernels`` at that gamma, relative to its largest entry.  A
    precomputed or callable kernel is the user's: nothing of ``msvm.core`` to compare."""
    if callable(p.kernel) or p.kernel == "precomputed":
        return []
    params = {"degree": p.degree, "coef0": p.coef0} if p.kernel == "poly" else {}
    if p.kernel != "linear":
        peer = SVC(kernel=p.kernel, gamma=gamma, **params).fit(p.X, p.y_index)._gamma
        if relative(p.gamma, peer) > 1e-12:
            return [f"gamma={gamma!r} is {p.gamma:.12g}; scikit-learn's SVC uses {peer:.12g}"]
        params["gamma"] = peer
    K = pairwise_kernels(p.X, metric=p.kernel, **params)
    off = float(np.abs(raw_gram(p) - K).max()) / max(float(np.abs(K).max()), 1e-300)
    if off > 1e-8:
        return [f"the {p.kernel} kernel matrix is {off:.1e} (relative) off scikit-learn's"]
    return []


# The smallest gap ``output_radius`` takes, relative to the optimum: the primal values and the
# certified bound are each rounded to ~1e-15 of it (the closed-form squared simplex loss's fit
# and cvxpy's solve came out below the bound on iris), and a difference of outputs of
# sqrt(2 ROUNDING P*) sqrt(k) is that rounding's, not a disagreement.
ROUNDING = 1e-12


# Why a prediction comparison had no point (``CheckRow.notes``): every point tied, or, with a
# bias, no untied point leading by more than the classes' free constants can move.
TIED = "every point is tied within tie_margin"
BIAS_FREEDOM = "no untied point leads by more than the optimal biases can move"


def agreement(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float:
    """The share of the points in ``mask`` where ``a`` and ``b`` agree; nan where ``mask`` holds
    none (nothing was compared, which is not agreement)."""
    return float(np.mean(a[mask] == b[mask])) if mask.any() else float("nan")


def class_scores(decision: np.ndarray) -> np.ndarray:
    """Class scores (n, L) from a decision function; for two classes scikit-learn's convention
    gives one column d = f_2 - f_1, and the sum-to-zero scores (-d/2, d/2) have the same
    differences (the multinomial logistic optimum is sum-to-zero: with w_1 = -w_2 = -w/2 its
    objective is half the binary objective 1/2 ||w||^2 + 2C sum loss)."""
    if decision.ndim == 1:
        return np.column_stack([-decision / 2, decision / 2])
    return decision


def check(
    formulation: str,
    X,
    y,
    *,
    C: float = 1.0,
    kernel="rbf",
    gamma="scale",
    degree: int = 3,
    coef0: float = 0.0,
    dataset: str = "",
    gap_tol: float = 1e-6,
    fast_tol: float = 1e-4,
    output_tol: float = 1e-3,
    paper_tol: float = 1e-3,
    tie_margin: float = 1e-3,
    paper_solvers: bool = True,
    random_state: int = 0,
    fit_intercept: bool = False,
    sample_weight=None,
) -> CheckRow:
    """Cross-check one formulation on (X, y); see the module docstring for what is compared.
    ``fit_intercept``: the biased forms of both layers (formulations in ``BIASED``; ISVM's
    Algorithms 1 and 2 have no bias and are left out).

    Tolerances: ``gap_tol`` relative primal-dual gap of the reference; ``fast_tol`` relative
    difference of the fast objective (at tol=1e-6; of the nearer of the fit's primal and dual
    values, which must bracket the optimum, no further apart than ``gap_bound``; with a bias
    the dual end within fast_tol: it is a bound only to the balance condition's tolerance);
    ``output_tol`` largest difference of training outputs (each machine's class scores)
    relative to their scale (``output_difference``: centred for logistic regression, up to a
    constant per class with a bias, whose optimality is then judged by the loss it costs;
    the outputs must also lie within ``output_radius`` of each other, which needs no
    tolerance);
    ``paper_tol`` the relative difference of the dual value of ISVM's Algorithms 1 and 2 (at
    their own tol=1e-4; with the bracket, not ``gap_bound``).  ``sample_weight`` (n_samples,)
    weighs every formulation's loss (``Problem``'s and the estimators' ``sample_weight``).
    ``kernel`` a name or a callable ``kernel(A, B)`` (as SVC takes one): both layers solve the
    problem of its Gram matrix.
    """
    if formulation not in FORMULATIONS:
        raise ValueError(
            f"Unknown formulation {formulation!r}; expected one of {list(FORMULATIONS)}."
        )
    if fit_intercept and formulation not in BIASED:
        raise ValueError(f"{formulation} has no fit_intercept; the biased ones: {list(BIASED)}.")
    bias = {"fit_intercept": True} if fit_intercept else {}
    p = Problem(
        X, y, C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
        sample_weight=sample_weight,
    )  # fmt: skip
    module = FORMULATIONS[formulation]
    shared = dict(
        C=C,
        kernel=kernel,
        gamma=gamma,
        degree=degree,
        coef0=coef0,
        max_iter=100_000,
        random_state=random_state,
    )
    fast_model, options, reasons = None, {}, []
    if formulation in FAST:
        Estimator, options = FAST[formulation]
        fast_model = Estimator(tol=1e-6, **shared, **options, **bias)
        reasons += fitted_reasons(fast_model, X, y, sample_weight, "the fast fit ")
    reference_options = dict(bias)
    if formulation == "mprot_static":
        q = options["n_prototypes"]
        reference_options.update(n_prototypes=q, assignment=fast_model.assignment_ - p.y_index * q)
    solved = {}  # each exact form that certifies; a form that does not is a reason, not a crash
    for form in ("primal", "dual"):
        try:
            solved[form] = getattr(module, form)(p, **reference_options)
        except NotSolvedError as error:
            reasons.append(f"the exact {form} was not certified: {error}")
    objectives = {form: solution.objective for form, solution in solved.items()}
    row = CheckRow(
        formulation,
        dataset,
        objectives.get("primal", np.nan),
        objectives.get("dual", np.nan),
        relative(objectives["primal"], objectives["dual"]) if len(solved) == 2 else np.nan,
        "",
        np.nan,
        np.nan,
        np.nan,
        reasons=reasons,
    )
    if row.gap > gap_tol:
        row.reasons.append(f"primal-dual gap {row.gap:.1e} > {gap_tol:g}")
    for form, solution in solved.items():  # (the logistic forms: ``logistic.tightened``)
        if "newton_steps" in solution.extras:
            row.notes.append(
                f"the exact {form} is {solution.solver}'s answer polished by "
                f"{solution.extras['newton_steps']} Newton step(s) on the primal"
            )
    row.reasons += primitive_reasons(p, gamma)
    if not solved:
        row.passed = False
        return row
    # the exact optimum: the dual's, or the primal's where only it certified
    dual = solved.get("dual", solved.get("primal"))
    primal = solved.get("primal", dual)

    reference_scores = dual.decision_function(X)
    clear = untied(reference_scores, tie_margin)
    predictions = {"primal": primal.predict(X), "dual": dual.predict(X)}
    if fast_model is not None:
        row.fast = type(fast_model).__name__
        row.fast_objective = fast_model.objective_
        predictions["fast"] = fast_model.predict(X)
        fast_scores = fast_model._scores(X)  # (n, L) class scores, two classes too
    else:  # logistic regression: scikit-learn on the factor features
        two = p.n_classes == 2  # scikit-learn fits one binary logistic: see class_scores
        # Newton's method, not lbfgs: near separable data (100 E. coli points, linear, C = 1e4)
        # lbfgs stopped 1.8e-10 above the optimum with outputs 1.2e-3 off it, past output_tol
        sk = LogisticRegression(
            C=2 * C if two else C, solver="newton-cholesky", tol=1e-12, max_iter=1_000
        )
        sk.fit(p.R, p.y_index, sample_weight=p.sample_weight)
        row.fast = "sklearn.LogisticRegression"
        F = class_scores(sk.decision_function(p.R))
        norm_sq = np.sum(sk.coef_**2) / (2 if two else 1)
        loss = logistic_loss(F, p.y_index, p.sample_weight)
        row.fast_objective = canonical_objective(norm_sq, loss, C)
        predictions["fast"] = p.classes[sk.predict(p.R)]
        fast_scores = F
    row.fast_difference = relative(row.fast_objective, dual.objective)
    fast_dual = getattr(fast_model, "dual_objective_", None)
    if fast_dual is not None:
        # At an absolute KKT tolerance the fast primal carries about C tol (large C, or features
        # of large values): the fit's own bracket [dual, primal] must hold the exact optimum,
        # the nearer of its ends must lie within fast_tol of it, and the bracket may be no
        # wider than the fit's KKT violation allows (``gap_bound``).
        dual_tol = fast_tol if fit_intercept else None  # (a bias: ``bracket_reasons``)
        row.reasons += bracket_reasons(
            "the fast fit's", fast_dual, row.fast_objective, dual.objective, gap_tol, dual_tol
        )
        row.reasons += gap_bound_reasons(
            "the fast fit's", fast_model, C, p.sample_weight, dual_tol or 0.0
        )
        row.fast_difference = min(row.fast_difference, relative(fast_dual, dual.objective))
        row.reasons += dual_coef_reasons(formulation, fast_model, p, dual, X)
    if row.fast_difference > fast_tol:
        row.reasons.append(f"fast objective differs by {row.fast_difference:.1e} > {fast_tol:g}")
    masks = {}  # the points each solution's predictions are compared on (default: clear)
    why = {}  # why a mask of untied points may hold none of them (every point tied: TIED)
    skipped = {}  # comparisons not made by design, and why
    if fit_intercept and formulation == "mprot_static":
        # a prototype no pattern is assigned to has a free bias, and a class's score is the
        # largest of its prototypes': optimal solutions' scores differ by more than a constant
        # per class, so the row is judged by its objective and bracket alone -- the exact
        # primal's against the exact dual's too (two classes of wine, poly, C = 0.01: they
        # agreed on 15 of 40 untied points, both certified optimal; review, stop 52)
        for name in ("fast", "primal"):
            masks[name] = np.zeros_like(clear)
            skipped[name] = "with a bias, optimal MProt scores differ by more than a class constant"
    elif fast_scores.shape == reference_scores.shape:
        scale = 1.0 + np.abs(centred(reference_scores)).max()
        if fit_intercept:
            why["fast"] = why["primal"] = BIAS_FREEDOM
        difference, masks["fast"], delta = output_difference(
            fast_scores, reference_scores, clear, fit_intercept, fast_model is None
        )
        row.output_difference = float(difference / scale)
        if row.output_difference > output_tol:
            row.reasons.append(f"outputs differ by {row.output_difference:.1e} > {output_tol:g}")
        if p.positive_part:  # the layers solve different kernels: output_tol only
            row.notes.append(
                "outputs not held to the objectives' radius: the reference solves the Gram "
                "matrix's positive part, the fast fit the matrix itself"
            )
        else:
            # the objectives' bound, per point; with a bias (logistic regression always has
            # one) the differences less their mean per class, A(x) - mean A for A the weights'
            # share: at most the point's radius plus the largest
            radius = output_radius(p, dual, row.fast_objective)
            row.output_radius = float(radius.max() / scale)
            logistic = fast_model is None
            apart, allowed = score_gap(fast_scores, reference_scores, logistic), radius
            if fit_intercept or logistic:
                apart, allowed = apart - apart.mean(axis=0), allowed + radius.max()
            apart = np.abs(apart).max(axis=1)
            if np.any(apart > allowed):
                i = int(np.argmax(apart - allowed))
                row.reasons.append(
                    f"outputs differ by {apart[i]:.3g} at point {i}, beyond the {allowed[i]:.3g} "
                    "that the two solutions' primal values allow"
                )
        loss = getattr(fast_model, "_loss", None)
        if fit_intercept and loss is not None:  # (the box machines: scores are their outputs)
            # the fast bias must be optimal with the exact weights: P(W*, b* + delta) - P* =
            # C (loss(scores* + delta) - loss(scores*)), the loss of the machine's class scores
            excess = C * (
                loss(reference_scores + delta, p.y_index, p.sample_weight)
                - loss(reference_scores, p.y_index, p.sample_weight)
            )
            # (delta is the fast scores' mean offset, exact to the residual |e| <= difference:
            # a change of every score by e moves a pattern's loss by at most 2 L e)
            weight = p.n_samples if p.sample_weight is None else float(np.sum(p.sample_weight))
            allowed = fast_tol * abs(dual.objective) + C * weight * 2 * p.n_classes * difference
            if excess > allowed:
                row.reasons.append(
                    f"the fast fit's bias is not optimal with the exact weights: it costs "
                    f"{excess:.3g} ({excess / abs(dual.objective):.1e} relative)"
                )
    if fit_intercept and formulation != "mprot_static":  # (the exact primal's bias likewise)
        _, masks["primal"], _ = output_difference(
            primal.decision_function(X), reference_scores, clear, True
        )

    if paper_solvers and formulation in PAPER_SOLVERS and not fit_intercept:
        Estimator, _ = FAST[formulation]
        for solver in ("smo", "sgd"):
            model = Estimator(solver=solver, tol=1e-4, **shared)
            row.reasons += fitted_reasons(model, X, y, sample_weight, f"{solver} ")
            predictions[solver] = model.predict(X)
            # their dual value within paper_tol of the optimum (it is, to ~1e-4, at any C: the
            # primal carries C tol) and the bracket.  Not ``gap_bound``: their kkt_violation_ is
            # the paper's mean KKT distance, not the largest violation it bounds with
            primal_value, dual_value = model.objective_, model.dual_objective_
            difference = relative(dual_value, dual.objective)
            row.agreement[f"{solver} objective"] = difference
            if difference > paper_tol:
                row.reasons.append(f"{solver} dual objective differs by {difference:.1e}")
            row.reasons += bracket_reasons(
                solver, dual_value, primal_value, dual.objective, gap_tol
            )
            # at their tol = 1e-4 the outputs may be ~1e-2 off the optimum: compared where the
            # solution's own duality gap certifies the optimum's class
            gap = primal_value - dual_value
            masks[solver] = clear & certified(reference_scores, np.diag(p.K), gap)
            why[solver] = "no untied point's class is certified by its duality gap"

    for name, labels in predictions.items():
        if name == "dual":
            continue
        mask = masks.get(name, clear)
        share = agreement(labels, predictions["dual"], mask)
        row.agreement[f"{name} vs dual"] = share
        row.agreement[f"{name} points compared"] = int(mask.sum())
        if not mask.any():
            reason = skipped.get(name) or (why.get(name, TIED) if clear.any() else TIED)
            row.notes.append(f"{name} predictions not compared: {reason}")
        elif share < 1.0:
            row.reasons.append(f"{name} predictions differ from the dual's on untied points")
    row.passed = not row.reasons
    return row
