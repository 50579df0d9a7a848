"""The mu = 1/L study: the sum of outputs, stationarity, and where the profile's extremum is."""

from __future__ import annotations

import numpy as np

from msvm.core import datasets
from msvm.fast import InhibitorySVC
from msvm.verify.inhibition import envelope_derivative, plot, profile


def test_profile_peaks_at_one_over_L(tmp_path):
    X, y = datasets.load("wine", n_samples=60)
    prof = profile(X, y, n_points=9, dataset="wine")
    assert prof.argmax == 1.0 / 3
    assert prof.argmin in (0.0, 2.0 / 3)
    assert prof.sum_of_outputs < 1e-8  # ISVM (3.6)
    middle = int(np.argmin(np.abs(prof.mus - 1.0 / 3)))
    assert prof.derivatives[middle] == 0.0
    assert np.all(prof.derivatives[:middle] > 0) and np.all(prof.derivatives[middle + 1 :] < 0)
    # the envelope derivative is the slope of the profile (finite differences, same sign)
    slopes = np.diff(prof.objectives) / np.diff(prof.mus)
    assert np.all(np.sign(slopes[: middle - 1]) == np.sign(prof.derivatives[1:middle]))
    plot([prof], tmp_path / "mu.png")
    assert (tmp_path / "mu.png").stat().st_size > 1000


def test_sum_of_outputs_is_not_zero_away_from_one_over_L():
    X, y = datasets.load("wine", n_samples=60)
    clf = InhibitorySVC(mu=0.2, tol=1e-6).fit(X, y)
    assert np.abs(clf.decision_function(X).sum(axis=1)).max() > 1e-3
    assert envelope_derivative(clf, X) > 0
