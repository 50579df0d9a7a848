"""The data of a multiclass problem, the solution object, and the solve call shared by all modules.

Every kernel primal is stated with an explicit factor of the Gram matrix, ``K = R R^T`` (from its
eigendecomposition, eigenvalues below ``1e-10 * max`` dropped), so that an output matrix is
``F = R W`` and ``||w||^2 = ||W||_F^2``: a DCP-clean quadratic in ``W`` rather than a dense
``quad_form`` over an NL x NL matrix.  The same factor writes each dual's quadratic term as
``||R^T B||_F^2 = tr(B^T K B)``.  A solution is always reported as the expansion coefficients
``B`` (``f(x) = k(x, X) B + b``), which ``Problem.coef_from_weights`` recovers from ``W``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from msvm.core.coding import sign_coding
from msvm.core.kernels import kernel_matrix
from msvm.core.validation import (
    check_C,
    check_finite,
    check_predict_input,
    check_training_data,
    gram_eigh,
    resolve_kernel,
)

DEFAULT_SOLVER = "CLARABEL"
_EIGEN_CUTOFF = 1e-10


class NotSolvedError(RuntimeError):
    """A cvxpy solver stopped without reaching an optimal solution."""


class Problem:
    """A multiclass training problem: data, labels, C and the kernel.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) if precomputed
    y : array-like of shape (n_samples,), any label type with at least two classes
    C : float > 0, the weight of the loss on the canonical scale 1/2 ||W||^2 + C * sum(loss)
    kernel : {"linear", "rbf", "poly", "precomputed"}
    gamma, degree, coef0 : as in scikit-learn's ``SVC`` (``gamma="scale"`` by default)

    Attributes
    ----------
    classes : labels in sorted order; ``y_index`` the index of each pattern's class
    n_classes : L
    K : the Gram matrix (n_samples, n_samples)
    R : the factor with K = R R^T, shape (n_samples, rank)
    Y : the +-1 coding matrix of ISVM (3.1), shape (n_samples, L)
    """

    def __init__(self, X, y, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0):
        self.C = check_C(C)
        self.X, self.classes, self.y_index = check_training_data(X, y, kernel=kernel)
        self.kernel, self.degree, self.coef0 = kernel, int(degree), float(coef0)
        value = resolve_kernel(self.X, kernel, gamma, degree, coef0)
        self.gamma = None if kernel in ("linear", "precomputed") else value
        self.n_samples, self.n_classes = self.X.shape[0], self.classes.size
        if kernel == "precomputed":
            self.K = 0.5 * (self.X + self.X.T)  # symmetric to rounding (check_gram)
        else:
            self.K = self._kernel(self.X)
        check_finite("The Gram matrix", self.K)
        s, V = gram_eigh(self.K)
        keep = s > _EIGEN_CUTOFF * max(s.max(), 0.0)
        dropped = np.einsum("ij,j,ij->i", V[:, ~keep], np.maximum(s[~keep], 0.0), V[:, ~keep])
        if np.any(dropped > _EIGEN_CUTOFF * np.maximum(np.diag(self.K), 0.0) + 1e-300):
            # a direction below the cutoff carries a pattern's whole feature map (kernel values
            # spanning more than 1e10): keep down to the noise floor instead of solving a
            # different problem (4 points, poly degree 3: k = 4.7e10 beside k = 1 dropped the
            # second point's features and the reference optimum was 6.0 for 5.0)
            keep = s > self.n_samples * np.finfo(float).eps * max(s.max(), 0.0)
        if keep.any():
            self.R = V[:, keep] * np.sqrt(s[keep])
            self._weights_to_coef = V[:, keep] / np.sqrt(s[keep])
        else:  # a zero Gram matrix: every output is 0, one zero factor column keeps W a matrix
            self.R = np.zeros((self.n_samples, 1))
            self._weights_to_coef = np.zeros((self.n_samples, 1))
        self.Y = sign_coding(self.y_index, self.n_classes)

    def _kernel(self, X_new) -> np.ndarray:
        return kernel_matrix(X_new, self.X, self.kernel, self.gamma, self.degree, self.coef0)

    def kernel_to(self, X_new) -> np.ndarray:
        """k(X_new, X): the kernel between new points and the training points (n_new, n_samples).

        With ``kernel="precomputed"`` ``X_new`` already is that matrix and is only validated.
        """
        X_new = check_predict_input(X_new, n_features=self.X.shape[1], kernel=self.kernel)
        return X_new if self.kernel == "precomputed" else self._kernel(X_new)

    def coef_from_weights(self, W: np.ndarray) -> np.ndarray:
        """Expansion coefficients B with K B = R W, so that f(x) = k(x, X) B."""
        return self._weights_to_coef @ W

    @property
    def lam(self) -> float:
        """The Lecture's regularisation weight lambda = 1/C (objective lambda/2 ||w||^2 + loss)."""
        return 1.0 / self.C


def identity_scores(raw: np.ndarray) -> np.ndarray:
    return raw


@dataclass
class Solution:
    """An optimal solution of one formulation, primal or dual.

    ``objective`` is the optimal value on the canonical scale 1/2 ||W||^2 + C * sum(loss).
    ``coef`` (N x m) and ``intercept`` (m,) give the raw outputs f(x) = k(x, X) coef + intercept;
    ``scores`` maps raw outputs to class scores (identity for most machines; prototype maxima for
    MProt; projections on the simplex code vectors for the simplex machines).
    ``weights`` is W in factor space (||w||^2 = ||weights||_F^2) and ``dual_coef`` the dual
    variables (for a primal, the multipliers cvxpy returns for its margin constraints).
    """

    formulation: str
    form: str
    objective: float
    coef: np.ndarray
    problem: Problem
    weights: np.ndarray
    intercept: np.ndarray | None = None
    dual_coef: np.ndarray | None = None
    scores: Callable[[np.ndarray], np.ndarray] = identity_scores
    solver: str = DEFAULT_SOLVER
    solve_time: float = 0.0
    extras: dict = field(default_factory=dict)

    def outputs(self, X) -> np.ndarray:
        """Raw outputs k(X, X_train) coef + intercept, shape (n, m)."""
        raw = self.problem.kernel_to(X) @ self.coef
        return raw if self.intercept is None else raw + self.intercept

    def training_outputs(self) -> np.ndarray:
        raw = self.problem.K @ self.coef
        return raw if self.intercept is None else raw + self.intercept

    def decision_function(self, X) -> np.ndarray:
        """Class scores, shape (n, L)."""
        return self.scores(self.outputs(X))

    def predict(self, X) -> np.ndarray:
        return self.problem.classes[np.argmax(self.decision_function(X), axis=1)]

    @property
    def norm_sq(self) -> float:
        return float(np.sum(self.weights**2))


def add_bias(F, b):
    """F + 1 b^T for a cvxpy output matrix F (n x m) and bias vector b (m,); F if b is None."""
    import cvxpy as cp

    if b is None:
        return F
    return F + np.ones((F.shape[0], 1)) @ cp.reshape(b, (1, b.shape[0]), order="C")


def repeat_columns(v, m: int):
    """v 1^T (n x m) for a cvxpy vector v (n,): the rank-one term of I - mu 11^T.

    Multiplying by the dense L x L matrix I - mu 11^T would couple every output with every other
    in the solver's constraint matrix; carrying v = (row sums) as its own variable keeps it sparse.
    """
    import cvxpy as cp

    return cp.reshape(v, (v.shape[0], 1), order="C") @ np.ones((1, m))


def check_solver(solver: str) -> str:
    import cvxpy as cp

    name = str(solver).upper()
    if name not in cp.installed_solvers():
        raise ValueError(
            f"Unknown or uninstalled solver {solver!r}; have {cp.installed_solvers()}."
        )
    return name


_SOLVER_OPTIONS = {
    # faer: Clarabel's supernodal multithreaded LDL, several times faster than qdldl on the dense
    # KKT systems that kernel problems give.
    "CLARABEL": {
        "tol_gap_abs": 1e-9,
        "tol_gap_rel": 1e-9,
        "tol_feas": 1e-9,
        "max_iter": 500,
        "direct_solve_method": "faer",
    },
    "OSQP": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 400_000, "polishing": True},
}


def solve(objective, constraints, solver: str = DEFAULT_SOLVER, **options):
    """Build and solve a cvxpy problem; raise :class:`NotSolvedError` unless it is optimal.

    Returns the solved ``cvxpy.Problem`` and the wall time of the solve.
    """
    import cvxpy as cp

    name = check_solver(solver)
    problem = cp.Problem(objective, constraints)
    opts = {**_SOLVER_OPTIONS.get(name, {}), **options}
    start = time.perf_counter()
    try:
        problem.solve(solver=name, **opts)
    except cp.error.SolverError as exc:
        raise NotSolvedError(f"{name} failed on this problem: {exc}") from exc
    if problem.status == cp.OPTIMAL_INACCURATE and opts.get("direct_solve_method") == "faer":
        # faer's LDL can stall short of the 1e-9 tolerances where qdldl reaches them (the
        # logistic dual on the digits problem of `msvm verify --quick`, Clarabel 0.11.1).
        problem.solve(solver=name, **{**opts, "direct_solve_method": "qdldl"})
    elapsed = time.perf_counter() - start
    if problem.status != cp.OPTIMAL:
        raise NotSolvedError(
            f"{name} stopped with status {problem.status!r}; the reference value needs an "
            "optimal solution (try solver='CLARABEL', or rescale C / the kernel)."
        )
    return problem, elapsed
