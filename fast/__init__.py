"""msvm.fast: numba solvers behind scikit-learn estimators.

The decomposition engine (``msvm.fast.engine``) solves every box-constrained multiclass dual one
pattern at a time; ISVM's own Algorithms 1 and 2 are ``solver="smo"`` and ``solver="sgd"``.
"""

from msvm.fast.estimators import InhibitorySVC, LeeLinWahbaSVC, OneVsAllSVC, WestonWatkinsSVC

__all__ = ["InhibitorySVC", "LeeLinWahbaSVC", "OneVsAllSVC", "WestonWatkinsSVC"]
