"""A certificate of optimality for every reference solution, computed in numpy (no cvxpy).

Every formulation is a convex problem with a Lagrangian dual, and weak duality brackets its optimum

    lower = D(alpha)  <=  optimum  <=  P(w) = upper

for ANY primal-feasible w and ANY dual-feasible alpha.  A solution carries both points, whatever
its form: a primal solution has its weights and the multipliers cvxpy returns for its margin
constraints (``Solution.dual_coef``); a dual solution has its dual variables and the weights
recovered from them.  Here

- ``upper`` is the canonical primal value 1/2 ||W||^2 + C * loss of ``msvm.reference.values``
  at the solution's weights (outputs F = R W (+ b)); for the hinge machines the smaller of that
  and 1/2 ||s W||^2 at the least s >= 1 for which s (W, b) meets every margin (loss 0): a
  feasible point whose value stays exact where C times the margins' rounding would swamp it;
- ``lower`` is the formulation's dual objective (the ones derived in each module, canonical scale)
  at the solution's dual point made exactly feasible: clipped into its box, a per-pattern budget
  scaled down, a balance (bias) constraint restored by its least-norm correction and, if that
  leaves the box or budget, a mix with a strictly feasible interior point that is balanced.
  Equalities then hold to float rounding.

Neither bound trusts the solver's own objective value.  The solution is certified when

    upper - lower <= RTOL * scale   and   lower - r <= objective <= upper + r,

``scale = max(|upper|, |lower|)``, ``r = RTOL * max(scale, floor)``; otherwise
:class:`NotSolvedError` reports the three numbers.  ``floor = ZERO_OPTIMUM min(C, 1) sum_i s_i
loss_i(0)``, 1e-4 of the loss at zero outputs (C-free above C = 1, as a hard margin's optimum is),
gives the solver's reported value room at an optimum of 0 (a bias that meets every margin where
sample weights leave one class: its 1.5e-10 around 0 had lain outside a bracket 1e-11 wide, and
a valid problem was refused); the bracket itself keeps the relative test (a first version floored
its scale too, and a review found it certified weights 6e-4 off on iris times 30).
``RTOL = 1e-6`` is the tolerance the test-suite asks of every primal/dual pair
(``tests/reference/test_primal_dual.py``, rel=1e-6);
the largest relative gap measured on its three problems (iris linear, wine and digits RBF; every
case, both forms) at default settings is 1.4e-9 (Clarabel at 1e-9), so the tolerance has a
margin of ~700, while the wrong optima of issue 17 (C = 1e12) have relative gaps of order 1.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from scipy.special import entr, softmax

from msvm.core import objectives
from msvm.core.coding import one_hot, simplex_code
from msvm.reference.pairwise import difference_coef, negatives
from msvm.reference.problem import NotSolvedError, Solution

RTOL = 1e-6
ZERO_OPTIMUM = 1e-4


@dataclasses.dataclass(frozen=True)
class Certificate:
    """Bounds on the optimum: ``lower <= optimum <= upper`` (weak duality, computed in numpy)."""

    lower: float
    upper: float
    rtol: float
    time: float
    floor: float = 0.0  # the reported value's smallest scale (ZERO_OPTIMUM)

    @property
    def gap(self) -> float:
        return self.upper - self.lower

    @property
    def scale(self) -> float:
        return max(abs(self.upper), abs(self.lower), np.finfo(float).smallest_subnormal)

    @property
    def relative_gap(self) -> float:
        return self.gap / self.scale


# -- dual points made feasible ------------------------------------------------------------------


def _budget(A: np.ndarray, weights: np.ndarray, C) -> np.ndarray:
    """Scale down every row whose weighted sum exceeds C (A >= 0, weights > 0); C is a number
    or the (n,) per-pattern budgets C s_i of a weighted problem."""
    totals = (A * weights).sum(axis=1)
    factor = np.where(totals > C, C / np.where(totals > C, totals, 1.0), 1.0)
    return A * factor[:, None]


def _into_box_by_mixing(
    A: np.ndarray, interior: np.ndarray, low: float, high, budget=None
) -> np.ndarray:
    """(1 - t) A + t interior with the least t in [0, 1] that puts every entry in [low, high]
    and, with ``budget``, every row sum at most its budget; ``interior`` lies strictly inside,
    so every linear equality both satisfy is kept."""
    with np.errstate(divide="ignore", invalid="ignore"):
        over = np.where(A > high, (A - high) / (A - interior), 0.0)
        under = np.where(A < low, (low - A) / (interior - A), 0.0)
        t = max(over.max(initial=0.0), under.max(initial=0.0))
        if budget is not None:
            mixed = np.clip((1.0 - t) * A + t * interior, low, high).sum(axis=1)
            room = interior.sum(axis=1)
            excess = np.where(mixed > budget, (mixed - budget) / (mixed - room), 0.0)
            t = t + (1.0 - t) * excess.max(initial=0.0)
    t = float(min(1.0, t))
    return np.clip((1.0 - t) * A + t * interior, low, high)


def _balance_tensor(sol: Solution) -> np.ndarray:
    """T with the bias's balance condition sum_ij T[:, i, j] alpha_ij = 0 (stationarity in b):

    one-vs-all, inhibitory: sum_i (alpha_i o y_i) (I - mu 11^T) = 0;   Weston-Watkins,
    Crammer-Singer, Lee-Lin-Wahba: sum_i B_i = 0;   simplex hinge: sum_i alpha_i y_i = 0.
    """
    p, name, L = sol.problem, sol.formulation, sol.problem.n_classes
    if name in ("inhibitory", "one_vs_all"):
        P = np.eye(L) - sol.extras.get("mu", 0.0) * np.ones((L, L))
        return np.einsum("ij,jm->mij", p.Y, P)
    if name in ("weston_watkins", "crammer_singer", "mprot_static"):
        # B_ik = I(k = t_i) sum_j a_ij - a_ik, t_i the class or the assigned prototype
        T, m = _true_outputs(sol)
        return one_hot(T, m).T[:, :, None] - np.eye(m)[:, None, :]
    if name == "lee_lin_wahba":  # B = -alpha (I - 11^T / L)
        return np.broadcast_to(-(np.eye(L) - 1.0 / L)[:, None, :], (L, p.n_samples, L))
    if name == "simplex_hinge":
        return simplex_code(L)[p.y_index].T
    raise ValueError(f"No bias for formulation {name!r}.")


def _true_outputs(sol: Solution) -> tuple[np.ndarray, int]:
    """Each pattern's true output (its class, or for MProt its assigned prototype) and the
    number of outputs."""
    p = sol.problem
    if sol.formulation == "mprot_static":
        return sol.extras["prototype_index"], p.n_classes * sol.extras["n_prototypes"]
    return p.y_index, p.n_classes


def _balanced_interior(sol: Solution, bounds: np.ndarray) -> np.ndarray:
    """A dual point strictly inside the box (and budget) that meets the balance condition: each
    group of variables that must balance another gets the same total t, spread in proportion to
    the bounds ``bounds`` (n,) of its patterns."""
    p, name, L = sol.problem, sol.formulation, sol.problem.n_classes
    E = one_hot(p.y_index, L)
    own = E.T @ bounds  # bound total of each class
    other = own.sum() - own  # ... and of the rest
    with np.errstate(divide="ignore", invalid="ignore"):
        if name in ("inhibitory", "one_vs_all"):  # each column: positives and negatives give t
            totals = np.where(E > 0, own[None, :], other[None, :])
            scale = 0.5 * min(own.min(), other.min())
        elif name in ("weston_watkins", "crammer_singer", "mprot_static"):
            # output k sends and receives t per used output of other classes (a prototype no
            # pattern is assigned to takes no variable: the balance sets them to 0)
            T, m = _true_outputs(sol)
            own = one_hot(T, m).T @ bounds
            classes = np.repeat(np.arange(L), m // L)
            used = negatives(p.y_index, m, classes) & (own > 0)[None, :]
            return (
                np.where(used, 0.5 * own[own > 0].min() / (m - 1) * bounds[:, None], 0.0)
                / (np.where(own[T] > 0, own[T], 1.0)[:, None])
            )
        elif name == "lee_lin_wahba":  # every column sums to t
            totals = np.broadcast_to(other[None, :], E.shape)
            scale = 0.5 * other.min()
        else:  # simplex hinge: sum_i alpha_i y_i = t sum_k a_k = 0
            return 0.5 * own.min() * np.nan_to_num(bounds / own[p.y_index])
        interior = np.nan_to_num(scale * bounds[:, None] / totals)
    return interior if name in ("inhibitory", "one_vs_all") else interior * (1.0 - E)  # LLW


def _balanced(A: np.ndarray, sol: Solution, budget=None) -> np.ndarray:
    """A made to meet the bias's balance condition exactly: the least-norm correction of the
    free variables, then a mix with ``_balanced_interior`` to restore the box (and budget)."""
    p = sol.problem
    bounds = np.broadcast_to(np.asarray(p.budget(), dtype=float), (p.n_samples,))
    interior = _balanced_interior(sol, bounds)
    T = _balance_tensor(sol).reshape(-1, A.size)
    free = (interior > 0).ravel()
    correction = np.linalg.lstsq(T[:, free], -T @ A.ravel(), rcond=None)[0]
    corrected = A.ravel().copy()
    corrected[free] += correction
    high = bounds.reshape(-1, *([1] * (A.ndim - 1)))
    return _into_box_by_mixing(corrected.reshape(A.shape), interior, 0.0, high, budget)


def _balanced_probabilities(P: np.ndarray, y_index: np.ndarray, L: int, s: np.ndarray):
    """Logistic with a bias: row i of P in s_i times the simplex and sum_i P_i = the classes'
    total weights exactly (s: the sample weights, ones without them; a row of weight 0 is 0)."""
    s = s[:, None]
    P = np.clip(np.nan_to_num(P), 0.0, None)
    sums = P.sum(axis=1, keepdims=True)
    P = s * np.where(sums > 0, P / np.where(sums > 0, sums, 1.0), 1.0 / L)
    totals = np.bincount(y_index, weights=s[:, 0], minlength=L)
    share = s / s.sum()
    P = P - share * (P.sum(axis=0) - totals)  # rows still sum to s_i, columns to the totals
    interior = share * totals  # entries > 0 where s_i > 0: each class carries weight
    return _into_box_by_mixing(P, interior, 0.0, np.broadcast_to(s, P.shape))


def _common_mode_balanced(A: np.ndarray, p, C: float) -> np.ndarray:
    """common_mode_free: alpha in [0, C] with R^T v = 0, v = (alpha o Y) 1.

    v's component in the range of R (orthonormal basis U = R / ||columns||) is removed through the
    positive entries alpha_{i y_i}; a mix with alpha0 (C/2 on the positives, C / (2 (L - 1)) on
    the rest: v = 0 in every row) restores the box.
    """
    norms = np.sqrt(np.sum(p.R**2, axis=0))
    U = p.R[:, norms > 0] / norms[norms > 0]
    v = (A * p.Y).sum(axis=1)
    positives = p.Y > 0
    A = A - positives * (U @ (U.T @ v))[:, None]
    interior = np.where(positives, 0.5 * C, 0.5 * C / (p.n_classes - 1))
    return _into_box_by_mixing(A, interior, 0.0, C)


def _pairs_from_lecture(mu: np.ndarray, sol: Solution, skip_first: bool) -> np.ndarray:
    """alpha_ij = -C mu_i,(row of j) from the Lecture's mu (rows j != y_i in increasing order,
    after Max-SVM's zero first row)."""
    p = sol.problem
    mu = np.asarray(mu).reshape(p.n_samples, -1)
    if skip_first:
        mu = mu[:, 1:]
    alpha = np.zeros((p.n_samples, p.n_classes))
    rows, cols = np.nonzero(negatives(p.y_index, p.n_classes))
    alpha[rows, cols] = -p.C * mu.ravel()
    return alpha


# -- the dual objective of each formulation (canonical scale) ---------------------------------


def _sq(M: np.ndarray) -> float:
    return float(np.sum(M**2))


def lower_bound(sol: Solution) -> float:
    """The formulation's dual objective at the solution's dual point, made feasible."""
    p, name = sol.problem, sol.formulation
    C, R, L = p.box(), p.R, p.n_classes  # C: a number, or the column C s_i of a weighted problem
    budget = p.budget()  # the same as a number or (n,)
    a = None if sol.dual_coef is None else np.nan_to_num(np.asarray(sol.dual_coef, dtype=float))
    positives = ~negatives(p.y_index, L)
    if name in ("inhibitory", "one_vs_all"):
        mu = sol.extras.get("mu", 0.0)
        A = np.clip(a, 0.0, C)
        if np.isinf(mu):  # common_mode_free: R^T (alpha o Y) 1 = 0 (the free common mode)
            A = _common_mode_balanced(A, p, C)
            return float(A.sum() - 0.5 * _sq(R.T @ (A * p.Y)))
        if sol.intercept is not None:
            A = _balanced(A, sol)
        P = np.eye(L) - mu * np.ones((L, L))
        return float(A.sum() - 0.5 * _sq(R.T @ (A * p.Y) @ P))
    if name in ("weston_watkins", "sum_svm"):
        if name == "sum_svm":
            a = _pairs_from_lecture(a, sol, skip_first=False)
        A = np.where(positives, 0.0, np.clip(a, 0.0, C))
        if sol.intercept is not None:
            A = _balanced(A, sol)
        margin = sol.extras.get("margin", 1.0)
        return float(margin * A.sum() - 0.5 * _sq(R.T @ difference_coef(A, p.y_index, L)))
    if name in ("crammer_singer", "max_svm"):
        if name == "max_svm":
            a = _pairs_from_lecture(a, sol, skip_first=True)
        Delta = sol.extras.get("cost", 1.0 - np.eye(L))
        D = Delta[p.y_index]
        A = np.where(positives, 0.0, np.clip(a, 0.0, None))
        if sol.extras.get("rescaling", "margin") == "margin":
            A = _budget(A, np.ones_like(A), budget)
            if sol.intercept is not None:
                A = _balanced(A, sol, budget)
            return float(np.sum(D * A) - 0.5 * _sq(R.T @ difference_coef(A, p.y_index, L)))
        inverse = np.where(positives, 0.0, 1.0 / np.where(positives, 1.0, D))
        A = _budget(A, inverse, budget)
        return float(A.sum() - 0.5 * _sq(R.T @ difference_coef(A, p.y_index, L)))
    if name == "lee_lin_wahba":
        A = np.where(positives, 0.0, np.clip(a, 0.0, C))
        if sol.intercept is not None:
            A = _balanced(A, sol)
        centred = A - A.mean(axis=1, keepdims=True)
        return float(A.sum() / (L - 1) - 0.5 * _sq(R.T @ centred))
    if name == "mprot_static":
        assigned = sol.extras["prototype_index"]
        q = sol.extras["n_prototypes"]
        proto_class = np.repeat(np.arange(L), q)
        is_negative = negatives(p.y_index, proto_class.size, proto_class)
        A = np.where(is_negative, np.clip(a, 0.0, None), 0.0)
        A = _budget(A, np.ones_like(A), budget)
        if sol.intercept is not None:
            A = _balanced(A, sol, budget)
        s = A.sum(axis=1)
        A[np.arange(p.n_samples), assigned] = s  # alpha_i^{y_i} = sum_{r in N_i} alpha_i^r
        signs = np.where(is_negative, -1.0, 1.0)
        return float(s.sum() - 0.5 * _sq(R.T @ (signs * A)))
    if name == "simplex_hinge":
        Yc = simplex_code(L)[p.y_index]
        A = np.clip(a, 0.0, budget)
        if sol.intercept is not None:
            A = _balanced(A, sol)
        return float(A.sum() - 0.5 * _sq(R.T @ (A[:, None] * Yc)))
    if name == "simplex_square":
        Yc = simplex_code(L)[p.y_index]
        # the dual variable is 2C (y_i - f(x_i)) at the optimum: a primal carries no multipliers
        A = a if sol.form == "dual" else 2.0 * C * (Yc - sol.training_outputs())
        if sol.intercept is not None:  # sum_i a_i = 0: no box, the least-norm correction
            keep = np.ones(p.n_samples, bool) if p.sample_weight is None else p.sample_weight > 0
            A = np.where(keep[:, None], A - A[keep].mean(axis=0), 0.0)
        if p.sample_weight is None:
            return float(np.sum(A * Yc) - _sq(A) / (4.0 * C) - 0.5 * _sq(R.T @ A))
        positive = p.sample_weight > 0  # a_i = 0 where s_i = 0; ||a_i||^2 / (4 C s_i) elsewhere
        A = np.where(positive[:, None], A, 0.0)
        penalty = np.sum(A[positive] ** 2 / (4.0 * C[positive]))
        return float(np.sum(A * Yc) - penalty - 0.5 * _sq(R.T @ A))
    if name == "logistic":
        s = p.pattern_weights()
        E = s[:, None] * one_hot(p.y_index, L)
        # at the optimum row i of P holds s_i times the softmax probabilities of the outputs
        P = a if sol.form == "dual" else s[:, None] * softmax(sol.training_outputs(), axis=1)
        P = _balanced_probabilities(P, p.y_index, L, s)
        entropy = entr(P).sum() - entr(s).sum()  # the second term is 0 without weights
        return float(p.C * entropy - 0.5 * p.C**2 * _sq(R.T @ (P - E)))
    raise ValueError(f"No dual objective for formulation {name!r}.")


# -- primal points ------------------------------------------------------------------------------

# Safety factor on the margin scaling: margins computed in float64 carry relative errors of
# order N eps; 1e-10 on top keeps the scaled point feasible and changes the value by 2e-10.
_MARGIN_SAFETY = 1e-10


def _zero_loss_scale(sol: Solution) -> float | None:
    """The least s >= 1 (with a safety factor) such that s (W, b) has zero loss, for the hinge
    machines whose margins scale with (W, b); None where there is none."""
    p, name = sol.problem, sol.formulation
    F = sol.training_outputs()
    floors = np.empty(0)
    if name in ("inhibitory", "one_vs_all"):  # y_ij f_j(x_i) >= 1
        ratios = (p.Y * F).ravel()
    elif name in ("weston_watkins", "sum_svm", "max_svm", "crammer_singer"):
        gaps = F[np.arange(p.n_samples), p.y_index][:, None] - F  # f_y - f_j
        mask = negatives(p.y_index, p.n_classes)
        target = np.full(F.shape, float(sol.extras.get("margin", 1.0)))
        if name == "crammer_singer" and sol.extras["rescaling"] == "margin":
            target = sol.extras["cost"][p.y_index]  # f_y - f_j >= Delta_ij (0: f_y >= f_j)
        floors = gaps[mask & (target <= 0)]
        mask &= target > 0
        ratios = gaps[mask] / target[mask]
    elif name == "lee_lin_wahba":  # -f_j(x_i) >= 1/(L-1), outputs already centred
        ratios = -F[negatives(p.y_index, p.n_classes)] * (p.n_classes - 1)
    elif name == "mprot_static":  # f_{y_i}(x_i) - max_{r in N_i} f_r(x_i) >= 1
        classes = np.repeat(np.arange(p.n_classes), sol.extras["n_prototypes"])
        rival = np.where(negatives(p.y_index, classes.size, classes), F, -np.inf).max(axis=1)
        ratios = F[np.arange(p.n_samples), sol.extras["prototype_index"]] - rival
    elif name == "simplex_hinge":  # <y_i, f(x_i)> >= 1
        ratios = np.einsum("ij,ij->i", simplex_code(p.n_classes)[p.y_index], F)
    else:
        return None
    smallest = ratios.min(initial=np.inf)
    if not (0 < smallest < np.inf) or np.any(floors < 0):
        return None
    return max(1.0, 1.0 / (smallest * (1.0 - _MARGIN_SAFETY)))


def _common_mode_free(sol: Solution) -> bool:
    return sol.formulation == "inhibitory" and np.isinf(sol.extras.get("mu", 0.0))


def upper_bound(sol: Solution) -> float:
    """The canonical primal value at a primal-feasible point built from the solution's weights."""
    from msvm.reference.values import primal_value

    p = sol.problem
    if sol.formulation == "lee_lin_wahba":  # project onto sum_j f_j(x_i) = 0: W (I - 11^T / L)
        W = sol.weights - sol.weights.mean(axis=1, keepdims=True)
        coef = sol.coef - sol.coef.mean(axis=1, keepdims=True)
        b = None if sol.intercept is None else sol.intercept - sol.intercept.mean()
        sol = dataclasses.replace(sol, weights=W, coef=coef, intercept=b)
    norm_sq = sol.norm_sq
    if _common_mode_free(sol):  # 1/2 ||W (I - 11^T / L)||^2 + C sum_ij [1 - y_ij (R W)_ij]_+
        norm_sq = _sq(sol.weights - sol.weights.mean(axis=1, keepdims=True))
        loss = objectives.hinge_per_class_loss(sol.training_outputs(), p.y_index)
        value = objectives.canonical_objective(norm_sq, loss, p.C)
    else:
        value = primal_value(sol)
    s = _zero_loss_scale(sol)
    if s is not None:
        value = min(value, 0.5 * norm_sq * s**2)
    return float(value)


def loss_at_zero(sol: Solution) -> float:
    """sum_i s_i loss_i(0): the training loss of the outputs F = 0 (W = 0, no bias)."""
    from msvm.reference.values import training_loss

    zero = dataclasses.replace(
        sol, weights=np.zeros_like(sol.weights), coef=np.zeros_like(sol.coef), intercept=None
    )
    return float(training_loss(zero))


# -- the check ------------------------------------------------------------------------------------


def certify(sol: Solution, rtol: float = RTOL) -> Solution:
    """Attach a :class:`Certificate` to ``sol``, or raise :class:`NotSolvedError` if it fails."""
    start = time.perf_counter()
    with np.errstate(all="ignore"):
        upper, lower = upper_bound(sol), lower_bound(sol)
        floor = ZERO_OPTIMUM * min(sol.problem.C, 1.0) * loss_at_zero(sol)
    cert = Certificate(
        lower=lower, upper=upper, rtol=rtol, time=time.perf_counter() - start, floor=floor
    )
    slack = rtol * cert.scale
    reported = rtol * max(cert.scale, cert.floor)  # (the reported value's own rounding)
    ok = (
        np.isfinite(upper)
        and np.isfinite(lower)
        and np.isfinite(sol.objective)
        and cert.gap <= slack
        and lower - reported <= sol.objective <= upper + reported
    )
    if not ok:
        advice = "Rescale the kernel, or try another solver."
        if sol.problem.C > 1e6:
            advice = (
                f"At C = {sol.problem.C:g} the loss outweighs the regulariser by that factor, "
                "which interior-point solvers cannot resolve in float64: lower C (once C exceeds "
                "every multiplier of a hard-margin machine its solution no longer changes), "
                "rescale the kernel, or try another solver."
            )
        raise NotSolvedError(
            f"{sol.solver} returned {sol.formulation} ({sol.form}, status {sol.status!r}) "
            f"with objective {sol.objective:.10g}, but its optimality is not certified: weak "
            f"duality puts the optimum in [{lower:.10g}, {upper:.10g}] (dual objective at its "
            f"dual point, primal value at its weights), a gap of {cert.gap:.3g} "
            f"({cert.relative_gap:.3g} relative) against the tolerance {rtol:g}, or the "
            f"objective lies outside it.  {advice}"
        )
    sol.extras["certificate"] = cert
    return sol
