"""The cross-checks pass on correct layers and fail on deliberately broken ones."""

from __future__ import annotations

import json

import numpy as np
import pytest

from msvm.core import datasets
from msvm.fast import CrammerSingerSVC, OneVsAllSVC
from msvm.reference import FORMULATIONS, Problem
from msvm.verify import check, crosscheck
from msvm.verify.cli import main


@pytest.fixture(scope="module")
def wine():
    return datasets.load("wine", n_samples=60)


@pytest.mark.parametrize(
    "formulation", ["inhibitory", "crammer_singer", "logistic", "mprot_static"]
)
def test_check_passes_on_the_real_layers(wine, formulation):
    row = check(formulation, *wine, C=1.0, kernel="rbf", dataset="wine")
    assert row.passed, row.reasons
    assert row.gap < 1e-6 and row.fast_difference < 1e-4


@pytest.mark.parametrize("formulation", crosscheck.BIASED)
def test_check_of_the_biased_forms_passes_on_the_real_layers(wine, formulation):
    row = check(formulation, *wine, C=1.0, kernel="rbf", fit_intercept=True)
    assert row.passed, row.reasons
    unbiased = check(formulation, *wine, C=1.0, kernel="rbf", paper_solvers=False)
    assert row.primal < unbiased.primal * (1 - 1e-3)  # the bias was in both layers' problems


def test_check_of_a_bias_fails_when_the_fast_layer_ignores_it(wine, monkeypatch):
    """The engine's linear term left without the bias: another problem, and the check says so."""
    from msvm.fast import base

    monkeypatch.setattr(base, "biased_terms", lambda kind, lin0, free, b, y_index: lin0)
    row = check("inhibitory", *wine, C=1.0, kernel="rbf", fit_intercept=True)
    assert not row.passed
    assert any("fast objective" in reason for reason in row.reasons)
    with pytest.raises(ValueError, match="has no fit_intercept"):
        check("sum_svm", *wine, fit_intercept=True)


@pytest.mark.parametrize("formulation", ["max_svm", "sum_svm", "logistic", "weston_watkins"])
def test_weighted_check_passes_and_is_the_duplicated_problem(wine, formulation):
    """With integer sample weights every column of the row solves the weighted problem: its
    optimum is the unweighted one on duplicated rows (weston_watkins: with ISVM's Algorithms 1
    and 2 weighted too)."""
    X, y = wine
    w = np.random.default_rng(0).integers(0, 4, size=y.size).astype(float)
    row = check(formulation, X, y, C=1.0, kernel="rbf", gamma=0.1, sample_weight=w)
    assert row.passed, row.reasons
    counts = w.astype(int)
    twin = Problem(np.repeat(X, counts, axis=0), np.repeat(y, counts), kernel="rbf", gamma=0.1)
    assert row.primal == pytest.approx(FORMULATIONS[formulation].primal(twin).objective, rel=1e-7)


def test_weighted_check_fails_when_the_fast_model_drops_the_weights(wine, monkeypatch):
    class Unweighted(CrammerSingerSVC):
        def fit(self, X, y, sample_weight=None):
            return super().fit(X, y)

    monkeypatch.setitem(crosscheck.FAST, "max_svm", (Unweighted, {}))
    X, y = wine
    w = np.random.default_rng(0).integers(0, 4, size=y.size).astype(float)
    row = check("max_svm", X, y, C=1.0, kernel="rbf", sample_weight=w)
    assert not row.passed
    assert any("fast objective" in reason for reason in row.reasons)


def test_check_fails_when_the_fast_model_solves_another_problem(wine, monkeypatch):
    """Inhibitory checked against one-vs-all (a wrong kernel factor) must fail."""
    monkeypatch.setitem(crosscheck.FAST, "inhibitory", (OneVsAllSVC, {}))
    row = check("inhibitory", *wine, C=1.0, kernel="rbf", paper_solvers=False)
    assert not row.passed
    assert any("fast objective" in reason for reason in row.reasons)


def test_check_fails_on_a_perturbed_dual(wine, monkeypatch):
    module = FORMULATIONS["one_vs_all"]
    real_dual = module.dual

    def perturbed(p, **kw):
        sol = real_dual(p, **kw)
        sol.objective *= 1.01
        sol.coef = sol.coef[np.random.default_rng(0).permutation(len(sol.coef))]
        return sol

    monkeypatch.setattr(module, "dual", perturbed)
    row = check("one_vs_all", *wine, C=1.0, kernel="rbf", paper_solvers=False)
    assert not row.passed
    assert any("gap" in reason for reason in row.reasons)
    assert any("predictions" in reason or "outputs" in reason for reason in row.reasons)


def test_cli_quick_run_writes_json_and_markdown(tmp_path):
    out_json, out_md = tmp_path / "rows.json", tmp_path / "rows.md"
    status = main(
        [
            "verify",
            "--quick",
            "--dataset",
            "iris",
            "--formulations",
            "one_vs_all",
            "simplex_square",
            "--json",
            str(out_json),
            "--markdown",
            str(out_md),
        ]
    )
    assert status == 0
    rows = json.loads(out_json.read_text())
    assert [r["formulation"] for r in rows] == ["one_vs_all", "simplex_square"]
    assert all(r["passed"] for r in rows)
    assert "| iris | one_vs_all |" in out_md.read_text()


def test_quick_digits_logistic_reference_is_solved(tmp_path):
    # README's main job: Clarabel's faer LDL stops at 'optimal_inaccurate' on this exponential-cone
    # dual (Clarabel 0.11.1); the reference layer retries with qdldl instead of crashing.
    out_json = tmp_path / "rows.json"
    argv = ["verify", "--quick", "--dataset", "digits", "--formulations", "logistic"]
    assert main([*argv, "--json", str(out_json)]) == 0
    assert all(r["passed"] for r in json.loads(out_json.read_text()))


def test_cli_reads_a_csv_file(tmp_path):
    X, y = datasets.load("wine", n_samples=45)
    path = tmp_path / "data.csv"
    lines = ["a,b,c,d,label"] + [
        ",".join(map(str, row[:4])) + f",class{c}" for row, c in zip(X, y, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    assert (
        main(["verify", "--dataset", str(path), "--formulations", "crammer_singer", "--quick"]) == 0
    )
