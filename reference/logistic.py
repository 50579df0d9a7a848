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
the bias is the multiplier of the balance constraint.  ``dual`` states it with W a variable of its
own, maximise C sum_ij entr(p_ij) - 1/2 ||W||_F^2 s.t. W = C R^T (E - P): the same problem, on
which the cone solver is accurate near separable data at a large C, where the C^2-scaled quadratic
left it up to 2.6e-5 below the optimum.  The bias is unique only up to a common
shift (softmax ignores it); both forms report it centred to sum 0.

Weighted (``Problem(..., sample_weight=s)``): pattern i's term is s_i h_i, canonical scale
1/2 ||W||^2 + C sum_i s_i h_i(u_i) (Lecture form lambda/2 ||w||^2 + sum_i s_i loss_i).  The
conjugate of a scaled function is (s h)*(beta) = s h*(beta / s): with beta_i = C (q_i - s_i e_{y_i})
and q_i = s_i p_i in s_i times the simplex,

    (C s_i h_i)*(beta_i) = C s_i sum_j p_ij log p_ij = C sum_j q_ij log q_ij - C s_i log s_i,

so the dual is

    maximise  C sum_ij entr(q_ij) - C sum_i entr(s_i) - C^2/2 ||R^T (Q - S E)||_F^2
    s.t.      q_i >= 0,  sum_j q_ij = s_i,   sum_i (q_i - s_i e_{y_i}) = 0

(S = diag(s)) with B = C (S E - Q); at the optimum q_i = s_i softmax(u_i).  A pattern of weight
0 has q_i = 0 (the conjugate of the zero function is the indicator of {0}) and drops out.  The
free bias needs every class to carry weight: a class of total weight 0 would push its bias to
-infinity (the infimum is not attained), and the problem is refused with a ValueError.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.linalg
from scipy.special import entr, softmax

from msvm.core.coding import one_hot
from msvm.reference.problem import (
    DEFAULT_SOLVER,
    NotSolvedError,
    Problem,
    Solution,
    add_bias,
    certified,
    check_solver,
    solve,
    solved_by,
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


def check_class_weights(p: Problem) -> None:
    """ValueError if some class has total sample weight 0 (the bias has no minimiser)."""
    totals = np.bincount(p.y_index, weights=p.pattern_weights(), minlength=p.n_classes)
    if np.any(totals == 0):
        empty = p.classes[totals == 0].tolist()
        raise ValueError(
            f"Logistic regression with an unpenalised bias needs weight on every class; the "
            f"sample weights of class(es) {empty} sum to 0, which sends their bias to -infinity "
            "(no minimiser).  Drop the class or give its samples weight."
        )


def primal(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The canonical-scale logistic regression primal (bias free of the penalty); weighted, the
    loss is sum_i s_i [log sum_j exp(m_j(x_i)) - m_{y_i}(x_i)]."""
    import cvxpy as cp

    _check_exp_cone_solver(solver)
    check_class_weights(p)
    L = p.n_classes
    W, b = cp.Variable((p.R.shape[1], L)), cp.Variable(L)
    m = add_bias(p.R @ W, b)  # m_j(x_i) = <w_j, phi(x_i)> + b_j
    if p.sample_weight is None:
        loss = cp.sum(cp.log_sum_exp(m, axis=1)) - cp.sum(cp.multiply(one_hot(p.y_index, L), m))
    else:
        true_scores = cp.sum(cp.multiply(one_hot(p.y_index, L), m), axis=1)
        loss = p.weighted_sum(cp.log_sum_exp(m, axis=1) - true_scores)
    problem, elapsed = solve(cp.Minimize(0.5 * cp.sum_squares(W) + p.C * loss), [], solver)
    sol = Solution(
        formulation=NAME,
        form="primal",
        objective=problem.value,
        coef=p.coef_from_weights(W.value),
        problem=p,
        weights=W.value,
        intercept=b.value - b.value.mean(),
        **solved_by(problem),
        solve_time=elapsed,
    )
    return tightened(sol, primal_polished)


# Clarabel's own tolerance: a certified gap wider than this (relative) is the solver falling short
# of it, and Newton steps are tried (``tightened``).
TIGHT_GAP = 1e-9


def tightened(sol: Solution, polish) -> Solution:
    """``sol`` certified, or ``polish(sol)`` where the certificate refuses ``sol`` or leaves a
    gap above TIGHT_GAP and the polished point's is smaller.

    Near separable data at a large C the cone solver's answers are a little off, and each bound
    carries that error times C (the primal's lower bound is the dual at P = softmax(F), the
    dual's upper bound the primal at W = C R^T (E - P)): on 100 vehicle points at C = 1 000
    (linear) a primal 3e-11 from the optimum left a gap of 8e-6 and was refused, and on
    near-separable synthetic data the dual's gaps reached 2.6e-5.  Newton's method on the smooth
    primal from the solver's answer closes them (to 1e-13 there in two or three steps).  The
    polish sharpens the bounds only: the solver's own value must lie within the certificate's
    tolerance of the polished optimum, so a wrong formulation, whose answer lies farther off,
    is still refused (NotSolvedError).
    """
    try:
        sol = certified(sol)
    except NotSolvedError:
        return _agreeing(sol, certified(polish(sol)))
    if sol.extras["certificate"].relative_gap <= TIGHT_GAP:
        return sol
    try:
        polished = _agreeing(sol, certified(polish(dataclasses.replace(sol, extras={}))))
    except NotSolvedError:
        return sol
    better = polished.extras["certificate"].relative_gap < sol.extras["certificate"].relative_gap
    return polished if better else sol


def _agreeing(sol: Solution, polished: Solution) -> Solution:
    """``polished``, if the solver's value ``sol.objective`` lies within the certificate's
    tolerance of its certified optimum; else NotSolvedError."""
    cert = polished.extras["certificate"]
    if abs(sol.objective - polished.objective) <= cert.rtol * cert.scale:
        return polished
    raise NotSolvedError(
        f"{sol.solver} returned logistic ({sol.form}) with objective {sol.objective:.10g}, but "
        f"Newton's method from its answer certifies the optimum {polished.objective:.10g}: the "
        f"solver's value is {abs(sol.objective - polished.objective) / cert.scale:.3g} off "
        f"(relative), beyond the tolerance {cert.rtol:g}."
    )


def newton_steps(p: Problem, W: np.ndarray, b: np.ndarray, max_steps: int = 5):
    """Newton's method on the canonical primal from (W, b), in numpy, while the gradient's
    largest entry falls by a factor 10 or more; returns the point of the smallest gradient
    (W, b centred) and the steps that led to it.

    With features phi_i = (r_i, 1) and P the softmax of F = R W + 1 b^T, the gradient in (W; b)
    is (W; 0) + C sum_i s_i phi_i (p_i - e_{y_i})^T and the Hessian diag(I, 0) + C sum_i s_i
    (phi_i phi_i^T) kron (diag(p_i) - p_i p_i^T).  A common shift of b is its null direction:
    each step keeps b_L fixed and solves the rest, positive definite, by Cholesky (least
    squares if rounding leaves it indefinite).
    """
    R, N, L = p.R, p.n_samples, p.n_classes
    w = p.C * p.pattern_weights()
    E = one_hot(p.y_index, L)
    Phi = np.hstack([R, np.ones((N, 1))])
    r = R.shape[1]
    size = (r + 1) * L
    best = (np.inf, W, b, 0)
    for steps in range(max_steps + 1):
        P = softmax(R @ W + b, axis=1)
        G = Phi.T @ (w[:, None] * (P - E))
        G[:r] += W
        largest = float(np.abs(G).max())
        if not largest < 0.1 * best[0]:
            break
        best = (largest, W, b, steps)
        if steps == max_steps:
            break
        # sum_i w_i (phi_i phi_i^T) kron (diag(p_i) - p_i p_i^T), index (feature, class)
        M = (Phi[:, :, None] * P[:, None, :]).reshape(N, size)
        H = -(M.T * w) @ M
        blocks = H.reshape(r + 1, L, r + 1, L)  # a view: the diag(p_i) part, class by class
        for j in range(L):
            blocks[:, j, :, j] += (Phi.T * (w * P[:, j])) @ Phi
        H[np.arange(r * L), np.arange(r * L)] += 1.0
        step = np.zeros(size)  # (b_L, the last entry, fixed)
        try:
            step[:-1] = scipy.linalg.cho_solve(scipy.linalg.cho_factor(H[:-1, :-1]), G.ravel()[:-1])
        except np.linalg.LinAlgError:
            step[:-1] = np.linalg.lstsq(H[:-1, :-1], G.ravel()[:-1], rcond=None)[0]
        step = step.reshape(r + 1, L)
        W, b = W - step[:r], b - step[r]
    _, W, b, steps = best
    return W, b - b.mean(), steps


def primal_polished(sol: Solution) -> Solution:
    """A primal solution after ``newton_steps`` from its (W, b), its objective recomputed there
    (``msvm.reference.values``); ``extras["newton_steps"]`` counts the steps."""
    from msvm.reference.values import primal_value

    W, b, steps = newton_steps(sol.problem, sol.weights, sol.intercept)
    polished = dataclasses.replace(
        sol,
        weights=W,
        coef=sol.problem.coef_from_weights(W),
        intercept=b,
        extras={**sol.extras, "newton_steps": steps},
    )
    polished.objective = primal_value(polished)
    return polished


def dual(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The entropy-regularised dual derived above; weighted, the variables q_i of pattern i lie
    in s_i times the simplex and the constant -C sum_i entr(s_i) joins the objective."""
    import cvxpy as cp

    _check_exp_cone_solver(solver)
    check_class_weights(p)
    L = p.n_classes
    s = p.pattern_weights()
    E = s[:, None] * one_hot(p.y_index, L)  # S E: rows s_i e_{y_i}
    # Q of the weighted dual (P without weights), over the patterns of positive weight: the
    # rows of weight 0 are 0, and as variables on the boundary of entr's exponential cone
    # they left Clarabel 'optimal_inaccurate' (45 iris points, 6 of weight 0)
    active = s > 0
    P = cp.Variable((int(active.sum()), L), name="P")
    entropy = cp.sum(cp.entr(P))
    if p.sample_weight is not None:
        entropy = entropy - float(entr(s).sum())
    gap = P - E[active]  # the rows of Q - S E of positive weight; the others are 0
    # W = C R^T (S E - Q) as a variable of its own: -1/2 ||W||^2 instead of
    # -C^2/2 ||R^T (Q - S E)||^2 keeps C out of the quadratic's scale, and Clarabel then ends
    # within 1.4e-8 of the optimum near separable data at C = 1e3 and 1e4 (2.6e-5 before)
    weights = cp.Variable((p.R.shape[1], L))
    objective = cp.Maximize(p.C * entropy - 0.5 * cp.sum_squares(weights))
    outputs = weights == -p.C * (p.R[active].T @ gap)
    balance = cp.sum(gap, axis=0) == 0
    constraints = [outputs, cp.sum(P, axis=1) == s[active], P >= 0, balance]
    problem, elapsed = solve(objective, constraints, solver)

    def at(Q: np.ndarray):
        """The variables set to Q and W = C R^T (S E - Q), so that the objective is the
        dual's at Q alone; returns (B, W, the dual objective)."""
        coef = p.C * (E - Q)
        W = p.R.T @ coef
        P.value, weights.value = Q[active], W
        return coef, W, float(objective.value)

    # an inaccurate solve can leave entries of P a rounding below 0, where entr, and with it the
    # solver's objective, is -inf (100 E. coli points at C = 1e4): the value at P clipped to 0
    Q = np.zeros((p.n_samples, L))
    Q[active] = np.maximum(P.value, 0.0)
    coef, W, value = at(Q)
    b = -balance.dual_value / p.C
    sol = Solution(
        formulation=NAME,
        form="dual",
        objective=value,
        coef=coef,
        problem=p,
        weights=W,
        intercept=b - b.mean(),
        dual_coef=Q,
        **solved_by(problem),
        solve_time=elapsed,
    )

    def polish(sol: Solution) -> Solution:
        """``newton_steps`` from the answer's (W, b), mapped back through the optimality
        condition q_i = s_i softmax(f(x_i)); the dual objective evaluated there."""
        W, b, steps = newton_steps(p, sol.weights, sol.intercept)
        Q = s[:, None] * softmax(p.R @ W + b, axis=1)
        coef, W, value = at(Q)
        return dataclasses.replace(
            sol,
            objective=value,
            coef=coef,
            weights=W,
            intercept=b,
            dual_coef=Q,
            extras={**sol.extras, "newton_steps": steps},
        )

    return tightened(sol, polish)
