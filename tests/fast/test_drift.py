"""The outputs kept by increments, recomputed within a run once rounding could have moved them by
a share of tol (``engine.increment_rounding``, ``DecompositionSolver._run``).

The case: standardised iris with a wide RBF kernel (gamma = scale / 100) at C = 1e8, where the
dual variables reach ~1e8 and the outputs, O(1), are differences of sums ~1e10. Before the
recomputation the inhibitory machine at tol = 3e-6 ran its 10^7-step budget (80 s), warned, and
ended 2 448 below the dual objective that tol = 1e-5 reaches in 0.2 s; Lee-Lin-Wahba at tol = 1e-6
likewise (64 s).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
    engine,
)
from msvm.reference import FORMULATIONS, Problem

RECOMPUTED = "outputs recomputed"


@pytest.fixture(scope="module")
def huge_dual_iris():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X, y, 0.01 / (X.shape[1] * X.var())


@pytest.mark.parametrize("Estimator, tol", [(InhibitorySVC, 3e-6), (LeeLinWahbaSVC, 1e-6)])
def test_a_run_whose_outputs_drift_recomputes_them_and_converges(
    huge_dual_iris, Estimator, tol, capsys
):
    X, y, gamma = huge_dual_iris
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = Estimator(C=1e8, gamma=gamma, tol=tol, random_state=0, verbose=2).fit(X, y)
    assert RECOMPUTED in capsys.readouterr().out
    assert clf.kkt_violation_ <= tol and clf.fit_status_ == 0
    # the primal of the weights against the dual (the drifting run: 3.0e-2 for the inhibitory
    # machine; converged runs at tol = 1e-5, 4.1e-6 and 4.2e-6)
    assert clf.relative_gap_ < 1e-5
    reported = Estimator(C=1e8, gamma=gamma, tol=tol, random_state=0).fit(X, y)
    assert reported.dual_objective_ == clf.dual_objective_  # (verbose or not: the same steps)


@pytest.mark.parametrize(
    "Estimator", [InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC, OneVsAllSVC]
)
def test_a_fit_of_ordinary_outputs_is_not_recomputed_and_takes_the_same_steps(
    monkeypatch, capsys, Estimator
):
    """Standardised iris, gamma = scale / 10, C = 100, tol = 1e-6, a check every epoch: outputs
    below ~1e3, so never recomputed, and the steps those of a run without checks, to the last
    bit, although the checks cut its chunks of epochs between the Newton steps."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    params = dict(C=100.0, gamma=0.1 / (X.shape[1] * X.var()), tol=1e-6, random_state=0)
    monkeypatch.setattr(engine, "CHECK_STEPS", 1)
    monkeypatch.setattr(engine, "CHECK_EPOCHS", 1)
    checked = Estimator(**params, verbose=2).fit(X, y)
    assert RECOMPUTED not in capsys.readouterr().out
    # long fits: a hundred epochs of checks (one-vs-all's greedy classes: ten checks' steps)
    assert checked.n_steps_ > 10 * X.shape[0] if Estimator is OneVsAllSVC else checked.n_iter_ > 100
    monkeypatch.setattr(engine, "CHECK_STEPS", 10**18)
    unchecked = Estimator(**params).fit(X, y)
    assert checked.n_steps_ == unchecked.n_steps_
    np.testing.assert_array_equal(checked.dual_coef_, unchecked.dual_coef_)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize(
    "Estimator, key",
    [
        (OneVsAllSVC, "one_vs_all"),
        (InhibitorySVC, "inhibitory"),
        (WestonWatkinsSVC, "weston_watkins"),
        (CrammerSingerSVC, "crammer_singer"),
        (LeeLinWahbaSVC, "lee_lin_wahba"),
    ],
)
def test_outputs_recomputed_after_every_epoch_reach_the_reference_optimum(
    monkeypatch, capsys, kernel, Estimator, key
):
    """Recomputed at every check, a check every epoch: the kernel path's U and the linear path's
    weights, replaced as the run goes, lead to the exact dual's optimum."""
    monkeypatch.setattr(engine, "DRIFT_SHARE", 0.0)
    monkeypatch.setattr(engine, "CHECK_STEPS", 1)
    monkeypatch.setattr(engine, "CHECK_EPOCHS", 1)
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::2]
    y = y[::2]
    gamma = 1.0 / (X.shape[1] * X.var())
    clf = Estimator(C=10.0, kernel=kernel, gamma=gamma, tol=1e-6, random_state=0, verbose=2)
    clf.fit(X, y)
    assert RECOMPUTED in capsys.readouterr().out
    reference = FORMULATIONS[key].dual(Problem(X, y, C=10.0, kernel=kernel, gamma=gamma))
    assert clf.dual_objective_ == pytest.approx(reference.objective, rel=1e-6)


def test_a_class_whose_outputs_drift_is_recomputed_and_converges(huge_dual_iris, capsys):
    """One-vs-all's class-by-class solver (``_run_separable``) at C = 1e8, tol = 3e-7: a class
    runs ~3e5 steps, its outputs recomputed every 1e5 and after its own test passed.  Before, its
    test passed on outputs that rounding had moved, and the recomputed violation, 3.7e-7 > tol,
    was warned about (on glass, tol = 1e-6: 18.2e6 steps, then the warning; now 6.6e6)."""
    X, y, gamma = huge_dual_iris
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = OneVsAllSVC(C=1e8, gamma=gamma, tol=3e-7, random_state=0, verbose=2).fit(X, y)
    assert RECOMPUTED in capsys.readouterr().out
    assert clf.kkt_violation_ <= clf.tol and clf.fit_status_ == 0
    assert clf.relative_gap_ < 1e-5  # (2.4e-6; 2.2e-6 before: the gap does not see the drift)


def test_a_tol_below_the_rounding_of_an_increment_is_named_in_the_warning(huge_dual_iris):
    """At C = 1e8 one increment may round the outputs by ~7e-8 (eps C L): tol = 1e-8 cannot be
    tested, and the warning says to raise tol, not to rescale features that are standardised
    (stop 64's audit: the old text's advice)."""
    X, y, gamma = huge_dual_iris
    with pytest.warns(ConvergenceWarning, match=r"tol is below that rounding: raise tol above"):
        clf = OneVsAllSVC(C=1e8, gamma=gamma, tol=1e-8, random_state=0).fit(X, y)
    assert clf.kkt_violation_ > clf.tol


@pytest.mark.parametrize("Estimator", [InhibitorySVC, LeeLinWahbaSVC])
def test_a_gram_matrix_of_huge_entries_converges_to_the_features_optimum(Estimator):
    """Iris times 10 000 as a linear Gram matrix (outputs ~1e12, an increment rounding them by
    ~3e-4, at tol = 1e-3): the outputs recomputed as the run goes, the fit converges to the
    optimum of the same dual on the features (the linear path); before, it ran its 10^7-step
    budget (48 s), warned, and ended at a KKT violation of 17 and 57 % training accuracy."""
    X, y = load_iris(return_X_y=True)
    X = X * 1e4
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        gram = Estimator(kernel="precomputed", random_state=0).fit(X @ X.T, y)
        features = Estimator(kernel="linear", random_state=0).fit(X, y)
    assert gram.kkt_violation_ <= gram.tol
    assert gram.dual_objective_ == pytest.approx(features.dual_objective_, rel=1e-4)
    # (points on the boundary of two optima within tol may go either way)
    assert np.mean(gram.predict(X @ X.T) == features.predict(X)) >= 0.98


@pytest.mark.parametrize("Estimator", [WestonWatkinsSVC, InhibitorySVC])
def test_compact_phases_recompute_their_outputs_and_reach_the_whole_gram_optimum(
    monkeypatch, Estimator
):
    """Columns computed on demand, compacted once shrunk (as tests/fast/test_compact.py), a
    recomputation due at every check: a compact phase's outputs U[A] also hold the held
    patterns' outputs, which its dual variables alpha[A] alone do not give.  The phase keeps
    them (U[A] at its start less (K_AA + offset) S(alpha[A]) there) and adds them to what it
    recomputes; stop 64's first version left them out and, on its review's case, ended at dual
    -70.1 for an optimum of 298.9; stop 64 then recomputed nothing in a phase."""
    monkeypatch.setattr(engine, "COMPACT_FRACTION", 0.75)
    monkeypatch.setattr(engine, "COMPACT_FRACTION_INHIBITORY", 0.75)
    X, y = datasets.load("digits", n_samples=400)
    common = dict(tol=1e-8, max_iter=100_000, random_state=0)
    whole = Estimator(**common).fit(X, y)
    monkeypatch.setattr(engine, "DRIFT_SHARE", 0.0)
    monkeypatch.setattr(engine, "CHECK_STEPS", 1)
    monkeypatch.setattr(engine, "CHECK_EPOCHS", 1)
    rows = []
    state_outputs = engine.state_outputs

    def spy(kind, c, source, offset, alpha, y_index):
        rows.append(alpha.shape[0])
        return state_outputs(kind, c, source, offset, alpha, y_index)

    monkeypatch.setattr(engine, "state_outputs", spy)
    lru = Estimator(cache_size=0.2, **common).fit(X, y)
    assert min(rows) < X.shape[0]  # (a compact phase's recomputation)
    assert lru.dual_objective_ == pytest.approx(whole.dual_objective_, rel=1e-8)


def test_a_class_moved_to_its_exact_optimum_gets_its_exact_outputs(huge_dual_iris, monkeypatch):
    """One-vs-all's exact class step (``DecompositionSolver._exact_class``) comes after the class's
    first ~3e4 steps, whose increments have rounded its outputs (at C = 1e8, by ~1e-8).  It sets
    them to (K + offset)(s a) at the new point; before, it added the step's increment, and the
    rounding the steps had left stayed in them."""
    X, y, gamma = huge_dual_iris
    seen = []
    exact_class = engine.DecompositionSolver._exact_class

    def spy(self, source, u, a, hi, lin, sign):
        before = a.copy()
        exact_class(self, source, u, a, hi, lin, sign)
        if not np.array_equal(before, a):
            K = engine.offset_block(source, self.offset)
            seen.append(np.abs(u - K @ (sign * a)).max())

    monkeypatch.setattr(engine.DecompositionSolver, "_exact_class", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        OneVsAllSVC(C=1e8, gamma=gamma, tol=3e-7, random_state=0).fit(X, y)
    assert seen and max(seen) == 0.0
