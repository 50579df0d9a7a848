"""The robustness study of ISVM §9 (Tables 2-4): leave-one-out accuracy over a (C, gamma) grid.

For each data set, subset size N_s and realisation (a random subset of N_s points), every machine's
leave-one-out accuracy is computed for each (C, gamma) of the grid with the paper's normalised
Gaussian exp(-g ||x - x'||^2 / M) (M features; ``msvm.core.isvm_gamma``).  Leave-one-out runs on
``msvm.fast.loo.leave_one_out_path``: one Gram matrix per gamma, the C grid walked with warm starts
and every fold seeded from the full-data dual solution.

Pooling (Table 3).  The paper: "The performances of all explored metaparameters ... are pooled and
sorted.  The table shows the average performance of the 10%, 25%, and 50% best models", read here
as: average each setting's leave-one-out accuracy over the realisations, rank the settings, and
report the mean of the best 10 / 25 / 50 % of them -- the accuracy of an *area* of near-optimal
hyper-parameters, which is what the paper calls robustness.

Table 4.  The paper's likelihood ratios are the maximum-likelihood ratio of a sign test over data
sets: with k of n data sets on which the inhibitory machine is better, L = sup_p p^k (1-p)^(n-k) /
sup_{p <= 1/2} p^k (1-p)^(n-k), which reproduces every printed value (446 = 13 of 14, 52 = 12 of
14, 11.35 = 11 of 14, 3.77 = 10 of 14, 1.78 = 9 of 14; 22.17 = 8 of 9, 4.35 = 7 of 9).  The
paper's significance levels for its thresholds are not what the binomial gives (``msvm claims``):
P(L >= 3.77 | p = 1/2) = 0.090, not <= 0.05, and P(L >= 11.35) = 0.029, not <= 0.01.  The tables
here print k/n and the exact one-sided p-value next to L.

Preprocessing.  The paper does not say how features were scaled.  ``StudyConfig.preprocessing``
chooses one of ``PREPROCESSING``, each fitted on the N_s points of the realisation only (never on
the rest of the data set) and applied to them: ``"none"`` (features as loaded), ``"standardise"``
(the default: mean 0, standard deviation 1), ``"range_pm1"`` (min-max to [-1, 1]) and
``"range_01"`` (min-max to [0, 1]); a feature constant on the subset becomes 0.  The leave-one-out
folds share the subset's transform (the left-out point takes part in its fit, as in the paper's
reading where the whole data set was scaled).  Before this option the study standardised over
the whole data set; results of that kind are refused by a folder of the new kind
(``RESULT_KEYS``).  Data sets of ISVM Table 2 are loaded by ``msvm.datasets`` (raw features,
including Iris and Wine), digits by ``msvm.core.datasets`` (pixels / 16).

Choices the paper leaves open, made here: subsets are uniform without
replacement (redrawn until two classes are present); a nominal size N_s that is not below 95 %
of the data set is replaced, once, by the largest multiple of 10 at most 0.95 N (Iris: 140, as
in the paper's Table 3; Wine: 160, where the paper used 150), and the larger sizes are dropped.
The C grid is the paper's 0.1, 0.6, ..., 49.6 (Table 3's note: C from 0.1 to 50 in steps of 0.5).
"""

from __future__ import annotations

import csv
import difflib
import json
import math
import os
import re
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from msvm.core import datasets
from msvm.core.kernels import isvm_gamma, kernel_matrix
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)
from msvm.fast.loo import leave_one_out_path
from msvm.verify.printed_ww import PrintedKernelWestonWatkinsSVC
from msvm.verify.sign_test import likelihood_ratio, sign_test_p_value

# The machines of the paper (first three) and the ones msvm adds, as kernel="precomputed" models;
# "weston_watkins_printed" is WW trained on appendix E's printed kernel, as ISVM §9 says the
# paper's WW was (``msvm.verify.printed_ww``).
MACHINES = {
    "inhibitory": InhibitorySVC,
    "one_vs_all": OneVsAllSVC,
    "weston_watkins": WestonWatkinsSVC,
    "weston_watkins_printed": PrintedKernelWestonWatkinsSVC,
    "crammer_singer": CrammerSingerSVC,
    "lee_lin_wahba": LeeLinWahbaSVC,
    "simplex_hinge": SimplexSVC,
}
PAPER_MACHINES = ("inhibitory", "one_vs_all", "weston_watkins")
PERCENTILES = (10, 25, 50)
DEFAULT_SIZES = (50, 100, 200, 500)
DEFAULT_GAMMAS = (5.0, 10.0)
DEFAULT_CS = tuple(round(0.1 + 0.5 * k, 10) for k in range(100))  # 0.1, 0.6, ..., 49.6
DEFAULT_PREPROCESSING = "standardise"


def _standardise(X):
    centre, spread = X.mean(axis=0), X.std(axis=0)
    return centre, np.where(spread > 0, spread, np.inf)


def _range(low: float, high: float):
    def fit(X):
        lo, hi = X.min(axis=0), X.max(axis=0)
        varies = hi > lo
        width = np.where(varies, hi - lo, 1.0) / (high - low)
        centre = np.where(varies, lo - low * width, 0.0)  # (X - lo) / width + low
        return centre, np.where(varies, width, np.inf)

    return fit


# name -> fit(X) giving (centre, scale), transform (X - centre) / scale, scale = inf for a
# constant feature; None: no transform.
PREPROCESSING = {
    "none": None,
    "standardise": _standardise,
    "range_pm1": _range(-1.0, 1.0),
    "range_01": _range(0.0, 1.0),
}


def preprocess(X, how: str) -> np.ndarray:
    """``X`` transformed by ``PREPROCESSING[how]`` fitted on ``X`` itself (a subset's points).

    A feature constant on ``X`` becomes 0 under every transform but ``"none"``.
    """
    if how not in PREPROCESSING:
        raise ValueError(f"Unknown preprocessing {how!r}; expected one of {list(PREPROCESSING)}.")
    X = np.asarray(X, dtype=np.float64)
    if PREPROCESSING[how] is None:
        return X.copy()
    centre, scale = PREPROCESSING[how](X)
    return (X - centre) / scale  # scale = inf for a constant feature: 0


def paper_table3() -> dict:
    """ISVM Table 3, all 14 data sets: {(data set, N_s): {machine: (pct10, pct25, pct50)}}.

    Transcribed from the paper into ``isvm_table3.csv`` (data sets named in lower case; Iris and
    Wine are the ones msvm ships).
    """
    table: dict = {}
    with open(Path(__file__).with_name("isvm_table3.csv"), newline="") as handle:
        for row in csv.DictReader(handle):
            pct = tuple(float(row[k]) for k in ("pct10", "pct25", "pct50"))
            table.setdefault((row["dataset"], int(row["n_s"])), {})[row["machine"]] = pct
    return table


@dataclass(frozen=True)
class StudyConfig:
    """What a study computes (results on disk are reused when ``RESULT_KEYS`` agree)."""

    datasets: tuple[str, ...] = ("iris", "wine", "digits")
    sizes: tuple[int, ...] = DEFAULT_SIZES
    realisations: int = 100
    machines: tuple[str, ...] = PAPER_MACHINES
    gammas: tuple[float, ...] = DEFAULT_GAMMAS
    Cs: tuple[float, ...] = DEFAULT_CS
    seed: int = 0
    tol: float = 1e-3
    label_column: str | None = None  # of CSV data sets
    preprocessing: str = DEFAULT_PREPROCESSING  # fitted on each subset (``PREPROCESSING``)

    def __post_init__(self):
        if self.preprocessing not in PREPROCESSING:
            raise ValueError(
                f"Unknown preprocessing {self.preprocessing!r}; "
                f"expected one of {list(PREPROCESSING)}."
            )
        unknown = [m for m in self.machines if m not in MACHINES]
        if unknown:
            raise ValueError(f"Unknown machines {unknown}; expected some of {list(MACHINES)}.")
        if not self.datasets or not self.machines or not self.sizes:
            raise ValueError("A study needs at least one data set, machine and size.")
        if self.realisations < 1:
            raise ValueError(f"realisations must be at least 1; got {self.realisations}.")
        if min(self.sizes) < 4:
            raise ValueError(f"Subset sizes must be at least 4; got {list(self.sizes)}.")
        grid = np.array([*self.gammas, *self.Cs], dtype=float)
        if not self.gammas or not self.Cs or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise ValueError("gammas and Cs must be non-empty lists of positive numbers.")
        if not self.tol > 0:
            raise ValueError(f"tol must be positive; got {self.tol}.")
        for name in ("datasets", "sizes", "machines", "gammas", "Cs"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name} has repeated entries: {list(values)}.")

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Task:
    """One unit of work: every (gamma, C) of one machine on one random subset."""

    dataset: str
    n_s: int
    realisation: int
    machine: str

    @property
    def filename(self) -> str:
        return f"{self.dataset}__{self.n_s}__{self.realisation}__{self.machine}.json"


@dataclass
class TaskResult:
    task: Task
    accuracy: np.ndarray  # (len(gammas), len(Cs)) leave-one-out accuracy
    seconds: float
    steps: int
    indices: list = field(default_factory=list)  # the subset drawn
    unconverged: int = 0  # leave-one-out folds that stopped at max_iter

    def as_dict(self) -> dict:
        return {
            "task": asdict(self.task),
            "accuracy": self.accuracy.tolist(),
            "seconds": self.seconds,
            "steps": self.steps,
            "indices": self.indices,
            "unconverged": self.unconverged,
        }

    @classmethod
    def from_dict(cls, d: dict) -> TaskResult:
        values = (np.array(d["accuracy"]), d["seconds"], d["steps"], d["indices"])
        return cls(Task(**d["task"]), *values, d.get("unconverged", 0))


# -- data ---------------------------------------------------------------------------------------
def split_name(name: str) -> tuple[str | None, str]:
    """``"glass=data/g.csv"`` -> ``("glass", "data/g.csv")``; anything else -> ``(None, name)``.

    A name before ``=`` names a CSV file after a data set (an existing file is never split)."""
    given, sep, path = name.partition("=")
    if sep and given and not Path(name).exists():
        return given.strip(), path
    return None, name


def load_dataset(name: str, label_column: str | None = None):
    """A data set in full, features as loaded (``preprocess`` scales each subset): one of ISVM
    Table 2 (``msvm.datasets``, fetched beforehand), digits, or a CSV file (``FILE`` or
    ``NAME=FILE``)."""
    from msvm import datasets as table2

    if name in table2.NAMES:
        X, y = table2.load(name)
    else:
        path = split_name(name)[1]
        if path not in datasets.NAMES and not Path(path).is_file():
            names = sorted(set(table2.NAMES) | set(datasets.NAMES))
            close = difflib.get_close_matches(path, names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"Unknown data set {path!r}: not one of ISVM Table 2's or the bundled "
                f"{names} nor a CSV file.{hint}"
            )
        X, y = datasets.load_any(path, label_column)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


def dataset_label(name: str) -> str:
    """The name a data set goes by in the tables: a bundled or ISVM Table 2 name, the name given
    as ``NAME=FILE``, else the CSV file's stem."""
    from msvm import datasets as table2

    given, path = split_name(name)
    if given is not None:
        return given
    return path if path in datasets.NAMES or path in table2.NAMES else Path(path).stem


def paper_name(label: str, names=None) -> str | None:
    """The ISVM Table 2 / 3 data set a table label stands for, or None.

    The label itself in lower case (``Glass``), else the one Table 3 name among the label's words
    (``glass_train``, ``isvm-vowel``); E. coli is also found as ``e.coli`` or ``e_coli``."""
    names = sorted({n for n, _ in paper_table3()}) if names is None else names
    lower = label.lower().replace("e.coli", "ecoli").replace("e_coli", "ecoli")
    if lower in names:
        return lower
    words = set(re.split(r"[^a-z0-9]+", lower))
    found = [n for n in names if n in words]
    return found[0] if len(found) == 1 else None


def effective_sizes(sizes, n_total: int) -> list[tuple[int, int]]:
    """(nominal N_s, subset size used) pairs.

    cap = the largest multiple of 10 at most 0.95 N; sizes below it are kept, the first size at
    or above it becomes the cap, larger sizes are dropped (ISVM Table 3: Iris 140).
    """
    cap = 10 * int(0.95 * n_total // 10)
    pairs = []
    for nominal in sorted(set(sizes)):
        if nominal < cap:
            pairs.append((nominal, nominal))
        else:
            if cap >= 4:
                pairs.append((nominal, cap))
            break
    return pairs


def draw_subset(y, n_s: int, seed: int, dataset: str, realisation: int) -> np.ndarray:
    """Indices of realisation ``realisation``: uniform without replacement, >= 2 classes."""
    rng = np.random.default_rng([seed, zlib.crc32(dataset.encode()), n_s, realisation])
    for _ in range(1000):
        idx = np.sort(rng.choice(y.size, size=n_s, replace=False))
        if np.unique(y[idx]).size >= 2:
            return idx
    raise ValueError(f"Could not draw a subset of {n_s} points with two classes from {dataset}.")


# -- one task -----------------------------------------------------------------------------------
def run_task(task: Task, X, y, config: StudyConfig) -> TaskResult:
    """Leave-one-out accuracies of one machine on one subset for the whole (gamma, C) grid."""
    start = time.perf_counter()
    idx = draw_subset(y, task.n_s, config.seed, task.dataset, task.realisation)
    Xs, ys = preprocess(X[idx], config.preprocessing), y[idx]
    estimator = MACHINES[task.machine](kernel="precomputed", tol=config.tol, random_state=0)
    accuracy, steps, unconverged = [], 0, 0
    for g in config.gammas:
        K = kernel_matrix(Xs, Xs, "rbf", isvm_gamma(g, X.shape[1]))
        if hasattr(estimator, "leave_one_out_path"):  # the printed-kernel WW: its own path
            path = estimator.leave_one_out_path(K, ys, config.Cs)
        else:
            path = leave_one_out_path(estimator, K, ys, config.Cs)
        accuracy.append(path.accuracy(ys))
        steps += path.steps
        unconverged += path.unconverged
    seconds = time.perf_counter() - start
    return TaskResult(task, np.array(accuracy), seconds, steps, idx.tolist(), unconverged)


# -- pooling --------------------------------------------------------------------------------------
def pooled(accuracy: np.ndarray, percentiles=PERCENTILES) -> tuple[float, ...]:
    """Mean accuracy of the best p % of settings, settings ranked by their mean over realisations.

    ``accuracy`` has shape (realisations, settings); at least one setting enters every pool.
    """
    per_setting = np.sort(np.asarray(accuracy).mean(axis=0))[::-1]
    n = per_setting.size
    return tuple(float(per_setting[: max(1, math.ceil(p * n / 100))].mean()) for p in percentiles)


# -- running a study ----------------------------------------------------------------------------
def plan(config: StudyConfig, data: dict) -> list[Task]:
    tasks = []
    for name in config.datasets:
        label = dataset_label(name)
        _, y = data[label]
        pairs = effective_sizes(config.sizes, y.size)
        if not pairs:
            raise ValueError(f"Data set {label!r} has {y.size} points: too few for subsets.")
        for _, n_s in pairs:
            for r in range(config.realisations):
                tasks.extend(Task(label, n_s, r, m) for m in config.machines)
    return tasks


# What a task's result depends on besides its own (data set, N_s, realisation, machine): a folder
# holds results for one such setting, and a study may grow in every other direction (more
# realisations, sizes, machines or data sets) reusing the tasks already done.
RESULT_KEYS = ("gammas", "Cs", "seed", "tol", "label_column", "preprocessing")


def prepare_output(config: StudyConfig, out: Path) -> Path:
    """Create ``out`` (and ``out/tasks``); refuse results computed on another grid or seed."""
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    stored = out / "config.json"
    current = config.as_dict()
    if stored.exists():
        previous = json.loads(stored.read_text())["config"]
        changed = [k for k in RESULT_KEYS if previous.get(k) != current[k]]
        if changed:
            raise ValueError(
                f"{out} holds results for another {', '.join(changed)} "
                f"({ {k: previous.get(k) for k in changed} }); use another output folder."
            )
    stored.write_text(json.dumps({"config": current}, indent=2))
    for partial in (out / "tasks").glob("*.tmp*"):  # a write cut short by an interruption
        partial.unlink()
    return out / "tasks"


def save_result(folder: Path, result: TaskResult) -> None:
    """Write atomically: a study interrupted mid-write never leaves a truncated result."""
    target = folder / result.task.filename
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(result.as_dict()))
    os.replace(tmp, target)


def _serial(pending, data, config):
    for task in pending:
        yield run_task(task, *data[task.dataset], config)


def _joblib(pending, data, config, jobs):
    from joblib import Parallel, delayed

    run = Parallel(n_jobs=jobs, return_as="generator_unordered")
    yield from run(delayed(run_task)(t, *data[t.dataset], config) for t in pending)


# seconds to wait for a running Dask scheduler (--scheduler) to answer
SCHEDULER_TIMEOUT = 10


def scheduler_client(scheduler: str):
    """A client of the Dask scheduler at that address; one that does not answer within
    SCHEDULER_TIMEOUT seconds is a ``ValueError`` (the study has not touched its folder yet)."""
    from dask.distributed import Client

    try:
        return Client(scheduler, timeout=f"{SCHEDULER_TIMEOUT}s")
    except (OSError, ValueError, TypeError) as error:  # nothing listening, or no address
        message = f"--scheduler {scheduler}: no Dask scheduler answered ({error})."
        raise ValueError(message) from None


def _dask(pending, data, config, client, workers):
    """The tasks on ``client`` (a running scheduler's), else on a new ``LocalCluster`` of
    ``workers`` processes."""
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if client is None:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        client = Client(cluster)
    try:
        scattered = {name: client.scatter(arrays, broadcast=True) for name, arrays in data.items()}
        futures = [
            client.submit(run_task, t, *scattered[t.dataset], config, pure=False) for t in pending
        ]
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_study(
    config: StudyConfig,
    out,
    *,
    jobs: int = 1,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
) -> list[TaskResult]:
    """Run (or resume) a study into folder ``out``; returns every task's result.

    Tasks already on disk are skipped.  ``jobs > 1``: joblib processes; ``workers`` or
    ``scheduler``: a Dask ``LocalCluster`` of that many processes, or the cluster at that address.
    Each result is written as soon as it arrives, so an interrupted study resumes where it stopped.
    """
    from tqdm import tqdm

    if jobs == 0 or (workers is not None and workers < 1):
        raise ValueError(f"jobs must be non-zero and workers positive; got {jobs}, {workers}.")
    labels = [dataset_label(n) for n in config.datasets]
    if len(set(labels)) != len(labels):
        raise ValueError(f"Data sets must have distinct names; got {labels}.")
    data = {
        label: load_dataset(n, config.label_column)
        for label, n in zip(labels, config.datasets, strict=True)
    }
    tasks = plan(config, data)
    client = scheduler_client(scheduler) if scheduler else None
    try:
        folder = prepare_output(config, Path(out))  # every check passed: only now touch it
    except Exception:
        if client is not None:
            client.close()
        raise
    pending = [t for t in tasks if not (folder / t.filename).exists()]
    if scheduler or workers is not None:
        results = _dask(pending, data, config, client, workers or 1)
    elif jobs != 1:
        results = _joblib(pending, data, config, jobs)
    else:
        results = _serial(pending, data, config)
    with tqdm(
        total=len(tasks),
        initial=len(tasks) - len(pending),
        unit="task",
        disable=None if progress else True,
    ) as bar:
        for result in results:
            save_result(folder, result)
            bar.update()
    return [TaskResult.from_dict(json.loads((folder / t.filename).read_text())) for t in tasks]


# -- tables and figure ---------------------------------------------------------------------------
@dataclass
class Table3Row:
    dataset: str
    n_s: int
    machine: str
    pct: tuple[float, ...]  # percent, best 10 / 25 / 50 %
    realisations: int
    seconds: float  # summed task time


def table3(results: list[TaskResult], config: StudyConfig) -> list[Table3Row]:
    groups: dict[tuple, list[TaskResult]] = {}
    for r in results:
        groups.setdefault((r.task.dataset, r.task.n_s, r.task.machine), []).append(r)
    order = {m: k for k, m in enumerate(config.machines)}
    rows = []
    for (name, n_s, machine), rs in groups.items():
        acc = np.stack([r.accuracy.ravel() for r in rs])  # (realisations, gammas x Cs)
        pct = tuple(100.0 * p for p in pooled(acc))
        rows.append(Table3Row(name, n_s, machine, pct, len(rs), sum(r.seconds for r in rs)))
    datasets_order = [dataset_label(n) for n in config.datasets]
    rows.sort(key=lambda r: (datasets_order.index(r.dataset), r.n_s, order[r.machine]))
    return rows


@dataclass
class Table4Entry:
    nominal: int
    competitor: str
    percentile: int
    wins: int  # data sets on which the inhibitory machine is better (to the printed 0.01 %)
    n: int  # data sets with this nominal size for both machines (0: none)
    ratio: float
    p_value: float


def table4(pct: dict, sizes_by_dataset: dict, competitors) -> list[Table4Entry]:
    """The inhibitory machine against each competitor, per nominal size and percentile.

    ``pct[(data set, N_s, machine)]`` holds the pooled accuracies (percent) and
    ``sizes_by_dataset[data set]`` its (nominal, used) size pairs.  Accuracies are compared as
    printed, to 0.01 %, and a tie counts against the inhibitory machine (H0 is "better than or
    equal"), so n is the number of data sets with that size.  ISVM Table 4 follows this rule in
    20 of its 24 cells (``msvm claims``).
    """
    nominals = sorted({nominal for pairs in sizes_by_dataset.values() for nominal, _ in pairs})
    entries = []
    for nominal in nominals:
        for competitor in competitors:
            for k, percentile in enumerate(PERCENTILES):
                wins = n = 0
                for name, pairs in sizes_by_dataset.items():
                    n_s = dict(pairs).get(nominal)
                    mine = pct.get((name, n_s, "inhibitory"))
                    theirs = pct.get((name, n_s, competitor))
                    if mine is None or theirs is None:
                        continue
                    n += 1
                    wins += round(mine[k], 2) > round(theirs[k], 2)
                ratio, p_value = likelihood_ratio(wins, n), sign_test_p_value(wins, n)
                entries.append(
                    Table4Entry(nominal, competitor, percentile, wins, n, ratio, p_value)
                )
    return entries


def table4_markdown(entries: list[Table4Entry], competitors) -> list[str]:
    """Table 4 as Markdown lines: L (k/n, exact one-sided p) per N_s, competitor, percentile."""
    lines = [
        "| N_s | H0: better than or equal to the inhibitory SVM | best 10 % | best 25 % | "
        "best 50 % |",
        "|---|---|---|---|---|",
    ]
    for nominal in sorted({e.nominal for e in entries}):
        for competitor in competitors:
            cells = [
                f"L = {e.ratio:.2f} ({e.wins}/{e.n}, p = {e.p_value:.3f})" if e.n else "–"
                for e in entries
                if e.nominal == nominal and e.competitor == competitor
            ]
            lines.append(f"| {nominal} | {competitor} | " + " | ".join(cells) + " |")
    return lines


def write_outputs(results, config: StudyConfig, out) -> dict:
    """table3.csv / table3.md, table4.csv / table4.md and robustness.png in ``out``."""
    out = Path(out)
    rows = table3(results, config)
    if not rows:
        raise ValueError("There are no results to tabulate.")
    with open(out / "table3.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["dataset", "n_s", "machine", "pct10", "pct25", "pct50"])
        for r in rows:
            writer.writerow([r.dataset, r.n_s, r.machine, *(f"{v:.2f}" for v in r.pct)])
    paper = paper_table3()
    lines = [
        "| data set | N_s | machine | best 10 % | best 25 % | best 50 % | ISVM Table 3 | "
        "realisations | task time [s] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        printed = paper.get((paper_name(r.dataset), r.n_s), {}).get(r.machine)
        printed = " / ".join(f"{v:.2f}" for v in printed) if printed else ""
        lines.append(
            f"| {r.dataset} | {r.n_s} | {r.machine} | "
            + " | ".join(f"{v:.2f}" for v in r.pct)
            + f" | {printed} | {r.realisations} | {r.seconds:.1f} |"
        )
    (out / "table3.md").write_text("\n".join(lines) + "\n")

    sizes_by_dataset = {}
    for name in config.datasets:
        n_total = load_dataset(name, config.label_column)[1].size
        sizes_by_dataset[dataset_label(name)] = effective_sizes(config.sizes, n_total)
    pct = {(r.dataset, r.n_s, r.machine): r.pct for r in rows}
    competitors = [m for m in config.machines if m != "inhibitory"]
    entries = table4(pct, sizes_by_dataset, competitors) if "inhibitory" in config.machines else []
    with open(out / "table4.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["n_s", "competitor", "percentile", "wins", "n", "ratio", "p_value"])
        for e in entries:
            writer.writerow(
                [e.nominal, e.competitor, e.percentile, e.wins, e.n, f"{e.ratio:.3f}"]
                + [f"{e.p_value:.4f}"]
            )
    lines = table4_markdown(entries, competitors)
    if "inhibitory" not in config.machines or not competitors:  # say why the table is empty
        lines.append(
            "\nTable 4 compares each machine with the inhibitory SVM: it needs `inhibitory` and at "
            "least one other machine in --machines."
        )
    (out / "table4.md").write_text("\n".join(lines) + "\n")
    plot(rows, out / "robustness.png")
    return {"table3": rows, "table4": entries}


def plot(rows: list[Table3Row], path, columns: int = 3) -> None:
    """Save :func:`figure` to ``path`` (PNG, 100 dpi: 1200 px wide at most, by default)."""
    import matplotlib.pyplot as plt

    fig = figure(rows, columns)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def figure(rows: list[Table3Row], columns: int = 3):
    """Pooled leave-one-out accuracy against N_s: one panel per data set on a grid of at most
    ``columns`` panels a row, one colour per machine, best 10 % solid and best 50 % dashed (a
    data set with a single N_s shows its two values as points: a filled and an open marker)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    names = list(dict.fromkeys(r.dataset for r in rows))
    machines = list(dict.fromkeys(r.machine for r in rows))
    n_cols = min(columns, len(names))
    n_rows = math.ceil(len(names) / n_cols)
    fig, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.0 * n_cols, 3.3 * n_rows + 0.8), squeeze=False
    )
    for ax, name in zip(axes.flat, names):  # noqa: B905 -- the grid may have spare panels
        sizes = sorted({r.n_s for r in rows if r.dataset == name})
        for k, machine in enumerate(machines):
            mine = sorted(
                (r for r in rows if r.dataset == name and r.machine == machine),
                key=lambda r: r.n_s,
            )
            x = [r.n_s for r in mine]
            colour = f"C{k}"
            if len(sizes) == 1:  # points, spread a little so the machines do not hide each other
                x = [v + (k - (len(machines) - 1) / 2) * 0.02 * v for v in x]
                ax.plot(x, [r.pct[0] for r in mine], "o", color=colour)
                ax.plot(x, [r.pct[2] for r in mine], "o", mfc="none", color=colour)
            else:
                ax.plot(x, [r.pct[0] for r in mine], "o-", color=colour)
                ax.plot(x, [r.pct[2] for r in mine], "o--", mfc="none", color=colour, alpha=0.8)
        ax.set_title(name)
        ax.set_xticks(sizes)
        if len(sizes) > 1:
            ax.set_xscale("log")
            ax.set_xticks(sizes)
            ax.set_xticklabels([str(v) for v in sizes])
            ax.minorticks_off()
        else:
            ax.set_xlim(sizes[0] * 0.9, sizes[0] * 1.1)
        ax.set_xlabel("N_s (training subset size)")
        ax.set_ylabel("leave-one-out accuracy [%]")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    handles = [Line2D([], [], color=f"C{k}", lw=2, label=m) for k, m in enumerate(machines)]
    handles += [
        Line2D([], [], color="0.3", marker="o", ls="-", label="best 10 % of settings"),
        Line2D([], [], color="0.3", marker="o", mfc="none", ls="--", label="best 50 % of settings"),
    ]
    fig.legend(
        handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize=8, frameon=False
    )
    legend_rows = math.ceil(len(handles) / 4)
    fig.tight_layout(rect=(0, 0.06 * legend_rows / n_rows, 1, 1))
    return fig
