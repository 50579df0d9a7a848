"""Profile msvm's numba code with Linux ``perf``: name every compiled function for perf report.

    NUMBA_CACHE_DIR=$(mktemp -d) perf record -F 4000 -o perf.data \\
        python benchmarks/perf_map.py SCRIPT.py [ARGS ...]
    perf report -i perf.data --no-children --sort symbol

Runs SCRIPT.py (as ``__main__``, with ARGS as its argv) and then writes /tmp/perf-PID.map, which
perf reads to name the addresses of jitted code.  The functions must be compiled in this process
(an empty NUMBA_CACHE_DIR): code loaded from numba's cache carries no symbol table.  A callee
compiled on its own is linked into each caller, so its samples appear under
``caller::callee`` (e.g. ``kernel_epochs::...best_partner...``); inlined functions count as
their caller.  Stop 33 used it to split an inhibitory fit's step cost (benchmarks/NOTES.md).
"""

from __future__ import annotations

import os
import re
import runpy
import sys

import numba


def short_name(symbol: str) -> str:
    """The Python names inside a mangled numba symbol, the last three."""
    parts = re.findall(r"\d+([A-Za-z_][A-Za-z_0-9]*)", symbol)
    return ".".join(parts[-3:]) if parts else symbol[:60]


def write_map(path: str) -> int:
    """Write perf's map of every function of every compiled overload in msvm; returns the count."""
    entries = {}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("msvm"):
            continue
        for name in dir(module):
            dispatcher = getattr(module, name, None)
            if not isinstance(dispatcher, numba.core.registry.CPUDispatcher):
                continue
            for compiled in dispatcher.overloads.values():
                library = compiled.library
                for function in library._final_module.functions:
                    if function.is_declaration:
                        continue
                    address = library.get_pointer_to_function(function.name)
                    if address:
                        entries[address] = f"{name}::{short_name(function.name)}"
    starts = sorted(entries)
    if not starts:  # everything came from numba's cache
        return 0
    with open(path, "w") as out:
        for start, end in zip(starts, [*starts[1:], starts[-1] + (1 << 16)], strict=True):
            out.write(f"{start:x} {min(end - start, 1 << 22):x} {entries[start]}\n")
    return len(starts)


if __name__ == "__main__":
    script, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
    count = write_map(f"/tmp/perf-{os.getpid()}.map")
    note = "" if count else " (all loaded from numba's cache: use an empty NUMBA_CACHE_DIR)"
    print(f"perf map: {count} compiled functions{note}", file=sys.stderr)
