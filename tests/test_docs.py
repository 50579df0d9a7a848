"""The README's and the documentation pages' code runs as printed and prints what the page says.

Every page (README.md, docs/**/*.md) runs top to bottom, as a reader would run it: its ```python
blocks in one fresh namespace per page, its ```bash / ```console blocks as commands, all in a
scratch working folder. Output is compared where a page shows it:

- a ```python block's output is the plain ``` (or ```text) block on the line after it;
- a ```console block shows each command after ``$ `` and its output under it; a ```bash block
  shows none, and its commands must exit with status 0.

Output compares line by line: the words exactly, the numbers to the printed digits (solver
rounding aside; a number printed with an exponent, a gap or a rounding error, to its order or
smaller), and ``...`` stands for what changes from run to run (a time).

A shell block may run only the ``msvm`` command (``msvm ...``, ``python -m msvm...``). A block
that is not run says why in an HTML comment on the line before it: ``<!-- not-tested: reason
-->`` (installs, downloads, hour-long studies), or ``<!-- excerpt: path -->`` for a quotation of
the source, which must appear in that file verbatim (up to indentation).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
SHELL = ("bash", "console")
OUTPUT = ("", "text")
FENCE = re.compile(r"```(\w*)")
MARKER = re.compile(r"<!--\s*(not-tested|excerpt):\s*(.*?)\s*-->")
NUMBER = r"-?\d+\.\d+(?:e[-+]?\d+)?"


@dataclass
class Block:
    page: Path
    line: int  # the opening fence's, counted from 1
    lang: str
    text: str
    marker: tuple[str, str] | None  # ("not-tested", why) or ("excerpt", path)
    output: str | None = None  # for a python block: the output block after it

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.marker is None and self.lang in ("python", *SHELL)


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page in order, a python block with the output block after it."""
    lines = page.read_text().split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.fullmatch(lines[i].rstrip())
        if not fence:
            i += 1
            continue
        end = lines.index("```", i + 1)  # a block never closed fails here
        before = next((s.strip() for s in reversed(lines[:i]) if s.strip()), "")
        marker = MARKER.fullmatch(before)
        text, marked = "\n".join(lines[i + 1 : end]) + "\n", marker.groups() if marker else None
        block = Block(page, i + 1, fence[1], text, marked)
        last = found[-1] if found else None
        closed = last.line + last.text.count("\n") if last else None  # index of its closing fence
        if last and last.lang == "python" and block.lang in OUTPUT and i == closed + 1:
            last.output = block.text
        else:
            found.append(block)
        i = end + 1
    return found


def agree(shown: str, printed: str, where: str) -> None:
    """Assert that `printed` is the `shown` output, as the module's docstring says."""
    shown_lines, printed_lines = shown.rstrip("\n").split("\n"), printed.rstrip("\n").split("\n")
    message = f"{where}: printed\n{printed}\nwhere the page shows\n{shown}"
    assert len(shown_lines) == len(printed_lines), message
    for s, p in zip(shown_lines, printed_lines, strict=True):
        parts = re.split(rf"({NUMBER}|\.\.\.)", s)
        regex = "".join(
            ".*?" if part == "..." else f"({NUMBER})" if k % 2 else re.escape(part)
            for k, part in enumerate(parts)
        )
        match = re.fullmatch(regex, p)
        assert match, f"{where}: printed\n  {p}\nwhere the page shows\n  {s}"
        numbers = [part for k, part in enumerate(parts) if k % 2 and part != "..."]
        for a, b in zip(numbers, match.groups(), strict=True):
            if "e-" in a:  # a gap or a rounding error: of the printed order or smaller
                ok = abs(float(b)) < 10 * float(a) or abs(float(b)) < 1e-8
            else:
                ok = abs(float(a) - float(b)) <= 2 * 10.0 ** -len(a.split("e")[0].split(".")[1])
            assert ok, f"{where}: printed {b} where the page shows {a}\n  {p}\n  {s}"


def commands(block: Block) -> list[tuple[str, str | None]]:
    """(command, the output shown under it, None in a bash block) for a shell block."""
    text = block.text.replace("\\\n", " ")
    if block.lang == "bash":
        return [(line, None) for line in text.split("\n") if shlex.split(line, comments=True)]
    found: list[tuple[str, str | None]] = []
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            found.append((line[2:], ""))
        else:
            assert found, f"{block.where}: a console block starts with `$ command`"
            found[-1] = (found[-1][0], f"{found[-1][1]}{line}\n")
    return found


def argv(command: str, where: str) -> list[str]:
    """The msvm command as this interpreter runs it; any other command fails the page."""
    words = shlex.split(command, comments=True)
    if words[0] == "msvm":
        return [sys.executable, "-m", "msvm", *words[1:]]
    if words[0] in ("python", "python3") and words[1:2] == ["-m"] and words[2].startswith("msvm"):
        return [sys.executable, *words[1:]]
    raise AssertionError(
        f"{where}: `{command}` is not the msvm command; test it elsewhere, or say why it is not "
        "run with <!-- not-tested: reason --> before the block"
    )


def run_python(block: Block, namespace: dict, capsys) -> None:
    assert "..." not in block.text, f"{block.where}: a placeholder; a page's blocks are its program"
    code = compile("\n" * block.line + block.text, str(block.page), "exec")  # the page's lines
    capsys.readouterr()
    exec(code, namespace)  # noqa: S102 -- the page's own code
    if block.output is not None:
        agree(block.output, capsys.readouterr().out, block.where)


def run_shell(block: Block, folder: Path) -> None:
    for command, shown in commands(block):
        done = subprocess.run(
            argv(command, block.where), cwd=folder, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{block.where}: `{command}` failed\n{done.stderr}"
        if shown is not None:
            agree(shown, done.stdout, f"{block.where}: `{command}`")


def page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.runs for b in blocks(p))], ids=page_id)
def test_page_runs_as_printed(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # what a page writes (a study folder, figures) goes here
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__main__"}
    for block in blocks(page):
        if block.runs and block.lang == "python":
            run_python(block, namespace, capsys)
        elif block.runs:
            run_shell(block, tmp_path)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_block_not_run_says_why(page):
    found = blocks(page)
    lines = page.read_text().split("\n")
    markers = [m.groups() for line in lines if (m := MARKER.fullmatch(line.strip()))]
    assert markers == [b.marker for b in found if b.marker], "a marker not before a block"
    for block in found:
        if block.marker and block.marker[0] == "not-tested":
            assert block.marker[1], f"{block.where}: not-tested without a reason"
            assert block.lang in ("python", *SHELL), f"{block.where}: only code needs a marker"
        if block.marker and block.marker[0] == "excerpt":
            source = (ROOT / block.marker[1]).read_text()
            quoted = any(textwrap.indent(block.text, " " * k) in source for k in range(0, 33, 4))
            assert quoted, f"{block.where}: not a quotation of {block.marker[1]} as it is now"


def test_the_readme_has_its_three_quickstarts_with_their_output():
    python = [b for b in blocks(README) if b.lang == "python"]
    assert len(python) == 3 and all(b.runs and b.output for b in python)
