"""ISVM's two training algorithms transcribed line by line, in plain numpy, to check them.

``msvm.fast`` implements the derived updates; these functions run what the paper prints, on the
kernel of (6.4), so that the claims of ISVM §7–8 are checked against an independent run rather
than against the library's own solver.  They are slow (one O(NL) numpy update per step) and meant
for the small problems of ``msvm claims``.

- :func:`stochastic_smo`: Algorithm 1 (stochastic SMO), the step alpha_k - V_k / G_kk clipped to
  [0, C], with V_i = y_i f_i - 1 (= y_i E_i of §6) kept by (7.2).
- :func:`sgd_endogenous`: Algorithm 2 (SGD with endogenous learning rate) on the coefficients
  alpha-hat_k = y_k alpha_k of f = G alpha-hat, the step (8.5) clipped as printed,
  alpha-hat in [-C, C] (``clip="printed"``), or as Appendix D's solution types require,
  y_k alpha-hat_k in [0, C] (``clip="appendix_d"``).

Both visit the NL indices in a fresh random order each sweep (the paper says "choose one index")
and stop when the largest KKT violation |clipped step| * G_kk falls below ``tol`` (the paper's
average KKT distance with T = 1e-3 stops about 2e-4 (relative) short of the optimum on the claims'
problem; the claims need the fixed point).
"""

from __future__ import annotations

import numpy as np


def isvm_kernel(K: np.ndarray, n_classes: int) -> np.ndarray:
    """ISVM (6.4): G_kk' = K_{k // L, k' // L} [I(k mod L = k' mod L) - 1/L], k = i L + j.

    Restated from the paper rather than taken from ``reference.inhibitory.kernel_G``, so that the
    claims checked with it do not rest on the library's own statement."""
    L = n_classes
    return np.kron(K, np.eye(L) - np.full((L, L), 1.0 / L))


def _sweeps(n: int, rng, max_sweeps: int):
    for _ in range(max_sweeps):
        yield rng.permutation(n)


def stochastic_smo(G, y, C, tol=1e-10, max_sweeps=20_000, random_state=0):
    """ISVM Algorithm 1.  ``y`` is the flattened +-1 coding (y_k for k = i L + j).

    Returns (alpha, sweeps): the multipliers alpha_k in [0, C] and the sweeps taken.
    """
    rng = np.random.default_rng(random_state)
    n = y.size
    alpha = np.zeros(n)
    V = -np.ones(n)  # V_i := -1
    for sweep, order in enumerate(_sweeps(n, rng, max_sweeps), start=1):
        largest = 0.0
        for k in order:
            new = alpha[k] - V[k] / G[k, k]  # alpha_new = alpha_k - V_k / G_kk
            new = min(C, max(0.0, new))
            change = new - alpha[k]
            if change != 0.0:
                V += change * y * y[k] * G[:, k]  # (7.2)
                alpha[k] = new
            largest = max(largest, abs(change) * G[k, k])
        if largest <= tol:
            return alpha, sweep
    return alpha, max_sweeps


def sgd_endogenous(G, y, C, eta=1.0, clip="printed", tol=1e-10, max_sweeps=20_000, random_state=0):
    """ISVM Algorithm 2 with learning rate ``eta`` (eta_eff).  Returns (alpha_hat, sweeps).

    ``clip="printed"``: alpha_new = min{C, alpha_new}, max{-C, alpha_new} as the algorithm prints;
    ``clip="appendix_d"``: y_k alpha_new in [0, C], the solution types of Appendix D (D.3).
    """
    if clip not in ("printed", "appendix_d"):
        raise ValueError(f"clip must be 'printed' or 'appendix_d', got {clip!r}.")
    rng = np.random.default_rng(random_state)
    n = y.size
    a = np.zeros(n)  # alpha-hat
    V = -np.ones(n)
    for sweep, order in enumerate(_sweeps(n, rng, max_sweeps), start=1):
        largest = 0.0
        for k in order:
            new = a[k] - eta * V[k] / (y[k] * G[k, k])  # (8.5)
            if clip == "printed":
                new = max(-C, min(C, new))
            else:
                new = y[k] * min(C, max(0.0, y[k] * new))
            change = new - a[k]
            if change != 0.0:
                V += y * change * G[:, k]  # V_i := V_i + y_i (alpha_new - alpha-hat_k) G_ik
                a[k] = new
            largest = max(largest, abs(change) * G[k, k] / eta)
        if largest <= tol:
            return a, sweep
    return a, max_sweeps


def primal_value(G, y, C, alpha_hat) -> float:
    """ISVM (8.1) at f = sum_i alpha-hat_i G(chi^i, .):
    1/2 <f, f> + C sum_i [1 - y_i f(chi^i)]_+."""
    f = G @ alpha_hat
    return float(0.5 * alpha_hat @ f + C * np.maximum(0.0, 1.0 - y * f).sum())


def dual_value(G, y, alpha) -> float:
    """ISVM (6.1): sum_k alpha_k - 1/2 sum_kk' alpha_k y_k alpha_k' y_k' G_kk'."""
    a = alpha * y
    return float(alpha.sum() - 0.5 * a @ G @ a)
