"""Warm-started leave-one-out along a C grid (msvm.fast.loo) against refits from scratch.

    python benchmarks/loo.py [--dataset wine] [--n-samples 100] [--gamma 5] [--C-step 0.5]
        [--preprocessing standardise] [--machines inhibitory ...]

One task of the robustness study (ISVM §9): a random subset of a bundled data set, scaled as the
study scales it (``robustness.preprocess`` fitted on the subset, by default ``standardise`` as
the study's default), the paper's normalised Gaussian exp(-g ||x - x'||^2 / M), the C grid 0.1,
0.6, ..., 49.6.  For every machine it times, in the same run, (a) ``leave_one_out_path`` (one
Gram matrix, warm starts along C, folds seeded from the full-data solution) and (b) the plain
way: for every C, N fits from scratch on the other N - 1 points (the estimator on the
precomputed Gram matrix, so kernel time is excluded from the baseline too), predicting the
left-out point; and (c) the same engine path with every fit and fold started from alpha = 0 (the
solver's share of the saving, without API overhead).  Prints and writes a Markdown table with
the speed-ups and the agreement of the predictions.  Goal of issue 6: >= 10x with identical
accuracies.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone

from msvm.core.kernels import isvm_gamma, kernel_matrix
from msvm.fast.loo import leave_one_out_path
from msvm.verify.robustness import MACHINES, PREPROCESSING, draw_subset, load_dataset, preprocess

# the study's machines that take msvm.fast.loo's path (the printed-kernel WW has its own)
GENERIC = [name for name, machine in MACHINES.items() if not hasattr(machine, "leave_one_out_path")]


def refit_path(estimator, K, y, Cs):
    """For each C: N fits from scratch, each predicting its left-out point."""
    N = len(y)
    predictions = np.empty((len(Cs), N), dtype=y.dtype)
    for k, C in enumerate(Cs):
        model = clone(estimator).set_params(C=C)
        for i in range(N):
            rest = np.delete(np.arange(N), i)
            fit = clone(model).fit(K[np.ix_(rest, rest)], y[rest])
            predictions[k, i] = fit.predict(K[i : i + 1, rest])[0]
    return predictions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="wine", choices=["iris", "wine", "digits"])
    parser.add_argument("--n-samples", type=int, default=100)
    parser.add_argument("--gamma", type=float, default=5.0)
    parser.add_argument("--C-step", type=float, default=0.5)
    parser.add_argument("--C-max", type=float, default=50.0)
    parser.add_argument("--preprocessing", default="standardise", choices=list(PREPROCESSING))
    parser.add_argument("--machines", nargs="+", choices=GENERIC, default=GENERIC)
    args = parser.parse_args()
    X, y = load_dataset(args.dataset)
    idx = draw_subset(y, args.n_samples, 0, args.dataset, 0)
    Xs, ys = preprocess(X[idx], args.preprocessing), y[idx]
    K = kernel_matrix(Xs, Xs, "rbf", isvm_gamma(args.gamma, X.shape[1]))
    Cs = np.arange(0.1, args.C_max, args.C_step)
    leave_one_out_path(MACHINES["inhibitory"](kernel="precomputed"), K, ys, [1.0])  # compile
    lines = [
        "| machine | warm LOO path [s] | refits [s] | speed-up | cold engine path [s] | "
        "speed-up | predictions equal | best LOO accuracy (warm / refits) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    record = []
    for name in args.machines:
        est = MACHINES[name](kernel="precomputed", random_state=0)
        start = time.perf_counter()
        path = leave_one_out_path(est, K, ys, Cs)
        t_warm = time.perf_counter() - start
        start = time.perf_counter()
        refit = refit_path(est, K, ys, Cs)
        t_refit = time.perf_counter() - start
        start = time.perf_counter()
        leave_one_out_path(est, K, ys, Cs, warm_start=False)
        t_cold = time.perf_counter() - start
        equal = float(np.mean(path.predictions == refit))
        best_warm, best_refit = path.accuracy(ys).max(), np.mean(refit == ys, axis=1).max()
        lines.append(
            f"| {name} | {t_warm:.2f} | {t_refit:.2f} | {t_refit / t_warm:.1f}x | {t_cold:.2f} | "
            f"{t_cold / t_warm:.1f}x | {100 * equal:.2f} % | {best_warm:.4f} / {best_refit:.4f} |"
        )
        record.append(dict(machine=name, warm=t_warm, refit=t_refit, cold=t_cold, equal=equal))
        print(lines[-1], flush=True)
    title = (
        f"### Leave-one-out along C = {Cs[0]:g}, {Cs[1]:g}, ..., {Cs[-1]:g} ({Cs.size} values), "
        f"{args.dataset} subset of {args.n_samples} ({args.preprocessing}), g = {args.gamma:g}: "
        "warm path vs refits\n\n"
    )
    text = title + "\n".join(lines)
    print(text)
    out = Path(__file__).parent / "results"
    stem = "loo" if args.dataset == "wine" else f"loo_{args.dataset}"
    (out / f"{stem}.md").write_text(text + "\n")
    (out / f"{stem}.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
