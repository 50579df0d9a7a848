"""Every primal/dual pair of the reference layer: equal optima, equal predictions, active loss."""

from __future__ import annotations

import numpy as np
import pytest

from msvm.reference import FORMULATIONS, inhibitory, lecture
from msvm.reference.values import primal_value, training_loss

RNG = np.random.default_rng(7)
COST = RNG.uniform(0.5, 2.0, size=(10, 10))
np.fill_diagonal(COST, 0.0)

# label -> (formulation, options); options that take L build from it.
CASES = {
    "inhibitory": ("inhibitory", {}),
    "inhibitory-mu0.2": ("inhibitory", {"mu": 0.2}),
    "inhibitory-mu0": ("inhibitory", {"mu": 0.0}),
    "inhibitory-bias": ("inhibitory", {"fit_intercept": True}),
    "inhibitory-mu0.2-bias": ("inhibitory", {"mu": 0.2, "fit_intercept": True}),
    "one_vs_all": ("one_vs_all", {}),
    "one_vs_all-bias": ("one_vs_all", {"fit_intercept": True}),
    "weston_watkins": ("weston_watkins", {}),
    "weston_watkins-bias": ("weston_watkins", {"fit_intercept": True}),
    "weston_watkins-margin2": ("weston_watkins", {"margin": 2.0}),
    "crammer_singer": ("crammer_singer", {}),
    "crammer_singer-margin-rescaled": ("crammer_singer", {"cost": COST, "rescaling": "margin"}),
    "crammer_singer-slack-rescaled": ("crammer_singer", {"cost": COST, "rescaling": "slack"}),
    "crammer_singer-bias": ("crammer_singer", {"fit_intercept": True}),
    "lee_lin_wahba": ("lee_lin_wahba", {}),
    "lee_lin_wahba-bias": ("lee_lin_wahba", {"fit_intercept": True}),
    "max_svm": ("max_svm", {}),
    "sum_svm": ("sum_svm", {}),
    "mprot_static-q1": ("mprot_static", {"n_prototypes": 1}),
    "mprot_static-q2": ("mprot_static", {"n_prototypes": 2}),
    "mprot_static-q2-bias": ("mprot_static", {"n_prototypes": 2, "fit_intercept": True}),
    "simplex_hinge": ("simplex_hinge", {}),
    "simplex_hinge-bias": ("simplex_hinge", {"fit_intercept": True}),
    "simplex_square": ("simplex_square", {}),
    "simplex_square-bias": ("simplex_square", {"fit_intercept": True}),
    "logistic": ("logistic", {}),
}


def options_for(options, L):
    return {k: (v[:L, :L] if k == "cost" else v) for k, v in options.items()}


@pytest.fixture(scope="module")
def solved(problem):
    """Solve every case once per problem (session-scoped problems, module-scoped solutions)."""
    name, p, X, y = problem
    out = {}
    for label, (formulation, options) in CASES.items():
        module = FORMULATIONS[formulation]
        opts = options_for(options, p.n_classes)
        out[label] = (module.primal(p, **opts), module.dual(p, **opts))
    return name, p, out


@pytest.mark.parametrize("label", list(CASES))
def test_primal_and_dual_optimal_values_agree(solved, label):
    _, p, sols = solved
    primal, dual = sols[label]
    assert primal.objective == pytest.approx(dual.objective, rel=1e-6)
    # The cvxpy optimum restated in numpy (independent statement of the loss) ...
    assert primal_value(primal) == pytest.approx(primal.objective, rel=1e-6)
    # ... and the primal objective at the point recovered from the dual closes the gap.
    assert primal_value(dual) == pytest.approx(dual.objective, rel=1e-6)


@pytest.mark.parametrize("label", list(CASES))
def test_loss_is_active_at_the_optimum(solved, label):
    _, p, sols = solved
    primal, _ = sols[label]
    # Not a separable problem: the loss carries a real share of the objective.
    assert p.C * training_loss(primal) > 0.01 * primal.objective


@pytest.mark.parametrize("label", list(CASES))
def test_predictions_from_primal_and_dual_agree(solved, held_out, label):
    name, p, sols = solved
    primal, dual = sols[label]
    for X in (p.X, held_out[name]):
        s_primal, s_dual = primal.decision_function(X), dual.decision_function(X)
        scale = 1.0 + np.abs(s_primal).max()
        assert np.abs(s_primal - s_dual).max() <= 1e-4 * scale
        top2 = np.sort(s_primal, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-3 * scale
        assert clear.mean() > 0.8
        np.testing.assert_array_equal(primal.predict(X)[clear], dual.predict(X)[clear])


# Equalities between machines that the papers state (canonical scale, C = 1/lambda).
EQUAL_OPTIMA = [
    ("max_svm", "crammer_singer"),  # Lecture Max-SVM = Crammer-Singer without bias
    ("sum_svm", "weston_watkins"),  # Lecture Sum-SVM = Weston-Watkins (E.1) without bias
    ("inhibitory-mu0", "one_vs_all"),  # ISVM (3.5) at mu = 0 is L binary SVMs
    ("mprot_static-q1", "crammer_singer"),  # MProt (8) with one prototype is MProt (4)
]


@pytest.mark.parametrize("first,second", EQUAL_OPTIMA)
def test_equivalent_machines_have_equal_optima(solved, held_out, first, second):
    name, _, sols = solved
    a, b = sols[first][0], sols[second][0]
    assert a.objective == pytest.approx(b.objective, rel=1e-6)
    X = held_out[name]
    scale = 1.0 + np.abs(a.decision_function(X)).max()
    assert np.abs(a.decision_function(X) - b.decision_function(X)).max() <= 1e-4 * scale


def test_weston_watkins_margin_two_is_margin_one_rescaled(solved):
    """With w = 2v, the margin-2 problem at C is 4 times the margin-1 problem at C/2."""
    _, p, sols = solved
    from msvm.reference import Problem

    half = Problem(p.K, p.classes[p.y_index], C=p.C / 2, kernel="precomputed")
    margin_one = FORMULATIONS["weston_watkins"].primal(half)
    assert sols["weston_watkins-margin2"][0].objective == pytest.approx(
        4 * margin_one.objective, rel=1e-6
    )


def test_inhibitory_outputs_sum_to_zero_at_mu_one_over_L(solved, held_out):
    """ISVM (3.6): sum_j f_j(x) = (1 - mu L) <w, Psi(x)> = 0 at mu = 1/L, for every x."""
    name, p, sols = solved
    for sol in sols["inhibitory"]:
        for X in (p.X, held_out[name]):
            F = sol.decision_function(X)
            assert np.abs(F.sum(axis=1)).max() <= 1e-6 * (1.0 + np.abs(F).max())
    # ... and not at another mu, so the check can fail.
    F = sols["inhibitory-mu0.2"][1].decision_function(held_out[name])
    assert np.abs(F.sum(axis=1)).max() > 1e-3


def test_inhibitory_simplified_prediction_rule(solved, held_out):
    """ISVM (4.15)-(4.16): argmax_j f~_j = argmax_j f_j, f~_j = sum_i alpha_ij y_ij K(x_i, x)."""
    name, p, sols = solved
    dual = sols["inhibitory"][1]
    X = held_out[name]
    full, simplified = dual.decision_function(X), inhibitory.simplified_scores(dual, X)
    np.testing.assert_allclose(
        full,
        simplified - simplified.mean(axis=1, keepdims=True),
        atol=1e-9 * (1 + np.abs(full).max()),
    )
    np.testing.assert_array_equal(full.argmax(axis=1), simplified.argmax(axis=1))


@pytest.mark.parametrize("label,rule", [("max_svm", "min"), ("sum_svm", "sum"), ("sum_svm", "min")])
def test_lecture_class_rules_from_dual_variables(solved, held_out, label, rule):
    """The Lecture's rules 'largest min/sum of c_{y,j}' pick the class with the largest output."""
    name, _, sols = solved
    dual = sols[label][1]
    X = held_out[name]
    np.testing.assert_array_equal(
        lecture.confidences(dual, X, rule).argmax(axis=1), dual.decision_function(X).argmax(axis=1)
    )
