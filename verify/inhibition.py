"""The inhibition mu = 1/L of ISVM (Lemma 2, Theorem 1), checked on fitted models.

* (3.6): at mu = 1/L the outputs sum to zero over the classes for every input.
* Lemma 2: the Lagrangian is stationary in mu at 1/L.  By the envelope theorem the derivative of
  the optimal primal value at a fixed mu is dE*/dmu = sum_ij alpha_ij y_ij <w, Psi(x_i)>
  (ISVM 4.6 with beta = C - alpha), which is evaluated at each fitted model.
* Theorem 1 says mu* = 1/L minimises the primal (4.1) over (w, mu).  The profile E*(mu) over a
  grid of fixed mu shows where the extremum of the optimal value really is.

Why the profile peaks at 1/L: with f = w (I - mu 11^T), w = f + mu s / (1 - mu L) 1 (s = sum_j
f_j), so ||w||^2 = ||f||^2 + s^2 (1 - (1 - mu L)^2) / (L (1 - mu L)^2) per point: the price of the
sum direction grows without bound as mu -> 1/L and is symmetric in (1 - mu L)^2.  The inhibitory
machine at mu = 1/L is the most constrained member of the family -- a maximum of E*(mu), not a
minimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from msvm.fast import InhibitorySVC


@dataclass
class MuProfile:
    dataset: str
    L: int
    mus: np.ndarray
    objectives: np.ndarray
    derivatives: np.ndarray  # dE*/dmu at each mu (envelope theorem)
    sum_of_outputs: float  # max_x |sum_j f_j(x)| at mu = 1/L (ISVM 3.6)

    @property
    def argmin(self) -> float:
        return float(self.mus[np.argmin(self.objectives)])

    @property
    def argmax(self) -> float:
        return float(self.mus[np.argmax(self.objectives)])

    def summary(self) -> str:
        at = np.argmin(np.abs(self.mus - 1.0 / self.L))
        return (
            f"{self.dataset}: E*(mu) over mu in [0, 2/L] is largest at mu = {self.argmax:.4f} "
            f"(1/L = {1 / self.L:.4f}) and smallest at mu = {self.argmin:.4f}; dE*/dmu at 1/L "
            f"= {self.derivatives[at]:.2e} (stationary), sum_j f_j(x) at 1/L at most "
            f"{self.sum_of_outputs:.1e}.  Theorem 1's mu* = 1/L is a stationary point of the "
            "optimal value, but a maximum: fixing mu elsewhere gives a lower primal optimum."
        )


def envelope_derivative(clf: InhibitorySVC, X) -> float:
    """sum_ij alpha_ij y_ij <w, Psi(x_i)>, with <w, Psi(x_i)> = sum_k <w_k, phi(x_i)>.

    The fitted outputs are f = w (I - mu 11^T), so sum_j f_j = (1 - mu L) sum_k w_k . phi; at
    mu = 1/L the sum vanishes and so does the derivative.
    """
    L = clf.classes_.size
    mu = 1.0 / L if clf.mu is None else clf.mu
    F = clf._scores(X)  # (n, L) class scores, two classes included
    Y = -np.ones_like(F)
    Y[np.arange(F.shape[0]), clf._y_index] = 1.0  # ISVM (3.1)
    if abs(1.0 - mu * L) < 1e-12:
        return 0.0 if np.abs(F.sum(axis=1)).max() < 1e-8 else np.inf
    w_psi = F.sum(axis=1) / (1.0 - mu * L)
    return float(np.sum(clf.dual_coef_ * Y * w_psi[:, None]))


def profile(X, y, *, C=1.0, kernel="rbf", n_points=21, dataset="", random_state=0) -> MuProfile:
    """E*(mu) on a grid of fixed mu in [0, 2/L] with the fast inhibitory machine (tol 1e-6)."""
    L = np.unique(y).size
    mus = np.linspace(0.0, 2.0 / L, n_points)
    objectives, derivatives = [], []
    for mu in mus:
        clf = InhibitorySVC(
            C=C, kernel=kernel, mu=float(mu), tol=1e-6, max_iter=100_000, random_state=random_state
        ).fit(X, y)
        objectives.append(clf.objective_)
        derivatives.append(envelope_derivative(clf, X))
    at_one_over_L = InhibitorySVC(
        C=C, kernel=kernel, tol=1e-6, max_iter=100_000, random_state=random_state
    ).fit(X, y)
    sums = np.abs(at_one_over_L._scores(X).sum(axis=1)).max()
    return MuProfile(dataset, L, mus, np.array(objectives), np.array(derivatives), float(sums))


def plot(profiles: list[MuProfile], path) -> None:
    """E*(mu) / E*(1/L) against mu L for each data set, with mu = 1/L marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for prof in profiles:
        at = np.argmin(np.abs(prof.mus - 1.0 / prof.L))
        ax.plot(
            prof.mus * prof.L,
            prof.objectives / prof.objectives[at],
            marker="o",
            ms=3,
            label=f"{prof.dataset} (L={prof.L})",
        )
    ax.axvline(1.0, color="grey", linestyle="--", label="mu = 1/L")
    ax.set_xlabel("mu L")
    ax.set_ylabel("E*(mu) / E*(1/L)")
    ax.set_title("Inhibitory SVM: optimal primal E*(mu) at fixed mu")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
