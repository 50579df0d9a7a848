"""Warm-started leave-one-out equals leave-one-out by refitting."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    loo,
)
from msvm.fast.kernels import precomputed_source
from msvm.fast.loo import duality_gap, fitted_dual, leave_one_out, leave_one_out_path
from msvm.fast.patterns import output_shift


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


# -- folds that stop once their left-out point's class is certain (loo.certain) ----------------

MACHINES = [InhibitorySVC, OneVsAllSVC, WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC]
# (the simplex hinge: the engine solves its dual scaled by kappa, which its objective_ is not)


def _fold_state(model, K):
    """(U, dual, kind, shift) of a fitted precomputed-kernel model, as warm_folds holds them."""
    alpha, hi, lin, c, U = fitted_dual(model, precomputed_source(K))
    shift = output_shift(model._kind, c, model.classes_.size)
    return U, (alpha, hi, lin, model._y_index), model._kind, shift


@pytest.mark.parametrize("Machine", MACHINES)
def test_duality_gap_is_the_fits_primal_minus_its_dual(Machine):
    # Stopped after two epochs, far from the optimum: the gap summed from the dual gradient must
    # be the primal of core.objectives' losses minus the dual, as the fit reports them.
    X, y = datasets.load("wine", n_samples=60)
    K = kernel_matrix(X, X, "rbf", 0.05)
    with pytest.warns(ConvergenceWarning):
        model = Machine(kernel="precomputed", C=10.0, max_iter=2, random_state=0).fit(K, y)
    gap, size = duality_gap(*_fold_state(model, K))
    expected = model.objective_ - model.dual_objective_
    assert expected > 0.1  # (not converged: a gap to get right)
    assert gap == pytest.approx(expected, rel=1e-9)
    assert size >= gap


@pytest.mark.parametrize("Machine", MACHINES)
def test_certified_bound_holds_along_a_fit(Machine):
    # At any dual point, every difference of two outputs at a point x is within sqrt(2 k(x, x)
    # gap) of the optimum's (the fit at tol 1e-10): checked at the held-out points' outputs of
    # fits stopped after 1, 2, 5 and 20 epochs.
    X, y = datasets.load("wine", n_samples=70)
    K = kernel_matrix(X, X, "rbf", 0.05)
    fit, rest = np.arange(60), np.arange(60, len(y))
    K_fit, K_rest = K[np.ix_(fit, fit)], K[np.ix_(rest, fit)]
    exact = Machine(kernel="precomputed", C=10.0, tol=1e-10, max_iter=-1, random_state=0)
    F_star = exact.fit(K_fit, y[fit]).decision_function(K_rest)
    for epochs in (1, 2, 5, 20):
        model = Machine(kernel="precomputed", C=10.0, max_iter=epochs, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(K_fit, y[fit])
        gap, _ = duality_gap(*_fold_state(model, K_fit))
        F = model.decision_function(K_rest)
        pairs = (F[:, :, None] - F[:, None, :]) - (F_star[:, :, None] - F_star[:, None, :])
        bound = np.sqrt(2.0 * np.diag(K)[rest] * gap)
        assert np.all(np.abs(pairs).max(axis=(1, 2)) <= bound)
        assert np.abs(pairs).max() > 1e-3 * bound.max()  # (the fit is not already exact)


@pytest.mark.parametrize("Machine", [*MACHINES, SimplexSVC])
def test_certified_folds_predict_as_their_optima(Machine, monkeypatch):
    # Folds that stop once their class is certain predict what each fold's optimum (a refit at
    # tol 1e-10) predicts, at the default tol; the inhibitory machine's folds, slow to converge
    # at mu = 1/L, take far fewer steps so.
    X, y = datasets.load("wine", n_samples=60)
    K = kernel_matrix(X, X, "rbf", 0.05)
    estimator = Machine(kernel="precomputed", C=10.0, random_state=0)
    path = leave_one_out_path(estimator, K, y, [10.0])
    monkeypatch.setattr(loo, "CERTIFY_STEPS", 0)
    uncertified = leave_one_out_path(estimator, K, y, [10.0])
    exact = clone(estimator).set_params(tol=1e-10, max_iter=-1)
    refit = [
        clone(exact).fit(np.delete(np.delete(K, i, 0), i, 1), np.delete(y, i))
        .predict(np.delete(K[i : i + 1], i, 1))[0]
        for i in range(len(y))
    ]  # fmt: skip
    np.testing.assert_array_equal(path.predictions[0], refit)
    assert path.unconverged == uncertified.unconverged == 0
    assert path.steps < (0.8 if Machine is InhibitorySVC else 1.0) * uncertified.steps


def test_a_path_whose_gram_matrix_exceeds_cache_size_is_refused_with_what_it_needs():
    """The path holds the whole Gram matrix: 60 000 points met numpy's MemoryError for 27 GB (or
    hours of swapping); beyond cache_size it says the size, and raising cache_size allows it."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 3)), np.arange(400) % 3  # a 1.22 MB Gram matrix
    message = r"400 patterns need 1\.2 MB for it, above WestonWatkinsSVC's cache_size=1 MB"
    with pytest.raises(ValueError, match=message):
        leave_one_out_path(WestonWatkinsSVC(cache_size=1), X, y, Cs=[1.0])
    path = leave_one_out_path(WestonWatkinsSVC(cache_size=2), X[:60], y[:60], Cs=[1.0])
    assert path.accuracy(y[:60]).shape == (1,)
