"""Warm-started leave-one-out equals leave-one-out by refitting."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from msvm.core import datasets
from msvm.fast import CrammerSingerSVC, InhibitorySVC, SimplexSVC, WestonWatkinsSVC
from msvm.fast.loo import leave_one_out, leave_one_out_path


@pytest.mark.parametrize(
    "estimator",
    [
        InhibitorySVC(tol=1e-6),
        WestonWatkinsSVC(tol=1e-6),
        CrammerSingerSVC(tol=1e-6),
        SimplexSVC(tol=1e-6),
    ],
)
def test_warm_leave_one_out_equals_refitting(estimator):
    X, y = datasets.load("wine", n_samples=45)
    estimator = clone(estimator).set_params(random_state=0, max_iter=100_000)
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
    assert warm_steps < cold_steps / 4
    assert np.mean(warm == cold) > 0.98  # tol=1e-3 solutions: equal up to near-ties


@pytest.mark.parametrize("estimator", [InhibitorySVC(tol=1e-6), SimplexSVC(tol=1e-6)])
def test_path_along_C_equals_refitting_at_every_C(estimator):
    X, y = datasets.load("iris", n_samples=36)
    Cs = [0.1, 1.0, 10.0]
    estimator = clone(estimator).set_params(random_state=0, max_iter=100_000)
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
    np.testing.assert_allclose(path.accuracy(y), np.mean(path.predictions == y, axis=1))


def test_path_rejects_bad_grids_and_biased_machines():
    X, y = datasets.load("iris", n_samples=30)
    with pytest.raises(ValueError, match="Cs"):
        leave_one_out_path(InhibitorySVC(), X, y, [1.0, -1.0])
    with pytest.raises(ValueError, match="Cs"):
        leave_one_out_path(InhibitorySVC(), X, y, [])
    with pytest.raises(ValueError, match="fit_intercept"):
        leave_one_out_path(WestonWatkinsSVC(fit_intercept=True), X, y, [1.0])
    with pytest.raises(ValueError, match="NaN|infinity"):
        leave_one_out_path(InhibitorySVC(), np.full_like(X, np.nan), y, [1.0])
