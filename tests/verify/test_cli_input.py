"""The ``msvm`` command on bad input: an argparse-style message and exit status 2, never a
traceback (issue 18, item 9), and the options it takes applied, not silently ignored."""

from __future__ import annotations

import json

import numpy as np
import pytest

from msvm.core import datasets
from msvm.verify import check
from msvm.verify.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["consistency", "--trials", "0"], "--trials: '0' is not an integer > 0"),
        (["consistency", "--trials", "-1"], "--trials: '-1' is not an integer > 0"),
        (["consistency", "--classes", "1"], "--classes: '1' is not a number of classes >= 2"),
        (["verify", "--C", "0"], "--C: '0' is not a finite number > 0"),
        (["verify", "--C", "nan"], "--C: 'nan' is not a finite number > 0"),
        (["verify", "--n-samples", "0"], "--n-samples: '0' is not an integer > 0"),
        (["robustness", "--realisations", "0"], "--realisations: '0' is not an integer > 0"),
        (["robustness", "--gammas", "-5"], "--gammas: '-5' is not a finite number > 0"),
        (["robustness", "--seed", "-1"], "--seed: '-1' is not a seed, an integer >= 0"),
        (["consistency", "--seed", "-1"], "--seed: '-1' is not a seed, an integer >= 0"),
    ],
)
def test_bad_options_are_refused_by_argparse(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.startswith(f"msvm {argv[0]}: error:") and err.count("\n") == 1  # one line


@pytest.mark.parametrize(
    "argv, prog, unknown",
    [
        (["verify", "--datset", "iris"], "msvm verify", "--datset iris"),
        (["datasets", "table", "--fodler", "x"], "msvm datasets table", "--fodler"),
        (["datasets", "--bogus", "table"], "msvm datasets", "--bogus"),
        (["verfy"], "msvm", "'verfy'"),
    ],
)
def test_an_unknown_option_is_named_by_its_command_in_one_line(argv, prog, unknown, capsys):
    """argparse printed its usage block first, and left a command's unknown option to the
    top-level parser (``msvm: error: unrecognized arguments: --datset iris``)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}: error: ") and err.count("\n") == 1, err
    assert unknown in err


def test_a_subset_smaller_than_the_classes_is_refused(capsys):
    """--n-samples 2 on iris ran on 3 points (one a class), 5 on 3 too."""
    argv = ["verify", "--quick", "--dataset", "iris", "--formulations", "simplex_square"]
    assert main([*argv, "--n-samples", "2"]) == 2
    assert "subset of 2 rows cannot hold all 3 classes" in capsys.readouterr().err
    assert main([*argv, "--n-samples", "5"]) == 0
    assert "iris: N=5, L=3" in capsys.readouterr().out


@pytest.mark.parametrize("n_samples", [5, 7, 100, 149, 160, 177, 178, 500])
def test_a_balanced_subset_has_the_size_asked_for(n_samples):
    """Classes as equal as their sizes allow: wine's 59 / 71 / 48 at 160 give 56 / 56 / 48."""
    X, y = datasets.load("wine")
    X_sub, y_sub = datasets.balanced_subset(X, y, n_samples, random_state=3)
    counts = np.bincount(y_sub, minlength=3)
    sizes = np.bincount(y)
    assert y_sub.size == min(n_samples, y.size) and np.all(counts <= sizes)  # (500: it hung)
    if n_samples >= y.size:
        return
    short = counts < sizes  # classes not taken whole differ by at most one row
    assert counts[short].max() - counts[short].min() <= 1
    assert np.all(counts[~short] <= counts[short].min() + 1)
    rows = {tuple(row) for row in X}
    assert all(tuple(row) in rows for row in X_sub)
    assert np.unique(X_sub, axis=0).shape[0] == n_samples


@pytest.mark.parametrize(
    "argv, message",
    [
        (["verify", "--dataset", "iris", "--label-column", "species", "--quick"], "--label-column"),
        (["robustness", "--datasets", "iris", "glass", "--label-column", "x"], "--label-column"),
        (["verify", "--dataset", "glass", "--label-column", "x"], "Unknown data set 'glass'"),
    ],
)
def test_a_label_column_for_named_sets_is_refused(argv, message, tmp_path, capsys):
    """The option was ignored, and robustness kept it in its folder's config key (verify has no
    glass: that is the error there, not the label column)."""
    assert main([*argv, *(["--out", str(tmp_path / "r")] if argv[0] == "robustness" else [])]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "dataset, message",
    [
        ("missing.csv", "Unknown data set 'missing.csv'"),
        ("irs", "Did you mean 'iris'?"),
    ],
)
def test_unknown_data_sets_are_a_message_not_a_traceback(dataset, message, capsys):
    assert main(["verify", "--dataset", dataset]) == 2
    assert message in capsys.readouterr().err


def write_csv(path, X, y, delimiter=","):
    header = delimiter.join([f"x{k}" for k in range(X.shape[1])] + ["label"])
    rows = [
        delimiter.join([*map(repr, row.tolist()), str(label)])
        for row, label in zip(X, y, strict=True)
    ]
    path.write_text("\n".join([header, *rows]) + "\n")
    return str(path)


@pytest.mark.parametrize("delimiter", [";", "\t", ","])
def test_csv_delimiters_are_sniffed(tmp_path, delimiter):
    X, y = datasets.load("wine", n_samples=30)
    path = write_csv(tmp_path / "data.csv", X[:, :3], y, delimiter)
    X_read, y_read = datasets.load_csv(path)
    np.testing.assert_array_equal(X_read, X[:, :3])
    np.testing.assert_array_equal(y_read.astype(int), y)


def test_verify_applies_kernel_and_C_to_a_bundled_set(tmp_path, capsys):
    out = tmp_path / "rows.json"
    argv = ["verify", "--quick", "--dataset", "iris", "--formulations", "one_vs_all"]
    assert main([*argv, "--kernel", "rbf", "--C", "5", "--json", str(out)]) == 0
    assert "kernel=rbf, C=5" in capsys.readouterr().out
    X, y = datasets.load("iris")
    expected = check("one_vs_all", X, y, C=5.0, kernel="rbf", paper_solvers=False)
    assert json.loads(out.read_text())[0]["primal"] == pytest.approx(expected.primal, rel=1e-6)


def test_verify_on_a_two_class_csv_with_plots(tmp_path, capsys):
    """Two classes broke verify.check (the fast layer's decision_function is one column), and
    --plots on a CSV wrote an empty folder."""
    X, y = datasets.load("wine")
    keep = y < 2
    path = write_csv(tmp_path / "two.csv", X[keep][::3, :4], y[keep][::3], ";")
    plots = tmp_path / "plots"
    argv = ["verify", "--quick", "--dataset", path, "--plots", str(plots), "--n-samples", "30"]
    assert main(argv) == 0
    assert "N=30, L=2" in capsys.readouterr().out
    assert (plots / "mu_profile.png").stat().st_size > 0


@pytest.mark.parametrize(
    "content, message",
    [
        (b"a b c\n1 2 0\n3 4 1\n", "has one column"),  # spaces: no delimiter splits it
        (b"label\n0\n1\n", "has one column"),
        (b"1,2,0\n3,4,1\n", "is numbers, not a header"),
        (b"1.0,2.0,a\n3.0,4.0,b\n5.0,6.0,a\n", "is a data row"),  # its first row was lost
        (b"a,b,y\n1,2,\xff\n", "is not a UTF-8 text file"),
    ],
)
def test_csv_files_a_new_user_gets_wrong_are_a_message(tmp_path, capsys, content, message):
    """Each was a traceback, a silent loss of the first row, or a fit on every line as a label."""
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    assert main(["verify", "--quick", "--dataset", str(path)]) == 2
    assert message in capsys.readouterr().err
    assert main(["verify", "--quick", "--dataset", "iris", str(path)]) == 2
    assert "iris: N=" not in capsys.readouterr().out  # every data set read before the first run
    assert main(["robustness", "--datasets", f"d={path}", "--sizes", "4", "--out",
                 str(tmp_path / "study")]) == 2  # fmt: skip
    assert not (tmp_path / "study").exists()  # refused before its config.json is written


@pytest.mark.parametrize(
    "text, label_column",
    [
        ("400,410,class\n0.1,0.2,a\n0.3,0.4,b\n", None),  # wavelengths; no class is "class"
        ("0,1,y\n0.1,0.2,y\n0.3,0.4,n\n", None),  # numbered features (pandas'), label "y"
        ("400,410,spam\n0.1,0.2,spam\n0.3,0.4,ham\n", "spam"),  # named on the command line
    ],
)
def test_numbers_naming_the_features_are_a_header(tmp_path, text, label_column):
    """A first line of numbers whose label recurs below is a data row, unless the features are
    numbered 0, 1, ... (or 1, 2, ...) or the label column is named."""
    path = tmp_path / "spectra.csv"
    path.write_text(text)
    X, y = datasets.load_csv(str(path), label_column)
    assert X.shape == (2, 2) and y.size == 2


def test_outputs_that_cannot_be_written_are_refused_before_the_run(tmp_path, capsys):
    folder, file = tmp_path / "folder", tmp_path / "file"
    folder.mkdir()
    file.write_text("")
    for argv, message in (
        (["verify", "--quick", "--json", str(folder)], "is a folder; give a file name"),
        (["claims", "--markdown", str(folder)], "is a folder; give a file name"),
        (["verify", "--quick", "--plots", str(file)], "is a file; give a folder"),
        (["robustness", "--datasets", "iris", "--out", str(file)], "is a file; give a folder"),
    ):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert message in captured.err and "passed" not in captured.out


def test_a_table_2_set_not_fetched_is_a_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MSVM_DATA", str(tmp_path / "empty"))
    argv = ["robustness", "--datasets", "glass", "--sizes", "20", "--out", str(tmp_path / "s")]
    assert main(argv) == 2
    assert "python -m msvm.datasets fetch glass" in capsys.readouterr().err


def test_robustness_names_the_table_2_sets_for_an_unknown_one(tmp_path, capsys):
    argv = ["robustness", "--datasets", "glas", "--sizes", "20", "--out", str(tmp_path / "s")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "'yeast'" in err and "Did you mean 'glass'?" in err
    assert not (tmp_path / "s").exists()


def test_repeated_list_options_run_once(monkeypatch):
    """``--classes 3 3`` ran the study twice and printed every row twice."""
    from msvm.verify import cli

    seen = {}
    monkeypatch.setattr(cli, "consistency_command", lambda args: seen.setdefault("a", args) and 0)
    assert main(["consistency", "--classes", "3", "4", "3", "--trials", "1"]) == 0
    assert seen["a"].classes == [3, 4]


def test_a_reader_that_goes_away_ends_the_command_quietly(monkeypatch, capfd):
    """``msvm claims | head``: the closed pipe ends the command with status 1, no traceback."""
    from msvm.verify import cli

    def closed(args):
        raise BrokenPipeError

    monkeypatch.setattr(cli, "claims_command", closed)
    assert main(["claims"]) == 1
    assert "Traceback" not in capfd.readouterr().err
