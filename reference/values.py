"""The canonical primal value of any solution, recomputed in numpy (no cvxpy).

For a primal solution this restates the optimum with the loss of ``msvm.core.objectives``; for a
dual solution it is the primal objective at the weights recovered from the dual variables, so
``primal_value(dual_solution) - dual_solution.objective`` is the duality gap of that point.
"""

from __future__ import annotations

from msvm.core import objectives
from msvm.core.coding import simplex_code
from msvm.reference.mprot_static import prototype_classes
from msvm.reference.problem import Solution


def training_loss(sol: Solution) -> float:
    """sum of the loss terms at the solution's outputs on the training points (each times its
    pattern's sample weight, ``Problem.sample_weight``)."""
    p, F, name = sol.problem, sol.training_outputs(), sol.formulation
    w = p.sample_weight  # None, or s_i multiplying pattern i's term
    if name in ("inhibitory", "one_vs_all"):
        return objectives.hinge_per_class_loss(F, p.y_index, w)
    if name == "weston_watkins":
        return objectives.weston_watkins_loss(F, p.y_index, sol.extras["margin"], w)
    if name == "sum_svm":
        return objectives.weston_watkins_loss(F, p.y_index, 1.0, w)
    if name == "crammer_singer":
        return objectives.crammer_singer_loss(
            F, p.y_index, sol.extras["cost"], sol.extras["rescaling"], w
        )
    if name == "max_svm":
        return objectives.crammer_singer_loss(F, p.y_index, weights=w)
    if name == "lee_lin_wahba":
        return objectives.lee_lin_wahba_loss(F, p.y_index, w)
    if name == "mprot_static":
        classes = prototype_classes(p.n_classes, sol.extras["n_prototypes"])
        return objectives.multi_prototype_loss(
            F, sol.extras["prototype_index"], classes, p.y_index, w
        )
    if name == "simplex_hinge":
        return objectives.simplex_hinge_loss(F, simplex_code(p.n_classes)[p.y_index], w)
    if name == "simplex_square":
        return objectives.simplex_square_loss(F, simplex_code(p.n_classes)[p.y_index], w)
    if name == "logistic":
        return objectives.logistic_loss(F, p.y_index, w)
    raise ValueError(f"No numpy loss for formulation {name!r}.")


def primal_value(sol: Solution) -> float:
    """1/2 ||W||^2 + C * loss at the solution (canonical scale)."""
    return objectives.canonical_objective(sol.norm_sq, training_loss(sol), sol.problem.C)
