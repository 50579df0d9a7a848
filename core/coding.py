"""Label codings: ISVM's +-1 coding matrix, the simplex code, and output codes for MKPM."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state


def label_index(y):
    """Sorted class labels and the class index (0..L-1) of each entry of ``y``."""
    classes, index = np.unique(np.asarray(y), return_inverse=True)
    return classes, index.astype(np.int64)


def one_hot(y_index: np.ndarray, n_classes: int) -> np.ndarray:
    """The N x L 0/1 indicator of each pattern's class (the Lecture's e_{y_i})."""
    E = np.zeros((y_index.size, n_classes))
    E[np.arange(y_index.size), y_index] = 1.0
    return E


def sign_coding(y_index: np.ndarray, n_classes: int) -> np.ndarray:
    """ISVM (3.1): the N x L coding matrix, y_ij = 1 if pattern i is in class j, else -1."""
    return 2.0 * one_hot(y_index, n_classes) - 1.0


def simplex_code(n_classes: int) -> np.ndarray:
    """Simplex (Definition 1.1): T unit vectors in R^(T-1) with pairwise products -1/(T-1).

    Built by the recursion (1.1), which adds one dimension per step::

        C[1] = [1; -1],   C[T] = [[1,   0 ... 0                     ],
                                  [-1/T, C[T-1] * sqrt(1 - 1/T^2)   ]   (T rows below)

    As printed, (1.1) puts the row vector ``u = (-1/T, ..., -1/T)`` beside the leading 1 and the
    zero column ``v`` below it; that block matrix does not have the right shape.  The working
    recursion (above) has the zeros in the first row and ``-1/T`` down the first column; it is the
    one whose rows satisfy Definition 1.1 (tested in ``tests/core/test_coding.py``).

    Returns the T x (T-1) matrix whose row t is the code vector a_t of class t.
    """
    if n_classes < 2:
        raise ValueError(f"The simplex code needs at least 2 classes, got {n_classes}.")
    code = np.array([[1.0], [-1.0]])
    for T in range(2, n_classes):
        top = np.zeros((1, T))
        top[0, 0] = 1.0
        below = np.hstack([np.full((T, 1), -1.0 / T), code * np.sqrt(1.0 - 1.0 / T**2)])
        code = np.vstack([top, below])
    return code


def one_vs_all_code(n_classes: int) -> np.ndarray:
    """MKPM §4 output code of length L = Q: c_q(l) = +1 if q = l, else -1 (rows are codewords)."""
    return 2.0 * np.eye(n_classes) - 1.0


def random_code(n_classes: int, length: int, random_state=None) -> np.ndarray:
    """A dense random +-1 output code (Dietterich & Bakiri) with distinct, non-constant columns.

    Rows are the codewords of the ``n_classes`` classes.  Each column splits the classes into two
    non-empty groups, and no two rows are equal, so the code can tell every class apart.
    """
    if length < int(np.ceil(np.log2(n_classes))):
        raise ValueError(f"A code of length {length} cannot separate {n_classes} classes.")
    rng = check_random_state(random_state)
    for _ in range(1000):
        code = rng.choice([-1.0, 1.0], size=(n_classes, length))
        columns_split = np.all(np.abs(code.sum(axis=0)) < n_classes)
        rows_distinct = np.unique(code, axis=0).shape[0] == n_classes
        if columns_split and rows_distinct:
            return code
    raise ValueError(f"Could not draw a valid random code of length {length}.")
