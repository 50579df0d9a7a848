"""The fast layer's ConvergenceWarnings: one a fit, at the caller's line, with the fit's gap.

The solvers (the engine, ISVM's Algorithms 1-2, the bias's augmented Lagrangian) say why a run
ended above ``tol`` through ``convergence_warning``: into the list their estimator collects, or,
used on their own, as a warning.  The estimator's ``fit`` keeps its last engine run's reason (an
earlier round of the bias's describes no answer) and warns once, after its relative duality gap
is known (``FitWarnings``): a fit at KKT 3.4e-3 > tol with a gap of 1.6e-4 (abalone, C =
1 000) is a usable model, and the user could not tell.
"""

from __future__ import annotations

import sys
import warnings

from sklearn.exceptions import ConvergenceWarning

# Frames of these packages are skipped to find the line a warning is for (scikit-learn's
# ``_fit_context`` wraps every fit; a Pipeline or a search then points at the user's call).
INTERNAL = ("msvm", "sklearn")


def caller_stacklevel() -> int:
    """``warnings.warn``'s stacklevel, called from the function that warns, for the first frame
    outside msvm and scikit-learn (as pandas' ``find_stack_level``)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in INTERNAL:
        frame, level = frame.f_back, level + 1
    return level


def convergence_warning(message: str, messages: list | None) -> None:
    """``message`` appended to ``messages``, the list an estimator collects, or, without one, a
    ConvergenceWarning at the caller's line."""
    if messages is not None:
        messages.append(message)
    else:
        warnings.warn(message, ConvergenceWarning, stacklevel=caller_stacklevel())


class FitWarnings:
    """The ConvergenceWarnings of one fit, given once at its end with its gap (``warn``): the last
    engine run's reason (``new_run`` clears it: an earlier round of the bias's describes no
    answer), the bias's (``bias``, for ``augmented_lagrangian``) and any other (``other``)."""

    def __init__(self):
        self.run, self.bias, self.other = [], [], []

    def new_run(self) -> list:
        """The list a new engine run reports into (the previous run's reason dropped)."""
        self.run.clear()
        return self.run

    def warn(self, gap: float, violation: float) -> int:
        """One ConvergenceWarning with every distinct reason, the fit's KKT violation (its
        ``kkt_violation_``: the reasons quote their runs' own tests, which a recheck from the
        dual variables may revise) and the relative duality gap, which bounds how far the
        objective is from the optimum -- unless the bias did not settle (the dual value is a
        bound only where the bias condition holds).  Returns the fit's ``fit_status_``, as
        SVC's: 1 when it warned, else 0."""
        messages = self.run + self.bias + self.other
        if not messages:
            return 0
        meaning = (
            "not a bound, as the bias did not settle"
            if self.bias
            else "its objective is within that fraction of the optimum's"
        )
        warnings.warn(
            " ".join(dict.fromkeys(messages)) + f" The fit's KKT violation is {violation:.2e} "
            f"(kkt_violation_), and its relative duality gap is {gap:.1e}: {meaning}.",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )
        return 1
