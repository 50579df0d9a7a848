"""msvm: multiclass large-margin classification, exact (``msvm.reference``) and fast
(``msvm.fast``), with a layer that proves the two agree (``msvm.verify``).

This small top-level package (``top/`` in the repository, mapped to ``msvm`` in pyproject.toml)
carries only the version and ``python -m msvm``; each layer lives in its own folder.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("msvm")  # single source: the distribution's metadata (pyproject.toml)
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
