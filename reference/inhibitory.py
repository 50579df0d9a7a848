"""The inhibitory multiclass SVM (ISVM) of Huerta et al. (2012).

Classifier (ISVM 3.5), with w = (w_1, ..., w_L) in F^L and inhibition mu:

    f_j(x) = <w, Psi_j(x) - mu Psi(x)> = <w_j, phi(x)> - mu sum_k <w_k, phi(x)>

Primal (ISVM 4.1) at a fixed mu:

    minimise 1/2 ||w||^2 + C sum_ij eta_ij
    s.t.     eta_ij >= 0,   y_ij f_j(x_i) >= 1 - eta_ij

Dual (ISVM 6.1-6.3), derived here for any fixed mu:

    maximise sum_ij alpha_ij - 1/2 sum_{ij,i'j'} alpha_ij y_ij alpha_i'j' y_i'j' G_(ij)(i'j')
    s.t.     0 <= alpha_ij <= C,
    G_(ij)(i'j') = K_ii' [I(j = j') - c],   c = mu (2 - mu L)

because <Psi_j - mu Psi, Psi_j' - mu Psi> = K (I(j=j') - 2 mu + mu^2 L) by (3.7)-(3.9).  At the
paper's mu = 1/L, c = 1/L and G is (6.3).  Since I - c 11^T = (I - mu 11^T)^2, the quadratic term is
||R^T (alpha o Y) (I - mu 11^T)||_F^2: that is how it is handed to cvxpy, and ``kernel_G`` builds
the NL x NL matrix of (6.3)/(6.4) for readers and tests.  (The rank-one part is carried by an
auxiliary variable, ``sum_j w_j`` or ``(alpha o Y) 1``, so that the solver sees a sparse problem.)
Outputs from the dual (ISVM 4.12):

    f_j(x) = sum_i'j' alpha_i'j' y_i'j' K(x_i', x) [I(j = j') - c]

and the simplified class rule (4.15)-(4.16): argmax_j sum_i' alpha_i'j y_i'j K(x_i', x).

With ``fit_intercept=True`` every classifier gets its bias before the inhibition, f_j(x) =
<w_j, phi(x)> + b_j - mu sum_k (<w_k, phi(x)> + b_k): the outputs' bias is beta = (I - mu 11^T) b,
which at mu = 1/L sums to zero like the outputs themselves.  Stationarity in b adds to (6.2)

    sum_i (alpha_i o y_i) (I - mu 11^T) = 0

(for mu != 1/L the L conditions sum_i alpha_ij y_ij = 0 of L binary SVMs; at mu = 1/L only their
differences, L - 1 conditions: the equality constraint ISVM §7 says the inhibition makes avoidable
holds for the common part).  The solution's ``intercept`` is beta.

With sample weights s_i (``Problem(sample_weight=...)``) the loss of (4.1) is C sum_ij s_i eta_ij
and the box of (6.2) is 0 <= alpha_ij <= C s_i.
"""

from __future__ import annotations

import numpy as np

from msvm.reference.problem import (
    DEFAULT_SOLVER,
    Problem,
    Solution,
    add_bias,
    certified,
    hard_margin_fallback,
    repeat_columns,
    solve,
    solved_by,
)

NAME = "inhibitory"


def _inhibition(n_classes: int, mu: float | None) -> tuple[float, np.ndarray]:
    mu = 1.0 / n_classes if mu is None else float(mu)
    if not np.isfinite(mu):
        raise ValueError(f"mu must be a finite number, got {mu!r}.")
    return mu, np.eye(n_classes) - mu * np.ones((n_classes, n_classes))


def kernel_G(K: np.ndarray, n_classes: int, mu: float | None = None) -> np.ndarray:
    """ISVM (6.3)/(6.4): G_kk' = K_{k//L, k'//L} [I(k mod L = k' mod L) - c], c = mu(2 - mu L).

    Indices k = i L + j order alpha_ij lexicographically, as in the paper (0-based as in 6.4).
    """
    mu, _ = _inhibition(n_classes, mu)
    c = mu * (2.0 - mu * n_classes)
    return np.kron(K, np.eye(n_classes) - c * np.ones((n_classes, n_classes)))


def coef_from_dual(
    p: Problem, alpha: np.ndarray, mu: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(coef, weights) of dual variables ``alpha``: w = sum_ij alpha_ij y_ij [Psi_j(x_i) - mu
    Psi(x_i)] (ISVM 4.10), in factor space R^T (alpha o Y) (I - mu 11^T), and the outputs'
    coefficients (4.12), f = K coef with coef = (alpha o Y) (I - mu 11^T)^2."""
    _, P = _inhibition(p.n_classes, mu)
    A = alpha * p.Y
    return A @ P @ P, p.R.T @ A @ P


@hard_margin_fallback
def primal(
    p: Problem, mu: float | None = None, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER
) -> Solution:
    """ISVM (4.1) at fixed inhibition ``mu`` (default 1/L, Theorem 1's mu*; it is the largest
    optimal value over mu, not the smallest: ``msvm.verify.inhibition``).  Weighted:
    C sum_ij s_i eta_ij in (4.1); ``fit_intercept``: biases b_j before the inhibition."""
    import cvxpy as cp

    mu, P = _inhibition(p.n_classes, mu)
    W = cp.Variable((p.R.shape[1], p.n_classes))
    w_sum = cp.Variable(p.R.shape[1])  # sum_j w_j, so that <w, Psi(x_i)> = r_i^T w_sum
    eta = cp.Variable((p.n_samples, p.n_classes))
    F = p.R @ W - mu * repeat_columns(p.R @ w_sum, p.n_classes)  # f_j(x_i), ISVM (3.5)
    b = cp.Variable(p.n_classes) if fit_intercept else None
    if fit_intercept:  # + (I - mu 11^T) b on every row
        F = add_bias(F, b - mu * cp.sum(b))
    regulariser = 0.5 * cp.sum_squares(W)
    margin = cp.multiply(p.Y, F) >= 1 - eta  # (4.1 ii)
    constraints = [w_sum == cp.sum(W, axis=1), eta >= 0, margin]
    problem, elapsed = solve(cp.Minimize(regulariser + p.loss_sum(eta)), constraints, solver)
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W.value @ P),
            problem=p,
            weights=W.value,
            intercept=None if b is None else P @ b.value,
            dual_coef=margin.dual_value,
            **solved_by(problem),
            solve_time=elapsed,
            extras={"mu": mu},
        )
    )


@hard_margin_fallback
def dual(
    p: Problem, mu: float | None = None, fit_intercept: bool = False, solver: str = DEFAULT_SOLVER
) -> Solution:
    """ISVM (6.1)-(6.2) with the kernel G of (6.3) (at any fixed ``mu``; default 1/L).
    Weighted: the box (6.2) is 0 <= alpha_ij <= C s_i; ``fit_intercept`` adds the balance
    sum_i (alpha_i o y_i) (I - mu 11^T) = 0, whose multiplier is b."""
    import cvxpy as cp

    mu, P = _inhibition(p.n_classes, mu)
    alpha = cp.Variable((p.n_samples, p.n_classes))
    alpha_y = cp.multiply(alpha, p.Y)
    row_sum = cp.Variable(p.n_samples)  # sum_j alpha_ij y_ij
    # w = sum_ij alpha_ij y_ij [Psi_j(x_i) - mu Psi(x_i)], (4.10); in factor space R^T (alpha o Y) P
    W = p.R.T @ (alpha_y - mu * repeat_columns(row_sum, p.n_classes))
    objective = cp.Maximize(cp.sum(alpha) - 0.5 * cp.sum_squares(W))  # (6.1)
    constraints = [row_sum == cp.sum(alpha_y, axis=1), alpha >= 0, alpha <= p.box()]  # (6.2)
    column_sum = cp.sum(alpha_y, axis=0)
    balance = column_sum - mu * cp.sum(column_sum) == 0
    if fit_intercept:
        constraints.append(balance)
    problem, elapsed = solve(objective, constraints, solver)
    a = alpha.value
    coef, weights = coef_from_dual(p, a, mu)  # (4.12): factor I(j = j') - c
    return certified(
        Solution(
            formulation=NAME,
            form="dual",
            objective=problem.value,
            coef=coef,
            problem=p,
            weights=weights,
            intercept=P @ balance.dual_value if fit_intercept else None,
            dual_coef=a,
            **solved_by(problem),
            solve_time=elapsed,
            extras={"mu": mu},
        )
    )


def common_mode_free(p: Problem, solver: str = DEFAULT_SOLVER) -> Solution:
    """The limit of ISVM (4.1)'s optimal value E*(mu) as |mu| -> infinity.

    For mu != 1/L the map w -> f = w (I - mu 11^T) is invertible, with
    (I - mu 11^T)^-1 = I + t 11^T, t = mu / (1 - mu L), so

        E*(mu) = min_f 1/2 ||f||^2 + (c(mu) / 2) ||f 1||^2 + C sum_ij [1 - y_ij f_ij]_+,
        c(mu) = 2t + L t^2 = (1 / (1 - mu L)^2 - 1) / L,

    which falls as c does: c = +inf at mu = 1/L (f 1 = 0, the paper's machine), 0 at mu = 0 and
    2/L, and -> -1/L, its infimum, as |mu| -> infinity, where the regulariser is
    1/2 ||f (I - 11^T / L)||^2: the common mode of the outputs is free.  That problem is solved
    here; E*(mu) approaches its value from above and never reaches it, so (4.1) has no minimiser
    over (w, mu).
    """
    import cvxpy as cp

    p.refuse_weights("common_mode_free")
    W = cp.Variable((p.R.shape[1], p.n_classes))
    eta = cp.Variable((p.n_samples, p.n_classes))
    centred = W - repeat_columns(cp.sum(W, axis=1) / p.n_classes, p.n_classes)
    margin = cp.multiply(p.Y, p.R @ W) >= 1 - eta
    objective = cp.Minimize(0.5 * cp.sum_squares(centred) + p.C * cp.sum(eta))
    problem, elapsed = solve(objective, [eta >= 0, margin], solver)
    return certified(
        Solution(
            formulation=NAME,
            form="primal",
            objective=problem.value,
            coef=p.coef_from_weights(W.value),
            problem=p,
            weights=W.value,
            dual_coef=margin.dual_value,
            **solved_by(problem),
            solve_time=elapsed,
            extras={"mu": np.inf},
        )
    )


def simplified_scores(sol: Solution, X) -> np.ndarray:
    """ISVM (4.15): f~_j(x) = sum_i' alpha_i'j y_i'j K(x_i', x), from a dual solution.

    (4.14) says f_j = f~_j + G(x) with a shift G(x) common to all classes, so argmax_j f~_j is the
    class of (4.13) (4.16).  The shift is -(1/L) sum_j f~_j only at mu = 1/L.
    """
    return sol.problem.kernel_to(X) @ (sol.dual_coef * sol.problem.Y)
