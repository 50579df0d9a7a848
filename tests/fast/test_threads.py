"""n_jobs: the threads of a fit change nothing in its result (msvm.fast.threads)."""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm.fast import InhibitorySVC, WestonWatkinsSVC
from msvm.fast.kernels import EXP_THREAD_MIN
from msvm.fast.threads import resolve_n_jobs

needs_two = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one numba thread")


@pytest.fixture(scope="module")
def overlapping():
    """Classes that overlap (loss terms non-zero), a Gram matrix large enough to be exponentiated
    in blocks on threads (kernels.EXP_THREAD_MIN)."""
    X, y = make_classification(1500, n_features=8, n_informative=5, n_classes=3, flip_y=0.1,
                               random_state=0)  # fmt: skip
    assert X.shape[0] ** 2 >= 2 * EXP_THREAD_MIN
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
