"""Leave-one-out predictions without N fits from scratch (for ISVM §9's robustness study).

Leaving pattern i out of a dual is the same dual with pattern i's variables fixed at 0 (upper
bound 0).  So the full-data solution is computed once per C, and each fold starts from it:
pattern i's column is taken off the outputs, U -= K[:, i] B_i, and the engine resumes from the
remaining dual variables.  Removing one pattern disturbs the optimum locally, so the folds are
solved by greedy selection (largest KKT violation first), which reaches the tolerance in about a
quarter of the cyclic steps here.  When pattern i has no non-zero dual variable (not a support
vector) the full solution already is the fold's optimum and its outputs are read off directly.
The left-out point's outputs are U_i = sum_{k != i} K_ik B_k, from the same state: no refit and
no kernel recomputation.  Along a grid of C values the full-data fit itself is warm-started from
the previous C (the estimators' ``warm_start``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from msvm.core.kernels import kernel_matrix, resolve_gamma
from msvm.fast.base import validate_training_data
from msvm.fast.engine import DecompositionSolver, add_column
from msvm.fast.kernels import get_column, precomputed_source
from msvm.fast.patterns import dual_vectors


@dataclass
class LeaveOneOutPath:
    """Leave-one-out predictions along a grid of C values.

    ``predictions`` has shape (len(Cs), n_samples), labels in the training set's type;
    ``steps`` counts the engine's pattern updates over every full fit and fold.
    """

    Cs: np.ndarray
    predictions: np.ndarray
    steps: int

    def accuracy(self, y) -> np.ndarray:
        """Leave-one-out accuracy at each C."""
        return np.mean(self.predictions == np.asarray(y)[None, :], axis=1)


def gram_matrix(estimator, X, y) -> np.ndarray:
    """The training Gram matrix of ``estimator``'s kernel (validated input; X if precomputed)."""
    X, _ = validate_training_data(clone(estimator), X, y)
    if estimator.kernel == "precomputed":
        return X
    gamma = 0.0 if estimator.kernel == "linear" else resolve_gamma(estimator.gamma, X)
    return kernel_matrix(X, X, estimator.kernel, gamma, estimator.degree, estimator.coef0)


def leave_one_out_path(estimator, X, y, Cs, warm_start: bool = True) -> LeaveOneOutPath:
    """Leave-one-out predictions of a fast estimator (dcd solver, no bias) for every C in ``Cs``.

    The Gram matrix is computed once.  ``warm_start=False`` solves every full fit and every
    fold from alpha = 0 with the same machinery (the baseline of ``benchmarks/loo.py``).
    """
    if getattr(estimator, "fit_intercept", False) or getattr(estimator, "solver", "dcd") != "dcd":
        raise ValueError("leave_one_out needs solver='dcd' and no fit_intercept.")
    Cs = np.asarray(Cs, dtype=np.float64).ravel()
    if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
        raise ValueError(f"Cs must be a non-empty list of positive numbers; got {Cs}.")
    K = np.asarray(gram_matrix(estimator, X, y), dtype=np.float64)
    source = precomputed_source(K)
    model = clone(estimator).set_params(kernel="precomputed", warm_start=warm_start)
    predictions, steps = [], 0
    for C in Cs:
        model.set_params(C=C).fit(K, y)
        fold_predictions, fold_steps = _folds(model, source, warm_start)
        predictions.append(model.classes_[fold_predictions])
        steps += model.n_steps_ + fold_steps
    return LeaveOneOutPath(Cs, np.array(predictions), steps)


def leave_one_out(estimator, X, y, warm_start: bool = True):
    """Leave-one-out predictions at the estimator's own C: (predictions, engine steps)."""
    path = leave_one_out_path(estimator, X, y, [estimator.C], warm_start)
    return path.predictions[0], path.steps


def _folds(model, source, warm_start: bool):
    """Class indices predicted for each left-out pattern of the fitted ``model``."""
    y_index = model._y_index
    L = model.classes_.size
    full_alpha = model.dual_coef_ if model.dual_coef_.ndim == 2 else model._beta
    if full_alpha.shape[1] != L:
        raise ValueError("leave_one_out takes machines with one output per class.")
    c = model._inhibition(L)
    lin, free = model._dual_terms(y_index, L)
    hi = model._upper_bounds(float(model.C), free)
    full_U = model._outputs(source, 0.0, full_alpha, y_index, c)
    _, full_B = dual_vectors(model._kind, full_alpha, y_index, c)
    predictions = np.argmax(full_U, axis=1)  # right as it stands for non-support vectors
    steps = 0
    for i in range(len(y_index)):
        if warm_start and not np.any(full_alpha[i]):
            continue
        if warm_start:
            alpha = full_alpha.copy()
            U = full_U.copy(order="F")
            add_column(U, get_column(source, i), 0.0, -full_B[i])  # take pattern i out
        else:
            alpha, U = np.zeros_like(full_alpha), np.zeros(full_alpha.shape, order="F")
        alpha[i] = 0.0
        fold_hi = hi.copy()
        fold_hi[i] = 0.0
        if warm_start:
            solver = DecompositionSolver(
                model._kind,
                c,
                lin,
                fold_hi,
                y_index,
                tol=model.tol,
                max_iter=model.max_iter,
                shrinking=False,
                random_state=model.random_state,
                selection="greedy",
            )
        else:  # the estimator's own solver settings, from scratch
            solver = model._make_solver(c, lin, fold_hi, y_index, 0.0)
        solver.solve_kernel(source, alpha, U)
        steps += solver.n_steps
        predictions[i] = np.argmax(U[i])  # outputs of the left-out point, B_i = 0
    return predictions, steps
