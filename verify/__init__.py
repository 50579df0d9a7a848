"""msvm.verify: proves the reference and fast layers agree.

>>> from msvm import verify                                        # doctest: +SKIP
>>> verify.check("weston_watkins", X, y, C=1.0, kernel="rbf")      # doctest: +SKIP

``check`` returns a :class:`CheckRow` (reference primal and dual, their gap, the fast estimator's
objective and its difference, output and prediction agreement, pass/fail with reasons); the
``msvm verify`` command runs it for every formulation on bundled data.  ``claims`` checks the
papers' printed formulas (``msvm claims``), ``inhibition`` studies mu = 1/L (``msvm verify
--plots``), ``consistency`` runs the Bayes-consistency Monte Carlo (``msvm consistency``) and
``robustness`` the leave-one-out study of ISVM §9, Tables 2-4 (``msvm robustness``).
"""

from msvm.verify.crosscheck import CheckRow, check

__all__ = ["CheckRow", "check"]
