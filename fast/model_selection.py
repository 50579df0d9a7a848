"""Choosing (C, gamma) by leave-one-out accuracy on the warm leave-one-out path (``msvm.fast.loo``).

``loo_grid_search`` runs ``leave_one_out_path`` once per gamma (one Gram matrix each, the C values
in increasing order so that every full fit starts from the previous C's solution, and every fold
from the full fit's) and returns the whole table of leave-one-out accuracies with its best cell.
``LeaveOneOutSearchCV`` is the same search as a scikit-learn estimator that refits the best
machine on all the data (clone, Pipeline, get_params and set_params work as for GridSearchCV).

The accuracies equal those of refitting the plain estimator N times per cell (sklearn's
``LeaveOneOut`` with ``cross_val_score``) up to the solver tolerance (tests/fast/
test_model_selection.py checks equality at tol=1e-6), with one caveat: a gamma given as "scale"
or "auto" is resolved once on all N points, where each refit would resolve it on its own N - 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from msvm.fast.loo import check_machine, leave_one_out_path


@dataclass
class LeaveOneOutGrid:
    """The leave-one-out accuracy of every (gamma, C) cell.

    ``accuracy`` has shape (len(gammas), len(Cs)) in the order given; the best cell is the first
    largest accuracy with the Cs outer and the gammas inner, the cell that
    ``GridSearchCV(estimator, {"C": Cs, "gamma": gammas})`` picks among ties (its ParameterGrid
    sorts the keys, so C varies slowest).
    ``steps`` counts the engine's pattern updates; ``unconverged`` the folds that stopped at
    max_iter (each also warned).
    """

    Cs: np.ndarray
    gammas: list
    accuracy: np.ndarray
    steps: int
    unconverged: int

    @property
    def best_index(self) -> tuple[int, int]:
        """(gamma index, C index) of the best cell."""
        by_C = self.accuracy.T  # C outer, gamma inner: GridSearchCV's order
        b, a = np.unravel_index(int(np.argmax(by_C)), by_C.shape)
        return int(a), int(b)

    @property
    def best_C(self) -> float:
        return float(self.Cs[self.best_index[1]])

    @property
    def best_gamma(self):
        return self.gammas[self.best_index[0]]

    @property
    def best_accuracy(self) -> float:
        return float(self.accuracy[self.best_index])

    def table(self) -> list[dict]:
        """One row per cell: {"gamma", "C", "accuracy"}, gammas outer, Cs inner."""
        return [
            {"gamma": g, "C": float(C), "accuracy": float(self.accuracy[a, b])}
            for a, g in enumerate(self.gammas)
            for b, C in enumerate(self.Cs)
        ]


def _check_grid(estimator, Cs, gammas):
    """The grid as arrays/lists, or ValueError: empty, non-finite or non-positive values, or
    gammas for a kernel without one."""
    try:
        values = np.asarray(Cs, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        values = np.zeros(0)
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"Cs must be a non-empty list of positive numbers; got {Cs!r}.")
    Cs = values
    if gammas is None:
        return Cs, [estimator.gamma]
    if callable(estimator.kernel) or estimator.kernel in ("linear", "precomputed"):
        what = "a callable kernel" if callable(estimator.kernel) else f"kernel={estimator.kernel!r}"
        raise ValueError(f"gammas has no effect with {what}; pass None.")
    gammas = [gammas] if isinstance(gammas, str) else list(np.ravel(np.asarray(gammas, object)))
    if not gammas:
        raise ValueError("gammas must be None or a non-empty list.")
    for g in gammas:
        if isinstance(g, str):
            if g not in ("scale", "auto"):
                raise ValueError(f"gamma {g!r} must be 'scale', 'auto' or a positive number.")
        elif not (isinstance(g, Real) and np.isfinite(g) and g > 0):
            raise ValueError(f"gamma {g!r} must be 'scale', 'auto' or a positive number.")
    return Cs, [g if isinstance(g, str) else float(g) for g in gammas]


def loo_grid_search(estimator, X, y, *, Cs, gammas=None, sample_weight=None) -> LeaveOneOutGrid:
    """Leave-one-out accuracy of ``estimator`` at every (gamma, C) of the grid, without refits.

    Parameters
    ----------
    estimator : a box- or simplex-constrained machine of ``msvm.fast`` with ``solver="dcd"``,
        no ``fit_intercept`` and one output per class (InhibitorySVC, OneVsAllSVC,
        WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC, SimplexSVC with the hinge loss);
        its other parameters (tol, max_iter, random_state, ...) are kept.
    X : {array-like, sparse matrix} of shape (n_samples, n_features), or the Gram matrix
    y : array-like of shape (n_samples,)
    Cs : array-like of positive floats
    gammas : list of positive floats, "scale" or "auto", or None (the estimator's own gamma)
    sample_weight : array-like of shape (n_samples,) or None: each pattern's loss weight, as in
        ``fit`` (every fold keeps the full data's weights, ``leave_one_out_path``)

    Returns
    -------
    LeaveOneOutGrid : the accuracy table, its best (C, gamma) and accuracy.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from msvm.fast import InhibitorySVC, loo_grid_search
    >>> X, y = load_iris(return_X_y=True)
    >>> grid = loo_grid_search(InhibitorySVC(random_state=0), X, y, Cs=[1, 10], gammas=[0.1, 1])
    >>> grid.accuracy.shape, grid.best_accuracy > 0.9
    ((2, 2), True)
    """
    check_machine(estimator)
    Cs, gammas = _check_grid(estimator, Cs, gammas)
    order = np.argsort(Cs, kind="stable")  # warm starts along increasing C
    accuracy = np.empty((len(gammas), Cs.size))
    steps = unconverged = 0
    for a, gamma in enumerate(gammas):
        model = clone(estimator).set_params(gamma=gamma)
        path = leave_one_out_path(model, X, y, Cs[order], sample_weight=sample_weight)
        accuracy[a, order] = path.accuracy(y)
        steps += path.steps
        unconverged += path.unconverged
    return LeaveOneOutGrid(Cs, gammas, accuracy, steps, unconverged)


def _best_has(name):
    """``available_if``: the fitted best machine (or, before fit, the estimator) has ``name``."""

    def check(self):
        if hasattr(self, "best_estimator_"):
            getattr(self.best_estimator_, name)
        else:
            getattr(self._estimator(), name)
        return True

    return check


class LeaveOneOutSearchCV(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A machine whose (C, gamma) is chosen by leave-one-out accuracy, then refitted on all data.

    The search is ``loo_grid_search`` (warm folds, no refits); the refit is the estimator with
    the best C and gamma.  Predictions, scores and (with ``probability=True``) probabilities are
    the refitted machine's.

    Parameters
    ----------
    estimator : estimator or None, default=None
        One of the machines ``loo_grid_search`` takes; None is ``InhibitorySVC()``.
    Cs : array-like of positive floats, default=(0.1, 1.0, 10.0, 100.0)
    gammas : list of positive floats, "scale" or "auto", or None, default=None
        None keeps the estimator's own gamma (the only choice for linear and precomputed kernels).

    Attributes
    ----------
    best_estimator_ : the estimator refitted at the best (C, gamma)
    best_params_ : {"C": ..., "gamma": ...}; best_score_ : its leave-one-out accuracy
    loo_accuracy_ : (len(gammas), len(Cs)) the whole table; search_ : the ``LeaveOneOutGrid``
    classes_, n_features_in_

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from msvm.fast import InhibitorySVC, LeaveOneOutSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> search = LeaveOneOutSearchCV(InhibitorySVC(random_state=0), Cs=[1, 10], gammas=[0.1, 1])
    >>> search.fit(X, y).best_score_ > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "decision_function"]), None],
        "Cs": ["array-like"],
        "gammas": [None, "array-like", str],
    }

    def __init__(self, estimator=None, *, Cs=(0.1, 1.0, 10.0, 100.0), gammas=None):
        self.estimator = estimator
        self.Cs = Cs
        self.gammas = gammas

    def _estimator(self):
        if self.estimator is None:
            from msvm.fast.estimators import InhibitorySVC

            return InhibitorySVC()
        return self.estimator

    @_fit_context(prefer_skip_nested_validation=False)  # the estimator's parameters too
    def fit(self, X, y, sample_weight=None):
        """Search the grid by leave-one-out accuracy and refit the best machine on ``X, y``;
        ``sample_weight`` weighs each pattern's loss in the search and the refit."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        estimator = self._estimator()
        self.search_ = loo_grid_search(
            estimator, X, y, Cs=self.Cs, gammas=self.gammas, sample_weight=sample_weight
        )
        self.best_params_ = {"C": self.search_.best_C, "gamma": self.search_.best_gamma}
        self.best_score_ = self.search_.best_accuracy
        self.loo_accuracy_ = self.search_.accuracy
        best = clone(estimator).set_params(**self.best_params_)
        self.best_estimator_ = best.fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.best_estimator_.classes_
        return self

    def _checked(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)

    def decision_function(self, X):
        """The refitted machine's decision values."""
        X = self._checked(X)
        return self.best_estimator_.decision_function(X)

    def predict(self, X):
        """The refitted machine's predictions."""
        X = self._checked(X)
        return self.best_estimator_.predict(X)

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """The refitted machine's probabilities (its ``probability=True``)."""
        X = self._checked(X)
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """The refitted machine's log-probabilities (its ``probability=True``)."""
        X = self._checked(X)
        return self.best_estimator_.predict_log_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self._estimator().__sklearn_tags__()
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.pairwise = inner.input_tags.pairwise
        return tags
