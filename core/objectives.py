"""numpy values of every primal loss, on the canonical scale ``1/2 ||W||^2 + C * sum(loss)``.

These are the second, independent statement of each loss (the first is the cvxpy expression in
``msvm.reference``); the fast layer reports its ``objective_`` with them and the tests evaluate them
at the weights recovered from each dual.  ``F`` is the N x m matrix of outputs on the training
points (class scores, prototype scores or simplex-code outputs); ``y_index`` the class of each row.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from msvm.core.coding import sign_coding


def _true_score(F: np.ndarray, y_index: np.ndarray) -> np.ndarray:
    return F[np.arange(F.shape[0]), y_index]


def _total(terms: np.ndarray, weights=None) -> float:
    """sum_i s_i terms_i (the weighted loss: pattern i's term times its weight s_i, ``weights``
    of shape (N,); None is every s_i = 1).  ``terms`` is (N,) or (N, m), summed over a row."""
    if weights is None:  # the unweighted sum exactly as before weights existed (bit for bit)
        return float(terms.sum())
    if terms.ndim == 2:
        terms = terms.sum(axis=1)
    return float(np.dot(weights, terms))


def _negatives(F: np.ndarray, y_index: np.ndarray) -> np.ndarray:
    mask = np.ones(F.shape, dtype=bool)
    mask[np.arange(F.shape[0]), y_index] = False
    return mask


def hinge_per_class_loss(F, y_index, weights=None):
    """ISVM (4.1) and one-vs-all: sum_ij max(0, 1 - y_ij f_j(x_i))."""
    Y = sign_coding(y_index, F.shape[1])
    return _total(np.maximum(0.0, 1.0 - Y * F), weights)


def weston_watkins_loss(F, y_index, margin=1.0, weights=None):
    """ISVM (5.1)/(E.1), Lecture Sum-SVM: sum_i sum_{j != y_i} max(0, margin - f_yi + f_j)."""
    gaps = margin - (_true_score(F, y_index)[:, None] - F)
    if weights is None:
        return float(np.maximum(0.0, gaps)[_negatives(F, y_index)].sum())
    return _total(np.where(_negatives(F, y_index), np.maximum(0.0, gaps), 0.0), weights)


def crammer_singer_loss(F, y_index, cost=None, rescaling="margin", weights=None):
    """ISVM (5.2)/(F.1), MProt (4), Lecture Max-SVM, and the Table 1 rescaled variants.

    margin rescaling: max(0, max_{j != y_i} Delta(y_i, j) - (f_yi - f_j));
    slack rescaling:  max(0, max_{j != y_i} Delta(y_i, j) (1 - (f_yi - f_j))).
    ``cost=None`` is Delta = 1 - I, where both are the plain Crammer-Singer loss.
    """
    L = F.shape[1]
    Delta = 1.0 - np.eye(L) if cost is None else np.asarray(cost, dtype=float)
    D = Delta[y_index]
    gap = _true_score(F, y_index)[:, None] - F
    terms = D - gap if rescaling == "margin" else D * (1.0 - gap)
    terms = np.where(_negatives(F, y_index), terms, 0.0)
    return _total(np.maximum(0.0, terms.max(axis=1)), weights)


def lee_lin_wahba_loss(F, y_index, weights=None):
    """ISVM Table 1 (Lee, Lin & Wahba): sum_i sum_{j != y_i} max(0, f_j(x_i) + 1/(L-1))."""
    L = F.shape[1]
    if weights is None:
        return float(np.maximum(0.0, F + 1.0 / (L - 1))[_negatives(F, y_index)].sum())
    return _total(
        np.where(_negatives(F, y_index), np.maximum(0.0, F + 1.0 / (L - 1)), 0.0), weights
    )


def multi_prototype_loss(F, prototype_index, prototype_class, y_index, weights=None):
    """MProt (8) at a fixed assignment: sum_i max(0, 1 + max_{r in N_i} f_r(x_i) - f_{y_i}(x_i)).

    ``prototype_index[i]`` is the positive prototype assigned to pattern i and
    ``prototype_class[r]`` the class of prototype r.
    """
    negative = prototype_class[None, :] != y_index[:, None]
    theta = np.where(negative, F, -np.inf).max(axis=1)
    return _total(np.maximum(0.0, 1.0 + theta - _true_score(F, prototype_index)), weights)


def simplex_hinge_loss(F, codes, weights=None):
    """Simplex §1.3: sum_i max(0, 1 - <y_i, f(x_i)>) with y_i the code vector of x_i's class."""
    return _total(np.maximum(0.0, 1.0 - np.einsum("ij,ij->i", codes, F)), weights)


def simplex_square_loss(F, codes, weights=None):
    """Simplex §1.3: sum_i ||y_i - f(x_i)||^2."""
    return _total((codes - F) ** 2, weights)


def logistic_loss(F, y_index, weights=None):
    """Lecture, multiclass logistic regression: sum_i log sum_j exp(m_j(x_i)) - m_{y_i}(x_i)."""
    return _total(logsumexp(F, axis=1) - _true_score(F, y_index), weights)


def canonical_objective(norm_sq: float, loss: float, C: float) -> float:
    """The canonical primal value 1/2 ||W||^2 + C * loss."""
    return 0.5 * float(norm_sq) + C * float(loss)
