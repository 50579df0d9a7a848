"""The ISVM paper's own solvers: stochastic SMO (Algorithm 1) and SGD with an endogenous learning
rate (Algorithm 2), one variable at a time.

Algorithm 1 (ISVM 7.1-7.2), in the paper's margin variables V_k = y_k f_k(x) - 1 = -g_k (g the
dual gradient):

    pick k uniformly at random among the N L variables
    alpha_new = clip(alpha_k - V_k / G_kk, 0, C)
    for every variable i:
        V_i += (alpha_new - alpha_k) y_i y_k G_ik;  KKT += KKTdistance(V_i, alpha_i)
    alpha_k = alpha_new;  stop when KKT / (N L) <= theta

with KKTdistance as printed (resolution T, numerical margin eps).  Updating every V_i is what the
engine does when it adds one kernel column to the outputs U, so V is read off U here; the cost per
step is O(N L) for ONE variable, where the engine pays O(N L) for a whole pattern of L variables.

Algorithm 2 (ISVM 8.2-8.5) takes the step Delta_k = -eta_eff V_k / (y_k G_kk) on the signed
coefficient alpha^_k = y_k alpha_k, i.e. the SMO step scaled by eta_eff (eta_eff = 1 is SMO).
Two printed details are not what the derivation gives, and this module follows the derivation:

* Algorithm 2 clips alpha^_k to [-C, C].  Appendix D gives alpha^_k* y_k = C 1(...) in [0, C]:
  a coefficient of the wrong sign is not a subgradient of the hinge and its fixed point is not the
  SVM's.  Here y_k alpha^_k is clipped to [0, C].
* Algorithm 2 sums KKTdistance(V_i, y_i alpha^_k) over i; the distance of variable i depends on its
  own coefficient, y_i alpha^_i, which is what is used.

For the other machines the same loop runs on their own kernel (ISVM §9 used one SMO code for
1-vs-all, Weston-Watkins and ISVM): G_kk is K_ii times the diagonal of the pattern Hessian.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from sklearn.utils import check_random_state

from msvm.fast.convergence import convergence_warning
from msvm.fast.engine import epoch_limit, step_budget
from msvm.fast.kernels import get_column, kernel_diagonal
from msvm.fast.patterns import hessian_structure, output_shift, pattern_gradient, state_change

KKT_RESOLUTION_EPS = 1e-6  # the paper's eps, "set to 1e-6"


@nb.njit(cache=True)
def kkt_distance(V, alpha, C, T, eps):
    """ISVM §7: the distance of one variable from its KKT conditions."""
    if V < -T and alpha < eps:
        return -V
    if V > T and alpha > C - eps:
        return V
    if abs(V) > T and eps < alpha < C - eps:
        return abs(V)
    return 0.0


@nb.njit(cache=True)
def mean_kkt_distance(U, alpha, hi, lin, y_index, kind, shift, T, eps, g, every):
    """(1 / #variables) sum_k KKTdistance(V_k, alpha_k), with V_k = -g_k (free variables only);
    ``every`` is the identity class list (1, L) (``patterns.all_classes``)."""
    N, L = alpha.shape
    total, count = 0.0, 0
    for i in range(N):
        pattern_gradient(kind, U, i, shift, lin, i, y_index[i], every, 0, L, g)
        for j in range(L):
            if hi[i, j] > 0.0:
                total += kkt_distance(-g[j], alpha[i, j], hi[i, j], T, eps)
                count += 1
    return total / max(count, 1)


def mean_kkt(U, alpha, hi, lin, y_index, kind, c, tol) -> float:
    """Algorithms 1 and 2's stopping quantity at the outputs U: ``mean_kkt_distance`` with the
    resolution T = ``tol`` (``SingleVariableSolver``)."""
    L = alpha.shape[1]
    every = np.arange(L).reshape((1, L))
    shift = output_shift(kind, c, L)
    args = (kind, shift, tol, KKT_RESOLUTION_EPS, np.empty(L), every)
    return float(mean_kkt_distance(U, alpha, hi, lin, y_index, *args))


@nb.njit(cache=True)
def single_variable_steps(
    draws, source, U, alpha, hi, lin, y_index, kdiag, kind, c, eta, T, theta, eps
):
    """Run Algorithm 1 (eta = 1) or 2 on the variables listed by ``draws`` (flat indices i L + j).

    Returns (steps taken, final mean KKT distance); stops early once it is <= theta.
    """
    N, L = alpha.shape
    shift = output_shift(kind, c, L)
    g, v, delta, dS = np.empty(L), np.empty(L), np.zeros(L), np.empty(L + 1)
    every = np.arange(L).reshape((1, L))  # every variable of a pattern (patterns.all_classes)
    kkt = np.inf
    for step in range(draws.size):
        i, j = draws[step] // L, draws[step] % L
        y = y_index[i]
        pattern_gradient(kind, U, i, shift, lin, i, y, every, 0, L, g)
        ch = hessian_structure(kind, y, c, L, every, np.int64(0), L, v)
        G_kk = kdiag[i] * (1.0 - ch * v[j] * v[j])
        old = alpha[i, j]
        new = old + eta * g[j] / G_kk if G_kk > 0.0 else (hi[i, j] if g[j] > 0 else 0.0)
        new = min(max(new, 0.0), hi[i, j])
        if new != old:
            alpha[i, j] = new
            delta[:] = 0.0
            delta[j] = new - old
            state_change(kind, L, delta, every, np.int64(0), y, shift, dS)
            col = get_column(source, i)
            for n in range(N):
                for jj in range(U.shape[1]):
                    U[n, jj] += col[n] * dS[jj]
        kkt = mean_kkt_distance(U, alpha, hi, lin, y_index, kind, shift, T, eps, g, every)
        if kkt <= theta:
            return step + 1, kkt
    return draws.size, kkt


class SingleVariableSolver:
    """ISVM Algorithm 1 (``eta=1``) or Algorithm 2 (``eta`` = eta_eff) on a kernel column source.

    ``tol`` is both the resolution T and the threshold theta (the paper sets them equal, 1e-3);
    ``max_iter`` counts epochs of (number of free variables) random draws; -1 runs until
    converged within the engine's step budget (``engine.step_budget``).
    """

    def __init__(self, kind, c, lin, hi, y_index, *, tol, max_iter, random_state, eta=1.0):
        self.kind, self.c, self.lin, self.hi, self.y_index = kind, float(c), lin, hi, y_index
        self.tol, self.max_iter, self.eta = tol, max_iter, float(eta)
        self.rng = check_random_state(random_state)
        self.n_steps = 0  # variable updates drawn (each an O(N L) step)
        self.messages = None  # a list: the ConvergenceWarning's text goes there instead

    def solve_kernel(self, source, alpha, U):
        kdiag = np.empty(alpha.shape[0])
        kernel_diagonal(source, kdiag)
        free = np.flatnonzero(self.hi.ravel() > 0)
        steps = 0
        budget = step_budget(self.max_iter, alpha.shape[0])
        for _ in range(epoch_limit(self.max_iter)):
            if steps >= budget:
                break
            draws = free[self.rng.randint(free.size, size=free.size)]
            taken, kkt = single_variable_steps(
                draws,
                source,
                U,
                alpha,
                self.hi,
                self.lin,
                self.y_index,
                kdiag,
                self.kind,
                self.c,
                self.eta,
                self.tol,
                self.tol,
                KKT_RESOLUTION_EPS,
            )
            steps += taken
            self.n_steps += taken
            if kkt <= self.tol:
                return steps / free.size, kkt
        convergence_warning(
            f"The solver stopped after {steps} variable steps (max_iter={self.max_iter}) with a "
            f"mean KKT distance of {kkt:.2e} > tol={self.tol:g}; increase max_iter.",
            self.messages,
        )
        return steps / free.size, kkt
