"""A callable kernel, as SVC takes one (``msvm.fast.callable_kernel``): the fit is the precomputed
fit on kernel(X, X), bit for bit, and predictions come from kernel(X_new, X)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
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
)
from msvm.fast.loo import leave_one_out_path
from msvm.fast.model_selection import LeaveOneOutSearchCV, loo_grid_search

ESTIMATORS = [
    InhibitorySVC(random_state=0),
    OneVsAllSVC(random_state=0),
    WestonWatkinsSVC(random_state=0),
    LeeLinWahbaSVC(random_state=0),
    CrammerSingerSVC(random_state=0, fit_intercept=True),
    SimplexSVC(random_state=0),
    SimplexSVC(loss="squared"),
    MultiPrototypeSVC(n_assignment_steps=2, random_state=0),
    MKPMClassifier(random_state=0),
]


def kernel(A, B):
    """A Gaussian kernel that the estimators do not name (gamma 0.7 on two features)."""
    return rbf_kernel(A, B, gamma=0.7)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_a_callable_kernel_fits_and_predicts_as_its_gram_matrix(weighted_iris, estimator):
    X, y, w = weighted_iris
    X_new = X[:9] + 0.05
    fitted = clone(estimator).set_params(kernel=kernel).fit(X, y, sample_weight=w)
    gram = clone(estimator).set_params(kernel="precomputed").fit(kernel(X, X), y, sample_weight=w)
    np.testing.assert_array_equal(
        fitted.decision_function(X_new), gram.decision_function(kernel(X_new, X))
    )
    np.testing.assert_array_equal(fitted.predict(X_new), gram.predict(kernel(X_new, X)))
    np.testing.assert_array_equal(fitted.support_, gram.support_)
    assert hasattr(fitted, "support_vectors_") == hasattr(gram, "support_vectors_")  # (MKPM)
    if hasattr(gram, "support_vectors_"):
        np.testing.assert_array_equal(fitted.support_vectors_, X[gram.support_])
    assert fitted.n_features_in_ == 2 and fitted.shape_fit_ == X.shape
    assert fitted.score(X, y) == gram.score(kernel(X, X), y) > 0.6
    if hasattr(gram, "dual_coef_"):
        np.testing.assert_array_equal(fitted.dual_coef_, gram.dual_coef_)


def test_its_probabilities_and_sparse_rows_are_the_gram_matrixs(weighted_iris):
    """The callable gets the rows as given (CSR here, as SVC passes them)."""
    X, y, _ = weighted_iris
    X = sp.csr_matrix(X)
    options = dict(probability=True, random_state=0)
    fitted = WestonWatkinsSVC(kernel=kernel, **options).fit(X, y)
    gram = WestonWatkinsSVC(kernel="precomputed", **options).fit(kernel(X, X), y)
    rows = kernel(X[:5], X)
    np.testing.assert_array_equal(fitted.predict_proba(X[:5]), gram.predict_proba(rows))
    np.testing.assert_array_equal(fitted.predict_log_proba(X[:5]), gram.predict_log_proba(rows))
    assert sp.issparse(fitted.support_vectors_)


def test_it_predicts_as_svc_with_the_same_callable_where_svc_does(weighted_iris):
    """One-vs-all with a bias is SVC's model up to the multiclass scheme; on these two classes
    (versicolor against virginica) both are one binary SVM with a bias, and one-vs-all's two
    classes are its two signs: f_2 - f_1 = 2 f_2, twice SVC's decision."""
    X, y, _ = weighted_iris
    two = y > 0
    ours = OneVsAllSVC(kernel=kernel, fit_intercept=True, tol=1e-8).fit(X[two], y[two])
    svc = SVC(kernel=kernel, tol=1e-8).fit(X[two], y[two])
    np.testing.assert_allclose(ours.decision_function(X) / 2, svc.decision_function(X), atol=1e-6)


def test_the_squared_simplex_path_is_the_gram_matrixs(weighted_iris):
    X, y, _ = weighted_iris
    fitted = SimplexSVC(loss="squared", kernel=kernel).fit(X, y)
    gram = SimplexSVC(loss="squared", kernel="precomputed").fit(kernel(X, X), y)
    np.testing.assert_array_equal(fitted.coef_path([0.1, 10.0]), gram.coef_path([0.1, 10.0]))


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda A, B: rbf_kernel(A, B)[:, :-1], "returned an array of shape"),
        (lambda A, B: np.full((A.shape[0], B.shape[0]), np.nan), "returned NaN or inf"),
    ],
)
def test_a_callable_that_does_not_give_the_kernel_matrix_is_refused(weighted_iris, bad, message):
    X, y, _ = weighted_iris
    with pytest.raises(ValueError, match=message):
        WestonWatkinsSVC(kernel=bad).fit(X, y)


def test_predicting_checks_the_new_rows_and_the_callables_output(weighted_iris):
    X, y, _ = weighted_iris
    calls = []

    def counted(A, B):
        calls.append((A.shape, B.shape))
        return kernel(A, B) if len(calls) == 1 else kernel(A, B)[:, :3]

    fitted = CrammerSingerSVC(kernel=counted).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features"):
        fitted.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="returned an array of shape"):
        fitted.predict(X[:2])


def test_leave_one_out_paths_run_on_a_callables_gram_matrix(weighted_iris):
    """The path, the grid and the search on kernel(X, X), as on the precomputed Gram matrix
    (before stop 52 they refused a callable); a grid of gammas has no meaning for it."""
    X, y, w = weighted_iris
    model = WestonWatkinsSVC(random_state=0)
    given = leave_one_out_path(model.set_params(kernel=kernel), X, y, [0.1, 1.0], sample_weight=w)
    gram = leave_one_out_path(
        clone(model).set_params(kernel="precomputed"), kernel(X, X), y, [0.1, 1.0], sample_weight=w
    )
    np.testing.assert_array_equal(given.predictions, gram.predictions)
    assert given.steps == gram.steps > 0 and 0.5 < given.accuracy(y).max() < 1.0
    with pytest.raises(ValueError, match="gammas has no effect with a callable kernel"):
        loo_grid_search(model, X, y, Cs=[1.0], gammas=[0.1, 1.0])
    search = LeaveOneOutSearchCV(model, Cs=[0.1, 1.0, 10.0]).fit(X, y)
    reference = LeaveOneOutSearchCV(
        clone(model).set_params(kernel="precomputed"), Cs=[0.1, 1.0, 10.0]
    )
    reference.fit(kernel(X, X), y)
    np.testing.assert_array_equal(search.loo_accuracy_, reference.loo_accuracy_)
    assert search.best_params_["C"] == reference.best_params_["C"]
    X_new = X[:9] + 0.05
    np.testing.assert_array_equal(search.predict(X_new), reference.predict(kernel(X_new, X)))


def test_warm_start_goes_on_from_the_last_fit_as_with_the_gram_matrix(weighted_iris):
    X, y, _ = weighted_iris
    fitted = WestonWatkinsSVC(kernel=kernel, warm_start=True, random_state=0).fit(X, y)
    gram = WestonWatkinsSVC(kernel="precomputed", warm_start=True, random_state=0)
    gram.fit(kernel(X, X), y)
    fitted.set_params(C=3.0).fit(X, y)
    gram.set_params(C=3.0).fit(kernel(X, X), y)
    np.testing.assert_array_equal(fitted.dual_coef_, gram.dual_coef_)
    assert fitted.n_steps_ == gram.n_steps_
    cold = WestonWatkinsSVC(kernel=kernel, C=3.0, random_state=0).fit(X, y)
    assert fitted.n_steps_ < cold.n_steps_


def test_a_sparse_kernel_matrix_is_taken_as_svc_takes_it(weighted_iris):
    X, y, _ = weighted_iris
    X = sp.csr_matrix(X)

    def linear(A, B):
        return A @ B.T  # a sparse matrix for sparse rows

    fitted = WestonWatkinsSVC(kernel=linear, random_state=0).fit(X, y)
    gram = WestonWatkinsSVC(kernel="precomputed", random_state=0).fit(linear(X, X).toarray(), y)
    np.testing.assert_array_equal(
        fitted.decision_function(X[:5]), gram.decision_function(linear(X[:5], X).toarray())
    )


def test_no_fitted_attribute_outlives_a_change_of_kernel(weighted_iris):
    """A linear fit's coef_ does not stay through a callable fit, and a named-kernel refit drops
    the callable fit's training rows and copy (MKPM has no support_vectors_ either way)."""
    X, y, _ = weighted_iris
    clf = WestonWatkinsSVC(kernel="linear").fit(X, y)
    assert hasattr(clf, "coef_")
    clf.set_params(kernel=kernel).fit(X, y)
    assert not hasattr(clf, "coef_") and hasattr(clf, "_precomputed_model")
    clf.set_params(kernel="rbf").fit(X, y)
    assert not hasattr(clf, "_precomputed_model") and not hasattr(clf, "_fit_X")
    mkpm = MKPMClassifier(kernel=kernel).fit(X, y)
    assert not hasattr(mkpm, "support_vectors_")
    mkpm.set_params(kernel="rbf").fit(X, y)
    assert not hasattr(mkpm, "_fit_X")
