"""A small robustness study (ISVM section 9) and its figure.

Pooled leave-one-out accuracy of the paper's three machines over a (C, gamma) grid, for random
subsets of iris and wine of three sizes: a demonstration small enough to run while these pages
are built (3 realisations, 10 values of C, one gamma), not the paper's design; the full study's
results are on the robustness page. `msvm robustness` runs the same from the command line.
"""

import tempfile

from msvm.verify.robustness import StudyConfig, run_study, write_outputs

config = StudyConfig(
    datasets=("iris", "wine"),
    sizes=(30, 60, 90),
    realisations=3,
    gammas=(5.0,),
    Cs=tuple(0.1 + 0.5 * k for k in range(10)),
)
with tempfile.TemporaryDirectory() as folder:
    results = run_study(config, folder, progress=False)
    write_outputs(results, config, ".")  # table3.md, table4.md and robustness.png here
print(open("table3.md").read())
