"""Warm-started leave-one-out (msvm.fast.loo) against N refits from scratch.

    python benchmarks/loo.py

Full wine, RBF (gamma='scale'), C=1, default tol; prints and writes a Markdown table of times
(same run), the speed-up, the engine steps of warm and cold folds, and the agreement of the
predictions.  Goal of issue 6: >= 10x faster with identical accuracies.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from sklearn.base import clone

from msvm.core import datasets
from msvm.fast import CrammerSingerSVC, InhibitorySVC, OneVsAllSVC, WestonWatkinsSVC
from msvm.fast.loo import leave_one_out


def refit_loo(estimator, X, y):
    return np.array(
        [
            clone(estimator).fit(np.delete(X, i, 0), np.delete(y, i)).predict(X[i : i + 1])[0]
            for i in range(len(y))
        ]
    )


def main() -> None:
    X, y = datasets.load("wine")
    lines = [
        "| machine | warm LOO [s] | N refits [s] | speed-up | warm steps | cold steps | "
        "LOO accuracy (warm / refit) |",
        "|---|---|---|---|---|---|---|",
    ]
    leave_one_out(InhibitorySVC(max_iter=2), *datasets.load("wine", n_samples=30))  # compile
    for Estimator in (InhibitorySVC, OneVsAllSVC, WestonWatkinsSVC, CrammerSingerSVC):
        est = Estimator(random_state=0)
        start = time.perf_counter()
        warm, warm_steps = leave_one_out(est, X, y)
        t_warm = time.perf_counter() - start
        _, cold_steps = leave_one_out(est, X, y, warm_start=False)
        start = time.perf_counter()
        refit = refit_loo(est, X, y)
        t_refit = time.perf_counter() - start
        lines.append(
            f"| {Estimator.__name__} | {t_warm:.3f} | {t_refit:.3f} | {t_refit / t_warm:.1f}x | "
            f"{warm_steps} | {cold_steps} | {np.mean(warm == y):.4f} / {np.mean(refit == y):.4f} |"
        )
    text = "### Leave-one-out on wine (178 points), warm-started vs refits\n\n" + "\n".join(lines)
    print(text)
    out = Path(__file__).parent / "results" / "loo.md"
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
