"""The Weston-Watkins multiclass SVM (ISVM 5.1 with biases; ISVM E.1 without).

Primal, with margin m (ISVM 5.1 prints m = 2; appendix E and the Lecture's Sum-SVM use m = 1,
the default here):

    minimise 1/2 ||w||^2 + C sum_i sum_{j != y_i} eta_ij
    s.t.     f_{y_i}(x_i) - f_j(x_i) >= m - eta_ij,   eta_ij >= 0,      f_j = <w_j, phi> (+ b_j)

Dual, derived from it (Lagrangian with alpha_ij >= 0 on the margin constraints; stationarity in
eta gives alpha_ij <= C, in w gives ISVM E.2, in b gives sum_i B_ik = 0):

    maximise m sum_ij alpha_ij - 1/2 tr(B^T K B),  B_ik = I(k = y_i) sum_j alpha_ij - alpha_ik
    s.t.     0 <= alpha_ij <= C for j != y_i,   alpha_{i y_i} = 0,   [sum_i B_ik = 0 for all k]

The biases are unique up to a constant (only differences of outputs enter); solutions report
the representative of mean zero.  ``tr(B^T K B)`` is the quadratic form of appendix E's kernel
G_{ijj'} in its first (unsimplified) line; ``printed_kernel`` builds both lines of the printed
kernel for comparison.
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

NAME = "weston_watkins"


def check_margin(margin: float) -> float:
    """The margin m of the constraints f_y - f_j >= m: a finite number > 0 (at m <= 0 the
    optimum is W = 0 at objective 0, which no relative gap certifies)."""
    if not (np.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a finite number > 0, got {margin!r}.")
    return float(margin)


@hard_margin_fallback
def primal(
    p: Problem, fit_intercept: bool = False, margin: float = 1.0, solver: str = DEFAULT_SOLVER
) -> Solution:
    """ISVM (5.1) (``fit_intercept=True``) or (E.1) (``fit_intercept=False``); weighted, the
    loss is C sum_i s_i sum_{j != y_i} eta_ij."""
    import cvxpy as cp

    margin = check_margin(margin)

    L = p.n_classes
    rows, cols = np.nonzero(negatives(p.y_index, L))
    W = cp.Variable((p.R.shape[1], L))
    b = cp.Variable(L) if fit_intercept else None
    eta = cp.Variable(rows.size)
    F = add_bias(p.R @ W, b)
    regulariser = 0.5 * cp.sum_squares(W)
    pairwise = differences(F, p.y_index, rows, cols) >= margin - eta
    problem, elapsed = solve(
        cp.Minimize(regulariser + p.loss_sum(eta, rows)), [eta >= 0, pairwise], solver
    )
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
            extras={"margin": margin},
        )
    )


@hard_margin_fallback
def dual(
    p: Problem, fit_intercept: bool = False, margin: float = 1.0, solver: str = DEFAULT_SOLVER
) -> Solution:
    """The Weston-Watkins dual derived above; the bias is the multiplier of sum_i B_ik = 0.
    Weighted: 0 <= alpha_ij <= C s_i."""
    import cvxpy as cp

    margin = check_margin(margin)

    L = p.n_classes
    alpha = cp.Variable((p.n_samples, L))
    B = difference_coef(alpha, p.y_index, L)
    objective = cp.Maximize(margin * cp.sum(alpha) - 0.5 * cp.sum_squares(p.R.T @ B))
    positives = ~negatives(p.y_index, L)
    constraints = [alpha >= 0, alpha <= p.box(), alpha[positives] == 0]
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
            extras={"margin": margin},
        )
    )


def printed_kernel(p: Problem, simplified: bool = False) -> np.ndarray:
    """ISVM appendix E's Weston-Watkins dual kernel over the pairs (i, j), j in j*(i).

    First line:  G_ijj' = K_ii' (sum_k [y_i = k][y_i' = k] - [y_i = j'] - [y_i' = j] + I(j = j'))
    Second line (``simplified=True``): K_ii' (sum_k [y_i = k][y_i' = k] + I(j = j')).
    Rows and columns are ordered as ``np.nonzero(negatives(...))``.
    """
    rows, cols = np.nonzero(negatives(p.y_index, p.n_classes))
    y_of = p.y_index[rows]  # the class of the pattern of each pair
    factor = (y_of[:, None] == y_of[None, :]).astype(float) + (cols[:, None] == cols[None, :])
    if not simplified:
        factor -= y_of[:, None] == cols[None, :]
        factor -= cols[:, None] == y_of[None, :]
    return p.K[np.ix_(rows, rows)] * factor
