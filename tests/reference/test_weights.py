"""The Lecture's formulations with sample weights (issue 19): max_svm, sum_svm and logistic.

Each weighted primal against its weighted dual (strong duality, both restated in numpy), against
the unweighted problem on duplicated rows (integer weights), against the ISVM machine it equals
(Max-SVM = Crammer-Singer, Sum-SVM = Weston-Watkins, each stated in its own variables) and, for
logistic regression, against scikit-learn's weighted ``LogisticRegression``.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from msvm.core.kernels import kernel_matrix
from msvm.core.objectives import canonical_objective, logistic_loss
from msvm.reference import FORMULATIONS, Problem
from msvm.reference.values import primal_value, training_loss

LECTURE = ["max_svm", "sum_svm", "logistic"]
SAME_PROBLEM = {"max_svm": "crammer_singer", "sum_svm": "weston_watkins"}
GAMMA = 0.5  # fixed: gamma="scale" would see the duplicated rows


@pytest.fixture(scope="module", params=["linear", "rbf"])
def solved(request, weighted_iris):
    """The weighted problem, its duplicated-rows twin and the unweighted one, each solved."""
    X, y, w = weighted_iris
    kernel = request.param
    counts = w.astype(int)
    problems = {
        "weighted": Problem(X, y, kernel=kernel, gamma=GAMMA, sample_weight=w),
        "duplicated": Problem(
            np.repeat(X, counts, axis=0), np.repeat(y, counts), kernel=kernel, gamma=GAMMA
        ),
        "plain": Problem(X, y, kernel=kernel, gamma=GAMMA),
    }
    out = {}
    for name in [*LECTURE, *SAME_PROBLEM.values()]:
        module = FORMULATIONS[name]
        for key, p in problems.items():
            out[name, key] = (module.primal(p), module.dual(p))
    return X, w, out


@pytest.mark.parametrize("name", LECTURE)
def test_weighted_primal_equals_weighted_dual(solved, name):
    """Strong duality on non-separable data, and the numpy restatement of each value."""
    _, w, sols = solved
    primal, dual = sols[name, "weighted"]
    assert training_loss(primal) > 1.0  # non-separable: the weighted loss terms matter
    assert primal.objective == pytest.approx(dual.objective, rel=1e-6)
    assert primal_value(primal) == pytest.approx(primal.objective, rel=1e-6)
    assert primal_value(dual) == pytest.approx(dual.objective, rel=1e-6)
    # the weights reached the solver: the unweighted optimum is another number
    plain, _ = sols[name, "plain"]
    assert abs(plain.objective - primal.objective) > 1e-2 * primal.objective
    # a pattern of weight 0 drops out of the dual: its variables are 0 (to the solver's 1e-9;
    # the others range over [-s_i, 0], or [0, s_i] for logistic regression)
    np.testing.assert_allclose(dual.dual_coef[w == 0], 0.0, rtol=0, atol=1e-8)
    assert np.abs(dual.dual_coef[w > 0]).max() > 0.5


@pytest.mark.parametrize("name", LECTURE)
def test_integer_weights_equal_duplicated_rows(solved, name):
    """Weight k = the row k times (0: left out), primal and dual, on the training points and a
    grid."""
    X, _, sols = solved
    grid = np.random.default_rng(2).uniform(X.min(0), X.max(0), size=(50, 2))
    for weighted, duplicated in zip(sols[name, "weighted"], sols[name, "duplicated"], strict=True):
        assert weighted.objective == pytest.approx(duplicated.objective, rel=1e-7)
        for points in (X, grid):
            atol = 1e-5
            if name == "logistic":
                # The exp-cone solves are accurate in value, not to 1e-5 in W (stop 33: 1.05e-5
                # on the grid).  The primal is 1-strongly convex in W, so a point W of objective
                # gap g lies within sqrt(2 g) of the optimum in Frobenius norm, and an output
                # within that times ||phi(x)||: the bound each pair's certified gaps give.
                reach = sum(
                    np.sqrt(2.0 * weights_gap(sols, name, key, sol))
                    for key, sol in (("weighted", weighted), ("duplicated", duplicated))
                )
                p = weighted.problem  # ||phi(x)|| = sqrt(k(x, x))
                k_xx = np.diag(kernel_matrix(points, points, p.kernel, p.gamma, p.degree, p.coef0))
                atol = reach * np.sqrt(k_xx)[:, None]
                assert np.all(atol < 1e-2)  # the solves are tight: the bound still has teeth
            gap = np.abs(weighted.decision_function(points) - duplicated.decision_function(points))
            np.testing.assert_array_less(gap, np.broadcast_to(atol, gap.shape))


def weights_gap(sols, name, key, sol) -> float:
    """P(W) - P* bounded by the duality gap: the primal value at the solution's W (a dual
    solution's W is the one its coefficients build) less the dual's objective."""
    return max(primal_value(sol) - sols[name, key][1].objective, 0.0)


@pytest.mark.parametrize("name", list(SAME_PROBLEM))
def test_weighted_lecture_machines_are_the_isvm_machines(solved, name):
    """Weighted Max-SVM = weighted Crammer-Singer, weighted Sum-SVM = weighted Weston-Watkins:
    the same optimum and the same outputs from differently stated primals and duals."""
    X, _, sols = solved
    for lecture, isvm in zip(
        sols[name, "weighted"], sols[SAME_PROBLEM[name], "weighted"], strict=True
    ):
        assert lecture.objective == pytest.approx(isvm.objective, rel=1e-7)
        np.testing.assert_allclose(lecture.outputs(X), isvm.outputs(X), rtol=0, atol=1e-5)


def test_weighted_logistic_against_scikit_learn(weighted_iris):
    """scikit-learn's LogisticRegression with sample_weight minimises the same canonical
    objective 1/2 ||W||^2 + C sum_i s_i loss_i on the factor features R."""
    X, y, w = weighted_iris
    p = Problem(X, y, C=1.0, kernel="rbf", gamma=GAMMA, sample_weight=w)
    primal = FORMULATIONS["logistic"].primal(p)
    sk = LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000)
    sk.fit(p.R, p.y_index, sample_weight=w)
    F = sk.decision_function(p.R)
    value = canonical_objective(np.sum(sk.coef_**2), logistic_loss(F, p.y_index, w), 1.0)
    assert value == pytest.approx(primal.objective, rel=1e-7)
    centred = F - F.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(centred, primal.training_outputs(), rtol=0, atol=1e-5)


def test_logistic_refuses_a_class_without_weight(weighted_iris):
    X, y, w = weighted_iris
    p = Problem(X, y, sample_weight=np.where(y == 2, 0.0, w))
    for form in ("primal", "dual"):
        with pytest.raises(ValueError, match="sum to 0"):
            getattr(FORMULATIONS["logistic"], form)(p)
