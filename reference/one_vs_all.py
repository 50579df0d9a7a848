"""The "1-versus-all" machine of ISVM §9: L independent binary SVMs, without bias (as in the
paper) or with one bias per class (``fit_intercept=True``).

Each class j has its own binary problem (class j against the rest, labels y_ij of ISVM 3.1):

    minimise_{w_j} 1/2 ||w_j||^2 + C sum_i max(0, 1 - y_ij <w_j, phi(x_i)>)

and the machine minimises their sum; with a bias, f_j = <w_j, phi> + b_j.  Its dual is the sum of
the L binary duals,

    maximise sum_j [ sum_i alpha_ij - 1/2 (alpha_j o y_j)^T K (alpha_j o y_j) ],  0 <= alpha <= C

i.e. the multiclass kernel K(x_i, x_i') I(j = j') of ISVM §9; with a bias, stationarity in b_j
adds each binary SVM's equality sum_i alpha_ij y_ij = 0 (the constraint ISVM §7 says the
inhibition makes avoidable), and b_j is its multiplier.  It is the inhibitory machine at
mu = 0 (ISVM 3.5); this module states it separately, class by class, so that the equality is a
check and not an identity of code.
"""

from __future__ import annotations

import numpy as np

from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    certified,
    hard_margin_fallback,
    solve,
    solved_by,
)

NAME = "one_vs_all"


@hard_margin_fallback
def primal(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """Sum over classes of the binary soft-margin SVM primals (with ``fit_intercept``, each with
    its bias b_j); weighted, each class's loss is C sum_i s_i eta_ij."""
    import cvxpy as cp

    classes = range(p.n_classes)
    ws = [cp.Variable(p.R.shape[1]) for _ in classes]
    b = cp.Variable(p.n_classes) if fit_intercept else np.zeros(p.n_classes)
    etas = [cp.Variable(p.n_samples) for _ in classes]
    margins = [cp.multiply(p.Y[:, j], p.R @ ws[j] + b[j]) >= 1 - etas[j] for j in classes]
    objective = sum(0.5 * cp.sum_squares(ws[j]) + p.loss_sum(etas[j]) for j in classes)
    constraints = margins + [eta >= 0 for eta in etas]
    problem, elapsed = solve(cp.Minimize(objective), constraints, solver)
    W = np.column_stack([w.value for w in ws])
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W),
            problem=p,
            weights=W,
            intercept=b.value if fit_intercept else None,
            dual_coef=np.column_stack([m.dual_value for m in margins]),
            **solved_by(problem),
            solve_time=elapsed,
        )
    )


def coef_from_dual(p: Problem, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coef, weights) of dual variables ``alpha``: w_j = sum_i alpha_ij y_ij phi(x_i), class j's
    binary SVM, so coef = alpha o Y and the weights in factor space R^T coef."""
    coef = alpha * p.Y
    return coef, p.R.T @ coef


@hard_margin_fallback
def dual(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """Sum over classes of the binary SVM duals (without a bias, no equality constraint; with
    one, sum_i alpha_ij y_ij = 0 for each class j); weighted, the box is 0 <= alpha_ij <= C s_i."""
    import cvxpy as cp

    alphas = [cp.Variable(p.n_samples) for _ in range(p.n_classes)]
    objective = sum(
        cp.sum(a) - 0.5 * cp.sum_squares(p.R.T @ cp.multiply(a, p.Y[:, j]))
        for j, a in enumerate(alphas)
    )
    constraints = [c for a in alphas for c in (a >= 0, a <= p.budget())]
    balances = [a @ p.Y[:, j] == 0 for j, a in enumerate(alphas)]
    if fit_intercept:
        constraints += balances
    problem, elapsed = solve(cp.Maximize(objective), constraints, solver)
    A = np.column_stack([a.value for a in alphas])
    coef, weights = coef_from_dual(p, A)
    return certified(
        Solution(
            formulation=NAME,
            form="dual",
            objective=problem.value,
            coef=coef,
            problem=p,
            weights=weights,
            intercept=np.array([c.dual_value for c in balances]) if fit_intercept else None,
            dual_coef=A,
            **solved_by(problem),
            solve_time=elapsed,
        )
    )
