"""benchmarks/robustness_table2.py: merging study folders, paired rows, the kept preamble."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from msvm.verify.robustness import Task, TaskResult

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "robustness_table2.py"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPT.with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def table2():
    return load_script("robustness_table2")


@pytest.fixture(scope="module")
def cgrid():
    return load_script("robustness_cgrid")


def write_study(folder: Path, preprocessing: str, tasks: dict, Cs=(0.1, 2.6)):
    """A study folder as ``msvm robustness`` leaves it; ``tasks`` maps Task -> accuracy row."""
    (folder / "tasks").mkdir(parents=True)
    config = {"preprocessing": preprocessing, "gammas": [5.0], "Cs": list(Cs), "seed": 0,
              "tol": 1e-3, "realisations": 99}  # fmt: skip
    (folder / "config.json").write_text(json.dumps({"config": config}))
    for task, accuracy in tasks.items():
        result = TaskResult(task, np.array([accuracy], dtype=float), 1.0, 1, [])
        (folder / "tasks" / task.filename).write_text(json.dumps(result.as_dict()))


def test_folders_of_one_preprocessing_are_merged_not_overwritten(table2, tmp_path):
    a, b = Task("iris", 50, 0, "inhibitory"), Task("iris", 50, 1, "inhibitory")
    write_study(tmp_path / "s1", "standardise", {a: [0.9, 0.8]})
    write_study(tmp_path / "s2", "standardise", {a: [0.9, 0.8], b: [0.7, 0.6]})
    write_study(tmp_path / "n", "none", {a: [0.5, 0.5]})
    (tmp_path / "LOG.md").write_text("a log beside the studies\n")
    folders = [tmp_path / "s1", tmp_path / "n", tmp_path / "LOG.md", tmp_path / "s2"]
    studies = table2.read_studies(folders)
    assert list(studies) == ["none", "standardise"]  # the order of PREPROCESSING
    merged = studies["standardise"][1][("iris", 50, "inhibitory")]
    assert sorted(r.task.realisation for r in merged) == [0, 1]  # the shared task once


def test_merging_refuses_disagreeing_tasks_and_grids(table2, tmp_path):
    a = Task("iris", 50, 0, "inhibitory")
    write_study(tmp_path / "s1", "standardise", {a: [0.9, 0.8]})
    write_study(tmp_path / "s2", "standardise", {a: [0.1, 0.8]})
    write_study(tmp_path / "s3", "standardise", {}, Cs=(0.1, 0.6))
    with pytest.raises(ValueError, match="differs"):
        table2.read_studies([tmp_path / "s1", tmp_path / "s2"])
    with pytest.raises(ValueError, match="grid"):
        table2.read_studies([tmp_path / "s1", tmp_path / "s3"])


def test_rows_pair_machines_on_their_common_realisations(table2, tmp_path):
    tasks = {
        Task("iris", 50, r, "inhibitory"): [1.0, 1.0] if r < 2 else [0.0, 0.0] for r in (0, 1, 2)
    }
    tasks |= {Task("iris", 50, r, "one_vs_all"): [0.5, 0.5] for r in (0, 1)}
    tasks |= {Task("iris", 100, r, "inhibitory"): [1.0, 1.0] for r in (0, 1, 2)}
    write_study(tmp_path / "s", "standardise", tasks)
    groups = table2.read_studies([tmp_path / "s"])["standardise"][1]
    row = table2.summarise(groups, per_row=True)
    # realisation 2 (inhibitory only) is left out of the row
    assert row[("iris", 50, "inhibitory")][:2] == ((100.0, 100.0, 100.0), 2)
    assert row[("iris", 100, "inhibitory")][1] == 3  # another row keeps its own count
    assert table2.summarise(groups)[("iris", 50, "inhibitory")][1] == 3


def test_the_hand_written_preamble_is_kept(table2, tmp_path):
    out = tmp_path / "out.md"
    assert table2.preamble(out) == ""
    out.write_text("# Title\n\nWhat was run.\n\n## 1. Protocol: old\n\nold table\n")
    assert table2.preamble(out) == "# Title\n\nWhat was run.\n\n"
    out.write_text("no generated section\n")
    assert table2.preamble(out) == ""


def test_a_difference_of_one_realisation_has_no_se(table2):
    assert table2.difference_note("inhibitory", 500, 70.0, 67.0, np.nan) == (
        "inhibitory N_s=500 70.0 vs 67.0 (1 realisation, no se)"
    )  # it read "(se nan" before
    assert table2.difference_note("one_vs_all", 50, 70.0, 67.0, 2.0) == (
        "one_vs_all N_s=50 70.0 vs 67.0 (se 2.0, noise)"
    )
    assert table2.difference_note("one_vs_all", 50, 70.0, 67.0, 1.0).endswith("(se 1.0)")


def test_c_grid_comparison_pools_the_fine_runs_and_reports_the_noise_floor(cgrid, tmp_path):
    fine_Cs, coarse_Cs = (0.1, 0.6, 1.1, 1.6), (0.1, 1.1)
    fine = {  # realisations 0 and 1; the fine grid's best setting (C = 0.6) is not on the coarse
        Task("iris", 50, 0, "inhibitory"): [0.8, 0.96, 0.7, 0.7],
        Task("iris", 50, 1, "inhibitory"): [0.8, 0.92, 0.7, 0.7],
        Task("iris", 50, 0, "one_vs_all"): [0.9, 0.9, 0.9, 0.9],
        Task("iris", 50, 1, "one_vs_all"): [0.9, 0.9, 0.9, 0.9],
    }
    coarse = {  # realisation 2 is not compared; one task differs at a shared setting (C = 1.1)
        Task("iris", 50, 0, "inhibitory"): [0.8, 0.7],
        Task("iris", 50, 1, "inhibitory"): [0.8, 0.7],
        Task("iris", 50, 2, "inhibitory"): [0.1, 0.1],
        Task("iris", 50, 0, "one_vs_all"): [0.9, 0.9],
        Task("iris", 50, 1, "one_vs_all"): [0.9, 0.85],
        Task("iris", 50, 2, "one_vs_all"): [0.1, 0.1],
    }
    write_study(tmp_path / "fine", "standardise", fine, Cs=fine_Cs)
    write_study(tmp_path / "coarse", "standardise", coarse, Cs=coarse_Cs)
    # the coarse study has iris under another preprocessing too (its protocol runs): not compared
    other = {Task("iris", 50, r, "inhibitory"): [0.0, 0.0] for r in range(2)}
    write_study(tmp_path / "coarse_none", "none", other, Cs=coarse_Cs)
    out = tmp_path / "cgrid.md"
    coarse_folders = [str(tmp_path / "coarse"), str(tmp_path / "coarse_none")]
    cgrid.main(str(out), [str(tmp_path / "fine")], coarse_folders)
    text = out.read_text()
    # best 10 %: one setting each; fine 94.0 (C = 0.6), its coarse subset 80.0 (C = 0.1)
    assert "| iris | 50 | 2 | 94.0 (+14.0) | 90.0 (+0.0) |" in text
    assert "1 of 4 tasks differ at some shared setting, by up to 5.0 points (one_vs_all)." in text
    fine_table4, coarse_table4 = text.split("## 4. Table 4")[1:]
    assert "| 50 | one_vs_all | L = 2.00 (1/1, p = 0.500)" in fine_table4  # fine: it wins
    assert "| 50 | one_vs_all | L = 1.00 (0/1, p = 1.000)" in coarse_table4  # coarse: it loses


def test_c_grid_comparison_refuses_other_seeds_and_grids_not_nested(cgrid, tmp_path):
    fine = {"seed": 0, "gammas": [5.0], "tol": 1e-3}
    with pytest.raises(ValueError, match="seed differs"):
        cgrid.check_comparable({"none": fine}, {"none": {**fine, "seed": 1}}, (0.1, 0.6), (0.1,))
    with pytest.raises(ValueError, match="not on the fine grid"):
        cgrid.check_comparable({"none": fine}, {"none": fine}, (0.1, 0.6), (0.1, 2.6))
    settings = cgrid.check_comparable(
        {"none": {**fine, "gammas": [5.0, 10.0]}}, {"none": {**fine, "gammas": [5.0, 10.0]}},
        (0.1, 0.6, 1.1), (0.1, 1.1),
    )  # fmt: skip
    assert list(settings) == [0, 2, 3, 5]  # gamma-major rows of the fine accuracies
