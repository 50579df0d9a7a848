"""The ``msvm`` command: ``msvm verify`` runs every cross-check on bundled data (or a CSV file) and
prints the evidence, exiting non-zero when a check fails."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from msvm.core import datasets
from msvm.reference import FORMULATIONS
from msvm.verify.crosscheck import check

# data set -> (kernel, C, subset size, subset size with --quick)
BUNDLED = {
    "iris": ("linear", 0.1, None, None),
    "wine": ("rbf", 1.0, None, 90),
    "digits": ("rbf", 1.0, 150, 100),
}


def load_csv(path: str, label_column: str | None):
    """Features and labels from a CSV file with a header; the label column defaults to the last."""
    import csv

    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    column = header.index(label_column) if label_column else len(header) - 1
    y = np.array([row[column] for row in body])
    X = np.array([[float(v) for i, v in enumerate(row) if i != column] for row in body])
    return X, y


def verify_command(args) -> int:
    rows = []
    for name in args.dataset:
        if name in BUNDLED:
            kernel, C, n, n_quick = BUNDLED[name]
            X, y = datasets.load(name, n_samples=n_quick if args.quick else n)
        else:
            kernel, C = args.kernel or "rbf", args.C or 1.0
            X, y = load_csv(name, args.label_column)
            X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        label = Path(name).name
        print(f"\n{label}: N={len(y)}, L={np.unique(y).size}, kernel={kernel}, C={C}")
        print(
            f"{'formulation':<16}{'primal':>14}{'rel. gap':>10}{'fast':>28}{'fast diff':>11}"
            f"{'output diff':>12}  result"
        )
        for formulation in args.formulations:
            start = time.perf_counter()
            row = check(
                formulation, X, y, C=C, kernel=kernel, dataset=label, paper_solvers=not args.quick
            )
            elapsed = time.perf_counter() - start
            verdict = "pass" if row.passed else "FAIL: " + "; ".join(row.reasons)
            print(
                f"{formulation:<16}{row.primal:>14.6f}{row.gap:>10.1e}{row.fast:>28}"
                f"{row.fast_difference:>11.1e}{row.output_difference:>12.1e}  {verdict}"
                f"  ({elapsed:.1f} s)"
            )
            rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps([r.as_dict() for r in rows], indent=2, default=float))
    if args.markdown:
        lines = [
            "| data | formulation | primal | gap | fast | fast diff | output diff | result |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| {r.dataset} | {r.formulation} | {r.primal:.6f} | {r.gap:.1e} | "
                f"{r.fast} | {r.fast_difference:.1e} | {r.output_difference:.1e} | "
                f"{'pass' if r.passed else 'FAIL'} |"
            )
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    if args.plots:
        from msvm.verify.inhibition import plot, profile

        Path(args.plots).mkdir(parents=True, exist_ok=True)
        profiles = []
        for name in args.dataset:
            if name not in BUNDLED:
                continue
            kernel, C, n, n_quick = BUNDLED[name]
            X, y = datasets.load(name, n_samples=n_quick if args.quick else n)
            profiles.append(profile(X, y, C=C, kernel=kernel, dataset=name))
            print(profiles[-1].summary())
        if profiles:
            plot(profiles, Path(args.plots) / "mu_profile.png")
            print(f"mu profile saved to {Path(args.plots) / 'mu_profile.png'}")
    failed = [r for r in rows if not r.passed]
    print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def claims_command(args) -> int:
    from msvm.verify.claims import all_claims

    claims = all_claims()
    print(f"{'verdict':<8}{'source':<34}claim")
    for c in claims:
        print(f"{c.verdict:<8}{c.source:<34}{c.claim}\n{'':<42}{c.detail}")
    if args.json:
        Path(args.json).write_text(json.dumps([c.as_dict() for c in claims], indent=2))
    if args.markdown:
        lines = ["| claim | source | verdict | detail |", "|---|---|---|---|"]
        lines += [f"| {c.claim} | {c.source} | {c.verdict} | {c.detail} |" for c in claims]
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    held = sum(c.verdict == "holds" for c in claims)
    print(f"\n{held} claims hold, {len(claims) - held} fail (findings about the papers)")
    return 0


def consistency_command(args) -> int:
    from tqdm import tqdm

    from msvm.verify.consistency import monte_carlo

    rows = []
    total = len(args.formulations) * len(args.classes) * args.trials
    with tqdm(total=total, desc="conditional-risk LPs", unit="draw") as progress:
        for formulation in args.formulations:
            for L in args.classes:
                rows.append(monte_carlo(formulation, L, args.trials, args.seed, progress))
    print(
        f"{'formulation':<16}{'L':>3}{'vertex':>9}{'pessimistic':>13}{'optimistic':>12}"
        f"{'ISVM Table 5':>14}"
    )
    for r in rows:
        published = "" if r.published is None else f"{100 * r.published:.0f} %"
        print(
            f"{r.formulation:<16}{r.L:>3}{100 * r.vertex:>8.1f}%{100 * r.pessimistic:>12.1f}%"
            f"{100 * r.optimistic:>11.1f}%{published:>14}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps([r.as_dict() for r in rows], indent=2))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="msvm", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="cross-check the reference and fast layers")
    verify.add_argument(
        "--dataset",
        nargs="+",
        default=list(BUNDLED),
        help="iris, wine, digits, or a CSV file (header; label column last)",
    )
    verify.add_argument("--label-column", help="name of the label column of a CSV file")
    verify.add_argument("--kernel", choices=["linear", "rbf", "poly"], help="for CSV data")
    verify.add_argument("--C", type=float, help="for CSV data")
    verify.add_argument(
        "--formulations", nargs="+", choices=list(FORMULATIONS), default=list(FORMULATIONS)
    )
    verify.add_argument(
        "--quick", action="store_true", help="smaller subsets, without ISVM's own solvers"
    )
    verify.add_argument("--json", help="write the rows as JSON to this file")
    verify.add_argument("--markdown", help="write the table as Markdown to this file")
    verify.add_argument("--plots", help="folder for the figure of E*(mu), the inhibition study")
    claims = commands.add_parser("claims", help="check the papers' printed formulas")
    claims.add_argument("--json", help="write the claims as JSON to this file")
    claims.add_argument("--markdown", help="write the table as Markdown to this file")
    from msvm.verify.consistency import FORMULATIONS as CONSISTENCY_FORMULATIONS

    consistency = commands.add_parser("consistency", help="Bayes-consistency Monte Carlo")
    consistency.add_argument("--classes", type=int, nargs="+", default=[2, 3, 4, 5, 6])
    consistency.add_argument("--trials", type=int, default=1000)
    consistency.add_argument("--seed", type=int, default=0)
    consistency.add_argument(
        "--formulations",
        nargs="+",
        choices=CONSISTENCY_FORMULATIONS,
        default=list(CONSISTENCY_FORMULATIONS),
    )
    consistency.add_argument("--json", help="write the rates as JSON to this file")
    args = parser.parse_args(argv)
    commands_run = {
        "verify": verify_command,
        "claims": claims_command,
        "consistency": consistency_command,
    }
    return commands_run[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
