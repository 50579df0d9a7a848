"""The Lecture's multiclass Max-SVM, primal and dual as printed (Giselsson, "Multiclass SVM - Max
version", "Dual of Max-SVM").  It is the Crammer-Singer machine without bias (C = 1/lambda).

Primal (lambda form):

    minimise_w  sum_i max(c - M_i X_i w) + lambda/2 ||w||^2,    c = (0, 1, ..., 1) in R^K

where M_i (K x K) has a zero first row and, for each j != y_i in turn, a row with +1 in column y_i
and -1 in column j, so that max(c - M_i X_i w) = max(0, max_{j != y_i} 1 - m_{y_i} + m_j).

Dual, as printed, with f_i*(mu_i) = iota_{Delta_K}(-mu_i) + c^T mu_i:

    minimise_mu  sum_i c^T mu_i + 1/(2 lambda) mu^T M (K (x) I_K) M^T mu
    s.t.         -mu_i in Delta_K (the probability simplex) for every i

with primal recovery w = -(1/lambda) X^T M^T mu and the class rule "largest min_{j != y} c_{y,j}".

Weighted (``Problem(..., sample_weight=s)``): pattern i's loss is s_i max(c - M_i X_i w), i.e.
f_i becomes s_i f_i in the Lecture's "Dual of Max-SVM" (canonical scale
1/2 ||w||^2 + C sum_i s_i loss_i).  The conjugate of a scaled function is
(s f)*(mu) = s f*(mu / s), so

    (s_i f_i)*(mu_i) = s_i iota_{Delta_K}(-mu_i / s_i) + c^T mu_i
                     = iota_{s_i Delta_K}(-mu_i) + c^T mu_i

and the dual keeps its objective and Kronecker kernel with -mu_i in s_i Delta_K (the simplex
scaled by s_i: mu_i <= 0, sum_k mu_ik = -s_i).  A pattern of weight 0 has mu_i = 0 (its f_i is
0, whose conjugate is the indicator of {0}): it drops out.  In the Crammer-Singer variables
alpha = -C mu this is the budget sum_j alpha_ij <= C s_i of ``crammer_singer.dual``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from msvm.reference.lecture import dual_solution, stacked_features, weights_matrix
from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    certified,
    hard_margin_fallback,
    repeat_columns,
    solve,
    solved_by,
)

NAME = "max_svm"


def block_M(y: int, n_classes: int) -> np.ndarray:
    """M_i for a pattern of class ``y``: zero first row, then e_y - e_j for each j != y."""
    others = [j for j in range(n_classes) if j != y]
    M = np.zeros((n_classes, n_classes))
    M[1 + np.arange(n_classes - 1), y] = 1.0
    M[1 + np.arange(n_classes - 1), others] = -1.0
    return M


def stacked_M(p: Problem) -> sp.csr_matrix:
    """M = blockdiag(M_1, ..., M_N) (NK x NK)."""
    return sp.block_diag([block_M(y, p.n_classes) for y in p.y_index], format="csr")


def offsets(n_classes: int) -> np.ndarray:
    """c = (0, 1, ..., 1)."""
    c = np.ones(n_classes)
    c[0] = 0.0
    return c


@hard_margin_fallback
def primal(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The regularised Max-SVM training problem: the Lecture's lambda form, handed to the solver
    multiplied by C = 1/lambda (the canonical scale; see ``msvm.reference.lecture``); weighted,
    the loss is sum_i s_i max(c - M_i X_i w)."""
    import cvxpy as cp

    K, N = p.n_classes, p.n_samples
    X, M = stacked_features(p.R, K), stacked_M(p)
    w = cp.Variable(X.shape[1])
    u = M @ (X @ w)
    c = np.tile(offsets(K), N)
    # sum_i max(c - M_i X_i w) as its epigraph t_i >= (c - M_i X_i w)_k for every k, whose
    # multipliers nu_i = -mu_i / lambda (C times a point of s_i Delta_K) are the certificate's
    t = cp.Variable(N)
    epigraph = cp.reshape(c - u, (N, K), order="C") <= repeat_columns(t, K)
    loss = p.weighted_sum(t)
    printed = loss + p.lam / 2 * cp.sum_squares(w)  # the Lecture's objective, lambda form
    # handed to the solver times 1/lambda = C: the same minimiser, but the regulariser keeps weight
    # 1/2 (iris-30 RBF: the lambda form itself gave 257.9034 at C = 1e8, 293.5 at 1e10 for 257.9003)
    scaled = printed / p.lam
    problem, elapsed = solve(cp.Minimize(scaled), [epigraph], solver)
    W = weights_matrix(w.value, p)
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,  # already on the canonical scale
            coef=p.coef_from_weights(W),
            problem=p,
            weights=W,
            dual_coef=-epigraph.dual_value / p.C,  # the Lecture's mu, row i = mu_i
            **solved_by(problem),
            solve_time=elapsed,
        )
    )


@hard_margin_fallback
def dual(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The Max-SVM dual as printed, with the Kronecker kernel K (x) I_K = X X^T; weighted,
    -mu_i in s_i Delta_K (module docstring)."""
    import cvxpy as cp

    K, N = p.n_classes, p.n_samples
    X, M = stacked_features(p.R, K), stacked_M(p)
    mu = cp.Variable(N * K)
    c = np.tile(offsets(K), N)
    quadratic = cp.sum_squares(X.T @ (M.T @ mu)) / (2 * p.lam)  # mu^T M (K (x) I_K) M^T mu / 2l
    blocks = cp.reshape(mu, (N, K), order="C")
    # -mu_i in Delta_K, or in s_i Delta_K with sample weights
    budget = -1.0 if p.sample_weight is None else -p.sample_weight
    simplex = [mu <= 0, cp.sum(blocks, axis=1) == budget]
    problem, elapsed = solve(cp.Minimize(c @ mu + quadratic), simplex, solver)
    return dual_solution(
        NAME, p, M, mu.value, problem.value, **solved_by(problem), solve_time=elapsed
    )
