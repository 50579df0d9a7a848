"""Sample and class weights (issue 19): every fast estimator against independent computations.

(a) the weighted fit against the reference layer's weighted primal and dual (cvxpy, certified),
the Lecture's Max-SVM and Sum-SVM included;
(b) integer weights against duplicated samples; (c) class_weight="balanced" against the explicit
weights n / (L n_k); (d) weights of ones against no weights, bit for bit; and the validation,
zero weights on every solver path, the leave-one-out path and the warm start.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.svm import SVC

from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MKPMClassifier,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    engine,
)
from msvm.fast.loo import leave_one_out
from msvm.reference import FORMULATIONS, Problem, inhibitory
from msvm.reference.values import training_loss

# label: (estimator, its options, reference formulation, the formulation's options)
BIAS = {"fit_intercept": True}
MACHINES = {
    "inhibitory": (InhibitorySVC, {}, "inhibitory", {}),
    "one_vs_all": (OneVsAllSVC, {}, "one_vs_all", {}),
    "weston_watkins": (WestonWatkinsSVC, {}, "weston_watkins", {}),
    "weston_watkins-bias": (
        WestonWatkinsSVC,
        {"fit_intercept": True},
        "weston_watkins",
        {"fit_intercept": True},
    ),
    "lee_lin_wahba": (LeeLinWahbaSVC, {}, "lee_lin_wahba", {}),
    "crammer_singer": (CrammerSingerSVC, {}, "crammer_singer", {}),
    "simplex_hinge": (SimplexSVC, {}, "simplex_hinge", {}),
    "simplex_square": (SimplexSVC, {"loss": "squared"}, "simplex_square", {}),
    # the other machines' biases, weighted (one-vs-all's is checked against SVC elsewhere)
    "inhibitory-bias": (InhibitorySVC, BIAS, "inhibitory", BIAS),
    "lee_lin_wahba-bias": (LeeLinWahbaSVC, BIAS, "lee_lin_wahba", BIAS),
    "crammer_singer-bias": (CrammerSingerSVC, BIAS, "crammer_singer", BIAS),
    "simplex_hinge-bias": (SimplexSVC, BIAS, "simplex_hinge", BIAS),
    "simplex_square-bias": (SimplexSVC, {"loss": "squared", **BIAS}, "simplex_square", BIAS),
    # the Lecture's machines, stated weighted in their own variables (mu_i in s_i times the
    # printed set), are the Crammer-Singer and Weston-Watkins problems
    "max_svm": (CrammerSingerSVC, {}, "max_svm", {}),
    "sum_svm": (WestonWatkinsSVC, {}, "sum_svm", {}),
}
BOX = ["inhibitory", "one_vs_all", "weston_watkins", "lee_lin_wahba", "crammer_singer"]


@pytest.fixture(scope="module")
def data(weighted_iris):
    """The shared weighted iris problem (tests/conftest.py)."""
    return weighted_iris


def make(label, **kw):
    estimator, options, _, _ = MACHINES[label]
    return estimator(**{"random_state": 0, "max_iter": 100_000, **options, **kw})


@pytest.fixture(scope="module")
def references(data):
    X, y, w = data
    out = {}
    for kernel in ("linear", "rbf"):
        p = Problem(X, y, C=1.0, kernel=kernel, sample_weight=w)
        for label, (_, _, formulation, options) in MACHINES.items():
            module = FORMULATIONS[formulation]
            out[label, kernel] = (module.primal(p, **options), module.dual(p, **options))
    return out


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("label", list(MACHINES))
def test_weighted_fit_reaches_the_weighted_reference_optimum(data, references, label, kernel):
    """(a) objective_ and dual_objective_ against the reference's weighted primal and dual."""
    X, y, w = data
    primal, dual = references[label, kernel]
    assert training_loss(primal) > 1.0  # non-separable: the weighted loss terms matter
    clf = make(label, kernel=kernel, tol=1e-6).fit(X, y, sample_weight=w)
    assert clf.objective_ == pytest.approx(primal.objective, rel=1e-4)
    assert clf.dual_objective_ == pytest.approx(dual.objective, rel=1e-4)
    # the unweighted optimum is a different number: the weights did reach the solver
    plain = make(label, kernel=kernel, tol=1e-6).fit(X, y)
    assert abs(plain.objective_ - primal.objective) > 1e-2 * primal.objective
    # patterns of weight 0 are no support vectors; n_support_ counts the rest per class
    assert not np.any(np.isin(clf.support_, np.flatnonzero(w == 0)))
    np.testing.assert_array_equal(clf.n_support_, np.bincount(y[clf.support_], minlength=3))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_weighted_multi_prototype_fit_reaches_the_static_reference(data, kernel):
    """(a) for MProt: the final static problem (8)/(11) at the fitted assignment."""
    X, y, w = data
    q = 2
    clf = MultiPrototypeSVC(
        n_prototypes=q, n_assignment_steps=3, kernel=kernel, gamma="scale", tol=1e-6,
        max_iter=100_000, random_state=0,
    )  # fmt: skip
    clf.fit(X, y, sample_weight=w)
    p = Problem(X, y, C=1.0, kernel=kernel, sample_weight=w)
    within = clf.assignment_ - y * q
    primal = FORMULATIONS["mprot_static"].primal(p, n_prototypes=q, assignment=within)
    dual = FORMULATIONS["mprot_static"].dual(p, n_prototypes=q, assignment=within)
    assert training_loss(primal) > 1.0
    assert clf.objective_ == pytest.approx(primal.objective, rel=1e-4)
    assert dual.objective == pytest.approx(primal.objective, rel=1e-6)
    assert not np.any(np.isin(clf.support_, np.flatnonzero(w == 0)))


LABELS_B = [*BOX, "weston_watkins-bias", "simplex_hinge", "simplex_square"]


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("label", LABELS_B)
def test_integer_weights_equal_duplicated_samples(data, label, kernel):
    """(b) weight k = the pattern k times (0: left out); gamma fixed (scale would see the
    duplicates)."""
    X, y, w = data
    counts = w.astype(int)
    weighted = make(label, kernel=kernel, gamma=0.5, tol=1e-8).fit(X, y, sample_weight=w)
    repeated = make(label, kernel=kernel, gamma=0.5, tol=1e-8).fit(
        np.repeat(X, counts, axis=0), np.repeat(y, counts)
    )
    assert weighted.objective_ == pytest.approx(repeated.objective_, rel=1e-6)
    grid = np.random.default_rng(2).uniform(X.min(0), X.max(0), size=(50, 2))
    np.testing.assert_allclose(
        weighted.decision_function(grid), repeated.decision_function(grid), rtol=0, atol=1e-5
    )


def test_integer_weights_equal_duplicates_for_multi_prototypes(data):
    X, y, w = data
    counts = w.astype(int)
    kw = dict(n_prototypes=1, n_assignment_steps=0, tol=1e-8, max_iter=100_000, random_state=0)
    weighted = MultiPrototypeSVC(**kw).fit(X, y, sample_weight=w)
    repeated = MultiPrototypeSVC(**kw).fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    assert weighted.objective_ == pytest.approx(repeated.objective_, rel=1e-6)
    np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X),
                               rtol=0, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("label", LABELS_B)
def test_balanced_class_weight_equals_explicit_weights(data, label):
    """(c) class_weight="balanced" is n / (L n_k) on class k, as scikit-learn computes it; a
    dict class_weight multiplies sample_weight."""
    X, y, w = data
    X, y = X[:30], y[:30]  # unequal classes
    counts = np.bincount(y)
    assert np.ptp(counts) > 0
    explicit = y.size / (3 * counts[y])
    a = make(label, tol=1e-8, class_weight="balanced").fit(X, y)
    b = make(label, tol=1e-8).fit(X, y, sample_weight=explicit)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-10)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-9,
                               atol=1e-12)  # fmt: skip
    cw = {0: 2.0, 2: 0.5}
    c = make(label, tol=1e-8, class_weight=cw).fit(X, y, sample_weight=w[:30])
    d = make(label, tol=1e-8).fit(X, y, sample_weight=w[:30] * np.array([2.0, 1.0, 0.5])[y])
    assert c.objective_ == pytest.approx(d.objective_, rel=1e-10)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("label", LABELS_B)
def test_weights_of_ones_are_no_weights_bit_for_bit(data, label, kernel):
    """(d) sample_weight=ones and class_weight={k: 1} run exactly the unweighted fit."""
    X, y, _ = data
    plain = make(label, kernel=kernel).fit(X, y)
    for clf in (
        make(label, kernel=kernel).fit(X, y, sample_weight=np.ones(y.size)),
        make(label, kernel=kernel, class_weight={0: 1.0, 1: 1.0, 2: 1.0}).fit(X, y),
    ):
        assert clf.objective_ == plain.objective_
        assert clf.dual_objective_ == plain.dual_objective_
        np.testing.assert_array_equal(clf.dual_coef_, plain.dual_coef_)
        np.testing.assert_array_equal(clf.decision_function(X), plain.decision_function(X))


def test_mprot_weights_of_ones_are_no_weights(data):
    X, y, _ = data
    kw = dict(n_prototypes=2, n_assignment_steps=3, random_state=0)
    plain = MultiPrototypeSVC(**kw).fit(X, y)
    ones = MultiPrototypeSVC(**kw).fit(X, y, sample_weight=np.ones(y.size))
    assert ones.objective_ == plain.objective_
    np.testing.assert_array_equal(ones.dual_coef_, plain.dual_coef_)


PATHS = {
    "default": {},
    "no-shrinking": {"shrinking": False},
    "greedy": {"selection": "greedy"},
    "linear": {"kernel": "linear"},
    "precomputed": {"kernel": "precomputed"},
    "smo": {"solver": "smo", "tol": 1e-5},  # not for Crammer-Singer: it has only the dcd solver
}


@pytest.mark.parametrize(
    "label, options",
    [
        pytest.param(label, options, id=f"{label}-{path}")
        for label in BOX
        for path, options in PATHS.items()
        if not (label == "crammer_singer" and "solver" in options)
    ],
)
def test_zero_weights_equal_removed_samples_on_every_path(data, label, options):
    """Patterns of weight 0 get the bound 0; on every solver path the fit is the fit without
    them (the objective; decision values to the tolerance)."""
    X, y, w = data
    keep = w > 0
    weights = keep.astype(float)
    kw = {"gamma": 0.5, "tol": 1e-8, **options}
    tol = kw["tol"]
    train, new, sub_train, sub_new = X, X, X[keep], X
    if kw.get("kernel") == "precomputed":
        K = X @ X.T
        train, new, sub_train, sub_new = K, K, K[np.ix_(keep, keep)], K[:, keep]
    full = make(label, **kw).fit(train, y, sample_weight=weights)
    sub = make(label, **kw).fit(sub_train, y[keep])
    assert full.objective_ == pytest.approx(sub.objective_, rel=1e-4 if tol > 1e-6 else 1e-6)
    if tol <= 1e-6:
        np.testing.assert_allclose(
            full.decision_function(new), sub.decision_function(sub_new), atol=1e-5
        )
    assert not np.any(np.isin(full.support_, np.flatnonzero(~keep)))


@pytest.mark.parametrize("label", ["inhibitory", "crammer_singer"])
def test_zero_weights_on_the_large_linear_paths(label, monkeypatch):
    """The explicit-weights path's proximal start (ssnal) and subsample seed with weight-0
    patterns: the fit equals the fit without them."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=6000) > 0).astype(int) + (X[:, 1] > 0.8)
    w = rng.integers(0, 3, size=6000).astype(float)
    keep = w > 0
    kw = dict(kernel="linear", tol=1e-6, C=0.1, random_state=0)
    for proximal in (True, False):
        monkeypatch.setattr(engine, "PROXIMAL_START", proximal)
        monkeypatch.setattr(engine, "SEED_MIN_ROWS", 1000)
        full = make(label, **kw).fit(X, y, sample_weight=w)
        sub = make(label, **kw).fit(X[keep], y[keep], sample_weight=w[keep])
        assert full.objective_ == pytest.approx(sub.objective_, rel=1e-5)
        assert full.dual_objective_ == pytest.approx(full.objective_, rel=1e-5)
        np.testing.assert_allclose(full.coef_, sub.coef_, atol=1e-3)


@pytest.mark.parametrize("label", ["inhibitory", "crammer_singer", "simplex_hinge"])
def test_warm_start_with_new_weights(data, label):
    """A warm start from a fit with other weights (alpha clipped to the new bounds) reaches
    the cold fit's optimum."""
    X, y, w = data
    clf = make(label, tol=1e-8, warm_start=True).fit(X, y)
    clf.fit(X, y, sample_weight=w)
    cold = make(label, tol=1e-8).fit(X, y, sample_weight=w)
    assert clf.objective_ == pytest.approx(cold.objective_, rel=1e-7)
    assert not np.any(np.isin(clf.support_, np.flatnonzero(w == 0)))


@pytest.mark.parametrize("warm_start", [True, False])
def test_leave_one_out_with_weights(data, warm_start):
    """The leave-one-out path with weights: each fold equals a fit without the pattern, with
    the others' weights; a weight-0 pattern's fold is the full fit."""
    X, y, w = data
    clf = InhibitorySVC(C=1.0, gamma=0.5, tol=1e-8, random_state=0)
    predictions, _ = leave_one_out(clf, X, y, warm_start=warm_start, sample_weight=w)
    full = InhibitorySVC(C=1.0, gamma=0.5, tol=1e-8, random_state=0).fit(X, y, sample_weight=w)
    for i in range(0, y.size, 3):
        rest = np.delete(np.arange(y.size), i)
        if w[i] == 0:
            expected = full.predict(X[i : i + 1])[0]
        else:
            fold = InhibitorySVC(C=1.0, gamma=0.5, tol=1e-8, random_state=0)
            expected = fold.fit(X[rest], y[rest], sample_weight=w[rest]).predict(X[i : i + 1])[0]
        assert predictions[i] == expected


ESTIMATORS = [
    InhibitorySVC(),
    OneVsAllSVC(),
    WestonWatkinsSVC(),
    LeeLinWahbaSVC(),
    CrammerSingerSVC(),
    SimplexSVC(),
    SimplexSVC(loss="squared"),
    MultiPrototypeSVC(n_assignment_steps=2),
    MKPMClassifier(),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_invalid_sample_weights_raise_value_errors(data, estimator):
    X, y, w = data
    cases = [
        (w[:-1], "shape"),
        (np.ones((y.size, 2)), "shape"),
        (-w, "non-negative"),
        (np.where(np.arange(y.size) == 3, np.nan, w), "NaN"),
        (np.where(np.arange(y.size) == 3, np.inf, w), "inf"),
        (np.zeros(y.size), "zero for every sample"),
        (2.0, "shape"),
    ]
    for bad, match in cases:
        with pytest.raises(ValueError, match=match):
            estimator.fit(X, y, sample_weight=bad)


def test_all_zero_class_weight_and_unknown_class_raise(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="zero for every sample"):
        InhibitorySVC(class_weight={0: 0.0, 1: 0.0, 2: 0.0}).fit(X, y)
    with pytest.raises(ValueError):
        InhibitorySVC(class_weight={7: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        InhibitorySVC(class_weight="uniform").fit(X, y)


# -- MKPM: weighted kernel PCA and weighted least squares (MKPMClassifier's docstring) --------

MKPM = dict(gamma=0.5, random_state=0)  # gamma fixed: "scale" would see duplicated rows


# a code whose columns differ up to sign (two such columns have equal risks: the dynamic
# programme's ties then go either way by rounding), one of them constant
CODE = np.array([[1, 1, 1, 1], [-1, 1, -1, 1], [1, -1, -1, 1]], dtype=float)


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["origin", "intercept"])
@pytest.mark.parametrize("code", [None, CODE], ids=["one_vs_all", "code"])
@pytest.mark.parametrize("n_components", [6, 12])
def test_mkpm_integer_weights_equal_duplicated_rows(data, n_components, code, fit_intercept):
    """(b) on the exact basis: the risk table, the whole path's outputs, the selected d (on the
    training error, which counts copies as the weights do) and the decision values; with
    fit_intercept also the intercepts (the weighted mean, the centring and the centred basis
    are those of the repeated rows)."""
    X, y, w = data
    counts = w.astype(int)
    kw = dict(
        MKPM, n_components=n_components, code=code, selection="train", fit_intercept=fit_intercept
    )
    weighted = MKPMClassifier(**kw).fit(X, y, sample_weight=w)
    repeated = MKPMClassifier(**kw).fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    np.testing.assert_allclose(weighted.risk_table_, repeated.risk_table_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(weighted.allocation_path_, repeated.allocation_path_)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=0, atol=1e-14)
    assert weighted.selected_dimension_ == repeated.selected_dimension_
    grid = np.random.default_rng(2).uniform(X.min(0), X.max(0), size=(50, 2))
    for points in (X, grid):
        np.testing.assert_allclose(
            weighted.path_outputs(points), repeated.path_outputs(points), rtol=0, atol=1e-8
        )
        np.testing.assert_allclose(
            weighted.decision_function(points),
            repeated.decision_function(points),
            rtol=0,
            atol=1e-8,
        )
        np.testing.assert_array_equal(weighted.predict(points), repeated.predict(points))
    # the weights reached the fit: the unweighted path is another one
    plain = MKPMClassifier(**kw).fit(X, y)
    assert np.abs(plain.risk_table_ - weighted.risk_table_).max() > 1e-2


MKPM_PATHS = {
    "loo": {},
    "train": {"selection": "train"},
    "cv": {"selection": "cv", "cv": 3},
    "validation": {"selection": "validation"},
    "nystroem": {"approximation": "nystroem", "n_landmarks": 20},
    "randomized": {"eigen_solver": "randomized", "max_column_dimension": 8},
    "precomputed": {"kernel": "precomputed", "selection": "train"},
    "loo-intercept": {"fit_intercept": True},
    "nystroem-intercept": {"approximation": "nystroem", "n_landmarks": 20, "fit_intercept": True},
    "precomputed-intercept": {"kernel": "precomputed", "selection": "train", "fit_intercept": True},
}


@pytest.mark.parametrize("options", list(MKPM_PATHS.values()), ids=list(MKPM_PATHS))
def test_mkpm_zero_weights_equal_removed_rows(data, options):
    """A pattern of weight 0 is left out before the fit: on every path the fit is the fit
    without it, bit for bit (the others' weights 1, 2, 3 stay)."""
    X, y, w = data
    keep = w > 0
    train, new, sub_train, sub_new = X, X, X[keep], X
    if options.get("kernel") == "precomputed":
        K = X @ X.T
        train, new, sub_train, sub_new = K, K, K[np.ix_(keep, keep)], K[:, keep]
    full = MKPMClassifier(**{**MKPM, **options}).fit(train, y, sample_weight=w)
    sub = MKPMClassifier(**{**MKPM, **options}).fit(sub_train, y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(full.risk_path_, sub.risk_path_)
    np.testing.assert_array_equal(full.selection_errors_, sub.selection_errors_)
    np.testing.assert_array_equal(full.decision_function(new), sub.decision_function(sub_new))
    by_class = [np.flatnonzero(keep & (y == label)) for label in range(3)]
    np.testing.assert_array_equal(full.support_, np.concatenate(by_class))
    np.testing.assert_array_equal(full.n_support_, np.bincount(y[keep], minlength=3))


@pytest.mark.parametrize("selection", ["loo", "train", "cv"])
def test_mkpm_weights_scaled_by_a_constant_give_the_same_fit(data, selection):
    """The weighted path is invariant to a common factor of the weights (every weighted
    quantity is normalised by sum_i s_i), and a constant weight is the unweighted fit."""
    X, y, w = data
    kw = dict(MKPM, n_components=12, selection=selection)
    a = MKPMClassifier(**kw).fit(X, y, sample_weight=w)
    b = MKPMClassifier(**kw).fit(X, y, sample_weight=0.37 * w)
    np.testing.assert_allclose(a.risk_table_, b.risk_table_, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(a.selection_errors_, b.selection_errors_, rtol=1e-12)
    assert a.selected_dimension_ == b.selected_dimension_
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-8)
    plain = MKPMClassifier(**kw).fit(X, y)
    constant = MKPMClassifier(**kw).fit(X, y, sample_weight=np.full(y.size, 0.37))
    np.testing.assert_array_equal(plain.decision_function(X), constant.decision_function(X))
    np.testing.assert_array_equal(plain.selection_errors_, constant.selection_errors_)


def test_paper_optimizers_refuse_weights(data):
    X, y, w = data
    with pytest.raises(ValueError, match="optimizer='engine'"):
        MultiPrototypeSVC(optimizer="basic").fit(X, y, sample_weight=w)


def test_common_mode_free_refuses_weights(data):
    X, y, w = data
    with pytest.raises(ValueError, match="not stated with sample weights"):
        inhibitory.common_mode_free(Problem(X, y, sample_weight=w))


@pytest.mark.parametrize("estimator", ESTIMATORS[:-1], ids=lambda e: type(e).__name__)
def test_n_support_counts_support_patterns_per_class(data, estimator):
    X, y, _ = data
    clf = estimator.fit(X, y)
    assert clf.n_support_.dtype == np.int32
    np.testing.assert_array_equal(clf.n_support_, np.bincount(y[clf.support_], minlength=3))
    assert clf.n_support_.sum() == clf.support_.size


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_support_is_grouped_by_class_as_in_svc(data, estimator):
    """support_ (and support_vectors_) in class blocks of sizes n_support_, by index within a
    block, as SVC orders them: slicing by cumsum(n_support_) gives each class's patterns.  The
    data's rows are not sorted by class.  (MKPM: every pattern of positive weight.)"""
    X, y, _ = data
    assert np.any(np.diff(y) < 0)
    clf = clone(estimator).fit(X, y)
    blocks = np.split(clf.support_, np.cumsum(clf.n_support_)[:-1])
    for label, block in enumerate(blocks):
        assert np.all(y[block] == label)
        assert np.all(np.diff(block) > 0)
    if hasattr(clf, "support_vectors_"):
        np.testing.assert_array_equal(clf.support_vectors_, X[clf.support_])
    svc = SVC(kernel="linear").fit(X, y)  # the convention followed
    for label, block in enumerate(np.split(svc.support_, np.cumsum(svc.n_support_)[:-1])):
        assert np.all(y[block] == label)


@pytest.mark.parametrize(
    "estimator, class_weight",
    [
        (estimator, class_weight)
        for estimator in ESTIMATORS
        for class_weight in [None, {0: 2.0, 2: 0.5}, "balanced"]
        if class_weight is None or "class_weight" in estimator.get_params()  # (not MKPM)
    ],
    ids=str,
)
def test_class_weight_and_shape_fit_are_svcs(data, estimator, class_weight):
    """SVC's fitted ``class_weight_`` (ones without class_weight), ``shape_fit_`` and
    ``fit_status_`` (0: these fits converge; test_until_converged has 1), for code
    written against SVC; MKPM, which has no class_weight, has no ``class_weight_``."""
    X, y, _ = data
    X, y = X[:-7], y[:-7]  # unequal classes, so that "balanced" is not all ones
    has_weights = "class_weight" in estimator.get_params()
    options = {"class_weight": class_weight} if has_weights else {}
    clf = clone(estimator).set_params(**options).fit(X, y)
    svc = SVC(class_weight=class_weight).fit(X, y)
    assert clf.shape_fit_ == svc.shape_fit_ == X.shape
    assert clf.fit_status_ == svc.fit_status_ == 0
    if has_weights:
        np.testing.assert_allclose(clf.class_weight_, svc.class_weight_, rtol=1e-15)
    else:
        assert not hasattr(clf, "class_weight_")
    if class_weight is None:
        gram = clone(estimator).set_params(kernel="precomputed").fit(X @ X.T, y)
        assert gram.shape_fit_ == (y.size, y.size)
