"""The Crammer-Singer multiclass SVM (ISVM 5.2 / F.1; identical to MProt 4 with one prototype per
class) and the margin- and slack-rescaled variants of Tsochantaridis et al. (ISVM Table 1).

Primal, with a cost matrix Delta (L x L, zero diagonal; Delta = 1 - I is plain Crammer-Singer):

    minimise 1/2 ||w||^2 + C sum_i xi_i,    xi_i >= 0,  and for all j != y_i
      margin rescaling:  f_{y_i}(x_i) - f_j(x_i) >= Delta(y_i, j) - xi_i
      slack rescaling:   f_{y_i}(x_i) - f_j(x_i) >= 1 - xi_i / Delta(y_i, j)

MProt (4) writes the same problem with theta_i = max_{r != y_i} f_r(x_i); ISVM (F.1) includes the
constraint j = y_i, which only restates xi_i >= 0.

Dual, derived from it (alpha_ij >= 0 on the pairwise constraints; stationarity in xi_i gives the
per-pattern simplex constraint of ISVM F.3-F.4 / MProt 6):

    margin: maximise sum_ij Delta(y_i, j) alpha_ij - 1/2 tr(B^T K B),  sum_j alpha_ij <= C
    slack:  maximise sum_ij alpha_ij - 1/2 tr(B^T K B),  sum_j alpha_ij / Delta(y_i, j) <= C
    with alpha_ij >= 0, alpha_{i y_i} = 0 and B_ik = I(k = y_i) sum_j alpha_ij - alpha_ik.

``fit_intercept=True`` gives every class a bias, f_j = <w_j, phi> + b_j (as ISVM 5.1 does for
Weston-Watkins); stationarity in b adds sum_i B_i = 0 to the dual, and b is its multiplier
(unique up to a constant: only differences of outputs enter the constraints; the solution
reports the representative of mean zero, ``problem.centred``).
"""

from __future__ import annotations

import numpy as np

from msvm.reference.pairwise import coef_from_dual, difference_coef, differences, negatives
from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    add_bias,
    centred,
    certified,
    hard_margin_fallback,
    solve,
    solved_by,
)

NAME = "crammer_singer"
RESCALINGS = ("margin", "slack")


def check_cost(p: Problem, cost, rescaling: str) -> np.ndarray:
    """The cost matrix Delta, validated (default 1 - I)."""
    if rescaling not in RESCALINGS:
        raise ValueError(f"rescaling must be one of {RESCALINGS}, got {rescaling!r}.")
    L = p.n_classes
    if cost is None:
        return 1.0 - np.eye(L)
    Delta = np.asarray(cost, dtype=float)
    if Delta.shape != (L, L) or not np.all(np.isfinite(Delta)):
        raise ValueError(f"cost must be a finite {L} x {L} matrix, got shape {Delta.shape}.")
    off = ~np.eye(L, dtype=bool)
    if np.any(Delta[off] < 0) or (rescaling == "slack" and np.any(Delta[off] <= 0)):
        raise ValueError("cost must be >= 0 off the diagonal (> 0 for slack rescaling).")
    return Delta


@hard_margin_fallback
def primal(
    p: Problem,
    cost=None,
    rescaling: str = "margin",
    fit_intercept: bool = False,
    solver: str = DEFAULT_SOLVER,
) -> Solution:
    """ISVM (F.1) / MProt (4); with ``cost`` the Table 1 margin- or slack-rescaled problem.
    Weighted: the loss is C sum_i s_i xi_i."""
    import cvxpy as cp

    Delta = check_cost(p, cost, rescaling)
    L = p.n_classes
    rows, cols = np.nonzero(negatives(p.y_index, L))
    delta = Delta[p.y_index[rows], cols]
    W = cp.Variable((p.R.shape[1], L))
    xi = cp.Variable(p.n_samples)
    b = cp.Variable(L) if fit_intercept else None
    gap = differences(add_bias(p.R @ W, b), p.y_index, rows, cols)
    if rescaling == "margin":
        pairwise = gap >= delta - xi[rows]
    else:
        pairwise = gap >= 1 - cp.multiply(1.0 / delta, xi[rows])
    objective = cp.Minimize(0.5 * cp.sum_squares(W) + p.loss_sum(xi))
    problem, elapsed = solve(objective, [xi >= 0, pairwise], solver)
    alpha = np.zeros((p.n_samples, L))
    alpha[rows, cols] = pairwise.dual_value
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W.value),
            problem=p,
            weights=W.value,
            intercept=centred(None if b is None else b.value),
            dual_coef=alpha,
            **solved_by(problem),
            solve_time=elapsed,
            extras={"cost": Delta, "rescaling": rescaling},
        )
    )


@hard_margin_fallback
def dual(
    p: Problem,
    cost=None,
    rescaling: str = "margin",
    fit_intercept: bool = False,
    solver: str = DEFAULT_SOLVER,
) -> Solution:
    """The dual derived above (ISVM F.4 / MProt 6 for Delta = 1 - I); weighted, pattern i's
    budget is C s_i."""
    import cvxpy as cp

    Delta = check_cost(p, cost, rescaling)
    L = p.n_classes
    D = Delta[p.y_index]  # D_ij = Delta(y_i, j)
    positives = ~negatives(p.y_index, L)
    alpha = cp.Variable((p.n_samples, L))
    B = difference_coef(alpha, p.y_index, L)
    quadratic = 0.5 * cp.sum_squares(p.R.T @ B)
    if rescaling == "margin":
        objective = cp.Maximize(cp.sum(cp.multiply(D, alpha)) - quadratic)
        budget = cp.sum(alpha, axis=1) <= p.budget()
    else:
        inverse = np.where(positives, 0.0, 1.0 / np.where(positives, 1.0, D))
        objective = cp.Maximize(cp.sum(alpha) - quadratic)
        budget = cp.sum(cp.multiply(inverse, alpha), axis=1) <= p.budget()
    constraints = [alpha >= 0, alpha[positives] == 0, budget]
    balance = cp.sum(B, axis=0) == 0
    if fit_intercept:
        constraints.append(balance)
    problem, elapsed = solve(objective, constraints, solver)
    a = np.where(positives, 0.0, alpha.value)
    coef, weights = coef_from_dual(p, a)
    return certified(
        Solution(
            formulation=NAME,
            form="dual",
            objective=problem.value,
            coef=coef,
            problem=p,
            weights=weights,
            intercept=centred(balance.dual_value) if fit_intercept else None,
            dual_coef=a,
            **solved_by(problem),
            solve_time=elapsed,
            extras={"cost": Delta, "rescaling": rescaling},
        )
    )
