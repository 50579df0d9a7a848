"""MkDocs hooks: run the example scripts and publish the repository's own result files.

``on_files`` runs every ``docs/examples/*.py`` (in a scratch folder, matplotlib's Agg backend),
and adds a page per script with its source, its printed output and the figures it saved, plus
``examples/index.md`` listing them.  It also adds ``CHANGELOG.md``, ``benchmarks/NOTES.md`` and
``benchmarks/results/`` under their repository paths, so that pages link to them as the files
the benchmark scripts wrote.  An example that fails fails the build.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
PUBLISHED = ["CHANGELOG.md", "benchmarks/NOTES.md", "benchmarks/results"]
# mkdocstrings reads the source without importing it; msvm's layers live in folders of other
# names (pyproject.toml's package-dir), so it reads them through a tree of links that has the
# installed layout (mkdocs.yml: the handler's paths).
SOURCE_TREE = ROOT / ".docs-build" / "src"
LAYERS = {"__init__.py": "top/__init__.py", "__main__.py": "top/__main__.py"} | {
    layer: layer for layer in ("core", "reference", "fast", "verify", "datasets")
}


def link_source_tree() -> None:
    package = SOURCE_TREE / "msvm"
    package.mkdir(parents=True, exist_ok=True)
    for name, target in LAYERS.items():
        link = package / name
        if not link.is_symlink():
            link.symlink_to(ROOT / target)


link_source_tree()


def run_example(script: Path) -> tuple[str, list[tuple[str, bytes]], float]:
    """Run one script in a scratch folder: (its stdout, [(figure name, PNG bytes)], seconds)."""
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, MPLBACKEND="Agg")
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, str(script)], cwd=scratch, env=env, capture_output=True, text=True
        )
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"docs/examples/{script.name} failed:\n{done.stderr}")
        figures = [(p.name, p.read_bytes()) for p in sorted(Path(scratch).glob("*.png"))]
    return done.stdout, figures, seconds


def example_page(script: Path, output: str, figures, seconds: float) -> str:
    source = script.read_text()
    title = ast.get_docstring(ast.parse(source)).split("\n", 1)
    lines = [f"# {title[0].rstrip('.')}", "", title[1].strip() if len(title) > 1 else "", ""]
    lines += [f"![{name}]({script.stem}_{name})" for name, _ in figures]
    if output.strip():
        lines += ["", "Output:", "", "```text", output.rstrip(), "```"]
    lines += [
        "",
        f"Source: `docs/examples/{script.name}` (run while these pages were built, in "
        f"{seconds:.0f} s):",
        "",
        "```python",
        source.rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, files):
    """Table cells print Iverson brackets side by side ("[y_i=k][y_i'=k]"), which Markdown would
    read as a reference link: escape the second bracket, outside code blocks."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.lstrip().startswith("|"):
            line = line.replace("][", "]\\[")
        lines.append(line)
    return "\n".join(lines)


def on_files(files, config):
    entries = []
    for script in sorted(EXAMPLES.glob("*.py")):
        output, figures, seconds = run_example(script)
        page = f"examples/{script.stem}.md"
        files.append(
            File.generated(config, page, content=example_page(script, output, figures, seconds))
        )
        for name, data in figures:
            files.append(File.generated(config, f"examples/{script.stem}_{name}", content=data))
        summary = ast.get_docstring(ast.parse(script.read_text())).split("\n", 1)[0]
        entries.append(f"- [{summary.rstrip('.')}]({script.stem}.md)")
    index = "# Examples\n\nScripts in `docs/examples/`, run each time these pages are built.\n\n"
    files.append(
        File.generated(config, "examples/index.md", content=index + "\n".join(entries) + "\n")
    )
    for published in PUBLISHED:
        path = ROOT / published
        paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for p in paths:
            if p.suffix in (".md", ".png", ".csv", ".json"):
                rel = p.relative_to(ROOT).as_posix()
                files.append(File.generated(config, rel, abs_src_path=str(p)))
    return files
