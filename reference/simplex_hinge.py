"""Simplex-coded hinge loss SVM (Mroueh, Poggio, Rosasco & Slotine 2011, §1.3).

Classes are coded by the simplex code vectors a_1..a_T in R^{T-1} (Definition 1.1, recursion
1.1); y_i = a_{class of x_i}.  The Tikhonov problem

    min_f (1/n) sum_i max(0, 1 - <y_i, f(x_i)>) + lambda/2 ||f||_H^2

is, with C = 1/(n lambda), the canonical 1/2 ||f||^2 + C sum_i max(0, 1 - <y_i, f(x_i)>).  Its
dual is the box-constrained QP printed in §1.3,

    max_alpha sum_i alpha_i - 1/2 alpha^T Q alpha,  0 <= alpha_i <= 1/(n lambda) = C,
    Q_ij = K(x_i, x_j) y_i^T y_j,   c_k = alpha_k y_k,   f(x) = sum_k k(x, x_k) c_k

and a point is decoded by D(f(x)) = argmax_t <f(x), a_t>.

``fit_intercept=True`` adds a bias b in R^{T-1}, f(x) = sum_k k(x, x_k) c_k + b; stationarity in b
adds sum_i alpha_i y_i = 0 to the dual (T - 1 conditions), and b is their multiplier.  The class
scores then carry <b, a_t>, which sum to zero over t as the scores do.
"""

from __future__ import annotations

import numpy as np

from msvm.core.coding import simplex_code
from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    add_bias,
    certified,
    hard_margin_fallback,
    solve,
    solved_by,
)

NAME = "simplex_hinge"


def code_vectors(p: Problem) -> tuple[np.ndarray, np.ndarray]:
    """The simplex code (T x (T-1)) and the code vector y_i of each pattern (N x (T-1))."""
    code = simplex_code(p.n_classes)
    return code, code[p.y_index]


def decoder(code: np.ndarray):
    """Class scores <f(x), a_t> for the decoding D(f(x)) = argmax_t <f(x), a_t>."""

    def scores(raw: np.ndarray) -> np.ndarray:
        return raw @ code.T

    return scores


def lam_from_C(C: float, n_samples: int) -> float:
    """The paper's lambda for a canonical C: C = 1/(n lambda)."""
    return 1.0 / (n_samples * C)


def gram_Q(p: Problem) -> np.ndarray:
    """Q_ij = K_ij y_i^T y_j."""
    _, Yc = code_vectors(p)
    return p.K * (Yc @ Yc.T)


@hard_margin_fallback
def primal(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """The simplex hinge primal on the canonical scale (f = R W (+ b), ||f||_H = ||W||_F);
    weighted, the loss is C sum_i s_i xi_i."""
    import cvxpy as cp

    code, Yc = code_vectors(p)
    W = cp.Variable((p.R.shape[1], code.shape[1]))
    xi = cp.Variable(p.n_samples)
    b = cp.Variable(code.shape[1]) if fit_intercept else None
    F = add_bias(p.R @ W, b)
    margin = cp.sum(cp.multiply(Yc, F), axis=1) >= 1 - xi  # <y_i, f(x_i)> >= 1 - xi_i
    objective = cp.Minimize(0.5 * cp.sum_squares(W) + p.loss_sum(xi))
    problem, elapsed = solve(objective, [xi >= 0, margin], solver)
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W.value),
            problem=p,
            weights=W.value,
            intercept=None if b is None else b.value,
            dual_coef=margin.dual_value,
            scores=decoder(code),
            **solved_by(problem),
            solve_time=elapsed,
        )
    )


@hard_margin_fallback
def dual(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """The box-constrained dual of §1.3 (alpha^T Q alpha written as ||R^T (alpha o Y)||^2);
    weighted, 0 <= alpha_i <= C s_i; with ``fit_intercept``, sum_i alpha_i y_i = 0."""
    import cvxpy as cp

    code, Yc = code_vectors(p)
    alpha = cp.Variable(p.n_samples)
    quadratic = 0.5 * cp.sum_squares(p.R.T @ cp.multiply(alpha[:, None], Yc))
    constraints = [alpha >= 0, alpha <= p.budget()]
    balance = Yc.T @ alpha == 0
    if fit_intercept:
        constraints.append(balance)
    problem, elapsed = solve(cp.Maximize(cp.sum(alpha) - quadratic), constraints, solver)
    coef = alpha.value[:, None] * Yc  # c_k = alpha_k y_k
    return certified(
        Solution(
            formulation=NAME,
            form="dual",
            objective=problem.value,
            coef=coef,
            problem=p,
            weights=p.R.T @ coef,
            intercept=balance.dual_value if fit_intercept else None,
            dual_coef=alpha.value,
            scores=decoder(code),
            **solved_by(problem),
            solve_time=elapsed,
        )
    )
