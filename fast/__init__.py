"""msvm.fast: numba solvers behind scikit-learn estimators.

The decomposition engine (``msvm.fast.engine``) solves every box-constrained multiclass dual one
pattern at a time; ISVM's own Algorithms 1 and 2 are ``solver="smo"`` and ``solver="sgd"``.
"""

import hashlib
import os
from pathlib import Path


def _numba_cache_dir() -> str:
    """A numba cache folder keyed by the fast layer's source.

    numba invalidates a cached function when its own file changes, not when a function it calls
    from another module does; keying the folder by every source file of this package means a
    changed kernel can never run stale machine code.
    """
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return str(root / "msvm" / f"numba-{digest.hexdigest()[:16]}")


if not os.environ.get("NUMBA_CACHE_DIR"):
    import numba

    numba.config.CACHE_DIR = _numba_cache_dir()

from msvm.fast.estimators import (  # noqa: E402 - after the cache folder is chosen
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
)
from msvm.fast.mkpm import MKPMClassifier  # noqa: E402
from msvm.fast.model_selection import LeaveOneOutSearchCV, loo_grid_search  # noqa: E402
from msvm.fast.mprot import MultiPrototypeSVC  # noqa: E402
from msvm.fast.simplex import SimplexSVC  # noqa: E402

__all__ = [
    "CrammerSingerSVC",
    "InhibitorySVC",
    "LeaveOneOutSearchCV",
    "LeeLinWahbaSVC",
    "MKPMClassifier",
    "MultiPrototypeSVC",
    "OneVsAllSVC",
    "SimplexSVC",
    "WestonWatkinsSVC",
    "loo_grid_search",
]
