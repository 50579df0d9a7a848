"""MProt's own optimisers of the static problem (Aiolli & Sperduti 2005, §5), in numba.

State as in the engine: U[i, r] = f_r(x_i) (prototype scores on the training points) and
alpha[i, r] for the negative prototypes r in N_i; the assigned positive prototype's variable is
alpha_i^{y_i} = sum_r alpha[i, r] (MProt 11).  Objective scale: the printed one of (11),
sum alpha - ||M||^2, whose increments are (14).

BasicStep (12)-(14): for a pair (r_a, r_b) in ({y_p} u N_p) x N_p, alpha^{r_a} += y^{r_a} v and
alpha^{r_b} -= y^{r_b} v with

    v = (1/2 (y^{r_a} - y^{r_b}) - f_{r_a}(x_p) + f_{r_b}(x_p)) / (2 K_pp)

clipped so that every alpha stays >= 0 and alpha^{y_p} <= C; the gain is
V(v) = 2 v (1/2 (y^{r_a} - y^{r_b}) - f_{r_a} + f_{r_b} - v K_pp).  BasicUpdate adds v K[:, p] to
the scores of r_a and subtracts it from those of r_b.  (The printed gain for case 2, (13), reads
2v(f_r1 - f_r2) - v ||x_p||^2; the derivation gives 2v(f_r1 - f_r2 - v ||x_p||^2), which (14)
prints and which is used here.)

OptimizeOnPattern: BASIC (Figure 4, the best pair once), ALL_PAIRS (Figure 5, sweeps of all pairs
until the gain of a sweep is <= phi_V) and OPT_KKT (Figure 6, the best of the three pairs named
by the optimality conditions (15) until its gain is <= phi_V).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from msvm.fast.kernels import get_column
from msvm.fast.patterns import budget_rank_one, budget_violation

BASIC, ALL_PAIRS, OPT_KKT = 0, 1, 2


@nb.njit(cache=True)
def basic_step(p, ra, rb, y, U, alpha, C, kpp):
    """(v, gain) of the optimal, clipped BasicStep on the pair (r_a, r_b) of pattern p."""
    positive = ra == y
    half_diff = 1.0 if positive else 0.0  # 1/2 (y^{r_a} - y^{r_b}), y^{r_b} = -1
    numerator = half_diff - U[p, ra] + U[p, rb]
    v = numerator / (2.0 * kpp) if kpp > 0.0 else (np.inf if numerator > 0 else -np.inf)
    if positive:  # alpha^{y} + v in [0, C], alpha^{r_b} + v >= 0
        total = 0.0
        for r in range(alpha.shape[1]):
            total += alpha[p, r]
        v = min(max(v, -alpha[p, rb]), C - total)
    else:  # alpha^{r_a} - v >= 0, alpha^{r_b} + v >= 0
        v = min(max(v, -alpha[p, rb]), alpha[p, ra])
    return v, 2.0 * v * (numerator - v * kpp)


@nb.njit(cache=True)
def basic_update(p, ra, rb, y, v, U, alpha, col):
    """Apply a BasicStep: the dual variables of pattern p and the scores of r_a and r_b."""
    if ra != y:
        alpha[p, ra] -= v
    alpha[p, rb] += v
    for n in range(U.shape[0]):
        U[n, ra] += v * col[n]
        U[n, rb] -= v * col[n]


@nb.njit(cache=True)
def is_pair(p, ra, rb, y, negative):
    """(r_a, r_b) is one of the pairs ({y} u N_p) x N_p, r_a != r_b, that BasicStep moves."""
    return (ra == y or negative[p, ra]) and rb != ra and negative[p, rb]


@nb.njit(cache=True)
def best_pair(p, y, negative, U, alpha, C, kpp):
    """The pair of largest gain (14) among ({y} u N_p) x N_p: (r_a, r_b, v, gain)."""
    best = (-1, -1, 0.0, 0.0)
    P = U.shape[1]
    for ra in range(P):
        for rb in range(P):
            if not is_pair(p, ra, rb, y, negative):
                continue
            v, gain = basic_step(p, ra, rb, y, U, alpha, C, kpp)
            if gain > best[3]:
                best = (ra, rb, v, gain)
    return best


@nb.njit(cache=True)
def kkt_pairs(p, y, negative, U, alpha):
    """r1 = argmax_{N_p} f, r2 = argmax_{N_p, alpha > 0} f, r3 = argmin_{N_p, alpha > 0} f."""
    r1 = r2 = r3 = -1
    for r in range(U.shape[1]):
        if not negative[p, r]:
            continue
        if r1 < 0 or U[p, r] > U[p, r1]:
            r1 = r
        if alpha[p, r] > 0.0:
            if r2 < 0 or U[p, r] > U[p, r2]:
                r2 = r
            if r3 < 0 or U[p, r] < U[p, r3]:
                r3 = r
    return r1, r2, r3


@nb.njit(cache=True)
def optimize_on_pattern(method, p, y, negative, source, U, alpha, C, kpp, phi_v, max_steps):
    """OptimizeOnPattern (Figures 4-6); returns the total gain of the steps taken."""
    col = get_column(source, p)
    total = 0.0
    P = U.shape[1]
    for _ in range(max_steps):
        if method == BASIC:
            ra, rb, v, gain = best_pair(p, y, negative, U, alpha, C, kpp)
            if ra >= 0 and v != 0.0:
                basic_update(p, ra, rb, y, v, U, alpha, col)
                total += gain
            return total
        if method == ALL_PAIRS:
            sweep = 0.0
            for ra in range(P):
                for rb in range(P):
                    if not is_pair(p, ra, rb, y, negative):
                        continue
                    v, gain = basic_step(p, ra, rb, y, U, alpha, C, kpp)
                    if v != 0.0:
                        basic_update(p, ra, rb, y, v, U, alpha, col)
                        sweep += gain
            total += sweep
            if sweep <= phi_v:
                return total
        else:  # OPT_KKT, Figure 6
            r1, r2, r3 = kkt_pairs(p, y, negative, U, alpha)
            used = 0.0
            for r in range(P):
                used += alpha[p, r]
            pairs = ((y, r1), (y, r2), (r1, r3)) if used > 0.0 else ((y, r1), (y, -1), (-1, -1))
            best_v, best_gain, best_a, best_b = 0.0, -np.inf, -1, -1
            for ra, rb in pairs:
                if ra < 0 or rb < 0 or ra == rb:
                    continue
                v, gain = basic_step(p, ra, rb, y, U, alpha, C, kpp)
                if gain > best_gain:
                    best_v, best_gain, best_a, best_b = v, gain, ra, rb
            if best_a < 0 or best_gain <= phi_v:
                return total
            basic_update(p, best_a, best_b, y, best_v, U, alpha, col)
            total += best_gain
    return total


@nb.njit(cache=True)
def pattern_values(criterion, y_index, negative, U, alpha, C, kdiag, out, work):
    """V_p for every pattern (§5.3): 0 = KKT (the pattern's KKT violation), 1 = AMG (largest
    single-pair gain), 2 = BMG (gain of solving the pattern exactly, on a local copy).
    ``work`` is a (5, P) work array."""
    N, P = U.shape
    g = work[0]
    for p in range(N):
        y = y_index[p]
        for r in range(P):
            g[r] = (1.0 - (U[p, y] - U[p, r])) if negative[p, r] else 0.0
        if criterion == 1:
            out[p] = best_pair(p, y, negative, U, alpha, C, kdiag[p])[3]
            continue
        out[p] = _kkt_or_exact_gain(criterion, g, alpha[p], negative[p], C, kdiag[p], work)


@nb.njit(cache=True)
def _kkt_or_exact_gain(criterion, g, alpha_p, negative_p, C, kpp, work):
    hi = work[1]
    for r in range(g.size):
        hi[r] = C if negative_p[r] else 0.0
    if criterion == 0:
        return budget_violation(g.size, g, alpha_p, hi)
    d = work[2]
    budget_rank_one(g.size, g, kpp, alpha_p, hi, d, work[3:5].reshape(-1))
    total = 0.0
    for r in range(g.size):
        total += d[r]
    quadratic = 0.0
    for r in range(g.size):
        quadratic += d[r] * d[r]
    gain = 0.0
    for r in range(g.size):
        gain += g[r] * d[r]
    # the engine's dual scale is half the printed one of (11)
    return 2.0 * (gain - 0.5 * kpp * (quadratic + total * total))
