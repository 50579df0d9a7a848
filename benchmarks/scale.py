"""Issue 16: the first fit, large N, threads and memory, each as a ratio measured in one run.

    python benchmarks/scale.py [cold] [scaling] [threads] [memory] [predict] [ovr] [deferred]
        [deferred-mnist] [specialisations]
        [--max-n N] [--repeats R]

cold     each estimator's first fit on iris in a fresh process with an empty numba cache
         (NUMBA_CACHE_DIR in a new temporary folder), then again in a second fresh process with
         that cache filled (warm); and ``import msvm.fast`` beyond scikit-learn's own import
scaling  make_classification(N + 2000, 20 features, 15 informative, 10 one-cluster classes),
         N = 2 000 ... --max-n (default 16 000; 32 000 and 60 000 above) to fit, C = 1, RBF
         gamma="scale": each machine's CPU time against SVC's on the same data, one thread each
         (fits alternate, medians of --repeats), and the log-log slopes of both times in N; the
         inhibitory machine up to COUPLED_MAX_N = 16 000 only
threads  the same data at N = 16 000: each machine with n_jobs=1 against n_jobs=None (every
         core), wall time, fits alternating
ovr      the same data at N = 16 000 ... --max-n: OneVsAllSVC (with and without a bias) against
         libsvm solving its one-vs-rest binary problems (SVC on class l against the rest, one
         per class, the same gamma and C) and against SVC (one-vs-one), CPU time, one thread
deferred the same data at N = 8 000 and --max-n: each coupled machine with its output updates
         deferred in batches (``engine.DEFERRED_BATCH``, the default) against updated at every
         step (``DEFERRED_BATCH = 0``), CPU time, fits alternating, n_jobs=1; the steps and the
         relative difference of the dual objectives, and SVC's time beside
deferred-mnist  the same for WW and CS on the 5 000 MNIST images (C = 10), their columns
         computed on demand with cache_size=50
specialisations  in a fresh process with an empty numba cache, every estimator fitted on iris
         (the whole Gram matrix) and on 600 digits with cache_size=0.5 (columns on demand,
         deferred updates), WW on iris as CSR, one-vs-all on ``msvm compile``'s fits larger
         than their cache (batched columns, compact phases): every compiled function of msvm
         with more than one specialisation, and its integer-literal arguments (each such call
         compiles the callee, and every function linked into it, once more: stop 36 found
         five)
memory   peak resident memory (VmHWM) of a process fitting InhibitorySVC (RBF, default
         cache_size) on 60 000 x 784 random features in [0, 1), 10 classes: the peak over the
         set-up and the first 90 s of the fit (the kernel cache, the data and the solver's arrays
         are all allocated by then; a full fit takes hours here)
predict  WestonWatkinsSVC fitted on 5 000 points of the scaling data (C = 10), then
         decision_function on 60 000 points: peak traced memory (tracemalloc) and time with
         k(x, support vectors) in blocks of ``core.kernels.BLOCK_BYTES`` (the default) against
         the whole matrix at once (BLOCK_BYTES unbounded, as before stop 47), and the outputs'
         largest difference

Writes benchmarks/results/scale_<part>.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).parent))
from fast_engine import synthetic_split  # noqa: E402

from msvm.fast.threads import blas_threads  # noqa: E402

RESULTS = Path(__file__).parent / "results"
COLD = ("InhibitorySVC", "OneVsAllSVC", "WestonWatkinsSVC:linear", "MKPMClassifier",
        "MultiPrototypeSVC")  # fmt: skip
FIRST_FIT = """
import sys, time
t0 = time.perf_counter()
import sklearn.svm
t1 = time.perf_counter()
import msvm.fast as F
t2 = time.perf_counter()
from sklearn.datasets import load_iris
X, y = load_iris(return_X_y=True)
name, _, kernel = sys.argv[1].partition(":")
estimator = getattr(F, name)(**({"kernel": kernel} if kernel else {}))
t3 = time.perf_counter()
estimator.fit(X, y)
print(t2 - t1, time.perf_counter() - t3)
"""
SPECIALISATIONS = """
import sys, warnings
import numba
from sklearn.datasets import load_digits, load_iris
import msvm.fast as F
warnings.simplefilter("ignore")
X, y = load_iris(return_X_y=True)
Xd, yd = load_digits(return_X_y=True)
for name in ("InhibitorySVC", "OneVsAllSVC", "WestonWatkinsSVC", "CrammerSingerSVC",
             "LeeLinWahbaSVC", "SimplexSVC", "MKPMClassifier", "MultiPrototypeSVC"):
    getattr(F, name)().fit(X, y)
    if name.endswith("SVC") and name != "MultiPrototypeSVC":
        getattr(F, name)(cache_size=0.5).fit(Xd[:600] / 16, yd[:600])
F.WestonWatkinsSVC(kernel="linear").fit(X, y)
import scipy.sparse as sp
from msvm.verify.cli import larger_than_cache
F.WestonWatkinsSVC().fit(sp.csr_matrix(X), y)  # CSR columns
for X_large, y_large, cache_size in larger_than_cache():  # batched columns, compact phases
    F.OneVsAllSVC(cache_size=cache_size).fit(X_large, y_large)
for module in [m for n, m in sorted(sys.modules.items()) if n.startswith("msvm.")]:
    for name, f in sorted(vars(module).items()):
        if isinstance(f, numba.core.registry.CPUDispatcher) and f.__module__ == module.__name__:
            if len(f.signatures) > 1:
                literal = sorted({f"`argument {k}: {a}`" for s in f.signatures
                                  for k, a in enumerate(s) if isinstance(a, numba.types.Literal)})
                print(f"| {module.__name__}.{name} | {len(f.signatures)} | {'; '.join(literal)} |")
"""
MEMORY = """
import warnings
import numpy as np
from msvm.fast import InhibitorySVC
InhibitorySVC(max_iter=1).fit(np.random.default_rng(0).random((40, 784)), np.arange(40) % 10)
rng = np.random.default_rng(0)
X, y = rng.random((60000, 784)), rng.integers(0, 10, 60000)
print("fitting", flush=True)
warnings.simplefilter("ignore")
InhibitorySVC(random_state=0).fit(X, y)
"""


def write(part: str, title: str, lines: list[str]) -> None:
    text = f"### {title}\n\n" + "\n".join(lines) + "\n"
    print(text, flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"scale_{part}.md").write_text(text)


def first_fit(name: str, cache_dir: str) -> tuple[float, float]:
    """(import msvm.fast beyond sklearn, first fit) in a fresh process using ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", FIRST_FIT, name], env=env, check=True,
                         capture_output=True, text=True).stdout.split()  # fmt: skip
    return float(out[0]), float(out[1])


def part_cold():
    lines = ["| estimator (iris) | cold first fit [s] | warm first fit [s] | import [s] |",
             "|---|---|---|---|"]  # fmt: skip
    for name in COLD:
        with tempfile.TemporaryDirectory() as cache:
            imported, cold = first_fit(name, cache)
            _, warm = first_fit(name, cache)
        lines.append(f"| {name} | {cold:.1f} | {warm:.2f} | {imported:.2f} |")
    write("cold", "First fit in a fresh process: empty numba cache (cold), filled (warm)", lines)


def part_specialisations():
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        rows = subprocess.run([sys.executable, "-c", SPECIALISATIONS], env=env, check=True,
                              capture_output=True, text=True).stdout.splitlines()  # fmt: skip
    lines = ["| function | specialisations | literal arguments |", "|---|---|---|", *rows]
    write("specialisations", "Functions compiled more than once by the first fits (cold)", lines)


def timed_fit(estimator, X, y, clock=time.perf_counter) -> float:
    """The fit's time by ``clock`` (wall time; ``time.process_time`` for CPU time)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = clock()
        estimator.fit(X, y)
        return clock() - start


# The inhibitory machine is timed up to this N only: its slope is near 3 (about 20 minutes at
# 60 000 points, stop 19's extrapolation), the others' below 2.
COUPLED_MAX_N = 16000


def warm_up(Estimator, X, y) -> None:
    """Compile outside the timings: the whole-Gram path; with a cache of 0.5 MB on 2 000 points
    the column-source path (deferred updates), which a first large fit would otherwise compile
    inside its time (a WW fit on 8 000 points: 61.6 s instead of 2); and ``msvm compile``'s
    fits larger than their cache (compact phases, one-vs-all's columns one at a time: without
    them stop 61's run charged 4.5 s of compilation to one-vs-all's fit at 8 000 points,
    4.71x SVC against 1.46x at 16 000, and 1.8 s to Weston-Watkins's)."""
    from msvm.verify.cli import larger_than_cache

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        Estimator(max_iter=1).fit(X[:50], y[:50])
        Estimator(max_iter=30, cache_size=0.5).fit(X[:2000], y[:2000])
        for X_large, y_large, cache_size in larger_than_cache():
            Estimator(cache_size=cache_size).fit(X_large, y_large)


def machines(n: int):
    from msvm.fast import (
        CrammerSingerSVC,
        InhibitorySVC,
        OneVsAllSVC,
        SimplexSVC,
        WestonWatkinsSVC,
    )

    coupled = (InhibitorySVC,) if n <= COUPLED_MAX_N else ()
    return (OneVsAllSVC, WestonWatkinsSVC, CrammerSingerSVC, SimplexSVC, *coupled)


def part_scaling(max_n: int, repeats: int):
    """CPU time of each machine and of SVC (one thread each), fits alternating; each machine's
    ratio against the mean of SVC's times at that N, slopes over the sizes each machine ran."""
    sizes = [n for n in (2000, 4000, 8000, 16000, 32000, 60000) if n <= max_n]
    times: dict[str, dict[int, float]] = {}
    svc_times: dict[int, list[float]] = {}
    with blas_threads(1):  # no BLAS worker left spinning into the next fit's CPU time
        for n in sizes:
            Xtr, _, ytr, _ = synthetic_split(n + 2000, 2000)
            for Estimator in machines(n):
                warm_up(Estimator, Xtr, ytr)
                ours, theirs = [], []
                for seed in range(repeats):
                    theirs.append(timed_fit(SVC(), Xtr, ytr, time.process_time))
                    estimator = Estimator(random_state=seed, n_jobs=1)
                    ours.append(timed_fit(estimator, Xtr, ytr, time.process_time))
                times.setdefault(Estimator.__name__, {})[n] = np.median(ours)
                svc_times.setdefault(n, []).extend(theirs)  # every machine's pairs
                print(n, Estimator.__name__, np.median(ours), np.median(theirs), flush=True)
    svc = {n: float(np.mean(ts)) for n, ts in svc_times.items()}

    def slope(ts: dict[int, float]) -> float:
        return (
            np.polyfit(np.log(list(ts)), np.log(list(ts.values())), 1)[0] if len(ts) > 1 else np.nan
        )

    header = " | ".join(f"N = {n}" for n in sizes)
    lines = [f"| machine | {header} | slope | SVC slope |", "|---" * (len(sizes) + 3) + "|"]
    for name, ts in times.items():
        cells = " | ".join(
            f"{ts[n] / svc[n]:.2f}x ({ts[n]:.1f} s)" if n in ts else "-" for n in sizes
        )
        svc_slope = slope({n: svc[n] for n in ts})
        lines.append(f"| {name} | {cells} | {slope(ts):.2f} | {svc_slope:.2f} |")
    lines.append(f"| SVC [s] | {' | '.join(f'{svc[n]:.1f}' for n in sizes)} | | |")
    title = f"CPU time against SVC (one thread each: n_jobs=1, BLAS on one), medians of {repeats}"
    write("scaling", title, lines)


def part_threads(repeats: int, n: int = 16000):
    Xtr, _, ytr, _ = synthetic_split(n + 2000, 2000)
    lines = ["| machine | n_jobs=1 [s] | n_jobs=None [s] | speed-up |", "|---|---|---|---|"]
    for Estimator in machines(n):
        warm_up(Estimator, Xtr, ytr)
        one, every = [], []
        for seed in range(repeats):
            one.append(timed_fit(Estimator(random_state=seed, n_jobs=1), Xtr, ytr))
            every.append(timed_fit(Estimator(random_state=seed), Xtr, ytr))
        t1, tn = np.median(one), np.median(every)
        lines.append(f"| {Estimator.__name__} | {t1:.1f} | {tn:.1f} | {t1 / tn:.2f}x |")
    cores = len(os.sched_getaffinity(0))
    write("threads", f"{n} points: one thread against every core ({cores}), wall time", lines)


def libsvm_one_vs_rest(X, y, classes, gamma) -> tuple[float, np.ndarray]:
    """libsvm's binary SVMs of class l against the rest (C = 1, the same gamma), one per class:
    their CPU time in all, and their decision values (n_test columns by class) as a function."""
    start = time.process_time()
    models = [SVC(gamma=gamma).fit(X, np.where(y == label, 1, -1)) for label in classes]
    return time.process_time() - start, lambda Z: np.column_stack(
        [m.decision_function(Z) for m in models]
    )


def part_ovr(max_n: int, repeats: int):
    """One-vs-all against its own problems solved by libsvm (issue 16's 'every machine <= 1x
    SVC'): SVC's one-vs-one fits L (L - 1) / 2 problems of 2N / L points, one-vs-all L problems
    of N points; libsvm's ten one-vs-rest binary SVMs (with their bias, as OneVsAllSVC's
    fit_intercept=True) are the same machine on the same solver, CPU time, one thread each."""
    from msvm.fast import OneVsAllSVC

    sizes = [n for n in (16000, 32000, 60000) if n <= max_n]
    lines = ["| N | SVC (one-vs-one) [s] | libsvm one-vs-rest [s] | OneVsAllSVC [s] | "
             "OneVsAllSVC(fit_intercept=True) [s] | ours / libsvm one-vs-rest | ours / SVC | "
             "test accuracy SVC / libsvm one-vs-rest / ours / ours with bias |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    with blas_threads(1):
        for n in sizes:
            Xtr, Xte, ytr, yte = synthetic_split(n + 2000, 2000)
            gamma = 1.0 / (Xtr.shape[1] * Xtr.var())  # gamma="scale"
            classes = np.unique(ytr)
            warm_up(OneVsAllSVC, Xtr, ytr)
            svc, rest, ours, biased = [], [], [], []
            for seed in range(repeats):
                model = SVC(gamma=gamma)
                svc.append(timed_fit(model, Xtr, ytr, time.process_time))
                seconds, decision = libsvm_one_vs_rest(Xtr, ytr, classes, gamma)
                rest.append(seconds)
                ova = OneVsAllSVC(random_state=seed, n_jobs=1)
                ours.append(timed_fit(ova, Xtr, ytr, time.process_time))
                with_bias = OneVsAllSVC(random_state=seed, n_jobs=1, fit_intercept=True)
                biased.append(timed_fit(with_bias, Xtr, ytr, time.process_time))
                print(n, svc[-1], rest[-1], ours[-1], biased[-1], flush=True)
            accuracy = (
                model.score(Xte, yte),
                np.mean(classes[decision(Xte).argmax(axis=1)] == yte),
                ova.score(Xte, yte),
                with_bias.score(Xte, yte),
            )
            t_svc, t_rest, t_ours, t_bias = map(np.median, (svc, rest, ours, biased))
            lines.append(
                f"| {n} | {t_svc:.1f} | {t_rest:.1f} | {t_ours:.1f} | {t_bias:.1f} | "
                f"{t_ours / t_rest:.2f}x / {t_bias / t_rest:.2f}x | "
                f"{t_ours / t_svc:.2f}x | " + " / ".join(f"{a:.4f}" for a in accuracy) + " |"
            )
    title = f"One-vs-all against libsvm's one-vs-rest problems, CPU time, medians of {repeats}"
    write("ovr", title, lines)


def deferred_problems(max_n: int, mnist: bool):
    """(label, X, y, C, cache_size, machines) for ``part_deferred``."""
    from msvm import datasets
    from msvm.fast import CrammerSingerSVC, InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC

    if mnist:  # 5 000 images: their Gram matrix (200 MB) is computed on demand with 50 MB
        X, y = datasets.load("mnist")
        order = np.random.default_rng(0).permutation(len(y))
        yield "MNIST 5 000 x 784, C = 10, cache_size = 50", X[order] / 255.0, y[order], 10.0, 50, (
            WestonWatkinsSVC, CrammerSingerSVC)  # fmt: skip
        return
    for n in sorted({8000, max_n}):
        Xtr, _, ytr, _ = synthetic_split(n + 2000, 2000)
        machines = (WestonWatkinsSVC, CrammerSingerSVC, InhibitorySVC, LeeLinWahbaSVC)
        yield f"{n}", Xtr, ytr, 1.0, 200, machines


def part_deferred(max_n: int, repeats: int, mnist: bool = False):
    from msvm.fast import engine

    batch = engine.DEFERRED_BATCH
    lines = [f"| N | machine | deferred ({batch}) [s] | at every step [s] | ratio | steps | "
             "dual objectives, relative difference | SVC [s] |", "|---" * 8 + "|"]  # fmt: skip
    for n, Xtr, ytr, C, cache_size, machines in deferred_problems(max_n, mnist):
        svc = np.median([timed_fit(SVC(C=C), Xtr, ytr, time.process_time) for _ in range(repeats)])
        for Estimator in machines:
            warm_up(Estimator, Xtr, ytr)
            times, fits = {batch: [], 0: []}, {}
            for seed in range(repeats):
                for b in (batch, 0):
                    engine.DEFERRED_BATCH = b
                    fits[b] = Estimator(C=C, cache_size=cache_size, random_state=seed, n_jobs=1)
                    times[b].append(timed_fit(fits[b], Xtr, ytr, time.process_time))
            engine.DEFERRED_BATCH = batch
            on, off = np.median(times[batch]), np.median(times[0])
            dual_on, dual_off = fits[batch].dual_objective_, fits[0].dual_objective_
            steps = f"{fits[batch].n_steps_} / {fits[0].n_steps_}"
            lines.append(
                f"| {n} | {Estimator.__name__} | {on:.2f} | {off:.2f} | {on / off:.2f} "
                f"| {steps} | {abs(dual_on - dual_off) / abs(dual_off):.1e} | {svc:.2f} |"
            )
            print(lines[-1], flush=True)
    write("deferred_mnist" if mnist else "deferred", "Output updates deferred in batches against "
          f"at every step: CPU time, one thread, medians of {repeats} (steps of the last fit "
          "each)", lines)  # fmt: skip


def part_memory(seconds: float = 90.0):
    process = subprocess.Popen([sys.executable, "-c", MEMORY], stdout=subprocess.PIPE, text=True)
    process.stdout.readline()  # "fitting": the data are in memory
    start, peak = time.perf_counter(), 0.0
    while time.perf_counter() - start < seconds and process.poll() is None:
        for line in open(f"/proc/{process.pid}/status"):
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
        time.sleep(0.5)
    process.kill()
    data = 60000 * 784 * 8 / 2**20
    lines = ["| N x d | cache_size [MB] | peak RSS [MB] | data [MB] |", "|---|---|---|---|",
             f"| 60000 x 784 | 200 (default) | {peak:.0f} | {data:.0f} |"]  # fmt: skip
    write("memory", f"Peak memory of an RBF InhibitorySVC fit (set-up and first {seconds:.0f} s)",
          lines)  # fmt: skip


def part_predict(n_fit: int = 5000, n_predict: int = 60000):
    import tracemalloc

    from msvm.core import kernels
    from msvm.fast import WestonWatkinsSVC

    X_fit, X_new, y_fit, _ = synthetic_split(n_fit + n_predict, n_predict)
    model = WestonWatkinsSVC(C=10.0, random_state=0).fit(X_fit, y_fit)
    default, rows, outputs = kernels.BLOCK_BYTES, [], {}
    for label, block in (("blocks (default)", default), ("whole matrix (before)", 2**62)):
        kernels.BLOCK_BYTES = block
        tracemalloc.start()
        start = time.perf_counter()
        outputs[label] = model.decision_function(X_new)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rows.append(f"| {label} | {peak:.0f} | {seconds:.2f} |")
    kernels.BLOCK_BYTES = default
    difference = np.abs(outputs["blocks (default)"] - outputs["whole matrix (before)"]).max()
    lines = [f"{model.support_.size} support vectors, {n_predict} points; largest output "
             f"difference {difference:.1e}", "",
             "| k(x, support vectors) | peak traced memory [MB] | time [s] |", "|---|---|---|",
             *rows]  # fmt: skip
    write("predict", "Prediction memory: kernel rows in blocks against the whole matrix", lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parts", nargs="*", default=["cold", "scaling", "threads", "memory"])
    parser.add_argument("--max-n", type=int, default=16000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    for part in args.parts:
        if part == "cold":
            part_cold()
        elif part == "scaling":
            part_scaling(args.max_n, args.repeats)
        elif part == "threads":
            part_threads(args.repeats)
        elif part == "memory":
            part_memory()
        elif part == "deferred":
            part_deferred(args.max_n, args.repeats)
        elif part == "specialisations":
            part_specialisations()
        elif part == "predict":
            part_predict()
        elif part == "ovr":
            part_ovr(args.max_n, args.repeats)
        elif part == "deferred-mnist":
            part_deferred(args.max_n, args.repeats, mnist=True)
        else:
            parser.error(f"unknown part {part!r}")


if __name__ == "__main__":
    main()
