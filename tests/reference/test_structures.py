"""The printed matrices and rules of each formulation, solver options and input errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from msvm.core import datasets
from msvm.reference import (
    FORMULATIONS,
    NotSolvedError,
    Problem,
    inhibitory,
    lecture,
    max_svm,
    mprot_static,
    simplex_hinge,
    simplex_square,
    sum_svm,
    weston_watkins,
)
from msvm.reference.pairwise import negatives


@pytest.fixture(scope="module")
def small():
    X, y = datasets.load("wine", n_samples=45)
    return Problem(X, y, C=1.0, kernel="rbf")


def test_inhibitory_kernel_G_is_the_dual_quadratic(small):
    """ISVM (6.3): (alpha o y)^T G (alpha o y) = ||w||^2 for the dual's w (4.10)."""
    for mu in (None, 0.0, 0.25):
        sol = inhibitory.dual(small, mu=mu)
        v = (sol.dual_coef * small.Y).ravel()  # lexicographic k = i L + j
        G = inhibitory.kernel_G(small.K, small.n_classes, mu)
        assert v @ G @ v == pytest.approx(sol.norm_sq, rel=1e-9)


def test_inhibitory_dual_multipliers_match_primal_constraint_multipliers(small):
    primal, dual = inhibitory.primal(small), inhibitory.dual(small)
    np.testing.assert_allclose(primal.dual_coef, dual.dual_coef, atol=1e-5 * small.C)


def test_weston_watkins_printed_kernel_first_line_is_the_quadratic(small):
    sol = weston_watkins.dual(small)
    rows, cols = np.nonzero(negatives(small.y_index, small.n_classes))
    v = sol.dual_coef[rows, cols]
    assert v @ weston_watkins.printed_kernel(small) @ v == pytest.approx(sol.norm_sq, rel=1e-9)


def test_simplex_hinge_Q_is_the_dual_quadratic(small):
    sol = simplex_hinge.dual(small)
    a = sol.dual_coef
    assert a @ simplex_hinge.gram_Q(small) @ a == pytest.approx(sol.norm_sq, rel=1e-9)


def test_simplex_square_closed_form_equals_the_optimum(small):
    closed = simplex_square.closed_form(small)
    primal = simplex_square.primal(small)
    assert closed.objective == pytest.approx(primal.objective, rel=1e-7)
    np.testing.assert_allclose(closed.training_outputs(), primal.training_outputs(), atol=1e-5)


def test_lecture_block_matrices(small):
    K = small.n_classes
    X = lecture.stacked_features(small.R, K)
    np.testing.assert_allclose(
        (X @ X.T).toarray(), lecture.kronecker_kernel(small.K, K), atol=1e-10
    )
    rng = np.random.default_rng(0)
    u = rng.standard_normal(K)
    for y in range(K):
        others = np.delete(u, y)
        # max(c - M_i u) = max(0, max_{j != y} 1 - u_y + u_j); D_i u = u_y - u_j
        value = np.max(max_svm.offsets(K) - max_svm.block_M(y, K) @ u)
        assert value == pytest.approx(max(0.0, np.max(1 - u[y] + others)))
        np.testing.assert_allclose(sum_svm.block_D(y, K) @ u, u[y] - others)


def test_mprot_printed_dual_is_twice_the_lagrangian_value(small):
    """MProt (11) drops constants: its printed optimum is twice the primal optimum."""
    sol = mprot_static.dual(small, n_prototypes=2)
    printed = sol.dual_coef.sum() - sol.norm_sq
    assert printed == pytest.approx(2 * sol.objective, rel=1e-7)
    assert mprot_static.primal(small, n_prototypes=2).objective == pytest.approx(
        sol.objective, rel=1e-6
    )


def test_mprot_assignment_changes_the_problem(small):
    q = 2
    flipped = 1 - mprot_static.default_assignment(small, q)
    a = mprot_static.primal(small, n_prototypes=q)
    b = mprot_static.primal(small, n_prototypes=q, assignment=flipped)
    c = mprot_static.dual(small, n_prototypes=q, assignment=flipped)
    assert b.objective == pytest.approx(c.objective, rel=1e-6)
    assert np.abs(a.training_outputs() - b.training_outputs()).max() > 1e-3
    with pytest.raises(ValueError, match="assignment"):
        mprot_static.primal(small, n_prototypes=q, assignment=np.full(small.n_samples, 2))


def test_logistic_matches_scikit_learn():
    """Canonical 1/2||W||^2 + C sum(loss) is scikit-learn's multinomial objective."""
    X, y = datasets.load("iris")
    p = Problem(X, y, C=0.5)
    sol = FORMULATIONS["logistic"].dual(p)
    clf = LogisticRegression(C=0.5, tol=1e-12, max_iter=100_000).fit(X, y)
    ours = sol.decision_function(X)
    theirs = clf.decision_function(X)
    np.testing.assert_allclose(
        ours - ours.mean(axis=1, keepdims=True),
        theirs - theirs.mean(axis=1, keepdims=True),
        atol=1e-4,
    )


def test_osqp_gives_the_same_optimum(small):
    for name in ("crammer_singer", "simplex_hinge"):
        a = FORMULATIONS[name].dual(small, solver="OSQP")
        b = FORMULATIONS[name].dual(small)
        assert a.objective == pytest.approx(b.objective, rel=1e-5)


def test_osqp_refuses_logistic(small):
    with pytest.raises(ValueError, match="exponential-cone"):
        FORMULATIONS["logistic"].primal(small, solver="OSQP")


def test_unknown_solver_and_unfinished_solve(small):
    from msvm.reference import problem as problem_module

    with pytest.raises(ValueError, match="solver"):
        FORMULATIONS["inhibitory"].primal(small, solver="NOPE")
    with pytest.raises(NotSolvedError, match="status"):
        import cvxpy as cp

        x = cp.Variable(2)
        problem_module.solve(cp.Minimize(cp.sum(x)), [x >= 0, x <= -1])


def test_precomputed_kernel_gives_the_same_solution():
    X, y = datasets.load("wine", n_samples=45)
    rbf = Problem(X, y, kernel="rbf", gamma=0.05)
    pre = Problem(rbf.K, y, kernel="precomputed")
    a = FORMULATIONS["crammer_singer"].dual(rbf)
    b = FORMULATIONS["crammer_singer"].dual(pre)
    assert a.objective == pytest.approx(b.objective, rel=1e-8)
    Xt = X[:7] + 0.1
    np.testing.assert_allclose(
        a.decision_function(Xt), b.decision_function(rbf.kernel_to(Xt)), atol=1e-7
    )
    with pytest.raises(ValueError, match="columns"):
        b.decision_function(rbf.kernel_to(Xt)[:, :-1])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"C": 0.0}, "C must be"),
        ({"C": -1.0}, "C must be"),
        ({"C": np.inf}, "C must be"),
        ({"kernel": "sigmoid"}, "Unknown kernel"),
        ({"kernel": "rbf", "gamma": -1.0}, "gamma"),
        ({"kernel": "poly", "degree": 0}, "degree"),
    ],
)
def test_bad_parameters_raise_value_errors(kwargs, match):
    X, y = datasets.load("iris", n_samples=30)
    with pytest.raises(ValueError, match=match):
        Problem(X, y, **kwargs)


def test_bad_data_raise_value_errors():
    X, y = datasets.load("iris", n_samples=30)
    Xnan = X.copy()
    Xnan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Problem(Xnan, y)
    Xinf = X.copy()
    Xinf[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        Problem(Xinf, y)
    with pytest.raises(ValueError, match="greater than one"):
        Problem(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="inconsistent"):
        Problem(X, y[:-1])
    with pytest.raises(ValueError, match="square"):
        Problem(X @ X[:10].T, y, kernel="precomputed")
    p = Problem(X, y)
    with pytest.raises(ValueError, match="features"):
        FORMULATIONS["one_vs_all"].dual(p).decision_function(X[:, :2])


def test_any_label_type():
    X, y = datasets.load("iris", n_samples=30)
    labels = np.array(["setosa", "versicolor", "virginica"])
    names = labels[y]
    by_name = FORMULATIONS["crammer_singer"].dual(Problem(X, names))
    by_index = FORMULATIONS["crammer_singer"].dual(Problem(X, y))
    np.testing.assert_array_equal(by_name.predict(X), labels[by_index.predict(X)])


@pytest.mark.parametrize(
    "formulation,options,match",
    [
        ("inhibitory", {"mu": np.nan}, "mu must be a finite number"),
        ("inhibitory", {"mu": np.inf}, "mu must be a finite number"),
        ("weston_watkins", {"margin": 0.0}, "margin must be a finite number > 0"),
        ("weston_watkins", {"margin": -1.0}, "margin must be a finite number > 0"),
        ("weston_watkins", {"margin": np.nan}, "margin must be a finite number > 0"),
        ("mprot_static", {"n_prototypes": 2.5}, "n_prototypes must be an integer"),
    ],
)
def test_bad_formulation_options_name_themselves(formulation, options, match):
    """Options a formulation cannot take raise a ValueError naming them, in both forms: not
    cvxpy's "Problem data contains NaN", an uncertified trivial optimum (margin <= 0) or a
    silent truncation (2.5 prototypes solved as 2)."""
    X, y = datasets.load("iris", n_samples=30)
    p = Problem(X, y, kernel="linear")
    for form in ("primal", "dual"):
        with pytest.raises(ValueError, match=match):
            getattr(FORMULATIONS[formulation], form)(p, **options)


def test_the_reference_command_reports_bad_options_with_status_2(capsys):
    from msvm.reference.__main__ import main

    assert main(["--dataset", "iris", "--C", "0"]) == 2
    assert "C must be a finite number > 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["--dataset", "iris", "--solver", "FOO"])
    assert exit_.value.code == 2
    assert main(["--dataset", "iris", "--formulations", "crammer_singer"]) == 0
