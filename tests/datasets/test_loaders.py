"""Loading: parsing, the paper's preprocessing, and the manifest's checks, on shipped fixtures."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from msvm import datasets
from msvm.datasets import Manifest, loaders

from .conftest import FIXTURES

FETCHED = ("abalone", "dna", "ecoli", "glass", "segment", "landsat", "letter", "mnist",
           "shuttle", "vehicle", "vowel", "yeast")  # fmt: skip


@pytest.mark.parametrize("name", FETCHED)
def test_every_fixture_loads_as_the_manifest_says(name, fixture_manifest):
    X, y = datasets.load(name, FIXTURES, manifest=fixture_manifest)
    entry = fixture_manifest.entry(name)
    assert X.dtype == np.float64 and X.shape == (entry.n_samples, entry.n_features)
    assert np.all(np.isfinite(X))
    assert y.shape == (len(X),) and y.dtype.kind == "U"


def test_ecoli_without_iml_and_ims(fixture_manifest):
    X, y = datasets.load("ecoli", FIXTURES, manifest=fixture_manifest)
    assert y.tolist() == ["cp", "im", "omL", "pp"]  # the fixture's four imL / imS rows are gone
    np.testing.assert_array_equal(X[0], [0.49, 0.29, 0.48, 0.50, 0.56, 0.24, 0.35])


def test_abalone_sex_one_hot_and_age_bands(fixture_manifest):
    X, y = datasets.load("abalone", FIXTURES, manifest=fixture_manifest)
    # rings 15, 7, 9, 10, 7, 20, 4, 1, 26 (the fixture's rows)
    assert y.tolist() == ["15-19", "5-9", "5-9", "10-14", "5-9", "20-24", "0-4", "0-4", "25-29"]
    np.testing.assert_array_equal(X[:3, :3], [[1, 0, 0], [1, 0, 0], [0, 1, 0]])  # M, M, F
    np.testing.assert_array_equal(X[4, :3], [0, 0, 1])  # I
    np.testing.assert_allclose(X[0, 3:], [0.455, 0.365, 0.095, 0.514, 0.2245, 0.101, 0.15])


def test_age_bands_are_rings_over_five():
    rings = np.arange(30)
    bands = loaders.abalone_band(rings)
    assert len(set(bands)) == 6  # ISVM Table 2: "6 (age/5)" for rings 1-29
    assert bands[4] == "0-4" and bands[5] == "5-9" and bands[29] == "25-29"
    with pytest.raises(ValueError, match="non-negative"):
        loaders.abalone_band([-1])


def test_yeast_keeps_each_sequence_once(fixture_manifest):
    X, y = datasets.load("yeast", FIXTURES, manifest=fixture_manifest)
    # 7 rows: 3 distinct, then two names twice each (exact copies)
    assert y.tolist() == ["MIT", "MIT", "MIT", "CYT", "CYT"]
    assert len(np.unique(X, axis=0)) == 5


def test_vowel_is_the_training_set_with_ten_features(fixture_manifest):
    X, y = datasets.load("vowel", FIXTURES, manifest=fixture_manifest)
    assert X.shape == (3, 10) and y.tolist() == ["0", "1", "2"]  # the two TT = 1 rows dropped
    np.testing.assert_allclose(X[0, :3], [-3.639, 0.418, -0.670])  # F1 (0.418): not in mlbench


def test_mlbench_frames(fixture_manifest):
    X, y = datasets.load("letter", FIXTURES, manifest=fixture_manifest)
    assert y[0] == "T"  # the label is mlbench's first column
    np.testing.assert_array_equal(X[0], [2, 8, 3, 5, 1, 8, 13, 0, 6, 6, 10, 8, 0, 8, 0, 8])
    X, y = datasets.load("dna", FIXTURES, manifest=fixture_manifest)
    assert X.shape[1] == 180 and set(np.unique(X)) <= {0.0, 1.0}  # factors "0" / "1"
    assert set(y) <= {"ei", "ie", "n"}
    X, y = datasets.load("glass", FIXTURES, manifest=fixture_manifest)
    assert X.shape[1] == 9 and set(y) <= {"1", "2", "3", "5", "6", "7"}


def test_mnist_pixels_as_shipped(fixture_manifest):
    X, y = datasets.load("mnist", FIXTURES, manifest=fixture_manifest)
    assert X.shape == (3, 784) and X.max() <= 255 and X.max() > 1  # not rescaled
    assert all(label.isdigit() for label in y)


def test_iris_and_wine_from_scikit_learn_unscaled():
    X, y = datasets.load("iris")
    assert X.shape == (150, 4) and sorted(set(y)) == ["setosa", "versicolor", "virginica"]
    X, y = datasets.load("wine")
    assert X.shape == (178, 13) and X[:, 12].max() > 1000  # proline, not standardised
    assert max(np.unique(y, return_counts=True)[1]) == 71  # Table 2: 40 %


def test_a_missing_folder_names_the_command_that_fills_it(tmp_path, fixture_manifest):
    folder = tmp_path / "nothing-here"
    with pytest.raises(FileNotFoundError) as error:
        datasets.load("glass", folder, manifest=fixture_manifest)
    message = str(error.value)
    assert "python -m msvm.datasets fetch glass" in message and str(folder) in message
    assert "r-cran-mlbench 2.1-3-1" in message


def test_the_default_folder_is_msvm_data(monkeypatch, fixture_manifest):
    monkeypatch.setenv("MSVM_DATA", str(FIXTURES))
    X, _ = datasets.load("vehicle", manifest=fixture_manifest)
    assert X.shape[1] == 18
    assert set(datasets.available(manifest=fixture_manifest)) == set(FETCHED)


@pytest.mark.parametrize("name", ["yeast", "glass", "mnist"])
def test_a_corrupted_file_is_refused_naming_it(name, data_folder, fixture_manifest):
    path = fixture_manifest.entry(name).path(data_folder)
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 1  # one bit
    path.write_bytes(bytes(content))
    with pytest.raises(ValueError, match="sha256") as error:
        datasets.load(name, data_folder, manifest=fixture_manifest)
    assert str(path) in str(error.value) and "fetch " + name in str(error.value)


def test_data_that_differ_from_the_manifest_are_refused(tmp_path, fixture_manifest):
    raw = json.loads((FIXTURES / "manifest.json").read_text())
    raw["datasets"]["ecoli"]["n_samples"] += 1
    raw["datasets"]["yeast"]["class_counts"]["MIT"] += 1
    (tmp_path / "manifest.json").write_text(json.dumps(raw))
    edited = Manifest(tmp_path / "manifest.json")
    with pytest.raises(ValueError, match=r"ecoli read from .* is \(4, 7\); the manifest says"):
        datasets.load("ecoli", FIXTURES, manifest=edited)
    with pytest.raises(ValueError, match="yeast read from .* has class counts"):
        datasets.load("yeast", FIXTURES, manifest=edited)


def test_unknown_names_are_refused_with_a_suggestion():
    with pytest.raises(ValueError, match="Unknown data set 'yaest'.*Did you mean 'yeast'"):
        datasets.load("yaest")


def test_a_wrong_file_in_place_of_another_is_refused(data_folder, fixture_manifest):
    glass = fixture_manifest.entry("glass").path(data_folder)
    shutil.copyfile(fixture_manifest.entry("vehicle").path(data_folder), glass)
    with pytest.raises(ValueError, match="not the file the manifest lists for 'glass'"):
        datasets.load("glass", data_folder, manifest=fixture_manifest)
