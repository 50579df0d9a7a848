"""Bayes consistency by Monte Carlo: ISVM Algorithm 3 as a general tool.

For a multiclass loss with class-wise losses h_j(f) (the loss paid at outputs f when the true class
is j), draw class probabilities p (uniform on [0, 1]^L, normalised, as Algorithm 3; one
``rng.random(L)`` per draw), find the *set* S* of minimisers of the conditional risk
R_p(f) = sum_j p_j h_j(f) exactly -- every loss here is a sum or maximum of hinges of affine
functions of f, so this is a linear programme in z = (f, t), t the hinge slacks -- and ask whether
the minimisers' decisions pick k = argmax_j p_j (unique with probability 1).

Decision values are v = D f: v = f, except for the simplex hinge, whose f lives in R^{L-1} and
whose decision values are v_t = <f, a_t> (Simplex Definition 1.1).  The top set of f is
T(f) = argmax_j v_j; f puts k *strictly first* when T(f) = {k}.

The minimiser set.  HiGHS's dual simplex returns a minimiser z0 and an optimal basic dual: y >= 0
on the hinge rows, reduced costs r >= 0 on the slacks.  By complementary slackness a feasible z
is optimal if and only if every hinge row with y_i > 0 is tight and every slack with r_j > 0 is
zero, so S* = {feasible z : those rows are equalities, those slacks are 0} exactly -- a polyhedron
given by equations, with no slack on the objective.  Dual values above ``support`` count as
positive.  A verdict is then read in one of two ways:

* the affine hull of S* (the null space N of its equations, from an SVD whose singular values
  above ``rank`` count as non-zero) fixes every decision difference v_i - v_k when every entry of
  (D_i - D_k) N is within ``tie`` of 0: then the differences are the same on all of S* and are
  read at z0 -- the usual case (every draw of the committed table);
* otherwise by LPs over S* (``method="lp"`` forces this for every draw), with
  d_i(f) = v_i - v_k:  hi_i = max_{S*} d_i,  m* = max_{S*} min_{i != k} (v_k - v_i),
  lo_i = min_{S*} d_i.  Those draws also certify S* from the other side by one more LP,
  max_{S*} R_p - min R_p (``face_excess``, at most ``EXCESS`` or the draw raises), so a support
  threshold set too high (which could only enlarge the face) cannot pass unseen.

A value within ``tie`` of 0 is 0 (a tie).  Every draw falls in exactly one class:

    correct        every minimiser puts k strictly first (max_i hi_i < 0);
    wrong          every minimiser puts some class strictly above k (m* < 0);
    tied           k is among the top on some minimiser and strictly first on none (m* = 0);
    mixed          some minimisers put k strictly first and some do not (m* > 0 >= -max_i hi_i).

Reported rates (fractions of the draws; ``ConsistencyRow``):

    inconsistent   wrong + tied + mixed: some minimiser fails to put k strictly first -- the
                   failure of classification calibration (Tewari & Bartlett 2007; the old
                   ``pessimistic`` column);
    wrong, tied, mixed   as above (wrong + tied is the old ``optimistic``: no minimiser puts k
                   strictly first);
    tie_break      the expected 0-1 error when ties among the top decision values are broken
                   uniformly at random: per draw 1 - [k in T] / |T|, T the top set, which is the
                   same on every minimiser unless the draw is ambiguous; an ambiguous draw counts
                   1, so tie_break is exact when ambiguous = 0 and an upper bound otherwise
                   (tie_break - ambiguous is then a lower bound);
    ambiguous      draws whose tie-break error is not the same on all of S*: every mixed draw,
                   and the tied draws where k is beaten on part of S* (max_i hi_i > 0) or a class
                   ties k on only part of it (hi_i = 0 > lo_i).  In the other tied draws T is k
                   with the classes i whose lo_i = hi_i = 0, on all of S*;
    vertex         a diagnostic, solver-dependent: the minimiser z0 HiGHS returns fails to put k
                   strictly first;
    by_lp          draws decided by LPs over S* (not by its affine hull).

Tolerances (``Tolerances``) and their scale separation: HiGHS primal and dual feasibility
``solver`` = 1e-10 (HiGHS's minimum: smaller values are refused here, as HiGHS would silently
ignore them), dual ``support`` = 1e-9, ``tie`` = 1e-6, ``rank`` = 1e-9.  Decision values at the
vertices of S* are small rationals (simplex-code numbers for the simplex hinge), so a true
non-zero difference is of order 1 and a true zero comes out of the simplex at rounding level;
positive duals are linear forms in p.  Each row records, per tolerance, the largest value read as
zero and the smallest read as non-zero (``separation``), so the gap is measured, not assumed, and
``monte_carlo(..., sensitivity=True)`` re-classifies the same draws with each tolerance moved 10x
either way (the solver's only upwards) and counts the draws whose verdict (class, tie-break
error, ambiguity) changes (``changed``).

ISVM Table 5 reports, for L = 2..5, 0/5/25/37 % (one-vs-all), 0/0/10/17 % (ISVM) and 0/15/39/48 %
(Weston-Watkins), without saying how ties or non-unique minimisers were counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

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
CATEGORIES = ("correct", "tied", "wrong", "mixed")
HIGHS_MIN_TOLERANCE = 1e-10  # HiGHS rejects smaller feasibility tolerances (keeps its default)
EXCESS = 1e-7  # the largest admissible max_{S*} R_p - min R_p (relative to 1 + |min R_p|)


FINEST_SUPPORT = 1e-14  # the finest dual-support tolerance ``classify`` reads duals against


@dataclass(frozen=True)
class Tolerances:
    """The four tolerances of the consistency LPs (see the module docstring)."""

    solver: float = 1e-10  # HiGHS primal and dual feasibility
    support: float = 1e-9  # a dual value above this marks its row (or slack bound) active on S*
    tie: float = 1e-6  # an LP value or decision difference within this of 0 is 0
    rank: float = 1e-9  # singular values of S*'s equations above this are non-zero

    def __post_init__(self):
        if not self.solver >= HIGHS_MIN_TOLERANCE:
            raise ValueError(
                f"HiGHS takes feasibility tolerances >= {HIGHS_MIN_TOLERANCE:g}; "
                f"got {self.solver!r}."
            )
        if not (self.support > 0 and self.tie > 0 and self.rank > 0):
            raise ValueError(f"Tolerances must be positive; got {self}.")

    def moves(self):
        """The tolerance sets of the sensitivity check: each tolerance 10x either way (the
        solver's only upwards: HiGHS's minimum is the default)."""
        out = {}
        for name in ("solver", "support", "tie", "rank"):
            for factor in (0.1, 10.0):
                value = getattr(self, name) * factor
                if name == "solver" and value < HIGHS_MIN_TOLERANCE * (1 - 1e-12):
                    continue
                out[f"{name} x{factor:g}"] = replace(self, **{name: value})
        return out


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


@dataclass(frozen=True)
class Verdict:
    """One draw: its class (``CATEGORIES``), tie-break error, ambiguity and diagnostics."""

    category: str
    tie_break: float  # 1 - [k in T] / |T| (1 when ambiguous)
    ambiguous: bool
    vertex_error: bool  # the minimiser HiGHS returns fails to put k strictly first
    face_excess: float  # max_{S*} R_p - min R_p (0 when the face fixes the decisions)
    by_lp: bool  # decided by LPs over S* (its affine hull does not fix the decisions)
    separation: dict  # tolerance -> (largest value read as zero, smallest read as non-zero)

    def key(self):
        """What the sensitivity check compares."""
        return self.category, round(self.tie_break, 9), self.ambiguous


def _split(values, threshold):
    values = np.abs(np.asarray(values, dtype=float).ravel())
    zero, nonzero = values[values <= threshold], values[values > threshold]
    return (
        float(zero.max()) if zero.size else 0.0,
        float(nonzero.min()) if nonzero.size else np.inf,
    )


class ConditionalRisk:
    """The LP of one loss: constraints built once, objectives per probability vector."""

    def __init__(self, h: Hinges, tolerances: Tolerances | None = None):
        self.h = h
        self.tol = Tolerances() if tolerances is None else tolerances
        m, n_f = h.A.shape
        n_t = h.groups.max() + 1
        self.n_f, self.n_t = n_f, n_t
        S = sp.csr_matrix((np.ones(m), (np.arange(m), h.groups)), shape=(m, n_t))
        self.A_ub = sp.hstack([sp.csr_matrix(h.A), -S]).tocsr()  # A f - t <= -b
        self.A_dense = self.A_ub.toarray()
        self.b_ub = -h.b
        self.A_eq = None if h.equality is None else np.hstack([h.equality, np.zeros((1, n_t))])
        self.bounds = [(None, None)] * n_f + [(0, None)] * n_t

    def cost(self, p):
        """Slack weights: sum_j p_j over the classes each slack is charged to."""
        c_rows = self.h.weights @ p
        c = np.zeros(self.n_t)
        np.maximum.at(c, self.h.groups, c_rows)  # rows of one max share one weight
        return np.concatenate([np.zeros(self.n_f), c])

    def _linprog(self, objective, A_ub, b_ub, A_eq, b_eq, bounds):
        res = linprog(
            objective,
            A_ub=A_ub,
            b_ub=b_ub,
            A_eq=A_eq,
            b_eq=b_eq,
            bounds=bounds,
            method="highs-ds",  # dual simplex: a vertex and a basic (exactly complementary) dual
            options={
                "primal_feasibility_tolerance": self.tol.solver,
                "dual_feasibility_tolerance": self.tol.solver,
            },
        )
        if res.status == 3:
            return res, -np.inf
        if res.status != 0:
            raise RuntimeError(f"HiGHS: {res.message}")
        return res, res.fun

    def solve(self, objective):
        """The conditional-risk LP with cost vector ``objective`` (HiGHS's result)."""
        A_eq = self.A_eq
        res, _ = self._linprog(
            objective,
            self.A_ub,
            self.b_ub,
            A_eq,
            None if A_eq is None else np.zeros(1),
            self.bounds,
        )
        return res

    def optimal_face(self, p):
        """(HiGHS's minimiser, S* as LP data (A_ub, b_ub, A_eq, b_eq, bounds), its equations
        E z = e as a matrix E, the dual values read against ``support``).

        S* = {feasible z : hinge rows with dual > support tight, slacks with reduced cost >
        support zero} (complementary slackness with HiGHS's optimal dual)."""
        c = self.cost(p)
        best = self.solve(c)
        y = -best.ineqlin.marginals  # >= 0 for A_ub z <= b_ub
        r = best.lower.marginals[self.n_f :]  # reduced costs of the slacks' bounds t >= 0
        active = np.flatnonzero(y > self.tol.support)
        fixed = np.flatnonzero(r > self.tol.support)
        eq_rows = [self.A_dense[active]]
        eq_rhs = [self.b_ub[active]]
        if self.A_eq is not None:
            eq_rows.append(self.A_eq)
            eq_rhs.append(np.zeros(1))
        bounds = list(self.bounds)
        for j in fixed:
            bounds[self.n_f + j] = (0.0, 0.0)
        unit = np.zeros((len(fixed), self.n_f + self.n_t))
        unit[np.arange(len(fixed)), self.n_f + fixed] = 1.0
        E = np.vstack(eq_rows + [unit])
        face = (self.A_ub, self.b_ub, np.vstack(eq_rows), np.concatenate(eq_rhs), bounds)
        return best, face, E, np.concatenate([y, r])

    def _max_over(self, face, objective):
        """max over S* of objective^T z (+inf when unbounded)."""
        _, value = self._linprog(-objective, *face)
        return -value

    def _max_min_margin(self, face, k):
        """m* = max over S* of min_{i != k} (v_k - v_i), capped at 1 (only its sign matters)."""
        A_ub, b_ub, A_eq, b_eq, bounds = face
        D, n = self.h.decision, self.n_f + self.n_t
        others = [i for i in range(D.shape[0]) if i != k]
        rows = np.zeros((len(others), n + 1))
        for r, i in enumerate(others):
            rows[r, : self.n_f] = D[i] - D[k]  # s + v_i - v_k <= 0
            rows[r, -1] = 1.0
        A = sp.vstack([sp.hstack([A_ub, sp.csr_matrix((A_ub.shape[0], 1))]), rows]).tocsr()
        b = np.concatenate([b_ub, np.zeros(len(others))])
        Aeq = np.hstack([A_eq, np.zeros((A_eq.shape[0], 1))])
        objective = np.zeros(n + 1)
        objective[-1] = -1.0
        _, value = self._linprog(objective, A, b, Aeq, b_eq, bounds + [(None, 1.0)])
        return -value

    def classify(self, p, method: str = "auto") -> Verdict:
        """The verdict on one draw p (see the module docstring for every term).  ``method="lp"``
        decides every draw by LPs over S*, skipping the affine-hull shortcut."""
        if method not in ("auto", "lp"):
            raise ValueError(f"method must be 'auto' or 'lp'; got {method!r}.")
        p = np.asarray(p, dtype=float)
        small = p[(p > 0) & (p <= 10 * self.tol.support)]
        if small.size:  # the rows' duals of such a class, at most p_j, may fall below the
            # support tolerance (p_1 = 2.7e-10 left S* unbounded): read them against a tenth of
            # its smallest entry instead, down to ``FINEST_SUPPORT``
            finer = 0.1 * float(small.min())
            if finer < FINEST_SUPPORT:
                raise ValueError(
                    f"p has an entry {small.min():.2g}: below {10 * FINEST_SUPPORT:g} the LP's "
                    "duals cannot be read; give 0 for it."
                )
            return ConditionalRisk(self.h, replace(self.tol, support=finer))._classify(p, method)
        return self._classify(p, method)

    def _classify(self, p: np.ndarray, method: str) -> Verdict:
        """``classify`` at this instance's tolerances."""
        k = int(np.argmax(p))
        tie = self.tol.tie
        best, face, E, duals = self.optimal_face(p)
        D, n = self.h.decision, self.n_f + self.n_t
        others = [i for i in range(D.shape[0]) if i != k]
        P = np.zeros((len(others), n))  # z -> (v_i - v_k)_{i != k}
        P[:, : self.n_f] = D[others] - D[k]
        d0 = P @ best.x
        vertex_error = not bool(np.all(d0 < -tie))
        separation = {"support": _split(duals, self.tol.support)}
        read = []  # every value read against ``tie``

        def sign(value):
            read.append(abs(value))
            return 0 if abs(value) <= tie else (1 if value > 0 else -1)

        # the affine hull of S*: E z = e; its directions N (singular values read against rank)
        if E.shape[0]:
            _, s, Vt = np.linalg.svd(E)
            separation["rank"] = _split(s, self.tol.rank)
            N = Vt[int(np.sum(s > self.tol.rank)) :].T
        else:
            N = np.eye(n)
        variation = np.abs(P @ N).max(axis=1) if N.shape[1] else np.zeros(len(others))
        fixed = method == "auto" and all(sign(v) == 0 for v in variation)
        excess = 0.0
        if fixed:  # the decision differences are the same on all of S*: read them at z0
            signs = [sign(v) for v in d0]
            if all(s < 0 for s in signs):
                category, tie_break, ambiguous = "correct", 0.0, False
            elif any(s > 0 for s in signs):
                category, tie_break, ambiguous = "wrong", 1.0, False
            else:
                category, ambiguous = "tied", False
                tie_break = 1.0 - 1.0 / (1 + sum(s == 0 for s in signs))
        else:
            c = self.cost(p)
            excess = self._max_over(face, c) - best.fun
            if not excess <= EXCESS * (1 + abs(best.fun)):
                raise RuntimeError(f"the optimal face is not optimal: excess {excess:g} at {p}")
            hi = {i: self._max_over(face, P[r]) for r, i in enumerate(others)}
            signs_hi = {i: sign(v) for i, v in hi.items()}
            if all(s < 0 for s in signs_hi.values()):
                category, tie_break, ambiguous = "correct", 0.0, False
            else:
                m_sign = sign(self._max_min_margin(face, k))
                if m_sign > 0:
                    category, tie_break, ambiguous = "mixed", 1.0, True
                elif m_sign < 0:
                    category, tie_break, ambiguous = "wrong", 1.0, False
                else:
                    category = "tied"
                    if any(s > 0 for s in signs_hi.values()):  # k beaten on part of S*
                        tie_break, ambiguous = 1.0, True
                    else:  # k is in the top set on all of S*; which classes tie it everywhere?
                        tying = [i for i, s in signs_hi.items() if s == 0]
                        lo = [-self._max_over(face, -P[others.index(i)]) for i in tying]
                        ambiguous = any(sign(v) < 0 for v in lo)
                        tie_break = 1.0 if ambiguous else 1.0 - 1.0 / (1 + len(tying))
        separation["tie"] = _split(read, tie)
        return Verdict(
            category,
            tie_break,
            ambiguous,
            vertex_error,
            float(max(excess, 0.0)),
            not fixed,
            separation,
        )


@dataclass
class ConsistencyRow:
    """Rates (fractions of ``trials`` draws) of one loss at L classes; see the module docstring."""

    formulation: str
    L: int
    trials: int
    inconsistent: float
    wrong: float
    tied: float
    mixed: float
    tie_break: float
    ambiguous: float
    vertex: float
    published: float | None = None
    by_lp: float = 0.0  # draws decided by LPs over S* (its affine hull leaves decisions free)
    face_excess: float = 0.0  # max over those draws of max_{S*} R_p - min R_p
    # tolerance -> [largest value read as zero, smallest read as non-zero], over all draws
    separation: dict = field(default_factory=dict)
    tolerances: dict = field(default_factory=lambda: asdict(Tolerances()))
    changed: dict | None = None  # tolerance move -> draws whose verdict changes (sensitivity)

    def as_dict(self):
        d = asdict(self)
        d["separation"] = {
            name: [zero, None if not np.isfinite(nonzero) else nonzero]
            for name, (zero, nonzero) in self.separation.items()
        }
        return d


def draws(L: int, trials: int, random_state=None):
    """The probability vectors of the Monte Carlo: uniform on [0, 1]^L, normalised (one
    ``rng.random(L)`` per draw, in order)."""
    rng = np.random.default_rng(random_state)
    P = rng.random((trials, L))
    return P / P.sum(axis=1, keepdims=True)


def verdicts(
    formulation, L, trials, random_state=None, tolerances=None, progress=None, method="auto"
):
    """The verdict on each draw."""
    risk = ConditionalRisk(hinges(formulation, L), tolerances)
    out = []
    for p in draws(L, trials, random_state):
        out.append(risk.classify(p, method))
        if progress is not None:
            progress.update(1)
    return out


def summarise(formulation, L, found, tolerances=None) -> ConsistencyRow:
    trials = len(found)
    share = {c: sum(v.category == c for v in found) / trials for c in CATEGORIES}
    published = PUBLISHED.get(formulation, {}).get(L)
    return ConsistencyRow(
        formulation,
        L,
        trials,
        inconsistent=1.0 - share["correct"],
        wrong=share["wrong"],
        tied=share["tied"],
        mixed=share["mixed"],
        tie_break=sum(v.tie_break for v in found) / trials,
        ambiguous=sum(v.ambiguous for v in found) / trials,
        vertex=sum(v.vertex_error for v in found) / trials,
        published=None if published is None else published / 100,
        by_lp=sum(v.by_lp for v in found) / trials,
        face_excess=max(v.face_excess for v in found),
        separation={
            name: (
                max(v.separation[name][0] for v in found if name in v.separation),
                min(v.separation[name][1] for v in found if name in v.separation),
            )
            for name in ("tie", "support", "rank")
            if any(name in v.separation for v in found)
        },
        tolerances=asdict(Tolerances() if tolerances is None else tolerances),
    )


def monte_carlo(
    formulation: str,
    L: int,
    trials: int,
    random_state=None,
    progress=None,
    tolerances: Tolerances | None = None,
    sensitivity: bool = False,
) -> ConsistencyRow:
    """Rates over ``trials`` draws of p (ISVM Algorithm 3).  With ``sensitivity``, the same
    draws are re-classified under ``Tolerances.moves()`` and ``changed`` counts, per move, the
    draws whose verdict (class, tie-break error, ambiguity) differs."""
    tol = Tolerances() if tolerances is None else tolerances
    found = verdicts(formulation, L, trials, random_state, tol, progress)
    row = summarise(formulation, L, found, tol)
    if sensitivity:
        row.changed = {}
        for name, moved in tol.moves().items():
            again = verdicts(formulation, L, trials, random_state, moved, progress)
            row.changed[name] = sum(a.key() != b.key() for a, b in zip(found, again, strict=True))
    return row
