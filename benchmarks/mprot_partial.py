"""MultiPrototypeSVC's partial static steps: ``partial_max_iter`` = 2000 against -1 (issue 15).

    python benchmarks/mprot_partial.py [--repeats R]

A partial static step of the annealing runs until the primal falls below E(t) (MProt Figure 11). On
badly scaled features its epochs crawl, and with -1 (Figure 11 as printed) one step can take 10^5
epochs; the default ends it after 2 000. Each workload is fitted with both settings (random_state 0,
1, ..., alternated, one process): CPU time medians, their ratio, the final primal (8) and test error
medians, the fits that ended in a ConvergenceWarning, and the epochs of all static steps
(``n_iter_``). Workloads: raw wine (scikit-learn's copy, 70/30 stratified split, C = 1, the default
150 annealing steps) and wine standardised on the training part; LETTER's first 2 000 training rows
raw (features 0-15) and as the paper scales them (/ 15), tested on its last 5 000, C = 10 and 30
annealing steps (the raw fit with -1 takes minutes). Writes benchmarks/results/mprot_partial.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).parent))
from grid import cpu_fit  # noqa: E402

from msvm import datasets  # noqa: E402
from msvm.fast import MultiPrototypeSVC  # noqa: E402

OUT = Path(__file__).parent / "results" / "mprot_partial.md"


def workloads():
    """(name, parameters, X, y, X_test, y_test)."""
    X, y = load_wine(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    yield "wine, raw", {}, Xtr, ytr, Xte, yte
    scaler = StandardScaler().fit(Xtr)
    yield "wine, standardised", {}, scaler.transform(Xtr), ytr, scaler.transform(Xte), yte
    X, y = datasets.load("letter")
    letter = {"C": 10.0, "n_assignment_steps": 30}
    for name, scale in (("LETTER 2000, raw", 1.0), ("LETTER 2000, / 15", 15.0)):
        yield name, letter, X[:2000] / scale, y[:2000], X[15000:] / scale, y[15000:]


def fit(X, y, params, limit, seed):
    """(fitted estimator, CPU seconds, whether it warned) for one fit (``grid.cpu_fit``)."""
    clf = MultiPrototypeSVC(partial_max_iter=limit, random_state=seed, **params)
    return clf, *cpu_fit(clf, X, y)


def medians(runs, value):
    """{limit: median of value(clf, seconds, warned) over the limit's fits}."""
    return {k: float(np.median([value(*run) for run in r])) for k, r in runs.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = load_wine(return_X_y=True)
    fit(X, y, {"n_assignment_steps": 2}, 2000, 0)  # compile first
    lines = [
        "### MultiPrototypeSVC: partial static steps limited to 2 000 epochs (the default) "
        "or not (-1)",
        "",
        f"`python benchmarks/mprot_partial.py --repeats {args.repeats}`; {args.repeats} fits "
        "each (random_state 0, 1, ...), alternated, medians; CPU time.",
        "",
        "| data | C, steps | 2000 [s] | -1 [s] | ratio | primal (2000 / -1) "
        "| test error [%] (2000 / -1) | epochs (2000 / -1) | fits warned (2000 / -1) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, params, X, y, Xte, yte in workloads():
        runs = {2000: [], -1: []}
        for seed in range(args.repeats):
            for limit in runs:
                runs[limit].append(fit(X, y, params, limit, seed))

        t = medians(runs, lambda c, s, w: s)
        primal = medians(runs, lambda c, s, w: c.objective_)
        error = medians(runs, lambda c, s, w, Xte=Xte, yte=yte: 100 * (1 - c.score(Xte, yte)))
        epochs = medians(runs, lambda c, s, w: c.n_iter_)
        warned = {k: sum(w for _, _, w in r) for k, r in runs.items()}
        setting = f"{params.get('C', 1.0):g}, {params.get('n_assignment_steps', 150)}"
        lines.append(
            f"| {name} | {setting} | {t[2000]:.2f} | {t[-1]:.2f} | {t[2000] / t[-1]:.2f} | "
            f"{primal[2000]:.2f} / {primal[-1]:.2f} | {error[2000]:.2f} / {error[-1]:.2f} | "
            f"{epochs[2000]:.0f} / {epochs[-1]:.0f} | {warned[2000]} / {warned[-1]} |"
        )
        print(lines[-1], flush=True)
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
