"""ISVM's C grid against the coarser one of the study's runs, on the same subsets (issue 20).

    python benchmarks/robustness_cgrid.py OUT.md --fine FOLDER [FOLDER ...] --coarse FOLDER [...]

ISVM §9 pools the leave-one-out accuracies over C = 0.1, 0.6, ..., 49.6 (step 0.5, 100 values)
and two gammas; the study's runs in ``benchmarks/results/robustness_table2.md`` used step 2.5
(20 values: 0.1, 2.6, ..., 47.6, a subset of the paper's), so each of its "best 10 %" pools is 4
settings where the paper's is 20.  This script takes ``msvm robustness`` folders run with each
grid (one preprocessing per folder) and, for every data set and N_s that the fine folders hold,
compares the two on the realisations every machine of the row has on both grids (the first R by
index: the same subsets, as a realisation's subset does not depend on the grid):

1. per row, each machine's best-10 % accuracy on the fine grid and its change from the coarse;
2. per N_s and machine, the mean and largest absolute change at 10 / 25 / 50 %;
3. ISVM Table 4 (sign test) on each grid over those rows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from robustness_table2 import ORDER, read_studies, summarise  # noqa: E402

from msvm.verify.robustness import PERCENTILES, table4, table4_markdown  # noqa: E402


def common_groups(fine: dict, coarse: dict) -> tuple[dict, dict]:
    """The groups of both grids cut to the realisations that every machine of each (data set,
    N_s) row has on both: {(data set, N_s, machine): [TaskResult]} twice."""
    rows = {(d, n) for d, n, _ in fine}
    cut_fine, cut_coarse = {}, {}
    for d, n in sorted(rows):
        machines = [m for m in ORDER if (d, n, m) in fine and (d, n, m) in coarse]
        if not machines:
            continue
        have = [
            {r.task.realisation for r in group[(d, n, m)]}
            for m in machines
            for group in (fine, coarse)
        ]
        shared = sorted(set.intersection(*have))
        if not shared:
            continue
        for m in machines:
            cut_fine[(d, n, m)] = [r for r in fine[(d, n, m)] if r.task.realisation in shared]
            cut_coarse[(d, n, m)] = [r for r in coarse[(d, n, m)] if r.task.realisation in shared]
    return cut_fine, cut_coarse


def merged_groups(studies: dict) -> tuple[dict, tuple]:
    """Every preprocessing's groups in one dict (a data set is in one folder of a grid), and
    the grid's C values (the same in every folder, or an error)."""
    groups, grids = {}, set()
    for config, g in studies.values():
        grids.add(tuple(config["Cs"]))
        for key, rs in g.items():
            if key in groups:
                raise ValueError(f"{key} is in two folders of one grid.")
            groups[key] = rs
    if len(grids) != 1:
        raise ValueError("The folders of one grid have different C values.")
    return groups, grids.pop()


def main(out: str, fine_folders: list[str], coarse_folders: list[str]) -> None:
    fine, fine_Cs = merged_groups(read_studies(fine_folders))
    coarse, coarse_Cs = merged_groups(read_studies(coarse_folders))
    fine, coarse = common_groups(fine, coarse)
    if not fine:
        raise SystemExit("No (data set, N_s, machine) with shared realisations on both grids.")
    s_fine, s_coarse = summarise(fine), summarise(coarse)
    rows = sorted({(d, n) for d, n, _ in s_fine})
    machines = [m for m in ORDER if any(k[2] == m for k in s_fine)]
    step = lambda Cs: Cs[1] - Cs[0]  # noqa: E731
    lines = [
        "### ISVM's C grid against the study's coarser grid, same subsets (issue 20)",
        "",
        f"`python benchmarks/robustness_cgrid.py {out} --fine {' '.join(fine_folders)} "
        f"--coarse {' '.join(coarse_folders)}`",
        "",
        f"Fine: C = {fine_Cs[0]:g}, {fine_Cs[1]:g}, ..., {fine_Cs[-1]:g} ({len(fine_Cs)} values, "
        f"step {step(fine_Cs):g}: the paper's); coarse: {coarse_Cs[0]:g}, ..., {coarse_Cs[-1]:g} "
        f"({len(coarse_Cs)} values, step {step(coarse_Cs):g}); two gammas each, so the best "
        f"10 % pools {int(np.ceil(0.2 * len(fine_Cs)))} against "
        f"{int(np.ceil(0.2 * len(coarse_Cs)))} settings. R = realisations, the same subsets on "
        "both grids.",
        "",
        "## 1. Best 10 %: fine grid (change from the coarse) [%]",
        "",
        "| data set | N_s | R | " + " | ".join(machines) + " |",
        "|---|---|---|" + "---|" * len(machines),
    ]
    for d, n in rows:
        cells, reals = [], set()
        for m in machines:
            if (d, n, m) not in s_fine:
                cells.append("–")
                continue
            f, c = s_fine[(d, n, m)], s_coarse[(d, n, m)]
            reals.add(f[1])
            cells.append(f"{f[0][0]:.1f} ({f[0][0] - c[0][0]:+.1f})")
        lines.append(
            f"| {d} | {n} | {'/'.join(map(str, sorted(reals)))} | " + " | ".join(cells) + " |"
        )

    lines += [
        "",
        "## 2. Change fine - coarse per N_s and machine: mean |change| / largest change [points]",
        "",
        "| N_s | machine | rows | " + " | ".join(f"best {p} %" for p in PERCENTILES) + " |",
        "|---|---|---|" + "---|" * len(PERCENTILES),
    ]
    for n in sorted({n for _, n in rows}):
        for m in machines:
            keys = [k for k in s_fine if k[1] == n and k[2] == m]
            if not keys:
                continue
            diff = np.array([np.subtract(s_fine[k][0], s_coarse[k][0]) for k in keys])
            worst = diff[np.abs(diff).argmax(axis=0), np.arange(diff.shape[1])]
            cells = [
                f"{np.abs(diff[:, j]).mean():.2f} / {worst[j]:+.1f}" for j in range(diff.shape[1])
            ]
            lines.append(f"| {n} | {m} | {len(keys)} | " + " | ".join(cells) + " |")

    sizes = {}
    for d, n in rows:
        sizes.setdefault(d, []).append((n, n))
    competitors = [m for m in machines if m != "inhibitory"]
    for title, summary in (("fine (the paper's)", s_fine), ("coarse", s_coarse)):
        pct = {k: v[0] for k, v in summary.items()}
        lines += [
            "",
            f"## 3. Table 4 on the {title} grid, the same rows and realisations",
            "",
            *table4_markdown(table4(pct, sizes, competitors), competitors),
        ]
    Path(out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--fine", nargs="+", required=True)
    parser.add_argument("--coarse", nargs="+", required=True)
    args = parser.parse_args()
    main(args.out, args.fine, args.coarse)
