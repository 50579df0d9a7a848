"""MultiPrototypeSVC: the static step against MProt (11), q = 1 against Crammer-Singer, and the
assignment updates of MProt §6."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from msvm.core import datasets
from msvm.core.objectives import multi_prototype_loss
from msvm.fast import CrammerSingerSVC, MultiPrototypeSVC, engine, mprot, ssnal
from msvm.fast.base import expected_failed_checks
from msvm.fast.intercept import augmented_lagrangian
from msvm.fast.mprot import WeightsState, prototype_slacks, prototype_sums
from msvm.fast.patterns import CS, dual_vectors
from msvm.reference import FORMULATIONS, Problem


@pytest.fixture(scope="module")
def wine():
    X, y = datasets.load("wine")
    return X, y, Problem(X, y, C=1.0, kernel="rbf")


@pytest.mark.parametrize("q", [1, 2, 3])
def test_static_step_equals_the_reference_dual(wine, q):
    """With no assignment step, the fit is MProt (8) at the random initial assignment."""
    X, y, p = wine
    clf = MultiPrototypeSVC(
        n_prototypes=q,
        n_assignment_steps=0,
        kernel="rbf",
        gamma="scale",
        tol=1e-6,
        max_iter=100_000,
        random_state=0,
    ).fit(X, y)
    assignment = clf.assignment_ - p.y_index * q
    ref = FORMULATIONS["mprot_static"].dual(p, n_prototypes=q, assignment=assignment)
    assert clf.objective_ == pytest.approx(ref.objective, rel=1e-4)
    assert clf.dual_objective_ == pytest.approx(ref.objective, rel=1e-4)
    assert clf.dual_objective_ <= ref.objective * (1 + 1e-9) <= clf.objective_ * (1 + 2e-9)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("weighted", [False, True])
def test_dual_objective_bounds_the_static_optimum_at_a_large_C(wine, kernel, weighted):
    """At C = 1000 after the annealing the primal carries about C tol (0.24 relative on wine,
    RBF), while the static dual (11) at the final assignment meets the exact optimum there
    (the kernel path and the explicit weights' path; weighted slacks): verify's bracket."""
    X, y, _ = wine
    weights = np.random.default_rng(0).uniform(0.5, 2.0, y.size) if weighted else None
    clf = MultiPrototypeSVC(n_prototypes=2, C=1000.0, kernel=kernel, random_state=0)
    clf.fit(X, y, sample_weight=weights)
    gamma = clf._gamma if kernel == "rbf" else "scale"
    p = Problem(X, y, C=1000.0, kernel=kernel, gamma=gamma, sample_weight=weights)
    ref = FORMULATIONS["mprot_static"].dual(
        p, n_prototypes=2, assignment=clf.assignment_ - p.y_index * 2
    )
    assert clf.objective_ - ref.objective > 1e-2 * ref.objective  # the primal is far off
    assert clf.dual_objective_ <= ref.objective * (1 + 1e-9)
    assert clf.dual_objective_ == pytest.approx(ref.objective, rel=1e-5)
    assert clf.relative_gap_ == pytest.approx(
        (clf.objective_ - clf.dual_objective_) / clf.objective_
    )


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_explicit_weights_static_step_equals_the_reference_dual(kernel):
    """A linear kernel (``linear``, or the paper's gamma <x, y> + coef0) runs on explicit weights:
    the same optimum of MProt (11) as the exact dual, and as the kernel path on its Gram matrix
    given as a precomputed kernel.  Wine at C = 0.1: a quarter of the patterns at their budget."""
    X, y = datasets.load("wine")
    params = dict(kernel=kernel, gamma=0.5, degree=1, coef0=2.0)
    p = Problem(X, y, C=0.1, **params)
    q, fit = 2, dict(C=0.1, n_assignment_steps=0, tol=1e-6, max_iter=-1, random_state=3)
    weights = MultiPrototypeSVC(n_prototypes=q, **params, **fit).fit(X, y)
    assert weights._weights_path
    assignment = weights.assignment_ - p.y_index * q
    ref = FORMULATIONS["mprot_static"].dual(p, n_prototypes=q, assignment=assignment)
    assert weights.objective_ == pytest.approx(ref.objective, rel=1e-4)
    at_budget = ref.dual_coef.sum(axis=1) >= 0.1 * (1 - 1e-4)
    assert 0.1 < at_budget.mean() < 0.9  # not a trivial optimum: margins violated, not all
    kernels = MultiPrototypeSVC(n_prototypes=q, kernel="precomputed", **fit).fit(p.K, y)
    assert not kernels._weights_path
    np.testing.assert_array_equal(kernels.assignment_, weights.assignment_)
    assert weights.objective_ == pytest.approx(kernels.objective_, rel=1e-6)
    np.testing.assert_allclose(
        weights.decision_function(X), kernels.decision_function(p.K), rtol=1e-4, atol=1e-4
    )


def test_explicit_weights_anneal_as_the_kernel_path():
    """Annealing on explicit weights reaches assignments as good as on kernel columns (the two
    paths stop their partial static steps at different points, so the runs differ): digits,
    q = 3, eight seeds each, medians of the final primal within 5 %."""
    X, y = datasets.load("digits", n_samples=600)
    K = X @ X.T + 1.0  # the default kernel <x, y> + 1, as a Gram matrix: the kernel path
    final = {}
    for name, data, kernel in [("weights", X, "poly"), ("kernels", K, "precomputed")]:
        fits = [
            MultiPrototypeSVC(n_prototypes=3, kernel=kernel, random_state=s).fit(data, y)
            for s in range(8)
        ]
        assert all(f._weights_path == (kernel == "poly") for f in fits)
        final[name] = np.median([f.objective_ for f in fits])
    assert final["weights"] == pytest.approx(final["kernels"], rel=0.05)


def test_final_static_step_restarts_with_the_proximal_method(monkeypatch):
    """Where the proximal method starts a cold run (``ssnal.min_rows`` lowered to reach it on
    wine), the final static step starts from alpha = 0 with it (greedy assignments: the last is
    the best, so no restore of a best one empties alpha first), and only that step (the partial
    steps, which a primal test ends, never run it): the same assignments as without it, and the
    static optimum of MProt (11) at the final one."""
    X, y = datasets.load("wine")
    params = dict(n_prototypes=2, C=0.1, assignment="greedy", tol=1e-6, random_state=0)
    plain = MultiPrototypeSVC(**params).fit(X, y)
    calls = []
    method = engine.DecompositionSolver._proximal_method
    monkeypatch.setattr(ssnal, "MIN_ROWS", 0)
    monkeypatch.setattr(
        engine.DecompositionSolver,
        "_proximal_method",
        lambda self, *args: calls.append(self.stop) or method(self, *args),
    )
    restarted = MultiPrototypeSVC(**params).fit(X, y)
    assert calls == [None]  # once, in the final step
    np.testing.assert_array_equal(restarted.assignment_, plain.assignment_)
    p = Problem(X, y, C=0.1, kernel="poly", gamma=1.0, degree=1, coef0=1.0)
    within = restarted.assignment_ - p.y_index * 2
    ref = FORMULATIONS["mprot_static"].dual(p, n_prototypes=2, assignment=within)
    assert restarted.objective_ == pytest.approx(ref.objective, rel=1e-5)
    assert plain.objective_ == pytest.approx(ref.objective, rel=1e-5)


def test_primal_terms_in_one_pass_equal_the_definitions():
    """The annealing's primal test on either path: the slacks of MProt (8) in one pass against
    ``multi_prototype_loss``, 1^T Z without Z against ``dual_vectors``."""
    rng = np.random.default_rng(0)
    N, L, q = 40, 4, 3
    proto_class, y = np.repeat(np.arange(L), q), rng.integers(0, L, N)
    target = y * q + rng.integers(0, q, N)
    F, bias = rng.normal(size=(N, L * q)), rng.normal(size=L * q)
    slacks = np.empty(N)
    prototype_slacks(F, bias, target, proto_class, y, slacks)
    assert 0 < np.count_nonzero(slacks) < N  # some margins met, some violated
    assert slacks.sum() == pytest.approx(
        multi_prototype_loss(F + bias, target, proto_class, y), rel=1e-14
    )
    alpha = rng.random((N, L * q)) * (proto_class[None, :] != y[:, None])
    Z, _ = dual_vectors(CS, alpha, target, 0.0)
    np.testing.assert_allclose(prototype_sums(alpha, target), Z.sum(axis=0), atol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("constant, rho", [(0.7, 1.2), (0.0, 0.0), (0.0, 0.4), (0.7, 1e160)])
def test_primal_on_explicit_weights_equals_the_kernel_form(sparse, constant, rho, weighted):
    """The weights path's primal in one numba pass over X's columns (``WeightsState.primal``,
    the engine's W and w0 = (c + rho) 1^T Z as ``reset`` builds them): the slacks at
    F = (X X^T + c 11^T) Z and 1/2 <Z, (X X^T + c 11^T) Z> + C sum_i s_i xi_i, from Z itself.
    (rho = 1e160: w0^2 overflows, and ||1^T Z||^2 is summed from w0 / (c + rho) instead.)"""
    rng = np.random.default_rng(1)
    N, d, L, q = 50, 6, 3, 2
    X = rng.normal(size=(N, d)) * (rng.random((N, d)) < 0.6)
    proto_class, y = np.repeat(np.arange(L), q), rng.integers(0, L, N)
    assigned, target = y * q + rng.integers(0, q, N), y * q + rng.integers(0, q, N)
    alpha = rng.random((N, L * q)) * (proto_class[None, :] != y[:, None])
    Z, _ = dual_vectors(CS, alpha, assigned, 0.0)
    bias = rng.normal(size=L * q)
    K = X @ X.T + constant
    expected = np.empty(N)
    prototype_slacks(K @ Z, bias, target, proto_class, y, expected)
    assert 0 < np.count_nonzero(expected) < N
    state = WeightsState(scipy.sparse.csr_matrix(X) if sparse else X, constant, alpha, rho)
    state.reset(assigned)
    slacks, C = np.empty(N), 0.3
    weights = rng.random(N) if weighted else None
    value = state.primal(assigned, bias, target, proto_class, y, weights, C, slacks)
    np.testing.assert_allclose(slacks, expected, rtol=1e-12, atol=1e-12)
    loss = expected @ (np.ones(N) if weights is None else weights)
    assert value == pytest.approx(0.5 * float(np.sum(Z * (K @ Z))) + C * loss, rel=1e-12)


def test_one_prototype_is_crammer_singer(wine):
    X, y, _ = wine
    params = dict(kernel="rbf", tol=1e-6, max_iter=100_000, random_state=0)
    mprot = MultiPrototypeSVC(n_prototypes=1, gamma="scale", **params).fit(X, y)
    cs = CrammerSingerSVC(**params).fit(X, y)
    assert mprot.objective_ == pytest.approx(cs.objective_, rel=1e-6)
    np.testing.assert_allclose(mprot.decision_function(X), cs.decision_function(X), atol=1e-4)


@pytest.mark.parametrize("q", [2, 4])
def test_greedy_assignment_never_increases_the_primal(q):
    X, y = datasets.load("digits", n_samples=300)
    clf = MultiPrototypeSVC(n_prototypes=q, assignment="greedy", random_state=1).fit(X, y)
    path = clf.primal_path_
    assert path.size > 2  # assignments did change
    assert np.all(np.diff(path) <= 1e-6 * path[:-1])
    assert path[-1] < path[1]


def test_annealing_improves_on_one_prototype_and_is_reproducible():
    X, y = datasets.load("digits", n_samples=400)
    Xt, yt = datasets.load("digits", n_samples=1700, random_state=1)
    one = MultiPrototypeSVC(n_prototypes=1, random_state=0).fit(X, y)
    many = MultiPrototypeSVC(n_prototypes=3, random_state=0).fit(X, y)
    again = MultiPrototypeSVC(n_prototypes=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(many.assignment_, again.assignment_)
    assert many.objective_ == pytest.approx(again.objective_)
    assert many.score(Xt, yt) >= one.score(Xt, yt) - 0.01
    # the kept model is the static optimum of the best assignment met on the way
    assert many.objective_ <= many.primal_path_[:-1].min() * (1 + 1e-9)


@parametrize_with_checks(
    [MultiPrototypeSVC(n_prototypes=2, n_assignment_steps=5, random_state=0)],
    expected_failed_checks=expected_failed_checks,
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("optimizer", ["basic", "all_pairs", "opt_kkt"])
@pytest.mark.parametrize("selection,threshold", [("kkt", "mean"), ("amg", "max"), ("bmg", "log")])
def test_papers_optimisers_reach_the_static_optimum(wine, optimizer, selection, threshold):
    """Figures 4-6 with the §5.3 pattern selections and thresholds solve MProt (11)."""
    X, y, p = wine
    q = 2
    clf = MultiPrototypeSVC(
        n_prototypes=q,
        n_assignment_steps=0,
        kernel="rbf",
        gamma="scale",
        tol=1e-5,
        max_iter=20_000,
        random_state=0,
        optimizer=optimizer,
        pattern_selection=selection,
        threshold=threshold,
    ).fit(X, y)
    assert clf.kkt_violation_ <= 1e-5
    ref = FORMULATIONS["mprot_static"].dual(
        p, n_prototypes=q, assignment=clf.assignment_ - p.y_index * q
    )
    assert clf.objective_ == pytest.approx(ref.objective, rel=1e-4)


@pytest.mark.parametrize("seed", [2, 3])
def test_greedy_path_stays_non_increasing_when_partial_steps_hit_their_limit(seed):
    """On raw wine a partial step at partial_max_iter=20 can end with the primal above E(t); a
    greedy update from there rose by 24-48 % (seeds 2, 3) before the run was made to end at such
    a step."""
    X, y = load_wine(return_X_y=True)
    clf = MultiPrototypeSVC(
        assignment="greedy", partial_max_iter=20, n_assignment_steps=30, random_state=seed
    ).fit(X, y)
    path = clf.primal_path_
    assert path.size > 2
    assert np.all(np.diff(path) <= 1e-9 * path[:-1])


def test_papers_optimiser_with_greedy_assignments_never_increases_the_primal():
    X, y = datasets.load("digits", n_samples=300)
    clf = MultiPrototypeSVC(
        n_prototypes=3, assignment="greedy", optimizer="opt_kkt", random_state=1
    ).fit(X, y)
    path = clf.primal_path_
    assert path.size > 2
    assert np.all(np.diff(path) <= 1e-6 * path[:-1])


def test_default_runs_until_converged_on_raw_iris():
    """On raw iris with the paper's kernel <x, y> + 1 the final static problem needed about
    6 000 epochs: the default max_iter=-1 reaches tol without a warning, and so does the former
    default max_iter=1000 now that the proximal method takes over after ssnal.RESCUE_EPOCHS
    (it stopped at a KKT violation of 3e-2); a limit below that warns."""
    X, y = datasets.load("iris")
    for max_iter in (-1, 1000):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            clf = MultiPrototypeSVC(n_assignment_steps=3, max_iter=max_iter, random_state=0)
            clf.fit(X, y)
        assert clf.kkt_violation_ <= clf.tol
    with pytest.warns(ConvergenceWarning, match="max_iter=150"):
        MultiPrototypeSVC(n_assignment_steps=3, max_iter=150, random_state=0).fit(X, y)


@pytest.mark.parametrize(
    "optimizer, why", [("engine", "max_iter=30 epochs"), ("opt_kkt", "30 sweeps")]
)
def test_only_the_final_static_step_warns(optimizer, why):
    """A partial static step need not converge (Figure 11 ends it at a primal test): on raw wine
    with max_iter=30 one ended at max_iter and warned as well as the final step (two warnings
    with the engine)."""
    X, y = load_wine(return_X_y=True)
    clf = MultiPrototypeSVC(n_assignment_steps=6, max_iter=30, optimizer=optimizer, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        clf.fit(X, y)
    warned = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert [why in message for message in warned] == [True]


def test_partial_steps_with_a_bias_test_the_primal_at_their_own_bias(monkeypatch):
    """With fit_intercept a partial step is one run at bias b, then one multiplier update
    b + rho 1^T Z: the run descends the primal at the updated bias, so Figure 11's test must
    measure it there.  The test's last value, for every step that it ended, equals the primal
    computed here from the step's alpha, assignment and updated bias (kernel <x, y> + 1, MProt
    (8) by ``multi_prototype_loss``) and is below E(t).  Measured at b (the old test) iris's
    steps never met the test: 26 000-77 000 epochs each without a limit."""
    X, y = load_iris(return_X_y=True)
    C = 1.0
    stops, steps = [], []

    class Recorded(mprot.WeightsStepEnd):  # the kernel <x, y> + 1 runs on explicit weights
        def __init__(self, *args):
            super().__init__(*args)
            stops.append(self)

    def spy(run, kind, alpha, assigned, c, rho, b, tol, partial=False, messages=None):
        b = augmented_lagrangian(
            run, kind, alpha, assigned, c, rho, b, tol, partial=partial, messages=messages
        )
        if partial:
            steps.append((alpha.copy(), assigned.copy(), b.copy()))
        return b

    monkeypatch.setattr(mprot, "WeightsStepEnd", Recorded)
    monkeypatch.setattr(mprot, "augmented_lagrangian", spy)
    MultiPrototypeSVC(
        C=C, fit_intercept=True, partial_max_iter=-1, n_assignment_steps=20, random_state=0
    ).fit(X, y)
    assert len(stops) == len(steps) == 20
    K = X @ X.T + 1.0
    proto_class = np.repeat(np.arange(3), 3)
    for stop, (alpha, assigned, bias) in zip(stops, steps, strict=True):
        assert stop.calls < 1_000  # ended by the test, not by a limit (there is none)
        Z, _ = dual_vectors(CS, alpha, assigned, 0.0)
        F = K @ Z + bias
        primal = 0.5 * np.sum(Z * (K @ Z)) + C * multi_prototype_loss(F, assigned, proto_class, y)
        assert stop.last == pytest.approx(primal, rel=1e-9)
        assert stop.last < stop.energy


@pytest.mark.parametrize("optimizer, max_iter", [("engine", -1), ("opt_kkt", 200)])
def test_partial_steps_end_at_partial_max_iter(monkeypatch, optimizer, max_iter):
    """On raw wine (features from 0.1 to 1 680) the partial static steps crawl: without a limit
    some run past 40 epochs (sweeps) before Figure 11's test is met; with partial_max_iter=40
    none runs further.  Only the final static step may warn (MProt's optimiser stops it at
    max_iter=200 sweeps, to keep the test short)."""
    X, y = load_wine(return_X_y=True)
    calls = []

    def recorded(test):  # PartialStepEnd for MProt's optimiser, WeightsStepEnd for the engine
        class Recorded(test):
            def __init__(self, *args):
                super().__init__(*args)
                calls.append(self)

        return Recorded

    for name in ("PartialStepEnd", "WeightsStepEnd"):
        monkeypatch.setattr(mprot, name, recorded(getattr(mprot, name)))
    for limit in (-1, 40):
        calls.clear()
        clf = MultiPrototypeSVC(
            n_assignment_steps=6,
            partial_max_iter=limit,
            optimizer=optimizer,
            max_iter=max_iter,
            random_state=0,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.fit(X, y)
        longest = max(stop.calls for stop in calls)
        assert longest > 40 if limit == -1 else longest == 40
        assert len([w for w in caught if w.category is ConvergenceWarning]) <= 1
    assert len(calls) == 6


def test_verbose_prints_one_line_a_fit(capsys):
    """MultiPrototypeSVC has no ``solver``: its summary line read one and the fit raised
    AttributeError after it had finished (stop 53's review)."""
    X, y = datasets.load("iris", n_samples=60)
    MultiPrototypeSVC(verbose=1, n_assignment_steps=2, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "max KKT violation" in lines[0]
