"""The linear kernel below ssnal.MIN_ROWS patterns (issue 15, "hard data"): when the proximal
method of ``msvm.fast.ssnal`` runs, against the epochs alone.

    python benchmarks/linear_sizes.py [--skip-alone]

Data: iris, wine, digits, and make_classification with 20 features (10 informative, 5 classes,
class_sep=3: "easy") at 1 000 and 2 500 rows, with 50 features (30 informative, 10
one-cluster classes: "overlapping") at 2 500 and 4 900 rows, and with 256 features (30
informative, 6 classes: "wide", d L = 1 536 near ssnal.MAX_WEIGHTS) at 1 000 and 4 000 rows, each
standardised; then the badly
scaled sets a user who forgets to scale gives: iris, wine (proline ~1e3 beside ratios ~1) and
digits raw, and the overlapping 2 500 rows with feature j multiplied by 10^u_j, u_j uniform in
[-2, 2].  Each machine is fitted with kernel="linear", C = 1, tol = 1e-3 and default settings,
once as it now runs (the inhibitory machine and LLW start with the proximal method at any size
where its modelled cost is at most engine.METHOD_FIRST_EPOCHS epochs; WW, CS and one-vs-all
below 5 000 rows run the epochs and hand over to the method after ssnal.RESCUE_EPOCHS of them
and a modelled work equal to the method's cost), once under the rule before stop 31 (the method
modelled free, ssnal.EXPECTED_NEWTON = 0: it starts the inhibitory machine and LLW at any size
and takes over right after RESCUE_EPOCHS), and once with the epochs alone
(engine.PROXIMAL_START = False).
Reported: CPU seconds, epochs, final KKT violation, whether a ConvergenceWarning was raised, and
the primal objectives of both runs (they solve the same problem: where both converged the
relative difference is bounded by the tolerance).  LinearSVC (LIBLINEAR, one-vs-rest with its
intercept, and crammer_singer without; tol 1e-3, at most 100 000 iterations) on the same data is
the peer's time.  Writes benchmarks/results/linear_sizes.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine, make_classification
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

sys.path.insert(0, str(Path(__file__).parent))
from grid import cpu_fit  # noqa: E402

from msvm.fast import (  # noqa: E402
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    WestonWatkinsSVC,
    engine,
    ssnal,
)

RESULTS = Path(__file__).parent / "results"
MACHINES = (InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC, CrammerSingerSVC, OneVsAllSVC)


def data_sets():
    easy = dict(n_features=20, n_informative=10, n_classes=5, class_sep=3, random_state=0)
    hard = dict(n_features=50, n_informative=30, n_classes=10, n_clusters_per_class=1,
                random_state=0)  # fmt: skip
    wide = dict(n_features=256, n_informative=30, n_classes=6, random_state=0)
    sets = {
        "iris": load_iris(return_X_y=True),
        "wine": load_wine(return_X_y=True),
        "digits": load_digits(return_X_y=True),
        "easy 1000": make_classification(1000, **easy),
        "easy 2500": make_classification(2500, **easy),
        "overlapping 2500": make_classification(2500, **hard),
        "overlapping 4900": make_classification(4900, **hard),
        "wide 1000": make_classification(1000, **wide),
        "wide 4000": make_classification(4000, **wide),
    }
    scaled = {name: (StandardScaler().fit_transform(X), y) for name, (X, y) in sets.items()}
    X, y = sets["overlapping 2500"]
    factors = 10.0 ** np.random.RandomState(0).uniform(-2, 2, X.shape[1])
    raw = {f"{name} raw": sets[name] for name in ("iris", "wine", "digits")}
    return scaled | raw | {"overlapping 2500 badly scaled": (X * factors, y)}


def run(alone: bool):
    rows = []
    for name, (X, y) in data_sets().items():
        peers = []
        for multi in ("ovr", "crammer_singer"):
            svc = LinearSVC(multi_class=multi, tol=1e-3, max_iter=100_000,
                            fit_intercept=multi == "ovr")  # fmt: skip
            peers.append(cpu_fit(svc, X, y)[0])
        for Machine in MACHINES:
            now = Machine(kernel="linear", random_state=0)
            t_now, w_now = cpu_fit(now, X, y)
            row = [name, Machine.__name__, f"{t_now:.2f}", str(now.n_iter_),
                   f"{now.kkt_violation_:.1e}{' !' if w_now else ''}"]  # fmt: skip
            expected = ssnal.EXPECTED_NEWTON
            ssnal.EXPECTED_NEWTON = 0  # the rule before stop 31: the method modelled free
            try:
                old_rule = Machine(kernel="linear", random_state=0)
                t_old, w_old = cpu_fit(old_rule, X, y)
            finally:
                ssnal.EXPECTED_NEWTON = expected
            row += [f"{t_old:.2f}{' !' if w_old else ''}", f"{t_old / t_now:.1f}"]
            if alone:
                engine.PROXIMAL_START = False
                try:
                    before = Machine(kernel="linear", random_state=0)
                    t_before, w_before = cpu_fit(before, X, y)
                finally:
                    engine.PROXIMAL_START = True
                gap = abs(now.objective_ - before.objective_) / abs(before.objective_)
                row += [f"{t_before:.2f}", str(before.n_iter_),
                        f"{before.kkt_violation_:.1e}{' !' if w_before else ''}",
                        f"{t_before / t_now:.1f}", f"{gap:.1e}"]  # fmt: skip
            row += [f"{peers[0]:.2f}", f"{peers[1]:.2f}"]
            rows.append(row)
            print(" | ".join(row), flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-alone", action="store_true", help="no epochs-alone runs")
    args = parser.parse_args()
    sets = data_sets()
    for Machine in MACHINES:  # compile the epochs and the proximal method first (raw wine: every
        for name in ("iris", "wine raw"):  # machine hands over to it)
            Machine(kernel="linear").fit(*sets[name])
    rows = run(alone=not args.skip_alone)
    head = ["data", "machine", "now [s]", "epochs", "KKT", "rule before stop 31 [s]", "its ratio"]
    if not args.skip_alone:
        head += ["epochs alone [s]", "epochs", "KKT", "speed-up", "primal rel. diff."]
    head += ["LinearSVC ovr [s]", "LinearSVC CS [s]"]
    lines = [
        "### Linear kernel below 5 000 rows: the proximal method (msvm.fast.ssnal) against the "
        "epochs alone",
        "",
        "`python benchmarks/linear_sizes.py` (CPU seconds, one fit each, C = 1, tol = 1e-3; "
        "features standardised but for the raw and badly scaled sets; `!` a ConvergenceWarning).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    out = RESULTS / "linear_sizes.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
