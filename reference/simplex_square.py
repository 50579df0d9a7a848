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
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from msvm.core import objectives
from msvm.reference.problem import DEFAULT_SOLVER, Problem, Solution, certified, solve
from msvm.reference.simplex_hinge import code_vectors, decoder

NAME = "simplex_square"


def primal(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The square-loss primal on the canonical scale; weighted, C sum_i s_i ||y_i - f(x_i)||^2."""
    import cvxpy as cp

    code, Yc = code_vectors(p)
    W = cp.Variable((p.R.shape[1], code.shape[1]))
    residual = Yc - p.R @ W
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
            scores=decoder(code),
            solver=solver,
            solve_time=elapsed,
        )
    )


def dual(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The Lagrangian dual derived above (weighted: module docstring)."""
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
    problem, elapsed = solve(objective, constraints, solver)
    return certified(
        Solution(
            formulation=NAME,
            form="dual",
            objective=problem.value,
            coef=A.value,
            problem=p,
            weights=p.R.T @ A.value,
            dual_coef=A.value,
            scores=decoder(code),
            solver=solver,
            solve_time=elapsed,
        )
    )


def closed_form(p: Problem) -> Solution:
    """Simplex §1.3's closed form (K + (n lambda/2) I) C = Y, solved directly (no cvxpy);
    weighted, on the patterns of positive weight (module docstring)."""
    code, Yc = code_vectors(p)
    if p.sample_weight is None:
        coef = scipy.linalg.solve(p.K + np.eye(p.n_samples) / (2 * p.C), Yc, assume_a="pos")
    else:
        P = np.flatnonzero(p.sample_weight > 0)
        A = p.K[np.ix_(P, P)] + np.diag(1.0 / (2 * p.C * p.sample_weight[P]))
        coef = np.zeros_like(Yc)
        coef[P] = scipy.linalg.solve(A, Yc[P], assume_a="pos")
    weights = p.R.T @ coef
    loss = objectives.simplex_square_loss(p.K @ coef, Yc, p.sample_weight)
    return certified(
        Solution(
            formulation=NAME,
            form="closed_form",
            objective=objectives.canonical_objective(np.sum(weights**2), loss, p.C),
            coef=coef,
            problem=p,
            weights=weights,
            scores=decoder(code),
            solver="scipy.linalg.solve",
        )
    )
