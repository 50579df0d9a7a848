"""The ISVM §9 robustness study: leave-one-out numbers, pooling, Table 4, and how it runs."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import LeaveOneOut, cross_val_predict

from msvm.core.kernels import isvm_gamma, kernel_matrix
from msvm.verify import robustness
from msvm.verify.cli import main
from msvm.verify.robustness import (
    MACHINES,
    StudyConfig,
    Task,
    effective_sizes,
    pooled,
    run_study,
    run_task,
    table4,
    write_outputs,
)
from msvm.verify.sign_test import likelihood_ratio, sign_test_p_value

TINY = dict(
    datasets=("iris", "wine"),
    sizes=(24,),
    realisations=2,
    machines=("inhibitory", "one_vs_all"),
    gammas=(5.0,),
    Cs=(0.5, 5.0),
)


def read(path):
    return sorted(map(tuple, csv.reader(open(path))))


@pytest.mark.parametrize(
    "machine", ["inhibitory", "weston_watkins", "simplex_hinge", "weston_watkins_printed"]
)
def test_task_accuracy_equals_scikit_learn_leave_one_out_refits(machine):
    config = StudyConfig(
        datasets=("wine",),
        sizes=(30,),
        realisations=1,
        machines=(machine,),
        gammas=(5.0, 10.0),
        Cs=(0.6, 8.1),
        tol=1e-6,
    )
    X, y = robustness.load_dataset("wine")
    result = run_task(Task("wine", 30, 0, machine), X, y, config)
    Xs, ys = robustness.preprocess(X[result.indices], config.preprocessing), y[result.indices]
    assert len(set(result.indices)) == 30
    for a, g in enumerate(config.gammas):
        K = kernel_matrix(Xs, Xs, "rbf", isvm_gamma(g, X.shape[1]))
        for b, C in enumerate(config.Cs):
            model = MACHINES[machine](kernel="precomputed", C=C, tol=1e-6, random_state=0)
            refit = cross_val_predict(clone(model), K, ys, cv=LeaveOneOut())
            assert result.accuracy[a, b] == pytest.approx(np.mean(refit == ys), abs=1e-12)
    assert 0.5 < result.accuracy.min() < 1.0  # a non-trivial problem: some points are missed


def test_pooling_ranks_settings_by_their_mean_over_realisations():
    acc = np.array([[0.9, 0.5, 0.7, 0.6], [0.7, 0.9, 0.7, 0.6]])  # means 0.8 0.7 0.7 0.6
    ten, quarter, half = pooled(acc)
    assert ten == pytest.approx(0.8)  # ceil(0.4) = 1 setting
    assert quarter == pytest.approx(0.8)  # 1 setting
    assert half == pytest.approx(0.75)  # best 2 of 4


def test_likelihood_ratios_reproduce_isvm_table4():
    printed = {
        (13, 14): 446,
        (12, 14): 52,
        (11, 14): 11.35,
        (10, 14): 3.77,
        (9, 14): 1.78,
        (8, 9): 22.17,
        (7, 9): 4.35,
    }
    for (k, n), value in printed.items():
        assert likelihood_ratio(k, n) == pytest.approx(value, rel=0.02)
    assert likelihood_ratio(7, 14) == 1.0 and likelihood_ratio(0, 0) == 1.0
    # the exact levels behind the paper's thresholds (a finding: not 5 % and 1 %)
    assert sign_test_p_value(10, 14) == pytest.approx(1471 / 2**14)
    assert sign_test_p_value(11, 14) == pytest.approx(470 / 2**14)


def test_sizes_are_capped_once_like_the_papers_iris_row():
    assert effective_sizes((50, 100, 200, 500), 150) == [(50, 50), (100, 100), (200, 140)]
    assert effective_sizes((50, 100, 200, 500), 1797)[-1] == (500, 500)
    assert effective_sizes((200, 50), 178) == [(50, 50), (200, 160)]


def test_serial_joblib_and_dask_give_the_same_tables(tmp_path):
    config = StudyConfig(**TINY)
    outputs = {}
    for name, kwargs in {"serial": {}, "joblib": {"jobs": 2}, "dask": {"workers": 2}}.items():
        results = run_study(config, tmp_path / name, progress=False, **kwargs)
        write_outputs(results, config, tmp_path / name)
        outputs[name] = read(tmp_path / name / "table3.csv")
        accuracy = {r.task: r.accuracy.tolist() for r in results}
        outputs[name + " tasks"] = accuracy
    assert outputs["serial"] == outputs["joblib"] == outputs["dask"]
    assert outputs["serial tasks"] == outputs["joblib tasks"] == outputs["dask tasks"]
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0") as cluster:
        remote = run_study(config, tmp_path / "remote", scheduler=cluster.scheduler_address)
    assert {r.task: r.accuracy.tolist() for r in remote} == outputs["serial tasks"]
    assert len(outputs["serial"]) == 1 + 2 * 2  # header + (iris, wine) x 2 machines


def test_an_unreachable_scheduler_is_a_message_before_the_folder_is_made(tmp_path, monkeypatch):
    """Nothing listens on port 9: a ValueError naming the address after SCHEDULER_TIMEOUT (it
    was a traceback from the first task, after config.json had been written)."""
    monkeypatch.setattr(robustness, "SCHEDULER_TIMEOUT", 1)
    with pytest.raises(ValueError, match="--scheduler tcp://127.0.0.1:9: no Dask scheduler"):
        run_study(StudyConfig(**TINY), tmp_path / "out", scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "out").exists()


def test_an_interrupted_study_resumes_where_it_stopped(tmp_path, monkeypatch):
    config = StudyConfig(**TINY)
    complete = run_study(config, tmp_path / "complete", progress=False)
    calls = []
    real = robustness.run_task

    def interrupted(task, X, y, cfg):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(task)
        return real(task, X, y, cfg)

    monkeypatch.setattr(robustness, "run_task", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_study(config, tmp_path / "resumed", progress=False)
    assert len(list((tmp_path / "resumed" / "tasks").glob("*.json"))) == 3
    ran = []
    monkeypatch.setattr(robustness, "run_task", lambda t, *args: ran.append(t) or real(t, *args))
    resumed = run_study(config, tmp_path / "resumed", progress=False)
    assert len(ran) == len(complete) - 3  # only the missing tasks ran
    assert {r.task: r.accuracy.tolist() for r in resumed} == {
        r.task: r.accuracy.tolist() for r in complete
    }


def test_a_study_grows_on_finished_tasks_but_not_across_grids(tmp_path):
    first = run_study(StudyConfig(**TINY), tmp_path, progress=False)
    ran = []
    real_run = robustness.run_task
    grown = {**TINY, "realisations": 3, "machines": ("inhibitory", "one_vs_all", "lee_lin_wahba")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(robustness, "run_task", lambda t, *a: ran.append(t) or real_run(t, *a))
        second = run_study(StudyConfig(**grown), tmp_path, progress=False)
    assert len(second) == 2 * 3 * 3 and len(ran) == len(second) - len(first)
    assert all(t.realisation == 2 or t.machine == "lee_lin_wahba" for t in ran)
    for change in ({"seed": 1}, {"Cs": (0.5, 6.0)}, {"tol": 1e-4}):
        with pytest.raises(ValueError, match="holds results for another"):
            run_study(StudyConfig(**{**TINY, **change}), tmp_path, progress=False)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"machines": ("svm",)}, "Unknown machines"),
        ({"realisations": 0}, "realisations"),
        ({"Cs": (1.0, -1.0)}, "positive"),
        ({"gammas": ()}, "positive"),
        ({"sizes": (2,)}, "at least 4"),
        ({"machines": ("inhibitory", "inhibitory")}, "repeated"),
        ({"Cs": (0.5, 0.5)}, "repeated"),
    ],
)
def test_bad_configurations_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        StudyConfig(**{**TINY, **change})


def test_unknown_data_set_is_refused(tmp_path):
    with pytest.raises(ValueError, match="Unknown data set"):
        run_study(StudyConfig(**{**TINY, "datasets": ("mnistt",)}), tmp_path, progress=False)


def test_command_line_writes_table3_with_the_issue_columns(tmp_path, capsys):
    data = tmp_path / "three.csv"
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(m, 1.0, size=(20, 3)) for m in (0.0, 1.5, 3.0)])
    rows = [[*map(str, x), f"c{k // 20}"] for k, x in enumerate(X)]
    data.write_text("a,b,c,label\n" + "\n".join(",".join(r) for r in rows) + "\n")
    out = tmp_path / "study"
    argv = [
        "robustness",
        "--datasets",
        "iris",
        str(data),
        "--sizes",
        "20",
        "50",
        "--realisations",
        "2",
        "--machines",
        "inhibitory",
        "weston_watkins",
        "--gammas",
        "5",
        "--C-max",
        "3",
        "--C-step",
        "1",
        "--seed",
        "3",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    table = list(csv.reader(open(out / "table3.csv")))
    assert table[0] == ["dataset", "n_s", "machine", "pct10", "pct25", "pct50"]
    assert {(r[0], r[1]) for r in table[1:]} == {
        ("iris", "20"),
        ("iris", "50"),
        ("three", "20"),
        ("three", "50"),
    }
    assert all(50.0 <= float(v) <= 100.0 for r in table[1:] for v in r[3:])
    assert (out / "robustness.png").stat().st_size > 0
    assert json.loads((out / "config.json").read_text())["config"]["seed"] == 3
    assert "| iris | 20 | inhibitory |" in capsys.readouterr().out


def write_csv(path, text):
    path.write_text(text)
    return str(path)


def test_csv_data_sets_are_checked_with_clear_errors(tmp_path):
    good = "a,b,label\n" + "".join(f"{k % 5},{k % 3},{k % 2}\n" for k in range(30)) + "\n\n"
    X, y = robustness.load_dataset(write_csv(tmp_path / "good.csv", good))
    assert X.shape == (30, 2) and set(y) == {"0", "1"}  # blank lines skipped
    cases = {
        "short.csv": ("a,b,label\n1,2,x\n3,y\n", "line 3: 2 fields"),
        "word.csv": ("a,b,label\n1,2,x\n3,,y\n", "line 3, column 'b'"),
        "empty.csv": ("a,b,label\n", "no data rows"),
        "one.csv": ("a,label\n" + "1,x\n2,x\n3,x\n", "one class"),
    }
    for name, (text, message) in cases.items():
        with pytest.raises(ValueError, match=message):
            robustness.load_dataset(write_csv(tmp_path / name, text))
    tiny = write_csv(
        tmp_path / "tiny.csv", "a,label\n" + "".join(f"{k},{k % 2}\n" for k in range(8))
    )
    with pytest.raises(ValueError, match="too few"):
        run_study(StudyConfig(**{**TINY, "datasets": (tiny,)}), tmp_path / "t", progress=False)


def test_a_refused_study_leaves_its_folder_usable(tmp_path):
    with pytest.raises(ValueError, match="Unknown data set"):
        run_study(StudyConfig(**{**TINY, "datasets": ("irs",)}), tmp_path, progress=False)
    assert not (tmp_path / "config.json").exists()
    with pytest.raises(ValueError, match="workers"):
        run_study(StudyConfig(**TINY), tmp_path, workers=0, progress=False)
    assert len(run_study(StudyConfig(**TINY), tmp_path, progress=False)) == 8
    with pytest.raises(ValueError, match="label_column"):
        run_study(StudyConfig(**{**TINY, "label_column": "y"}), tmp_path, progress=False)


def test_table4_counts_ties_against_the_inhibitory_machine():
    pct = {
        ("a", 50, "inhibitory"): (90.0, 89.0, 88.0),
        ("a", 50, "one_vs_all"): (89.0, 89.0, 88.5),  # better, tie, worse
        ("b", 50, "inhibitory"): (80.0, 80.0, 80.0),
        ("b", 50, "one_vs_all"): (79.0, 79.0, 79.0),
    }
    sizes = {"a": [(50, 50), (100, 100)], "b": [(50, 50), (100, 100)]}
    entries = table4(pct, sizes, ["one_vs_all"])
    at_50 = [(e.wins, e.n) for e in entries if e.nominal == 50]
    assert at_50 == [(2, 2), (1, 2), (1, 2)]
    assert [e.ratio for e in entries if e.nominal == 50] == [4.0, 1.0, 1.0]
    assert [(e.wins, e.n, e.ratio) for e in entries if e.nominal == 100] == [(0, 0, 1.0)] * 3


def test_command_line_reports_bad_input_without_a_traceback(tmp_path, capsys):
    argv = ["robustness", "--datasets", "mnistt", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "Unknown data set 'mnistt'" in capsys.readouterr().err


@pytest.mark.parametrize("machines", [("one_vs_all", "weston_watkins"), ("inhibitory",)])
def test_an_empty_table4_says_why(tmp_path, machines):
    """Without the inhibitory machine, or with it alone, Table 4 has no row: it was printed as a
    bare header."""
    config = StudyConfig(**{**TINY, "datasets": ("iris",), "realisations": 1, "machines": machines})
    results = run_study(config, tmp_path, progress=False)
    assert write_outputs(results, config, tmp_path)["table4"] == []
    text = (tmp_path / "table4.md").read_text()
    assert "it needs `inhibitory` and at least one other machine" in text
