"""(C, gamma) by leave-one-out accuracy (msvm.fast.model_selection) against refitting."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, LeaveOneOut, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeaveOneOutSearchCV,
    MKPMClassifier,
    MultiPrototypeSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    calibration,
    loo_grid_search,
)
from msvm.fast.base import expected_failed_checks
from msvm.fast.loo import leave_one_out_path

TIGHT = dict(tol=1e-6, max_iter=100_000, random_state=0)


@parametrize_with_checks(
    [LeaveOneOutSearchCV(InhibitorySVC(random_state=0), Cs=[1.0, 10.0])],
    expected_failed_checks=expected_failed_checks,
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def iris60():
    return datasets.load("iris", n_samples=60)


@pytest.mark.parametrize(
    "estimator",
    [InhibitorySVC(**TIGHT), CrammerSingerSVC(**TIGHT), WestonWatkinsSVC(**TIGHT)],
    ids=lambda e: type(e).__name__,
)
def test_loo_accuracy_equals_brute_force_refits(estimator, iris60):
    """Every cell of the table equals sklearn's LeaveOneOut + cross_val_score with the plain
    estimator (60 refits per cell); the best cell is the table's argmax."""
    X, y = iris60
    Cs, gammas = [10.0, 0.1, 1.0], [0.05, 0.5]  # Cs not sorted: the table keeps this order
    grid = loo_grid_search(estimator, X, y, Cs=Cs, gammas=gammas)
    brute = np.array(
        [
            [
                cross_val_score(
                    clone(estimator).set_params(C=C, gamma=g), X, y, cv=LeaveOneOut()
                ).mean()
                for C in Cs
            ]
            for g in gammas
        ]
    )
    np.testing.assert_array_equal(grid.accuracy, brute)
    assert 0.5 < brute.min() and brute.max() < 1.0 and np.unique(brute).size > 2  # non-trivial
    b, a = np.unravel_index(np.argmax(brute.T), brute.T.shape)  # first max, C outer (GridSearchCV)
    assert (grid.best_gamma, grid.best_C) == (gammas[a], Cs[b])
    assert grid.best_accuracy == brute.max()
    rows = grid.table()
    assert len(rows) == 6 and rows[1] == {"gamma": 0.05, "C": 0.1, "accuracy": brute[0, 1]}


def test_ties_go_to_the_cell_gridsearchcv_picks(iris60):
    X, y = iris60
    estimator, Cs, gammas = InhibitorySVC(**TIGHT), [1.0, 10.0, 100.0], [0.02, 0.1, 1.0]
    grid = loo_grid_search(estimator, X, y, Cs=Cs, gammas=gammas)
    search = GridSearchCV(estimator, {"gamma": gammas, "C": Cs}, cv=LeaveOneOut()).fit(X, y)
    # a tie to break: (gamma 0.1, C 100) and (gamma 1, C 1) both reach 58 of 60; GridSearchCV
    # takes the smaller C (C varies slowest), the gammas-outer order would take gamma 0.1
    assert np.sum(grid.accuracy == grid.best_accuracy) > 1
    assert search.best_params_ == {"C": grid.best_C, "gamma": grid.best_gamma}
    assert search.best_score_ == grid.best_accuracy


def test_equal_cells_and_gamma_defaults_to_the_estimator(iris60):
    X, y = iris60
    grid = loo_grid_search(InhibitorySVC(gamma=0.5, **TIGHT), X, y, Cs=[10.0, 10.0])
    assert grid.gammas == [0.5] and grid.accuracy.shape == (1, 2)
    assert grid.accuracy[0, 0] == grid.accuracy[0, 1] and grid.best_index == (0, 0)
    scale = loo_grid_search(InhibitorySVC(**TIGHT), X, y, Cs=[1.0], gammas="scale")
    assert scale.gammas == ["scale"]


@pytest.mark.parametrize(
    "grid",
    [
        dict(Cs=[]),
        dict(Cs=[1.0, 0.0]),
        dict(Cs=[-1.0]),
        dict(Cs=[np.inf]),
        dict(Cs="a"),
        dict(Cs=[1.0], gammas=[]),
        dict(Cs=[1.0], gammas=[0.0]),
        dict(Cs=[1.0], gammas=["mean"]),
        dict(Cs=[1.0], gammas=[np.nan]),
    ],
)
def test_bad_grids_raise_value_errors(grid, iris60):
    X, y = iris60
    with pytest.raises(ValueError, match="Cs|gamma"):
        loo_grid_search(InhibitorySVC(), X, y, **grid)
    with pytest.raises(ValueError, match="Cs|gamma"):
        LeaveOneOutSearchCV(InhibitorySVC(), **grid).fit(X, y)


def test_gammas_need_a_kernel_with_gamma_and_the_machine_a_loo_path(iris60):
    X, y = iris60
    with pytest.raises(ValueError, match="gammas has no effect"):
        loo_grid_search(InhibitorySVC(kernel="linear"), X, y, Cs=[1.0], gammas=[0.1])
    with pytest.raises(ValueError, match="fit_intercept"):
        loo_grid_search(WestonWatkinsSVC(fit_intercept=True), X, y, Cs=[1.0])


@pytest.mark.parametrize(
    "estimator",
    [MultiPrototypeSVC(), MKPMClassifier(), SimplexSVC(loss="squared"), SVC()],
    ids=lambda e: type(e).__name__,
)
def test_machines_without_a_loo_path_are_refused_by_name(estimator, iris60):
    """The machines whose folds are not their dual with a pattern fixed at 0 get an error that
    says so, before any fit (not a set_params failure on an internal parameter)."""
    X, y = iris60
    name = type(estimator).__name__
    with pytest.raises(ValueError, match=f"Leave-one-out without refits takes .*; got {name}"):
        loo_grid_search(estimator, X, y, Cs=[1.0])
    with pytest.raises(ValueError, match=f"got {name}"):
        leave_one_out_path(estimator, X, y, [1.0])
    with pytest.raises(ValueError, match=f"got {name}"):
        LeaveOneOutSearchCV(estimator, Cs=[1.0]).fit(X, y)


def test_search_cv_weighs_the_search_and_the_refit(iris60):
    """With sample_weight every cell equals refits on the N - 1 other weighted patterns, and the
    refitted machine is the weighted fit at the best cell."""
    X, y = iris60
    w = np.random.default_rng(3).integers(0, 4, y.size).astype(float)
    estimator, Cs = InhibitorySVC(gamma=0.5, **TIGHT), [0.1, 10.0]
    search = LeaveOneOutSearchCV(estimator, Cs=Cs).fit(X, y, sample_weight=w)
    brute = []
    for C in Cs:
        hits = 0
        for i in range(y.size):
            rest = np.delete(np.arange(y.size), i)
            fold = clone(estimator).set_params(C=C).fit(X[rest], y[rest], sample_weight=w[rest])
            hits += fold.predict(X[i : i + 1])[0] == y[i]
        brute.append(hits / y.size)
    np.testing.assert_array_equal(search.loo_accuracy_[0], brute)
    assert not np.array_equal(
        search.loo_accuracy_, LeaveOneOutSearchCV(estimator, Cs=Cs).fit(X, y).loo_accuracy_
    )
    best = clone(estimator).set_params(**search.best_params_).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(search.best_estimator_.dual_coef_, best.dual_coef_)


def test_search_cv_refits_the_best_cell_inside_a_pipeline(iris60):
    X, y = iris60
    search = LeaveOneOutSearchCV(InhibitorySVC(**TIGHT), Cs=[0.1, 1.0, 10.0], gammas=[0.05, 0.5])
    pipe = make_pipeline(StandardScaler(), search)
    params = pipe.get_params()
    assert params["leaveoneoutsearchcv__estimator__tol"] == 1e-6
    assert params["leaveoneoutsearchcv__Cs"] == [0.1, 1.0, 10.0]
    pipe = clone(pipe).set_params(leaveoneoutsearchcv__gammas=[0.1, 1.0]).fit(X, y)
    fitted = pipe[-1]
    Z = StandardScaler().fit_transform(X)
    grid = loo_grid_search(InhibitorySVC(**TIGHT), Z, y, Cs=[0.1, 1.0, 10.0], gammas=[0.1, 1.0])
    np.testing.assert_array_equal(fitted.loo_accuracy_, grid.accuracy)
    assert fitted.best_params_ == {"C": grid.best_C, "gamma": grid.best_gamma}
    assert fitted.best_score_ == grid.best_accuracy
    plain = InhibitorySVC(**TIGHT).set_params(**fitted.best_params_).fit(Z, y)
    np.testing.assert_array_equal(pipe.predict(X), plain.predict(Z))
    np.testing.assert_allclose(pipe.decision_function(X), plain.decision_function(Z))
    assert not hasattr(pipe, "predict_proba")
    restored = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(restored.predict(X), pipe.predict(X))


def test_search_cv_probabilities_come_from_the_refitted_machine(iris60, monkeypatch):
    X, y = iris60
    estimator = InhibitorySVC(probability=True, random_state=0)
    with monkeypatch.context() as patch:  # the search itself calibrates nothing
        patch.setattr(calibration, "held_out_scores", lambda *args: pytest.fail("calibrated"))
        grid = loo_grid_search(estimator, X, y, Cs=[1.0, 10.0], gammas=[0.1, 1.0])
    search = LeaveOneOutSearchCV(estimator, Cs=[1.0, 10.0], gammas=[0.1, 1.0]).fit(X, y)
    P = search.predict_proba(X)
    np.testing.assert_allclose(P, search.best_estimator_.predict_proba(X))
    np.testing.assert_allclose(search.predict_log_proba(X), np.log(P), atol=1e-10)
    np.testing.assert_array_equal(search.loo_accuracy_, grid.accuracy)
