"""The robustness study's preprocessing option and its printed-kernel Weston-Watkins machine."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from msvm.fast.patterns import box_rank_one
from msvm.reference import Problem
from msvm.reference.pairwise import difference_coef, negatives
from msvm.reference.weston_watkins import printed_kernel
from msvm.verify import robustness
from msvm.verify.cli import main
from msvm.verify.printed_ww import PrintedKernelWestonWatkinsSVC, _block_step
from msvm.verify.robustness import PREPROCESSING, StudyConfig, Task, preprocess, run_task


@pytest.fixture
def features():
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, size=(40, 4)) * np.array([1.0, 10.0, 0.1, 1.0])
    X[:, 3] = 7.0  # a constant feature
    return X


@pytest.mark.parametrize(
    "how, low, high",
    [("standardise", None, None), ("range_pm1", -1.0, 1.0), ("range_01", 0.0, 1.0)],
)
def test_preprocessing_gives_the_documented_transform(features, how, low, high):
    Z = preprocess(features, how)
    varying = Z[:, :3]
    if how == "standardise":
        assert_allclose(varying.mean(axis=0), 0.0, atol=1e-12)
        assert_allclose(varying.std(axis=0), 1.0, rtol=1e-12)
    else:
        assert_allclose(varying.min(axis=0), low, atol=1e-12)
        assert_allclose(varying.max(axis=0), high, atol=1e-12)
        lo, hi = features[:, :3].min(axis=0), features[:, :3].max(axis=0)
        assert_allclose(varying, low + (high - low) * (features[:, :3] - lo) / (hi - lo))
    assert np.all(Z[:, 3] == 0.0)  # constant on the subset: 0


def test_no_preprocessing_keeps_the_features_and_unknown_names_are_refused(features):
    assert_allclose(preprocess(features, "none"), features)
    assert set(PREPROCESSING) == {"none", "standardise", "range_pm1", "range_01"}
    with pytest.raises(ValueError, match="Unknown preprocessing"):
        preprocess(features, "minmax")
    with pytest.raises(ValueError, match="Unknown preprocessing"):
        StudyConfig(preprocessing="minmax")
    assert StudyConfig().preprocessing == robustness.DEFAULT_PREPROCESSING == "standardise"


def test_the_transform_is_fitted_on_the_training_subset_only(monkeypatch):
    seen = []
    real = robustness.preprocess
    monkeypatch.setattr(robustness, "preprocess", lambda X, how: seen.append(X) or real(X, how))
    X, y = robustness.load_dataset("wine")
    config = StudyConfig(
        datasets=("wine",), sizes=(20,), realisations=1, machines=("one_vs_all",),
        gammas=(5.0,), Cs=(1.0,), preprocessing="range_01",
    )  # fmt: skip
    result = run_task(Task("wine", 20, 0, "one_vs_all"), X, y, config)
    assert len(seen) == 1 and seen[0].shape == (20, X.shape[1])
    assert_allclose(seen[0], X[result.indices])  # the subset's own points, nothing else
    scaled = real(X[result.indices], "range_01")
    assert scaled.min() == 0.0 and scaled.max() == 1.0
    assert not np.allclose(scaled, real(X, "range_01")[result.indices])  # not the full set's fit


def tiny_problem():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(m, 1.0, size=(5, 2)) for m in (0.0, 1.0, 2.0)])
    y = np.repeat(["a", "b", "c"], 5)
    return X, y


@pytest.mark.parametrize("C", [2.0, 50.0])
def test_printed_kernel_machine_solves_the_appendix_e_second_line(C):
    """The optimum of max 1'a - a'Ga/2, 0 <= a <= C, with G built from appendix E's printed
    second line (``printed_kernel(..., simplified=True)``), found here by L-BFGS-B; at C = 50
    most variables are free."""
    X, y = tiny_problem()
    gamma = 0.7
    p = Problem(X, y, C=C, kernel="rbf", gamma=gamma)
    G = printed_kernel(p, simplified=True)
    found = minimize(
        lambda a: (0.5 * a @ G @ a - a.sum(), G @ a - 1.0),
        np.zeros(G.shape[0]), jac=True, method="L-BFGS-B", bounds=[(0.0, C)] * G.shape[0],
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
    )  # fmt: skip
    rows, cols = np.nonzero(negatives(p.y_index, p.n_classes))
    alpha = np.zeros((p.n_samples, p.n_classes))
    alpha[rows, cols] = found.x
    model = PrintedKernelWestonWatkinsSVC(C=C, gamma=gamma, tol=1e-10).fit(X, y)
    assert model.converged_
    assert_allclose(model.dual_coef_, alpha, atol=1e-5)
    X_new = np.random.default_rng(2).normal(1.0, 1.5, size=(7, 2))
    expected = p.kernel_to(X_new) @ difference_coef(alpha, p.y_index, p.n_classes)  # (E.2)
    assert_allclose(model.decision_function(X_new), expected, atol=1e-5)
    # and it is not the derived dual: the first line's quadratic form differs at this alpha
    a = found.x
    assert abs(a @ printed_kernel(p) @ a - a @ G @ a) > 1e-3
    free = (a > 1e-6) & (a < C - 1e-6)
    assert free.sum() >= (2 if C == 2.0 else 10)


def block_cases():
    """Random blocks (gradients of both signs, points at either bound and inside), blocks whose
    every variable goes to one end (the root below or above every breakpoint) and single
    variables."""
    rng = np.random.default_rng(0)
    for _ in range(8):
        m = int(rng.integers(1, 9))
        hi = rng.uniform(0.5, 3.0, m)
        in_box = rng.random(m) * hi
        a = np.where(rng.random(m) < 0.3, 0.0, np.where(rng.random(m) < 0.4, hi, in_box))
        yield rng.normal(0.0, 3.0, m), a, hi, float(rng.uniform(0.2, 2.0))
    yield np.array([9.0, 7.0, 8.0]), np.array([0.0, 0.5, 1.0]), np.ones(3), 1.0  # all to hi
    yield np.array([-9.0, -7.0, -8.0]), np.array([0.0, 0.5, 1.0]), np.ones(3), 1.0  # all to 0
    yield np.array([0.4]), np.array([0.2]), np.array([2.0]), 0.5  # m = 1, inside
    yield np.array([-5.0]), np.array([0.2]), np.array([2.0]), 0.5  # m = 1, to 0


@pytest.mark.parametrize("g, a, hi, kappa", list(block_cases()))
def test_block_step_is_the_exact_maximiser_of_a_pattern_block(g, a, hi, kappa):
    """_block_step against L-BFGS-B on max g'd - kappa/2 (||d||^2 + (1'd)^2), 0 <= a + d <= hi."""
    x = np.empty(g.size)
    _block_step(g, a, hi, kappa, x)

    def objective(d):
        s = d.sum()
        return kappa / 2 * (d @ d + s * s) - g @ d, kappa * (d + s) - g

    bounds = list(zip(-a, hi - a, strict=True))
    found = minimize(
        objective, np.zeros(g.size), jac=True, method="L-BFGS-B", bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-12},
    )  # fmt: skip
    assert np.all(x >= 0.0) and np.all(x <= hi)  # exactly in the box
    assert objective(x - a)[0] <= found.fun + 1e-12
    assert_allclose(x - a, found.x, atol=1e-6)
    # the engine's box_rank_one solves the same block (c = -1, v = 1) by sorted breakpoints in s
    d, work = np.empty(g.size), np.empty(8 * g.size)
    box_rank_one(g.size, g, kappa, -1.0, np.ones(g.size), -a, hi - a, d, work)
    assert_allclose(x - a, d, atol=1e-12)


def test_block_step_with_a_tiny_curvature_is_the_box_linear_programme():
    """kappa = 1e-200 (a precomputed K_ii that small): the quadratic is negligible and each
    variable goes to the end its gradient points to; x is exactly 0 or hi."""
    g, a, hi = np.array([0.5, -0.3, 1e-3]), np.array([0.2, 0.4, 0.0]), np.array([1.0, 2.0, 3.0])
    x = np.empty(3)
    _block_step(g, a, hi, 1e-200, x)
    assert list(x) == [1.0, 0.0, 3.0]


def test_cli_parses_the_preprocessing_and_the_printed_machine(tmp_path, capsys):
    out = tmp_path / "study"
    argv = [
        "robustness", "--datasets", "iris", "--sizes", "12", "--realisations", "1",
        "--machines", "inhibitory", "weston_watkins_printed", "--gammas", "5",
        "--C-max", "2", "--C-step", "1", "--preprocessing", "range_pm1", "--out", str(out),
    ]  # fmt: skip
    assert main(argv) == 0
    assert json.loads((out / "config.json").read_text())["config"]["preprocessing"] == "range_pm1"
    assert "| iris | 12 | weston_watkins_printed |" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["robustness", "--preprocessing", "scaled"])
    assert exit_.value.code == 2
    assert "invalid choice: 'scaled'" in capsys.readouterr().err
