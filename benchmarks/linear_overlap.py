"""Linear Crammer-Singer, Weston-Watkins and inhibitory machines on overlapping classes (issue 15).

    python benchmarks/linear_overlap.py [--pairs 3] [--before]

The problem: make_classification(20000, n_features=50, n_informative=30, n_classes=10,
n_clusters_per_class=1, random_state=0), C = 1, tol = 1e-3, default settings otherwise
(max_iter=-1).  The peer is LIBLINEAR's Crammer-Singer solver (`-s 4`) through scikit-learn,
LinearSVC(multi_class="crammer_singer", tol=1e-3, max_iter=100000, fit_intercept=False), whose
stopping quantity maxG - minG is the engine's Crammer-Singer KKT violation on the same dual
scale.  Each round fits LIBLINEAR, then CrammerSingerSVC, WestonWatkinsSVC and InhibitorySVC;
the table gives medians over the rounds (the machine has two shared cores).

Columns: the time to reach LIBLINEAR's final primal objective (ours: the first proximal step of
``msvm.fast.ssnal`` whose iterate's primal value is at most that, timed from the start of the fit;
LIBLINEAR: its whole run, since its objective decreases to its final value at its end), the time
to converge (KKT violation <= tol, checked by the engine's epochs over every variable), the final
primal, dual and KKT violation, the epochs after the proximal start and its (proximal, Newton)
steps.  WW and inhibitory have no LIBLINEAR peer: their row shows the time to converge and to
come within 0.1 % of their own optimum (the final primal), beside LIBLINEAR CS's time on the same
data.  ``--before`` adds one fit of each machine with the proximal start switched off
(engine.PROXIMAL_START = False) at max_iter=1000: the state before it (ConvergenceWarning
silenced, KKT reported).  The table is written to benchmarks/results/linear_overlap.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from msvm.core.objectives import canonical_objective, crammer_singer_loss
from msvm.fast import CrammerSingerSVC, InhibitorySVC, WestonWatkinsSVC, engine, ssnal

RESULTS = Path(__file__).parent / "results"
MACHINES = (CrammerSingerSVC, WestonWatkinsSVC, InhibitorySVC)


def problem():
    return make_classification(
        20000, n_features=50, n_informative=30, n_classes=10, n_clusters_per_class=1,
        random_state=0,
    )  # fmt: skip


def liblinear_objective(coef, X, y):
    """The canonical Crammer-Singer primal at LIBLINEAR's weights (C = 1)."""
    return canonical_objective(np.sum(coef**2), crammer_singer_loss(X @ coef.T, y), 1.0)


def fit_ours(Machine, X, y, **params):
    """Fit with the proximal start's history captured: (model, seconds, history, start)."""
    captured = []
    original = ssnal.SemismoothALM.run

    def run(self, alpha):
        captured.append(self)
        return original(self, alpha)

    ssnal.SemismoothALM.run = run
    try:
        start = time.perf_counter()
        model = Machine(kernel="linear", C=1.0, tol=1e-3, random_state=0, **params).fit(X, y)
        seconds = time.perf_counter() - start
    finally:
        ssnal.SemismoothALM.run = original
    history = captured[0].history if captured else []
    return model, seconds, history, start


def time_to(history, start, target, total, final):
    """Seconds from the fit's start to the first proximal step with primal <= target (the whole
    fit if only the final point reaches it; inf if none does)."""
    for stamp, _, _, _, primal, _, _ in history:
        if primal <= target:
            return stamp - start
    return total if final <= target else np.inf


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3, help="rounds of alternating fits")
    parser.add_argument("--before", action="store_true", help="also the epochs alone, 1000")
    args = parser.parse_args()
    X, y = problem()
    # warm-up: compile the numba kernels of both paths on a small problem
    for Machine in MACHINES:
        Machine(kernel="linear").fit(X[: ssnal.MIN_ROWS], y[: ssnal.MIN_ROWS])
    peer = LinearSVC(multi_class="crammer_singer", tol=1e-3, max_iter=100_000, fit_intercept=False)
    rows = {M.__name__: [] for M in MACHINES}
    ll_times, ll_objectives, ll_iters = [], [], []
    for _ in range(args.pairs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # its 100 000 passes end it
            start = time.perf_counter()
            peer.fit(X, y)
            ll_times.append(time.perf_counter() - start)
        ll_objectives.append(liblinear_objective(peer.coef_, X, y))
        ll_iters.append(int(peer.n_iter_))
        target = ll_objectives[-1]
        for Machine in MACHINES:
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)  # default settings: none
                model, seconds, history, start = fit_ours(Machine, X, y)
            final = model.objective_
            own = (1.0 + 1e-3) * final
            rows[Machine.__name__].append(
                dict(
                    to_liblinear=time_to(history, start, target, seconds, final),
                    to_own=time_to(history, start, own, seconds, final),
                    seconds=seconds,
                    primal=final,
                    dual=model.dual_objective_,
                    kkt=model.kkt_violation_,
                    epochs=model.n_iter_,
                    proximal=(len(history), sum(h[2] for h in history)),
                )  # fmt: skip
            )
    t_ll = float(np.median(ll_times))
    lines = [
        "make_classification(20000, n_features=50, n_informative=30, n_classes=10, "
        "n_clusters_per_class=1, random_state=0), C = 1, tol = 1e-3, default settings "
        f"(max_iter=-1); medians over {args.pairs} rounds, each fitting LIBLINEAR then the three "
        "machines.  LIBLINEAR = LinearSVC(multi_class='crammer_singer', tol=1e-3, "
        "max_iter=100000, fit_intercept=False); it stops at its 100 000-iteration limit "
        "(iterations: " + ", ".join(map(str, ll_iters)) + "), not at tol.  Ours: no "
        "ConvergenceWarning in any fit (warnings raised as errors).\n",
        "| machine | to LIBLINEAR's final primal [s] | LIBLINEAR CS [s] | ratio | to within "
        "0.1 % of own optimum [s] | to converge [s] | primal | dual | final KKT | epochs | "
        "(proximal, Newton) steps |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| LIBLINEAR CS | {t_ll:.2f} | {t_ll:.2f} | 1.00 | | (not converged) | "
        f"{np.median(ll_objectives):.4f} | | > {1e-3:g} | {int(np.median(ll_iters))} | |",
    ]
    for name, runs in rows.items():
        med = {k: float(np.median([r[k] for r in runs])) for k in runs[0] if k != "proximal"}
        cs = name == "CrammerSingerSVC"
        to_ll = f"{med['to_liblinear']:.2f}" if cs else "(no peer)"
        ratio = (
            f"{med['to_liblinear'] / t_ll:.3f}" if cs else f"{med['seconds'] / t_ll:.3f} (converge)"
        )
        steps = runs[len(runs) // 2]["proximal"]
        lines.append(
            f"| {name} | {to_ll} | {t_ll:.2f} | {ratio} | {med['to_own']:.2f} | "
            f"{med['seconds']:.2f} | {med['primal']:.4f} | {med['dual']:.4f} | "
            f"{med['kkt']:.2e} | {int(med['epochs'])} | {steps} |"
        )
    if args.before:
        lines += [
            "",
            "Before (engine.PROXIMAL_START = False: the epochs alone, max_iter=1000, one fit):",
            "",
            "| machine | fit [s] | primal | dual | final KKT | epochs |",
            "|---|---|---|---|---|---|",
        ]
        engine.PROXIMAL_START = False
        for Machine in MACHINES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                model = Machine(kernel="linear", tol=1e-3, random_state=0, max_iter=1000).fit(X, y)
                seconds = time.perf_counter() - start
            lines.append(
                f"| {Machine.__name__} | {seconds:.2f} | {model.objective_:.4f} | "
                f"{model.dual_objective_:.4f} | {model.kkt_violation_:.2e} | {model.n_iter_} |"
            )
        engine.PROXIMAL_START = True
    text = "### Linear kernel on overlapping classes (issue 15)\n\n" + "\n".join(lines) + "\n"
    print(text, flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "linear_overlap.md").write_text(text)


if __name__ == "__main__":
    main()
