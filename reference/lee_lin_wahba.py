"""The Lee-Lin-Wahba multicategory SVM (ISVM Table 1; Lee, Lin & Wahba 2004), without bias (as
ISVM's table) or with Lee et al.'s biases (``fit_intercept=True``: f_j = <w_j, phi> + b_j with
sum_j b_j = 0, so that sum_j f_j = 0 everywhere).

Primal:

    minimise 1/2 ||w||^2 + C sum_i sum_{j != y_i} eta_ij
    s.t.     -f_j(x_i) >= 1/(L-1) - eta_ij,  eta_ij >= 0   (j != y_i)
             <w, Psi(x_i)> = sum_j f_j(x_i) = 0             (every i)

Dual, derived from it: with alpha_ij >= 0 on the margin constraints and nu on sum_j w_j = 0
(the training-point constraint is equivalent, since the optimal w lies in the span of the data),
stationarity gives w_j = -sum_i (alpha_ij - abar_i) phi(x_i), abar_i = (1/L) sum_j alpha_ij:

    maximise (1/(L-1)) sum_ij alpha_ij - 1/2 tr(B^T K B),   B = -alpha (I - 11^T / L)
    s.t.     0 <= alpha_ij <= C for j != y_i,  alpha_{i y_i} = 0

The per-pattern Hessian is K_ii (I - 11^T/L): the same structure as the inhibitory machine's.
With the biases, stationarity in b (with its multiplier on sum_j b_j = 0) adds

             sum_i B_i = 0,  i.e. every class's sum_i alpha_ij is the same,

and the bias is its multiplier, centred.
"""

from __future__ import annotations

import numpy as np

from msvm.reference.pairwise import negatives
from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    add_bias,
    certified,
    hard_margin_fallback,
    repeat_columns,
    solve,
    solved_by,
)

NAME = "lee_lin_wahba"


@hard_margin_fallback
def primal(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """ISVM Table 1, Lee et al. (2004): margin 1/(L-1) on the negatives, outputs summing to 0.
    Weighted: the loss is C sum_i s_i sum_{j != y_i} eta_ij; ``fit_intercept``: biases
    summing to 0."""
    import cvxpy as cp

    L = p.n_classes
    rows, cols = np.nonzero(negatives(p.y_index, L))
    W = cp.Variable((p.R.shape[1], L))
    eta = cp.Variable(rows.size)
    b = cp.Variable(L) if fit_intercept else None
    F = add_bias(p.R @ W, b)
    margin = -F[rows, cols] >= 1.0 / (L - 1) - eta
    sum_to_zero = [cp.sum(F, axis=1) == 0] + ([cp.sum(b) == 0] if fit_intercept else [])
    objective = cp.Minimize(0.5 * cp.sum_squares(W) + p.loss_sum(eta, rows))
    problem, elapsed = solve(objective, [eta >= 0, margin, *sum_to_zero], solver)
    alpha = np.zeros((p.n_samples, L))
    alpha[rows, cols] = margin.dual_value
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W.value),
            problem=p,
            weights=W.value,
            intercept=None if b is None else b.value,
            dual_coef=alpha,
            **solved_by(problem),
            solve_time=elapsed,
        )
    )


def coef_from_dual(p: Problem, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coef, weights) of dual variables ``alpha`` (alpha_iy = 0): w = -R^T alpha (I - 11^T / L),
    the outputs K coef with coef = -alpha (I - 11^T / L)."""
    L = p.n_classes
    coef = -alpha @ (np.eye(L) - np.ones((L, L)) / L)
    return coef, p.R.T @ coef


@hard_margin_fallback
def dual(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """The Lee-Lin-Wahba dual derived above; weighted, 0 <= alpha_ij <= C s_i; with
    ``fit_intercept``, sum_i B_i = 0."""
    import cvxpy as cp

    L = p.n_classes
    centre = np.eye(L) - np.ones((L, L)) / L
    positives = ~negatives(p.y_index, L)
    alpha = cp.Variable((p.n_samples, L))
    row_mean = cp.Variable(p.n_samples)  # abar_i, kept as a variable so the problem stays sparse
    W = -p.R.T @ (alpha - repeat_columns(row_mean, L))  # -R^T alpha (I - 11^T / L)
    objective = cp.Maximize(cp.sum(alpha) / (L - 1) - 0.5 * cp.sum_squares(W))
    constraints = [row_mean == cp.sum(alpha, axis=1) / L]
    constraints += [alpha >= 0, alpha <= p.box(), alpha[positives] == 0]
    column_sum = cp.sum(alpha, axis=0)
    balance = column_sum - cp.sum(column_sum) / L == 0  # -sum_i B_i
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
            intercept=-centre @ balance.dual_value if fit_intercept else None,
            dual_coef=a,
            **solved_by(problem),
            solve_time=elapsed,
        )
    )
