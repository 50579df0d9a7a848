"""The ``msvm`` command for people (issue 19): its version, ``python -m msvm``, help with every
default, progress only where someone watches, the robustness figure, the paper's row for a CSV
file and a CSV reader that reads once."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import msvm
from msvm.core import datasets
from msvm.verify import robustness
from msvm.verify.cli import build_parser, main


def test_version_is_the_distributions_metadata(capsys):
    assert msvm.__version__ == importlib.metadata.version("msvm")
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"msvm {msvm.__version__}"


def test_python_dash_m_msvm_is_the_command_and_the_layers_still_import():
    done = subprocess.run(
        [sys.executable, "-m", "msvm", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"msvm {msvm.__version__}"
    layers = {n: importlib.import_module(f"msvm.{n}") for n in ("fast", "reference", "datasets")}
    assert hasattr(layers["fast"], "InhibitorySVC")
    assert "inhibitory" in layers["reference"].FORMULATIONS and layers["datasets"].NAMES


def subparsers(parser):
    """(name, parser) for every command and sub-command, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                yield from ((f"{name} {n}", p) for n, p in subparsers(sub))


def test_every_option_has_help_and_its_default_shown_without_rst(capsys):
    commands = dict(subparsers(build_parser()))
    assert {"verify", "claims", "consistency", "robustness", "datasets fetch"} <= set(commands)
    for name, sub in commands.items():
        text = sub.format_help()
        assert "``" not in text and "`" not in text, name
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            assert action.help, f"{name} {action.dest} has no help"
            if action.default not in (None, False):
                assert "default: " in sub._get_formatter()._format_action(action), action.dest
    text = commands["robustness"].format_help()
    assert "(default: 0.1)" in text and "(default: iris wine digits)" in text
    assert "(default: all)" in commands["verify"].format_help()


def write_csv(path, X, y):
    header = ",".join([f"x{k}" for k in range(X.shape[1])] + ["label"])
    rows = [",".join([*map(repr, r.tolist()), str(c)]) for r, c in zip(X, y, strict=True)]
    path.write_text("\n".join([header, *rows]) + "\n")
    return str(path)


def test_verify_on_a_large_csv_needs_n_samples(tmp_path, capsys):
    X, y = datasets.load("digits")
    path = write_csv(tmp_path / "digits.csv", X, y)
    assert main(["verify", "--dataset", path]) == 2
    assert f"has {y.size} rows: give --n-samples" in capsys.readouterr().err


def test_progress_goes_to_stderr_only_on_a_terminal(tmp_path, capsys):
    X, y = datasets.load("iris")
    path = write_csv(tmp_path / "flowers.csv", X, y)
    argv = ["verify", "--quick", "--dataset", path, "--n-samples", "30"]
    assert main([*argv, "--formulations", "one_vs_all", "crammer_singer"]) == 0
    captured = capsys.readouterr()
    assert "one_vs_all" in captured.out and "crammer_singer" in captured.out
    assert captured.err == ""  # not a TTY here: no bar


def test_claims_report_progress_per_group():
    from msvm.verify import claims

    class Bar:
        total = steps = 0

        def reset(self, total):
            self.total = total

        def update(self):
            self.steps += 1

    bar = Bar()
    made = []
    # the bar is told the number of groups and moves once per group; one cheap group suffices
    original = claims.CLAIM_MAKERS
    claims.CLAIM_MAKERS = (claims.prediction_simplification, claims.table4_claims)
    try:
        made = claims.all_claims(progress=bar)
    finally:
        claims.CLAIM_MAKERS = original
    assert bar.total == bar.steps == 2 and len(made) >= 2


def rows_for(names_sizes):
    return [
        robustness.Table3Row(name, n_s, machine, (90.0 + k, 89.0, 88.0), 2, 1.0)
        for name, sizes in names_sizes.items()
        for n_s in sizes
        for k, machine in enumerate(("inhibitory", "one_vs_all"))
    ]


def test_robustness_figure_is_a_grid_with_a_legend_and_points_for_one_size(tmp_path):
    rows = rows_for({f"set{k}": (50, 100, 200) for k in range(5)} | {"single": (50,)})
    fig = robustness.figure(rows)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == 6 and fig.legends  # 2 rows of 3 panels, one legend for all
    single = next(ax for ax in shown if ax.get_title() == "single")
    assert all(line.get_linestyle() == "None" for line in single.get_lines())
    several = next(ax for ax in shown if ax.get_title() == "set0")
    assert any(line.get_linestyle() == "-" for line in several.get_lines())
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in shown)
    robustness.plot(rows, tmp_path / "robustness.png")
    import matplotlib.image

    height, width = matplotlib.image.imread(tmp_path / "robustness.png").shape[:2]
    assert width <= 1200 and height <= 900  # a grid, not a strip of 14 panels


@pytest.mark.parametrize(
    "label, name",
    [("glass", "glass"), ("Glass", "glass"), ("isvm-vowel_train", "vowel"), ("E.coli", "ecoli"),
     ("my_data", None), ("iris", "iris")],
)  # fmt: skip
def test_a_csv_label_finds_its_row_of_isvm_table3(label, name):
    assert robustness.paper_name(label) == name


def test_name_equals_file_labels_a_csv_data_set_and_shows_the_papers_row(tmp_path, capsys):
    X, y = datasets.load("iris")
    path = write_csv(tmp_path / "flowers.csv", X, y)
    assert robustness.dataset_label(f"iris={path}") == "iris"
    assert robustness.dataset_label(path) == "flowers"
    out = tmp_path / "study"
    argv = ["robustness", "--datasets", f"iris={path}", "--sizes", "50", "--realisations", "1",
            "--machines", "inhibitory", "--gammas", "5", "--C-max", "2", "--C-step", "1",
            "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    row = next(line for line in (out / "table3.md").read_text().splitlines() if "| iris |" in line)
    printed = robustness.paper_table3()[("iris", 50)]["inhibitory"]
    assert " / ".join(f"{v:.2f}" for v in printed) in row


def test_an_empty_c_grid_is_refused_by_its_options(tmp_path, capsys):
    """--C-max below --C-min had been refused as "gammas and Cs must be non-empty lists",
    blaming the valid gammas and naming neither option."""
    argv = ["robustness", "--datasets", "iris", "--C-min", "10", "--C-max", "1",
            "--out", str(tmp_path / "study"), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "--C-min 10" in error and "--C-max 1" in error and "gammas" not in error


def test_a_large_csv_is_read_once_and_quickly(tmp_path, monkeypatch):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 256, size=(5000, 784)).astype(float)
    y = rng.integers(0, 10, size=5000)
    path = tmp_path / "mnist_like.csv"
    pd.DataFrame(np.column_stack([X, y]).astype(int)).to_csv(path, index=False)
    calls = []
    read_csv = pd.read_csv
    monkeypatch.setattr(pd, "read_csv", lambda *a, **k: calls.append(1) or read_csv(*a, **k))
    monkeypatch.setattr(np, "loadtxt", lambda *a, **k: pytest.fail("read a second time"))
    seconds = []
    for _ in range(2):  # the better of two, on a shared machine
        start = time.perf_counter()
        X_read, y_read = datasets.load_csv(str(path))
        seconds.append(time.perf_counter() - start)
    assert len(calls) == 2  # once per load
    assert np.array_equal(X_read, X) and np.array_equal(y_read.astype(int), y)
    assert min(seconds) < 1.0


def test_compile_fills_the_cache_a_later_first_fit_reads(tmp_path):
    """``msvm compile`` in one process, a first fit in another: with the cache the command wrote,
    the fit compiles nothing (numba writes no file: every function it needs was a cache hit),
    the proximal method's functions included (iris alone need not reach them)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "msvm", "compile", "--estimators", "OneVsAllSVC"]
    subprocess.run([*command, "--kernels", "linear"], env=env, check=True, capture_output=True)
    written = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert any(p.name.startswith("engine.linear_epochs") for p in written)
    assert any(p.name.startswith("ssnal.") for p in written)
    fit = (
        "from sklearn.datasets import load_iris; from msvm.fast import OneVsAllSVC; "
        "OneVsAllSVC(kernel='linear', random_state=0).fit(*load_iris(return_X_y=True))"
    )
    subprocess.run([sys.executable, "-c", fit], env=env, check=True)
    after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert after == written


def test_compile_covers_a_first_fit_larger_than_its_cache(tmp_path):
    """After ``msvm compile``, a one-vs-all fit whose Gram matrix exceeds its cache (columns on
    demand one at a time: fewer than 100 features) compiles nothing.  With only the 240 x 100
    fit (batched columns) the command left the unbatched class solver out: a first fit on 8 000
    points of 20 features compiled it in 4.5 s (stop 61)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "msvm", "compile", "--estimators", "OneVsAllSVC"]
    subprocess.run([*command, "--kernels", "rbf"], env=env, check=True, capture_output=True)
    written = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    fit = (
        "import numpy as np; from msvm.fast import OneVsAllSVC; "
        "rng = np.random.default_rng(1); y = np.arange(1500) % 4; "
        "X = rng.normal(size=(1500, 10)) + y[:, None] * (np.arange(10) < 3); "
        "OneVsAllSVC(cache_size=1, random_state=0).fit(X, y)"
    )
    subprocess.run([sys.executable, "-c", fit], env=env, check=True)
    after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert after == written


def test_compile_covers_every_classifier():
    from sklearn.base import ClassifierMixin

    import msvm.fast
    from msvm.verify.cli import COMPILED

    exported = (getattr(msvm.fast, name) for name in msvm.fast.__all__)
    classifiers = {c.__name__ for c in exported if isinstance(c, type)}
    classifiers = {n for n in classifiers if issubclass(getattr(msvm.fast, n), ClassifierMixin)}
    assert set(COMPILED) == classifiers - {"LeaveOneOutSearchCV"}


def test_a_library_error_inside_a_check_is_a_failing_row_not_a_usage_error(monkeypatch, capsys):
    """A ValueError raised inside a check, once the input has passed, exited 2 as a bad option
    (stop 50's audit): the data set, C and kernel are checked before any row, and a failure of
    the library is a FAIL row, exit 1."""
    from msvm.reference import FORMULATIONS

    def broken(p, **kwargs):
        raise ValueError("a bug inside the reference layer")

    monkeypatch.setattr(FORMULATIONS["weston_watkins"], "dual", broken)
    argv = ["verify", "--quick", "--dataset", "iris", "--formulations", "weston_watkins"]
    assert main(argv) == 1
    assert "FAIL: the check raised ValueError: a bug inside the reference layer" in (
        capsys.readouterr().out
    )
