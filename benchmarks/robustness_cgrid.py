"""ISVM's C grid against the coarser one of the study's runs, on the same subsets (issue 20).

    python benchmarks/robustness_cgrid.py OUT.md --fine FOLDER [FOLDER ...] --coarse FOLDER [...]

ISVM §9 pools the leave-one-out accuracies over C = 0.1, 0.6, ..., 49.6 (step 0.5, 100 values)
and two gammas; the study's runs in ``benchmarks/results/robustness_table2.md`` used step 2.5
(0.1, 2.6, ..., 47.6: 20 of the paper's values), so each "best 10 %" pool there is 4 settings
where the paper's is 20.  The fine folders (run with the paper's grid; one preprocessing each)
hold every setting of the coarse grid too, so the grid's effect is measured within them: each
pool over every C against the pool over the coarse grid's C values only, the same leave-one-out
runs.  The coarse folders (the study's own runs, the same seed, gammas, tol and preprocessing)
give the noise floor: at the shared settings a run along the fine path and one along the coarse
path warm-start each C from different predecessors, so at tol their accuracies may differ (and
the printed-kernel WW's solver changed between the runs, commit 00c8234).  Reported, for every
data set and N_s of the fine folders, on the realisations that every machine of the row has:

1. per row, each machine's best-10 % accuracy on the fine grid and the change from its coarse
   subset;
2. per N_s and machine, the mean and largest absolute change at 10 / 25 / 50 %;
3. the noise floor: tasks whose shared settings differ between the two runs, and by how much;
4. ISVM Table 4 (sign test) on either grid over those rows.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from robustness_table2 import ORDER, read_studies, summarise  # noqa: E402

from msvm.verify.robustness import (  # noqa: E402
    DEFAULT_SIZES,
    PERCENTILES,
    effective_sizes,
    load_dataset,
    table4,
    table4_markdown,
)

SAME = ("seed", "gammas", "tol")  # besides the preprocessing (a folder per preprocessing)


def merged_groups(studies: dict, datasets: dict | None = None) -> tuple[dict, tuple, dict]:
    """The groups of one grid's folders in one dict, each preprocessing's limited to the data sets
    ``datasets[preprocessing]`` when given (the coarse study holds some data sets under every
    preprocessing; the fine one each under one), the grid's C values (the same in every folder,
    or an error) and {preprocessing: config}."""
    groups, grids = {}, set()
    for prep, (config, g) in studies.items():
        grids.add(tuple(config["Cs"]))
        for key, rs in g.items():
            if datasets is not None and key[0] not in datasets.get(prep, ()):
                continue
            if key in groups:
                raise ValueError(f"{key} is in the folders of two preprocessings.")
            groups[key] = rs
    if len(grids) != 1:
        raise ValueError("The folders of one grid have different C values.")
    return groups, grids.pop(), {p: config for p, (config, _) in studies.items()}


def check_comparable(fine_configs: dict, coarse_configs: dict, fine_Cs, coarse_Cs) -> np.ndarray:
    """The coarse grid's settings as indices into the fine grid's (gamma-major, as the tasks'
    accuracy rows), after checking that every fine folder has a coarse one of its preprocessing
    with the same seed, gammas and tol and that the coarse C values are fine ones."""
    for prep, config in fine_configs.items():
        other = coarse_configs.get(prep)
        if other is None:
            raise ValueError(f"No coarse folder with preprocessing {prep!r}.")
        for key in SAME:
            if config.get(key) != other.get(key):
                raise ValueError(f"{prep}: {key} differs between the grids.")
    where = {round(C, 9): k for k, C in enumerate(fine_Cs)}
    missing = [C for C in coarse_Cs if round(C, 9) not in where]
    if missing:
        raise ValueError(f"Coarse C values not on the fine grid: {missing}.")
    n_gammas = len(next(iter(fine_configs.values()))["gammas"])
    cols = [where[round(C, 9)] for C in coarse_Cs]
    return np.array([g * len(fine_Cs) + c for g in range(n_gammas) for c in cols])


def shared_rows(fine: dict, coarse: dict) -> dict:
    """The fine groups cut to the realisations that every machine of each (data set, N_s) row
    has on both grids."""
    cut = {}
    for d, n in sorted({(d, n) for d, n, _ in fine}):
        machines = [m for m in ORDER if (d, n, m) in fine and (d, n, m) in coarse]
        have = [
            {r.task.realisation for r in g[(d, n, m)]} for m in machines for g in (fine, coarse)
        ]
        shared = set.intersection(*have) if have else set()
        for m in machines if shared else []:
            cut[(d, n, m)] = [r for r in fine[(d, n, m)] if r.task.realisation in shared]
    return cut


def restricted(groups: dict, settings: np.ndarray) -> dict:
    """The same task results with only ``settings`` of their accuracy rows (the coarse grid)."""
    out = {}
    for key, rs in groups.items():
        out[key] = []
        for r in rs:
            r = copy.copy(r)
            r.accuracy = r.accuracy.ravel()[settings]
            out[key].append(r)
    return out


def noise_floor(fine: dict, coarse: dict, settings: np.ndarray) -> tuple[int, int, float, list]:
    """Tasks compared, tasks whose shared settings differ between the runs, the largest
    difference [points], and the machines those tasks belong to."""
    compared = differ = 0
    largest, machines = 0.0, set()
    for key, rs in fine.items():
        theirs = {r.task.realisation: r for r in coarse[key]}
        for r in rs:
            gap = np.abs(r.accuracy.ravel()[settings] - theirs[r.task.realisation].accuracy.ravel())
            compared += 1
            if gap.max() > 0:
                differ += 1
                largest = max(largest, 100.0 * gap.max())
                machines.add(key[2])
    return compared, differ, largest, [m for m in ORDER if m in machines]


def main(out: str, fine_folders: list[str], coarse_folders: list[str]) -> None:
    fine_studies = read_studies(fine_folders)
    fine, fine_Cs, fine_configs = merged_groups(fine_studies)
    held = {prep: {key[0] for key in g} for prep, (_, g) in fine_studies.items()}
    coarse, coarse_Cs, coarse_configs = merged_groups(read_studies(coarse_folders), held)
    settings = check_comparable(fine_configs, coarse_configs, fine_Cs, coarse_Cs)
    fine = shared_rows(fine, coarse)
    if not fine:
        raise SystemExit("No (data set, N_s, machine) with shared realisations on both grids.")
    subset = restricted(fine, settings)
    s_fine, s_coarse = summarise(fine), summarise(subset)
    rows = sorted({(d, n) for d, n, _ in s_fine})
    machines = [m for m in ORDER if any(k[2] == m for k in s_fine)]
    n_gammas = len(next(iter(fine_configs.values()))["gammas"])
    pool = [int(np.ceil(0.1 * n_gammas * len(Cs))) for Cs in (fine_Cs, coarse_Cs)]
    lines = [
        "### ISVM's C grid against the study's coarser grid, same subsets (issue 20)",
        "",
        f"`python benchmarks/robustness_cgrid.py {out} --fine {' '.join(fine_folders)} "
        f"--coarse {' '.join(coarse_folders)}`",
        "",
        f"Fine: C = {fine_Cs[0]:g}, {fine_Cs[1]:g}, ..., {fine_Cs[-1]:g} ({len(fine_Cs)} values: "
        f"the paper's); coarse: {coarse_Cs[0]:g}, {coarse_Cs[1]:g}, ..., {coarse_Cs[-1]:g} "
        f"({len(coarse_Cs)} of them); {n_gammas} gamma(s), so the best 10 % pools {pool[0]} "
        f"against {pool[1]} settings. Both from the fine runs (the coarse grid's settings taken "
        "from them); R = realisations.",
        "",
        "## 1. Best 10 %: fine grid (change from its coarse subset) [%]",
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
        R = "/".join(map(str, sorted(reals)))
        lines.append(f"| {d} | {n} | {R} | " + " | ".join(cells) + " |")

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

    compared, differ, largest, noisy = noise_floor(fine, coarse, settings)
    lines += [
        "",
        "## 3. Noise floor: the coarse grid's settings in the fine runs against the coarse runs",
        "",
        f"{differ} of {compared} tasks differ at some shared setting"
        + (f", by up to {largest:.1f} points ({', '.join(noisy)})." if differ else "."),
    ]

    sizes = {}
    for d in sorted({d for d, _ in rows}):
        done = {n for dd, n in rows if dd == d}
        pairs = effective_sizes(DEFAULT_SIZES, load_dataset(d)[1].size)
        sizes[d] = [(a, b) for a, b in pairs if b in done]
    competitors = [m for m in machines if m != "inhibitory"]
    for title, summary in (("fine (the paper's)", s_fine), ("coarse", s_coarse)):
        pct = {k: v[0] for k, v in summary.items()}
        lines += [
            "",
            f"## 4. Table 4 on the {title} grid, the same rows and realisations",
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
