"""The README's worked examples run as printed, and say what the README says they show."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from sklearn.datasets import load_iris

README = Path(__file__).resolve().parents[1] / "README.md"
# Excerpts of the source (need its context) and the robustness study (minutes, writes a folder)
# are not run here; the study has its own tests (tests/verify/test_robustness.py).
NOT_RUN = ("alpha = cp.Variable", "run_study")


def examples() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    return [b for b in blocks if not any(marker in b for marker in NOT_RUN)]


def test_readme_examples_run_and_show_what_they_claim(capsys):
    blocks = examples()
    assert len(blocks) == 4
    X, y = load_iris(return_X_y=True)
    namespace = {"X": X, "y": y, "X_new": X[::10]}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 -- the README's own code
    # the inhibitory worked example: primal and dual optima agree, outputs sum to zero (mu = 1/L)
    assert namespace["gap"] < 1e-6
    assert abs(namespace["dual"].decision_function(X).sum(axis=1)).max() < 1e-8
    # the fast estimator: a small duality gap at tol = 1e-3, and iris classified
    clf = namespace["clf"]
    assert clf.relative_gap_ < 1e-2 and clf.score(X, y) > 0.9
    # the leave-one-out path: one accuracy per C
    accuracy = namespace["path"].accuracy(y)
    assert accuracy.shape == (3,) and np.all((accuracy > 0.8) & (accuracy <= 1.0))
    assert "primal" in capsys.readouterr().out
