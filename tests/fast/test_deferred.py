"""Deferred output updates on columns computed on demand (engine.kernel_epoch with a batch):
the same steps as updating the outputs at every step, the columns computed together by BLAS."""

from __future__ import annotations

import numpy as np
import pytest

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    engine,
)
from msvm.fast.engine import flush_pending, pending_arrays, pending_row, push_pending
from msvm.fast.kernels import column_source, is_lru

MACHINES = [InhibitorySVC, WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC]


@pytest.fixture
def stores(monkeypatch):
    """Count the deferred steps' stores a fit makes (one per engine run on an LRU source)."""
    made = []
    original = engine.pending_arrays

    def counted(*args):
        made.append(args[2])
        return original(*args)

    monkeypatch.setattr(engine, "pending_arrays", counted)
    return made


@pytest.fixture(scope="module")
def digits():
    X, y = datasets.load("digits", n_samples=300)
    return X / 16.0, y


def test_pending_rows_and_flush_apply_every_deferred_step():
    """pending_row reads U plus the waiting steps; flush_pending applies them (a pattern twice,
    as after a transfer to a partner that stepped too), on a cache of two slots, and caches the
    columns it computed in the least recently used slots."""
    rng = np.random.default_rng(0)
    N, W, offset = 40, 4, 0.3
    X = rng.normal(size=(N, 6))
    K = kernel_matrix(X, X, "rbf", 0.2, 3, 0.0)
    source = column_source(X, "rbf", 0.2, 3, 0.0, 2 * N * 8 / 2**20)
    assert is_lru(source) and source[7].shape[0] == 2
    U = np.asfortranarray(rng.normal(size=(N, W)))
    expected = U.copy()
    pending, n = pending_arrays(source, W, 8, 4), 0
    for i, sign in [(3, 1.0), (17, 1.0), (3, -1.0), (25, 1.0), (9, -1.0)]:
        dS = rng.normal(size=W + 1)  # the sum column's entry is ignored when U is W wide
        n = push_pending(i, dS, sign, source, pending, n)
        expected += np.outer(K[:, i] + offset, sign * dS[:W])
    row = np.empty(W)
    for i in (0, 3, 25, 39):
        pending_row(i, U, source, offset, pending, n, row)
        np.testing.assert_allclose(row, expected[i], rtol=1e-13, atol=1e-13)
    flush_pending(source, offset, U, pending, n)
    np.testing.assert_allclose(U, expected, rtol=1e-13, atol=1e-13)
    cache, slot_of, owner = source[7:10]
    assert sorted(owner) == [9, 25]  # the last two computed
    for i in owner:
        np.testing.assert_allclose(cache[slot_of[i]], K[:, i], rtol=1e-14, atol=1e-15)
    assert np.all(slot_of[[3, 17]] == -1)


@pytest.mark.parametrize("Machine", MACHINES)
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("batch, wait", [(32, 256), (3, 2)])  # the defaults; flushes at once
def test_deferred_epochs_take_the_same_steps(Machine, fit_intercept, batch, wait, digits, stores,
                                             monkeypatch):  # fmt: skip
    """On 20 of 300 columns cached, at C = 10 (well past the epoch where transfers start), a
    fit with the updates deferred takes the same steps as one with every update at once: the
    same step count and the same dual variables up to rounding."""
    X, y = digits
    params = dict(C=10.0, cache_size=0.05, tol=1e-6, max_iter=100_000, random_state=0,
                  fit_intercept=fit_intercept)  # fmt: skip
    monkeypatch.setattr(engine, "DEFERRED_WAIT", wait)
    fits = []
    for b in (0, batch):
        monkeypatch.setattr(engine, "DEFERRED_BATCH", b)
        fits.append(Machine(**params).fit(X, y))
        assert bool(stores) == (b > 0)  # the direct fit made no store, the deferred one did
    direct, deferred = fits
    assert direct.n_iter_ > engine.TRANSFERS_FROM
    assert deferred.n_steps_ == direct.n_steps_
    assert deferred.dual_objective_ == pytest.approx(direct.dual_objective_, rel=1e-11)
    scale = np.abs(direct.dual_coef_).max()
    np.testing.assert_allclose(deferred.dual_coef_, direct.dual_coef_, atol=1e-8 * scale)


@pytest.mark.parametrize(
    "Machine, kernel",
    [(M, {}) for M in MACHINES]
    + [
        (SimplexSVC, {}),
        (InhibitorySVC, {"kernel": "poly", "degree": 2}),
        (WestonWatkinsSVC, {"kernel": "poly", "degree": 3, "coef0": 1.0}),
    ],
)
def test_deferred_epochs_on_two_cached_columns_reach_the_optimum(Machine, kernel, digits, stores,
                                                                 monkeypatch):  # fmt: skip
    """Batches of 16 steps on a cache of two columns (every flush evicts what it applied):
    the optimum of the whole Gram matrix."""
    X, y = digits
    X, y = X[:150], y[:150]
    params = dict(C=1.0, tol=1e-8, max_iter=100_000, random_state=0, **kernel)
    whole = Machine(**params).fit(X, y)
    monkeypatch.setattr(engine, "DEFERRED_BATCH", 16)
    lru = Machine(cache_size=2 * 150 * 8 / 2**20, **params).fit(X, y)
    assert stores == [16] * len(stores) and stores
    assert lru.dual_objective_ == pytest.approx(whole.dual_objective_, rel=1e-9)
    np.testing.assert_array_equal(lru.predict(X), whole.predict(X))
