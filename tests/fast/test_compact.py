"""Runs on columns computed on demand solve the shrunk problem on its own (engine._compact):
the same optimum as the whole Gram matrix, with every other pattern's outputs kept exact."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import CrammerSingerSVC, InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC, engine
from msvm.fast.kernels import column_source, kernel_block, restricted_source


@pytest.fixture
def compactions(monkeypatch):
    """Count the compact runs."""
    calls = []
    original = engine.DecompositionSolver._compact

    def counted(self, source, alpha, U, dual, patterns, epochs, tol):
        taken = original(self, source, alpha, U, dual, patterns, epochs, tol)
        calls.append(patterns.size)
        return taken

    monkeypatch.setattr(engine.DecompositionSolver, "_compact", counted)
    # digits keeps about half its patterns active: compact from 3/4 so that every case does
    monkeypatch.setattr(engine, "COMPACT_FRACTION", 0.75)
    return calls


@pytest.mark.parametrize(
    "Estimator, params",
    [
        (WestonWatkinsSVC, {}),
        (WestonWatkinsSVC, {"fit_intercept": True}),  # the bias's offset in every kernel entry
        (CrammerSingerSVC, {}),
        (InhibitorySVC, {}),  # outputs K Z read with the row sum
        (LeeLinWahbaSVC, {"C": 0.1}),
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_compact_runs_reach_the_whole_gram_optimum(Estimator, params, sparse, compactions):
    X, y = datasets.load("digits", n_samples=400)
    X = sp.csr_matrix(X) if sparse else X
    common = dict(tol=1e-6, max_iter=100_000, random_state=0, **params)
    whole = Estimator(**common).fit(X, y)
    assert not compactions  # the whole Gram matrix fits the default cache
    # 0.2 MB holds 65 of the 400 columns: computed on demand, and compacted once shrunk
    lru = Estimator(cache_size=0.2, **common).fit(X, y)
    assert compactions
    assert lru.dual_objective_ == pytest.approx(whole.dual_objective_, rel=1e-8)
    assert lru.objective_ == pytest.approx(whole.objective_, rel=1e-6)
    np.testing.assert_array_equal(lru.predict(X), whole.predict(X))


def test_restricted_source_and_kernel_block_read_the_gram_matrix():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 5))
    K = kernel_matrix(X, X, "rbf", 0.2, 3, 0.0)
    source = column_source(X, "rbf", 0.2, 3, 0.0, 0.01)  # 21 of 60 columns
    rows, rest = np.sort(rng.choice(60, 25, replace=False)), np.arange(60)
    rest = np.setdiff1d(rest, rows)
    np.testing.assert_allclose(kernel_block(source, rest, rows), K[np.ix_(rest, rows)], atol=1e-12)
    sub = restricted_source(source, rows)  # K[rows, rows] fits in the cache's last slots
    np.testing.assert_allclose(sub[7], K[np.ix_(rows, rows)], atol=1e-12)
    # the main cache kept its other slots, emptied those the sub-source took
    taken = -(-(rows.size**2) // 60)
    assert np.all(source[9][-taken:] == -1) and np.all(source[8][source[8] >= 0] < 21 - taken)
