"""Runs on columns computed on demand solve the shrunk problem on its own (engine._compact):
the same optimum as the whole Gram matrix, with every other pattern's outputs kept exact."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.fast import CrammerSingerSVC, InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC, engine
from msvm.fast.kernels import (
    column_source,
    get_column,
    kernel_block,
    restricted_source,
    shortened_source,
)
from msvm.fast.patterns import dual_vectors, pattern_transpose


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
    monkeypatch.setattr(engine, "COMPACT_FRACTION_INHIBITORY", 0.75)
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
    # tol = 1e-8: with a bias, the augmented Lagrangian's own stop (bias step <= tol) leaves the
    # dual value ~1e-8 off the optimum at tol = 1e-6, as large as the comparison below
    common = dict(tol=1e-8, max_iter=100_000, random_state=0, **params)
    whole = Estimator(**common).fit(X, y)
    assert not compactions  # the whole Gram matrix fits the default cache
    # 0.2 MB holds 65 of the 400 columns: computed on demand, and compacted once shrunk
    lru = Estimator(cache_size=0.2, **common).fit(X, y)
    assert compactions
    assert lru.dual_objective_ == pytest.approx(whole.dual_objective_, rel=1e-8)
    assert lru.objective_ == pytest.approx(whole.objective_, rel=1e-6)
    # two solutions to tol = 1e-6: the same class wherever the top two scores are not tied
    F, F_lru = whole.decision_function(X), lru.decision_function(X)
    np.testing.assert_allclose(F_lru, F, atol=1e-4 * np.abs(F).max())
    top_two = np.sort(F, axis=1)[:, -2:]
    clear = top_two[:, 1] - top_two[:, 0] > 1e-3 * np.abs(F).max()
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(lru.predict(X)[clear], whole.predict(X)[clear])


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


@pytest.mark.parametrize("sparse", [False, True])
def test_shortened_source_keeps_the_cached_columns_of_its_rows(sparse):
    """One-vs-all's compact phases (separable.solve_separable): the columns the cache held for
    the kept rows move, shortened and in place, into the new source; every other column is
    computed as before, entry for entry; the old source is left empty."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 6)) * (rng.random((80, 6)) < 0.7)
    data = sp.csr_matrix(X) if sparse else X
    source = column_source(data, "rbf", 0.3, 3, 0.0, 0.02)  # 32 of 80 columns
    fresh = column_source(data, "rbf", 0.3, 3, 0.0, 0.02)
    for i in rng.permutation(80)[:50]:  # 32 cached: the last ones asked for
        get_column(source, i)
    cached = source[9][source[9] >= 0]
    rows = np.sort(np.union1d(cached[::2], rng.choice(80, 20, replace=False)))
    sub = shortened_source(source, rows)
    assert np.all(source[8] == -1) and np.all(source[9] == -1)  # the old source is empty
    kept = np.flatnonzero(np.isin(rows, cached))
    owners = sub[9][sub[9] >= 0]
    np.testing.assert_array_equal(np.sort(owners), kept)  # every kept column carried over
    for p in rng.permutation(np.tile(np.arange(rows.size), 2)):
        # bit for bit the entries of the whole column: computed once, or carried
        np.testing.assert_array_equal(get_column(sub, p), get_column(fresh, rows[p])[rows])
    assert sub[7].shape[0] == min(rows.size - 1, 32 * 80 // rows.size)


def test_compact_reports_the_violation_over_every_pattern():
    """A run that ends in a shrunk solve reports the largest KKT violation at its final point,
    over every variable (here recomputed with numpy from K)."""
    X, y = datasets.load("digits", n_samples=120)
    model = WestonWatkinsSVC(cache_size=0.01, random_state=0)
    model.fit(X, y)
    L, y_index = model.classes_.size, model._y_index
    lin, free = model._dual_terms(y_index, L)
    hi = model._upper_bounds(1.0, free)
    source = column_source(X, "rbf", model._gamma, 3, 0.0, 0.01)
    alpha = np.zeros((120, L))
    U = model._outputs(source, 0.0, alpha, y_index, 0.0)
    solver = engine.DecompositionSolver(
        model._kind, 0.0, lin, hi, y_index, tol=1e-3, max_iter=50, shrinking=True, random_state=0
    )
    kdiag = np.ones(120)
    dual = solver._dual(alpha, kdiag)
    patterns = np.arange(0, 120, 3)  # a third of the patterns, from alpha = 0
    _, worst = solver._compact(source, alpha, U, dual, patterns, 50, 1e-3)
    K = kernel_matrix(X, X, "rbf", model._gamma, 3, 0.0)
    _, B = dual_vectors(model._kind, alpha, y_index, 0.0)
    g = lin - pattern_transpose(model._kind, K @ B, y_index)
    violation = np.where(
        alpha <= 0, np.maximum(g, 0), np.where(alpha >= hi, np.maximum(-g, 0), abs(g))
    )
    assert worst == pytest.approx(violation[hi > 0].max(), rel=1e-9)
    assert violation[patterns][hi[patterns] > 0].max() < worst  # the rest, never visited, leads
