"""``python -m msvm.reference``: solve every formulation's primal and dual on a bundled data set
and print the optimal values and their relative gap (exit status 1 if any gap exceeds --tol, 2
for bad options)."""

from __future__ import annotations

import sys
import time

from msvm.core import datasets
from msvm.core.arguments import OneLineParser
from msvm.reference import FORMULATIONS, Problem

DEFAULTS = {"iris": ("linear", 0.1, None), "wine": ("rbf", 1.0, None), "digits": ("rbf", 1.0, 120)}


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m msvm.reference", description=__doc__)
    parser.add_argument("--dataset", choices=datasets.NAMES, default="iris")
    parser.add_argument(
        "--formulations", nargs="+", choices=list(FORMULATIONS), default=list(FORMULATIONS)
    )
    parser.add_argument("--kernel", choices=["linear", "rbf", "poly"])
    parser.add_argument("--C", type=float)
    parser.add_argument("--n-samples", type=int, help="class-balanced subset size")
    parser.add_argument("--solver", default="CLARABEL")
    parser.add_argument("--tol", type=float, default=1e-6, help="largest relative gap that passes")
    args = parser.parse_args(argv)
    import cvxpy as cp

    if args.solver.upper() not in cp.installed_solvers():
        parser.error(f"--solver {args.solver}: not one of {', '.join(cp.installed_solvers())}")
    try:
        return run(args)
    except ValueError as error:  # bad input (C <= 0, a subset too small): a message
        print(f"python -m msvm.reference: error: {error}", file=sys.stderr)
        return 2


def run(args) -> int:
    """Solve and print; the exit status of ``main``."""
    kernel, C, n = DEFAULTS[args.dataset]
    kernel, C = args.kernel or kernel, args.C if args.C is not None else C
    X, y = datasets.load(args.dataset, n_samples=args.n_samples or n)
    p = Problem(X, y, C=C, kernel=kernel)
    print(
        f"{args.dataset}: N={p.n_samples}, L={p.n_classes}, kernel={kernel}, C={C}, "
        f"solver={args.solver}"
    )
    print(f"{'formulation':<16}{'primal':>16}{'dual':>16}{'rel. gap':>11}{'time [s]':>10}")
    failed = []
    for name in args.formulations:
        start = time.perf_counter()
        primal = FORMULATIONS[name].primal(p, solver=args.solver)
        dual = FORMULATIONS[name].dual(p, solver=args.solver)
        gap = abs(primal.objective - dual.objective) / max(abs(primal.objective), 1e-12)
        elapsed = time.perf_counter() - start
        flag = "" if gap <= args.tol else "  FAIL"
        print(
            f"{name:<16}{primal.objective:>16.9f}{dual.objective:>16.9f}{gap:>11.1e}"
            f"{elapsed:>10.2f}{flag}"
        )
        if gap > args.tol:
            failed.append(name)
    if failed:
        print(f"relative gap above {args.tol:g}: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
