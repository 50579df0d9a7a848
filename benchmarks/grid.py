"""The hyperparameter grid benchmark (issue 15): every box and simplex estimator at every (C, gamma)
against scikit-learn's SVC at the same (C, gamma), at default settings.

    python benchmarks/grid.py [digits] [mnist] [glass] [vehicle] [vowel] [yeast] [segment] ...
        [--repeats R]

Data: digits (pixels / 16), the 5 000-image MNIST subset of ``msvm.datasets`` (pixels / 255, 4 000
to fit: issue 15's image workload) and the ISVM Table 2 sets of ``msvm.datasets`` (standardised;
``python -m msvm.datasets fetch`` fills the data folder); each split stratified, random_state=0,
70/30 but for the image set. Grid: C in {0.01, 0.1, 1, 10, 100, 1000} x gamma in {scale / 10, scale,
10 scale} (scale = 1 / (d var X), scikit-learn's "scale"). Each cell fits SVC and every estimator
once after warm-up fits of each, alternating, in an order that rotates from cell to cell (stop 49:
in a fixed order the fit right after SVC's, one-vs-all's, took up to twice as long at C = 0.01 on
abalone and Landsat as the same fit later in the cell, ``ova_selection.py``), and measures CPU time
(``time.process_time``; BLAS, numba and libsvm on one thread: ``one_thread``, without which the
grids before stop 32 charged OpenBLAS's spin after msvm's fits to SVC's time); with ``--repeats R``
the medians of R alternating fits. Reported per estimator: the median and worst time ratio over the
grid, how many cells ended in a ConvergenceWarning, and the mean test-accuracy difference to SVC.
Writes benchmarks/results/grid_<data>.md (summary and every cell) and prints the summary.
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).parent))
import realdata  # noqa: E402

from msvm import datasets  # noqa: E402
from msvm.fast import (  # noqa: E402
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)

RESULTS = Path(__file__).parent / "results"
ESTIMATORS = (OneVsAllSVC, InhibitorySVC, WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC,
              SimplexSVC)  # fmt: skip
CS_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
GAMMA_FACTORS = (0.1, 1.0, 10.0)


def dataset(name: str):
    """(X, y, train_size): digits' pixels / 16 and the image set's / 255 (4 000 to fit, issue 15's
    image workload); the other sets standardised, 70 % to fit."""
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return X / 16.0, y, 0.7
    if name == "mnist":
        X, y = datasets.load("mnist")
        return X / 255.0, y, 4000
    X, y = realdata.load(name)
    return X, y, 0.7


def cpu_fit(estimator, X, y):
    """(seconds of CPU time, whether a ConvergenceWarning was raised) for one fit."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.process_time()
        estimator.fit(X, y)
        seconds = time.process_time() - start
    return seconds, any(issubclass(w.category, ConvergenceWarning) for w in caught)


def cell_text(row, key, t_peer):
    """A cell's time ratio, with ! where a fit ended in a ConvergenceWarning."""
    return f"{np.median(row[key]['t']) / t_peer:.1f}{'!' if row[key]['warned'] else ''}"


def warm_up(Estimator, X, y, scale) -> None:
    """Load or compile every path a cell may take before the timings: 300 points at the grid's
    corners, where the epochs run long enough for transfers, the face Newton steps and the
    interior-point switch.  With a fit of 50 points and 2 epochs only, the first cell to take
    such a path paid for it: digits' WW at (10, scale/10) measured 38-90x SVC in two runs and
    5x in a third (stops 33, 34)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        Estimator(max_iter=2).fit(X[:50], y[:50])
        for C, factor in ((1.0, 1.0), (1000.0, GAMMA_FACTORS[0]), (1000.0, GAMMA_FACTORS[-1])):
            Estimator(C=C, gamma=factor * scale, random_state=0).fit(X[:300], y[:300])


def run(name: str, repeats: int = 1):
    X, y, train_size = dataset(name)
    Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=train_size, stratify=y, random_state=0)
    scale = 1.0 / (Xtr.shape[1] * Xtr.var())
    for Estimator in ESTIMATORS:  # compile and warm the caches outside the timings
        warm_up(Estimator, Xtr, ytr, scale)
    cells, turn = [], 0
    for factor in GAMMA_FACTORS:
        gamma = factor * scale
        for C in CS_GRID:
            peer = SVC(C=C, gamma=gamma)
            row = {"C": C, "gamma": factor, "svc": [], "svc_acc": None}
            for Estimator in ESTIMATORS:
                row[Estimator.__name__] = {"t": [], "warned": False}
            fits = (SVC, *ESTIMATORS)
            for _ in range(repeats):
                turn += 1
                for k in range(len(fits)):
                    Estimator = fits[(turn + k) % len(fits)]
                    if Estimator is SVC:
                        row["svc"].append(cpu_fit(peer, Xtr, ytr)[0])
                        continue
                    clf = Estimator(C=C, gamma=gamma, random_state=0)
                    seconds, warned = cpu_fit(clf, Xtr, ytr)
                    cell = row[Estimator.__name__]
                    cell["t"].append(seconds)
                    cell["warned"] |= warned
                    cell["acc"] = clf.score(Xte, yte)
            row["svc_acc"] = peer.score(Xte, yte)
            cells.append(row)
            t_peer = np.median(row["svc"])
            print(f"{name} C={C:g} gamma={factor:g} scale: SVC {t_peer:.3f} s; "
                  + ", ".join(f"{E.__name__} {cell_text(row, E.__name__, t_peer)}"
                              for E in ESTIMATORS), flush=True)  # fmt: skip
    return X.shape, np.unique(y).size, cells


def report(name, shape, n_classes, cells, repeats):
    split = "4000-point training" if name == "mnist" else "70/30"
    lines = [
        f"### Grid on {name} ({shape[0]} x {shape[1]}, {n_classes} classes; {split} split), "
        f"CPU time ratio to SVC at the same (C, gamma), {repeats} fit(s) per cell",
        "",
        "| estimator | median ratio | worst ratio (C, gamma/scale) | cells with ConvergenceWarning "
        "| mean accuracy - SVC's [points] |",
        "|---|---|---|---|---|",
    ]
    for Estimator in ESTIMATORS:
        key = Estimator.__name__
        ratios = [np.median(r[key]["t"]) / np.median(r["svc"]) for r in cells]
        worst = int(np.argmax(ratios))
        warned = sum(r[key]["warned"] for r in cells)
        dacc = 100 * np.mean([r[key]["acc"] - r["svc_acc"] for r in cells])
        lines.append(
            f"| {key} | {np.median(ratios):.2f} | {ratios[worst]:.1f} "
            f"({cells[worst]['C']:g}, {cells[worst]['gamma']:g}) | {warned} of {len(cells)} | "
            f"{dacc:+.2f} |"
        )
    lines += ["", "Every cell (ratio; `!` ConvergenceWarning; test accuracy in brackets):", ""]
    head = "| C | gamma/scale | SVC [s] (acc.) | " + " | ".join(E.__name__ for E in ESTIMATORS)
    lines += [head + " |", "|---|---|---|" + "---|" * len(ESTIMATORS)]
    for r in cells:
        t_peer = np.median(r["svc"])
        lines.append(
            f"| {r['C']:g} | {r['gamma']:g} | {t_peer:.3f} ({r['svc_acc']:.3f}) | "
            + " | ".join(
                f"{cell_text(r, E.__name__, t_peer)} ({r[E.__name__]['acc']:.3f})"
                for E in ESTIMATORS
            )
            + " |"
        )
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"grid_{name}.md").write_text(text)
    print(text, flush=True)


def data_sets_and_repeats(argv, default):
    """(the data sets named in argv, or the default ones present; R of ``--repeats R``, 1)."""
    repeats = 1
    if "--repeats" in argv:
        k = argv.index("--repeats")
        repeats = int(argv[k + 1])
        argv = argv[:k] + argv[k + 2 :]
    present = set(realdata.available())
    return argv or [name for name in default if name == "digits" or name in present], repeats


def main(argv):
    default = ["digits", "mnist", "glass", "vehicle", "vowel", "yeast", "segment"]
    names, repeats = data_sets_and_repeats(argv, default)
    for name in names:
        shape, n_classes, cells = run(name, repeats)
        report(name, shape, n_classes, cells, repeats)


if __name__ == "__main__":
    main(sys.argv[1:])
