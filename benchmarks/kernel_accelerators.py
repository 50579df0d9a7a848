"""The kernel path's accelerators against the epochs alone, in one process (issue 15):

- ``face``: exact Newton steps on the free face (``msvm.fast.kernel_face``) for Weston-Watkins
  and Crammer-Singer; writes benchmarks/results/kernel_face.md;
- ``interior``: the switch to the interior-point method (``msvm.fast.interior_point``) for the
  inhibitory machine and Lee-Lin-Wahba; writes benchmarks/results/interior_point.md;
- ``sum``: the same switch for Weston-Watkins and Crammer-Singer (their sum form), against
  their face steps alone (``interior_point.KINDS`` without WW and CS); writes
  benchmarks/results/interior_point_sum.md;
- ``polish``, ``polish-bias`` and ``polish-default``: the switch's snapped point polished on its
  face (``interior_point.InteriorPointSwitch._polished``) against the snapped point alone
  (``POLISH_SOLVES = 0``), for the inhibitory machine and Lee-Lin-Wahba (``interior_point.
  POLISHED``) at tol = 1e-6 (where the snap's error shows), without and with ``fit_intercept``,
  and at default settings; write
  benchmarks/results/interior_polish.md, interior_polish_bias.md and interior_polish_default.md.

    python benchmarks/kernel_accelerators.py face|interior|sum|polish|polish-bias|polish-default
        [glass] [vehicle] [vowel] [digits] [mnist] [ecoli] ... [--repeats R]

Cells: C in {1, 100, 1000} x gamma in {scale / 10, scale, 10 scale} on the grid benchmark's data
and splits (``grid.dataset``).  Each cell fits with and without the accelerator (off, for
``face`` and ``interior``: ``msvm.fast.engine.FACE_NEWTON = False``, the epochs alone; for ``sum``:
the face steps without the switch), alternating, R times (default 3),
``random_state=0``, and reports the median CPU times, their ratio, the epochs and the relative
difference of the dual objectives, then prints the table.
"""

from __future__ import annotations

import one_thread  # noqa: F401  (first: one BLAS thread, see its docstring)

# isort: split
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).parent))
import grid  # noqa: E402

from msvm.fast import (  # noqa: E402
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    WestonWatkinsSVC,
    engine,
    interior_point,
)
from msvm.fast.patterns import LLW, SIGN  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def epochs_alone(accelerated: bool):
    engine.FACE_NEWTON = accelerated


def face_steps_alone(accelerated: bool):
    interior_point.KINDS = ALL_KINDS if accelerated else (SIGN, LLW)


def snapped_alone(accelerated: bool):
    interior_point.POLISH_SOLVES = POLISH_SOLVES if accelerated else 0


ALL_KINDS = interior_point.KINDS
POLISH_SOLVES = interior_point.POLISH_SOLVES
KRONECKER = (InhibitorySVC, LeeLinWahbaSVC)
# accelerator -> (machines, result file, title, what "off" is, the fits' other parameters)
EXPERIMENTS = {
    "face": (
        (WestonWatkinsSVC, CrammerSingerSVC),
        "kernel_face.md",
        "Newton steps on the free face against the epochs alone",
        epochs_alone,
        {},
    ),
    "interior": (
        (InhibitorySVC, LeeLinWahbaSVC),
        "interior_point.md",
        "The interior-point switch against the epochs alone",
        epochs_alone,
        {},
    ),
    "sum": (
        (WestonWatkinsSVC, CrammerSingerSVC),
        "interior_point_sum.md",
        "The interior-point switch (sum form) against the face steps alone",
        face_steps_alone,
        {},
    ),
    "polish": (
        KRONECKER,
        "interior_polish.md",
        "The interior point's polish against its snapped point, tol = 1e-6",
        snapped_alone,
        {"tol": 1e-6},
    ),
    "polish-default": (
        KRONECKER,
        "interior_polish_default.md",
        "The interior point's polish against its snapped point, default settings",
        snapped_alone,
        {},
    ),
    "polish-bias": (
        KRONECKER,
        "interior_polish_bias.md",
        "The interior point's polish against its snapped point, tol = 1e-6, fit_intercept",
        snapped_alone,
        {"tol": 1e-6, "fit_intercept": True},
    ),
}
CS_GRID = (1.0, 100.0, 1000.0)


def cell(Estimator, C, gamma, X, y, repeats, toggle, params):
    """{accelerated: (median CPU seconds, epochs, dual objective)}, alternating the two."""
    times, last = {True: [], False: []}, {}
    for _ in range(repeats):
        for accelerated in (False, True):
            toggle(accelerated)
            clf = Estimator(C=C, gamma=gamma, random_state=0, **params)
            start = time.process_time()
            clf.fit(X, y)
            times[accelerated].append(time.process_time() - start)
            last[accelerated] = (clf.n_iter_, clf.dual_objective_)
    toggle(True)
    return {a: (float(np.median(times[a])), *last[a]) for a in (False, True)}


def run(machines, name, repeats, toggle, params):
    X, y, train_size = grid.dataset(name)
    Xtr, _, ytr, _ = train_test_split(X, y, train_size=train_size, stratify=y, random_state=0)
    scale = 1.0 / (Xtr.shape[1] * Xtr.var())
    for Estimator in machines:  # compile and warm the caches outside the timings
        Estimator(max_iter=2).fit(Xtr[:50], ytr[:50])
    rows = []
    for factor in grid.GAMMA_FACTORS:
        for C in CS_GRID:
            for Estimator in machines:
                out = cell(Estimator, C, factor * scale, Xtr, ytr, repeats, toggle, params)
                (t0, it0, d0), (t1, it1, d1) = out[False], out[True]
                rows.append(
                    f"| {name} | {Estimator.__name__} | {C:g} | {factor:g} | {t0:.3f} | {t1:.3f} "
                    f"| {t1 / t0:.2f} | {it0} → {it1} | {(d1 - d0) / abs(d0):+.1e} |"
                )
                print(rows[-1], flush=True)
    return rows


def main(argv):
    if not argv or argv[0] not in EXPERIMENTS:
        raise SystemExit(f"usage: kernel_accelerators.py {'|'.join(EXPERIMENTS)} [data ...]")
    machines, out, title, toggle, params = EXPERIMENTS[argv[0]]
    argv = argv[1:]
    repeats = 3
    if "--repeats" in argv:
        k = argv.index("--repeats")
        repeats, argv = int(argv[k + 1]), argv[:k] + argv[k + 2 :]
    names = argv or ["glass", "vehicle", "vowel", "digits", "mnist"]
    lines = [
        f"### {title} ({repeats} alternating fits per cell, median CPU time)",
        "",
        "| data | estimator | C | gamma/scale | off [s] | on [s] | ratio "
        "| epochs | dual difference (rel.) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        lines += run(machines, name, repeats, toggle, params)
    ratios = [float(line.split("|")[7]) for line in lines[4:]]
    lines += [
        "",
        f"Ratios: median {np.median(ratios):.2f}, best {min(ratios):.2f}, worst {max(ratios):.2f} "
        f"over {len(ratios)} cells.",
    ]
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / out).write_text(text)
    print(text, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
