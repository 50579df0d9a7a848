"""The kernel steps' over-relaxation follows the kernel's coupling (``engine.relaxation``)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

from msvm.core.kernels import isvm_gamma, kernel_matrix
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    SimplexSVC,
    WestonWatkinsSVC,
    engine,
)
from msvm.fast.kernels import column_source, gram, precomputed_source


def expected(mass: float) -> float:
    """The rule in closed form: 1 up to RELAX_MASS[0], RELAX_MAX from RELAX_MASS[1], linear in
    log(mass) between."""
    low, high = engine.RELAX_MASS
    t = min(max(np.log(mass / low) / np.log(high / low), 0.0), 1.0)
    return 1.0 + (engine.RELAX_MAX - 1.0) * t


def relaxation_of(K, offset=0.0):
    return engine.relaxation(precomputed_source(K), offset, np.diag(K).copy())


@pytest.mark.parametrize("N", [50, 3000])  # 3 000 > RELAX_COLUMNS: the sampled, scaled sum
@pytest.mark.parametrize("mass", [0.0, 1.0, 5.0, 10.0, 30.0, 200.0])
def test_relaxation_of_a_constant_coupling(N, mass):
    """K = (1 - rho) I + rho 11^T has off-diagonal mass rho (N - 1) in every row."""
    rho = mass / (N - 1)
    K = np.full((N, N), rho) + (1.0 - rho) * np.eye(N)
    assert relaxation_of(K) == pytest.approx(expected(max(mass, 1e-300)), abs=1e-12)


def test_relaxation_normalises_by_the_diagonal_and_counts_the_offset():
    """A diagonal rescaling D K D leaves the rule unchanged; the bias's offset adds to every
    entry: K' = I + 11^T has normalised entries 1 / 2 off the diagonal."""
    N = 40
    rng = np.random.default_rng(0)
    rho = 8.0 / (N - 1)
    K = np.full((N, N), rho) + (1.0 - rho) * np.eye(N)
    d = rng.uniform(0.1, 10.0, N)
    assert relaxation_of(d[:, None] * K * d[None, :]) == pytest.approx(expected(8.0), abs=1e-12)
    assert relaxation_of(np.eye(N), offset=1.0) == pytest.approx(expected(0.5 * (N - 1)))


def test_relaxation_is_the_same_on_columns_computed_on_demand():
    X = StandardScaler().fit_transform(load_digits().data[:300])
    for gamma in (0.002, 0.02, 0.2):
        K = gram(X, "rbf", gamma, 3, 0.0)
        source = column_source(X, "rbf", gamma, 3, 0.0, 1.0)
        on_demand = engine.relaxation(source, 0.0, np.diag(K).copy())
        assert on_demand == pytest.approx(relaxation_of(K), abs=1e-12)


def narrow_problem():
    """A subset of the robustness study's kind: 200 standardised digits, the normalised
    Gaussian at g = 5 (off-diagonal mass about 1.4: nearly diagonal)."""
    digits = load_digits()
    rng = np.random.default_rng(1)
    idx = np.sort(rng.choice(digits.target.size, 200, replace=False))
    X = np.nan_to_num(StandardScaler().fit_transform(digits.data[idx]))
    return kernel_matrix(X, X, "rbf", isvm_gamma(5.0, X.shape[1])), digits.target[idx]


@pytest.mark.parametrize(
    "Estimator",
    [InhibitorySVC, WestonWatkinsSVC, CrammerSingerSVC, LeeLinWahbaSVC, SimplexSVC],
)
def test_a_nearly_diagonal_kernel_takes_exact_steps(Estimator, monkeypatch):
    """Over-relaxed steps overshoot where each exact step is nearly the pattern's last: the rule
    takes fewer steps than 1.5 would, to the same optimum."""
    K, y = narrow_problem()
    assert relaxation_of(K) < 1.05
    kwargs = dict(kernel="precomputed", C=10.0, tol=1e-6, random_state=0)
    chosen = Estimator(**kwargs).fit(K, y)
    monkeypatch.setattr(engine, "relaxation", lambda *args: engine.RELAX_MAX)
    relaxed = Estimator(**kwargs).fit(K, y)
    assert chosen.n_steps_ < 0.8 * relaxed.n_steps_
    assert chosen.dual_objective_ == pytest.approx(relaxed.dual_objective_, rel=1e-7)
    np.testing.assert_array_equal(chosen.predict(K), relaxed.predict(K))
