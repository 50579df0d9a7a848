"""How long each reference solve (cvxpy + Clarabel) takes on digits with 10 classes.

    python benchmarks/reference_timing.py [--sizes 100 200 400] [--peer-threads 0]
                                          [--out benchmarks/results/...]

Prints and writes a Markdown table: wall time of the primal and dual solve of every formulation
at each size (RBF, gamma='scale', C=1), with the relative primal-dual gap.  With
``--peer-threads T`` each pair is solved again with Clarabel's faer LDL on T threads (0: faer's
default, every core) in place of the library's one thread, right after it: a column gives the
peer's time over the library's (primal + dual), a last line the largest relative difference
of their optima and ``msvm verify --quick`` (in this process) under each setting, the faster
of two alternating runs.  One untimed pair under each setting first takes the imports and
first calls.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
from pathlib import Path

from msvm.core import datasets
from msvm.reference import FORMULATIONS, Problem
from msvm.reference import problem as problem_module


@contextlib.contextmanager
def clarabel_threads(threads: int | None):
    """Solve with faer on ``threads`` threads (None: the library's setting) inside the block."""
    options = problem_module._SOLVER_OPTIONS["CLARABEL"]
    saved = options["max_threads"]
    if threads is not None:
        options["max_threads"] = threads
    try:
        yield
    finally:
        options["max_threads"] = saved


def timed_pair(name: str, p: Problem, threads: int | None = None):
    """(primal seconds, dual seconds, relative gap, primal optimum) of one formulation's two
    solves."""
    with clarabel_threads(threads):
        t0 = time.perf_counter()
        primal = FORMULATIONS[name].primal(p)
        t1 = time.perf_counter()
        dual = FORMULATIONS[name].dual(p)
        t2 = time.perf_counter()
    gap = abs(primal.objective - dual.objective) / abs(primal.objective)
    return t1 - t0, t2 - t1, gap, primal.objective


def timed_verify(threads: int | None = None) -> float:
    """Seconds of ``msvm verify --quick`` (its output discarded); it must pass."""
    from msvm.verify.cli import main

    with clarabel_threads(threads), contextlib.redirect_stdout(io.StringIO()):
        start = time.perf_counter()
        status = main(["verify", "--quick"])
        elapsed = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"msvm verify --quick exited {status}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400])
    parser.add_argument("--formulations", nargs="+", default=list(FORMULATIONS))
    parser.add_argument("--peer-threads", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/results/reference_timing.md")
    args = parser.parse_args()

    peer = args.peer_threads
    columns = ["primal [s]", "dual [s]", "gap"]
    if peer is not None:
        columns.append(f"threads {peer} / 1")
    header = (
        "| formulation | "
        + " | ".join(f"N={n} {column}" for n in args.sizes for column in columns)
        + " |"
    )
    lines = [header, "|" + "---|" * (1 + len(columns) * len(args.sizes))]
    problems = {}
    for n in args.sizes:
        X, y = datasets.load("digits", n_samples=n)
        problems[n] = Problem(X, y, C=1.0, kernel="rbf")
    for threads in (None, peer) if peer is not None else (None,):
        timed_pair(args.formulations[0], problems[min(args.sizes)], threads)  # warm-up
    apart = 0.0  # the largest relative difference of the peer's optimum from the library's
    for name in args.formulations:
        cells = []
        for n in args.sizes:
            primal, dual, gap, optimum = timed_pair(name, problems[n])
            cells += [f"{primal:.2f}", f"{dual:.2f}", f"{gap:.1e}"]
            report = f"{name} N={n}: primal {primal:.2f}s dual {dual:.2f}s gap {gap:.1e}"
            if peer is not None:
                peer_primal, peer_dual, _, peer_optimum = timed_pair(name, problems[n], peer)
                apart = max(apart, abs(peer_optimum - optimum) / abs(optimum))
                ratio = (peer_primal + peer_dual) / (primal + dual)
                cells.append(f"{ratio:.2f}")
                report += f"; threads {peer}: {peer_primal:.2f}s + {peer_dual:.2f}s ({ratio:.2f}x)"
            print(report, flush=True)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    command = "python benchmarks/reference_timing.py" + (
        f" --peer-threads {peer}" if peer is not None else ""
    )
    text = (
        "Reference solve times on digits (10 classes, RBF, gamma='scale', C=1), cvxpy + Clarabel\n"
        f"(faer's LDL on one thread), measured with `{command}` on 2 cores.\n\n" + table + "\n"
    )
    if peer is not None:
        runs = [(timed_verify(), timed_verify(peer)) for _ in range(2)]  # alternating
        library, peer_verify = (min(times) for times in zip(*runs, strict=True))
        label = "faer's own threads" if peer == 0 else f"{peer} threads"
        text += (
            f"\nThe optima on {label} differ from those on one by at most {apart:.1e}"
            f" (relative).  `msvm verify --quick` (the faster of two alternating runs):"
            f" {library:.1f} s on one thread, {peer_verify:.1f} s on {label}"
            f" ({peer_verify / library:.2f}x).\n"
        )
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
