"""msvm.verify: proves the reference and fast layers agree.

>>> from msvm import verify                                        # doctest: +SKIP
>>> verify.check("weston_watkins", X, y, C=1.0, kernel="rbf")      # doctest: +SKIP

``check`` returns a :class:`CheckRow` (reference primal and dual, their gap, the fast estimator's
objective and its difference, output and prediction agreement, pass/fail with reasons); the
``msvm verify`` command runs it for every formulation on bundled data.  The published-claim table,
the mu = 1/L study and the Bayes-consistency Monte Carlo of issue 5 are not built yet.
"""

from msvm.verify.crosscheck import CheckRow, check

__all__ = ["CheckRow", "check"]
