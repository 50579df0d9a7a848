"""(C, gamma) by leave-one-out, and calibrated probabilities, against scikit-learn (issue 19).

    python benchmarks/model_selection.py [--dataset wine] [--n-samples N]
        [--machines inhibitory crammer_singer weston_watkins] [--skip-grid] [--skip-proba]

Part 1, in one run for each machine: ``msvm.fast.loo_grid_search`` (warm leave-one-out path,
one Gram matrix per gamma) against ``GridSearchCV(estimator, cv=LeaveOneOut())`` with the plain
estimator (N refits per cell, n_jobs=1 for both), on the same (C, gamma) grid at the default
tol=1e-3; the time ratio, how many cells have the same accuracy, the largest difference and
both choices.  gamma is numeric, so both resolve the same kernel (see msvm.fast.model_selection).

Part 2: ``probability=True`` against ``SVC(probability=True)`` on digits (half to train, half to
test, stratified, seed 0) at the same gamma (SVC's "scale" value on the training half) and C:
test log-loss, test accuracy of ``predict`` and fit time.

Writes benchmarks/results/model_selection.md (and .json).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, LeaveOneOut, train_test_split
from sklearn.svm import SVC

from msvm.core import datasets
from msvm.fast import loo_grid_search
from msvm.verify.robustness import MACHINES  # the six machines with a leave-one-out path

CS = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
GAMMAS = [0.01, 0.03, 0.1, 0.3]


def grid_part(dataset, n_samples, machines):
    X, y = datasets.load(dataset, n_samples=n_samples)
    for name in machines:  # compile (or load from numba's cache) outside the timings
        loo_grid_search(MACHINES[name](random_state=0), X[::6], y[::6], Cs=[1.0])
        MACHINES[name](random_state=0).fit(X[::6], y[::6])
    lines = [
        f"### Leave-one-out grid search: {dataset}, {len(y)} points, {len(CS)} C x "
        f"{len(GAMMAS)} gamma = {len(CS) * len(GAMMAS)} cells, tol=1e-3\n",
        f"C = {CS}, gamma = {GAMMAS}\n",
        "| machine | loo_grid_search [s] | GridSearchCV(LeaveOneOut) [s] | speed-up | cells "
        "equal | largest difference | best (C, gamma, accuracy): ours / GridSearchCV |",
        "|---|---|---|---|---|---|---|",
    ]
    records = []
    for name in machines:
        estimator = MACHINES[name](random_state=0)
        start = time.perf_counter()
        grid = loo_grid_search(estimator, X, y, Cs=CS, gammas=GAMMAS)
        t_ours = time.perf_counter() - start
        search = GridSearchCV(estimator, {"C": CS, "gamma": GAMMAS}, cv=LeaveOneOut(), n_jobs=1)
        start = time.perf_counter()
        search.fit(X, y)
        t_sklearn = time.perf_counter() - start
        theirs = np.empty_like(grid.accuracy)
        for params, score in zip(
            search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=True
        ):
            theirs[GAMMAS.index(params["gamma"]), CS.index(params["C"])] = score
        equal = int(np.sum(theirs == grid.accuracy))
        best = search.best_params_
        lines.append(
            f"| {name} | {t_ours:.2f} | {t_sklearn:.2f} | {t_sklearn / t_ours:.1f}x | "
            f"{equal} / {theirs.size} | {np.abs(theirs - grid.accuracy).max():.4f} | "
            f"({grid.best_C:g}, {grid.best_gamma:g}, {grid.best_accuracy:.4f}) / "
            f"({best['C']:g}, {best['gamma']:g}, {search.best_score_:.4f}) |"
        )
        print(lines[-1], flush=True)
        records.append(
            dict(machine=name, ours=t_ours, sklearn=t_sklearn, equal_cells=equal,
                 table=grid.accuracy.tolist(), sklearn_table=theirs.tolist())
        )  # fmt: skip
    return "\n".join(lines), records


def probability_part(machines_all):
    X, y = datasets.load("digits")
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, random_state=0, stratify=y
    )
    gamma = 1.0 / (X_train.shape[1] * X_train.var())
    lines = [
        f"### probability=True against SVC(probability=True): digits, {len(y_train)} to train, "
        f"{len(y_test)} to test, gamma = {gamma:.4f} (SVC's 'scale')\n",
        "| C | machine | test log-loss | test accuracy (predict) | fit [s] |",
        "|---|---|---|---|---|",
    ]
    for name in machines_all:  # compile (or load from numba's cache) outside the timings
        MACHINES[name](gamma=gamma, random_state=0).fit(X_train[::5], y_train[::5])
    records = []
    for C in (1.0, 10.0):
        rows = [("SVC", SVC(C=C, gamma=gamma, probability=True, random_state=0))]
        rows += [
            (name, MACHINES[name](C=C, gamma=gamma, probability=True, random_state=0))
            for name in machines_all
        ]
        for name, estimator in rows:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # SVC's probability: 1.9
                start = time.perf_counter()
                model = clone(estimator).fit(X_train, y_train)
                seconds = time.perf_counter() - start
            loss = log_loss(y_test, model.predict_proba(X_test))
            accuracy = float(np.mean(model.predict(X_test) == y_test))
            lines.append(f"| {C:g} | {name} | {loss:.4f} | {accuracy:.4f} | {seconds:.2f} |")
            print(lines[-1], flush=True)
            records.append(dict(C=C, machine=name, log_loss=loss, accuracy=accuracy, fit=seconds))
    return "\n".join(lines), records


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="wine", choices=list(datasets.NAMES))
    parser.add_argument("--n-samples", type=int, default=None)
    parser.add_argument(
        "--machines",
        nargs="+",
        choices=list(MACHINES),
        default=["inhibitory", "crammer_singer", "weston_watkins"],
    )
    parser.add_argument("--skip-grid", action="store_true")
    parser.add_argument("--skip-proba", action="store_true")
    args = parser.parse_args()
    command = "python " + " ".join(["benchmarks/model_selection.py", *sys.argv[1:]])
    parts, record = [f"Command: `{command}`\n"], {}
    if not args.skip_grid:
        text, record["grid"] = grid_part(args.dataset, args.n_samples, args.machines)
        parts.append(text)
    if not args.skip_proba:
        with_probability = [n for n in MACHINES if "probability" in MACHINES[n]().get_params()]
        text, record["probability"] = probability_part(with_probability)
        parts.append(text)
    text = "\n\n".join(parts) + "\n"
    print(text)
    out = Path(__file__).parent / "results"
    (out / "model_selection.md").write_text(text)
    (out / "model_selection.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
