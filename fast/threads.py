"""The threads of a fit: ``n_jobs``.

A fit runs on ``resolve_n_jobs(n_jobs)`` threads: the Gram matrix in row blocks
(``kernels.gram``), the compact phases' update of the set-aside patterns' outputs K[rest, moved] dZ
in row blocks as well (``kernels.blocked_kernel`` with ``times``; ``DecompositionSolver._compact``),
BLAS elsewhere, and one-vs-all's classes (``DecompositionSolver._run_separable``, from 2 000
patterns on).  Every Gram entry, every row block's product (each on one BLAS thread) and every
class's steps are the same as on one thread, so the result of such a fit does not depend on
``n_jobs`` (tested to the last bit; until stop 31 the compact phases' product ran on the fit's
BLAS threads, and a Crammer-Singer fit on 16 000 points took 79 814 steps on one thread and
78 729 on two; until then too, the linear path's starting weights X^T S ran on them:
``engine.weights_of_state``).  The coupled machines' decomposition, one pattern after another,
runs on one thread: kernel columns computed in row blocks on numba's threads were tried and
dropped -- on this project's shared 2-core machine under load a Weston-Watkins fit on
16 000 points took 15-40x longer with two threads than with one (each column's parallel region
waited for a second core; benchmarks/NOTES.md).

``n_jobs=None`` (the default) takes every core this process may run on, as multi-core SVM
libraries do, but no more than ``OMP_NUM_THREADS`` when that is set (joblib's process workers
set it to their share of the cores) nor than numba's NUMBA_NUM_THREADS; ``-1`` is the same;
``k > 0`` is k threads (at most numba's limit); ``-k`` leaves k - 1 of the cores idle, as in
joblib.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba
from threadpoolctl import ThreadpoolController


def available_cores() -> int:
    """The cores this process may run on, capped by OMP_NUM_THREADS and numba's limit."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    limit = os.environ.get("OMP_NUM_THREADS", "")
    if limit.isdigit() and int(limit) > 0:
        cores = min(cores or 1, int(limit))
    return max(1, min(cores or 1, numba.config.NUMBA_NUM_THREADS))


def resolve_n_jobs(n_jobs) -> int:
    """The thread count for ``n_jobs`` (module docstring); ValueError for 0."""
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None or -1 for every core, or k > 0.")
    cores = available_cores()
    if n_jobs is None:
        return cores
    if n_jobs < 0:
        return max(1, cores + 1 + n_jobs)
    return min(int(n_jobs), numba.config.NUMBA_NUM_THREADS)


# threadpoolctl's ``threadpool_limits`` finds the loaded BLAS libraries afresh on every call (about
# 1 ms: it walks every shared object of the process), two calls a fit -- on glass that was half of a
# 5 ms fit.  One controller serves every call instead; it is built again whenever a module was
# imported since (a new BLAS arrives with a module, e.g. scipy.linalg's own OpenBLAS).  Setting
# and restoring the limits still costs ~35 us, so a context inside one that already holds the same
# limit (with no module imported since) sets nothing: MultiPrototypeSVC's annealing enters
# ``blas_threads(1)`` once per fit, and the primal test after each of its epochs (15 000 on iris)
# took 0.6 s of a 1.8 s fit in contexts of its own.
_controller, _controller_modules = None, -1
_controller_lock = threading.Lock()
_in_force = threading.local()  # .limit: (limit, controller) of this thread's innermost context


@contextmanager
def blas_threads(limit: int):
    """Context manager: BLAS on at most ``limit`` threads (``threadpool_limits(limit,
    user_api="blas")``, through one cached controller); nothing to do inside a context that
    already holds ``limit``."""
    global _controller, _controller_modules
    with _controller_lock:
        if _controller is None or _controller_modules != len(sys.modules):
            _controller, _controller_modules = ThreadpoolController(), len(sys.modules)
        controller = _controller
    outer = getattr(_in_force, "limit", None)
    if outer is not None and outer[0] == limit and outer[1] is controller:
        yield
        return
    with controller.limit(limits=limit, user_api="blas"):
        _in_force.limit = (limit, controller)
        try:
            yield
        finally:
            _in_force.limit = outer


@contextmanager
def fit_threads(n_jobs):
    """Run the body on ``resolve_n_jobs(n_jobs)`` threads (numba's and BLAS's), then restore."""
    threads = resolve_n_jobs(n_jobs)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        with blas_threads(threads):
            yield threads
    finally:
        numba.set_num_threads(previous)


def with_fit_threads(fit):
    """Decorate an estimator's ``fit`` to run in ``fit_threads(self.n_jobs)``."""

    @functools.wraps(fit)
    def threaded_fit(self, *args, **kwargs):
        with fit_threads(self.n_jobs):
            return fit(self, *args, **kwargs)

    return threaded_fit


# One pool of worker threads for the whole process (numpy and LAPACK release the GIL), started on
# first use; ``thread_map`` runs at most numba's current count of threads of it at once (a fit's
# n_jobs).
POOL_THREADS = min(available_cores(), 8)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool():
    """After a fork the child has the pool object but none of its threads: start afresh."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def thread_map(function, items) -> list:
    """[function(item) for item in items], on up to numba's current count of threads at once
    (each taking every t-th item).  Each call's result must not depend on the thread it runs on:
    run BLAS on one thread (``blas_threads(1)``) around it."""
    global _pool
    items = list(items)
    threads = min(POOL_THREADS, numba.get_num_threads(), len(items))
    if threads <= 1:
        return [function(item) for item in items]
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="msvm")
    shares = [items[k::threads] for k in range(threads)]
    done = list(_pool.map(lambda share: [function(item) for item in share], shares))
    results = [None] * len(items)
    for k, share in enumerate(done):
        results[k::threads] = share
    return results
