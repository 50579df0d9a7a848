"""The ``msvm`` command.

``msvm verify`` runs every cross-check on bundled data (or a CSV file) and prints the evidence,
exiting non-zero when a check fails; ``msvm claims`` checks the papers' printed formulas;
``msvm consistency`` runs ISVM's Bayes-consistency Monte Carlo; ``msvm robustness`` runs the
leave-one-out study of ISVM §9 (Tables 3 and 4), resumable, on joblib or Dask; ``msvm datasets``
fetches the real data sets of ISVM Table 2 and compares them with it (``msvm.datasets``);
``msvm compile`` fills numba's cache so that a later first fit starts warm.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from msvm.core import datasets
from msvm.core.arguments import OneLineParser, check_output_paths
from msvm.reference import FORMULATIONS, Problem
from msvm.verify.crosscheck import BIASED, CheckRow, check

# the estimators ``msvm compile`` fits (each on the kernel path and on explicit weights)
COMPILED = (
    "OneVsAllSVC",
    "InhibitorySVC",
    "WestonWatkinsSVC",
    "CrammerSingerSVC",
    "LeeLinWahbaSVC",
    "SimplexSVC",
    "MultiPrototypeSVC",
    "MKPMClassifier",
)
# a CSV file of more rows needs --n-samples (the digits subset is 150)
CSV_ROWS_WHOLE = 200
# data set -> (kernel, C, subset size, subset size with --quick)
BUNDLED = {
    "iris": ("linear", 0.1, None, None),
    "wine": ("rbf", 1.0, None, 90),
    "digits": ("rbf", 1.0, 150, 100),
}


def verify_command(args) -> int:
    from tqdm import tqdm

    rows, profiles = [], []
    formulations = args.formulations
    if args.fit_intercept:
        formulations = [f for f in formulations if f in BIASED]
        if not formulations:  # a run that checks nothing must not report success
            raise ValueError(
                f"--fit-intercept: none of {', '.join(args.formulations)} has a bias; the "
                f"formulations that have one: {', '.join(BIASED)}."
            )
    loaded = []  # every data set read and checked before the first is verified
    for name in args.dataset:
        kernel, C, n, n_quick = BUNDLED.get(name, ("rbf", 1.0, None, None))
        kernel = args.kernel or kernel  # the options override a bundled set's defaults
        C = C if args.C is None else args.C
        n = args.n_samples or (n_quick if args.quick else n)
        X, y = datasets.load_any(name, args.label_column, n_samples=n)
        if name not in BUNDLED and n is None and y.size > CSV_ROWS_WHOLE:
            raise ValueError(
                f"{name} has {y.size} rows: give --n-samples (a class-balanced subset; the "
                "reference layer solves every formulation exactly, in time that grows quickly "
                f"with N; files of up to {CSV_ROWS_WHOLE} rows are checked whole)"
            )
        if name not in BUNDLED:  # a user's CSV: standardised features
            X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        Problem(X, y, C=C, kernel=kernel)  # bad input is refused here, before any check, so
        # that a ValueError inside a check is the library's failure (a FAIL row), not a usage error
        loaded.append((name, kernel, C, X, y))
    for name, kernel, C, X, y in loaded:
        label = Path(name).name
        print(f"\n{label}: N={len(y)}, L={np.unique(y).size}, kernel={kernel}, C={C:g}")
        width = 21 if args.fit_intercept else 16  # room for "+bias"
        print(
            f"{'formulation':<{width}}{'primal':>14}{'rel. gap':>10}{'fast':>28}{'fast diff':>11}"
            f"{'output diff':>12}  result"
        )
        bar = tqdm(
            formulations,
            desc=label,
            unit="formulation",
            disable=True if name in BUNDLED else progress_disabled(args),
            leave=False,
        )
        for formulation in bar:
            start = time.perf_counter()
            try:
                row = check(
                    formulation,
                    X,
                    y,
                    C=C,
                    kernel=kernel,
                    dataset=label,
                    paper_solvers=not args.quick,
                    fit_intercept=args.fit_intercept,
                )
            except (ValueError, RuntimeError) as error:  # the input passed: the library failed
                nan = float("nan")
                row = CheckRow(formulation, label, nan, nan, nan, "", nan, nan, nan, passed=False)
                row.reasons.append(f"the check raised {type(error).__name__}: {error}")
            elapsed = time.perf_counter() - start
            verdict = "pass" if row.passed else "FAIL: " + "; ".join(row.reasons)
            if row.notes:
                verdict += " [" + "; ".join(row.notes) + "]"
            shown = formulation + ("+bias" if args.fit_intercept else "")
            bar.write(
                f"{shown:<{width}}{row.primal:>14.6f}{row.gap:>10.1e}{row.fast:>28}"
                f"{row.fast_difference:>11.1e}{row.output_difference:>12.1e}  {verdict}"
                f"  ({elapsed:.1f} s)",
                file=sys.stdout,
            )
            rows.append(row)
        if args.plots:
            from msvm.verify.inhibition import profile

            profiles.append(profile(X, y, C=C, kernel=kernel, dataset=label))
            print(profiles[-1].summary())
    if args.json:
        Path(args.json).write_text(json.dumps([r.as_dict() for r in rows], indent=2, default=float))
    if args.markdown:
        lines = [
            "| data | formulation | primal | gap | fast | fast diff | output diff | result |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| {r.dataset} | {r.formulation} | {r.primal:.6f} | {r.gap:.1e} | "
                f"{r.fast} | {r.fast_difference:.1e} | {r.output_difference:.1e} | "
                f"{'pass' if r.passed else 'FAIL'}{''.join(f'; {n}' for n in r.notes)} |"
            )
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    if profiles:
        from msvm.verify.inhibition import plot

        Path(args.plots).mkdir(parents=True, exist_ok=True)
        plot(profiles, Path(args.plots) / "mu_profile.png")
        print(f"mu profile saved to {Path(args.plots) / 'mu_profile.png'}")
    failed = [r for r in rows if not r.passed]
    astray = [prof.dataset for prof in profiles if not prof.agrees]
    print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
    if astray:
        print(f"the mu profile does not meet the reference primal (4.1) on {', '.join(astray)}")
    return 1 if failed or astray else 0


def larger_than_cache() -> list[tuple[np.ndarray, np.ndarray, float]]:
    """(X, y, cache_size) fits whose Gram matrix does not fit the cache: 240 points of 100
    features in 3 classes at 0.05 MB (columns on demand, in batches for one-vs-all; deferred
    updates), and 600 points of 20 features at 0.2 MB, where every machine sets aside enough
    patterns for the compact phases and one-vs-all computes its columns one at a time (after
    ``msvm compile`` with the first alone, a first fit on 8 000 points compiled those in its
    time: one-vs-all 4.5 s, Weston-Watkins 1.8 s).  ``msvm compile`` and
    ``benchmarks/scale.py`` fit them."""
    rng = np.random.default_rng(0)
    fits = []
    for n, d, cache_size in ((240, 100, 0.05), (600, 20, 0.2)):
        y = np.arange(n) % 3
        fits.append((rng.normal(size=(n, d)) + y[:, None] * (np.arange(d) < 5), y, cache_size))
    return fits


def compile_command(args) -> int:
    """Fit every estimator of ``msvm.fast`` on iris and on raw wine with each kernel, so that numba
    compiles what those fits need into its cache (``msvm.fast``'s folder under ~/.cache/msvm, or
    NUMBA_CACHE_DIR): a first fit in a later process then starts warm.  Raw wine's badly scaled
    features make the linear path hand over to its proximal method, which iris alone may not
    reach.  With a kernel other than the linear one each estimator that has a kernel cache is
    also fitted on the data of ``larger_than_cache``: a Gram matrix larger than the cache takes
    other compiled code (columns computed on demand, one at a time or in batches for
    one-vs-all; deferred updates; the compact phases).  For images and deployments, where a
    first fit would otherwise pay 5-35 s of compilation, up to a minute on data larger than the
    cache."""
    import warnings

    import numba
    from sklearn.base import clone
    from sklearn.datasets import load_iris, load_wine
    from sklearn.exceptions import ConvergenceWarning

    import msvm.fast

    data = [load(return_X_y=True) for load in (load_iris, load_wine)]
    total = time.perf_counter()
    print(f"{'estimator':<22}{'kernel':<8}seconds")
    for name in args.estimators:
        for kernel in args.kernels:
            start = time.perf_counter()
            estimator = getattr(msvm.fast, name)(kernel=kernel, random_state=0)
            fits = [(estimator, X, y) for X, y in data]
            if kernel != "linear" and "cache_size" in estimator.get_params():
                fits += [(clone(estimator).set_params(cache_size=cache_size), X, y)
                         for X, y, cache_size in larger_than_cache()]  # fmt: skip
            for model, X, y in fits:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)  # compiles all the same
                    model.fit(X, y)
            print(f"{name:<22}{kernel:<8}{time.perf_counter() - start:.1f}", flush=True)
    print(f"compiled in {time.perf_counter() - total:.1f} s into {numba.config.CACHE_DIR}")
    return 0


def claims_command(args) -> int:
    from tqdm import tqdm

    from msvm.verify.claims import VERDICTS, all_claims

    with tqdm(desc="claims", unit="group", disable=progress_disabled(args)) as bar:
        claims = all_claims(progress=bar)
    print(f"{'verdict':<8}{'source':<34}claim")
    for c in claims:
        print(f"{c.verdict:<8}{c.source:<34}{c.claim}\n{'':<42}{c.detail}")
        if c.reading != "as printed":
            print(f"{'':<42}read as: {c.reading}")
    if args.json:
        Path(args.json).write_text(json.dumps([c.as_dict() for c in claims], indent=2))
    if args.markdown:
        lines = ["| claim | source | verdict | reading | detail |", "|---|---|---|---|---|"]
        lines += [
            f"| {c.claim} | {c.source} | {c.verdict} | {c.reading} | {c.detail} |" for c in claims
        ]
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    print(
        f"\nholds: {counts['holds']}, fails (findings about the papers): {counts['fails']}, "
        f"slip (holds as read): {counts['slip']}, note (a constant the paper says it drops): "
        f"{counts['note']}"
        + (f", ERROR (the library's numbers disagree): {counts['error']}" * bool(counts["error"]))
    )
    return 1 if counts["error"] else 0


def consistency_command(args) -> int:
    from tqdm import tqdm

    from msvm.verify.consistency import Tolerances, monte_carlo

    tol = Tolerances()
    rows = []
    passes = 1 + (len(tol.moves()) if args.sensitivity else 0)
    total = len(args.formulations) * len(args.classes) * args.trials * passes
    with tqdm(
        total=total, desc="conditional-risk LPs", unit="draw", disable=progress_disabled(args)
    ) as progress:
        for formulation in args.formulations:
            for L in args.classes:
                rows.append(
                    monte_carlo(
                        formulation, L, args.trials, args.seed, progress, tol, args.sensitivity
                    )
                )
    print(
        f"{'formulation':<16}{'L':>3}{'inconsistent':>14}{'wrong':>8}{'tied':>8}{'mixed':>8}"
        f"{'tie_break':>11}{'ambiguous':>11}{'ISVM Table 5':>14}"
    )
    for r in rows:
        published = "" if r.published is None else f"{100 * r.published:.0f} %"
        print(
            f"{r.formulation:<16}{r.L:>3}{100 * r.inconsistent:>13.1f}%{100 * r.wrong:>7.1f}%"
            f"{100 * r.tied:>7.1f}%{100 * r.mixed:>7.1f}%{100 * r.tie_break:>10.1f}%"
            f"{100 * r.ambiguous:>10.1f}%{published:>14}"
        )
    print(
        f"\ntolerances: HiGHS feasibility {tol.solver:g}, dual support {tol.support:g}, "
        f"tie {tol.tie:g}, rank {tol.rank:g}"
    )
    for name in ("tie", "support", "rank"):
        found = [r.separation[name] for r in rows if name in r.separation]
        if found:
            zero = max(z for z, _ in found)
            nonzero = min(nz for _, nz in found)
            print(f"  {name}: values read as zero <= {zero:.1e}, as non-zero >= {nonzero:.1e}")
    by_lp = sum(r.by_lp * r.trials for r in rows)
    excess = max(r.face_excess for r in rows)
    print(f"  draws decided by LPs over the optimal face: {by_lp:.0f}, face excess <= {excess:.1e}")
    if args.sensitivity:
        changed = {}
        for r in rows:
            for name, count in r.changed.items():
                changed[name] = changed.get(name, 0) + count
        draws = sum(r.trials for r in rows)
        print(f"  verdicts changed (of {draws} draws) with a tolerance moved 10x: {changed}")
    if args.json:
        Path(args.json).write_text(json.dumps([r.as_dict() for r in rows], indent=2))
    return 0


def robustness_command(args) -> int:
    from msvm.verify.robustness import StudyConfig, run_study, write_outputs

    if not args.C_step > 0:
        raise ValueError(f"--C-step must be positive; got {args.C_step}.")
    n_C = int(np.ceil((args.C_max - args.C_min) / args.C_step - 1e-9))  # C_max excluded
    if n_C < 1:
        raise ValueError(
            f"The C grid from --C-min {args.C_min:g} up to (not including) --C-max "
            f"{args.C_max:g} is empty; --C-max must exceed --C-min."
        )
    Cs = tuple(round(args.C_min + k * args.C_step, 10) for k in range(n_C))
    config = StudyConfig(
        datasets=tuple(args.datasets),
        sizes=tuple(args.sizes),
        realisations=args.realisations,
        machines=tuple(args.machines),
        gammas=tuple(args.gammas),
        Cs=Cs,
        seed=args.seed,
        tol=args.tol,
        label_column=args.label_column,
        preprocessing=args.preprocessing,
    )
    start = time.perf_counter()
    results = run_study(
        config,
        args.out,
        jobs=args.jobs,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=not args.quiet,
    )
    tables = write_outputs(results, config, args.out)
    print(Path(args.out, "table3.md").read_text())
    print(Path(args.out, "table4.md").read_text())
    unconverged = sum(r.unconverged for r in results)
    if unconverged:
        print(f"warning: {unconverged} leave-one-out folds stopped at max_iter (see --tol)")
    task_time = sum(r.seconds for r in results)
    print(
        f"{len(results)} tasks, {len(tables['table3'])} rows; {time.perf_counter() - start:.1f} s "
        f"wall ({task_time:.1f} s of task time); tables and figure in {args.out}"
    )
    return 0


def _checked(convert, test, requirement):
    """An argparse type: ``convert`` the text, then refuse values failing ``test``."""

    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {requirement}") from None
        if not test(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {requirement}")
        return value

    return parse


positive_int = _checked(int, lambda v: v > 0, "an integer > 0")
seed_int = _checked(int, lambda v: v >= 0, "a seed, an integer >= 0")
class_count = _checked(int, lambda v: v >= 2, "a number of classes >= 2")
positive_float = _checked(float, lambda v: np.isfinite(v) and v > 0, "a finite number > 0")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's default in its help, except where there is none to show (None, False)."""

    def _get_help_string(self, action):
        default = action.default
        if default is None or default is False or "%(default)" in (action.help or ""):
            return action.help
        if isinstance(default, list):  # as typed on the command line
            every = action.choices is not None and list(default) == list(action.choices)
            shown = "all" if every else " ".join(map(str, default))
            return f"{action.help} (default: {shown})"
        return super()._get_help_string(action)


def plain(text: str) -> str:
    """Help text without the docstrings' RST markup."""
    return text.replace("``", "").replace(":func:", "").replace("`", "")


def progress_disabled(args) -> bool | None:
    """tqdm's ``disable``: off with --quiet, and off by itself when stderr is not a terminal."""
    return True if getattr(args, "quiet", False) else None


def build_parser() -> argparse.ArgumentParser:
    """The ``msvm`` command's parser: six commands, every option with its help and default."""
    try:
        from msvm import __version__
    except ImportError:  # an editable install made before top/ was mapped: reinstall to fix
        from importlib.metadata import version

        __version__ = version("msvm")

    parser = OneLineParser(
        prog="msvm",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, text):
        return commands.add_parser(name, help=text, description=text, formatter_class=HelpFormatter)

    def add_names(sub, option, names, default, what):
        """An option taking some of ``names`` (listed in its help, not in its usage line)."""
        sub.add_argument(
            option,
            nargs="+",
            choices=list(names),
            default=list(default),
            metavar="NAME",
            help=f"{what}, of: " + ", ".join(names),
        )

    def add_quiet(sub):
        sub.add_argument(
            "--quiet", action="store_true", help="no progress bar (it is off anyway when not a TTY)"
        )

    verify = command("verify", "cross-check the reference and fast layers")
    verify.add_argument(
        "--dataset",
        nargs="+",
        default=list(BUNDLED),
        help="iris, wine, digits, or a CSV file (header; label column last); a CSV file of more "
        f"than {CSV_ROWS_WHOLE} rows needs --n-samples",
    )
    verify.add_argument(
        "--label-column", help="name of the label column of a CSV file (default: the last)"
    )
    verify.add_argument(
        "--kernel",
        choices=["linear", "rbf", "poly"],
        help="kernel for every data set (default: iris linear, wine and digits rbf, CSV rbf)",
    )
    verify.add_argument(
        "--C",
        type=positive_float,
        help="C for every data set (default: iris 0.1, wine, digits and CSV 1.0)",
    )
    verify.add_argument(
        "--n-samples",
        type=positive_int,
        help="a class-balanced subset of this size of every data set (default: all of iris and "
        "wine, 150 of digits; with --quick 90 of wine, 100 of digits; all of a CSV file)",
    )
    add_names(verify, "--formulations", FORMULATIONS, FORMULATIONS, "formulations to check")
    verify.add_argument(
        "--quick", action="store_true", help="smaller subsets, without ISVM's own solvers"
    )
    verify.add_argument(
        "--fit-intercept",
        action="store_true",
        help="check the biased forms (fit_intercept=True in both layers) of the formulations "
        "that have one: " + ", ".join(BIASED),
    )
    verify.add_argument("--json", help="write the rows as JSON to this file")
    verify.add_argument("--markdown", help="write the table as Markdown to this file")
    verify.add_argument("--plots", help="folder for the figure of E*(mu), the inhibition study")
    add_quiet(verify)
    claims = command("claims", "check the papers' printed formulas")
    claims.add_argument("--json", help="write the claims as JSON to this file")
    claims.add_argument("--markdown", help="write the table as Markdown to this file")
    add_quiet(claims)
    from msvm.verify.consistency import FORMULATIONS as CONSISTENCY_FORMULATIONS

    consistency = command("consistency", "Bayes-consistency Monte Carlo (ISVM Algorithm 3)")
    consistency.add_argument(
        "--classes",
        type=class_count,
        nargs="+",
        default=[2, 3, 4, 5, 6],
        help="numbers of classes L to draw for",
    )
    consistency.add_argument(
        "--trials", type=positive_int, default=1000, help="draws of p per loss and L"
    )
    consistency.add_argument("--seed", type=seed_int, default=0, help="seed of the draws")
    add_names(
        consistency,
        "--formulations",
        CONSISTENCY_FORMULATIONS,
        CONSISTENCY_FORMULATIONS,
        "losses to test",
    )
    consistency.add_argument("--json", help="write the rates as JSON to this file")
    consistency.add_argument(
        "--sensitivity",
        action="store_true",
        help="re-classify every draw with each tolerance moved 10x and count changed verdicts",
    )
    add_quiet(consistency)
    from msvm.verify.robustness import (
        DEFAULT_PREPROCESSING,
        DEFAULT_SIZES,
        MACHINES,
        PAPER_MACHINES,
        PREPROCESSING,
    )

    robust = command(
        "robustness", "ISVM section 9: pooled leave-one-out accuracy over a (C, gamma) grid"
    )
    robust.add_argument(
        "--datasets",
        nargs="+",
        default=["iris", "wine", "digits"],
        help="bundled names or CSV files; NAME=FILE names a CSV file after an ISVM Table 2 data "
        "set (e.g. glass=my_glass.csv) so that Table 3's row is shown beside it",
    )
    robust.add_argument(
        "--label-column", help="name of the label column of CSV files (default: the last)"
    )
    robust.add_argument(
        "--sizes",
        type=positive_int,
        nargs="+",
        default=list(DEFAULT_SIZES),
        help="subset sizes N_s",
    )
    robust.add_argument(
        "--realisations", type=positive_int, default=100, help="random subsets per size"
    )
    add_names(robust, "--machines", MACHINES, PAPER_MACHINES, "machines to run")
    robust.add_argument(
        "--gammas",
        type=positive_float,
        nargs="+",
        default=[5.0, 10.0],
        help="g of the paper's normalised Gaussian exp(-g |x - x'|^2 / M)",
    )
    robust.add_argument("--C-min", type=positive_float, default=0.1, help="first C of the grid")
    robust.add_argument(
        "--C-max", type=positive_float, default=50.0, help="end of the C grid (exclusive)"
    )
    robust.add_argument("--C-step", type=positive_float, default=0.5, help="step of the C grid")
    robust.add_argument(
        "--tol", type=positive_float, default=1e-3, help="the machines' KKT tolerance"
    )
    robust.add_argument(
        "--preprocessing",
        choices=list(PREPROCESSING),
        default=DEFAULT_PREPROCESSING,
        help="feature scaling fitted on each N_s-point subset: none, standardise (default: mean "
        "0, sd 1), range_pm1 (min-max to [-1, 1]), range_01 (min-max to [0, 1])",
    )
    robust.add_argument("--seed", type=seed_int, default=0, help="seed of the random subsets")
    robust.add_argument("--out", default="robustness", help="folder for results (resumable)")
    robust.add_argument("--jobs", type=int, default=1, help="joblib processes (-1: all cores)")
    robust.add_argument("--workers", type=int, help="run on a Dask LocalCluster of N workers")
    robust.add_argument("--scheduler", help="address of a running Dask scheduler")
    add_quiet(robust)
    compiled = command(
        "compile", "fit each estimator once, filling numba's cache (run after installing)"
    )
    add_names(compiled, "--estimators", COMPILED, COMPILED, "estimators to compile")
    add_names(compiled, "--kernels", ("rbf", "linear"), ("rbf", "linear"), "kernels to compile")
    from msvm.datasets import cli as datasets_cli

    data = command("datasets", "fetch ISVM Table 2's data sets; compare them")
    datasets_cli.add_arguments(data)
    return parser


def main(argv=None) -> int:
    from msvm.datasets import cli as datasets_cli

    args = build_parser().parse_args(argv)
    commands_run = {
        "verify": verify_command,
        "claims": claims_command,
        "consistency": consistency_command,
        "robustness": robustness_command,
        "compile": compile_command,
        "datasets": datasets_cli.run,
    }
    for option in ("classes", "formulations", "dataset", "datasets"):  # each once, in order
        if isinstance(getattr(args, option, None), list):
            setattr(args, option, list(dict.fromkeys(getattr(args, option))))
    try:
        check_output_paths(args)  # before the run, not after it
        check_label_column(args)
        return commands_run[args.command](args)
    except (ValueError, FileNotFoundError) as error:  # bad input: a message, not a traceback
        print(f"msvm {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (``msvm claims | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def check_label_column(args) -> None:
    """Refuse --label-column where every data set is a named one (bundled or ISVM Table 2's),
    whose labels are known: the option would be ignored."""
    names = getattr(args, "dataset", None) or getattr(args, "datasets", None)
    if getattr(args, "label_column", None) is None or not names:
        return
    from msvm import datasets as table2
    from msvm.verify.robustness import split_name

    named = datasets.NAMES + (table2.NAMES if args.command == "robustness" else ())
    if all(split_name(n)[1] in named for n in names):
        raise ValueError(
            f"--label-column {args.label_column}: applies to CSV files, and {', '.join(names)} "
            f"{'is a named data set' if len(names) == 1 else 'are named data sets'}."
        )


if __name__ == "__main__":
    sys.exit(main())
