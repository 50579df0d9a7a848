"""probability=True: calibrated class probabilities (msvm.fast.calibration)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)
from msvm.fast.base import expected_failed_checks

ARGMAX = {"check_classifiers_train": "predict_proba's argmax may differ from predict (as SVC's)"}
MACHINES = [
    InhibitorySVC(random_state=0),
    OneVsAllSVC(random_state=0),
    WestonWatkinsSVC(random_state=0),
    CrammerSingerSVC(random_state=0),
    LeeLinWahbaSVC(random_state=0),
    SimplexSVC(random_state=0),
    SimplexSVC(loss="squared", random_state=0),
    MultiPrototypeSVC(
        n_prototypes=2, n_assignment_steps=5, kernel="rbf", gamma=0.5, random_state=0
    ),
]


@parametrize_with_checks(
    [InhibitorySVC(probability=True, random_state=0)],
    expected_failed_checks=lambda estimator: {**ARGMAX, **expected_failed_checks(estimator)},
)
def test_scikit_learn_compatible_with_probabilities(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.fixture(scope="module")
def iris_strings():
    """Iris with string labels whose sorted order differs from their order of appearance."""
    X, y = datasets.load("iris")
    names = np.array(["virginica", "setosa", "versicolor"])
    return X, names[y]


@pytest.mark.parametrize("estimator", MACHINES, ids=lambda e: type(e).__name__)
def test_probabilities_sum_to_one_in_classes_order(estimator, iris_strings):
    X, y = iris_strings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = clone(estimator).set_params(probability=True).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (len(y), 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(P >= 0)
    np.testing.assert_array_equal(clf.classes_, ["setosa", "versicolor", "virginica"])
    # column j is classes_[j]: the probability of the true class is the largest almost always
    assert np.mean(clf.classes_[P.argmax(axis=1)] == y) > 0.9
    assert np.mean(P[np.arange(len(y)), np.searchsorted(clf.classes_, y)]) > 0.7
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(P), atol=1e-10)


@pytest.mark.parametrize("estimator", MACHINES, ids=lambda e: type(e).__name__)
def test_no_predict_proba_without_probability(estimator, iris_strings):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = clone(estimator).fit(*iris_strings)
    assert not hasattr(clf, "predict_proba") and not hasattr(clf, "predict_log_proba")
    with pytest.raises(AttributeError, match="predict_proba") as error:
        clf.predict_proba(iris_strings[0])
    assert "not available when probability=False" in str(error.value.__cause__)
    # a refit without probabilities drops an earlier calibration
    clf.set_params(probability=True).fit(*iris_strings)
    assert hasattr(clf, "_calibrator")
    clf.set_params(probability=False).fit(*iris_strings)
    assert not hasattr(clf, "_calibrator")


def test_reproducible_clone_and_pickle():
    X, y = datasets.load("wine")
    a = WestonWatkinsSVC(probability=True, random_state=4).fit(X, y)
    b = clone(a).fit(X, y)
    assert b.probability
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    other = WestonWatkinsSVC(probability=True, random_state=5).fit(X, y)
    assert not np.array_equal(a.predict_proba(X), other.predict_proba(X))  # other folds
    restored = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(restored.predict_proba(X), a.predict_proba(X))


def test_two_classes_precomputed_and_a_class_of_one_pattern():
    X, y = datasets.load("iris")
    two = y < 2
    clf = InhibitorySVC(probability=True, random_state=0).fit(X[two], y[two])
    assert clf.predict_proba(X[two]).shape == (two.sum(), 2)
    K = kernel_matrix(X, X, "rbf", 0.5)
    options = dict(probability=True, tol=1e-8, random_state=0)
    pre = CrammerSingerSVC(kernel="precomputed", **options).fit(K, y)
    named = CrammerSingerSVC(gamma=0.5, **options).fit(X, y)
    np.testing.assert_allclose(pre.predict_proba(K[::7]), named.predict_proba(X[::7]), atol=1e-6)
    # one pattern of class 3: its fold's machine has never seen the class (calibration.py)
    y4 = y.copy()
    y4[0] = 3
    P = InhibitorySVC(probability=True, random_state=0).fit(X, y4).predict_proba(X)
    assert P.shape == (len(y), 4)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


@pytest.fixture(scope="module")
def digits_split():
    X, y = datasets.load("digits")
    return train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)


@pytest.fixture(scope="module")
def svc_log_loss(digits_split):
    """SVC(probability=True)'s test log-loss at C = 1 and 10, with its gamma="scale" value."""
    X_train, X_test, y_train, y_test = digits_split
    gamma = 1.0 / (X_train.shape[1] * X_train.var())
    losses = {}
    for C in (1.0, 10.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # SVC's probability: deprecated in 1.9
            svc = SVC(C=C, gamma=gamma, probability=True, random_state=0).fit(X_train, y_train)
        losses[C] = log_loss(y_test, svc.predict_proba(X_test))
    return losses, gamma


@pytest.mark.parametrize("C", [1.0, 10.0])
@pytest.mark.parametrize(
    "Estimator",
    [InhibitorySVC, OneVsAllSVC, WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC, SimplexSVC],
)
def test_held_out_log_loss_no_worse_than_svc(Estimator, C, digits_split, svc_log_loss):
    """Digits, half to train and half to test, the same gamma and C for both: the test log-loss
    is at most SVC(probability=True)'s (benchmarks/results/model_selection.md has the table).

    One exception, measured: InhibitorySVC at C = 1 is itself the least accurate machine there
    (93.3 % against SVC's 98.3 %), and its calibrated log-loss ties SVC's (0.1250 against
    0.1239); at C = 10 it is 0.064 against 0.114."""
    X_train, X_test, y_train, y_test = digits_split
    losses, gamma = svc_log_loss
    clf = Estimator(C=C, gamma=gamma, probability=True, random_state=0).fit(X_train, y_train)
    ours = log_loss(y_test, clf.predict_proba(X_test))
    if Estimator is InhibitorySVC and C == 1.0:
        assert ours <= 1.02 * losses[C]
    else:
        assert ours <= losses[C]


def test_class_weight_raises_the_favoured_class_probability():
    """class_weight favouring class 0 raises its calibrated probability on overlapping data
    (the fold machines and the regression carry the fit's weights s_i)."""
    X, y = datasets.load("wine")
    X = X[:, :2]  # two features: the classes overlap (measured: mean P(class 0) 0.34 -> 0.57)
    plain = WestonWatkinsSVC(probability=True, random_state=0).fit(X, y)
    weighted = WestonWatkinsSVC(probability=True, class_weight={0: 20.0}, random_state=0)
    weighted.fit(X, y)
    assert weighted.predict_proba(X)[:, 0].mean() > plain.predict_proba(X)[:, 0].mean() + 0.1


@pytest.mark.parametrize(
    "labels,class_weight",
    [
        (np.array(["a", "b", "c"]), {"a": 1, "b": 1, "c": 1}),
        (np.array([1, 2, 3]), {1: 1.0, 2: 1.0, 3: 1.0}),
        (np.array([1, 2, 3]), {3: 1.0}),
    ],
)
def test_a_class_weight_of_ones_keyed_by_label_calibrates(labels, class_weight):
    """Weights that all come out 1 left class_weight on the fold machines, which are fitted on
    class indices: the label-keyed dict was refused ("The classes, [0, 1, 2], are not in
    class_weight"; stop 50's sweep).  It is the unweighted fit, probabilities included."""
    X, y = datasets.load("iris")
    weighted = WestonWatkinsSVC(probability=True, class_weight=class_weight, random_state=0)
    plain = WestonWatkinsSVC(probability=True, random_state=0)
    np.testing.assert_array_equal(
        weighted.fit(X, labels[y]).predict_proba(X), plain.fit(X, labels[y]).predict_proba(X)
    )


def test_a_cost_matrix_calibrates_with_a_class_missing_from_a_fold():
    """Crammer-Singer's cost Delta is L x L over classes_: a fold without a class (a class of
    one pattern) was given the whole matrix for L - 1 classes and refused it; its rows must be
    those of the classes the fold has."""
    from msvm.fast import calibration

    X, y = datasets.load("iris")
    y4 = y + 1
    y4[0] = 0  # the lone class first: a cut of the first rows would keep its row
    cost = 1.0 + np.arange(16.0).reshape(4, 4) / 10
    np.fill_diagonal(cost, 0.0)
    model = CrammerSingerSVC(cost=cost, probability=True, random_state=0).fit(X, y4)
    P = model.predict_proba(X)
    assert P.shape == (len(y4), 4)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # the fold without class 0 is fitted with the rows and columns of classes 1-3
    seen = []
    real_fit = CrammerSingerSVC.fit

    def recording(self, X, y, sample_weight=None):
        seen.append(None if self.cost is None else np.asarray(self.cost).copy())
        return real_fit(self, X, y, sample_weight=sample_weight)

    import unittest.mock

    with unittest.mock.patch.object(CrammerSingerSVC, "fit", recording):
        calibration.held_out_scores(model, X, np.searchsorted(model.classes_, y4), 4, 0)
    assert any(c.shape == (3, 3) and np.array_equal(c, cost[1:, 1:]) for c in seen)


def test_calibration_with_classes_of_zero_weight_in_a_fold():
    """All but one sample weight zero: the main fit works, but a calibration fold of zero
    weights refused "sample_weight ... is zero for every sample" (stop 50's sweep).  A fold
    with fewer than two classes of positive weight predicts the one it has."""
    X, y = datasets.load("wine")
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    weights = np.zeros(len(y))
    weights[np.flatnonzero(y == 0)[0]] = 1.0
    model = WestonWatkinsSVC(probability=True, random_state=0).fit(X, y, sample_weight=weights)
    P = model.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(P.argmax(axis=1) == 0)  # the one class of weight


def test_scores_beyond_1e154_calibrate_as_their_scaled_copies(monkeypatch):
    """Standardising the held-out scores squared them: scores above ~1e154 (a fit on features
    near float64's range) made the deviations overflow and scikit-learn refuse the NaN ("Input
    X contains NaN").  The calibration is free of the scores' scale: every score times 1e200
    gives the same probabilities, without numpy's warnings."""
    X, y = datasets.load("iris")
    plain = CrammerSingerSVC(probability=True, random_state=0).fit(X, y).predict_proba(X)
    scores = CrammerSingerSVC._scores
    monkeypatch.setattr(CrammerSingerSVC, "_scores", lambda self, X: 1e200 * scores(self, X))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        huge = CrammerSingerSVC(probability=True, random_state=0).fit(X, y)
        probabilities = huge.predict_proba(X)
    assert np.abs(huge.decision_function(X)).max() > 1e200
    np.testing.assert_allclose(probabilities, plain, rtol=1e-9, atol=1e-12)
