"""The Bayes-consistency tool: exact LP minimisers against a grid, the optimal face against known
minimiser sets, the rates against closed forms on the same draws, and tolerance insensitivity."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import linprog

from msvm.verify import consistency
from msvm.verify.cli import main


def risk_at(h, F, p):
    """The conditional risk sum_j p_j h_j(f) at the rows of F, from the hinge terms directly."""
    terms = np.maximum(0.0, h.b[None, :] + F @ h.A.T)  # (points, rows)
    per_slack = np.zeros((F.shape[0], h.groups.max() + 1))
    np.maximum.at(per_slack.T, h.groups, terms.T)
    slack_weight = np.zeros(h.groups.max() + 1)
    np.maximum.at(slack_weight, h.groups, h.weights @ p)
    return per_slack @ slack_weight


def same_draws(L, trials, seed):
    """The Monte Carlo's draws, recomputed from the rng stream: one rng.random(L) per draw."""
    rng = np.random.default_rng(seed)
    P = np.array([rng.random(L) for _ in range(trials)])
    return P / P.sum(axis=1, keepdims=True)


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
    grid = risk_at(h, F, p).min()
    assert lp == pytest.approx(grid, abs=2e-3)
    assert lp <= grid + 1e-9


def test_the_optimal_face_is_the_minimiser_set():
    """One-vs-all, p = (0.5, 0.3, 0.2): the minimisers are exactly f = (s, -1, -1), s in [-1, 1]
    (p_1 = 1/2 makes [1 - f_1]_+ and [1 + f_1]_+ weigh the same).  Every such point lies on the
    face, points off it do not, and the face's extreme points in random directions are
    minimisers by the hinge formulas."""
    h = consistency.hinges("one_vs_all", 3)
    risk = consistency.ConditionalRisk(h)
    p = np.array([0.5, 0.3, 0.2])
    best, face, E, _ = risk.optimal_face(p)
    A_ub, b_ub, A_eq, b_eq, bounds = face

    def on_face(f):
        t = np.maximum(0.0, h.b + h.A @ f)  # the smallest slacks at f
        z = np.concatenate([f, t])
        lower_ok = all(lo is None or z[j] >= lo - 1e-12 for j, (lo, _) in enumerate(bounds))
        upper_ok = all(hi is None or z[j] <= hi + 1e-12 for j, (_, hi) in enumerate(bounds))
        return (
            lower_ok
            and upper_ok
            and np.all(A_ub @ z <= b_ub + 1e-12)
            and np.allclose(A_eq @ z, b_eq, atol=1e-12)
        )

    for s in np.linspace(-1, 1, 9):
        assert on_face(np.array([s, -1.0, -1.0]))
    assert not on_face(np.array([1.1, -1.0, -1.0]))
    assert not on_face(np.array([0.0, -0.9, -1.0]))
    rng = np.random.default_rng(3)
    minimum = risk_at(h, best.x[None, :3], p)[0]
    for _ in range(10):
        direction = rng.normal(size=best.x.size)
        res = linprog(direction, A_ub, b_ub, A_eq, b_eq, bounds, method="highs")
        assert risk_at(h, res.x[None, :3], p)[0] == pytest.approx(minimum, abs=1e-9)
    # S* mixes f_1 = 1 (class 1 strictly first) with f_1 = -1 (a three-way tie)
    verdict = risk.classify(p)
    assert (verdict.category, verdict.ambiguous, verdict.by_lp) == ("mixed", True, True)
    assert risk.classify(np.array([0.6, 0.3, 0.1])).category == "correct"
    assert risk.classify(np.array([0.4, 0.35, 0.25])).category == "tied"


@pytest.mark.parametrize("formulation", ["one_vs_all", "crammer_singer"])
@pytest.mark.parametrize("L", [3, 4])
def test_no_majority_means_a_full_tie(formulation, L):
    """One-vs-all's minimiser is f_j = 1 if p_j > 1/2, -1 if p_j < 1/2; Crammer-Singer's puts the
    majority class 1 above the rest, and all classes level without one (Zhang 2004).  Both tie
    all L classes exactly when max p < 1/2, so on the same draws: tied = inconsistent = that
    share, nothing wrong, mixed or ambiguous, tie_break = share * (L - 1) / L."""
    trials, seed = 120, 5
    share = (same_draws(L, trials, seed).max(axis=1) < 0.5).mean()
    assert 0.2 < share < 1.0  # the draws do separate the two cases
    row = consistency.monte_carlo(formulation, L, trials, random_state=seed)
    assert row.tied == share
    assert row.inconsistent == pytest.approx(share, abs=1e-12)
    assert row.wrong == row.mixed == row.ambiguous == 0.0
    assert row.tie_break == pytest.approx(share * (L - 1) / L, abs=1e-12)


@pytest.mark.parametrize("L", [3, 4])
def test_simplex_hinge_ties_all_but_the_least_likely_class(L):
    """The simplex hinge: v_t = <a_t, f> ranges over sum-zero vectors, and sum_t p_t [1 - v_t]_+
    is least at v = 1 on every class but the least probable one (v = 1 - L there): the top L - 1
    classes tie on every draw, k among them, so tied = 100 % and tie_break = (L - 2) / (L - 1)."""
    row = consistency.monte_carlo("simplex_hinge", L, 60, random_state=2)
    assert row.tied == 1.0 and row.wrong == row.mixed == row.ambiguous == 0.0
    assert row.tie_break == pytest.approx((L - 2) / (L - 1), abs=1e-12)


def test_consistent_losses():
    for formulation in ("inhibitory", "lee_lin_wahba"):  # consistent at L = 3
        row = consistency.monte_carlo(formulation, 3, 150, random_state=1)
        assert row.inconsistent == row.tie_break == 0.0
    for formulation in consistency.FORMULATIONS:  # every loss is consistent for two classes
        row = consistency.monte_carlo(formulation, 2, 40, random_state=1)
        assert row.inconsistent == row.tie_break == 0.0


def test_the_tool_detects_a_broken_loss(monkeypatch):
    """Charging each hinge to the wrong class makes a consistent loss inconsistent."""
    real = consistency.hinges

    def swapped(formulation, L):
        h = real(formulation, L)
        h.weights = h.weights[:, ::-1].copy()
        return h

    monkeypatch.setattr(consistency, "hinges", swapped)
    row = consistency.monte_carlo("lee_lin_wahba", 3, 50, random_state=1)
    assert row.inconsistent > 0.5 and row.wrong > 0.5


@pytest.mark.parametrize("formulation", consistency.FORMULATIONS)
def test_the_affine_hull_shortcut_agrees_with_lps_over_the_face(formulation):
    """Draws whose face fixes the decision differences are read at HiGHS's vertex; deciding every
    draw by LPs over the face instead gives the same verdicts."""
    fast = consistency.verdicts(formulation, 4, 25, random_state=7)
    slow = consistency.verdicts(formulation, 4, 25, random_state=7, method="lp")
    assert [v.key() for v in fast] == [v.key() for v in slow]
    assert all(v.by_lp for v in slow)


@pytest.mark.parametrize("formulation", ["inhibitory", "weston_watkins"])
def test_rates_are_insensitive_to_the_tolerances(formulation):
    row = consistency.monte_carlo(formulation, 4, 40, random_state=3, sensitivity=True)
    assert set(row.changed) == {
        "solver x10",
        "support x0.1",
        "support x10",
        "tie x0.1",
        "tie x10",
        "rank x0.1",
        "rank x10",
    }
    assert all(count == 0 for count in row.changed.values()), row.changed
    tie_zero, tie_nonzero = row.separation["tie"]
    assert tie_zero < 1e-12 and tie_nonzero > 0.1  # far from tie = 1e-6 on both sides


def test_the_sensitivity_check_can_fail():
    """A tie threshold above the decision gaps (one-vs-all's are 2) turns right answers into ties;
    HiGHS's feasibility tolerances cannot go below its minimum (it would ignore them)."""
    base = consistency.verdicts("one_vs_all", 3, 30, random_state=1)
    loose = consistency.verdicts(
        "one_vs_all", 3, 30, random_state=1, tolerances=consistency.Tolerances(tie=3.0)
    )
    assert sum(a.key() != b.key() for a, b in zip(base, loose, strict=True)) > 0
    with pytest.raises(ValueError, match="HiGHS"):
        consistency.Tolerances(solver=1e-11)


def test_consistency_command_json(tmp_path):
    out = tmp_path / "rates.json"
    argv = ["consistency", "--classes", "2", "3", "--trials", "20", "--seed", "4"]
    argv += ["--formulations", "inhibitory", "weston_watkins", "--json", str(out)]
    assert main(argv) == 0
    rows = json.loads(out.read_text())
    assert len(rows) == 4
    columns = {"inconsistent", "wrong", "tied", "mixed", "tie_break", "ambiguous", "tolerances"}
    assert {"formulation", "L", "trials"} | columns <= set(rows[0])
    ww3 = rows[3]
    assert (ww3["formulation"], ww3["L"]) == ("weston_watkins", 3)
    assert ww3["inconsistent"] == pytest.approx(ww3["wrong"] + ww3["tied"] + ww3["mixed"])
    assert ww3["tolerances"] == {"solver": 1e-10, "support": 1e-9, "tie": 1e-6, "rank": 1e-9}


@pytest.mark.parametrize("name", ["inhibitory", "one_vs_all", "weston_watkins"])
def test_a_probability_near_the_support_tolerance_is_read_against_a_finer_one(name):
    """p = (2.7e-10, 1 - 2.7e-10): every dual of the rare class's rows is below the absolute
    support tolerance 1e-9, and classify raised "the optimal face is not optimal: excess inf"
    (stop 50's audit); it reads the duals against a tenth of the smallest entry, as a finer
    Tolerances decides it, down to 1e-14 (a draw of 100 000 at L = 5 had an entry of 1.8e-9)."""
    from msvm.verify.consistency import ConditionalRisk, Tolerances, hinges

    p = [2.7e-10, 1 - 2.7e-10]  # (a list, as a user might give it)
    finer = ConditionalRisk(hinges(name, 2), Tolerances(support=1e-12)).classify(np.array(p))
    assert ConditionalRisk(hinges(name, 2)).classify(p).category == finer.category == "correct"
    with pytest.raises(ValueError, match="give 0 for it"):
        ConditionalRisk(hinges(name, 2)).classify(np.array([1e-15, 1 - 1e-15]))
