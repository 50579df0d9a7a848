"""A callable kernel in the reference layer (``Problem(kernel=callable)``, as scikit-learn's SVC
takes one): the problem of the precomputed Gram matrix kernel(X, X), with new points through
kernel(X_new, X); what a precomputed kernel is refused for is refused.  Every primal and dual
on a callable kernel, and the fast layer's agreement with them, run in the problem-parametrised
tests (``conftest.PROBLEMS["wine-callable"]``)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from msvm.core import datasets
from msvm.reference import FORMULATIONS, Problem


@pytest.fixture(scope="module")
def wine():
    X, y = datasets.load("wine", n_samples=60)
    return X, y, np.random.default_rng(3).normal(size=(15, X.shape[1]))


laplacian = partial(laplacian_kernel, gamma=0.02)  # (conftest's; parametrize needs it here)


@pytest.mark.parametrize("formulation", ["weston_watkins", "simplex_hinge", "logistic"])
def test_a_callable_is_the_problem_of_its_gram_matrix(wine, formulation):
    X, y, X_new = wine
    by_callable = Problem(X, y, C=1.0, kernel=laplacian)
    by_gram = Problem(laplacian(X, X), y, C=1.0, kernel="precomputed")
    np.testing.assert_array_equal(by_callable.K, by_gram.K)
    assert by_callable.gamma is None
    module = FORMULATIONS[formulation]
    for form in ("primal", "dual"):
        a, b = getattr(module, form)(by_callable), getattr(module, form)(by_gram)
        assert a.objective == pytest.approx(b.objective, rel=1e-9)
        np.testing.assert_allclose(
            a.decision_function(X_new), b.decision_function(laplacian(X_new, X)), atol=1e-6
        )


def test_a_callable_named_kernel_is_the_named_kernels_problem(wine):
    """The same kernel named and given as a callable: the same Gram matrix (to rounding) and
    optimum, from two different code paths (``kernel_matrix`` against scikit-learn's)."""
    X, y, X_new = wine
    named = Problem(X, y, C=1.0, kernel="rbf", gamma=0.1)
    given = Problem(X, y, C=1.0, kernel=lambda A, B: rbf_kernel(A, B, gamma=0.1))
    np.testing.assert_allclose(given.K, named.K, atol=1e-12)
    a, b = FORMULATIONS["inhibitory"].dual(named), FORMULATIONS["inhibitory"].dual(given)
    assert a.objective == pytest.approx(b.objective, rel=1e-7)
    np.testing.assert_allclose(a.decision_function(X_new), b.decision_function(X_new), atol=1e-6)


@pytest.mark.parametrize(
    "kernel, match",
    [
        (lambda A, B: laplacian(A, B)[:, :-1], "shape"),
        (lambda A, B: np.full((A.shape[0], B.shape[0]), np.nan), "NaN or inf"),
        (lambda A, B: laplacian(A, B) + np.triu(np.ones((A.shape[0], B.shape[0])), 1), "symmetric"),
        (lambda A, B: -laplacian(A, B), "indefinite|negative eigenvalue"),
    ],
    ids=["shape", "nan", "asymmetric", "indefinite"],
)
def test_a_callable_is_refused_where_a_gram_matrix_would_be(wine, kernel, match):
    X, y, _ = wine
    with pytest.raises(ValueError, match=match):
        Problem(X, y, C=1.0, kernel=kernel)


def test_new_points_of_another_width_are_refused(wine):
    X, y, X_new = wine
    p = Problem(X, y, C=1.0, kernel=laplacian)
    with pytest.raises(ValueError, match="features"):
        p.kernel_to(X_new[:, :-1])
