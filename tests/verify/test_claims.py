"""The published-formula checks: their verdicts, and that they respond to what they check."""

from __future__ import annotations

import json

import numpy as np

from msvm.reference import weston_watkins
from msvm.verify import claims
from msvm.verify.cli import main
from msvm.verify.robustness import paper_table3

EXPECTED = {
    ("ISVM appendix E (E.3)", "fails"),
    ("ISVM appendix F (F.4)", "fails"),
    ("ISVM (4.14)-(4.16)", "holds"),
    ("ISVM (8.2)-(8.5), (7.1)", "holds"),
    ("Lecture, class prediction from the dual", "holds"),
    ("MProt (13)", "holds"),
    ("MProt (13)", "slip"),
    ("MProt (11)", "note"),
    ("MKPM (39)", "fails"),
    ("MKPM (42)", "holds"),
    ("MKPM (15)-(16)", "fails"),
    ("Simplex §1.3", "holds"),
    ("Simplex (1.1)", "slip"),
    ("Simplex §1.2", "fails"),
    ("ISVM Theorem 1, Lemma 2", "fails"),
    ("ISVM Table 4", "holds"),
    ("ISVM Table 4, notes", "fails"),
    ("ISVM Tables 3 and 4", "fails"),
}


def test_table4_differs_from_table3_in_four_cells_three_of_them_ties():
    mismatches = claims.table4_mismatches()
    cells = {(n, competitor, percentile) for n, competitor, percentile, *_ in mismatches}
    assert cells == {
        (100, "one_vs_all", 25),
        (100, "weston_watkins", 10),
        (100, "weston_watkins", 25),
        (200, "one_vs_all", 10),
    }
    table = paper_table3()
    rows_by_data = {}
    for (data, _), row in sorted(table.items()):  # sizes in order: nominal 50, 100, 200, 500
        rows_by_data.setdefault(data, []).append(row)
    ties = 0
    for n, competitor, percentile, *_ in mismatches:
        k, position = (10, 25, 50).index(percentile), (50, 100, 200, 500).index(n)
        ties += any(
            len(rows) > position
            and round(rows[position]["inhibitory"][k], 2) == round(rows[position][competitor][k], 2)
            for rows in rows_by_data.values()
        )
    assert ties == 3  # the fourth (WW, 25 %, N_s = 100) has no tie: the paper is inconsistent


def test_verdicts():
    found = {(c.source, c.verdict) for c in claims.all_claims()}
    assert found == EXPECTED


def test_appendix_check_detects_a_correct_simplification(monkeypatch):
    """Were the printed simplification right, the same check would say it holds."""
    real = weston_watkins.printed_kernel
    monkeypatch.setattr(weston_watkins, "printed_kernel", lambda p, simplified=False: real(p))
    assert claims.appendix_kernel("E", "weston_watkins").verdict == "holds"


def test_claims_command_writes_json(tmp_path):
    out = tmp_path / "claims.json"
    assert main(["claims", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert {"claim", "source", "verdict", "detail"} <= set(rows[0])
    assert {r["verdict"] for r in rows} == {"holds", "fails", "slip", "note"}
    assert all(r["reading"] for r in rows)


def test_verdict_with_reading_distinguishes_holds_slip_note_and_fails():
    assert claims.verdict_with_reading(True, False) == "holds"
    assert claims.verdict_with_reading(False, True) == "slip"
    assert claims.verdict_with_reading(False, True, kind="note") == "note"
    assert claims.verdict_with_reading(False, False) == "fails"


def test_mprot_gain_slip_needs_its_reading_to_hold(monkeypatch):
    """A reading that is not the derived gain (the printed one again) makes (13) fail."""
    monkeypatch.setattr(claims, "pair_gain_as_read", lambda v, df, K: 2 * v * df - v * K)
    assert claims.basic_step()[1].verdict == "fails"


def test_simplex_slip_needs_its_reading_to_hold(monkeypatch):
    """A recursion with the wrong shrink factor sqrt(1 - 1/(T+1)^2) breaks Definition 1.1's
    inner products: (1.1) then fails."""

    def wrong(n_classes):
        code = np.array([[1.0], [-1.0]])
        for T in range(2, n_classes):
            first = np.r_[1.0, np.full(T, -1.0 / T)][:, None]
            rest = np.vstack([np.zeros((1, T - 1)), code * np.sqrt(1 - 1 / (T + 1) ** 2)])
            code = np.hstack([first, rest])
        return code

    monkeypatch.setattr(claims, "simplex_code", wrong)
    assert [c.verdict for c in claims.simplex_claims()][1] == "fails"


def test_mprot_scale_note_needs_exactly_the_dropped_factor(monkeypatch):
    """Were the primal optimum other than half the printed dual's (here 1.5 x the real one), the
    scale would be no dropped constant: the claim fails."""
    module = claims.FORMULATIONS["mprot_static"]
    real = module.primal

    def scaled(*args, **kwargs):
        solution = real(*args, **kwargs)
        solution.objective *= 1.5
        return solution

    monkeypatch.setattr(module, "primal", scaled)
    assert claims.mprot_dual_scale().verdict == "fails"
