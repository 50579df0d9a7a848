"""Regression tests for the defects of issue 18: bad input gets a clear error, odd input a
correct fit.  Each test names the defect it pins; the property-based campaign that found them
(and keeps looking) is ``tests/test_properties.py``."""

from __future__ import annotations

import re
import warnings
from functools import partial

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from msvm.core import datasets, validation
from msvm.core.validation import indefinite_threshold
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MKPMClassifier,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)
from msvm.fast.loo import leave_one_out_path
from msvm.reference import FORMULATIONS, Problem

BOX = [InhibitorySVC, OneVsAllSVC, WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC]
ENGINE = BOX + [MultiPrototypeSVC, SimplexSVC]


@pytest.fixture(scope="module")
def iris():
    return datasets.load("iris", n_samples=45)


@pytest.fixture(scope="module")
def read_only_gram(iris):
    X, _ = iris
    K = X @ X.T
    K.setflags(write=False)
    return K


# -- 1. a read-only (e.g. memory-mapped) Gram matrix ----------------------------------------------
@pytest.mark.parametrize("Estimator", ENGINE)
def test_a_read_only_gram_matrix_fits_like_a_writable_one(Estimator, iris, read_only_gram):
    _, y = iris
    options = dict(kernel="precomputed", random_state=0)
    model = Estimator(**options).fit(read_only_gram, y)
    writable = Estimator(**options).fit(np.array(read_only_gram), y)
    assert model.objective_ == pytest.approx(writable.objective_, rel=1e-12)
    np.testing.assert_array_equal(model.predict(read_only_gram), writable.predict(read_only_gram))


@pytest.mark.parametrize("solver", ["smo", "sgd"])
def test_the_paper_solvers_and_loo_accept_a_read_only_gram_matrix(solver, iris, read_only_gram):
    _, y = iris
    model = InhibitorySVC(kernel="precomputed", solver=solver, random_state=0)
    assert model.fit(read_only_gram, y).score(read_only_gram, y) > 0.5
    path = leave_one_out_path(InhibitorySVC(kernel="precomputed"), read_only_gram, y, [1.0])
    assert path.predictions.shape == (1, y.size)


def test_mkpm_and_the_mprot_optimisers_accept_read_only_input(iris):
    X, y = iris
    X = X.copy()
    X.setflags(write=False)
    MKPMClassifier(selection="train").fit(X, y).predict(X)
    MultiPrototypeSVC(optimizer="opt_kkt", n_prototypes=2, random_state=0).fit(X, y).predict(X)


# -- 2. Weston-Watkins's bias at small C and after a warm start -----------------------------------
@pytest.mark.parametrize("C", [1e-4, 1e-3, 1e-2])
def test_weston_watkins_bias_reaches_the_optimum_at_small_C(C):
    X, y = datasets.load("wine", n_samples=60)
    reference = FORMULATIONS["weston_watkins"].primal(Problem(X, y, C=C, kernel="rbf"), True)
    model = WestonWatkinsSVC(C=C, fit_intercept=True, tol=1e-6).fit(X, y)
    # before: +5.8 % at C = 1e-4 (the bias stopped at 0.24 of its optimum 0.49), gap -0.05
    assert model.objective_ == pytest.approx(reference.objective, rel=1e-5)
    assert model.relative_gap_ > -1e-5


def test_weston_watkins_warm_start_from_a_large_C_renews_the_bias():
    X, y = datasets.load("wine", n_samples=60)
    model = WestonWatkinsSVC(C=100.0, fit_intercept=True, tol=1e-6, warm_start=True).fit(X, y)
    model.set_params(C=1e-4).fit(X, y)
    cold = WestonWatkinsSVC(C=1e-4, fit_intercept=True, tol=1e-6).fit(X, y)
    assert model.objective_ == pytest.approx(cold.objective_, rel=1e-5)


# -- 3. the Crammer-Singer budget step with a tiny kernel diagonal --------------------------------
@pytest.mark.parametrize("Estimator", [CrammerSingerSVC, MultiPrototypeSVC])
def test_budget_step_keeps_the_budget_when_the_kernel_diagonal_is_tiny(Estimator, iris):
    X, y = iris
    scale = 1e-8  # k(x, x) ~ 1e-15: g / k ~ 1e15, whose rounding exceeded C
    small = Estimator(kernel="linear", C=1.0, random_state=0).fit(X * scale, y)
    assert small.dual_coef_.sum(axis=1).max() <= 1.0 + 1e-12
    if Estimator is CrammerSingerSVC:
        assert small.dual_objective_ <= small.objective_ + 1e-12
        reference = FORMULATIONS["crammer_singer"].dual(
            Problem(X * scale, y, C=1.0, kernel="linear")
        )
        assert small.objective_ == pytest.approx(reference.objective, rel=1e-6)


# -- 4. finite but huge values --------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", ENGINE + [MKPMClassifier])
def test_values_whose_squares_overflow_are_refused_by_name(Estimator, iris):
    X, y = iris
    X = X.copy()
    X[0, 0] = 1e300
    with pytest.raises(ValueError, match="too large for a kernel"):
        Estimator().fit(X, y)
    with pytest.raises(ValueError, match="too large for a kernel"):
        Problem(X, y, kernel="rbf")


def test_a_huge_gamma_gives_the_identity_kernel_not_nan(iris):
    X, y = iris
    # the same visiting order for both: on the same Gram matrix the fits are then identical
    model = InhibitorySVC(gamma=1e300, random_state=0).fit(X, y)
    identity = InhibitorySVC(kernel="precomputed", random_state=0).fit(np.eye(y.size), y)
    assert model.objective_ == pytest.approx(identity.objective_, rel=1e-12)
    # k(x, x') for new points is exp(-1e300 * (rounding)): 0 or 1, but finite
    assert np.all(np.isfinite(model.decision_function(X + 0.1)))


def test_gamma_scale_on_constant_features_is_one_as_in_scikit_learn():
    # X.var() of twelve equal entries 4.5e-143 rounds to 8e-317, whose reciprocal overflows;
    # the variance is exactly zero, and scikit-learn's rule then gives gamma = 1.
    X = np.full((4, 3), 4.51548044e-143)
    y = np.array([0, 1, 0, 0])
    model = OneVsAllSVC().fit(X, y)
    assert model._gamma == 1.0
    assert np.all(np.isfinite(model.decision_function(X)))


def test_a_poly_kernel_that_overflows_is_refused(iris):
    X, y = iris
    with pytest.raises(ValueError, match="poly kernel overflows"):
        InhibitorySVC(kernel="poly", degree=200, gamma=10.0).fit(X, y)


def test_overflow_inside_a_fit_or_prediction_is_a_value_error(iris):
    X, y = iris
    with warnings.catch_warnings():  # refused before the epochs: no step budget spent first
        warnings.simplefilter("error")
        for kernel, scale in (("linear", 1e150), ("poly", 1e45)):  # poly: k ~ 1e276
            with pytest.raises(ValueError, match="would overflow float64"):
                InhibitorySVC(kernel=kernel, gamma=1.0, C=1e12).fit(X * scale, y)
        with pytest.raises(ValueError, match="would overflow float64"):
            OneVsAllSVC(kernel="precomputed", C=1e12).fit(1e290 * (X @ X.T), y)
        # a large C on a kernel of ordinary size is no overflow: the check is of the product
        assert np.isfinite(OneVsAllSVC(C=1e9).fit(X, y).objective_)
        # MultiPrototypeSVC's static problems, on explicit weights and on a Gram matrix (before,
        # the linear fit annealed for 106 s through ConvergenceWarnings and scored 0.25)
        for kernel, data in (("linear", X * 1e150), ("precomputed", 1e290 * (X @ X.T))):
            with pytest.raises(ValueError, match="would overflow float64"):
                MultiPrototypeSVC(kernel=kernel, n_prototypes=2, C=1e12).fit(data, y)
    model = InhibitorySVC(kernel="poly").fit(X, y)
    with pytest.raises(ValueError, match="overflowed float64"):
        model.decision_function(X * 1e120)  # (gamma <x, x'>)^3 ~ 1e360


@pytest.mark.parametrize(
    "Estimator, column, y, params, refused",
    [
        (WestonWatkinsSVC, [0.0] + [1e107] * 3, [0, 1, 0, 0], {"fit_intercept": True}, False),
        (
            MultiPrototypeSVC,
            [2e107] * 4,
            [0, 1, 0, 0],
            {"n_prototypes": 2, "n_assignment_steps": 0},
            False,
        ),  # (both: the conjugate gradients)
        (InhibitorySVC, [1e108] * 4, [0, 1, 2, 0], {}, False),  # the face's exact direction
        (InhibitorySVC, [1e80] * 4, [0, 1, 0, 0], {}, False),  # the proximal Newton direction
        # the squared simplex loss: K ~ 1e168 of rank 1 fits through its numerical range (the
        # exact optimum, objective 300: before, B's components off it, 2C times the targets',
        # made K B overflow); at C = 1.7e308 those dual coefficients overflow themselves
        (SimplexSVC, [1e84] * 4, [0, 1, 0, 0], {"C": 100.0, "loss": "squared"}, False),
        (SimplexSVC, [1.0] * 4, [0, 1, 0, 0], {"C": 1.7e308, "loss": "squared"}, True),
    ],
)
def test_products_beyond_the_floating_range_leak_no_numpy_warnings(
    Estimator, column, y, params, refused
):
    """Linear-kernel points near 1e100 (K ~ 1e200), the extreme-value property test's cases
    shrunk: a Newton direction whose products overflow is no step, and the fit ends finite (with
    its ConvergenceWarning); the squared simplex loss's dual coefficients overflow into the
    named error.  Neither lets numpy's RuntimeWarnings out or carries NaN on."""
    options = {"kernel": "linear", "C": 1.0, "max_iter": 1000, "random_state": 0, **params}
    X = np.array(column)[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)
        if refused:
            with pytest.raises(ValueError, match="overflowed float64"):
                Estimator(**options).fit(X, np.array(y))
            return
        model = Estimator(**options).fit(X, np.array(y))
    assert np.isfinite(model.objective_)
    if Estimator is SimplexSVC:  # f = the targets' mean 1/2: C (3 (1/2)^2 + (3/2)^2)
        assert model.objective_ == pytest.approx(300.0, rel=1e-12)


@pytest.mark.parametrize("x", [3.37647193e-154, 1.886e-154])  # gamma 4.7e307, 1.5e308
def test_an_rbf_scale_gamma_near_the_largest_float_fits_as_scikit_learn_resolves_it(x):
    """X.var() ~ 2e-308 makes gamma="scale" 4.7e307 or more, whose bound 4 gamma max|x|^2
    overflowed when 4 gamma was taken first (the property campaign's case), as did the kernel's
    2 gamma above 9e307 (the review's): the exponents are ~5, and the fit and its outputs equal
    those on X * 1e150 with gamma / 1e300, the same kernel."""
    X, y = np.array([[x], [0.0], [0.0], [0.0]]), np.array([0, 1, 0, 0])
    gamma = validation.resolve_gamma("scale", X)
    assert gamma == SVC().fit(X, y)._gamma and gamma > 1e307
    tiny = WestonWatkinsSVC(random_state=0).fit(X, y)
    scaled = WestonWatkinsSVC(gamma=gamma * 1e-300, random_state=0).fit(X * 1e150, y)
    np.testing.assert_allclose(tiny.objective_, scaled.objective_, rtol=1e-12)
    np.testing.assert_allclose(tiny.decision_function(X), scaled.decision_function(X * 1e150))


@pytest.mark.parametrize("coef0", [5e-324, 1e-310])
def test_a_subnormal_coef0_on_the_weights_path_is_no_constant(coef0):
    """MultiPrototypeSVC takes poly of degree 1 on explicit weights with coef0 as the constant
    and kept 1^T Z as w0 / coef0: a subnormal coef0's reciprocal overflowed and the fit was
    refused as an overflow.  Its kernel entries are below the smallest normal float: the fit
    is coef0 = 0's."""
    X, y = np.zeros((4, 1)), np.array([0, 1, 0, 0])
    options = {"kernel": "poly", "degree": 1, "n_prototypes": 1, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = MultiPrototypeSVC(coef0=coef0, **options).fit(X, y)
    zero = MultiPrototypeSVC(coef0=0.0, **options).fit(X, y)
    assert model.objective_ == zero.objective_
    np.testing.assert_array_equal(model.predict(X), zero.predict(X))


# -- 5. parameters and matrices accepted silently -------------------------------------------------
@pytest.mark.parametrize("coef0", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("Estimator", ENGINE + [MKPMClassifier])
def test_coef0_must_be_finite(Estimator, coef0, iris):
    X, y = iris
    with pytest.raises(ValueError, match="coef0 must be a finite"):
        Estimator(kernel="poly", coef0=coef0).fit(X, y)


@pytest.mark.parametrize("Estimator", ENGINE)
def test_an_asymmetric_gram_matrix_is_refused_as_the_reference_layer_refuses_it(Estimator, iris):
    X, y = iris
    K = X @ X.T
    K[0, 1] += 1e-3
    with pytest.raises(ValueError, match="must be symmetric; K\\[0, 1\\]"):
        Estimator(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="must be symmetric"):
        Problem(K, y, kernel="precomputed")
    K[0, 1] = K[1, 0] * (1 + 1e-13)  # rounding-level asymmetry is accepted
    Estimator(kernel="precomputed").fit(K, y)


def _with_smallest_eigenvalue(K, value):
    """K with its smallest eigenvalue moved to ``value`` (exactly symmetric)."""
    s, V = np.linalg.eigh(K)
    moved = K + (value - s[0]) * np.outer(V[:, 0], V[:, 0])
    return 0.5 * (moved + moved.T)


@pytest.mark.parametrize("Estimator", ENGINE + [MKPMClassifier])
def test_an_indefinite_gram_matrix_is_refused_as_the_reference_layer_refuses_it(Estimator, iris):
    """Before: every fast estimator fitted a sigmoid-like indefinite Gram matrix silently (a
    stationary point of a non-concave dual, its duality gap meaningless); the reference layer
    refused it."""
    X, y = iris
    K = X @ X.T  # rank 4: 41 eigenvalues at rounding level, some of them negative
    indefinite = _with_smallest_eigenvalue(K, -10.0)  # 1e-5 of the largest eigenvalue is 0.027
    message = "not positive semi-definite: its smallest eigenvalue is -10,"
    with pytest.raises(ValueError, match=message):
        Estimator(kernel="precomputed").fit(indefinite, y)
    with pytest.raises(ValueError, match=message):
        Problem(indefinite, y, kernel="precomputed")
    Estimator(kernel="precomputed").fit(K, y)  # its own rounding passes, as in the reference
    Problem(K, y, kernel="precomputed")


@pytest.mark.parametrize("size", [1e307, 1e-306])
def test_the_positive_semi_definite_test_is_free_of_the_gram_matrix_scale(size, iris):
    """The test of a precomputed Gram matrix summed its rows and K + K^T unscaled: entries near
    1e307 overflowed (numpy's warnings, then scikit-learn's "Input X contains infinity" for a
    finite matrix).  It now runs on K divided by a power of 2, the same decisions at any
    scale, and the refusal gives the eigenvalue in the matrix's own units."""
    X, y = iris
    K = X @ X.T / np.abs(X @ X.T).max()
    indefinite = _with_smallest_eigenvalue(K, -0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        validation.check_kernel_psd(K * size, "precomputed", 1.0, 3, 0.0)
        with pytest.raises(
            ValueError, match=re.escape(f"smallest eigenvalue is {-0.1 * size:.6g},")
        ):
            validation.check_kernel_psd(indefinite * size, "precomputed", 1.0, 3, 0.0)


@pytest.mark.parametrize(
    "Estimator, size, params",
    [
        (CrammerSingerSVC, 1e305, {"C": 1e-300}),  # an exactly singular Newton system (LU)
        (OneVsAllSVC, 1e307, {"fit_intercept": True}),  # the bias penalty's mean diagonal
        (CrammerSingerSVC, 1e307, {"C": 1e-300}),  # the face step's curvature
        (SimplexSVC, 1.7e308, {"loss": "squared"}),  # K + K^T
    ],
)
def test_gram_matrices_near_the_largest_float_warn_only_by_convergence(Estimator, size, params):
    """The review's sweep of precomputed Gram matrices near 1e305-1.7e308: each of these fits
    let a numpy overflow warning or scipy's LinAlgWarning (a singular LU, which errstate does
    not cover) out before its fit or its named refusal; now they fit (these fits are garbage,
    and their ConvergenceWarning says so) or raise the overflow ValueError, and nothing else."""
    X, y = datasets.load("iris", n_samples=60)
    K = X @ X.T / np.abs(X @ X.T).max() * size
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)  # (LinAlgWarning is one)
        try:
            Estimator(kernel="precomputed", max_iter=2000, random_state=0, **params).fit(K, y)
        except ValueError as error:
            assert "overflow" in str(error)


def test_the_indefinite_threshold_is_the_reference_layers_but_for_a_norm_bound(iris):
    """The fast layer's Cholesky test shifts by 1e-5 ||K||_inf where the reference layer's
    threshold is 1e-5 ||K||_2: below the threshold both accept, beyond ||K||_inf / ||K||_2 times
    it both refuse, and in between only the reference layer refuses."""
    X, y = iris
    K = X @ X.T
    s = np.linalg.eigvalsh(K)
    threshold = indefinite_threshold(s)
    band = np.abs(K).sum(axis=1).max() / s[-1]  # 1.38 here
    for depth, fast_refuses, reference_refuses in (
        (0.5, False, False),
        (0.5 * (1 + band), False, True),
        (1.5 * band, True, True),
    ):
        shifted = _with_smallest_eigenvalue(K, -depth * threshold)
        for fit, refuses in (
            (WestonWatkinsSVC(kernel="precomputed").fit, fast_refuses),
            (partial(Problem, kernel="precomputed"), reference_refuses),
        ):
            if refuses:
                with pytest.raises(ValueError, match="not positive semi-definite"):
                    fit(shifted, y)
            else:
                fit(shifted, y)


@pytest.mark.parametrize("Estimator", ENGINE)
def test_a_gram_matrix_that_rounding_makes_slightly_indefinite_fits(Estimator):
    """scikit-learn's RBF Gram matrix of features near 100 is accurate to about 1e-12: smallest
    eigenvalue -3e-12, largest 30.  A bar at the rounding of exact entries refused it."""
    rng = np.random.RandomState(0)
    X = rng.normal(loc=100.0, size=(80, 2))
    y = rng.randint(0, 3, 80)
    K = rbf_kernel(X, gamma=0.5)
    assert np.linalg.eigvalsh(K)[0] < -2 * 80 * np.finfo(float).eps * 29.0
    model = Estimator(kernel="precomputed", random_state=0).fit(K, y)  # (was refused)
    if isinstance(model, MultiPrototypeSVC):
        return  # a local optimum: its dual bounds the static problem at its own assignment only
    features = Estimator(gamma=0.5, random_state=0).fit(X, y)
    # the same problem (the kernels agree to 1e-12): each fit's primal bounds the other's dual
    slack = 1e-9 * abs(features.objective_)
    assert model.objective_ >= features.dual_objective_ - slack
    assert features.objective_ >= model.dual_objective_ - slack


@pytest.mark.parametrize("Estimator", ENGINE + [MKPMClassifier])
def test_a_poly_kernel_with_negative_coef0_is_checked_on_the_data(Estimator, iris):
    X, y = iris
    with pytest.raises(ValueError, match="not positive semi-definite"):
        Estimator(kernel="poly", degree=3, coef0=-1.0).fit(X, y)
    Estimator(kernel="poly", degree=3, coef0=1.0).fit(X, y)  # PSD by construction


def test_above_the_check_size_a_principal_submatrix_is_tested(iris, monkeypatch):
    """Above PSD_CHECK_SIZE points the test factors the submatrix of that many evenly spaced
    points: its refusals are certain (interlacing), an indefinite direction outside it passes."""
    X, y = iris
    K = X @ X.T
    monkeypatch.setattr(validation, "PSD_CHECK_SIZE", 15)
    rows = np.unique(np.linspace(0, len(y) - 1, 15).round().astype(int))
    inside = np.zeros(len(y))
    inside[rows[:2]] = [1.0, -1.0]
    with pytest.raises(ValueError, match="on the principal submatrix of 15 of its 45 points"):
        OneVsAllSVC(kernel="precomputed").fit(K - np.outer(inside, inside) * 1e3, y)
    outside = np.zeros(len(y))
    outside[[1, 2]] = [1.0, -1.0]  # rows 1 and 2 are not sampled
    assert not np.isin([1, 2], rows).any()
    OneVsAllSVC(kernel="precomputed").fit(K - np.outer(outside, outside) * 1e3, y)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        Problem(K - np.outer(outside, outside) * 1e3, y, kernel="precomputed")


def test_mkpm_code_must_be_finite(iris):
    X, y = iris
    with pytest.raises(ValueError, match="code contains NaN"):
        MKPMClassifier(code=[[np.nan, 1.0], [1.0, 0.0], [0.0, 1.0]]).fit(X, y)


# -- 6. Nystroem on an all-zero landmark Gram matrix ----------------------------------------------
@pytest.mark.parametrize("approximation", [None, "nystroem"])
def test_mkpm_on_a_zero_gram_matrix_ties_every_class(approximation, iris):
    X, y = iris
    model = MKPMClassifier(kernel="linear", approximation=approximation, selection="train")
    scores = model.fit(np.zeros_like(X), y).decision_function(X)
    assert model.coef_.shape[0] == 0
    assert np.all(scores == scores[0, 0])  # every codeword equally far: a tie


# -- 7. MProt's own optimisers report when max_iter stops them ------------------------------------
@pytest.mark.parametrize("optimizer", ["basic", "all_pairs", "opt_kkt"])
def test_mprot_optimisers_warn_at_max_iter(optimizer, iris):
    X, y = iris
    options = dict(optimizer=optimizer, n_prototypes=2, C=100.0, random_state=0)
    with pytest.warns(ConvergenceWarning, match=f"'{optimizer}' optimizer stopped"):
        MultiPrototypeSVC(max_iter=2, **options).fit(X, y)
    X, y = datasets.load("wine")  # where they converge (test_mprot.py): no warning
    options.update(C=1.0, n_assignment_steps=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MultiPrototypeSVC(max_iter=20_000, **options).fit(X, y)
    assert model.kkt_violation_ <= model.tol


# -- 8. leave_one_out_path with a column-vector y -------------------------------------------------
def test_leave_one_out_path_takes_a_column_vector_y(iris):
    X, y = iris
    y = y.copy()
    y[0] = 7  # a class of one pattern: its fold refits without it
    flat = leave_one_out_path(InhibitorySVC(), X, y, [1.0])
    with pytest.warns(UserWarning, match="column-vector y"):
        column = leave_one_out_path(InhibitorySVC(), X, y[:, None], [1.0])
    np.testing.assert_array_equal(column.predictions, flat.predictions)
    assert column.accuracy(y[:, None]).shape == (1,)
    assert column.accuracy(y[:, None])[0] == flat.accuracy(y)[0]
    with pytest.raises(ValueError, match="labels"):
        flat.accuracy(y[:-1])


@pytest.mark.parametrize("Estimator", [*BOX, MultiPrototypeSVC, SimplexSVC, MKPMClassifier])
def test_a_precomputed_kernel_of_the_wrong_width_at_predict_names_the_training_points(
    Estimator, iris
):
    """scikit-learn's message spoke of "features"; a kernel for prediction has one column per
    training point (stop 50's sweep)."""
    X, y = iris
    K = rbf_kernel(X, X, gamma=0.5)
    model = Estimator(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match=r"44 columns, .* one per training point.*: 45"):
        model.predict(K[:, :-1])


@pytest.mark.parametrize("mu", [1e200, 1e74, -3e7])
def test_an_inhibition_whose_constant_drowns_the_kernel_is_refused_by_name(mu, iris):
    """mu = 1e200 was refused as an overflow "of the input" (rescale the features, lower C or
    gamma), and mu = 1e74 fitted to a KKT violation of 1e148: |c| L beyond 1 / eps leaves the
    identity part of (6.3) below rounding."""
    with pytest.raises(ValueError, match=r"mu=.* is too large: the inhibition's constant"):
        InhibitorySVC(mu=mu).fit(*iris)


def test_an_inhibition_whose_constant_stays_below_rounding_is_fitted(iris):
    """|c| L = 3.6e15 < 1 / eps at mu = 2e7: fitted, not refused.  It does not converge (to
    max_iter=-1's step budget, 30-60 s); 1 000 epochs show the refusal's bound is not met."""
    with pytest.warns(ConvergenceWarning):
        model = InhibitorySVC(mu=2e7, max_iter=1000, random_state=0).fit(*iris)
    assert model.dual_coef_.shape == (45, 3)


@pytest.mark.parametrize("Estimator", [CrammerSingerSVC, WestonWatkinsSVC, OneVsAllSVC])
def test_a_fit_does_not_depend_on_the_memory_layout_of_X(Estimator, iris):
    """A Fortran-ordered X gave BLAS's kernel blocks other last bits, and Crammer-Singer another
    path (304 against 297 steps on standardised wine; stop 50's sweep)."""
    X, y = datasets.load("wine")
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    c_order = Estimator(random_state=0).fit(X, y)
    f_order = Estimator(random_state=0).fit(np.asfortranarray(X), y)
    assert c_order.n_steps_ == f_order.n_steps_
    np.testing.assert_array_equal(c_order.decision_function(X), f_order.decision_function(X))
