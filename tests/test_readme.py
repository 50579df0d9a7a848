"""The README's code runs as printed, each block on its own, and prints what the README says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def examples() -> list[tuple[str, str]]:
    """(code, the output printed under it) for every Python block of the README."""
    return re.findall(r"```python\n(.*?)```\n```\n(.*?)```", README.read_text(), re.S)


def test_the_readme_has_its_three_quickstarts():
    assert len(examples()) == 3
    assert len(re.findall(r"```python\n", README.read_text())) == 3  # each with its output


@pytest.mark.parametrize("code, printed", examples(), ids=["verify", "teach", "production"])
def test_readme_examples_run_as_printed(code, printed, capsys):
    assert "..." not in code  # no placeholders: the block is the whole program
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 -- the README's own code
    out = capsys.readouterr().out
    for shown, got in zip(printed.splitlines(), out.splitlines(), strict=True):
        numbers = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")
        # the words agree exactly; the numbers to the printed digits (solver rounding aside)
        assert numbers.sub("#", shown) == numbers.sub("#", got)
        for a, b in zip(numbers.findall(shown), numbers.findall(got), strict=True):
            if "e-" in a:  # a gap or a rounding error: of the printed order or smaller
                assert float(b) < 10 * float(a) or float(b) < 1e-8
            else:
                assert abs(float(a) - float(b)) <= 2 * 10.0 ** -len(a.split(".")[1])
