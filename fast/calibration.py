"""Class probabilities for the kernel machines: ``probability=True`` (as in scikit-learn's SVC).

With ``probability=True`` a fit also calibrates the machine's decision values by internal
cross-validation: the training set is split into 5 stratified folds (shuffled with a seed drawn
from ``random_state``), a copy of the machine with the same parameters is fitted on four folds
and its L class scores f_1(x)..f_L(x) are computed on the fifth, and a multinomial logistic
regression on those held-out scores of all five folds, each score standardised (z_j = (f_j -
m_j) / s_j with the held-out mean and deviation; computed on f_j / max|f_j|, the same z, so
that scores above 1e154 do not overflow the deviation),

    P(y = j | x) = exp(a_j^T z(x) + b_j) / sum_k exp(a_k^T z(x) + b_k),

is fitted (``sklearn.linear_model.LogisticRegression``: lbfgs, L2 penalty 1/2 ||A||^2 at
``CALIBRATION_C`` = 1).  ``predict_proba`` applies that regression to the scores of the machine
fitted on all the data.  It is exactly that regression, not libsvm's pairwise Platt coupling;
like SVC's, its argmax may differ from ``predict`` on some points (``predict`` is the argmax of
the scores themselves), and it costs five more fits.  A weighted fit (``sample_weight``,
``class_weight``) weights the fold machines' patterns and the regression's by the same s_i.

The standardisation makes the penalty the same for every machine (the inhibitory machine's
scores spread about three times as far as Crammer-Singer's on digits).  C = 1 was chosen on a
validation split (40 %) of the digits training half, never on the test half that
benchmarks/model_selection.py reports: of C = 0.1, 1, 10, 100 it gave the least validation
log-loss for all six box machines (0.12-0.19, against 0.21-0.33 at C = 0.1 and 0.21-0.45 at
C = 100).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from msvm.fast.callable_kernel import kernel_rows

N_FOLDS = 5
CALIBRATION_C = 1.0  # inverse L2 strength of the calibrating regression (module docstring)


def _check_probability(estimator) -> bool:
    """``available_if`` condition: predict_proba exists only with probability=True."""
    if not estimator.probability:
        raise AttributeError("predict_proba is not available when probability=False")
    return True


def held_out_scores(estimator, X, y_index, n_classes, random_state, weights=None):
    """Class scores (n_samples, n_classes) of every pattern from a machine fitted without its fold
    (with the fit's weights s_i, ``weights``; None: all 1, which class_weight then is too), and
    the largest of the fold machines' ``fit_status_`` (1 if one of them warned).

    Folds: ``StratifiedKFold`` with min(5, smallest class count) splits (at least 2).  A class
    absent from a training fold (a class of one pattern) gets a score one below the fold
    machine's lowest score for that point: that machine never predicts it.  A fold with fewer
    than two classes of positive weight predicts the one it has (none: every class ties).
    """
    counts = np.bincount(y_index, minlength=n_classes)
    n_splits = int(min(N_FOLDS, max(2, counts.min())))
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    scores = np.empty((y_index.size, n_classes))
    # The fold machines see class indices 0..L-1, not the labels: ``weights`` already hold
    # class_weight[y_i] (None: every one 1), so a class_weight keyed by label is dropped, and a
    # cost matrix (Crammer-Singer's Delta) is cut to the classes a fold has.
    model = clone(estimator).set_params(probability=False)
    params = model.get_params()
    if "class_weight" in params:
        model.set_params(class_weight=None)
    cost = params.get("cost")
    status = 0
    for train, test in folds.split(np.zeros((y_index.size, 1)), y_index):
        fit_X = X[np.ix_(train, train)] if estimator.kernel == "precomputed" else X[train]
        test_X = X[np.ix_(test, train)] if estimator.kernel == "precomputed" else X[test]
        present = np.unique(y_index[train])
        fold_weights = None if weights is None else weights[train]
        weighed = present if weights is None else np.unique(y_index[train][fold_weights > 0])
        if weighed.size < 2:  # one class of positive weight left (or none): its only prediction
            scores[test] = -1.0
            scores[np.ix_(test, weighed)] = 0.0
            continue
        fold = clone(model)
        if cost is not None:
            fold.set_params(cost=np.asarray(cost)[np.ix_(present, present)])
        fold.fit(fit_X, y_index[train], sample_weight=fold_weights)
        status = max(status, fold.fit_status_)
        raw = fold._scores(test_X)
        scores[test] = raw.min(axis=1, keepdims=True) - 1.0
        scores[np.ix_(test, present)] = raw
    return scores, status


class ProbabilityMixin:
    """``predict_proba`` / ``predict_log_proba`` for estimators with a ``probability`` parameter.

    A fit calls ``_fit_probability(X, y_index)`` once the machine itself is fitted (X as
    validated for that fit, ``y_index`` the class index of each row).
    """

    def _fit_probability(self, X, y_index):
        if not self.probability:
            self.__dict__.pop("_calibrator", None)
            return
        L = self.classes_.size
        weights = getattr(self, "_weights", None)
        scores, status = held_out_scores(self, X, y_index, L, self.random_state, weights)
        self.fit_status_ = max(self.fit_status_, status)  # (a fold's ConvergenceWarning too)
        regression = LogisticRegression(C=CALIBRATION_C, max_iter=10_000)
        calibrator = make_pipeline(MaxAbsScaler(), StandardScaler(), regression)
        fit_params = {"logisticregression__sample_weight": weights}
        self._calibrator = calibrator.fit(scores, y_index, **fit_params)

    def _probabilities(self, X, log: bool):
        if callable(self.kernel):  # (``msvm.fast.callable_kernel``)
            return self._precomputed_model._probabilities(kernel_rows(self, X), log)
        check_is_fitted(self, "_calibrator")
        scores = self._scores(X)
        if log:
            return self._calibrator.predict_log_proba(scores)
        return self._calibrator.predict_proba(scores)

    @available_if(_check_probability)
    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes), columns in ``classes_`` order: the
        calibrating multinomial regression on the class scores (module docstring)."""
        return self._probabilities(X, log=False)

    @available_if(_check_probability)
    def predict_log_proba(self, X):
        """The logarithm of ``predict_proba``, from the regression's log-softmax."""
        return self._probabilities(X, log=True)
