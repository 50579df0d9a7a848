"""The argument parser of msvm's commands (``msvm``, ``python -m msvm.datasets``,
``python -m msvm.reference``)."""

from __future__ import annotations

import argparse


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
