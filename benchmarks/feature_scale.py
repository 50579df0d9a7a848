"""Unscaled features: the kernel path on a linear Gram matrix of huge entries, the linear path on
the features, against SVC (issue 15).

    python benchmarks/feature_scale.py [--scales 1,100,1000,10000,100000] [--out PATH]

Features times s act as C s^2, and the KKT test is absolute, as libsvm's: on iris times 1 000
the dual's gradient is lin - Q alpha with max |Q alpha| ~ 1e9 and must be right to tol = 1e-3.
For iris times each scale and for raw wine (proline up to 1 680), C = 1, default settings: SVC
with the linear kernel, then every box and simplex machine on the precomputed Gram matrix X X^T
(``kernel="precomputed"``: the kernel path) and on the features (``kernel="linear"``: the linear
path).  Reported per fit: CPU time against SVC's (one thread, ``one_thread``; each estimator
compiled beforehand on the first data set), whether it ended in a ConvergenceWarning, the
training accuracy, and the relative difference of the kernel path's dual objective from the
linear path's (two different solvers on the same dual; "-" where either did not converge).

Writes the table as Markdown (default benchmarks/results/feature_scale.md).
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import argparse
from pathlib import Path

import numpy as np
from grid import ESTIMATORS, cpu_fit  # the grid's six machines and its timed fit
from sklearn.datasets import load_iris, load_wine
from sklearn.svm import SVC


def timed_fit(model, X, y):
    """(CPU seconds, whether a ConvergenceWarning was raised, the fitted model)."""
    return (*cpu_fit(model, X, y), model)


def data_sets(scales):
    X, y = load_iris(return_X_y=True)
    for scale in scales:
        yield f"iris x {scale:g}", X * scale, y
    yield "wine, raw", *load_wine(return_X_y=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,100,1000,10000,100000")
    parser.add_argument("--out", default="benchmarks/results/feature_scale.md")
    args = parser.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    X0, y0 = load_iris(return_X_y=True)
    for Estimator in ESTIMATORS:  # compile both paths
        Estimator(kernel="precomputed").fit(X0 @ X0.T, y0)
        Estimator(kernel="linear").fit(X0, y0)
    lines = [
        "### Unscaled features: a linear Gram matrix of huge entries (issue 15)",
        "",
        f"`python benchmarks/feature_scale.py --scales {args.scales}`",
        "",
        "C = 1, default settings; time = CPU time / SVC's (linear kernel, one thread); "
        "W = ConvergenceWarning; acc = training accuracy; gap = |dual (Gram) - dual (features)| "
        "/ |dual (features)|, where both converged.",
        "",
        "| data | SVC s (acc) | machine | Gram: time | W | acc | features: time | W | acc | gap |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, X, y in data_sets(scales):
        K = X @ X.T
        svc_time, _, svc = timed_fit(SVC(kernel="linear", C=1.0), X, y)
        svc_cell = f"{svc_time:.3f} ({np.mean(svc.predict(X) == y):.3f})"
        for Estimator in ESTIMATORS:
            t_k, w_k, gram = timed_fit(Estimator(kernel="precomputed", C=1.0, random_state=0), K, y)
            t_l, w_l, lin = timed_fit(Estimator(kernel="linear", C=1.0, random_state=0), X, y)
            gap = "-"
            if not (w_k or w_l):
                difference = abs(gram.dual_objective_ - lin.dual_objective_)
                gap = f"{difference / abs(lin.dual_objective_):.1e}"
            acc_k, acc_l = np.mean(gram.predict(K) == y), np.mean(lin.predict(X) == y)
            row = (
                f"| {name} | {svc_cell} | {Estimator.__name__} "
                f"| {t_k / svc_time:.1f} | {'W' if w_k else ''} | {acc_k:.3f} "
                f"| {t_l / svc_time:.1f} | {'W' if w_l else ''} | {acc_l:.3f} | {gap} |"
            )
            print(row, flush=True)
            lines.append(row)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
