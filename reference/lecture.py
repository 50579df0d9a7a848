"""Matrices and rules shared by the Lecture's Max-SVM and Sum-SVM (Giselsson, *Multiclass
Classification*, "Dual problems and Kernel methods").

The Lecture stacks w = (w_1, ..., w_K) in R^{pK} and writes the outputs of pattern i as X_i w with
X_i = blockdiag(phi(x_i)^T, ..., phi(x_i)^T) = I_K (x) phi(x_i)^T (K x pK).  Stacking the X_i gives
X (NK x pK) with X X^T = K (x) I_K, the Kronecker kernel.  Here phi(x_i) is row i of the factor R
(K = R R^T), so X is built explicitly and sparse.

Both machines are stated in the Lecture's lambda form, lambda/2 ||w||^2 + sum(loss); with
C = 1/lambda their canonical value 1/2 ||w||^2 + C sum(loss) is C times it, and the Fenchel dual
(minimise f*(mu) + g*(-(AX)^T mu)) has optimal value minus the lambda-form primal optimum.

The primals hand the solver (1/lambda) times the printed objective: the same minimiser, but at
C = 1e8 and beyond the printed form's regulariser falls below the solver's tolerances and it
reported 'optimal' at wrong values.  The duals are solved as printed (scaled by 1/lambda they
failed earlier, at C = 1e8 on iris-30 RBF).  Every solution is certified
(``msvm.reference.certificate``), and at large C the hard-margin retry
(``msvm.reference.problem.hard_margin_fallback``) solves at a smaller C when that is provably the
same problem.

Sample weights (``Problem(..., sample_weight=s)``) scale pattern i's loss f_i to s_i f_i; its
conjugate s_i f_i*(mu_i / s_i) confines mu_i to s_i times the printed set (``max_svm``,
``sum_svm``) and leaves the Kronecker kernel, the primal recovery and the class rules unchanged.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from msvm.reference.problem import Problem, Solution, certified


def stacked_features(R: np.ndarray, n_classes: int) -> sp.csr_matrix:
    """X = [X_1; ...; X_N] with X_i = I_K (x) r_i^T: entry (iK + k, kp + f) = R[i, f]."""
    N, r = R.shape
    i, k, f = np.meshgrid(np.arange(N), np.arange(n_classes), np.arange(r), indexing="ij")
    rows = (i * n_classes + k).ravel()
    cols = (k * r + f).ravel()
    return sp.csr_matrix((R[i, f].ravel(), (rows, cols)), shape=(N * n_classes, r * n_classes))


def kronecker_kernel(K: np.ndarray, n_classes: int) -> np.ndarray:
    """K (x) I_K, which the Lecture shows equals X X^T."""
    return np.kron(K, np.eye(n_classes))


def weights_matrix(w: np.ndarray, p: Problem) -> np.ndarray:
    """The stacked w = (w_1, ..., w_K) as the factor-space matrix W (rank x K)."""
    return w.reshape(p.n_classes, p.R.shape[1]).T


def dual_solution(name: str, p: Problem, A: sp.spmatrix, mu: np.ndarray, value: float, **kw):
    """Primal recovery w = -(1/lambda) X^T A^T mu (A = M or D) and the canonical dual value."""
    lam = p.lam
    X = stacked_features(p.R, p.n_classes)
    w = -(X.T @ (A.T @ mu)) / lam
    coef = -(A.T @ mu).reshape(p.n_samples, p.n_classes) / lam  # row i: -(1/lambda) A_i^T mu_i
    return certified(
        Solution(
            formulation=name,
            form="dual",
            objective=-value / lam,
            coef=coef,
            problem=p,
            weights=weights_matrix(w, p),
            dual_coef=mu.reshape(p.n_samples, -1),
            **kw,
        )
    )


def confidences(sol: Solution, X, rule: str) -> np.ndarray:
    """The Lecture's class-prediction rule from the dual variables.

    phi(x)^T (X^T A^T mu)_j = sum_i kappa(x, x_i) (A_i^T mu_i)_j, so
    c_{y,j}(x) = -(1/lambda) (phi(x)^T (X^T A^T mu)_y - phi(x)^T (X^T A^T mu)_j) = m_y(x) - m_j(x);
    ``rule="min"``: c_y = min_{j != y} c_{y,j} (Max-SVM); ``rule="sum"``: c_y = sum_{j != y} c_{y,j}
    (Sum-SVM).  The predicted class is argmax_y c_y.
    """
    m = sol.outputs(X)  # = -(1/lambda) k(x, X) (A_i^T mu_i)_j, built by ``dual_solution``
    return class_rule(m[:, :, None] - m[:, None, :], rule)  # c[:, y, j] = c_{y,j}


def class_rule(c: np.ndarray, rule: str) -> np.ndarray:
    """c_y from the pairwise confidences c[:, y, j] = c_{y,j}: min or sum over j != y."""
    off = ~np.eye(c.shape[1], dtype=bool)[None]
    if rule == "min":
        return np.where(off, c, np.inf).min(axis=2)
    if rule == "sum":
        return np.where(off, c, 0.0).sum(axis=2)
    raise ValueError(f"rule must be 'min' or 'sum', got {rule!r}.")
