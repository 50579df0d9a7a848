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
from msvm.fast.engine import (
    add_column,
    apply_or_defer,
    flush_pending,
    pending_arrays,
    pending_row,
    push_pending,
)
from msvm.fast.kernels import column_source, compute_column, get_column, is_lru
from msvm.fast.transfer import add_difference

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
    as a transfer's partner and on its own) on a cache of two slots, and caches the columns it
    computed in the least recently used slots.  On data whose dot products are exact (sixteenths)
    both sum U bit for bit as the direct steps do: ``add_column`` for a step of its own,
    ``add_difference`` for a transfer, in the steps' order, one of them on a cached column."""
    rng = np.random.default_rng(0)
    N, W, offset = 40, 4, 0.3
    X = rng.integers(0, 17, size=(N, 6)) / 16.0
    source = column_source(X, "rbf", 0.2, 3, 0.0, 2 * N * 8 / 2**20)
    assert is_lru(source) and source[7].shape[0] == 2
    K = np.empty((N, N))
    for i in range(N):
        compute_column(source, i, K[i])  # the direct steps' columns (K is symmetric)
    np.testing.assert_allclose(K, kernel_matrix(X, X, "rbf", 0.2, 3, 0.0), rtol=1e-14, atol=1e-15)
    U = np.asfortranarray(rng.normal(size=(N, W)))
    expected = U.copy()
    steps = [(3, -1), (17, 3), (25, -1), (9, 17), (3, -1)]
    pending, n = pending_arrays(source, W, 8, 4), 0
    for i, q in steps:
        dS = rng.normal(size=W + 1)  # the sum column's entry is ignored when U is W wide
        n = push_pending(i, q, dS, source, pending, n)
        if q < 0:
            add_column(expected, K[i], offset, dS)
        else:
            add_difference(expected, K[i], K[q], dS)
    np.testing.assert_allclose(  # and against the arithmetic written out
        expected,
        U + sum(np.outer(K[i] + offset * (q < 0) - K[max(q, 0)] * (q >= 0), pending[2][t])
                for t, (i, q) in enumerate(steps)),  # fmt: skip
        rtol=1e-12, atol=1e-12,
    )  # fmt: skip
    row = np.empty(W)
    for i in (0, 3, 25, 39):
        pending_row(i, U, source, offset, pending, n, row)
        np.testing.assert_array_equal(row, expected[i])
    flush_pending(source, offset, U, pending, n)
    np.testing.assert_array_equal(U, expected)
    cache, slot_of, owner = source[7:10]
    assert sorted(owner) == [3, 17]  # the last two computed (25 and 9 taken in between)
    for i in owner:
        np.testing.assert_array_equal(cache[slot_of[i]], K[i])
    assert np.all(slot_of[[9, 25]] == -1)
    # a step on cached columns with none waiting is applied at once; with some waiting, it waits
    # too, or with flush_first (the engine's choice with transfers) is applied after them
    dS = rng.normal(size=W + 1)
    for flush_first in (False, True):
        source = column_source(X, "rbf", 0.2, 3, 0.0, 2 * N * 8 / 2**20)
        get_column(source, 3), get_column(source, 17)  # the two slots
        n = apply_or_defer(17, 3, dS, source, offset, U, pending, 0, flush_first)
        add_difference(expected, K[17], K[3], dS)
        assert n == 0
        np.testing.assert_array_equal(U, expected)
        n = apply_or_defer(9, -1, dS, source, offset, U, pending, 0, flush_first)
        assert n == 1
        np.testing.assert_array_equal(U, expected)
        add_column(expected, K[9], offset, dS)
        n = apply_or_defer(3, 17, dS, source, offset, U, pending, n, flush_first)
        add_difference(expected, K[3], K[17], dS)
        assert n == (0 if flush_first else 2)
        if n:
            flush_pending(source, offset, U, pending, n)
        np.testing.assert_array_equal(U, expected)


@pytest.mark.parametrize("Machine", MACHINES)
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("batch, wait", [(32, 256), (3, 2)])  # the defaults; flushes at once
def test_deferred_epochs_take_the_same_steps(Machine, fit_intercept, batch, wait, digits, stores,
                                             monkeypatch):  # fmt: skip
    """On 20 of 300 columns cached, at C = 10 (well past the epoch where transfers start), a
    fit with the updates deferred takes the same steps as one with every update at once: on
    digits / 16, whose dot products are exact, the deferred steps sum the outputs as the direct
    ones do (``flush_pending``), so the step count and the dual variables are the same bit for
    bit."""
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
    assert deferred.dual_objective_ == direct.dual_objective_
    np.testing.assert_array_equal(deferred.dual_coef_, direct.dual_coef_)


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
