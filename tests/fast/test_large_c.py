"""A C far above every optimal dual variable (the hard-margin regime): the fits reach the optimum
they reach at a moderate C, as libsvm does, however large C is.

The pattern steps' root search had carried the size of the bounds C into the step: from C ~ 1e12
the steps were off by 1e-3, from 1e15 by the size of the variables themselves, and the fits
stalled (inhibitory on wine at C = 1e15: 274 s and a ConvergenceWarning; at 1e20 every dual
variable ended at 0)."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msvm.core import datasets
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)
from msvm.fast.patterns import box_rank_one
from msvm.fast.transfer import sum_clip_root
from msvm.reference import FORMULATIONS, Problem

# A moderate C at which every optimal dual variable of these fits is far below its bound
# (asserted), so that the optimum there is the optimum at every larger C.
MODERATE_C = 1e4


def exact_box_rank_one(g, k, c, v, lo, hi):
    """The maximiser of g.d - k/2 (|d|^2 - c (v.d)^2) over lo <= d <= hi in rationals: the root
    of phi(t) = v.d(t) - t, d(t) = clip(g / k + c v t, lo, hi), found segment by segment."""
    g, v, lo, hi = ([Fraction(x) for x in a] for a in (g, v, lo, hi))
    k, c = Fraction(k), Fraction(c)

    def d_at(t):
        return [min(max(g[p] / k + c * v[p] * t, lo[p]), hi[p]) for p in range(len(g))]

    def phi(t):
        return sum(vp * dp for vp, dp in zip(v, d_at(t), strict=True)) - t

    ts = sorted(
        (b - g[p] / k) / (c * v[p]) for p in range(len(g)) if v[p] and c for b in (lo[p], hi[p])
    )
    if not ts or phi(ts[0]) <= 0:
        return d_at(ts[0] + phi(ts[0]) if ts else Fraction(0))
    for left, right in zip(ts, ts[1:], strict=False):
        if phi(left) > 0 >= phi(right):
            return d_at(left + phi(left) * (right - left) / (phi(left) - phi(right)))
    return d_at(ts[-1] + phi(ts[-1]))


def gain(d, g, k, c, v):
    d, g, v = ([Fraction(x) for x in a] for a in (d, g, v))
    vd = sum(a * b for a, b in zip(v, d, strict=True))
    return sum(a * b for a, b in zip(g, d, strict=True)) - Fraction(k) / 2 * (
        sum(x * x for x in d) - Fraction(c) * vd * vd
    )


@settings(max_examples=120, deadline=None)
@given(
    L=st.integers(2, 10),
    seed=st.integers(0, 10_000),
    structure=st.sampled_from(["sign-singular", "sign", "lee-lin-wahba", "weston-watkins"]),
    bound=st.sampled_from([1e3, 1e12, 1e15, 1e20, 1e100]),
)
def test_the_pattern_step_is_exact_whatever_the_size_of_its_bounds(L, seed, structure, bound):
    """A pattern's step at bounds C - alpha of any size against its exact rational maximiser:
    the gain to 1e-12 of its size, and no larger a step than the exact one needs (where the
    maximiser is not unique, the inhibitory machine at mu = 1/L, the step of least norm)."""
    rng = np.random.default_rng(seed)
    if structure.startswith("sign"):  # the inhibitory machine: v = y, c up to 1/L
        n, v = L, -np.ones(L)
        v[rng.integers(L)] = 1.0
        c = 1.0 / L if structure == "sign-singular" else rng.uniform(0.0, 1.0 / L)
    else:  # Lee-Lin-Wahba (I - 11^T / L) and Weston-Watkins (I + 11^T) on the L - 1 others
        n, v = L - 1, np.ones(L - 1)
        c = 1.0 / L if structure == "lee-lin-wahba" else -1.0
    g = rng.normal(scale=3.0, size=n)
    alpha = rng.uniform(0.0, 5.0, size=n) * (rng.random(n) < 0.7)
    k = rng.uniform(0.5, 2.0)
    lo, hi = -alpha, bound - alpha
    d = np.empty(n)
    box_rank_one(n, g, k, c, v, lo, hi, d, np.empty(8 * n))
    assert np.all(d >= lo) and np.all(d <= hi)
    best = exact_box_rank_one(g, k, c, v, lo, hi)
    exact_gain = gain(best, g, k, c, v)
    assert float(exact_gain - gain(d, g, k, c, v)) <= 1e-12 * (1.0 + abs(float(exact_gain)))
    assert np.abs(d).max() <= 1.0 + max(abs(float(x)) for x in best)


@settings(max_examples=120, deadline=None)
@given(
    n=st.integers(2, 8),
    seed=st.integers(0, 10_000),
    bound=st.sampled_from([1e3, 1e12, 1e15, 1e20, 1e100]),
)
def test_the_crammer_singer_transfer_root_is_exact_whatever_the_size_of_its_bounds(n, seed, bound):
    """sum_p clip(a_p - s, lo_p, hi_p) = target (a Crammer-Singer transfer's budget) with upper
    bounds C - alpha of any size: the sum at the returned s, in rationals, within 1e-12."""
    rng = np.random.default_rng(seed)
    a = rng.normal(scale=3.0, size=n)
    lo, hi = -rng.uniform(0.0, 5.0, size=n), bound - rng.uniform(0.0, 5.0, size=n)
    target = rng.uniform(0.5 * lo.sum(), 5.0)
    s = Fraction(sum_clip_root(n, a, lo, hi, target, np.empty(4 * n)))
    total = sum(min(max(Fraction(a[p]) - s, Fraction(lo[p])), Fraction(hi[p])) for p in range(n))
    assert abs(float(total) - target) <= 1e-12 * (1.0 + abs(target))


MACHINES = {
    "inhibitory": InhibitorySVC,
    "weston_watkins": WestonWatkinsSVC,
    "lee_lin_wahba": LeeLinWahbaSVC,
    "one_vs_all": OneVsAllSVC,
    "simplex_hinge": SimplexSVC,
}


@pytest.fixture(scope="module")
def wine():
    X, y = datasets.load("wine", n_samples=90)
    return X, y


@pytest.mark.parametrize("C", [1e15, 1e30])
@pytest.mark.parametrize("name", list(MACHINES))
def test_a_huge_c_reaches_the_hard_margin_optimum(name, C, wine):
    X, y = wine
    reference = FORMULATIONS[name].dual(Problem(X, y, C=MODERATE_C, kernel="rbf"))
    assert np.abs(reference.dual_coef).max() < 1e-2 * MODERATE_C  # the hard-margin optimum
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        model = MACHINES[name](C=C, tol=1e-6, max_iter=10_000, random_state=0).fit(X, y)
    assert model.dual_objective_ == pytest.approx(reference.objective, rel=1e-6)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))


@pytest.mark.parametrize(
    "Machine", [InhibitorySVC, LeeLinWahbaSVC, WestonWatkinsSVC, CrammerSingerSVC]
)
def test_the_interior_point_at_a_huge_c_searches_where_the_variables_are(Machine):
    """Iris at gamma = scale / 10 needs the interior-point switch; its box was [0, C], and from
    half-way up a box of 1e30 its runs went astray (the inhibitory dual ended at -4e30, Lee-Lin-
    Wahba's KKT violation at 2.6 after 20 000 epochs).  A run's box is now cut at 1 024 times
    the largest variable: the fit at C = 1e30 ends where the one at C = 1e10 does."""
    X, y = datasets.load("iris")
    gamma = 0.1 / (X.shape[1] * X.var())
    fits = [
        Machine(C=C, gamma=gamma, max_iter=20_000, random_state=0).fit(X, y) for C in (1e10, 1e30)
    ]
    assert fits[0].dual_coef_.max() < 1e-2 * 1e10  # the optimum at 1e10 is that at any larger C
    assert fits[1].fit_status_ == 0
    assert fits[1].dual_objective_ == pytest.approx(fits[0].dual_objective_, rel=1e-5)
    np.testing.assert_array_equal(fits[1].predict(X), fits[0].predict(X))
