"""The bias of ``fit_intercept``: found by an augmented Lagrangian, centred where it is not unique.

Every machine's outputs with a bias are F = K B + 1 b^T.  At a fixed b the dual is the bias-free
dual with its linear term moved by S_i^T b (``patterns.biased_terms``); the bias is the multiplier
of the dual's balance condition sum_i B_i = 0 (``msvm.reference``'s biased formulations derive it
for every machine).  ``augmented_lagrangian`` finds it by rounds of engine runs.

A bias is unique only where the dual variables strictly inside their bounds pin it: with none
(small C, for example) every bias of an interval -- a polytope for L outputs -- is optimal, and an
augmented Lagrangian stops anywhere in it.  libsvm then takes the middle of the interval.
``centre_bias`` does the same for every machine: with the dual variables fixed, the optimal
biases are those at which they still meet their KKT conditions, linear in b; the bias is moved,
along the directions no equality pins, to the point that maximises the smallest slack of those
conditions (a linear programme; for a binary SVM the middle of libsvm's interval).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.optimize

from msvm.fast.convergence import convergence_warning
from msvm.fast.patterns import CS, WW, dual_vectors, output_shift, pattern_transpose

# Largest number of augmented-Lagrangian rounds (each one engine run).
BIAS_ROUNDS = 200
# A multiplier step within this angle's cosine of the previous one continues its travel; from the
# TRAVEL-th such step in a row, at twice the length each time (``augmented_lagrangian``).
ALIGNED, TRAVEL = 0.9, 5
# At most 2^MAX_DOUBLINGS times a step (a balance that never settles must not run the bias off).
MAX_DOUBLINGS = 10
# A dual variable within this fraction of its bound counts as at the bound (centre_bias).
AT_BOUND = 1e-6


def augmented_lagrangian(run, kind, alpha, y_index, c, rho, b, tol, partial=False, messages=None):
    """The bias b of the outputs F = K B + 1 b^T: ``run(b)`` solves the dual at bias b (its linear
    term moved by ``patterns.biased_terms``, rho 11^T added to the kernel) and returns None, or
    why the fit may take no further run (its max_iter or step budgets spent: they are the fit's,
    not each round's); b is updated by the multiplier step rho sum_i B_i until that step is at
    most tol (a ConvergenceWarning after BIAS_ROUNDS runs or when the fit's limits end them, or
    its text appended to ``messages``: ``convergence.convergence_warning``).
    Without a bias (rho = 0) one run; ``partial``: one run and one update (MProt's annealing
    steps).  Returns the bias.

    Where the optimal bias lies far along a piece on which the dual's balance sum_i B_i does not
    change (small C: every variable at its bound but a pattern's worth of imbalance), each step
    is the same, rho C a pattern, and the travel took more than BIAS_ROUNDS rounds (vehicle,
    C = 0.01: 0.0185 a round, 16 % above the optimum after 200).  From the TRAVEL-th step in a
    row along the previous one's direction, the steps are therefore taken 2, 4, 8, ... times;
    the first that turns back resets the factor (at most 2^MAX_DOUBLINGS), and the test is on
    the plain step, so the bias it returns is the last run's and one plain step, also when the
    rounds run out."""
    streak, previous = 0, None
    for rounds in range(1, (BIAS_ROUNDS if rho > 0 and not partial else 1) + 1):
        spent = run(b)
        if rho == 0:
            return b
        # The run solved the problem whose bias is b + rho sum_i B_i (the multiplier update of
        # the augmented Lagrangian); stop when that update is below tol.
        _, B = dual_vectors(kind, alpha, y_index, c)
        step = rho * B.sum(axis=0)
        last = b + step  # the run's bias and one plain step (also when the rounds run out)
        if np.abs(step).max() <= tol or partial:
            return last
        if spent:
            convergence_warning(
                f"The bias did not settle: {spent} after {rounds} augmented-Lagrangian "
                f"round{'s' if rounds > 1 else ''} (last change {np.abs(step).max():.2e} > "
                f"tol={tol:g}).",
                messages,
            )
            return last
        aligned = previous is not None and _cosine(step, previous) > ALIGNED
        streak = streak + 1 if aligned else 0
        factor = 2.0 ** min(max(streak - TRAVEL + 1, 0), MAX_DOUBLINGS)
        b, previous = b + factor * step, step
    convergence_warning(
        f"The bias did not settle in {BIAS_ROUNDS} augmented-Lagrangian rounds "
        f"(last change {np.abs(step).max():.2e} > tol={tol:g}).",
        messages,
    )
    return last


def _cosine(u, v) -> float:
    """The cosine of the angle between two nonzero vectors, each scaled to largest entry 1 first
    (their products overflow beyond 1e154)."""
    u, v = u / np.abs(u).max(), v / np.abs(v).max()
    return float(u @ v) / float(np.linalg.norm(u) * np.linalg.norm(v))


def canonical_bias(kind, b):
    """The bias reported: for the machines whose constraints compare outputs (Weston-Watkins,
    Crammer-Singer, MProt: S_i^T 1 = 0) it is unique up to a constant, and the representative
    of mean zero is the reference layer's too; the others' as found."""
    return b - b.mean() if kind in (WW, CS) else b


def kkt_rows(kind, alpha, hi, lin, free, F, y_index):
    """The dual's KKT conditions at fixed alpha as functions of the bias, r(b + d) = r + D d.

    With the gradient g_ij = lin_ij - (S_i^T (F_i + b))_j (F = K B + 1 b^T, outputs with the
    bias): a variable at 0 needs -g >= 0, one at its bound g >= 0, one inside g = 0.  For
    Crammer-Singer (a budget per pattern) a pattern whose budget is not spent is as the box; one
    whose budget is spent needs, with j* its largest variable, g_ij* >= 0, g_ij - g_ij* = 0 for
    its other positive variables and g_ij* - g_ij >= 0 for its zeros.  Returns (r, D) of the
    inequalities (want >= 0) and D of the equalities.
    """
    N, L = alpha.shape
    g = lin - pattern_transpose(kind, F, y_index)
    unit = np.eye(L)
    dg = np.stack(  # dg[:, :, k] = d g / d b_k = -S_i^T e_k
        [-pattern_transpose(kind, np.broadcast_to(unit[k], (N, L)), y_index) for k in range(L)],
        axis=2,
    )
    variable = (free > 0) & (hi > 0)
    zero = variable & (alpha <= AT_BOUND * hi)
    if kind == CS:  # hi is the budget of every variable of the pattern
        budget = hi.max(axis=1)
        spent = alpha.sum(axis=1) >= (1.0 - AT_BOUND) * budget
        top = np.argmax(alpha, axis=1)
        rows = np.arange(N)
        g_top, dg_top = g[rows, top][:, None], dg[rows, top][:, None, :]
        g = np.where(spent[:, None], g - g_top, g)  # spent: g_ij - g_ij* in place of g_ij
        dg = np.where(spent[:, None, None], dg - dg_top, dg)
        inside = variable & ~zero
        inside[rows, top] &= ~spent  # j* of a spent pattern: g_ij* >= 0 instead
        r = [-g[zero], g_top[spent, 0]]
        D = [-dg[zero], dg_top[spent, 0]]
    else:
        upper = variable & (alpha >= (1.0 - AT_BOUND) * hi)
        inside = variable & ~zero & ~upper
        r, D = [-g[zero], g[upper]], [-dg[zero], dg[upper]]
    return np.concatenate(r), np.concatenate(D), dg[inside]


def centre_bias(kind, c, alpha, hi, lin, free, F, y_index):
    """The bias change d that centres b in its optimal set (module docstring).

    d moves b only along the directions V that no equality pins and some condition sees (keeping
    the bias's sum zero where the outputs sum to zero).  Along them, the smallest slack of the
    conditions that move is maximised; the directions that the slowest conditions then fix are
    pinned and the rest maximised again (lexicographic max-min, at most L linear programmes), so
    that separate outputs, as one-vs-all's classes, are each centred as libsvm centres a binary
    SVM's bias.  Zero when b is unique, and along directions no condition bounds on both sides
    (an output no pattern selects) or where a programme fails.
    """
    L = alpha.shape[1]
    r, D, equalities = kkt_rows(kind, alpha, hi, lin, free, F, y_index)
    d = np.zeros(L)
    if r.size == 0:
        return d
    # conditions with the same direction: only the least slack can bind (2L directions for
    # one-vs-all, L^2 for Weston-Watkins): the programmes have a few dozen rows, not N L
    key = D @ np.sqrt(np.arange(2.0, L + 2.0))  # equal rows, equal keys (a fast np.unique)
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    least = np.full(first.size, np.inf)
    np.minimum.at(least, group.ravel(), r)
    D, r = D[first], least
    seen = scipy.linalg.orth(D.T)  # directions some inequality sees
    pinned = [equalities, (np.eye(L) - seen @ seen.T)]
    if output_shift(kind, c, L) * L == 1.0:  # M = I - 11^T / L: the bias sums to zero
        pinned.append(np.ones((1, L)))
    V = scipy.linalg.null_space(np.vstack(pinned))
    scale = 1.0 + np.abs(r).max()
    while V.shape[1]:
        DV = D @ V
        moving = np.abs(DV).max(axis=1) > 1e-12
        if not moving.any():
            break
        slack, DV = r[moving] + D[moving] @ d, DV[moving]
        # maximise t subject to slack + DV u >= t:  minimise -t,  -DV u + t <= slack
        result = scipy.optimize.linprog(
            np.r_[np.zeros(V.shape[1]), -1.0],
            A_ub=np.column_stack([-DV, np.ones(slack.size)]),
            b_ub=slack,
            bounds=[(-1e6 * scale, 1e6 * scale)] * V.shape[1] + [(None, scale)],
            method="highs",
        )
        if result.status != 0 or result.x[-1] >= scale:  # failed, or unbounded
            break
        u, t = result.x[:-1], result.x[-1]
        if np.abs(u).max() >= 1e5 * scale:
            break
        d = d + V @ u
        active = slack + DV @ u <= t + 1e-9 * scale  # the slowest conditions: fix what they see
        V = V @ scipy.linalg.null_space(DV[active]) if active.any() else V[:, :0]
    return d
