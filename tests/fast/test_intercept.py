"""``fit_intercept`` on every machine: against SVC, against the reference's biased formulations,
and the properties a bias must have (issue 19).

The agreement of every biased machine's objective with the reference layer, weighted and not, is
in test_agreement.py and test_weights.py; this file checks the bias itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    intercept,
)
from msvm.fast.intercept import _cosine, augmented_lagrangian
from msvm.fast.patterns import SIGN, dual_vectors
from msvm.reference import FORMULATIONS, Problem

# estimator, reference formulation, options; every machine with an engine path
MACHINES = {
    "inhibitory": (InhibitorySVC, "inhibitory", {}),
    "inhibitory-mu0.2": (InhibitorySVC, "inhibitory", {"mu": 0.2}),
    "one_vs_all": (OneVsAllSVC, "one_vs_all", {}),
    "weston_watkins": (WestonWatkinsSVC, "weston_watkins", {}),
    "crammer_singer": (CrammerSingerSVC, "crammer_singer", {}),
    "lee_lin_wahba": (LeeLinWahbaSVC, "lee_lin_wahba", {}),
    "simplex_hinge": (SimplexSVC, "simplex_hinge", {}),
}
# outputs that sum to zero over the classes keep a bias that sums to zero
SUM_TO_ZERO = {"inhibitory", "lee_lin_wahba", "simplex_hinge"}


@pytest.fixture(scope="module")
def wine():
    return datasets.load("wine", n_samples=60)


@pytest.mark.parametrize(
    "data, kernel, C",
    [
        *[("wine", kernel, C) for kernel in ("linear", "rbf") for C in (0.1, 1.0, 10.0)],
        ("iris", "rbf", 0.1),  # virginica's SVM has no free variable: the bias is not unique
        ("iris", "rbf", 0.01),
    ],
)
def test_one_vs_all_with_a_bias_is_svc_per_class(data, kernel, C):
    """Each class of OneVsAllSVC(fit_intercept=True) is libsvm's binary SVC of that class
    against the rest: the same decision values and intercepts, also where a class's bias is not
    unique and libsvm takes the middle of the optimal interval.  (The wine data come
    standardised; on raw iris with the linear kernel libsvm's bias is 2e-4 off the optimum
    at tol 1e-12, whose primal value ours, and the reference layer's bias, attain.)"""
    X, y = datasets.load(data, n_samples=90)
    clf = OneVsAllSVC(C=C, kernel=kernel, fit_intercept=True, tol=1e-8, random_state=0).fit(X, y)
    scores = clf.decision_function(X)
    for j, label in enumerate(clf.classes_):
        binary = SVC(C=C, kernel=kernel, gamma=clf._gamma, tol=1e-10).fit(X, y == label)
        assert clf.intercept_[j] == pytest.approx(binary.intercept_[0], abs=1e-4)
        np.testing.assert_allclose(scores[:, j], binary.decision_function(X), atol=1e-4)


@pytest.mark.parametrize("label", list(MACHINES))
def test_the_bias_is_the_references(wine, label):
    """The intercept equals the biased reference dual's multiplier, on data where it is unique
    (for the machines that compare outputs, up to the constant no constraint sees: both layers
    report the representative of mean zero)."""
    X, y = wine
    Estimator, formulation, options = MACHINES[label]
    p = Problem(X, y, C=1.0, kernel="rbf")
    ref = FORMULATIONS[formulation].dual(p, fit_intercept=True, **options)
    clf = Estimator(fit_intercept=True, tol=1e-7, max_iter=100_000, random_state=0, **options).fit(
        X, y
    )
    ours, theirs = clf.intercept_, ref.intercept
    if formulation == "simplex_hinge":  # reference: b in code space; estimator: <b, a_t>
        theirs = ref.scores(theirs[None, :])[0]
    np.testing.assert_allclose(ours, theirs, atol=2e-3)  # WW, CS: both of mean zero
    assert np.abs(theirs).max() > 0.05  # a bias that matters
    if label.split("-")[0] in SUM_TO_ZERO and "mu0.2" not in label:
        assert abs(clf.intercept_.sum()) <= 1e-10 * (1 + np.abs(clf.intercept_).max())


@pytest.mark.parametrize("label", list(MACHINES))
def test_a_bias_lowers_the_objective_and_enters_the_outputs(wine, label):
    X, y = wine
    Estimator, _, options = MACHINES[label]
    fit = dict(kernel="linear", C=1.0, tol=1e-6, max_iter=100_000, random_state=0, **options)
    biased = Estimator(fit_intercept=True, **fit).fit(X, y)
    plain = Estimator(**fit).fit(X, y)
    assert biased.objective_ < plain.objective_ * (1 - 1e-3)
    np.testing.assert_array_equal(plain.intercept_, 0.0)
    # the intercept is in the fitted outputs: decision values = kernel part + intercept_
    raw = biased.decision_function(X) - biased.intercept_
    np.testing.assert_allclose(raw, X @ biased.coef_.T, atol=1e-10)


@pytest.mark.parametrize("Estimator", [WestonWatkinsSVC, InhibitorySVC, LeeLinWahbaSVC, SimplexSVC])
def test_a_bias_that_is_not_unique_is_centred(wine, Estimator):
    """At C = 0.01 (RBF) no dual variable is strictly inside its bounds, so every bias of a
    polytope is optimal; the fit's maximises the smallest KKT slack over it (brute force: no
    point of a grid of bias changes does better)."""
    from msvm.fast.intercept import kkt_rows

    X, y = wine
    clf = Estimator(C=0.01, fit_intercept=True, tol=1e-8, random_state=0).fit(X, y)
    L, y_index = clf.classes_.size, np.searchsorted(clf.classes_, y)
    lin0, free = clf._dual_terms(y_index, L)
    hi = clf._upper_bounds(clf.C, free)
    alpha = getattr(clf, "_beta", clf.dual_coef_)  # SimplexSVC: the engine's variables
    r, D, equalities = kkt_rows(clf._kind, alpha, hi, lin0, free, clf._scores(X), y_index)
    assert equalities.shape[0] == 0  # nothing pins the bias
    assert r.min() > -1e-7  # the fitted bias is optimal ...
    # ... and no bias change orthogonal to 1 (which every machine here ignores or forbids)
    # leaves a larger smallest slack
    basis = np.linalg.svd(np.eye(L) - 1.0 / L)[0][:, : L - 1]
    steps = np.linspace(-0.05, 0.05, 41)
    best = max((r + D @ (basis @ np.array([u, v]))).min() for u in steps for v in steps)
    assert best <= r.min() + 1e-9
    assert r.min() > 1e-4  # centred: strictly inside the optimal polytope


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_squared_loss_bias_is_the_bordered_system(wine, kernel, weighted):
    """SimplexSVC(loss="squared", fit_intercept=True) against the reference's closed form and
    its cvxpy primal; ``coef_path`` gives the same fit C by C."""
    from msvm.reference.simplex_square import closed_form

    X, y = wine
    w = np.random.default_rng(2).integers(0, 3, y.size).astype(float) if weighted else None
    p = Problem(X, y, C=1.0, kernel=kernel, sample_weight=w)
    exact, primal = (
        closed_form(p, fit_intercept=True),
        FORMULATIONS["simplex_square"].primal(p, fit_intercept=True),
    )
    clf = SimplexSVC(loss="squared", kernel=kernel, fit_intercept=True).fit(X, y, w)
    assert clf.objective_ == pytest.approx(primal.objective, rel=1e-7)
    assert clf.objective_ == pytest.approx(exact.objective, rel=1e-10)
    np.testing.assert_allclose(clf.intercept_, exact.scores(exact.intercept[None, :])[0], atol=1e-9)
    np.testing.assert_allclose(clf.decision_function(X), exact.decision_function(X), atol=1e-8)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_multi_prototype_bias_reaches_the_static_reference(wine, kernel):
    """MultiPrototypeSVC(fit_intercept=True) at its final assignment is the optimum of the biased
    static problem (MProt 8 with b_r), and its biases are the reference's (both of mean zero)."""
    X, y = wine
    q = 2
    clf = MultiPrototypeSVC(
        n_prototypes=q, n_assignment_steps=5, kernel=kernel, gamma="scale", fit_intercept=True,
        tol=1e-6, random_state=0,
    ).fit(X, y)  # fmt: skip
    p = Problem(X, y, C=1.0, kernel=kernel)
    within = clf.assignment_ - y * q
    static = FORMULATIONS["mprot_static"]
    ref = static.dual(p, n_prototypes=q, assignment=within, fit_intercept=True)
    plain = static.dual(p, n_prototypes=q, assignment=within)
    assert ref.objective < plain.objective * (1 - 1e-3)  # the biases matter
    assert clf.objective_ == pytest.approx(ref.objective, rel=1e-4)
    np.testing.assert_allclose(clf.intercept_, ref.intercept, atol=5e-3)  # both of mean zero
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))


def test_a_bias_needs_the_engine(wine):
    X, y = wine
    with pytest.raises(ValueError, match="no bias"):
        InhibitorySVC(solver="smo", fit_intercept=True).fit(X, y)
    with pytest.raises(ValueError, match="fit_intercept needs optimizer='engine'"):
        MultiPrototypeSVC(optimizer="opt_kkt", fit_intercept=True).fit(X, y)


@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_a_bias_far_along_a_flat_piece_is_reached(tol):
    """At C = 0.01 every variable sits at its bound but a pattern's worth, so each multiplier
    step moves the bias by rho C and the plain augmented Lagrangian ended its 200 rounds 17 %
    above the optimum (with a ConvergenceWarning); steps along one direction now double."""
    X, y = make_classification(72, n_features=8, n_informative=5, n_classes=4,
                               n_clusters_per_class=1, random_state=0)  # fmt: skip
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    gamma = 1.0 / (X.shape[1] * X.var())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = SimplexSVC(loss="hinge", C=0.01, gamma=gamma, tol=tol, fit_intercept=True,
                         random_state=0).fit(X, y)  # fmt: skip
    p = Problem(X, y, C=0.01, kernel="rbf", gamma=gamma)
    optimum = FORMULATIONS["simplex_hinge"].dual(p, fit_intercept=True).objective
    assert clf.objective_ == pytest.approx(optimum, rel=10 * tol)


def test_rounds_that_run_out_return_the_last_runs_bias_and_one_plain_step():
    """A balance that never settles (a made-up run whose sum_i B_i is constant): after
    BIAS_ROUNDS the bias returned is the last run's plus one plain step, not a doubled one, and
    the doubling is capped."""
    alpha, y_index = np.zeros((4, 3)), np.array([0, 1, 2, 0])
    biases = []

    def run(b):
        biases.append(b.copy())
        alpha[:] = 0.0
        alpha[0, 0] = 1.0  # the same imbalance after every run

    rho, tol = 0.5, 1e-9
    with pytest.warns(ConvergenceWarning, match="did not settle"):
        b = augmented_lagrangian(run, SIGN, alpha, y_index, 0.0, rho, np.zeros(3), tol)
    _, B = dual_vectors(SIGN, alpha, y_index, 0.0)
    np.testing.assert_allclose(b, biases[-1] + rho * B.sum(axis=0))
    steps = np.abs(np.diff(np.array(biases), axis=0)).max(axis=1)
    assert steps.max() <= 2**intercept.MAX_DOUBLINGS * steps.min() * (1 + 1e-12)


@pytest.mark.parametrize("scale", [1.0, 1e-200, 1e200])
def test_the_bias_steps_alignment_is_free_of_their_scale(scale):
    """The augmented Lagrangian doubles its bias step while the steps keep their direction
    (cosine > ALIGNED); the cosine multiplied the steps' norms, which overflowed for steps
    above 1e154 (a fit on features near float64's range), and underflowed below 1e-154."""
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=5), rng.normal(size=5)
    expected = u @ v / (np.linalg.norm(u) * np.linalg.norm(v))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert _cosine(scale * u, scale * v) == pytest.approx(expected, rel=1e-14)
