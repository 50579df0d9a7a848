"""SimplexSVC against the reference layer's simplex_hinge and simplex_square."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from msvm.core import datasets
from msvm.fast import SimplexSVC
from msvm.fast.base import expected_failed_checks
from msvm.reference import FORMULATIONS


@pytest.mark.parametrize("loss", ["hinge", "squared"])
def test_simplex_estimators_match_the_reference(problem, held_out, loss):
    name, p, X, y = problem
    ref = FORMULATIONS[f"simplex_{'square' if loss == 'squared' else loss}"].dual(p)
    clf = SimplexSVC(
        loss=loss, C=p.C, kernel=p.kernel, tol=1e-6, max_iter=100_000, random_state=0
    ).fit(X, y)
    assert clf.objective_ == pytest.approx(ref.objective, rel=1e-4)
    assert clf.dual_objective_ <= ref.objective * (1 + 1e-9)
    Xt = held_out[name]
    scale = 1 + np.abs(ref.decision_function(Xt)).max()
    np.testing.assert_allclose(
        clf.decision_function(Xt), ref.decision_function(Xt), atol=1e-2 * scale
    )
    if loss == "hinge":
        np.testing.assert_allclose(clf.dual_coef_, ref.dual_coef, atol=1e-3 * p.C)


def test_squared_loss_prints_its_summary_line_with_verbose(capsys):
    """verbose=1 printed nothing for the squared loss (the closed form skips the engine that
    prints the hinge loss's line)."""
    X, y = datasets.load("iris", n_samples=60)
    SimplexSVC(loss="squared", verbose=0).fit(X, y)
    assert capsys.readouterr().out == ""
    model = SimplexSVC(loss="squared", verbose=1).fit(X, y)
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("SimplexSVC(loss='squared'): 60 patterns, 3 classes, closed form")
    assert f"primal {model.objective_:.6g}" in line


def test_squared_loss_path_from_one_eigendecomposition():
    X, y = datasets.load("wine")
    Cs = [0.01, 0.1, 1.0, 10.0]
    path = SimplexSVC(loss="squared").fit(X, y).coef_path(Cs)
    for C, B in zip(Cs, path, strict=True):
        single = SimplexSVC(loss="squared", C=C).fit(X, y)
        np.testing.assert_allclose(B, single.dual_coef_, atol=1e-10)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("C", [2e-309, 1e-310, 5e-324])
def test_squared_loss_where_one_over_2_c_s_overflows_is_its_limit(C, weighted):
    """G = K + diag(1 / (2 C s_i)), solved as T^-1/2 (T^1/2 K T^1/2 + c I) T^-1/2 with
    t = s / max s and c = 1 / (2 C max s): no ridge overflows; where c does, B = 0 and the bias
    is the limit of the bordered system's, the weighted mean of the targets.  Before, scipy
    refused the weighted solve with its own message ("array must not contain infs or NaNs") and
    the unweighted fit with a bias was refused as an overflow (0 / 0); with only the solve's
    patterns in the bias, C = 2e-309 (some ridges overflow, weights 0.5-2) gave a bias 235 %
    off that flipped every prediction (the review's case).  The limit is continuous: C = 1e-250,
    solved as every C, gives the same bias to rounding."""
    X, y = datasets.load("wine")
    weights = np.linspace(0.5, 2.0, y.size) if weighted else None
    if weighted:
        weights[::7] = 0.0  # (patterns of zero weight take no part)
    options = dict(loss="squared", fit_intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        tiny = SimplexSVC(C=C, **options).fit(X, y, sample_weight=weights)
    small = SimplexSVC(C=1e-250, **options).fit(X, y, sample_weight=weights)
    assert np.abs(tiny.code_coef_).max(initial=0.0) < 1e-300
    assert 0 < np.abs(small.code_coef_).max() < 1e-240
    np.testing.assert_allclose(tiny.intercept_, small.intercept_, rtol=1e-12, atol=1e-15)
    assert np.abs(tiny.intercept_).max() > 0.01  # (wine's classes are not balanced)


def _exact_bordered(K, Y, C, w):
    """B and b of the bordered system [[K + diag(1 / (2 C w)), 1], [1^T, 0]] [B; b^T] = [Y; 0]
    in exact rational arithmetic (Gauss-Jordan on Fractions of the floats), as floats."""
    from fractions import Fraction

    n, m = Y.shape
    rows = []
    for i in range(n):
        row = [Fraction(float(K[i, j])) for j in range(n)] + [Fraction(1)]
        row[i] += 1 / (2 * Fraction(C) * Fraction(float(w[i])))
        rows.append(row + [Fraction(float(v)) for v in Y[i]])
    rows.append([Fraction(1)] * n + [Fraction(0)] * (1 + m))
    solution = _gauss_jordan(rows)
    return solution[:n], solution[n]


def _gauss_jordan(rows, exact=False):
    """The solution of the square system whose augmented rows of Fractions are ``rows``
    (reduced in place, pivoting on the first non-zero entry), as floats (as Fractions with
    ``exact``)."""
    n = len(rows)
    for col in range(n):
        pivot = next(r for r in range(col, n) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        rows[col] = [v / rows[col][col] for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                f = rows[r][col]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[col], strict=True)]
    if exact:
        return [row[n:] for row in rows]
    return np.array([[float(v) for v in row[n:]] for row in rows])


@pytest.mark.parametrize("decades, rtol", [(0, 1e-11), (4, 1e-8), (8, 1e-5)])
def test_weighted_squared_loss_is_the_exact_bordered_solution(decades, rtol):
    """Sample weights spanning 2 x ``decades`` decades (iris, 24 points, linear kernel, C = 1):
    B and b as the bordered system's exact rational solution, to the accuracy its condition
    (up to 1e10 for the scaled system) allows."""
    from msvm.core.coding import simplex_code

    X, y = datasets.load("iris", n_samples=24)
    w = np.random.default_rng(decades).permutation(np.logspace(-decades, decades, y.size))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = SimplexSVC(C=1.0, kernel="linear", loss="squared", fit_intercept=True)
        clf.fit(X, y, sample_weight=w)
    B, b = _exact_bordered(X @ X.T, simplex_code(3)[y], 1.0, w)
    np.testing.assert_allclose(clf.dual_coef_, B, rtol=0, atol=rtol * np.abs(B).max())
    np.testing.assert_allclose(clf.intercept_, b @ simplex_code(3).T, rtol=0, atol=rtol)


@pytest.mark.parametrize("n, decades", [(24, 20), (60, 20), (60, 100)])
def test_weighted_squared_loss_with_weights_spanning_hundreds_of_decades(n, decades):
    """Weights spanning 2 x ``decades`` decades (iris, linear kernel, C = 1, a bias): the
    outputs and the objective as the weighted primal's normal equations solved in Fractions
    give them.  The dual's Cholesky of K + diag(1 / (2 C s_i)) warned of
    its conditioning at 40 decades on 24 points (B 2e-2 off) and refused 60 points as
    indefinite to rounding; the row-sorted least squares are accurate there."""
    from msvm.core.coding import simplex_code

    X, y = datasets.load("iris", n_samples=n)
    w = np.random.default_rng(decades).permutation(np.logspace(-decades, decades, y.size))
    code = simplex_code(3)
    F, objective = _ridge_scores(X, code[y], 1.0, True, w)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = SimplexSVC(C=1.0, kernel="linear", loss="squared", fit_intercept=True)
        clf.fit(X, y, sample_weight=w)
    # (the one warning allowed: dual_coef_'s part off the kernel's range, 2C s_i times
    # residuals that round by eps, is not accurate with such weights on a rank-4 kernel)
    assert all("dual_coef_ may be inaccurate" in str(w.message) for w in caught)
    np.testing.assert_allclose(clf.decision_function(X), F @ code.T, rtol=0, atol=1e-10)
    assert clf.objective_ == pytest.approx(objective, rel=1e-9)


@pytest.mark.parametrize("C", [1.0, 1e12])
@pytest.mark.parametrize("spread", ["20 decades", "one of 1e100"])
def test_weighted_squared_loss_dual_coef_on_a_full_rank_kernel(spread, C):
    """On a full-rank kernel (15 wine points, RBF) B lies on the range and is taken from its
    coordinates there, not as 2C s_i (Y_i - F_i), whose heavy patterns' residuals cancel: a
    first version of the least squares gave B 2e6 times off (20 decades, C = 1e12) and 4e84
    (a weight of 1e100), and objective_ 1e51 times the optimum (the review of stop 62).
    Against the bordered system's exact rational solution; no warning."""
    from sklearn.datasets import load_wine

    from msvm.core.coding import simplex_code
    from msvm.core.kernels import kernel_matrix

    X, y = load_wine(return_X_y=True)
    X = ((X - X.mean(axis=0)) / X.std(axis=0))[::12]
    y = y[::12]
    K = kernel_matrix(X, X, "rbf", 0.1, 3, 0.0)
    if spread == "20 decades":
        w = np.random.default_rng(1).permutation(np.logspace(-10, 10, y.size))
    else:
        w = np.r_[1e100, np.ones(y.size - 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = SimplexSVC(C=C, kernel="precomputed", loss="squared", fit_intercept=True)
        clf.fit(K, y, sample_weight=w)
    B, b = _exact_bordered(K, simplex_code(3)[y], C, w)
    np.testing.assert_allclose(clf.dual_coef_, B, rtol=0, atol=1e-12 * np.abs(B).max())
    # the primal value at the exact optimum, its loss term through B_i = 2C s_i (Y_i - F_i)
    optimum = 0.5 * np.sum(B * (K @ B)) + np.sum(B * B / (4 * C * w[:, None]))
    assert clf.objective_ == pytest.approx(optimum, rel=1e-9)


def test_weighted_squared_loss_on_a_zero_kernel_without_a_bias():
    """A zero Gram matrix with sample weights and no bias: F = 0, B = 2C s Y; a first version of
    the least squares met numpy's "zero-size array to reduction operation" (the review)."""
    from msvm.core.coding import simplex_code

    K, y = np.zeros((6, 6)), np.array([0, 1, 2, 0, 1, 2])
    w = np.linspace(0.5, 2.0, 6)
    clf = SimplexSVC(C=2.0, kernel="precomputed", loss="squared").fit(K, y, sample_weight=w)
    np.testing.assert_allclose(clf.decision_function(K), 0.0, atol=0)
    Y = simplex_code(3)[y]
    np.testing.assert_allclose(clf.dual_coef_, 4.0 * w[:, None] * Y, rtol=1e-15)
    assert clf.objective_ == pytest.approx(2.0 * np.sum(w[:, None] * Y**2), rel=1e-15)


@parametrize_with_checks(
    [
        SimplexSVC(random_state=0),
        SimplexSVC(loss="squared"),
        SimplexSVC(loss="squared", kernel="linear", fit_intercept=True),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)


def test_a_squared_loss_fit_larger_than_cache_size_is_refused_with_what_it_needs():
    """The closed form holds the whole Gram matrix and eigendecomposes it: 60 000 points met
    numpy's MemoryError for 27 GB, or a swapping machine for hours.  Beyond cache_size it is a
    ValueError saying the size; raising cache_size allows it."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 3)), np.arange(400) % 3  # a 1.22 MB Gram matrix
    message = r"400 patterns need 1\.2 MB for it, above cache_size=1 MB"
    with pytest.raises(ValueError, match=message):
        SimplexSVC(loss="squared", cache_size=1).fit(X, y)
    model = SimplexSVC(loss="squared", cache_size=2).fit(X, y)
    assert model.objective_ == pytest.approx(SimplexSVC(loss="squared").fit(X, y).objective_)


def test_the_squared_loss_with_the_linear_kernel_has_coef_as_the_hinge_loss_does():
    """coef_ was only on the hinge loss's linear fits (stop 50's sweep): X coef_^T + intercept_
    are the class scores; another kernel drops it."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    model = SimplexSVC(kernel="linear", loss="squared").fit(X, y)
    np.testing.assert_allclose(
        X @ model.coef_.T + model.intercept_, model.decision_function(X), atol=1e-10
    )
    assert not hasattr(model.set_params(kernel="rbf").fit(X, y), "coef_")


def _ridge_scores(X, Y, C, fit_intercept, w=None):
    """The squared loss's optimum from its primal: the d (+1) normal equations of
    min 1/2 ||W||^2 + C sum_i w_i ||x_i W + b^T - Y_i||^2 (the bias unpenalised, w = 1 by
    default), solved exactly in Fractions; returns the outputs X W + 1 b^T and the objective
    (both exact, then rounded)."""
    from fractions import Fraction

    A = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    w = np.ones(X.shape[0]) if w is None else w
    d = A.shape[1]
    AF = [[Fraction(float(v)) for v in row] for row in A]
    YF = [[Fraction(float(v)) for v in row] for row in Y]
    WF = [Fraction(float(v)) for v in w]
    ridge = 1 / (2 * Fraction(C))
    rows = []
    for p in range(d):
        row = [sum((s * r[p] * r[q] for s, r in zip(WF, AF, strict=True)), Fraction(0))
               for q in range(d)]  # fmt: skip
        if not (fit_intercept and p == d - 1):
            row[p] += ridge
        row += [sum((s * r[p] * t[k] for s, r, t in zip(WF, AF, YF, strict=True)), Fraction(0))
                for k in range(Y.shape[1])]  # fmt: skip
        rows.append(row)
    W = _gauss_jordan(rows, exact=True)
    FF = [[sum((r[p] * W[p][k] for p in range(d)), Fraction(0)) for k in range(Y.shape[1])]
          for r in AF]  # fmt: skip
    penalty = sum((v * v for row in W[: d - 1 if fit_intercept else d] for v in row), Fraction(0))
    loss = sum(
        (
            s * (f - t) ** 2
            for s, fr, tr in zip(WF, FF, YF, strict=True)
            for f, t in zip(fr, tr, strict=True)
        ),
        Fraction(0),
    )
    F = np.array([[float(v) for v in row] for row in FF])
    return F, float(penalty / 2 + Fraction(C) * loss)


def _quadratic_features(X):
    """phi(x) with phi(x) . phi(x') = (x . x' + 1)^2: the constant, sqrt(2) x_i and the
    products x_i x_j (sqrt(2) off the diagonal); 15 for 4 features."""
    d = X.shape[1]
    columns = [np.ones(X.shape[0])] + [np.sqrt(2) * X[:, i] for i in range(d)]
    columns += [X[:, i] * X[:, j] * (1.0 if i == j else np.sqrt(2))
                for i in range(d) for j in range(i, d)]  # fmt: skip
    return np.column_stack(columns)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kernel", ["linear", "poly"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("C", [1e9, 1e12, 1e15])
def test_squared_loss_at_a_large_C_on_a_rank_deficient_kernel(C, fit_intercept, kernel, weighted):
    """Iris's linear kernel has rank 4 of 150, (x . x' + 1)^2 on iris / 8 rank 15, with the
    constants in its range: the other eigenvalues are rounding (~1e-13), far above the ridge
    1 / (2C).  The fit is the exact solution for the kernel's numerical range (eigenvalues
    below N eps times the largest taken as 0), its outputs and objective as the primal's normal
    equations over the explicit features give them.  Before, the outputs were K B with B's
    components outside that range at 2C times the targets': linear 4e-3 off at C = 1e9, 2.5 at
    1e12 and 230 at 1e14, the training accuracy 33 %; quadratic with a bias 1e-4 off at 1e9,
    0.1 at 1e12; without a warning.  With sample weights (0.5 to 2) the dual's Cholesky of
    K + diag(1 / (2 C s_i)) gave linear outputs 2e-3 off at C = 1e9 (1e-6 at 1e6), silently,
    and refused C >= 1e12."""
    from sklearn.datasets import load_iris

    from msvm.core.coding import simplex_code

    X, y = load_iris(return_X_y=True)
    X = X if kernel == "linear" else X / 8.0
    features = X if kernel == "linear" else _quadratic_features(X)
    code = simplex_code(3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size) if weighted else None
    F, objective = _ridge_scores(features, code[y], C, fit_intercept, w)
    options = dict(C=C, loss="squared", fit_intercept=fit_intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = SimplexSVC(kernel=kernel, degree=2, gamma=1.0, coef0=1.0, **options)
        clf.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(clf.decision_function(X), F @ code.T, rtol=0, atol=1e-8)
    assert clf.objective_ == pytest.approx(objective, rel=1e-9)
    K = features @ features.T
    precomputed = SimplexSVC(kernel="precomputed", **options).fit(K, y, sample_weight=w)
    np.testing.assert_allclose(precomputed.decision_function(K), F @ code.T, rtol=0, atol=1e-8)


@pytest.mark.parametrize("C", [1e6, 1e15, 1e300])
@pytest.mark.parametrize("x", [1e-84, 1.0, 1e84])
def test_squared_loss_with_a_bias_on_identical_points(x, C):
    """Four identical points (K ~ 11^T, its range holding the constants) with a bias: the bias
    takes the targets' mean and the kernel part nothing, objective C sum ||Y - mean||^2 = 3 C
    (targets +1, -1, +1, +1).  The computed null space's rounding (1e-16) times 2C outweighed
    the bias equation's true part (1e-169 at x = 1e84): the objective came out 2-5 000 times the
    optimum's at x = 1e84, or overflowed."""
    X, y = np.full((4, 1), x), np.array([0, 1, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = SimplexSVC(C=C, kernel="linear", loss="squared", fit_intercept=True).fit(X, y)
    assert clf.objective_ == pytest.approx(3.0 * C, rel=1e-12)
    np.testing.assert_allclose(clf.intercept_, [0.5, -0.5], rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.decision_function(X), -1.0, rtol=0, atol=1e-12)


def test_squared_loss_bias_keeps_the_constants_part_off_a_small_range():
    """The constants are taken on the kernel's numerical range only where their part off it is
    rounding (N eps ||1||): here 19 % of 1 lies off the range of a linear kernel whose third
    eigenvalue is just above the truncation's bar.  A bar of N eps s_max / s_min (the
    Davis-Kahan angle of the computed range, near 1 here) masked that part: outputs 63 off the
    primal's at C = 1e3, the objective 785 times the optimum's (the review of stop 61)."""
    from msvm.core.coding import simplex_code

    rng = np.random.default_rng(11)
    y = np.arange(100) % 3
    Z = rng.normal(size=(100, 3))
    X = np.column_stack([5 + Z[:, 0] + y, Z[:, 1], 1.5e-6 * Z[:, 2]])
    code = simplex_code(3)
    F, objective = _ridge_scores(X, code[y], 1e3, True)
    clf = SimplexSVC(C=1e3, kernel="linear", loss="squared", fit_intercept=True).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), F @ code.T, rtol=0, atol=1e-8)
    assert clf.objective_ == pytest.approx(objective, rel=1e-9)


@pytest.mark.parametrize("C", [1.0, 1e3])
def test_squared_loss_bias_on_a_full_rank_kernel_is_the_bordered_solution(C):
    """RBF on iris (duplicate rows: exact zero eigenvalues, the others real) with a bias: the
    outputs of the bordered system [[K + I / (2C), 1], [1^T, 0]] solved directly and refined
    with extended-precision residuals, to 1e-10 (with the constants masked onto the range the
    fit was 5.9e-10 / 1.2e-8 off)."""
    from sklearn.datasets import load_iris

    from msvm.core.kernels import kernel_matrix

    X, y = load_iris(return_X_y=True)
    clf = SimplexSVC(loss="squared", C=C, fit_intercept=True).fit(X, y)
    K = kernel_matrix(X, X, "rbf", clf._gamma, 3, 0.0)
    N, Y = y.size, clf.code_[y]
    M = np.zeros((N + 1, N + 1))
    M[:N, :N], M[:N, N], M[N, :N] = K + np.eye(N) / (2 * C), 1.0, 1.0
    R = np.vstack([Y, np.zeros((1, Y.shape[1]))])
    solution = np.linalg.solve(M, R)
    for _ in range(3):
        residual = R.astype(np.longdouble) - M.astype(np.longdouble) @ solution
        solution = solution + np.linalg.solve(M, residual.astype(float))
    F = K @ solution[:N] + solution[N]
    np.testing.assert_allclose(clf.decision_function(X), F @ clf.code_.T, rtol=0, atol=1e-10)
