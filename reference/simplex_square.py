"""Simplex-coded square loss (Mroueh, Poggio, Rosasco & Slotine 2011, §1.3).

    min_f (1/n) sum_i ||y_i - f(x_i)||^2 + lambda/2 ||f||_H^2

is, with C = 1/(n lambda), the canonical 1/2 ||f||^2 + C sum_i ||y_i - f(x_i)||^2.  Setting the
gradient in the coefficients C (f = sum_j k(., x_j) c_j) to zero gives the printed closed form

    (K + (n lambda / 2) I) C = Y,   i.e.   (K + I / (2C)) B = Y.

The Lagrangian dual, derived here (conjugate of C ||y - u||^2 is <a, y> + ||a||^2 / (4C)):

    max_A  sum_i <a_i, y_i> - ||A||_F^2 / (4C) - 1/2 tr(A^T K A),     B = A

whose stationarity condition is the closed form again.  Decoding: argmax_t <f(x), a_t>.

With sample weights s_i the loss is C sum_i s_i ||y_i - f(x_i)||^2; the conjugate of its term
is <a, y> + ||a||^2 / (4 C s_i) for s_i > 0 and forces a_i = 0 for s_i = 0, so the dual is

    max_A  sum_i <a_i, y_i> - sum_{s_i > 0} ||a_i||^2 / (4 C s_i) - 1/2 tr(A^T K A)

with a_i = 0 where s_i = 0,

and the closed form (K_PP + diag(1 / (2 C s_P))) B_P = Y_P on the patterns P of positive weight.

``fit_intercept=True`` adds a bias b in R^{T-1} (f = sum_k k(., x_k) c_k + b, not penalised).
Stationarity in b adds sum_i a_i = 0 to the dual (b is its multiplier), and the closed form
becomes the bordered system of a least-squares SVM,

    [ K_PP + diag(1 / (2 C s_P))   1 ] [ B_P ]   [ Y_P ]
    [ 1^T                          0 ] [ b^T ] = [  0  ],

solved with G = K_PP + diag(1 / (2 C s_P)) as b^T = (1^T G^-1 Y_P) / (1^T G^-1 1),
B_P = G^-1 (Y_P - 1 b^T).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from msvm.core import objectives
from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    add_bias,
    certified,
    solve,
    solved_by,
)
from msvm.reference.simplex_hinge import code_vectors, decoder

NAME = "simplex_square"


def primal(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """The square-loss primal on the canonical scale; weighted, C sum_i s_i ||y_i - f(x_i)||^2;
    ``fit_intercept``: f = R W + b."""
    import cvxpy as cp

    code, Yc = code_vectors(p)
    W = cp.Variable((p.R.shape[1], code.shape[1]))
    b = cp.Variable(code.shape[1]) if fit_intercept else None
    residual = Yc - add_bias(p.R @ W, b)
    if p.sample_weight is not None:  # s_i ||r_i||^2 = ||sqrt(s_i) r_i||^2
        residual = cp.multiply(np.sqrt(p.sample_weight)[:, None], residual)
    objective = cp.Minimize(0.5 * cp.sum_squares(W) + p.C * cp.sum_squares(residual))
    problem, elapsed = solve(objective, [], solver)
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W.value),
            problem=p,
            weights=W.value,
            intercept=None if b is None else b.value,
            scores=decoder(code),
            **solved_by(problem),
            solve_time=elapsed,
        )
    )


def dual(p: Problem, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER) -> Solution:
    """The Lagrangian dual derived above (weighted, and with ``fit_intercept`` sum_i a_i = 0:
    module docstring)."""
    import cvxpy as cp

    code, Yc = code_vectors(p)
    A = cp.Variable((p.n_samples, code.shape[1]))
    constraints = []
    if p.sample_weight is None:
        penalty = cp.sum_squares(A) / (4 * p.C)
    else:
        s = p.sample_weight
        scale = np.where(s > 0, 1.0 / np.sqrt(4 * p.C * np.where(s > 0, s, 1.0)), 0.0)
        penalty = cp.sum_squares(cp.multiply(scale[:, None], A))  # sum ||a_i||^2 / (4 C s_i)
        if np.any(s == 0):
            constraints = [A[s == 0] == 0]
    objective = cp.Maximize(cp.sum(cp.multiply(A, Yc)) - penalty - 0.5 * cp.sum_squares(p.R.T @ A))
    balance = cp.sum(A, axis=0) == 0
    if fit_intercept:
        constraints = [*constraints, balance]
    problem, elapsed = solve(objective, constraints, solver)
    return certified(
        Solution(
            formulation=NAME,
            form="dual",
            objective=problem.value,
            coef=A.value,
            problem=p,
            weights=p.R.T @ A.value,
            intercept=balance.dual_value if fit_intercept else None,
            dual_coef=A.value,
            scores=decoder(code),
            **solved_by(problem),
            solve_time=elapsed,
        )
    )


def closed_form(p: Problem, fit_intercept: bool = False) -> Solution:
    """Simplex §1.3's closed form (K + (n lambda/2) I) C = Y, solved directly (no cvxpy);
    weighted, on the patterns of positive weight, and with ``fit_intercept`` the bordered
    system (module docstring)."""
    code, Yc = code_vectors(p)
    s = np.ones(p.n_samples) if p.sample_weight is None else p.sample_weight
    P = np.flatnonzero(s > 0)
    G = p.K[np.ix_(P, P)] + np.diag(1.0 / (2 * p.C * s[P]))
    factor = scipy.linalg.cho_factor(G)
    b = np.zeros(code.shape[1])
    if fit_intercept:  # b^T = 1^T G^-1 Y / 1^T G^-1 1
        g = scipy.linalg.cho_solve(factor, np.ones(P.size))
        b = g @ Yc[P] / g.sum()
    coef = np.zeros_like(Yc)
    coef[P] = scipy.linalg.cho_solve(factor, Yc[P] - b)
    weights = p.R.T @ coef
    loss = objectives.simplex_square_loss(p.K @ coef + b, Yc, p.sample_weight)
    return certified(
        Solution(
            formulation=NAME,
            form="closed_form",
            objective=objectives.canonical_objective(np.sum(weights**2), loss, p.C),
            coef=coef,
            problem=p,
            weights=weights,
            intercept=b if fit_intercept else None,
            scores=decoder(code),
            solver="scipy.linalg.cho_solve",
        )
    )
