"""Leave-one-out predictions without N fits from scratch (for ISVM §9's robustness study).

Leaving pattern i out of a dual is the same dual with pattern i's variables fixed at 0 (upper
bound 0).  So the full-data solution is computed once per C, and each fold starts from it:
pattern i's column is taken off the outputs, U -= K[:, i] B_i, and the engine resumes from the
remaining dual variables: cyclic epochs over every pattern, run in numba from fold to fold (the
per-fold Python overhead was as large as the folds' own work at the study's subset sizes).  When
pattern i has no non-zero dual variable (not a support vector) the full solution already is the
fold's optimum and its outputs are read off directly.  The left-out point's outputs are
U_i = sum_{k != i} K_ik B_k, from the same state: no refit and no kernel recomputation.  Along a
grid of C values the full-data fit itself is warm-started from the previous C (the estimators'
``warm_start``).

A fold only needs the left-out point's class, so it stops as soon as that class is certain: the
fold's duality gap bounds how far its outputs can be from the optimum's (``certain``), and once
the leading class leads every other by more than that bound, the optimum predicts it too.  Such
a prediction is the fold optimum's own, where a fold run to ``tol`` may still differ from it in a
near-tie.  On the robustness study's slow folds this saves a third of the inhibitory machine's
steps and 3-15 % of the others' (benchmarks/NOTES.md, stop 43).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numba as nb
import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state, column_or_1d

from msvm.core.kernels import kernel_matrix, kernel_values
from msvm.core.validation import check_gram_memory
from msvm.fast.base import validate_training_data, weighted_bounds
from msvm.fast.engine import (
    SKIP_FRACTION,
    WARM_KERNEL_PATH,
    add_column,
    epoch_limit,
    exhausted,
    kernel_epochs,
    new_schedule,
    step_budget,
)
from msvm.fast.kernels import get_column, kernel_diagonal, precomputed_source
from msvm.fast.patterns import CS, activate_all, output_shift, pattern_gradient, state_coef
from msvm.fast.transfer import partner_table


@dataclass
class LeaveOneOutPath:
    """Leave-one-out predictions along a grid of C values.

    ``predictions`` has shape (len(Cs), n_samples), labels in the training set's type;
    ``steps`` counts the engine's pattern updates over every full fit and fold.
    """

    Cs: np.ndarray
    predictions: np.ndarray
    steps: int
    unconverged: int = 0  # folds that stopped at max_iter (a ConvergenceWarning says so too)

    def accuracy(self, y) -> np.ndarray:
        """Leave-one-out accuracy at each C (``y`` as passed to ``leave_one_out_path``)."""
        y = column_or_1d(y)
        if y.size != self.predictions.shape[1]:
            raise ValueError(
                f"y has {y.size} labels; the path has {self.predictions.shape[1]} predictions."
            )
        return np.mean(self.predictions == y[None, :], axis=1)


def gram_matrix(estimator, X, y):
    """The training Gram matrix of ``estimator``'s kernel (X itself if precomputed; kernel(X, X)
    for a callable, ``msvm.fast.callable_kernel``) and the labels as one dimension, both
    validated as ``fit`` validates them."""
    owner = f"{type(estimator).__name__}'s "  # (a search's estimator, not the search)
    if callable(estimator.kernel):
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        check_gram_memory(X.shape[0], estimator.cache_size, "Leave-one-out without refits", owner)
        gram = kernel_values(estimator.kernel, X, X)
        return gram_matrix(clone(estimator).set_params(kernel="precomputed"), gram, y)
    model = clone(estimator)
    X, y_index = validate_training_data(model, X, y)
    y = model.classes_[y_index]
    if estimator.kernel == "precomputed":
        return X, y
    check_gram_memory(X.shape[0], estimator.cache_size, "Leave-one-out without refits", owner)
    K = kernel_matrix(X, X, estimator.kernel, model._gamma, estimator.degree, estimator.coef0)
    return K, y


MACHINES = (
    "InhibitorySVC, OneVsAllSVC, WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC and "
    "SimplexSVC with loss='hinge'"
)


def check_machine(estimator):
    """ValueError unless the folds of ``estimator`` are its dual with one pattern's variables
    fixed at 0, which needs one dual variable per pattern and class (not MultiPrototypeSVC's
    prototypes, the squared simplex loss or MKPM's kernel PCA)."""
    loss = getattr(estimator, "loss", "hinge")
    if not getattr(estimator, "_leave_one_out", False) or loss != "hinge":
        raise ValueError(
            f"Leave-one-out without refits takes {MACHINES}; got {type(estimator).__name__}"
            f"{'' if loss == 'hinge' else f' with loss={loss!r}'}."
        )


# A fold checks whether its left-out point's class is already certain (``certain``) at its start
# and after every CERTIFY_STEPS steps: a duality gap costs about as much as a few steps.
CERTIFY_STEPS = 32


def leave_one_out_path(
    estimator, X, y, Cs, warm_start: bool = True, sample_weight=None
) -> LeaveOneOutPath:
    """Leave-one-out predictions of a fast estimator (dcd solver, no bias) for every C in ``Cs``.

    The Gram matrix is computed once, so ``gamma="scale"`` / ``"auto"`` is resolved on all N
    points (a refit would resolve it on N - 1: pass a number for fold-by-fold equality).  A
    pattern that is the only one of its class is refitted from scratch: its fold is a machine
    with one class fewer, not the full dual with one pattern fixed.  ``warm_start=False``
    solves every full fit and every fold from alpha = 0 with the same machinery (the baseline
    of ``benchmarks/loo.py``).  ``sample_weight`` (and the estimator's ``class_weight``) weigh
    the patterns as in ``fit``; every fold keeps the full data's weights s_i (a "balanced"
    class weight is not recomputed on the N - 1 patterns of a fold).
    """
    check_machine(estimator)
    if getattr(estimator, "fit_intercept", False) or getattr(estimator, "solver", "dcd") != "dcd":
        raise ValueError("leave_one_out needs solver='dcd' and no fit_intercept.")
    Cs = np.asarray(Cs, dtype=np.float64).ravel()
    if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
        raise ValueError(f"Cs must be a non-empty list of positive numbers; got {Cs}.")
    K, y = gram_matrix(estimator, X, y)
    source = precomputed_source(K)
    model = clone(estimator).set_params(kernel="precomputed", warm_start=warm_start)
    if model.get_params().get("probability"):  # the path needs scores, not five more fits per C
        model.set_params(probability=False)
    _, y_index, counts = np.unique(y, return_inverse=True, return_counts=True)
    singletons = np.flatnonzero(counts[y_index] == 1)  # folds that lose their class
    predictions, steps, unconverged = [], 0, 0
    for C in Cs:
        model.set_params(C=C).fit(K, y, sample_weight=sample_weight)
        fold_predictions, fold_steps, fold_unconverged = _folds(model, source, warm_start)
        labels = model.classes_[fold_predictions]
        for i in singletons:
            labels[i] = _refit_fold(model, K, y, i)
        predictions.append(labels)
        steps += model.n_steps_ + fold_steps
        unconverged += fold_unconverged
    return LeaveOneOutPath(Cs, np.array(predictions), steps, unconverged)


def _refit_fold(model, K, y, i):
    """The prediction for pattern i of a machine fitted from scratch on the other patterns."""
    rest = np.delete(np.arange(len(y)), i)
    if np.unique(y[rest]).size < 2:
        return y[rest][0]  # one class left: every prediction is that class
    fold = clone(model).set_params(warm_start=False, class_weight=None)
    weights = None if model._weights is None else model._weights[rest]
    if weights is not None and not np.any(weights > 0):
        return y[rest][0]  # nothing left to fit: any class (the fold has no loss term)
    fold.fit(K[np.ix_(rest, rest)], y[rest], sample_weight=weights)
    return fold.predict(K[i : i + 1, rest])[0]


def leave_one_out(estimator, X, y, warm_start: bool = True, sample_weight=None):
    """Leave-one-out predictions at the estimator's own C: (predictions, engine steps)."""
    path = leave_one_out_path(estimator, X, y, [estimator.C], warm_start, sample_weight)
    return path.predictions[0], path.steps


def fitted_dual(model, source):
    """The engine's dual of the fitted ``model`` (no bias) on its kernel column ``source``:
    (alpha, hi, lin, c, U), with the outputs U = K state_coef(alpha)."""
    y_index, L = model._y_index, model.classes_.size
    alpha = model.dual_coef_ if model.dual_coef_.ndim == 2 else model._beta
    c = model._inhibition(L)
    lin, free = model._dual_terms(y_index, L)
    hi = weighted_bounds(model._upper_bounds(float(model.C), free), model._weights)
    return alpha, hi, lin, c, model._outputs(source, 0.0, alpha, y_index, c)


def _folds(model, source, warm_start: bool):
    """Class indices predicted for each left-out pattern of the fitted ``model``."""
    y_index = model._y_index
    L = model.classes_.size
    full_alpha, hi, lin, c, full_U = fitted_dual(model, source)
    if warm_start:
        full_S = state_coef(model._kind, full_alpha, y_index, c)
        kdiag = np.empty(len(y_index))
        kernel_diagonal(source, kdiag)
        seed = check_random_state(model.random_state).randint(2**31 - 1)
        dual = (full_alpha, hi, lin, y_index, kdiag, partner_table(len(y_index)))
        shift = output_shift(model._kind, c, L)
        limits = (epoch_limit(model.max_iter), step_budget(model.max_iter, len(y_index)))
        args = (model._kind, c, shift, model.tol, SKIP_FRACTION * model.tol, *limits, seed,
                CERTIFY_STEPS)  # fmt: skip
        predictions, steps, unconverged = warm_folds(source, full_U, full_S, dual, *args)
        if unconverged:
            warnings.warn(
                f"{unconverged} leave-one-out folds stopped (max_iter={model.max_iter}, its step "
                f"budget, or a stall) "
                f"with a KKT violation above tol={model.tol:g}; increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return predictions, steps, unconverged
    predictions, steps = np.empty(len(y_index), dtype=np.int64), 0
    for i in range(len(y_index)):  # the baseline: every fold from alpha = 0, as a fit would
        alpha, U = np.zeros_like(full_alpha), np.zeros(full_U.shape, order="F")
        fold_hi = hi.copy()
        fold_hi[i] = 0.0
        solver = model._make_solver(c, lin, fold_hi, y_index, 0.0)
        solver.solve_kernel(source, alpha, U)
        steps += solver.n_steps
        predictions[i] = np.argmax(U[i, :L])  # outputs of the left-out point (shift: no change)
    return predictions, steps, 0


@nb.njit(cache=True)
def warm_folds(source, full_U, full_S, dual, kind, c, shift, tol, skip_below, max_iter, budget,
               seed, certify_every):  # fmt: skip
    """Every fold from the full solution: (predicted class indices, steps, folds that ended above
    tol: at max_iter epochs, at the step ``budget`` or stalled; ``engine.step_budget``).

    Fold i fixes pattern i's variables at 0 and takes its column off the outputs (``full_S`` are
    the engine's coefficients ``patterns.state_coef``; the row shift of K B does not change which
    class is largest, so predictions read U[i, :L] directly), then runs the engine's epochs
    (``engine.kernel_epochs``: random order, shrinking), one at a time, until a pass over every
    pattern has KKT violation <= tol or, before that, the left-out point's class is certain
    (``certain``, from the fold's duality gap): the fold's optimum predicts it too.  Non-support
    vectors need no step at all.
    """
    full_alpha, hi, lin, y_index, kdiag, partners = dual
    N, L = full_alpha.shape
    np.random.seed(seed)  # noqa: NPY002 -- numba's own generator, seeded from random_state
    seeds = np.random.randint(0, 2**31 - 1, N)  # noqa: NPY002 -- a fold's own, whatever others do
    predictions = np.empty(N, dtype=np.int64)
    alpha = np.empty_like(full_alpha)
    fold_hi = hi.copy()
    U = np.empty_like(full_U)  # Fortran order, like full_U
    cls, n_cls = np.empty((N, L), dtype=np.int64), np.empty(N, dtype=np.int64)
    active = np.empty(N, dtype=np.int64)
    steps = unconverged = 0
    for i in range(N):
        if not np.any(full_alpha[i] != 0.0):
            predictions[i] = np.argmax(full_U[i, :L])
            continue
        alpha[:] = full_alpha
        alpha[i] = 0.0
        fold_hi[i] = 0.0
        U[:] = full_U
        add_column(U, get_column(source, i), 0.0, -full_S[i])
        activate_all(fold_hi, cls, n_cls)
        active[:] = np.arange(N)
        fold = (alpha, fold_hi, lin, y_index, kdiag, cls, n_cls, partners)
        schedule = new_schedule(tol, skip_below, WARM_KERNEL_PATH, budget)
        args = (schedule, tol, skip_below, 0.0, source, 0.0, U, fold, kind, c, shift, -1, None, 0)
        epochs, n_active, converged, unchecked = 0, N, False, 0
        sure = False  # (not checked at the start: 1 % of digits' steps for a gap per fold)
        while not (sure or converged) and epochs < max_iter and not exhausted(schedule):
            ran, converged, n_active, taken = kernel_epochs(
                1, seeds[i] if epochs == 0 else -1, active, n_active, *args
            )
            epochs += ran
            steps += taken
            unchecked += taken
            if 0 < certify_every <= unchecked:  # (a gap costs a few steps' work)
                sure = certain(U, i, L, kdiag[i], duality_gap(U, fold, kind, shift))
                unchecked = 0
        if certify_every > 0 and not (sure or converged):
            sure = certain(U, i, L, kdiag[i], duality_gap(U, fold, kind, shift))
        unconverged += not (sure or converged)
        fold_hi[i] = hi[i]
        predictions[i] = np.argmax(U[i, :L])
    return predictions, steps, unconverged


@nb.njit(cache=True)
def duality_gap(U, dual, kind, shift):
    """(P(W) - D(alpha) >= 0, the sum of its terms' sizes) at the dual variables alpha of
    ``dual`` and their outputs U.

    Every dual here is max lin . alpha - 1/2 ||W||^2 over a box 0 <= alpha <= hi (CS: alpha >= 0
    and sum_r alpha_ir <= max_r hi_ir) with W = sum_i phi(x_i) (x) Z_i in the norm of M
    (``msvm.fast.patterns``).  Its primal, P(W) = 1/2 ||W||^2 + sum_ij hi_ij max(0, g_ij) (CS:
    sum_i max_r hi_ir max(0, max_j g_ij)) with g = lin - S^T (K B) the dual gradient, is the
    machine's own (the hinge terms of ``core.objectives`` at hi = C s_i), and P(W) - D(alpha)
    = sum_ij hi_ij max(0, g_ij) - alpha_ij g_ij (CS: sum_i max_r hi_ir max(0, max_j g_ij)
    - alpha_i . g_i), summed over the free variables (hi > 0) from U = K [Z, Z 1].
    """
    alpha, hi, lin, y_index = dual[0], dual[1], dual[2], dual[3]
    N, L = alpha.shape
    every, g = np.arange(L).reshape(1, L), np.empty(L)
    total = size = 0.0
    for i in range(N):
        pattern_gradient(kind, U, i, shift, lin, i, y_index[i], every, 0, L, g)
        budget, best = 0.0, 0.0
        for j in range(L):
            if hi[i, j] > 0.0:
                total -= alpha[i, j] * g[j]
                size += (alpha[i, j] + hi[i, j]) * abs(g[j])
                if kind == CS:
                    budget, best = max(budget, hi[i, j]), max(best, g[j])
                else:
                    total += hi[i, j] * max(g[j], 0.0)
        total += budget * best
    return total, size


# The bound of ``certain`` is widened by this share of the gap's terms' sizes and of the outputs'
# size, for the rounding of the outputs (kept by increments) and of the gap (a sum of N L terms
# that cancel at the optimum): a gap computed as 0 must not certify ties at rounding level (an
# isolated point of raw glass, its outputs 1e-21 apart).
CERTAINTY_SLACK = 1e-9


@nb.njit(cache=True)
def certain(U, i, L, k_ii, gap):
    """Whether the largest of the outputs U[i, :L] of a point with k(x_i, x_i) = ``k_ii`` is
    also the largest at the optimum of a dual whose ``duality_gap`` here is ``gap``.

    P is 1-strongly convex in W and minimal at W* = W(alpha*), so 1/2 ||W - W*||^2 <= P(W) -
    P(W*); D(alpha) = lin . alpha - 1/2 ||W(alpha)||^2 is maximal over the box at alpha*, so
    1/2 ||W - W*||^2 <= D(alpha*) - D(alpha) (its gradient at alpha* points out of the box).
    With P(W*) = D(alpha*) the two add up to ||W - W*||^2 <= P(W) - D(alpha) = gap.  The
    outputs are F(x) = M g(x) with ||W||^2 = ||g||_M^2, so for v = e_t - e_l (v^T M v = 2 for
    M = I - s 11^T) |v^T (F - F*)(x_i)| <= sqrt(k_ii v^T M v) ||W - W*|| <= sqrt(2 k_ii gap):
    when class t leads every other by more than that, it leads at the optimum too.
    """
    value, size = gap
    t = np.argmax(U[i, :L])
    radius = np.sqrt(2.0 * k_ii * (max(value, 0.0) + CERTAINTY_SLACK * size))
    scale = 0.0
    for l in range(L):
        scale = max(scale, abs(U[i, l]))
    for l in range(L):
        if l != t and U[i, t] - U[i, l] <= radius + CERTAINTY_SLACK * scale:
            return False
    return True
