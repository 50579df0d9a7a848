"""MKPMClassifier: the dynamic programme against enumeration, and the path against the reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

from msvm.core import datasets, random_code
from msvm.fast import MKPMClassifier
from msvm.fast.base import expected_failed_checks
from msvm.fast.mkpm_path import allocation_path
from msvm.reference import Problem, mkpm


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 7)),
        elements=st.floats(0, 10, allow_nan=False),
    ),
)
def test_dynamic_programme_equals_enumeration(G):
    """Proposition 1 on arbitrary G* tables, every total dimension (ties: equal risk)."""
    risk, alloc = allocation_path(np.ascontiguousarray(G))
    for d in range(G.shape[1]):
        value, _ = mkpm.brute_force(G, d)
        assert risk[d] == pytest.approx(value, abs=1e-12)
        assert alloc[d].sum() == d
        assert sum(G[l, k] for l, k in enumerate(alloc[d])) == pytest.approx(risk[d], abs=1e-12)


def assert_path_equals_reference(clf, ref, X):
    """The fast path against the enumerated one: risks, allocations, the outputs on every point
    of X for every d, and the predictions at the selected d."""
    np.testing.assert_allclose(clf.risk_table_, ref.risk_table, rtol=0, atol=1e-9)
    np.testing.assert_allclose(clf.risk_path_, ref.risk_path, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(clf.allocation_path_, ref.allocation_path)
    outputs = clf.path_outputs(X)
    for d in range(ref.risk_path.size):
        np.testing.assert_allclose(outputs[:, d, :], ref.outputs(X, d), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X, clf.selected_dimension_))


INTERCEPT = pytest.mark.parametrize("fit_intercept", [False, True], ids=["origin", "intercept"])


@pytest.fixture(scope="module", params=[False, True], ids=["origin", "intercept"])
def small(request):
    """wine-30 and its enumerated path, without or with an intercept (the reference's cvxpy
    fits over (alpha, b) in the centred basis)."""
    X, y = datasets.load("wine", n_samples=30)
    p = Problem(X, y, kernel="rbf")
    return X, y, request.param, mkpm.regularisation_path(p, 10, fit_intercept=request.param)


def test_path_equals_the_reference(small):
    """The DP on the closed forms (41)-(42) (with fit_intercept: centred, the intercept the
    column's mean) against enumeration over cvxpy's least squares."""
    X, y, fit_intercept, ref = small
    clf = MKPMClassifier(n_components=10, selection="train", fit_intercept=fit_intercept)
    assert_path_equals_reference(clf.fit(X, y), ref, X)
    assert np.all(np.diff(clf.risk_path_) <= 1e-12)  # training risk falls with d


@pytest.fixture(scope="module", params=[False, True], ids=["origin", "intercept"])
def small_weighted(request):
    """wine-30 with real weights in [0.2, 3], four of them 0, and its enumerated path (without
    or with an intercept)."""
    X, y = datasets.load("wine", n_samples=30)
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=y.size)
    w[[1, 7, 12, 20]] = 0.0
    p = Problem(X, y, kernel="rbf", sample_weight=w)
    return X, y, w, request.param, mkpm.regularisation_path(p, 10, fit_intercept=request.param)


def test_weighted_path_equals_the_weighted_reference(small_weighted):
    """The DP on the weighted kernel PCA (patterns of weight 0 left out; with fit_intercept
    centred by the weighted mean) against enumeration over cvxpy's weighted least squares in
    the reference's weighted basis (those patterns kept, with no say): risks, and the outputs
    on every training point for every d."""
    X, y, w, fit_intercept, ref = small_weighted
    clf = MKPMClassifier(n_components=10, selection="train", fit_intercept=fit_intercept)
    assert_path_equals_reference(clf.fit(X, y, sample_weight=w), ref, X)
    # the weights matter: the unweighted risks are other numbers
    plain = MKPMClassifier(n_components=10, selection="train", fit_intercept=fit_intercept)
    assert np.abs(plain.fit(X, y).risk_table_ - ref.risk_table).max() > 1e-2


def test_selected_dimension_predicts_like_the_path(small):
    X, y, fit_intercept, ref = small
    clf = MKPMClassifier(n_components=10, selection="train", fit_intercept=fit_intercept)
    d = clf.fit(X, y).selected_dimension_
    assert clf.selection_errors_[d] == clf.selection_errors_.min()
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X, d))


def test_user_code_and_nystroem():
    X, y = datasets.load("digits", n_samples=300)
    code = random_code(10, 15, random_state=0)
    clf = MKPMClassifier(code=code, selection="validation", random_state=0).fit(X, y)
    assert clf.allocation_path_.shape[1] == 15
    assert clf.score(X, y) > 0.9
    exact = MKPMClassifier(n_components=40, selection="train").fit(X, y)
    nys = MKPMClassifier(
        n_components=300, approximation="nystroem", selection="train", random_state=0
    ).fit(X, y)
    # with every point a landmark the Nystroem basis spans the same space as the exact one
    np.testing.assert_allclose(nys.risk_path_[:41], exact.risk_path_, rtol=1e-6, atol=1e-9)


@parametrize_with_checks(
    [MKPMClassifier(random_state=0), MKPMClassifier(fit_intercept=True, random_state=0)],
    expected_failed_checks=expected_failed_checks,
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)


@INTERCEPT
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("approximation", [None, "nystroem"])
def test_leave_one_out_selection_equals_refits_in_the_fixed_basis(
    approximation, weighted, fit_intercept
):
    """selection="loo" (PRESS) against N least-squares refits per column and dimension, each
    without one pattern, in the same kernel-PCA features z(x) (MKPM 33-41); weighted, weighted
    least-squares refits and the error rate sum_i s_i [wrong_i] / sum_i s_i.  The basis is fixed:
    z is the fitted basis's scores of every training input (with ``fit_intercept`` the kernel
    PCA of the features centred by the mean of every training input, the left-out one
    included); each refit is the least squares on [z_1..z_k], with ``fit_intercept`` on
    [1, z_1..z_k] (the intercept refitted, at k = 0 the mean of the others' targets)."""
    X, y = datasets.load("wine", n_samples=40)
    s = np.random.default_rng(4).uniform(0.2, 3.0, size=y.size) if weighted else np.ones(y.size)
    code = random_code(3, 5, random_state=1)
    clf = MKPMClassifier(
        n_components=12,
        code=code,
        approximation=approximation,
        fit_intercept=fit_intercept,
        random_state=0,
    )
    clf.fit(X, y, sample_weight=s if weighted else None)
    Z, y_index = clf._basis.scores(X), np.searchsorted(clf.classes_, y)
    if fit_intercept:
        Z = np.column_stack([np.ones(y.size), Z])
    first = int(fit_intercept)  # the columns of Z every fit uses (the intercept's)
    targets = code[y_index]
    root = np.sqrt(s)[:, None]
    wrong = np.zeros(clf.allocation_path_.shape[0])
    for i in range(y.size):
        rest = np.delete(np.arange(y.size), i)
        for d, alloc in enumerate(clf.allocation_path_):
            f = np.zeros(code.shape[1])
            for l, k in enumerate(alloc):
                if k + first:
                    columns = slice(0, k + first)
                    design = root[rest] * Z[rest, columns]
                    target = root[rest, 0] * targets[rest, l]
                    beta = np.linalg.lstsq(design, target, rcond=None)[0]
                    f[l] = Z[i, columns] @ beta
            wrong[d] += s[i] * (np.argmin(((f - code) ** 2).sum(axis=1)) != y_index[i])
    assert wrong.max() > wrong.min()  # the choice of d matters on this problem
    if weighted:  # sums of real weights, in another order
        np.testing.assert_allclose(clf.selection_errors_ * s.sum(), wrong, rtol=1e-12)
    else:
        np.testing.assert_array_equal(clf.selection_errors_ * y.size, wrong)


# -- fit_intercept: the kernel PCA of the centred kernel and least squares with an intercept ----


def centred_features(K, K_new, s, n):
    """The top-n kernel-PCA features of the (weighted-)centred kernel, computed independently:
    H = I - 1 s^T / sum(s) as a matrix, numpy's eigh of S^1/2 H K H^T S^1/2, the training
    features H K H^T S^1/2 A Gamma^-1/2 and the new points' (K_new - 1 s^T K / sum(s)) H^T
    S^1/2 A Gamma^-1/2 (kernel PCA's test centring, weighted)."""
    N, total = s.size, s.sum()
    H = np.eye(N) - np.outer(np.ones(N), s) / total
    centred = H @ K @ H.T
    root = np.sqrt(s)
    gamma, A = np.linalg.eigh(root[:, None] * centred * root[None, :])
    gamma, A = gamma[::-1][:n], A[:, ::-1][:, :n]
    T = root[:, None] * A / np.sqrt(gamma)
    new_centred = (K_new - np.outer(np.ones(K_new.shape[0]), s @ K / total)) @ H.T
    return centred @ T, new_centred @ T


def lstsq_with_intercept(Z, Z_new, targets, s):
    """For every code column l and k = 0..n: numpy's weighted least squares on [1, Z[:, :k]].
    Returns the risks sum_i s_i r_i^2 / sum(s) (L, n+1) and the fitted outputs on the training
    and the new points, (N, n+1, L) and (N_new, n+1, L)."""
    (N, n), L = Z.shape, targets.shape[1]
    root = np.sqrt(s)
    risk = np.empty((L, n + 1))
    train, new = np.empty((N, n + 1, L)), np.empty((Z_new.shape[0], n + 1, L))
    for l, k in itertools.product(range(L), range(n + 1)):
        design = np.column_stack([np.ones(N), Z[:, :k]])
        theta = np.linalg.lstsq(root[:, None] * design, root * targets[:, l], rcond=None)[0]
        train[:, k, l] = design @ theta
        new[:, k, l] = np.column_stack([np.ones(Z_new.shape[0]), Z_new[:, :k]]) @ theta
        risk[l, k] = s @ (train[:, k, l] - targets[:, l]) ** 2 / s.sum()
    return risk, train, new


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("approximation", [None, "nystroem"])
def test_intercept_path_equals_lstsq_on_centred_kernel_pca_features(approximation, weighted):
    """fit_intercept at every d of the path: the risk table and the outputs on training and new
    points equal numpy's least squares with an intercept column on the top-k features of the
    centred kernel (``centred_features``), k the allocation's d_l.  Nystroem (20 landmarks of
    60): the same with the Nystroem kernel K_XL K_LL^+ K_LX in place of K -- the centred
    landmark features are the Nystroem approximation of the centred kernel."""
    X, y = datasets.load("wine", n_samples=60)
    rng = np.random.default_rng(6)
    X_new = rng.normal(size=(25, X.shape[1]))
    s = rng.uniform(0.2, 3.0, size=y.size) if weighted else np.ones(y.size)
    code = random_code(3, 5, random_state=2)
    clf = MKPMClassifier(
        n_components=15,
        gamma=0.05,
        code=code,
        approximation=approximation,
        n_landmarks=20,
        selection="train",
        fit_intercept=True,
        random_state=0,
    ).fit(X, y, sample_weight=s if weighted else None)
    K, K_new = rbf_kernel(X, X, gamma=0.05), rbf_kernel(X_new, X, gamma=0.05)
    if approximation:
        landmarks = clf._basis.landmarks
        inverse = np.linalg.pinv(rbf_kernel(landmarks, landmarks, gamma=0.05), hermitian=True)
        to_landmarks = inverse @ rbf_kernel(landmarks, X, gamma=0.05)
        K = rbf_kernel(X, landmarks, gamma=0.05) @ to_landmarks
        K_new = rbf_kernel(X_new, landmarks, gamma=0.05) @ to_landmarks
    targets = code[np.searchsorted(clf.classes_, y)]
    Z, Z_new = centred_features(K, K_new, s, 15)
    risk, train, new = lstsq_with_intercept(Z, Z_new, targets, s)
    np.testing.assert_allclose(clf.risk_table_, risk, rtol=0, atol=1e-10)
    np.testing.assert_allclose(clf.intercept_, s @ targets / s.sum(), rtol=0, atol=1e-14)
    columns = np.arange(code.shape[1])
    for points, expected in ((X, train), (X_new, new)):
        outputs = clf.path_outputs(points)
        for d, alloc in enumerate(clf.allocation_path_):
            np.testing.assert_allclose(outputs[:, d], expected[:, alloc, columns], atol=1e-8)
    d = clf.selected_dimension_
    scores = -((new[:, clf.allocation_path_[d], columns][:, None, :] - code) ** 2).sum(axis=2)
    np.testing.assert_allclose(clf.decision_function(X_new), scores, rtol=0, atol=1e-8)
    # the intercept matters here: the uncentred fit without one has other risks
    plain = MKPMClassifier(n_components=15, gamma=0.05, code=code, selection="train")
    plain.fit(X, y, sample_weight=s if weighted else None)
    assert np.abs(plain.risk_table_ - clf.risk_table_).max() > 1e-2


def test_intercept_guarantees_on_shifted_data():
    """What least squares guarantees, on wine (standardised, 13 features) moved far from the
    origin, linear kernel (rank 13):

    - with fit_intercept the shift changes nothing (the centred linear kernel is translation
      invariant): risks, path, leave-one-out errors and predictions are those of the unshifted
      data; without it they change;
    - at d = 0 the risk with an intercept (the column's variance) is at most the risk without
      (the mean square);
    - with all 13 components in a column the fit with an intercept is OLS on [1, X] and the one
      without is OLS on X (numpy's lstsq), so the first is at most the second, and so is the
      risk path at d = L 13.

    Nothing is asserted in between: the two bases differ and neither risk bounds the other."""
    X, y = datasets.load("wine")
    shifted = X + 4.0
    kw = dict(kernel="linear")
    centred = MKPMClassifier(fit_intercept=True, **kw).fit(X, y)
    moved = MKPMClassifier(fit_intercept=True, **kw).fit(shifted, y)
    np.testing.assert_allclose(moved.risk_table_, centred.risk_table_, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(moved.allocation_path_, centred.allocation_path_)
    np.testing.assert_array_equal(moved.selection_errors_, centred.selection_errors_)
    np.testing.assert_array_equal(moved.predict(shifted), centred.predict(X))
    origin = MKPMClassifier(**kw).fit(shifted, y)
    assert np.abs(MKPMClassifier(**kw).fit(X, y).risk_table_ - origin.risk_table_).max() > 0.1
    assert centred.risk_table_.shape == origin.risk_table_.shape == (3, 14)
    targets = origin.code_[np.searchsorted(origin.classes_, y)]
    with_one = np.column_stack([np.ones(y.size), shifted])
    for fit, design in ((moved, with_one), (origin, shifted)):
        residual = targets - design @ np.linalg.lstsq(design, targets, rcond=None)[0]
        np.testing.assert_allclose(fit.risk_table_[:, 13], (residual**2).mean(axis=0), atol=1e-10)
    assert np.all(moved.risk_table_[:, 0] <= origin.risk_table_[:, 0])
    assert np.all(moved.risk_table_[:, 13] <= origin.risk_table_[:, 13])
    assert moved.risk_path_[39] <= origin.risk_path_[39]
    np.testing.assert_allclose(moved.risk_table_[:, 0], targets.var(axis=0), atol=1e-14)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"kernel": "linear"},
        {"kernel": "poly", "degree": 2},
        {"fit_intercept": True},
        {"approximation": "nystroem", "n_landmarks": 40},
        {"kernel": "precomputed"},
    ],  # fmt: skip
    ids=lambda o: "-".join(map(str, o.values())) or "rbf",
)
def test_csr_input_fits_as_dense(options):
    """CSR input (features, or a precomputed Gram matrix) gives the dense fit: the same path,
    selected dimension and decision values up to the kernels' rounding."""
    import scipy.sparse as sp

    X, y = datasets.load("iris")
    X = np.where(X < 1.5, 0.0, X)  # zeros for CSR to drop
    if options.get("kernel") == "precomputed":
        X = X @ X.T
    dense = MKPMClassifier(random_state=0, **options).fit(X, y)
    sparse = MKPMClassifier(random_state=0, **options).fit(sp.csr_matrix(X), y)
    assert sparse.selected_dimension_ == dense.selected_dimension_
    np.testing.assert_array_equal(sparse.selection_errors_, dense.selection_errors_)
    np.testing.assert_allclose(
        sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-8
    )


def test_default_total_dimension_grows_off_the_end_of_the_path():
    """With 30 classes of 5 points the default D = N leaves each one-vs-all column about 5
    components and the selection ends at the cap (d = 148 of 150 before D grew); D doubles
    while the selected d is in the path's last tenth, and the fit then equals the one with the
    largest meaningful D = L N: the same selection errors on the shared path, d and scores."""
    rng = np.random.RandomState(0)
    X = rng.randn(150, 5) + np.repeat(rng.randn(30, 5) * 3, 5, axis=0)
    y = np.repeat(np.arange(30), 5)
    default = MKPMClassifier(random_state=0).fit(X, y)
    widest = MKPMClassifier(random_state=0, n_components=30 * 150).fit(X, y)
    D = default.selection_errors_.size - 1
    assert 150 < D < 30 * 150 and default.selected_dimension_ < 0.9 * D
    np.testing.assert_array_equal(default.selection_errors_, widest.selection_errors_[: D + 1])
    assert default.selected_dimension_ == widest.selected_dimension_
    np.testing.assert_array_equal(default.decision_function(X), widest.decision_function(X))
    fixed = MKPMClassifier(random_state=0, n_components=150).fit(X, y)  # the old default
    assert fixed.selected_dimension_ >= 0.9 * 150
    assert default.score(X, y) > fixed.score(X, y)


def test_many_classes_of_few_points_start_with_room_for_every_column():
    """40 well-separated classes of 3 points: at D = N = 120 each one-vs-all column had 3
    components, the leave-one-out errors were flat near 1 (d = 69 of 120, mid-path, so D never
    grew) and the default fit predicted 17.5 % of new points, where SVC predicts all; D now
    starts at 32 components a code column."""
    from sklearn.svm import SVC

    rng = np.random.RandomState(0)
    centres = rng.normal(0.0, 3.0, (40, 5))
    y, y_new = np.repeat(np.arange(40), 3), np.repeat(np.arange(40), 5)
    X = centres[y] + rng.normal(0.0, 0.5, (120, 5))
    X_new = centres[y_new] + rng.normal(0.0, 0.5, (200, 5))
    default = MKPMClassifier(random_state=0).fit(X, y)
    svc = SVC().fit(X, y).score(X_new, y_new)
    assert svc > 0.95
    assert default.score(X_new, y_new) >= svc - 0.02


def test_a_grown_total_dimension_keeps_the_nystroem_basis_and_the_errors_below_it():
    """D grows on digits (1 257 points, Nystroem with 314 landmarks: d = 1 220 of 1 257 at
    D = N).  The longer path keeps the first pass's basis (its landmarks: the second pass drew
    new ones, a second kernel PCA, and gave another fit) and its leave-one-out errors below the
    old D (the second pass computed them again): the fit equals one pass at the grown D."""
    from sklearn.model_selection import train_test_split

    X, y = datasets.load("digits")
    X, _, y, _ = train_test_split(X / 16.0, y, test_size=0.3, stratify=y, random_state=0)
    default = MKPMClassifier(random_state=0).fit(X, y)
    D = default.selection_errors_.size - 1
    assert D > X.shape[0]  # D grew
    one_pass = MKPMClassifier(random_state=0, n_components=D).fit(X, y)
    np.testing.assert_array_equal(default._basis.landmarks, one_pass._basis.landmarks)
    np.testing.assert_array_equal(default.selection_errors_, one_pass.selection_errors_)
    np.testing.assert_array_equal(default.decision_function(X), one_pass.decision_function(X))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_leave_one_out_with_the_one_vs_all_code_is_the_largest_output(fit_intercept):
    """With the default one-vs-all code the nearest codeword is the largest output, and the
    leave-one-out errors are read without the codeword products: the same errors as the
    products give, at every d, with and without an intercept and with sample weights."""
    from sklearn.model_selection import train_test_split

    X, y = datasets.load("digits")
    X, _, y, _ = train_test_split(X / 16.0, y, train_size=600, stratify=y, random_state=0)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    for sample_weight in (None, weights):
        model = MKPMClassifier(random_state=0, fit_intercept=fit_intercept)
        model.fit(X, y, sample_weight=sample_weight)
        y_index = np.searchsorted(model.classes_, y)
        largest = model._loo_errors(y_index, model.code_, sample_weight)
        products = model._loo_errors(y_index, model.code_, sample_weight, ova=False)
        np.testing.assert_array_equal(largest, products)
        np.testing.assert_array_equal(largest, model.selection_errors_)
