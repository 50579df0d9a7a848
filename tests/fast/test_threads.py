"""n_jobs: the threads of a fit change nothing in its result (msvm.fast.threads)."""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm.fast import InhibitorySVC, WestonWatkinsSVC
from msvm.fast.kernels import PARALLEL_MIN, column_source, get_column
from msvm.fast.threads import resolve_n_jobs

needs_two = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one numba thread")


@pytest.fixture(scope="module")
def long_columns():
    """More patterns than PARALLEL_MIN, classes that overlap (loss terms non-zero)."""
    X, y = make_classification(PARALLEL_MIN + 500, n_features=8, n_informative=5, n_classes=3,
                               flip_y=0.1, random_state=0)  # fmt: skip
    return X, y


@needs_two
@pytest.mark.parametrize("sparse", [False, True])
def test_threaded_columns_equal_one_threads(long_columns, sparse):
    X = sp.csr_matrix(long_columns[0]) if sparse else long_columns[0]
    one = column_source(X, "rbf", 0.1, 3, 0.0, 0.5, threads=1)
    two = column_source(X, "rbf", 0.1, 3, 0.0, 0.5, threads=2)
    for i in (0, 17, X.shape[0] - 1):
        np.testing.assert_array_equal(get_column(two, i), get_column(one, i))


@needs_two
@pytest.mark.parametrize("cache_size", [1, 400])  # on-demand columns; the whole Gram matrix
def test_fit_is_the_same_whatever_n_jobs(long_columns, cache_size):
    X, y = long_columns
    before, fits = numba.get_num_threads(), []
    for n_jobs in (1, 2):
        clf = InhibitorySVC(max_iter=2, cache_size=cache_size, n_jobs=n_jobs, random_state=0)
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
