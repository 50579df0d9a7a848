"""msvm.reference: every primal and dual of the source papers, stated declaratively in cvxpy.

>>> from msvm.reference import Problem, FORMULATIONS
>>> from sklearn.datasets import load_iris
>>> X, y = load_iris(return_X_y=True)
>>> p = Problem(X, y, C=1.0, kernel="linear")
>>> primal = FORMULATIONS["inhibitory"].primal(p)
>>> dual = FORMULATIONS["inhibitory"].dual(p)
>>> bool(abs(primal.objective - dual.objective) / primal.objective < 1e-6)
True

Each module of ``FORMULATIONS`` states one machine, cites the paper and equation of each line,
and reports its optimal value on the canonical scale 1/2 ||W||^2 + C * sum(loss).  cvxpy is
imported only when a problem is solved.
"""

from msvm.reference import (
    crammer_singer,
    inhibitory,
    lee_lin_wahba,
    logistic,
    max_svm,
    mkpm,
    mprot_static,
    one_vs_all,
    simplex_hinge,
    simplex_square,
    sum_svm,
    weston_watkins,
)
from msvm.reference.problem import NotSolvedError, Problem, Solution

FORMULATIONS = {
    module.NAME: module
    for module in (
        inhibitory,
        one_vs_all,
        weston_watkins,
        crammer_singer,
        lee_lin_wahba,
        max_svm,
        sum_svm,
        mprot_static,
        simplex_hinge,
        simplex_square,
        logistic,
    )
}

__all__ = ["FORMULATIONS", "NotSolvedError", "Problem", "Solution", "mkpm"]
