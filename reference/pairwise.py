"""Pieces shared by the machines whose constraints compare f_{y_i}(x_i) with f_j(x_i), j != y_i
(Weston-Watkins, Crammer-Singer and its rescaled variants, and by MProt with prototypes).

A multiplier alpha_ij on the constraint f_{y_i}(x_i) - f_j(x_i) >= ... contributes
alpha_ij (e_{y_i} - e_j) phi(x_i) to w (ISVM E.2, F.3), so the expansion coefficients are

    B_ik = I(k = y_i) sum_j alpha_ij - alpha_ik        (alpha_{i y_i} = 0)
"""

from __future__ import annotations

import numpy as np

from msvm.core.coding import one_hot


def negatives(y_index: np.ndarray, n_outputs: int, output_class=None) -> np.ndarray:
    """Boolean N x m mask of the outputs (classes or prototypes) that are not of x_i's class."""
    output_class = np.arange(n_outputs) if output_class is None else output_class
    return output_class[None, :] != y_index[:, None]


def difference_coef(alpha, true_output: np.ndarray, n_outputs: int):
    """B = E o (alpha 1) - alpha, E the indicator of ``true_output``; numpy or cvxpy ``alpha``."""
    import cvxpy as cp

    E = one_hot(true_output, n_outputs)
    if isinstance(alpha, np.ndarray):
        return E * alpha.sum(axis=1, keepdims=True) - alpha
    return cp.multiply(E, cp.sum(alpha, axis=1, keepdims=True) @ np.ones((1, n_outputs))) - alpha


def coef_from_dual(p, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coef, weights) of dual variables ``alpha`` (alpha_iy = 0): w = R^T B with B =
    ``difference_coef`` (B_iy = sum_j alpha_ij, B_ij = -alpha_ij), the outputs K B."""
    coef = difference_coef(alpha, p.y_index, p.n_classes)
    return coef, p.R.T @ coef


def differences(F, true_output: np.ndarray, rows: np.ndarray, cols: np.ndarray):
    """f_{y_i}(x_i) - f_j(x_i) for the listed (i, j) pairs (cvxpy expression)."""
    return F[rows, true_output[rows]] - F[rows, cols]
