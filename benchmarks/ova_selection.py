"""One-vs-all's selection rule on the (C, gamma) grid (issue 15): the class-by-class greedy solver
(``msvm.fast.separable``) against the cyclic pattern-wise engine, and ``selection="auto"``, which
takes the cyclic engine where the kernel is narrow (``base.NARROW_COUPLING``) on at least
``base.NARROW_MIN_PATTERNS`` patterns, each against
scikit-learn's SVC at the same (C, gamma).

    python benchmarks/ova_selection.py [digits] [mnist] [glass] ... [--repeats R]

The grid benchmark's data, splits, grid, warm-up and clock (``grid.py``: CPU time, everything on
one thread); each cell fits SVC and OneVsAllSVC with each selection, alternating, R times
(default 1), and takes medians.  The selections' order rotates from cell to cell: on MNIST the
fit right after SVC's took ~20 % longer than the same fit later in the cell.  Reported per data
set and gamma: the kernel's coupling (a row's normalised off-diagonal mass over N - 1,
``engine.coupling_mass``) and what "auto" chose; per data set the median ratio to SVC of each
selection over the 18 cells.  Writes
benchmarks/results/ova_selection.md and prints it.
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).parent))
import grid  # noqa: E402

from msvm.fast import OneVsAllSVC  # noqa: E402
from msvm.fast.engine import coupling_mass  # noqa: E402
from msvm.fast.kernels import column_source, kernel_diagonal  # noqa: E402

RESULTS = Path(__file__).parent / "results"
SELECTIONS = ("greedy", "cyclic", "auto")
DEFAULT = ("digits", "mnist", "glass", "vehicle", "vowel", "yeast", "segment", "ecoli", "dna",
           "abalone", "landsat")  # fmt: skip


def coupling(X, gamma: float) -> float:
    """A row's normalised off-diagonal mass over N - 1 (``engine.coupling_mass``) of the RBF
    kernel on X, as a fit with the default cache computes it."""
    source = column_source(X, "rbf", gamma, 3, 0.0, 200)
    kdiag = np.empty(X.shape[0])
    kernel_diagonal(source, kdiag)
    return coupling_mass(source, 0.0, kdiag) / (X.shape[0] - 1)


def run(name: str, repeats: int):
    X, y, train_size = grid.dataset(name)
    Xtr, _, ytr, _ = train_test_split(X, y, train_size=train_size, stratify=y, random_state=0)
    scale = 1.0 / (Xtr.shape[1] * Xtr.var())
    for selection in SELECTIONS:
        grid.warm_up(lambda s=selection, **kw: OneVsAllSVC(selection=s, **kw), Xtr, ytr, scale)
    rows, turn = [], 0
    for factor in grid.GAMMA_FACTORS:
        gamma = factor * scale
        for C in grid.CS_GRID:
            times = {key: [] for key in ("svc", *SELECTIONS)}
            for _ in range(repeats):
                times["svc"].append(grid.cpu_fit(SVC(C=C, gamma=gamma), Xtr, ytr)[0])
                turn += 1
                for k in range(len(SELECTIONS)):
                    selection = SELECTIONS[(turn + k) % len(SELECTIONS)]
                    clf = OneVsAllSVC(C=C, gamma=gamma, selection=selection, random_state=0)
                    times[selection].append(grid.cpu_fit(clf, Xtr, ytr)[0])
                    if selection == "auto":
                        chosen = clf._selection
            t_svc = np.median(times["svc"])
            ratios = {s: np.median(times[s]) / t_svc for s in SELECTIONS}
            rows.append({"C": C, "gamma": factor, "svc": t_svc, "chosen": chosen, **ratios})
            print(f"{name} C={C:g} gamma={factor:g} scale: SVC {t_svc:.3f} s; "
                  + ", ".join(f"{s} {ratios[s]:.2f}" for s in SELECTIONS)
                  + f" (auto: {chosen})", flush=True)  # fmt: skip
    couplings = {f: coupling(Xtr, f * scale) for f in grid.GAMMA_FACTORS}
    return Xtr.shape[0], couplings, rows


def report(results, repeats) -> str:
    lines = [
        "### One-vs-all's selection on the (C, gamma) grid: CPU time ratio to SVC, "
        f"{repeats} fit(s) per cell",
        "",
        "Per data set, the median over its 18 cells of each selection's ratio to SVC, and by gamma "
        "the kernel's coupling (a row's normalised off-diagonal mass over N - 1) with the "
        "selection `auto` took (cyclic at most 0.1, from 200 patterns on) and the medians over "
        "that gamma's six cells.",
        "",
        "| data set (N to fit) | greedy | cyclic | auto | gamma/scale: coupling, auto's choice, "
        "greedy / cyclic medians |",
        "|---|---|---|---|---|",
    ]
    for name, (n, couplings, rows) in results.items():
        medians = [np.median([r[s] for r in rows]) for s in SELECTIONS]
        by_gamma = []
        for factor in grid.GAMMA_FACTORS:
            part = [r for r in rows if r["gamma"] == factor]
            greedy, cyclic = (np.median([r[s] for r in part]) for s in ("greedy", "cyclic"))
            by_gamma.append(f"{factor:g}: {couplings[factor]:.4f}, {part[0]['chosen']}, "
                            f"{greedy:.2f} / {cyclic:.2f}")  # fmt: skip
        lines.append(f"| {name} ({n}) | " + " | ".join(f"{m:.2f}" for m in medians)
                     + " | " + "; ".join(by_gamma) + " |")  # fmt: skip
    lines += ["", "Every cell (ratio to SVC; SVC's CPU seconds):", "",
              "| data set | C | gamma/scale | SVC [s] | greedy | cyclic | auto |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, (_, _, rows) in results.items():
        for r in rows:
            lines.append(f"| {name} | {r['C']:g} | {r['gamma']:g} | {r['svc']:.3f} | "
                         + " | ".join(f"{r[s]:.2f}" for s in SELECTIONS) + " |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv):
    names, repeats = grid.data_sets_and_repeats(argv, DEFAULT)
    results = {name: run(name, repeats) for name in names}
    text = report(results, repeats)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ova_selection.md").write_text(text)
    print(text, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
