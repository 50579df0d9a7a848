"""Bayes consistency by Monte Carlo: ISVM Algorithm 3 as a general tool.

For a multiclass loss with class-wise losses h_j(f) (the loss paid at outputs f when the true class
is j), draw class probabilities p (uniform on [0, 1]^L, normalised, as Algorithm 3), minimise the
conditional risk sum_j p_j h_j(f) over f exactly -- every loss here is a sum or maximum of hinges
of affine functions of f, so this is a linear programme (scipy's HiGHS) -- and ask whether the
minimiser's decision picks argmax_j p_j.  The inconsistency rate is the share of draws where it
does not.

Ties and non-unique minimisers.  A minimiser counts as correct only when the most probable class
is the *strict* maximum of its decision values (a tie is an error).  The minimiser is often not
unique, so three rates are reported: ``vertex`` for the minimiser HiGHS returns (a vertex of the
LP), ``pessimistic`` when some minimiser is wrong or tied (an LP over the optimal face maximises
f_i - f_k for each other class i), and ``optimistic`` when every minimiser is wrong (an LP maximises
the margin of the most probable class k over the optimal face and finds none above 1e-7).

The decision is argmax_j f_j, except for the simplex hinge, whose f lives in R^{L-1} and is decoded
by argmax_t <f, a_t> (Simplex Definition 1.1).  ISVM Table 5 reports, for L = 2..5, 0/5/25/37 %
(one-vs-all), 0/0/10/17 % (ISVM) and 0/15/39/48 % (Weston-Watkins).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from msvm.core import simplex_code

FORMULATIONS = (
    "one_vs_all",
    "inhibitory",
    "weston_watkins",
    "crammer_singer",
    "lee_lin_wahba",
    "simplex_hinge",
)
PUBLISHED = {  # ISVM Table 5, % of 100 000 draws
    "one_vs_all": {2: 0, 3: 5, 4: 25, 5: 37},
    "inhibitory": {2: 0, 3: 0, 4: 10, 5: 17},
    "weston_watkins": {2: 0, 3: 15, 4: 39, 5: 48},
}
STRICT = 1e-7


@dataclass
class Hinges:
    """The conditional risk as an LP in z = (f, t): minimise c^T t, t >= 0, t >= b + A f."""

    A: np.ndarray  # (m, n_f) rows of the hinge arguments
    b: np.ndarray  # (m,)
    weights: np.ndarray  # (m, L): weight of hinge row r in h_j (the class it is charged to)
    groups: np.ndarray  # (m,) slack variable of each row (rows of one max share a slack)
    decision: np.ndarray  # (L, n_f): decision values D f
    equality: np.ndarray | None = None  # rows E f = 0


def hinges(formulation: str, L: int) -> Hinges:
    """The hinge terms of h_1..h_L for one formulation (ISVM §10, Table 1; Simplex §1.3)."""
    eye = np.eye(L)
    rows, consts, weights, groups = [], [], [], []

    def add(a, b, charged_to, group=None):
        rows.append(a)
        consts.append(b)
        weights.append(charged_to)
        groups.append(len(groups) if group is None else group)

    if formulation in ("one_vs_all", "inhibitory"):
        centre = eye - (np.ones((L, L)) / L if formulation == "inhibitory" else 0.0)
        for j in range(L):  # [1 - g_j]_+ charged to class j, [1 + g_j]_+ to every other class
            add(-centre[j], 1.0, eye[j])
            add(centre[j], 1.0, 1.0 - eye[j])
        decision = eye
    elif formulation == "weston_watkins":
        for j in range(L):
            for i in range(L):
                if i != j:
                    add(eye[i] - eye[j], 1.0, eye[j])  # [1 - (f_j - f_i)]_+
        decision = eye
    elif formulation == "crammer_singer":
        for j in range(L):
            slack = len(set(groups))
            for i in range(L):
                if i != j:
                    add(eye[i] - eye[j], 1.0, eye[j], group=slack)  # max_i [1 - f_j + f_i]_+
        decision = eye
    elif formulation == "lee_lin_wahba":
        for i in range(L):  # [f_i + 1/(L-1)]_+ charged to every class j != i
            add(eye[i], 1.0 / (L - 1), 1.0 - eye[i])
        decision = eye
    elif formulation == "simplex_hinge":
        code = simplex_code(L)
        for j in range(L):
            add(-code[j], 1.0, eye[j])  # [1 - <a_j, f>]_+
        decision = code
    else:
        raise ValueError(f"Unknown formulation {formulation!r}; expected one of {FORMULATIONS}.")
    groups = np.unique(np.array(groups), return_inverse=True)[1]
    equality = np.ones((1, L)) if formulation == "lee_lin_wahba" else None
    return Hinges(np.array(rows), np.array(consts), np.array(weights), groups, decision, equality)


class ConditionalRisk:
    """The LP of one loss: constraints built once, objectives per probability vector."""

    def __init__(self, h: Hinges):
        self.h = h
        m, n_f = h.A.shape
        n_t = h.groups.max() + 1
        self.n_f, self.n_t = n_f, n_t
        S = sp.csr_matrix((np.ones(m), (np.arange(m), h.groups)), shape=(m, n_t))
        self.A_ub = sp.hstack([sp.csr_matrix(h.A), -S]).tocsr()  # A f - t <= -b
        self.b_ub = -h.b
        self.A_eq = None if h.equality is None else np.hstack([h.equality, np.zeros((1, n_t))])
        self.bounds = [(None, None)] * n_f + [(0, None)] * n_t

    def cost(self, p):
        """Slack weights: sum_j p_j over the classes each slack is charged to."""
        c_rows = self.h.weights @ p
        c = np.zeros(self.n_t)
        np.maximum.at(c, self.h.groups, c_rows)  # rows of one max share one weight
        return np.concatenate([np.zeros(self.n_f), c])

    def solve(self, objective, extra_A=None, extra_b=None, margin=False):
        """One LP over z = (f, t) -- plus a margin variable m <= 1 when ``margin`` -- with the
        hinge constraints and optional extra rows ``extra_A z <= extra_b``."""
        A, A_eq, bounds = self.A_ub, self.A_eq, self.bounds
        if margin:
            A = sp.hstack([A, sp.csr_matrix((A.shape[0], 1))]).tocsr()
            A_eq = None if A_eq is None else np.hstack([A_eq, np.zeros((1, 1))])
            bounds = bounds + [(None, 1.0)]
        b = self.b_ub
        if extra_A is not None:
            A, b = sp.vstack([A, sp.csr_matrix(extra_A)]).tocsr(), np.concatenate([b, extra_b])
        res = linprog(
            objective,
            A_ub=A,
            b_ub=b,
            A_eq=A_eq,
            b_eq=None if A_eq is None else np.zeros(1),
            bounds=bounds,
            method="highs",
        )
        if res.status != 0:
            raise RuntimeError(f"HiGHS: {res.message}")
        return res

    def classify(self, p):
        """(vertex correct, some minimiser wrong or tied, some minimiser strictly correct)."""
        k = int(np.argmax(p))
        c = self.cost(p)
        best = self.solve(c)
        D, n = self.h.decision, self.n_f + self.n_t
        values = D @ best.x[: self.n_f]
        others = np.delete(np.arange(D.shape[0]), k)
        vertex_ok = bool(np.all(values[k] > values[others] + STRICT))
        # the optimal face: c^T z <= opt (with a relative slack for the solver's tolerance)
        face_A, face_b = c[None, :], np.array([best.fun + 1e-9 * (1 + abs(best.fun))])
        some_wrong = False
        for i in others:  # can class i reach class k's decision value on the optimal face?
            direction = np.zeros(n)
            direction[: self.n_f] = D[k] - D[i]  # minimise D_k f - D_i f
            if self.solve(direction, face_A, face_b).fun <= STRICT:
                some_wrong = True
                break
        some_right = vertex_ok
        if not some_right:  # maximise m <= (D_k - D_i) f for all i over the face
            rows = np.zeros((len(others) + 1, n + 1))
            rows[0, :n] = c
            for r, i in enumerate(others, start=1):
                rows[r, : self.n_f] = -(D[k] - D[i])
                rows[r, -1] = 1.0
            objective = np.zeros(n + 1)
            objective[-1] = -1.0
            bound = np.concatenate([face_b, np.zeros(len(others))])
            some_right = -self.solve(objective, rows, bound, margin=True).fun > STRICT
        return vertex_ok, some_wrong, some_right


@dataclass
class ConsistencyRow:
    formulation: str
    L: int
    trials: int
    vertex: float
    pessimistic: float
    optimistic: float
    published: float | None = None

    def as_dict(self):
        return asdict(self)


def monte_carlo(formulation: str, L: int, trials: int, random_state=None, progress=None):
    """Inconsistency rates (fractions) over ``trials`` draws of p (ISVM Algorithm 3)."""
    rng = np.random.default_rng(random_state)
    risk = ConditionalRisk(hinges(formulation, L))
    vertex = pessimistic = optimistic = 0
    for _ in range(trials):
        p = rng.random(L)
        p /= p.sum()
        ok, some_wrong, some_right = risk.classify(p)
        vertex += not ok
        pessimistic += some_wrong
        optimistic += not some_right
        if progress is not None:
            progress.update(1)
    published = PUBLISHED.get(formulation, {}).get(L)
    return ConsistencyRow(
        formulation,
        L,
        trials,
        vertex / trials,
        pessimistic / trials,
        optimistic / trials,
        None if published is None else published / 100,
    )
