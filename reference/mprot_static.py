"""The multi-prototype SVM of Aiolli & Sperduti (2005) with a fixed (static) assignment.

q prototypes per class, prototype r of class C(r) = r // q; pattern i is assigned to one positive
prototype y_i (its assignment pi_i).  With the assignment fixed, MProt (8) becomes the convex

    minimise_{M, xi, theta} 1/2 ||M||^2 + C sum_i xi_i
    s.t.  <M_r, x_i> <= theta_i            for r in N_i (prototypes of other classes)
          <M_{y_i}, x_i> >= theta_i + 1 - xi_i,   xi_i >= 0

(the slacks of the unassigned positive prototypes carry weight pi_i^r = 0 and drop out).  Its dual
is MProt (11), printed as

    maximise sum_{i,r} alpha_i^r - ||M(alpha)||^2,   M_r = sum_i y_i^r alpha_i^r x_i
    s.t. alpha_i^r >= 0,  alpha_i^{y_i} = sum_{r in N_i} alpha_i^r <= C,
         alpha_i^r = 0 for r in P_i \\ {y_i}

The printed objective is twice the Lagrangian dual function (the Lagrangian at the optimum of (10)
is sum_i alpha_i^{y_i} - 1/2 ||M||^2 = 1/2 (sum_{i,r} alpha_i^r - ||M||^2)); it has the same
maximiser, and ``objective`` reports half the printed value, which equals the primal optimum.
Prediction is MProt (2): the class of the prototype with the highest score.

``fit_intercept=True`` gives every prototype a bias that is not penalised, f_r(x) = <M_r, x> +
b_r (MProt has none; its experiments' kernel <x, y> + 1 carries a penalised one).  Stationarity in
b_r adds to (11), for every prototype r,

    sum_i y_i^r alpha_i^r = 0,

and b is the multiplier of that condition (half the multiplier of the printed problem, whose
objective is twice the Lagrangian), unique up to a constant (theta_i absorbs it): the solution
reports the representative of mean zero.  A prototype no pattern is assigned to has y_i^r = -1
throughout, so the condition sets its alpha_i^r to 0 and its bias is any low enough value.
"""

from __future__ import annotations

import numpy as np

from msvm.reference.pairwise import negatives
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

NAME = "mprot_static"


def default_assignment(p: Problem, n_prototypes: int) -> np.ndarray:
    """Round-robin within each class: the k-th pattern of a class goes to prototype k mod q."""
    assignment = np.zeros(p.n_samples, dtype=np.int64)
    for c in range(p.n_classes):
        members = np.flatnonzero(p.y_index == c)
        assignment[members] = np.arange(members.size) % n_prototypes
    return assignment


def check_assignment(p: Problem, n_prototypes: int, assignment) -> np.ndarray:
    """The prototype (0..qL-1) assigned to each pattern, validated."""
    if int(n_prototypes) != n_prototypes or n_prototypes < 1:
        raise ValueError(f"n_prototypes must be an integer >= 1, got {n_prototypes!r}.")
    n_prototypes = int(n_prototypes)
    if assignment is None:
        assignment = default_assignment(p, n_prototypes)
    assignment = np.asarray(assignment)
    if assignment.shape != (p.n_samples,) or not np.issubdtype(assignment.dtype, np.integer):
        raise ValueError(f"assignment must be {p.n_samples} integers in [0, {n_prototypes}).")
    if assignment.min() < 0 or assignment.max() >= n_prototypes:
        raise ValueError(f"assignment values must lie in [0, {n_prototypes}).")
    return p.y_index * n_prototypes + assignment


def prototype_classes(n_classes: int, n_prototypes: int) -> np.ndarray:
    """C(r) for r = 0..qL-1."""
    return np.repeat(np.arange(n_classes), n_prototypes)


def _class_scores(n_classes: int, n_prototypes: int):
    def scores(raw: np.ndarray) -> np.ndarray:
        return raw.reshape(raw.shape[0], n_classes, n_prototypes).max(axis=2)

    return scores


def _solution(p, form, value, coef, weights, alpha, q, assigned, problem, elapsed, bias=None):
    return certified(
        Solution(
            formulation=NAME,
            form=form,
            objective=value,
            coef=coef,
            problem=p,
            weights=weights,
            intercept=centred(bias),
            dual_coef=alpha,
            scores=_class_scores(p.n_classes, q),
            **solved_by(problem),
            solve_time=elapsed,
            extras={"n_prototypes": q, "prototype_index": assigned},
        )
    )


@hard_margin_fallback
def primal(
    p: Problem,
    n_prototypes: int = 2,
    assignment=None,
    fit_intercept: bool = False,
    solver: str = DEFAULT_SOLVER,
) -> Solution:
    """MProt (8) with the assignment fixed (``assignment[i]`` in 0..q-1 within x_i's class);
    weighted, the loss is C sum_i s_i xi_i; ``fit_intercept``: a bias per prototype."""
    import cvxpy as cp

    assigned = check_assignment(p, n_prototypes, assignment)
    q = int(n_prototypes)
    proto_class = prototype_classes(p.n_classes, q)
    rows, cols = np.nonzero(negatives(p.y_index, proto_class.size, proto_class))
    M = cp.Variable((p.R.shape[1], proto_class.size))
    theta, xi = cp.Variable(p.n_samples), cp.Variable(p.n_samples)
    b = cp.Variable(proto_class.size) if fit_intercept else None
    F = add_bias(p.R @ M, b)  # f_r(x_i) = <M_r, x_i> (+ b_r)
    negative = F[rows, cols] <= theta[rows]
    positive = F[np.arange(p.n_samples), assigned] >= theta + 1 - xi
    objective = cp.Minimize(0.5 * cp.sum_squares(M) + p.loss_sum(xi))
    problem, elapsed = solve(objective, [negative, positive, xi >= 0], solver)
    alpha = np.zeros((p.n_samples, proto_class.size))
    alpha[rows, cols] = negative.dual_value
    alpha[np.arange(p.n_samples), assigned] = positive.dual_value
    coef = p.coef_from_weights(M.value)
    bias = None if b is None else b.value
    return _solution(
        p,
        "primal",
        problem.value,
        coef,
        M.value,
        alpha,
        q,
        assigned,
        problem,
        elapsed,
        bias,
    )


@hard_margin_fallback
def dual(
    p: Problem,
    n_prototypes: int = 2,
    assignment=None,
    fit_intercept: bool = False,
    solver: str = DEFAULT_SOLVER,
) -> Solution:
    """MProt (11) as printed; ``objective`` is half its optimal value (see the module docstring).
    Weighted: alpha_i^{y_i} <= C s_i; ``fit_intercept`` adds sum_i y_i^r alpha_i^r = 0."""
    import cvxpy as cp

    assigned = check_assignment(p, n_prototypes, assignment)
    q = int(n_prototypes)
    proto_class = prototype_classes(p.n_classes, q)
    n_proto = proto_class.size
    is_negative = negatives(p.y_index, n_proto, proto_class)
    is_assigned = np.zeros_like(is_negative)
    is_assigned[np.arange(p.n_samples), assigned] = True
    signs = np.where(is_negative, -1.0, 1.0)  # y_i^r
    alpha = cp.Variable((p.n_samples, n_proto))
    M = p.R.T @ cp.multiply(signs, alpha)  # M_r = sum_i y_i^r alpha_i^r x_i
    printed = cp.Maximize(cp.sum(alpha) - cp.sum_squares(M))
    alpha_assigned = cp.sum(cp.multiply(is_assigned, alpha), axis=1)
    alpha_negative = cp.sum(cp.multiply(is_negative, alpha), axis=1)
    constraints = [
        alpha >= 0,
        alpha_assigned == alpha_negative,
        alpha_assigned <= p.budget(),
        alpha[~(is_negative | is_assigned)] == 0,
    ]
    balance = cp.sum(cp.multiply(signs, alpha), axis=0) == 0
    if fit_intercept:
        constraints.append(balance)
    problem, elapsed = solve(printed, constraints, solver)
    a = np.where(is_negative | is_assigned, alpha.value, 0.0)
    coef = signs * a
    weights = p.R.T @ coef
    bias = balance.dual_value / 2 if fit_intercept else None
    return _solution(
        p,
        "dual",
        problem.value / 2,
        coef,
        weights,
        a,
        q,
        assigned,
        problem,
        elapsed,
        bias,
    )
