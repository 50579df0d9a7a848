"""Real multiclass data sets of ISVM Table 2 for the benchmarks, from Debian's r-cran-mlbench.

Debian's ``r-cran-mlbench`` package ships UCI / StatLog copies of Glass, Vehicle, Vowel,
Satellite (Landsat), DNA, Shuttle and Letter as R data files.  Fill the data folder once with

    python benchmarks/realdata.py fetch [FOLDER]      # apt-get download + dpkg-deb -x

(``FOLDER`` defaults to ``$MSVM_DATA`` or ``~/.cache/msvm``), which needs Debian's apt and the
``rdata`` reader (``pip install -e ".[bench]"``); nothing is downloaded at test time.  Features
are standardised (zero mean, unit variance on the whole set, as the robustness study does);
Vowel's speaker column is dropped (mlbench's copy keeps nine acoustic features).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler

# name -> (R data file, label column, columns that are not features)
MLBENCH = {
    "glass": ("Glass", "Type", ()),
    "vehicle": ("Vehicle", "Class", ()),
    "vowel": ("Vowel", "Class", ("V1",)),  # V1: the speaker (a factor) in mlbench's copy
    "satellite": ("Satellite", "classes", ()),
    "dna": ("DNA", "Class", ()),
    "shuttle": ("Shuttle", "Class", ()),
    "letter": ("LetterRecognition", "lettr", ()),
}
SUBDIR = "usr/lib/R/site-library/mlbench/data"


def data_home(folder: str | os.PathLike | None = None) -> Path:
    """The folder that ``fetch`` fills: the argument, ``$MSVM_DATA`` or ``~/.cache/msvm``."""
    return Path(folder or os.environ.get("MSVM_DATA") or Path.home() / ".cache" / "msvm")


def fetch(folder=None) -> Path:
    """Unpack Debian's r-cran-mlbench into ``folder``/mlbench (apt-get download, dpkg-deb -x)."""
    target = data_home(folder) / "mlbench"
    if (target / SUBDIR).is_dir():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["apt-get", "download", "r-cran-mlbench"], cwd=tmp, check=True)
        (deb,) = Path(tmp).glob("r-cran-mlbench_*.deb")
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(target)], check=True)
    return target


def available(folder=None) -> list[str]:
    """The names whose R data file is in the data folder."""
    data = data_home(folder) / "mlbench" / SUBDIR
    return [name for name, (stem, *_) in MLBENCH.items() if (data / f"{stem}.rda").is_file()]


def load(name: str, folder=None):
    """``X`` (standardised float64) and ``y`` (str labels) of a data set from the folder."""
    import rdata  # the benchmarks' extra: pip install -e ".[bench]"

    if name not in MLBENCH:
        raise ValueError(f"Unknown data set {name!r}; expected one of {sorted(MLBENCH)}.")
    stem, label, dropped = MLBENCH[name]
    path = data_home(folder) / "mlbench" / SUBDIR / f"{stem}.rda"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; run 'python benchmarks/realdata.py fetch'.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rdata: "Unknown encoding. Assumed ASCII."
        frame = next(iter(rdata.read_rda(str(path)).values()))
    y = np.asarray(frame[label].astype(str))
    features = frame.drop(columns=[label, *dropped])
    X = np.column_stack([np.asarray(features[c], dtype=np.float64) for c in features.columns])
    return StandardScaler().fit_transform(X), y


if __name__ == "__main__":
    if sys.argv[1:2] != ["fetch"]:
        sys.exit("usage: python benchmarks/realdata.py fetch [FOLDER]")
    folder = sys.argv[2] if len(sys.argv) > 2 else None
    print(f"mlbench data in {fetch(folder)}: {', '.join(available(folder))}")
