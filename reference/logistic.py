"""Regularised multiclass logistic regression (Giselsson, "Multiclass logistic regression",
"Regularization"), with an unpenalised bias.

Lecture form:  minimise sum_i [log sum_j exp(m_j(x_i)) - m_{y_i}(x_i)] + lambda/2 sum_j ||w_j||^2
with m_j(x) = <w_j, phi(x)> + b_j; canonical form (C = 1/lambda): 1/2 ||W||^2 + C sum_i loss_i.

Dual, derived here.  With u_i = W^T r_i + b and multipliers beta_i on that equality, the conjugate
of h_i(u) = logsumexp(u) - u_{y_i} is h_i*(beta) = sum_j p_j log p_j on p = beta + e_{y_i} in the
simplex.  Writing beta_i = C (p_i - e_{y_i}):

    maximise  C sum_ij entr(p_ij) - C^2/2 ||R^T (P - E)||_F^2
    s.t.      p_i in the probability simplex,   sum_i (p_i - e_{y_i}) = 0   (from the free bias)

with W = C R^T (E - P), i.e. B = C (E - P); at the optimum P holds the softmax probabilities and
the bias is the multiplier of the balance constraint.  The bias is unique only up to a common
shift (softmax ignores it); both forms report it centred to sum 0.
"""

from __future__ import annotations

from msvm.core.coding import one_hot
from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    add_bias,
    certified,
    check_solver,
    solve,
)

NAME = "logistic"


def _check_exp_cone_solver(solver: str) -> str:
    name = check_solver(solver)
    if name in ("OSQP",):
        raise ValueError(
            f"{name} solves quadratic programs only; logistic regression needs an exponential-cone "
            "solver such as CLARABEL or SCS."
        )
    return name


def primal(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The canonical-scale logistic regression primal (bias free of the penalty)."""
    import cvxpy as cp

    p.refuse_weights(NAME)

    _check_exp_cone_solver(solver)
    L = p.n_classes
    W, b = cp.Variable((p.R.shape[1], L)), cp.Variable(L)
    m = add_bias(p.R @ W, b)  # m_j(x_i) = <w_j, phi(x_i)> + b_j
    loss = cp.sum(cp.log_sum_exp(m, axis=1)) - cp.sum(cp.multiply(one_hot(p.y_index, L), m))
    problem, elapsed = solve(cp.Minimize(0.5 * cp.sum_squares(W) + p.C * loss), [], solver)
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W.value),
            problem=p,
            weights=W.value,
            intercept=b.value - b.value.mean(),
            solver=solver,
            solve_time=elapsed,
        )
    )


def dual(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The entropy-regularised dual derived above."""
    import cvxpy as cp

    p.refuse_weights(NAME)

    _check_exp_cone_solver(solver)
    L = p.n_classes
    E = one_hot(p.y_index, L)
    P = cp.Variable((p.n_samples, L))
    objective = cp.Maximize(p.C * cp.sum(cp.entr(P)) - p.C**2 / 2 * cp.sum_squares(p.R.T @ (P - E)))
    balance = cp.sum(P - E, axis=0) == 0
    problem, elapsed = solve(objective, [cp.sum(P, axis=1) == 1, P >= 0, balance], solver)
    coef = p.C * (E - P.value)
    b = -balance.dual_value / p.C
    return certified(
        Solution(
            formulation=NAME,
            form="dual",
            objective=problem.value,
            coef=coef,
            problem=p,
            weights=p.R.T @ coef,
            intercept=b - b.mean(),
            dual_coef=P.value,
            solver=solver,
            solve_time=elapsed,
        )
    )
