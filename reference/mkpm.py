"""Multiclass Kernel Projection Machine (Takerkart & Ralaivola 2011): a brute-force reference.

With an output code (rows c_q in {-1, 1}^L, one per class; MKPM §2.1) each pattern gets the target
vector y_n = c_{class of x_n}.  The kernel-PCA family of MKPM (33)-(35) (uncentred) is

    psi_d = Phi a_d / sqrt(gamma_d),  (a_d, gamma_d) the eigenpairs of K, gamma_1 >= gamma_2 >= ...

and S_d = span(psi_1..psi_d).  For code column l and dimension d, MKPM (13)-(14) define

    G*_l(d) = min_{f in S_d} (1/N) sum_n (f(x_n) - y_nl)^2,

here solved as a least-squares problem in cvxpy over f = Psi_[d] alpha, whose values on the
training points are K A_[d] Gamma_[d]^{-1/2} alpha (= A_[d] Gamma_[d]^{1/2} alpha).  The risk of an
allocation (d_1..d_L) is R = sum_l G*_l(d_l) (MKPM 15, with the 1/N of 13), and MKPM (10)/(17)
asks, for each total d, for the allocation with sum_l d_l = d of least risk.  This module finds it
by enumerating every allocation, for small L and D; the fast layer's dynamic programme
(Proposition 1) must agree with it.  Decoding is by Euclidean distance to the codewords (MKPM 8).

Weighted (``Problem(..., sample_weight=s)``), pattern n counts s_n times: the family is that of
the weighted covariance C_s = Phi S Phi^T / sum_n s_n (MKPM 33 with weights; S = diag(s)),

    psi_d = Phi S^1/2 a_d / sqrt(gamma_d),  (a_d, gamma_d) the eigenpairs of S^1/2 K S^1/2,

whose values on the training points are K S^1/2 A_[d] Gamma_[d]^{-1/2} alpha, and

    G*_l(d) = min_{f in S_d} sum_n s_n (f(x_n) - y_nl)^2 / sum_n s_n,

solved as that weighted least-squares problem in cvxpy.  A pattern of weight 0 stays in the
problem with no say in the basis or the risk (its rows of S^1/2 K S^1/2 are 0); the fast layer,
which leaves such patterns out, must agree with it.

With an intercept (``fit_intercept=True``; issue 19) every code column gets an unpenalised bias:
the family is the kernel PCA of the centred features phi(x) - mu, mu = Phi s / sum_n s_n the
(weighted) mean (s = 1 without weights), i.e. of the centred Gram matrix

    K~ = H K H^T,  H = I - 1 s^T / sum_n s_n,   psi_d = Phi H^T S^1/2 a_d / sqrt(gamma_d)

with (a_d, gamma_d) the eigenpairs of S^1/2 K~ S^1/2, and the fit of column l is

    G*_l(d) = min_{f in S_d, b in R} sum_n s_n (<f, phi(x_n) - mu> + b - y_nl)^2 / sum_n s_n,

f = Psi_[d] alpha, whose values on the training points are K~ S^1/2 A_[d] Gamma_[d]^-1/2 alpha
+ b: a least-squares problem in cvxpy over (alpha, b) (over b alone at d = 0).  A point's output
is <f, phi(x) - mu> + b = k(x, X) H^T S^1/2 A_[d] Gamma_[d]^-1/2 alpha + b - <f, mu>, stored as
expansion coefficients c and the intercept b - <f, mu> = b - s^T K c / sum_n s_n.  H is formed
as a matrix here and b is a variable of the solver: nothing of the fast layer's closed form
(b = the weighted mean of the column) is assumed.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from msvm.core.coding import one_vs_all_code
from msvm.reference.problem import DEFAULT_SOLVER, Problem, solve

MAX_ENUMERATED = 2_000_000


def kpca_basis(
    K: np.ndarray, n_components: int | None = None, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvectors A (N x D) and strictly positive eigenvalues gamma (D,) of K, largest first;
    with ``weights`` s, of the weighted Gram matrix S^1/2 K S^1/2."""
    if weights is not None:
        K = np.sqrt(weights)[:, None] * K * np.sqrt(weights)[None, :]
    s, V = np.linalg.eigh(K)
    order = np.argsort(s)[::-1]
    s, V = s[order], V[:, order]
    positive = s > 1e-10 * max(s[0], 0.0)
    s, V = s[positive], V[:, positive]
    if n_components is not None:
        if n_components > s.size:
            raise ValueError(
                f"n_components={n_components} exceeds the rank of the Gram matrix ({s.size})."
            )
        s, V = s[:n_components], V[:, :n_components]
    return V, s


def check_code(code, n_classes: int) -> np.ndarray:
    """The output code (rows are codewords), default one-vs-all (MKPM §4)."""
    code = one_vs_all_code(n_classes) if code is None else np.asarray(code, dtype=float)
    if code.ndim != 2 or code.shape[0] != n_classes:
        raise ValueError(f"code must have one row per class ({n_classes}), got {code.shape}.")
    if np.unique(code, axis=0).shape[0] != n_classes:
        raise ValueError("code must give every class a distinct codeword.")
    return code


def centring(s: np.ndarray) -> np.ndarray:
    """H = I - 1 s^T / sum_n s_n: Phi H^T holds the centred features phi(x_n) - mu (mu = Phi s /
    sum_n s_n), and H K H^T is their Gram matrix."""
    return np.eye(s.size) - np.outer(np.ones(s.size), s) / s.sum()


def risk_table(
    p: Problem,
    n_components: int | None = None,
    code=None,
    solver=DEFAULT_SOLVER,
    fit_intercept: bool = False,
):
    """G*_l(d) for every code column l and d = 0..D (MKPM 13-14), by least squares in cvxpy;
    weighted (``p.sample_weight``) and with an intercept (``fit_intercept``) as in the module
    docstring.

    Returns ``G`` of shape (L, D+1), ``coefs`` of shape (L, D+1, N) and ``intercepts`` of shape
    (L, D+1): each minimiser is f(x) = k(x, X) coefs[l, d] + intercepts[l, d] (intercepts 0
    without ``fit_intercept``).
    """
    import cvxpy as cp

    code = check_code(code, p.n_classes)
    targets = code[p.y_index]  # y_nl
    s = p.pattern_weights()
    H = centring(s) if fit_intercept else np.eye(p.n_samples)
    gram = H @ p.K @ H.T if fit_intercept else p.K  # the Gram matrix of the basis's features
    A, gamma = kpca_basis(gram, n_components, p.sample_weight)
    N, D, L = p.n_samples, gamma.size, code.shape[1]
    G = np.empty((L, D + 1))
    coefs = np.zeros((L, D + 1, N))
    intercepts = np.zeros((L, D + 1))
    if not fit_intercept:
        G[:, 0] = s @ targets**2 / s.sum()  # S_0 = {0}
    for l, d in itertools.product(range(L), range(0 if fit_intercept else 1, D + 1)):
        psi = np.sqrt(s)[:, None] * A[:, :d] / np.sqrt(gamma[:d])  # Psi_[d] = Phi H^T psi
        alpha = cp.Variable(d) if d else None
        values = gram @ psi @ alpha if d else np.zeros(N)  # <f, phi(x_n) - mu> (- mu: centred)
        if fit_intercept:
            b = cp.Variable()
            values = values + b
        if p.sample_weight is None:
            risk = cp.sum_squares(values - targets[:, l]) / N
        else:
            risk = cp.sum(cp.multiply(s, cp.square(values - targets[:, l]))) / s.sum()
        problem, _ = solve(cp.Minimize(risk), [], solver, strict=True)  # (not certified)
        G[l, d] = problem.value
        if d:
            coefs[l, d] = H.T @ psi @ alpha.value  # k(x, X) coefs = <f, phi(x)>
        if fit_intercept:  # <f, phi(x) - mu> + b = k(x, X) coefs + (b - <f, mu>)
            intercepts[l, d] = b.value - s @ p.K @ coefs[l, d] / s.sum()
    return G, coefs, intercepts


def allocations(n_columns: int, total: int):
    """Every (d_1..d_L) of non-negative integers with sum total (stars and bars)."""
    for bars in itertools.combinations(range(total + n_columns - 1), n_columns - 1):
        edges = (-1, *bars, total + n_columns - 1)
        yield tuple(edges[k + 1] - edges[k] - 1 for k in range(n_columns))


def brute_force(G: np.ndarray, total: int) -> tuple[float, tuple[int, ...]]:
    """MKPM (17) by enumeration: the allocation with sum d_l = total that minimises sum G_l(d_l).

    Ties are broken towards the allocation enumerated first (lexicographically smallest d_1, ...).
    """
    L, width = G.shape
    count = math.comb(total + L - 1, L - 1)
    if count > MAX_ENUMERATED:
        raise ValueError(f"{count} allocations to enumerate; use the dynamic programme instead.")
    best, best_alloc = np.inf, None
    for alloc in allocations(L, total):
        if max(alloc) >= width:
            continue
        risk = float(sum(G[l, d] for l, d in enumerate(alloc)))
        if risk < best:
            best, best_alloc = risk, alloc
    return best, best_alloc


@dataclass
class MKPMPath:
    """The regularisation path of MKPM for d = 0..D found by enumeration."""

    problem: Problem
    code: np.ndarray
    risk_table: np.ndarray  # G*_l(d), (L, D+1)
    allocation_path: np.ndarray  # (D+1, L), row d sums to d
    risk_path: np.ndarray  # Delta_L(d) = R(delta(d)), (D+1,)
    coefs: np.ndarray  # (L, D+1, N)
    intercepts: np.ndarray  # (L, D+1), zeros without fit_intercept
    fit_intercept: bool = False  # the basis centred and an intercept per column

    def outputs(self, X, d: int) -> np.ndarray:
        """f(x) = (f_1(x)..f_L(x)) of the predictor with total dimension d."""
        alloc = self.allocation_path[d]
        B = np.column_stack([self.coefs[l, dl] for l, dl in enumerate(alloc)])
        b = np.array([self.intercepts[l, dl] for l, dl in enumerate(alloc)])
        return self.problem.kernel_to(X) @ B + b

    def decision_function(self, X, d: int) -> np.ndarray:
        """Class scores -||f(x) - c_q||^2 (MKPM 8 with the Euclidean distance)."""
        F = self.outputs(X, d)
        return -((F[:, None, :] - self.code[None, :, :]) ** 2).sum(axis=2)

    def predict(self, X, d: int) -> np.ndarray:
        return self.problem.classes[np.argmax(self.decision_function(X, d), axis=1)]


def regularisation_path(
    p: Problem,
    n_components: int | None = None,
    code=None,
    solver=DEFAULT_SOLVER,
    fit_intercept: bool = False,
) -> MKPMPath:
    """Allocations and risks for every total dimension d = 0..D, by enumeration (small L, D);
    ``fit_intercept``: an unpenalised intercept per code column in the centred basis (module
    docstring)."""
    code = check_code(code, p.n_classes)
    G, coefs, intercepts = risk_table(p, n_components, code, solver, fit_intercept)
    D = G.shape[1] - 1
    solved = [brute_force(G, d) for d in range(D + 1)]
    return MKPMPath(
        problem=p,
        code=code,
        risk_table=G,
        allocation_path=np.array([alloc for _, alloc in solved], dtype=np.int64),
        risk_path=np.array([risk for risk, _ in solved]),
        coefs=coefs,
        intercepts=intercepts,
        fit_intercept=fit_intercept,
    )
