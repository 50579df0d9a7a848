"""The Bayes-consistency tool: exact LP minimisers against a grid, and known rates."""

from __future__ import annotations

import json

import numpy as np
import pytest

from msvm.verify import consistency
from msvm.verify.cli import main


@pytest.mark.parametrize("formulation", consistency.FORMULATIONS)
def test_lp_minimum_equals_a_grid_search(formulation):
    """L = 3 (f in R^3, or R^2 for the simplex hinge): the LP's value and a brute-force grid."""
    h = consistency.hinges(formulation, 3)
    risk = consistency.ConditionalRisk(h)
    p = np.array([0.45, 0.35, 0.2])
    lp = risk.solve(risk.cost(p)).fun
    g = np.linspace(-2.5, 2.5, 101 if h.A.shape[1] == 3 else 2001)
    grids = np.meshgrid(*[g] * h.A.shape[1], indexing="ij")
    F = np.stack([x.ravel() for x in grids], axis=1)
    if h.equality is not None:
        F = F[np.abs(F @ h.equality.T).ravel() < 1e-9]
    terms = np.maximum(0.0, h.b[None, :] + F @ h.A.T)  # (points, rows)
    per_slack = np.zeros((F.shape[0], h.groups.max() + 1))
    np.maximum.at(per_slack.T, h.groups, terms.T)
    slack_weight = np.zeros(h.groups.max() + 1)
    np.maximum.at(slack_weight, h.groups, h.weights @ p)
    grid = (per_slack @ slack_weight).min()
    assert lp == pytest.approx(grid, abs=2e-3)
    assert lp <= grid + 1e-9


def test_known_rates():
    rng = np.random.default_rng(0)
    P = rng.random((200_000, 3))
    P /= P.sum(axis=1, keepdims=True)
    share_no_majority = (P.max(axis=1) < 0.5).mean()  # one-vs-all minimiser then ties at -1
    ova = consistency.monte_carlo("one_vs_all", 3, 400, random_state=1)
    assert abs(ova.optimistic - share_no_majority) < 4 * np.sqrt(0.25 / 400)
    for formulation in ("inhibitory", "lee_lin_wahba"):  # consistent at L = 3
        row = consistency.monte_carlo(formulation, 3, 200, random_state=1)
        assert row.pessimistic == 0.0
    for formulation in consistency.FORMULATIONS:  # every loss is consistent for two classes
        assert consistency.monte_carlo(formulation, 2, 50, random_state=1).pessimistic == 0.0


def test_the_tool_detects_a_broken_loss(monkeypatch):
    """Charging each hinge to the wrong class makes a consistent loss inconsistent."""
    real = consistency.hinges

    def swapped(formulation, L):
        h = real(formulation, L)
        h.weights = h.weights[:, ::-1].copy()
        return h

    monkeypatch.setattr(consistency, "hinges", swapped)
    assert consistency.monte_carlo("lee_lin_wahba", 3, 50, random_state=1).pessimistic > 0.5


def test_consistency_command_json(tmp_path):
    out = tmp_path / "rates.json"
    assert (
        main(
            [
                "consistency",
                "--classes",
                "2",
                "3",
                "--trials",
                "20",
                "--seed",
                "4",
                "--formulations",
                "inhibitory",
                "weston_watkins",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    rows = json.loads(out.read_text())
    assert len(rows) == 4
    assert {"formulation", "L", "trials", "vertex", "pessimistic", "optimistic"} <= set(rows[0])
