"""What ``fit_intercept=True`` costs, and one-vs-all with a bias against SVC (issue 19).

    python benchmarks/intercept.py [--repeats 3] [--out benchmarks/results/intercept.md]

For every engine machine, on digits (1797 points, pixels / 16, RBF gamma="scale") and on
make_classification(4000, 20 features, 10 informative, 5 classes, one cluster each, seed 0), C = 1:
the fit's CPU time without and with the bias (median of ``--repeats`` alternating runs, each
estimator compiled beforehand) and against SVC's at the same gamma and C, the engine's pattern
steps, the training accuracies and, for one-vs-all, the largest difference of its bias from that
of libsvm's binary SVC of each class against the rest.

Writes the table as Markdown (default benchmarks/results/intercept.md).
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import argparse
import time
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, make_classification
from sklearn.svm import SVC

from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)

ESTIMATORS = [
    OneVsAllSVC,
    InhibitorySVC,
    WestonWatkinsSVC,
    CrammerSingerSVC,
    LeeLinWahbaSVC,
    SimplexSVC,
    MultiPrototypeSVC,
]


def cpu_time(fit):
    start = time.process_time()
    model = fit()
    return time.process_time() - start, model


def data_sets():
    X, y = load_digits(return_X_y=True)
    yield "digits", X / 16.0, y
    X, y = make_classification(
        4000, n_features=20, n_informative=10, n_classes=5, n_clusters_per_class=1, random_state=0
    )
    yield "make_classification 4000", X, y


def make(Estimator, gamma, fit_intercept):
    options = dict(C=1.0, gamma=gamma, random_state=0, fit_intercept=fit_intercept)
    if Estimator is MultiPrototypeSVC:
        options.update(kernel="rbf", n_prototypes=2, n_assignment_steps=5)
    return Estimator(**options)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/intercept.md")
    args = parser.parse_args(argv)
    lines = [
        "# fit_intercept: cost and one-vs-all against SVC",
        "",
        f"`python benchmarks/intercept.py --repeats {args.repeats}`; CPU seconds, median of "
        f"{args.repeats} alternating runs, C = 1, RBF at SVC's gamma='scale' value.",
        "",
        "| data | machine | SVC [s] | no bias [s] | bias [s] | bias / no bias | bias / SVC "
        "| steps no bias / bias | accuracy no bias / bias |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for name, X, y in data_sets():
        gamma = 1.0 / (X.shape[1] * X.var())
        svc_times = [cpu_time(partial(SVC(gamma=gamma).fit, X, y))[0] for _ in range(args.repeats)]
        svc = float(np.median(svc_times))
        for Estimator in ESTIMATORS:
            for bias in (False, True):  # compile outside the timings
                make(Estimator, gamma, bias).fit(X[::20], y[::20])
            times = {False: [], True: []}
            models = {}
            for _ in range(args.repeats):
                for bias in (False, True):
                    t, models[bias] = cpu_time(partial(make(Estimator, gamma, bias).fit, X, y))
                    times[bias].append(t)
            plain, biased = (float(np.median(times[b])) for b in (False, True))
            steps = "/".join(str(getattr(models[b], "n_steps_", "–")) for b in (False, True))
            accuracy = "/".join(f"{models[b].score(X, y):.3f}" for b in (False, True))
            lines.append(
                f"| {name} | {Estimator.__name__} | {svc:.3f} | {plain:.3f} | {biased:.3f} | "
                f"{biased / plain:.2f} | {biased / svc:.2f} | {steps} | {accuracy} |"
            )
            print(lines[-1], flush=True)
            if Estimator is OneVsAllSVC:
                model = models[True]
                libsvm = [
                    SVC(gamma=gamma, tol=1e-10).fit(X, y == label).intercept_[0]
                    for label in model.classes_
                ]
                notes.append(
                    f"- {name}: OneVsAllSVC(fit_intercept=True)'s biases differ from libsvm's "
                    f"binary SVC per class by at most {np.abs(model.intercept_ - libsvm).max():.1e}"
                    f" (tol 1e-3 against libsvm's 1e-10)."
                )
    lines += ["", *notes, ""]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
