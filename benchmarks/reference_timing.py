"""How long each reference solve (cvxpy + Clarabel) takes on digits with 10 classes.

    python benchmarks/reference_timing.py [--sizes 100 200 400] [--out benchmarks/results/...]

Prints and writes a Markdown table: wall time of the primal and dual solve of every formulation
at each size (RBF, gamma='scale', C=1), with the relative primal-dual gap.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from msvm.core import datasets
from msvm.reference import FORMULATIONS, Problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400])
    parser.add_argument("--formulations", nargs="+", default=list(FORMULATIONS))
    parser.add_argument("--out", default="benchmarks/results/reference_timing.md")
    args = parser.parse_args()

    header = (
        "| formulation | "
        + " | ".join(f"N={n} primal [s] | N={n} dual [s] | N={n} gap" for n in args.sizes)
        + " |"
    )
    lines = [header, "|" + "---|" * (1 + 3 * len(args.sizes))]
    problems = {}
    for n in args.sizes:
        X, y = datasets.load("digits", n_samples=n)
        problems[n] = Problem(X, y, C=1.0, kernel="rbf")
    for name in args.formulations:
        cells = []
        for n in args.sizes:
            p = problems[n]
            t0 = time.perf_counter()
            primal = FORMULATIONS[name].primal(p)
            t1 = time.perf_counter()
            dual = FORMULATIONS[name].dual(p)
            t2 = time.perf_counter()
            gap = abs(primal.objective - dual.objective) / abs(primal.objective)
            cells += [f"{t1 - t0:.2f}", f"{t2 - t1:.2f}", f"{gap:.1e}"]
            print(
                f"{name} N={n}: primal {t1 - t0:.2f}s dual {t2 - t1:.2f}s gap {gap:.1e}", flush=True
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        "Reference solve times on digits (10 classes, RBF, gamma='scale', C=1), cvxpy + Clarabel,\n"
        "measured with `python benchmarks/reference_timing.py` on 2 cores.\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
