"""MultiPrototypeSVC with a linear kernel: explicit weights against kernel columns (issue 16).

    python benchmarks/mprot_paths.py [--sizes N [N ...]] [--q Q] [--repeats R]

The paper's kernel <x, y> + 1 runs on explicit weights (``mprot.WeightsState``); the same kernel
given as a precomputed Gram matrix runs on kernel columns (``mprot.KernelState``, the whole Gram
matrix in memory): the same fit otherwise, alternated in one process.  LETTER (features / 15,
the first N of the paper's 15 000 training rows, tested on its last 5 000) and digits (pixels
/ 16, 70/30 split), q prototypes per class, C = 1, the default annealing (150 steps).  CPU time
medians; the final primal and test error of both (the annealing's partial static steps stop at
different points on the two paths, so their runs differ: compare the levels, not the digits).
Writes benchmarks/results/mprot_paths.md.
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from msvm import datasets
from msvm.fast import MultiPrototypeSVC

OUT = Path(__file__).parent / "results" / "mprot_paths.md"


def workloads(sizes):
    X, y = datasets.load("letter")
    X = X / 15.0
    for n in sizes:
        yield f"LETTER {n}", X[:n], y[:n], X[15000:], y[15000:]
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, test_size=0.3, random_state=0)
    yield "digits 1257", Xtr, ytr, Xte, yte


def fit(X, y, q, seed, gram):
    """One fit, on explicit weights (gram False) or on the Gram matrix <x, y> + 1."""
    clf = MultiPrototypeSVC(n_prototypes=q, random_state=seed)
    data = X @ X.T + 1.0 if gram else X
    if gram:
        clf.set_params(kernel="precomputed")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.process_time()
        clf.fit(data, y)
        seconds = time.process_time() - start
    assert clf._weights_path != gram
    return clf, seconds, len(caught)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000])
    parser.add_argument("--q", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    fit(*next(workloads([300]))[1:3], args.q, 0, False)  # compile both paths first
    fit(*next(workloads([300]))[1:3], args.q, 0, True)
    lines = [
        f"### MultiPrototypeSVC, q = {args.q}, kernel <x, y> + 1, C = 1: explicit weights "
        "against kernel columns",
        "",
        f"`python benchmarks/mprot_paths.py --sizes {' '.join(map(str, args.sizes))} --q {args.q} "
        f"--repeats {args.repeats}`; {args.repeats} fits each (random_state 0, 1, ...), "
        "alternated, CPU time medians.",
        "",
        "| data | weights [s] | kernel columns [s] | ratio | primal (weights / columns) "
        "| test error [%] (weights / columns) | warnings |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, X, y, Xte, yte in workloads(args.sizes):
        runs = {False: [], True: []}
        for seed in range(args.repeats):
            for gram in (False, True):
                runs[gram].append(fit(X, y, args.q, seed, gram))
        t = {g: float(np.median([s for _, s, _ in r])) for g, r in runs.items()}
        primal = {g: float(np.median([c.objective_ for c, _, _ in r])) for g, r in runs.items()}
        error = {
            g: 100
            * float(
                np.median([1 - c.score(Xte @ X.T + 1.0 if g else Xte, yte) for c, _, _ in r])
            )  # fmt: skip
            for g, r in runs.items()
        }
        warned = sum(w for r in runs.values() for _, _, w in r)
        lines.append(
            f"| {name} | {t[False]:.2f} | {t[True]:.2f} | {t[False] / t[True]:.2f} | "
            f"{primal[False]:.1f} / {primal[True]:.1f} | {error[False]:.2f} / {error[True]:.2f} "
            f"| {warned} |"
        )
        print(lines[-1], flush=True)
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
