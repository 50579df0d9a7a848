"""``python -m msvm.datasets`` and ``msvm datasets``: the table, and errors as messages."""

from __future__ import annotations

from msvm.datasets.cli import main as datasets_main
from msvm.verify.cli import main as msvm_main


def test_table_of_the_bundled_sets(capsys, tmp_path):
    out_file = tmp_path / "table.md"
    assert datasets_main(["table", "iris", "wine", "--markdown", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "| iris | scikit-learn" in out and "150 x 4 | 3 | 33.3 % | 150, 3, 33.33 %" in out
    assert "| wine |" in out and out_file.read_text() in out


def test_table_names_what_is_not_fetched(capsys, tmp_path):
    assert datasets_main(["table", "glass", "--folder", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "| glass | r-cran-mlbench 2.1-3-1 | not fetched |" in out
    assert f"run `python -m msvm.datasets fetch glass --folder {tmp_path}`" in out  # that folder


def test_msvm_datasets_refuses_an_unknown_name(capsys):
    assert msvm_main(["datasets", "fetch", "yaest"]) == 2
    assert "msvm datasets: error: Unknown data set 'yaest'" in capsys.readouterr().err


def test_table_refuses_a_markdown_file_it_cannot_write_before_reading(tmp_path, capsys):
    from msvm.datasets.cli import main

    assert main(["table", "--markdown", str(tmp_path / "missing" / "t.md")]) == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "data folder" not in captured.out
