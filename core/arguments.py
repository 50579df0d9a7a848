"""The argument parser of msvm's commands (``msvm``, ``python -m msvm.datasets``,
``python -m msvm.reference``) and the check of their output paths."""

from __future__ import annotations

import argparse
from pathlib import Path


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser with a one-line error, ``PROG: error: MESSAGE``, exit status 2.

    argparse prints the usage block before the error line, and leaves options a command does not
    know to the top-level parser, whose message names no command (``msvm: error: unrecognized
    arguments: --datset iris`` for ``msvm verify --datset iris``).  Here the parser that met
    them reports them (argparse collects a command's unknown options for the top-level parser;
    nothing else takes them).  Commands made by ``add_subparsers`` are of this class too
    (argparse's default)."""

    def error(self, message):
        listed = "options" if self._subparsers is None else "commands"
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the {listed})\n")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def check_output_paths(args) -> None:
    """Refuse, before any work, an output that cannot be written: a file in a missing folder or
    where a folder is (--json, --markdown), a folder where a file is (--plots, --out)."""
    for option in ("json", "markdown"):
        target = getattr(args, option, None)
        if target and not Path(target).resolve().parent.is_dir():
            raise ValueError(f"--{option}: the folder of {target} does not exist.")
        if target and Path(target).is_dir():
            raise ValueError(f"--{option}: {target} is a folder; give a file name.")
    for option in ("plots", "out"):
        target = getattr(args, option, None)
        if target and Path(target).exists() and not Path(target).is_dir():
            raise ValueError(f"--{option}: {target} is a file; give a folder.")
