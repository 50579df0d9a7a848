"""``decision_function_shape`` as in scikit-learn's SVC: the class scores ("ovr") or their
pairwise differences in SVC's order of the pairs ("ovo"), checked against scikit-learn's own
conversion of one-vs-one decision values into votes."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.multiclass import _ovr_decision_function

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MKPMClassifier,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)

ALL = [
    InhibitorySVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
    LeeLinWahbaSVC,
    CrammerSingerSVC,
    SimplexSVC,
    MultiPrototypeSVC,
    MKPMClassifier,
]


@pytest.fixture(scope="module")
def four_classes():
    """80 digits of classes 0-3, 20 of them held out."""
    X, y = datasets.load("digits", n_samples=200)
    keep = y < 4
    X, y = X[keep][:80], y[keep][:80]
    return X[:60], y[:60], X[60:]


@pytest.mark.parametrize("Estimator", ALL)
def test_ovo_gives_svcs_pairs_of_the_class_scores(Estimator, four_classes):
    X, y, X_new = four_classes
    ovr = Estimator(random_state=0).fit(X, y)
    ovo = Estimator(random_state=0, decision_function_shape="ovo").fit(X, y)
    scores, pairs = ovr.decision_function(X_new), ovo.decision_function(X_new)
    assert scores.shape == (20, 4) and pairs.shape == (20, 6)
    expected = [scores[:, i] - scores[:, j] for i in range(4) for j in range(i + 1, 4)]
    np.testing.assert_array_equal(pairs, np.column_stack(expected))
    # scikit-learn's votes of one-vs-one decision values (SVC's "ovr" from "ovo") elect predict
    votes = _ovr_decision_function(pairs < 0, -pairs, 4)
    np.testing.assert_array_equal(ovo.classes_[votes.argmax(axis=1)], ovo.predict(X_new))
    np.testing.assert_array_equal(ovo.predict(X_new), ovr.predict(X_new))


@pytest.mark.parametrize("Estimator", [WestonWatkinsSVC, MKPMClassifier])
def test_two_classes_give_one_column_either_way(Estimator, four_classes):
    X, y, X_new = four_classes
    two = y < 2
    ovr = Estimator(random_state=0).fit(X[two], y[two])
    ovo = Estimator(random_state=0, decision_function_shape="ovo").fit(X[two], y[two])
    np.testing.assert_array_equal(ovo.decision_function(X_new), ovr.decision_function(X_new))
    assert ovo.decision_function(X_new).shape == (20,)


def test_probabilities_and_callable_kernels_are_unchanged_by_the_shape(four_classes):
    X, y, X_new = four_classes
    options = dict(probability=True, random_state=0)
    ovr = CrammerSingerSVC(**options).fit(X, y)
    ovo = CrammerSingerSVC(decision_function_shape="ovo", **options).fit(X, y)
    np.testing.assert_array_equal(ovo.predict_proba(X_new), ovr.predict_proba(X_new))

    def linear(A, B):
        return A @ B.T

    for Estimator in (WestonWatkinsSVC, MKPMClassifier):  # through the precomputed model
        scores = Estimator(kernel=linear, random_state=0).fit(X, y).decision_function(X_new)
        ovo = Estimator(kernel=linear, random_state=0, decision_function_shape="ovo")
        pairs = ovo.fit(X, y).decision_function(X_new)
        np.testing.assert_array_equal(pairs[:, [0, 5]], scores[:, [0, 2]] - scores[:, [1, 3]])


@pytest.mark.parametrize("Estimator", [WestonWatkinsSVC, MKPMClassifier])
def test_an_unknown_shape_is_a_value_error(Estimator, four_classes):
    X, y, _ = four_classes
    with pytest.raises(ValueError, match="decision_function_shape"):
        Estimator(decision_function_shape="ovr-votes").fit(X, y)
