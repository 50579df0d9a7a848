"""The mu = 1/L study: the sum of outputs, stationarity, and where the profile's extremum is."""

from __future__ import annotations

import numpy as np
import pytest

from msvm.core import datasets
from msvm.fast import InhibitorySVC
from msvm.reference import Problem, inhibitory
from msvm.reference.inhibitory import common_mode_free
from msvm.verify.inhibition import envelope_derivative, plot, profile


def test_profile_peaks_at_one_over_L_and_falls_to_the_common_mode_free_limit(tmp_path):
    X, y = datasets.load("wine", n_samples=60)
    prof = profile(X, y, n_points=13, dataset="wine")
    middle = int(np.argmin(np.abs(prof.mus - 1.0 / 3)))
    assert prof.mus[middle] == pytest.approx(1.0 / 3) and prof.argmax == prof.mus[middle]
    assert prof.sum_of_outputs < 1e-8  # ISVM (3.6)
    # symmetric about 1/L, falling in |1 - mu L| (the grid is symmetric about mu L = 1)
    np.testing.assert_allclose(prof.objectives, prof.objectives[::-1], rtol=1e-7)
    assert np.all(np.diff(prof.objectives[: middle + 1]) > 0)
    # every E*(mu) lies above the limit, and the grid's ends (mu L = -2, 4) come near it
    assert np.all(prof.objectives > prof.limit)
    assert prof.objectives[0] - prof.limit < 0.1 * (prof.objectives[middle] - prof.limit)
    # the measured slope at 1/L is ~0; the envelope derivatives have the profile's slopes' signs
    assert abs(prof.derivatives[middle]) < 1e-4 * prof.objectives[middle]
    assert np.all(prof.derivatives[:middle] > 0) and np.all(prof.derivatives[middle + 1 :] < 0)
    slopes = np.diff(prof.objectives) / np.diff(prof.mus)
    assert np.all(np.sign(slopes[: middle - 1]) == np.sign(prof.derivatives[1:middle]))
    plot([prof], tmp_path / "mu.png")
    assert (tmp_path / "mu.png").stat().st_size > 1000
    # read where the reference primal (4.1) met it: the ends, 1/L, the extrema, the slope
    assert prof.agrees and set(prof.reference) >= {prof.mus[0], prof.mus[middle], prof.mus[-1]}
    offset, slope = prof.disagreement()
    assert offset < 1e-7 and slope < 3e-6  # (the reference slope carries its solves over h)
    assert "no reading" not in prof.summary()
    prof.objectives[middle] *= 1.0 + 1e-4  # a fit at 1/L off by 1e-4
    assert not prof.agrees and "no reading of Theorem 1 or Lemma 2" in prof.summary()


def test_far_inhibitions_approach_the_limit_from_above():
    """E*(mu) at mu = 30 and 1000 against ``common_mode_free`` (iris, linear: the issue's values
    15.1334 at mu = -2, 15.1263 at 30, limit 15.1263)."""
    X, y = datasets.load("iris")
    limit = common_mode_free(Problem(X, y, C=0.1, kernel="linear")).objective
    values = [
        InhibitorySVC(C=0.1, kernel="linear", mu=mu, tol=1e-8, max_iter=-1, random_state=0)
        .fit(X, y)
        .objective_
        for mu in (-2.0, 30.0, 1000.0)
    ]
    assert values[0] > values[1] > values[2] > limit
    assert values[2] - limit < 1e-6 * limit
    assert values[1] == pytest.approx(
        inhibitory.primal(Problem(X, y, C=0.1, kernel="linear"), mu=30.0).objective, rel=1e-7
    )


def test_a_profile_falling_towards_one_over_L_would_make_theorem_one_hold(
    monkeypatch, agreeing_reference
):
    """The claim's verdict follows the profile: were 1/L the profile's minimum, it would hold."""
    from msvm.verify import claims, inhibition

    real = inhibition.profile

    def flipped(*args, **kwargs):
        prof = real(*args, **kwargs)
        prof.objectives = 2 * prof.objectives.max() - prof.objectives
        prof.limit = np.inf
        return agreeing_reference(prof)

    monkeypatch.setattr(inhibition, "profile", flipped)
    assert claims.theorem_one()[0].verdict == "holds"


def test_sum_of_outputs_is_not_zero_away_from_one_over_L():
    X, y = datasets.load("wine", n_samples=60)
    clf = InhibitorySVC(mu=0.2, tol=1e-6).fit(X, y)
    assert np.abs(clf.decision_function(X).sum(axis=1)).max() > 1e-3
    assert envelope_derivative(clf, X, y) > 0


def test_verify_plots_fails_when_the_profile_is_not_the_machine(monkeypatch, tmp_path, capsys):
    """`msvm verify --plots` read Theorem 1 off any profile, with exit status 0: a fast layer
    that ignores mu (every fit at 1/L) now gives no reading and a failing exit status."""
    from msvm.verify import inhibition
    from msvm.verify.cli import main

    real_fit = inhibition.InhibitorySVC.fit

    def at_one_over_L(self, X, y, **kwargs):
        self.mu = None
        return real_fit(self, X, y, **kwargs)

    monkeypatch.setattr(inhibition.InhibitorySVC, "fit", at_one_over_L)
    argv = ["verify", "--quick", "--dataset", "iris", "--formulations", "one_vs_all"]
    assert main([*argv, "--n-samples", "45", "--plots", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "no reading of Theorem 1" in out and "does not meet the reference primal" in out


def test_a_grid_without_one_over_L_is_refused():
    """The readings (and the reference's slope) are taken at 1/L: off the grid, the slope the
    profile held was another point's, and a profile meeting the reference to 3e-10 read as not
    agreeing (stop 50's review)."""
    X, y = datasets.load("iris", n_samples=45)
    with pytest.raises(ValueError, match="mus must hold 1/L"):
        profile(X, y, C=0.1, kernel="linear", mus=np.linspace(-0.5, 1.5, 12))


def test_the_profile_of_a_callable_kernel_is_that_of_its_gram_matrix(callable_kernel):
    """``profile(kernel=callable)``: the fits keep only their public attributes, and the
    envelope derivatives code the labels from ``classes_`` (they read a private attribute that a
    callable's fit does not have)."""
    X, y = datasets.load("wine", n_samples=45)
    given = profile(X, y, C=1.0, kernel=callable_kernel, n_points=5)
    gram = profile(callable_kernel(X, X), y, C=1.0, kernel="precomputed", n_points=5)
    np.testing.assert_allclose(given.objectives, gram.objectives, rtol=1e-12)
    np.testing.assert_allclose(given.derivatives, gram.derivatives, rtol=1e-9)
    assert given.agrees and np.all(np.isfinite(given.derivatives))


def test_the_envelope_derivative_of_a_column_of_labels_is_that_of_the_labels():
    """y as an (n, 1) column, which the fit accepts with a warning: the labels' codes were an
    (n, n) index there, and the derivative 90.6 for -12.9 (review, stop 52)."""
    X, y = datasets.load("wine", n_samples=60)
    clf = InhibitorySVC(mu=0.2, tol=1e-6).fit(X, y)
    expected = envelope_derivative(clf, X, y)
    assert envelope_derivative(clf, X, y[:, None]) == pytest.approx(expected, rel=1e-12)
