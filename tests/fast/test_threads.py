"""n_jobs: the threads of a fit change nothing in its result (msvm.fast.threads)."""

from __future__ import annotations

import sys
import threading
import time
import warnings

import numba
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    engine,
)
from msvm.fast.engine import CLASS_THREADS_MIN, DecompositionSolver
from msvm.fast.kernels import GRAM_BLOCK, column_source, is_lru
from msvm.fast.threads import fit_threads, resolve_n_jobs, thread_map

needs_two = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one numba thread")


@pytest.fixture(scope="module")
def overlapping():
    """Classes that overlap (loss terms non-zero), a Gram matrix of several row blocks computed
    on threads (kernels.GRAM_BLOCK)."""
    X, y = make_classification(1500, n_features=8, n_informative=5, n_classes=3, flip_y=0.1,
                               random_state=0)  # fmt: skip
    assert X.shape[0] >= 4 * GRAM_BLOCK
    return X, y


@needs_two
def test_fit_is_the_same_whatever_n_jobs(overlapping):
    X, y = overlapping
    before, fits = numba.get_num_threads(), []
    for n_jobs in (1, 2):
        clf = InhibitorySVC(max_iter=3, n_jobs=n_jobs, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(clf.fit(X, y))
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert fits[0].objective_ == fits[1].objective_
    assert numba.get_num_threads() == before  # restored after the fit


def test_n_jobs_resolution_and_bad_values(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert resolve_n_jobs(None) == resolve_n_jobs(-1) == 1
    assert resolve_n_jobs(1) == 1
    with pytest.raises(ValueError, match="n_jobs == 0"):
        WestonWatkinsSVC(n_jobs=0).fit([[0.0], [1.0], [2.0]], [0, 1, 2])
    with pytest.raises(ValueError, match="n_jobs"):
        WestonWatkinsSVC(n_jobs=1.5).fit([[0.0], [1.0], [2.0]], [0, 1, 2])


@needs_two
@pytest.mark.parametrize(
    "n_classes, n_features, cache_size",
    # columns on demand, split between threads; the Gram matrix; columns in batches (separable)
    [(4, 8, 2), (4, 8, 400), (3, 8, 0.7), (3, 120, 0.7)],
)
def test_one_vs_all_classes_on_threads_equal_one_thread(n_classes, n_features, cache_size):
    """One-vs-all's classes solved on threads (engine.CLASS_THREADS_MIN patterns and more), each
    over its own share of the cache: the same steps, bit for bit, as on one thread.  (With 3
    classes and 0.7 MB the compact phases' kernel blocks were cut by the thread's share of the
    cache, and OpenBLAS's rows differ in their last bits with the block: stop 35's review.)"""
    n = CLASS_THREADS_MIN + (300 if n_classes == 4 else 100)
    X, y = make_classification(n, n_features=n_features, n_informative=5, n_classes=n_classes,
                               flip_y=0.1, random_state=1)  # fmt: skip
    fits = [OneVsAllSVC(cache_size=cache_size, n_jobs=n_jobs, random_state=0).fit(X, y)
            for n_jobs in (1, 2)]  # fmt: skip
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert fits[0].n_steps_ == fits[1].n_steps_ and fits[0].objective_ == fits[1].objective_


@needs_two
@pytest.mark.parametrize("Machine", [WestonWatkinsSVC, CrammerSingerSVC, InhibitorySVC])
def test_columns_on_demand_fit_is_the_same_whatever_n_jobs(Machine, overlapping, monkeypatch):
    """On columns computed on demand (a cache of a tenth of them) the coupled machines defer
    their updates (engine.flush_pending) and their compact phases bring the set-aside rows up
    to date by kernel blocks on threads (kernels.blocked_kernel): the same fit, bit for bit,
    whatever n_jobs."""
    X, y = overlapping
    stores, made = [], engine.pending_arrays
    monkeypatch.setattr(engine, "pending_arrays", lambda *args: stores.append(1) or made(*args))
    fits = []
    for n_jobs in (1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(Machine(C=10.0, cache_size=1.5, max_iter=40, n_jobs=n_jobs,
                                random_state=0).fit(X, y))  # fmt: skip
    assert stores  # the updates were deferred
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert fits[0].n_steps_ == fits[1].n_steps_ and fits[0].objective_ == fits[1].objective_


@needs_two
@pytest.mark.parametrize(
    "n, n_features, cache_size, seed, C, warm",
    [
        (CLASS_THREADS_MIN + 100, 120, 0.7, 2, 10.0, False),  # classes on threads
        (1500, 300, 0.5, 0, 1.0, False),  # one after another, BLAS on n_jobs threads around
        (CLASS_THREADS_MIN + 100, 120, 1.5, 2, 3.0, True),  # a warm start's outputs fill the cache
    ],
)
def test_one_vs_all_batched_columns_equal_one_thread(n, n_features, cache_size, seed, C, warm):
    """With many features one-vs-all computes its missing columns in BLAS batches
    (separable.batch_columns): the same fit, bit for bit, whatever n_jobs.  Stop 35's review
    found three ways it was not: the syncs added cached columns before missing ones (an order
    that depends on the thread's share of the cache), the products ran on the fit's BLAS threads
    below CLASS_THREADS_MIN, and a warm start's columns (computed one by one) stayed cached."""
    X, y = make_classification(n, n_features=n_features, n_informative=10, n_classes=3,
                               flip_y=0.1, random_state=seed)  # fmt: skip
    fits = []
    for n_jobs in (1, 2):
        model = OneVsAllSVC(C=1.0 if warm else C, cache_size=cache_size, n_jobs=n_jobs,
                            warm_start=warm, random_state=0).fit(X, y)  # fmt: skip
        fits.append(model.set_params(C=C).fit(X, y) if warm else model)
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert fits[0].n_steps_ == fits[1].n_steps_ and fits[0].objective_ == fits[1].objective_
    assert fits[0].kkt_violation_ == fits[1].kkt_violation_


def test_blas_threads_limits_every_blas_and_restores_it(monkeypatch):
    """``blas_threads`` limits every BLAS the process has loaded, restores them on exit, and
    finds the libraries again once a module was imported since its controller was built."""
    from threadpoolctl import threadpool_info

    from msvm.fast import threads

    def blas_counts():
        return sorted(
            (lib["filepath"], lib["num_threads"])
            for lib in threadpool_info()
            if lib["user_api"] == "blas"
        )

    before = blas_counts()
    assert before, "no BLAS library found"
    with threads.blas_threads(1):
        assert all(n == 1 for _, n in blas_counts())
    assert blas_counts() == before
    with threads.blas_threads(1):
        pass
    built = threads._controller
    with threads.blas_threads(1):
        pass
    assert threads._controller is built  # no new import: the same controller
    monkeypatch.setitem(sys.modules, "msvm_test_new_module", object())
    with threads.blas_threads(1):
        assert all(n == 1 for _, n in blas_counts())
    assert threads._controller is not built


def test_blas_threads_inside_the_same_limit_sets_nothing(monkeypatch):
    """A ``blas_threads`` context inside one that holds the same limit does not call
    threadpoolctl again (each call sets and restores every BLAS, ~35 us: MultiPrototypeSVC's
    primal test after every epoch); another limit inside it does, and each exit restores what
    its entry found."""
    from threadpoolctl import threadpool_info

    from msvm.fast import threads

    def blas_counts():
        return sorted(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")

    before = blas_counts()
    with threads.blas_threads(1):
        calls = []
        original = threads._controller.limit
        monkeypatch.setattr(threads._controller, "limit", lambda **kw: calls.append(kw) or
                            original(**kw))  # fmt: skip
        with threads.blas_threads(1):
            assert all(n == 1 for n in blas_counts())
        assert calls == []
        with threads.blas_threads(2):
            pass
        assert calls == [{"limits": 2, "user_api": "blas"}]
        assert all(n == 1 for n in blas_counts())
    assert blas_counts() == before


@needs_two
def test_deferred_updates_give_the_same_fit_whatever_n_jobs():
    """Columns computed on demand, the outputs' updates deferred (engine.DEFERRED_BATCH): the
    batches' columns come from one BLAS product, kept on one BLAS thread whatever n_jobs, so
    the fit is the same to the last bit."""
    X, y = make_classification(1200, n_features=30, n_informative=10, n_classes=4, flip_y=0.1,
                               random_state=0)  # fmt: skip
    fits = []
    for n_jobs in (1, 2):
        clf = WestonWatkinsSVC(max_iter=30, cache_size=1, n_jobs=n_jobs, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(clf.fit(X, y))
    assert is_lru(column_source(X, "rbf", 1.0, 3, 0.0, 1))  # 1 MB: 109 of 1 200 columns
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)


@needs_two
@pytest.mark.parametrize("Estimator", [CrammerSingerSVC, InhibitorySVC, SimplexSVC])
def test_compact_phases_give_the_same_fit_whatever_n_jobs(Estimator, monkeypatch):
    """Columns on demand, the run shrunk into compact phases (DecompositionSolver._compact): the
    other patterns' outputs are brought up to date by K[rest, moved] dZ, a product large enough
    for a threaded BLAS to split; computed by row blocks on one BLAS thread each, the fit is the
    same to the last bit whatever n_jobs (with the fit's BLAS threads, Crammer-Singer on 16 000
    points took 79 814 steps on one thread and 78 729 on two; on these 3 000 points the
    inhibitory machine and the simplex hinge differed too)."""
    X, y = make_classification(3000, n_features=20, n_informative=12, n_classes=6, flip_y=0.05,
                               random_state=0)  # fmt: skip
    phases = []
    compact = DecompositionSolver._compact

    def counted(self, *args):
        phases.append(args[4].size)  # the patterns of the phase
        return compact(self, *args)

    monkeypatch.setattr(DecompositionSolver, "_compact", counted)
    fits = [Estimator(cache_size=4, n_jobs=n_jobs, random_state=0).fit(X, y)
            for n_jobs in (1, 2)]  # fmt: skip
    assert phases and max(phases) >= 500  # the rest updates were products of hundreds of rows
    assert fits[0].n_steps_ == fits[1].n_steps_
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)


def test_thread_map_keeps_the_order_and_the_fit_s_thread_count():
    # Results in the items' order; at most n_jobs threads at once (and exactly one with n_jobs=1).
    running, peak, lock = [0], [0], threading.Lock()

    def square(item):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return item * item

    for n_jobs in (1, 2):
        peak[0] = 0
        with fit_threads(n_jobs):
            assert thread_map(square, range(9)) == [i * i for i in range(9)]
        assert peak[0] <= n_jobs
    assert peak[0] == min(2, resolve_n_jobs(2))
