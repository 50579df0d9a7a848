"""The Lecture's multiclass Sum-SVM, primal and dual as printed (Giselsson, "Multiclass SVM - Sum
version", "Dual of Sum-SVM").  It is the Weston-Watkins machine with margin 1 and no bias
(C = 1/lambda).

Primal (lambda form):

    minimise_w  sum_i 1^T max(0, 1 - D_i X_i w) + lambda/2 ||w||^2

where D_i ((K-1) x K) has, for each j != y_i in turn, a row with +1 in column y_i and -1 in
column j.

Dual, as printed, with f_i*(mu_i) = mu_i^T 1 + iota_[-1,0](mu_i):

    minimise_mu  1^T mu + 1/(2 lambda) mu^T D (K (x) I_K) D^T mu,    -1 <= mu <= 0

with primal recovery w = -(1/lambda) X^T D^T mu.  The Lecture prints the Sum-SVM class rule twice,
once with sum_{j != y} c_{y,j} and once with min_{j != y} c_{y,j}; both pick argmax_y m_y
(``msvm.reference.lecture.confidences`` computes either).

Weighted (``Problem(..., sample_weight=s)``): pattern i's loss is s_i 1^T max(0, 1 - D_i X_i w),
i.e. f_i becomes s_i f_i in the Lecture's "Dual of Sum-SVM" (canonical scale
1/2 ||w||^2 + C sum_i s_i loss_i).  With (s f)*(mu) = s f*(mu / s),

    (s_i f_i)*(mu_i) = s_i (1^T mu_i / s_i + iota_[-1,0](mu_i / s_i))
                     = 1^T mu_i + iota_[-s_i,0](mu_i)

so the dual keeps its objective and Kronecker kernel with -s_i <= mu_i <= 0.  A pattern of
weight 0 has mu_i = 0 and drops out.  In the Weston-Watkins variables alpha = -C mu this is the
box 0 <= alpha_ij <= C s_i of ``weston_watkins.dual``.
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
    solve,
    solved_by,
)

NAME = "sum_svm"


def block_D(y: int, n_classes: int) -> np.ndarray:
    """D_i for a pattern of class ``y``: rows e_y - e_j for each j != y."""
    others = [j for j in range(n_classes) if j != y]
    D = np.zeros((n_classes - 1, n_classes))
    D[:, y] = 1.0
    D[np.arange(n_classes - 1), others] = -1.0
    return D


def stacked_D(p: Problem) -> sp.csr_matrix:
    """D = blockdiag(D_1, ..., D_N) (N(K-1) x NK)."""
    return sp.block_diag([block_D(y, p.n_classes) for y in p.y_index], format="csr")


def pair_patterns(p: Problem) -> np.ndarray:
    """The pattern of each row of D (each entry of mu): K - 1 rows per pattern, in order."""
    return np.repeat(np.arange(p.n_samples), p.n_classes - 1)


@hard_margin_fallback
def primal(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The regularised Sum-SVM training problem: the Lecture's lambda form, handed to the solver
    multiplied by C = 1/lambda (the canonical scale; see ``msvm.reference.lecture``); weighted,
    the loss is sum_i s_i 1^T max(0, 1 - D_i X_i w)."""
    import cvxpy as cp

    X, D = stacked_features(p.R, p.n_classes), stacked_D(p)
    w = cp.Variable(X.shape[1])
    # sum_i 1^T max(0, 1 - D_i X_i w) as its epigraph t >= 1 - D X w, t >= 0, whose multipliers
    # nu = -mu / lambda are the dual point of the certificate
    t = cp.Variable(D.shape[0])
    margin = t >= 1 - D @ (X @ w)
    loss = p.weighted_sum(t, pattern=pair_patterns(p))
    printed = loss + p.lam / 2 * cp.sum_squares(w)  # the Lecture's objective, lambda form
    # handed to the solver times 1/lambda = C: the same minimiser, but the regulariser keeps weight
    # 1/2 (iris-30 RBF: the lambda form itself gave 257.9034 at C = 1e8, 293.5 at 1e10 for 257.9003)
    scaled = printed / p.lam
    problem, elapsed = solve(cp.Minimize(scaled), [margin, t >= 0], solver)
    W = weights_matrix(w.value, p)
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,  # already on the canonical scale
            coef=p.coef_from_weights(W),
            problem=p,
            weights=W,
            dual_coef=(-margin.dual_value / p.C).reshape(p.n_samples, -1),  # the Lecture's mu
            **solved_by(problem),
            solve_time=elapsed,
        )
    )


@hard_margin_fallback
def dual(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The Sum-SVM dual as printed, with the Kronecker kernel K (x) I_K = X X^T; weighted,
    -s_i <= mu_i <= 0 (module docstring)."""
    import cvxpy as cp

    X, D = stacked_features(p.R, p.n_classes), stacked_D(p)
    mu = cp.Variable(D.shape[0])
    quadratic = cp.sum_squares(X.T @ (D.T @ mu)) / (2 * p.lam)
    low = -1.0 if p.sample_weight is None else -p.sample_weight[pair_patterns(p)]
    problem, elapsed = solve(cp.Minimize(cp.sum(mu) + quadratic), [mu >= low, mu <= 0], solver)
    return dual_solution(
        NAME, p, D, mu.value, problem.value, **solved_by(problem), solve_time=elapsed
    )
