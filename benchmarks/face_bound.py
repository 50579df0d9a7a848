"""What an exact solve of the coupled duals costs at least, against SVC (issue 15).

The grid benchmark's worst cells are the inhibitory machine's and Lee-Lin-Wahba's at C >= 10
(``grid.py``: 6.6-568x SVC).  Their duals hold many free variables at the optimum, on a face where
the kernel is nearly singular, and SVC's one-vs-one problems are another, easier problem.  Per
cell this script measures, on the grid's data and splits (``grid.dataset``):

- SVC's fit and the estimator's (default settings), CPU time on one thread;
- the free variables (0 < alpha < C) of the estimator's solution and all N L;
- one Cholesky factorisation of the Hessian on that face, Q_FF with Q[(i, r), (j, s)] =
  K_ij sigma_ir sigma_js M_rs (``msvm.fast.patterns``; a relative ridge of 1e-10 as
  ``kernel_face.RIDGE``): the least work of a method that solves the face directly, had it
  been told the face;
- the interior-point method (``msvm.fast.interior_point.interior_point``) run alone on the
  whole dual from its own start, to the fit's tol, and its Newton steps: a method that finds the
  face itself (cells with more than MAX_IPM_PATTERNS patterns skip it, "-"; 50 steps: not
  converged, stalled or at MAX_ITER, its best iterate).

    python benchmarks/face_bound.py [glass] [ecoli] [vowel] [vehicle] [digits] ... [--repeats R]

Each time is the median of R (default 3).  Writes benchmarks/results/face_bound.md and prints it.
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.linalg as sl
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).parent))
import grid  # noqa: E402

from msvm.fast import InhibitorySVC, LeeLinWahbaSVC, interior_point  # noqa: E402
from msvm.fast.interior_point import hessian_product  # noqa: E402
from msvm.fast.kernel_face import RIDGE  # noqa: E402
from msvm.fast.patterns import output_shift, pattern_apply  # noqa: E402

RESULTS = Path(__file__).parent / "results"
CS = (1.0, 10.0, 100.0, 1000.0)
GAMMA_FACTORS = (0.1, 1.0)
MAX_IPM_PATTERNS = 1000


def median_time(function, repeats: int):
    """(median CPU seconds of ``repeats`` calls, the last call's result)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        result = function()
        times.append(time.process_time() - start)
    return float(np.median(times)), result


def dual_terms(model, y):
    """The fitted model's dual in the engine's terms: (kind, s, lin, hi, sigma), sigma the signs
    with Z = sigma * alpha (S_i = diag(sigma_i) for these two kinds)."""
    y_index = np.searchsorted(model.classes_, y)
    L = model.classes_.size
    kind = model._kind
    s = output_shift(kind, model._inhibition(L), L)
    lin, free = model._dual_terms(y_index, L)
    hi = model.C * free
    sigma = pattern_apply(kind, np.ones((y.size, L)), y_index)
    return kind, s, lin, hi, sigma


def face_hessian(K, sigma, s, rows, columns):
    """Q_FF on the face of the variables (rows[k], columns[k]), ridged as ``kernel_face``'s."""
    signs = sigma[rows, columns]
    M = np.eye(sigma.shape[1]) - s
    Q = K[np.ix_(rows, rows)] * np.outer(signs, signs) * M[np.ix_(columns, columns)]
    Q.flat[:: Q.shape[0] + 1] += RIDGE * np.trace(Q) / max(1, Q.shape[0])
    return Q


def cell(Estimator, Xtr, ytr, C, gamma, repeats):
    t_svc, _ = median_time(lambda: SVC(C=C, gamma=gamma).fit(Xtr, ytr), repeats)
    t_fit, model = median_time(
        lambda: Estimator(C=C, gamma=gamma, random_state=0).fit(Xtr, ytr), repeats
    )
    kind, s, lin, hi, sigma = dual_terms(model, ytr)
    alpha = model.dual_coef_
    rows, columns = np.nonzero((alpha > 0.0) & (alpha < hi))
    K = rbf_kernel(Xtr, gamma=gamma)
    Q = face_hessian(K, sigma, s, rows, columns)
    t_face, _ = median_time(lambda: sl.cho_factor(Q, check_finite=False), repeats)
    t_ipm = steps = None
    if Xtr.shape[0] <= MAX_IPM_PATTERNS:
        t_ipm, out = median_time(
            lambda: interior_point.interior_point(K, lin, hi, sigma, s, tol=model.tol), repeats
        )
        steps = None if out is None else out[3]
        if out is not None:  # the same dual as the fit's (these terms are the engine's)
            x = out[0]
            value = np.vdot(lin, x) - 0.5 * np.vdot(x, sigma * hessian_product(K, sigma * x, s))
            apart = abs(value - model.dual_objective_) / abs(model.dual_objective_)
            if apart > 1e-3:
                raise RuntimeError(f"the interior point's dual is {apart:.1e} from the fit's")
    return dict(svc=t_svc, fit=t_fit, free=rows.size, n=alpha.size, face=t_face, ipm=t_ipm,
                steps=steps, epochs=model.n_iter_)  # fmt: skip


def run(name, repeats):
    X, y, train_size = grid.dataset(name)
    Xtr, _, ytr, _ = train_test_split(X, y, train_size=train_size, stratify=y, random_state=0)
    scale = 1.0 / (Xtr.shape[1] * Xtr.var())
    lines = []
    for Estimator in (InhibitorySVC, LeeLinWahbaSVC):
        grid.warm_up(Estimator, Xtr, ytr, scale)
        for factor in GAMMA_FACTORS:
            for C in CS:
                r = cell(Estimator, Xtr, ytr, C, factor * scale, repeats)
                ipm = "-" if r["ipm"] is None else f"{r['ipm'] / r['svc']:.1f} ({r['steps']})"
                lines.append(
                    f"| {name} | {Estimator.__name__} | {factor:g} | {C:g} | {r['svc'] * 1e3:.1f} "
                    f"| {r['fit'] / r['svc']:.1f} ({r['epochs']}) | {r['free']} of {r['n']} "
                    f"| {r['face'] / r['svc']:.2f} | {ipm} |"
                )
                print(lines[-1], flush=True)
    return lines


def main(argv):
    repeats = 3
    if "--repeats" in argv:
        k = argv.index("--repeats")
        repeats = int(argv[k + 1])
        argv = argv[:k] + argv[k + 2 :]
    names = argv or ["glass", "ecoli", "vowel", "vehicle"]
    header = [
        f"### The coupled duals' faces against SVC (CPU time ratios to SVC, medians of {repeats})",
        "",
        "| data | estimator | gamma/scale | C | SVC [ms] | fit (epochs) | free variables "
        "| one face Cholesky | interior point alone (Newton steps) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name in names:
            rows += run(name, repeats)
    RESULTS.mkdir(exist_ok=True)
    note = ["", "(50 Newton steps: not converged, stalled or at MAX_ITER.)"]
    (RESULTS / "face_bound.md").write_text("\n".join(header + rows + note) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
