"""Warm-started leave-one-out equals leave-one-out by refitting."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)
from msvm.fast.loo import leave_one_out, leave_one_out_path


@pytest.mark.parametrize(
    "estimator",
    [
        InhibitorySVC(tol=1e-6),
        OneVsAllSVC(tol=1e-6),
        WestonWatkinsSVC(tol=1e-6),
        CrammerSingerSVC(tol=1e-6),
        LeeLinWahbaSVC(tol=1e-6),
        SimplexSVC(tol=1e-6),
    ],
)
def test_warm_leave_one_out_equals_refitting(estimator):
    X, y = datasets.load("wine", n_samples=45)
    # a numeric gamma: "scale" would be resolved on N points here and on N - 1 in a refit
    estimator = clone(estimator).set_params(random_state=0, max_iter=100_000, gamma=0.05)
    warm, warm_steps = leave_one_out(estimator, X, y)
    cold, cold_steps = leave_one_out(estimator, X, y, warm_start=False)
    refit = np.array(
        [
            clone(estimator).fit(np.delete(X, i, 0), np.delete(y, i)).predict(X[i : i + 1])[0]
            for i in range(len(y))
        ]
    )
    np.testing.assert_array_equal(warm, refit)
    np.testing.assert_array_equal(cold, refit)


def test_warm_start_saves_most_steps_at_the_default_tolerance():
    X, y = datasets.load("wine")
    estimator = InhibitorySVC(random_state=0)
    warm, warm_steps = leave_one_out(estimator, X, y)
    cold, cold_steps = leave_one_out(estimator, X, y, warm_start=False)
    # two thirds of the steps saved (3.8x on this set; the cold fits set single variables aside,
    # which made their steps fewer and cheaper, so this is a step count, not a time ratio)
    assert warm_steps < cold_steps / 3
    assert np.mean(warm == cold) > 0.98  # tol=1e-3 solutions: equal up to near-ties


@pytest.mark.parametrize("estimator", [InhibitorySVC(tol=1e-6), SimplexSVC(tol=1e-6)])
def test_path_along_C_equals_refitting_at_every_C(estimator):
    X, y = datasets.load("iris", n_samples=36)
    Cs = [0.1, 1.0, 10.0]
    estimator = clone(estimator).set_params(random_state=0, max_iter=100_000, gamma=0.2)
    path = leave_one_out_path(estimator, X, y, Cs)
    cold = leave_one_out_path(estimator, X, y, Cs, warm_start=False)
    for k, C in enumerate(Cs):
        model = clone(estimator).set_params(C=C)
        refit = [
            clone(model).fit(np.delete(X, i, 0), np.delete(y, i)).predict(X[i : i + 1])[0]
            for i in range(len(y))
        ]
        np.testing.assert_array_equal(path.predictions[k], refit)
        np.testing.assert_array_equal(cold.predictions[k], refit)
    assert path.steps < cold.steps
    assert 0.5 < path.accuracy(y).min() < 1.0  # some folds are missed: a non-trivial check


def test_a_fold_that_loses_its_class_is_a_refit_with_one_class_fewer():
    # four blobs, the last with one point; found by search: the fixed-variable shortcut would
    # give this singleton its own (absent) class 3, which no refit can predict
    rng = np.random.default_rng(96)
    counts = [6, 6, 5, 1]
    X = np.vstack([rng.normal(rng.normal(0, 1.5, 2), 1.0, (c, 2)) for c in counts])
    y = np.repeat(np.arange(4), counts)
    estimator = InhibitorySVC(C=10.0, gamma=2.0, tol=1e-8, max_iter=100_000, random_state=0)
    path = leave_one_out_path(estimator, X, y, [10.0])
    refit = clone(estimator).fit(X[:17], y[:17]).predict(X[17:])[0]
    assert path.predictions[0, 17] == refit != 3
    others = [
        clone(estimator).fit(np.delete(X, i, 0), np.delete(y, i)).predict(X[i : i + 1])[0]
        for i in range(17)
    ]
    np.testing.assert_array_equal(path.predictions[0, :17], others)
