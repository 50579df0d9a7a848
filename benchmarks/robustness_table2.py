"""ISVM Tables 3 and 4 on the data sets of Table 2, from finished ``msvm robustness`` folders.

    python benchmarks/robustness_table2.py OUT.md FOLDER [FOLDER ...]

Each FOLDER is a study (``config.json`` says its preprocessing); folders of the same
preprocessing are merged (a task done in two of them must agree).  Text above the first generated
section (``## 1. Protocol``) of an existing OUT.md is kept; the rest is rewritten:

1. the protocol table -- per data set and preprocessing, the mean absolute difference between our
   pooled accuracies and ISVM Table 3's for the inhibitory and one-vs-all machines at N_s = 50 and
   100 (best 10 / 25 / 50 %, 12 numbers), on the first ``PROTOCOL_REALISATIONS`` realisations,
   and the preprocessing that comes closest;
2. per data set (with its closest preprocessing) and N_s: every machine's best-10 % accuracy beside
   the paper's, on the realisations every machine of the row has (paired: the first R by index),
   R and summed task time, differences above 2 points flagged;
3. ISVM Table 4 (sign test, exact one-sided p-values) over every data set, each with its closest
   preprocessing, at the paper's N_s and any other the folders hold (issue 20's 150).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from msvm.verify.robustness import (
    DEFAULT_SIZES,
    PREPROCESSING,
    StudyConfig,
    TaskResult,
    effective_sizes,
    load_dataset,
    paper_table3,
    pooled,
    table4,
    table4_markdown,
)

PROTOCOL_MACHINES = ("inhibitory", "one_vs_all")
PROTOCOL_SIZES = (50, 100)
PROTOCOL_REALISATIONS = 3  # the first run's count: protocol distances stay comparable
FIRST_SECTION = "## 1. Protocol"
# One line per data set on why it differs from Table 3 where a reason is known (see the Markdown).
SHIFT = (
    "unexplained: a level shift common to every machine that no preprocessing removes (the "
    "closest is still this far off); the realisations cannot explain it where se is small"
)
REASONS = {
    "abalone": "derived WW above the paper at every size (N_s = 200: +2.6, 500: +3.3), "
    "printed-kernel WW below it at N_s = 100, 200 and 500 (-4.8, -9.0, -12.7; at 500 it and the "
    "simplex hinge, 51.5 and 48.2 %, are near the base rate): the paper's WW between, the size of "
    "either gap unexplained; Table 2's base rate (36 %) is not what any age banding gives (48.4 % "
    "here)",
    "dna": "unexplained: no preprocessing comes within 16 points (every machine ties, the "
    "printed-kernel WW too, 84.2 % at N_s = 500 against the paper's 60.9 and 53.6), and the "
    "paper's 49.6 % at N_s = 50 is below DNA's base rate (51.9 %)",
    "ecoli": "derived machines above the paper at N_s = 50-100 (at 200 within 1.9 but the derived "
    "WW, 2.6 above), printed-kernel "
    "WW below it at 100 and 200: unexplained level shift for the derived machines",
    "glass": "inhibitory / one-vs-all 1.3-2.3 points below the paper at N_s = 50-100 with the "
    "closest preprocessing (none; within noise on 15 realisations), within 1.5 points at 200; "
    "the paper's WW is 7.9 and 9.4 below its inhibitory machine at N_s = 100 and 200: the "
    "derived WW is not (1.1 below at 100, level at 200), the printed-kernel WW is (5.6 below at "
    "100; 65.0 against the paper's 65.8 at 200)",
    "iris": SHIFT,
    "wine": SHIFT,
    "vowel": SHIFT + "; at N_s = 500 (of 528 points, as in the paper) the paper's three machines "
    "are 99.2 %, the paper's 94.5-95.2 (the four others 98.9-99.2)",
    "letter": "the paper's three machines within 1.6 points at N_s = 50 and 100 on 15 "
    "realisations (on 3 they were 4-5 above: noise), within 0.7 at 200 (10 realisations; on 7 "
    "they were 2.7-4.2 above: noise), level at 500; the printed-kernel WW 5-8 points above the "
    "paper's WW at 50-100, level at 200. On raw "
    "letter at gamma = 10 (M = 16) 96 % of the kernel's off-diagonal entries are below 1e-12 and "
    "a quarter of the left-out points have their two top scores within 1e-12: those predictions "
    "are decided by rounding (two solvers of the printed dual differ by up to 16 points at "
    "N_s = 50, benchmarks/NOTES.md stop 25)",
    "landsat": "within noise at N_s = 50-100, within 2.1 points at 200 (10 realisations; on 3 the "
    "derived machines were 2.3-2.7 above), at 500 inhibitory and one-vs-all 1.8 and 2.1 below "
    "the paper (se 0.4-0.6): unexplained",
    "yeast": "within noise but for the inhibitory machine and the printed-kernel WW at N_s = "
    "500, where every machine is below the paper (inhibitory 3.6, se 1.2; one-vs-all 1.8, "
    "derived and printed-kernel WW 2.0 and 2.6): unexplained",
    "mnist": "a 5000-image class-balanced subset, not the paper's 60 000 images; the derived "
    "WW is 3.8, 2.4 and 2.6 points above the paper's at N_s = 100, 200 and 500 (inhibitory and "
    "one-vs-all within 0.6 at 500), the printed-kernel WW 2.8 at 100",
    "segment": "2310 examples here against the paper's 330 (Table 2); WW above the paper; at "
    "N_s = 200 the WW columns 2.0-3.8 points above, inhibitory and one-vs-all 1.5-1.8",
    "shuttle": "within 2 points of the paper on 16 realisations (on 3, one-vs-all and WW were 2 "
    "above at N_s = 100)",
    "vehicle": "derived WW above the paper (+5.8), printed-kernel WW below it (-3.4) at N_s = 100: "
    "the paper's column lies between the two, and again at 500 (derived +13.1, printed -6.6); "
    "the paper's three machines are 4-8 points above the paper at N_s = 50 and 100, 7-11 at 200, "
    "6 (inhibitory) to 13 (WW) at 500: unexplained",
}
ORDER = (
    "inhibitory",
    "one_vs_all",
    "weston_watkins",
    "weston_watkins_printed",
    "crammer_singer",
    "lee_lin_wahba",
    "simplex_hinge",
)


def read_study(folder: Path):
    config = json.loads((folder / "config.json").read_text())["config"]
    groups = defaultdict(list)
    for path in (folder / "tasks").glob("*.json"):
        r = TaskResult.from_dict(json.loads(path.read_text()))
        groups[(r.task.dataset, r.task.n_s, r.task.machine)].append(r)
    return config, groups


def read_studies(folders) -> dict:
    """{preprocessing: (config, groups)}, folders of one preprocessing merged task by task."""
    studies = {}
    for folder in map(Path, folders):
        if not folder.is_dir():  # e.g. a log beside the study folders
            continue
        if not (folder / "config.json").is_file():
            print(f"skipped {folder}: not a study folder (no config.json)", file=sys.stderr)
            continue
        config, groups = read_study(folder)
        prep = config["preprocessing"]
        if prep not in studies:
            studies[prep] = (config, groups)
            continue
        known, merged = studies[prep]
        grid = ("gammas", "Cs", "seed", "tol")
        if any(known.get(k) != config.get(k) for k in grid):
            raise ValueError(f"{folder}: another grid or seed than the other {prep} folders.")
        for key, rs in groups.items():
            have = {r.task.realisation: r for r in merged[key]}
            for r in rs:
                other = have.get(r.task.realisation)
                if other is None:
                    merged[key].append(r)
                elif not np.array_equal(other.accuracy, r.accuracy):
                    raise ValueError(f"{folder}: {r.task} differs from the same task elsewhere.")
    return {p: studies[p] for p in PREPROCESSING if p in studies}  # the columns' order


def paired(summary_groups, name, n_s):
    """The realisation count every machine of row (name, N_s) has."""
    counts = [len(rs) for (d, s, _), rs in summary_groups.items() if (d, s) == (name, n_s)]
    return min(counts)


def summarise(groups, realisations: int | None = None, per_row: bool = False):
    """{(data set, N_s, machine): (pct tuple in percent, realisations, seconds, se)}; with
    ``realisations`` only the first that many (by index) enter, with ``per_row`` only the
    first R of each (data set, N_s) row, R the count its every machine has."""
    out = {}
    for key, rs in groups.items():
        limit = paired(groups, key[0], key[1]) if per_row else realisations
        rs = sorted(rs, key=lambda r: r.task.realisation)[:limit]
        acc = np.stack([r.accuracy.ravel() for r in rs])
        pct = tuple(100.0 * p for p in pooled(acc))
        best = acc[:, np.argmax(acc.mean(axis=0))]  # the best setting, realisation by realisation
        se = 100.0 * best.std(ddof=1) / np.sqrt(len(rs)) if len(rs) > 1 else np.nan
        out[key] = (pct, len(rs), sum(r.seconds for r in rs), se)
    return out


def protocol_distance(summary, paper, dataset, realisations):
    """Mean |ours - paper| over inhibitory / one-vs-all, N_s 50 / 100, best 10 / 25 / 50 %
    (None unless every cell has ``realisations`` realisations)."""
    diffs = []
    for n_s in PROTOCOL_SIZES:
        for machine in PROTOCOL_MACHINES:
            ours = summary.get((dataset, n_s, machine))
            theirs = paper.get((dataset, n_s), {}).get(machine)
            if ours is None or theirs is None or ours[1] < realisations:
                return None
            diffs.extend(abs(a - b) for a, b in zip(ours[0], theirs, strict=True))
    return float(np.mean(diffs))


def difference_note(machine, n_s, ours, theirs, se) -> str:
    """One flagged difference; a row of one realisation has no standard error (se is NaN)."""
    if not np.isfinite(se):
        return f"{machine} N_s={n_s} {ours:.1f} vs {theirs:.1f} (1 realisation, no se)"
    noise = ", noise" if abs(ours - theirs) <= 2 * se else ""
    return f"{machine} N_s={n_s} {ours:.1f} vs {theirs:.1f} (se {se:.1f}{noise})"


def main(out: str, folders: list[str]) -> None:
    paper = paper_table3()
    studies = read_studies(folders)
    n_protocol = PROTOCOL_REALISATIONS
    summaries = {prep: summarise(g, n_protocol) for prep, (_, g) in studies.items()}
    datasets = sorted({k[0] for _, g in studies.values() for k in g})
    preps = list(studies)

    lines = [
        FIRST_SECTION + ": which preprocessing reproduces Table 3",
        "",
        f"Mean absolute difference [points] to ISVM Table 3 over inhibitory and one-vs-all, "
        f"N_s = 50 and 100, best 10 / 25 / 50 % ({n_protocol} realisations each).",
        "",
        "| data set | " + " | ".join(preps) + " | closest |",
        "|---|" + "---|" * (len(preps) + 1),
    ]
    best = {}
    for name in datasets:
        d = {p: protocol_distance(summaries[p], paper, name, n_protocol) for p in preps}
        known = {p: v for p, v in d.items() if v is not None}
        if not known:
            continue
        best[name] = min(known, key=known.get)
        cells = [f"{d[p]:.2f}" if d[p] is not None else "–" for p in preps]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {best[name]} |")
    complete = [
        n for n in best
        if all(protocol_distance(summaries[p], paper, n, n_protocol) is not None for p in preps)
    ]  # fmt: skip
    if complete:  # (a study of one preprocessing a data set has no such row)
        totals = {
            p: np.mean([protocol_distance(summaries[p], paper, n, n_protocol) for n in complete])
            for p in preps
        }
        lines.append(
            f"| **mean over the {len(complete)} data sets with every preprocessing** | "
            + " | ".join(f"{totals[p]:.2f}" for p in preps)
            + f" | {min(totals, key=totals.get)} |"
        )

    # 2. every machine, each data set with its closest preprocessing, all realisations done
    lines += [
        "",
        "## 2. Table 3 (best 10 %): ours / paper",
        "",
        "Each data set with its closest preprocessing; `*` marks a difference above 2 points; "
        "R = realisations, the same subsets for every machine of a row.",
        "",
        "| data set | prep. | N_s | R | task time [s] | " + " | ".join(ORDER) + " |",
        "|---|---|---|---|---|" + "---|" * len(ORDER),
    ]
    combined, flagged = {}, []
    for name in best:
        _, groups = studies[best[name]]
        summary = summarise(groups, per_row=True)
        for n_s in sorted({k[1] for k in summary if k[0] == name}):
            cells, reals, seconds = [], set(), 0.0
            for machine in ORDER:
                entry = summary.get((name, n_s, machine))
                theirs = paper.get((name, n_s), {}).get(machine)
                if machine == "weston_watkins_printed":
                    theirs = paper.get((name, n_s), {}).get("weston_watkins")
                if entry is None:
                    cells.append("–")
                    continue
                pct, r, s, se = entry
                combined[(name, n_s, machine)] = pct
                reals.add(r)
                seconds += s
                if theirs is None:
                    cells.append(f"{pct[0]:.1f}")
                    continue
                diff = pct[0] - theirs[0]
                mark = "*" if abs(diff) > 2 else ""
                if mark:
                    flagged.append((name, n_s, machine, pct[0], theirs[0], se))
                cells.append(f"{pct[0]:.1f} / {theirs[0]:.1f}{mark}")
            r_text = "/".join(str(r) for r in sorted(reals))
            lines.append(
                f"| {name} | {best[name]} | {n_s} | {r_text} | {seconds:.0f} | "
                + " | ".join(cells)
                + " |"
            )

    # 2b. does the printed kernel explain the paper's WW column?
    lines += [
        "",
        "## 2b. Weston-Watkins: the paper's column against the derived and the printed kernel",
        "",
        "Gap = WW minus the inhibitory machine (best 10 %, points); spread = best 10 % minus "
        "best 50 % (the paper's WW column is nearly flat in C).",
        "",
        "| data set | N_s | gap: paper | gap: derived WW | gap: printed WW | spread: paper | "
        "spread: derived | spread: printed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    gaps = []
    for (name, n_s, machine), pct in combined.items():
        if machine != "weston_watkins_printed" or (name, n_s, "weston_watkins") not in combined:
            continue
        theirs = paper.get((name, n_s), {})
        if "weston_watkins" not in theirs or (name, n_s, "inhibitory") not in combined:
            continue
        inhibitory, derived = (
            combined[(name, n_s, "inhibitory")],
            combined[(name, n_s, "weston_watkins")],
        )
        paper_gap = theirs["weston_watkins"][0] - theirs["inhibitory"][0]
        cells = [paper_gap, derived[0] - inhibitory[0], pct[0] - inhibitory[0]]
        cells += [theirs["weston_watkins"][0] - theirs["weston_watkins"][2]]
        cells += [derived[0] - derived[2], pct[0] - pct[2]]
        lines.append(f"| {name} | {n_s} | " + " | ".join(f"{v:+.1f}" for v in cells) + " |")
        gaps.append(cells)
    if gaps:
        g = np.array(gaps)
        below = g[:, 0] < -0.5
        off = np.abs(g[:, 1:3] - g[:, :1]).mean(axis=0)
        both = [np.sum(below & (g[:, k] < -0.5)) for k in (1, 2)]
        lines += [
            "",
            f"Over these {len(g)} rows: mean |gap - paper's gap| derived {off[0]:.2f}, "
            f"printed {off[1]:.2f}; correlation with the paper's gap "
            f"derived {np.corrcoef(g[:, 0], g[:, 1])[0, 1]:.2f}, printed "
            f"{np.corrcoef(g[:, 0], g[:, 2])[0, 1]:.2f}; of the {below.sum()} rows where the "
            f"paper's WW is more than 0.5 below its inhibitory machine, the derived WW is too in "
            f"{both[0]}, the printed in {both[1]}; "
            f"mean |spread - paper's| derived {np.abs(g[:, 4] - g[:, 3]).mean():.2f}, printed "
            f"{np.abs(g[:, 5] - g[:, 3]).mean():.2f}.",
        ]

    # 3. Table 4 over every data set, at the paper's sizes and any other the folders hold (150)
    sizes = sorted(set(DEFAULT_SIZES) | {k[1] for k in combined})
    sizes_by_dataset = {}
    for name in best:
        n_total = load_dataset(name)[1].size
        done = {k[1] for k in combined if k[0] == name}
        sizes_by_dataset[name] = [(a, b) for a, b in effective_sizes(sizes, n_total) if b in done]
    competitors = [m for m in ORDER[1:] if any(k[2] == m for k in combined)]
    entries = table4(combined, sizes_by_dataset, competitors)
    lines += [
        "",
        "## 3. Table 4: sign test over the data sets",
        "",
        "L = likelihood ratio as in the paper; k/n = data sets where the inhibitory machine is "
        "better (ties count against it); p = exact one-sided binomial P(K >= k | p = 1/2).",
        "",
    ]
    lines += table4_markdown(entries, competitors)
    lines += [
        "",
        "## Differences above 2 points (best 10 %)",
        "",
        "se: standard error over the realisations of the best setting's leave-one-out accuracy; "
        "a difference within 2 se is marked (noise).",
        "",
    ]
    for name in best:
        rows = [f for f in flagged if f[0] == name]
        if rows:
            cells = [difference_note(m, s, a, b, se) for _, s, m, a, b, se in rows]
            lines.append(f"- **{name}** ({REASONS.get(name, 'unexplained')}): " + "; ".join(cells))
    text = "\n".join(lines) + "\n"
    Path(out).write_text(preamble(out) + text)
    print(text)


def preamble(out) -> str:
    """The hand-written text above the first generated section of ``out`` ('' if none)."""
    path = Path(out)
    if not path.exists():
        return ""
    old = path.read_text()
    at = old.find("\n" + FIRST_SECTION)
    return old[: at + 1] if at >= 0 else ""


if __name__ == "__main__":
    StudyConfig()  # fail early on a broken install
    main(sys.argv[1], sys.argv[2:])
