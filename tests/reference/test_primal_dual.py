"""Every primal/dual pair of the reference layer: equal optima, equal predictions, active loss."""

from __future__ import annotations

import numpy as np
import pytest

from msvm.reference import FORMULATIONS
from msvm.reference.values import primal_value, training_loss

RNG = np.random.default_rng(7)
COST = RNG.uniform(0.5, 2.0, size=(10, 10))
np.fill_diagonal(COST, 0.0)

# label -> (formulation, options); options that take L build from it.
CASES = {
    "inhibitory": ("inhibitory", {}),
    "inhibitory-mu0.2": ("inhibitory", {"mu": 0.2}),
    "one_vs_all": ("one_vs_all", {}),
    "weston_watkins": ("weston_watkins", {}),
    "weston_watkins-bias": ("weston_watkins", {"fit_intercept": True}),
    "weston_watkins-margin2": ("weston_watkins", {"margin": 2.0}),
    "crammer_singer": ("crammer_singer", {}),
    "crammer_singer-margin-rescaled": ("crammer_singer", {"cost": COST, "rescaling": "margin"}),
    "crammer_singer-slack-rescaled": ("crammer_singer", {"cost": COST, "rescaling": "slack"}),
    "lee_lin_wahba": ("lee_lin_wahba", {}),
    "max_svm": ("max_svm", {}),
    "sum_svm": ("sum_svm", {}),
    "mprot_static-q2": ("mprot_static", {"n_prototypes": 2}),
    "simplex_hinge": ("simplex_hinge", {}),
    "simplex_square": ("simplex_square", {}),
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
