"""Shared fixtures: the three test problems of the reference layer (loss active at the optimum)."""

from __future__ import annotations

import numpy as np
import pytest

from msvm.core import datasets

# name -> (data set, subset size, kernel, C); chosen so that many loss terms are active.
PROBLEMS = {
    "iris-linear": ("iris", None, "linear", 0.1),
    "wine-rbf": ("wine", None, "rbf", 1.0),
    "digits-rbf": ("digits", 120, "rbf", 1.0),
}


def make_problem(name: str):
    from msvm.reference import Problem

    data, n, kernel, C = PROBLEMS[name]
    X, y = datasets.load(data, n_samples=n)
    return Problem(X, y, C=C, kernel=kernel), X, y


@pytest.fixture(scope="session", params=list(PROBLEMS))
def problem(request):
    """(name, Problem, X, y) for each of the three test problems."""
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
