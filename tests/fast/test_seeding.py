"""A cold explicit-weights run on many patterns starts from a subsample's solution
(DecompositionSolver._seed): it must reach the optimum of the cold run from 0, reproducibly."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
    engine,
)

BOX_MACHINES = [InhibitorySVC, OneVsAllSVC, LeeLinWahbaSVC, WestonWatkinsSVC]


def noisy_problem():
    """Overlapping classes: many variables end at C, the case the seed is for."""
    return make_classification(
        n_samples=900, n_features=6, n_informative=5, n_redundant=0, n_classes=4,
        class_sep=0.8, random_state=0,
    )  # fmt: skip


def fit(Machine, X, y, seeded, monkeypatch, **params):
    calls = []
    original = engine.DecompositionSolver._seed

    def counted(self, *args):
        calls.append(self.kind)
        return original(self, *args)

    monkeypatch.setattr(engine.DecompositionSolver, "_seed", counted)
    monkeypatch.setattr(engine, "SEED_MIN_ROWS", 300 if seeded else 10**9)
    monkeypatch.setattr(engine, "PROXIMAL_START", False)  # it goes before the seed where it runs
    params = dict(kernel="linear", C=0.5, tol=1e-6, max_iter=100_000, random_state=0) | params
    return Machine(**params).fit(X, y), calls


@pytest.mark.parametrize("Machine", BOX_MACHINES)
@pytest.mark.parametrize("sparse", [False, True])
def test_seeded_start_reaches_the_cold_optimum(Machine, sparse, monkeypatch):
    X, y = noisy_problem()
    X = sp.csr_matrix(X) if sparse else X
    seeded, calls = fit(Machine, X, y, True, monkeypatch)
    cold, no_calls = fit(Machine, X, y, False, monkeypatch)
    assert calls and not no_calls
    assert seeded.objective_ == pytest.approx(cold.objective_, rel=1e-7)
    assert seeded.dual_objective_ == pytest.approx(cold.dual_objective_, rel=1e-7)
    assert np.mean(seeded.predict(X) == cold.predict(X)) > 0.99


def test_seeded_start_with_a_bias_reaches_the_cold_optimum(monkeypatch):
    """Weston-Watkins with biases (augmented-Lagrangian rounds): the first round is seeded."""
    X, y = noisy_problem()
    seeded, calls = fit(WestonWatkinsSVC, X, y, True, monkeypatch, fit_intercept=True)
    cold, _ = fit(WestonWatkinsSVC, X, y, False, monkeypatch, fit_intercept=True)
    assert len(calls) == 1
    assert seeded.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    np.testing.assert_allclose(seeded.intercept_, cold.intercept_, atol=1e-4)


@pytest.mark.parametrize("Machine", BOX_MACHINES)
def test_seeded_start_is_reproducible(Machine, monkeypatch):
    X, y = noisy_problem()
    first, _ = fit(Machine, X, y, True, monkeypatch, tol=1e-2)
    second, _ = fit(Machine, X, y, True, monkeypatch, tol=1e-2)
    np.testing.assert_array_equal(first.dual_coef_, second.dual_coef_)


def test_no_seed_for_budgets_or_warm_starts(monkeypatch):
    """Crammer-Singer's budget sum_r alpha_ir <= C is not a box; a warm start keeps its alpha."""
    X, y = noisy_problem()
    _, calls = fit(CrammerSingerSVC, X, y, True, monkeypatch, tol=1e-2)
    assert not calls
    model, calls = fit(InhibitorySVC, X, y, True, monkeypatch, tol=1e-2, warm_start=True)
    model.set_params(C=0.6).fit(X, y)
    assert len(calls) == 1  # the first, cold fit only


def test_short_runs_start_from_zero(monkeypatch):
    """The seed pays off over a long run only: fewer than SEED_MIN_EPOCHS epochs start at 0."""
    X, y = noisy_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a short run: not the point here
        _, calls = fit(InhibitorySVC, X, y, True, monkeypatch, tol=1e-2,
                       max_iter=engine.SEED_MIN_EPOCHS - 1)  # fmt: skip
    assert not calls


def test_the_subsample_run_does_not_warn(monkeypatch):
    """The subsample's run is a start, not an answer: stopped by max_iter, it stays quiet."""
    monkeypatch.setattr(engine, "SEED_TOL", 0.0)  # the subsample's run cannot converge
    X, y = noisy_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model, calls = fit(InhibitorySVC, X, y, True, monkeypatch, tol=1e-2, max_iter=300)
    assert calls and model.kkt_violation_ <= 1e-2
