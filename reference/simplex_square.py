"""Simplex-coded square loss (Mroueh, Poggio, Rosasco & Slotine 2011, §1.3).

    min_f (1/n) sum_i ||y_i - f(x_i)||^2 + lambda/2 ||f||_H^2

is, with C = 1/(n lambda), the canonical 1/2 ||f||^2 + C sum_i ||y_i - f(x_i)||^2.  Setting the
gradient in the coefficients C (f = sum_j k(., x_j) c_j) to zero gives the printed closed form

    (K + (n lambda / 2) I) C = Y,   i.e.   (K + I / (2C)) B = Y.

The Lagrangian dual, derived here (conjugate of C ||y - u||^2 is <a, y> + ||a||^2 / (4C)):

    max_A  sum_i <a_i, y_i> - ||A||_F^2 / (4C) - 1/2 tr(A^T K A),     B = A

whose stationarity condition is the closed form again.  Decoding: argmax_t <f(x), a_t>.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from msvm.core import objectives
from msvm.reference.problem import DEFAULT_SOLVER, Problem, Solution, certified, solve
from msvm.reference.simplex_hinge import code_vectors, decoder

NAME = "simplex_square"


def primal(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The square-loss primal on the canonical scale."""
    import cvxpy as cp

    code, Yc = code_vectors(p)
    W = cp.Variable((p.R.shape[1], code.shape[1]))
    objective = cp.Minimize(0.5 * cp.sum_squares(W) + p.C * cp.sum_squares(Yc - p.R @ W))
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
    """The Lagrangian dual derived above."""
    import cvxpy as cp

    code, Yc = code_vectors(p)
    A = cp.Variable((p.n_samples, code.shape[1]))
    objective = cp.Maximize(
        cp.sum(cp.multiply(A, Yc)) - cp.sum_squares(A) / (4 * p.C) - 0.5 * cp.sum_squares(p.R.T @ A)
    )
    problem, elapsed = solve(objective, [], solver)
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
    """Simplex §1.3's closed form (K + (n lambda/2) I) C = Y, solved directly (no cvxpy)."""
    code, Yc = code_vectors(p)
    coef = scipy.linalg.solve(p.K + np.eye(p.n_samples) / (2 * p.C), Yc, assume_a="pos")
    weights = p.R.T @ coef
    loss = objectives.simplex_square_loss(p.K @ coef, Yc)
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
