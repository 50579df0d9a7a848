"""Shared fixtures: the test problems of the reference layer (loss active at the optimum), one
of them with a callable kernel."""

from __future__ import annotations

import numpy as np
import pytest

from msvm.core import datasets


def laplacian(A, B):
    """A kernel neither layer names, given as a callable (as scikit-learn's SVC takes one):
    exp(-0.02 |a - b|_1), positive definite."""
    from sklearn.metrics.pairwise import laplacian_kernel

    return laplacian_kernel(A, B, gamma=0.02)


# name -> (data set, subset size, kernel, C); chosen so that many loss terms are active.
PROBLEMS = {
    "iris-linear": ("iris", None, "linear", 0.1),
    "wine-rbf": ("wine", None, "rbf", 1.0),
    "digits-rbf": ("digits", 120, "rbf", 1.0),
    "wine-callable": ("wine", 90, laplacian, 1.0),
}


def make_problem(name: str):
    from msvm.reference import Problem

    data, n, kernel, C = PROBLEMS[name]
    X, y = datasets.load(data, n_samples=n)
    return Problem(X, y, C=C, kernel=kernel), X, y


@pytest.fixture(scope="session")
def callable_kernel():
    """The callable kernel of the "wine-callable" problem (``laplacian``), for tests that pass
    one to an estimator, ``Problem`` or ``verify``."""
    return laplacian


@pytest.fixture(scope="session")
def near_separable():
    """``near_separable(seed)``: 100 points of 4 classes in 7 dimensions, nearly separable
    (make_classification), where logistic regression at a large C strains its solvers."""
    from sklearn.datasets import make_classification

    def data(seed):
        return make_classification(
            100, n_features=7, n_informative=5, n_redundant=0, n_classes=4,
            n_clusters_per_class=1, class_sep=2.0, random_state=seed,
        )  # fmt: skip

    return data


@pytest.fixture(scope="session", params=list(PROBLEMS))
def problem(request):
    """(name, Problem, X, y) for each of the test problems."""
    p, X, y = make_problem(request.param)
    return request.param, p, X, y


@pytest.fixture(scope="session")
def held_out():
    """Points from each data set that are not (all) in the training sets, for prediction checks."""
    rng = np.random.default_rng(1)
    out = {}
    for name, (data, _, _, _) in PROBLEMS.items():
        X, _ = datasets.load(data)
        out[name] = X[rng.choice(len(X), 60, replace=False)] + 0.05 * rng.standard_normal(
            (60, X.shape[1])
        )
    return out


@pytest.fixture(scope="session")
def weighted_iris():
    """(X, y, w): 45 iris points on two features (versicolor and virginica overlap: loss terms
    > 0) and integer weights 0..3, some of them 0, every class keeping weight."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    rows = np.random.default_rng(0).choice(150, 45, replace=False)
    X, y = X[rows][:, :2], y[rows]
    w = np.random.default_rng(1).integers(0, 4, size=y.size).astype(float)
    assert np.any(w == 0) and np.all(np.bincount(y[w > 0]) > 0)
    return X, y, w


@pytest.fixture(scope="session")
def typed_names():
    """A function (jitted function, *args) -> the types numba gives the variables of a fresh,
    uncached compile of the function's Python source on ``args``, as one string: a callee that
    numba pruned (a branch on an argument that is None, say) is absent from it, and compiled
    into no fit that takes that specialisation."""
    import numba

    def typed_names(function, *args):
        fresh = numba.njit(function.py_func)
        fresh(*args)
        (result,) = fresh.overloads.values()
        return " ".join(str(t) for t in result.fndesc.typemap.values())

    return typed_names


@pytest.fixture
def agreeing_reference():
    """A function giving ``prof`` (an ``inhibition.MuProfile`` whose values a test made up) the
    reference primal (4.1) faked to agree with it where it is read: a test of the verdicts'
    logic on a made-up E*(mu)."""
    return _agreeing_reference


def _agreeing_reference(prof):
    prof.reference = {float(prof.mus[k]): float(prof.objectives[k]) for k in prof.read_indices()}
    prof.reference_slope = float(prof.derivatives[prof.at])
    return prof
