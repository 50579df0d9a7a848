"""Property-based campaign over every estimator, the reference layer, the leave-one-out path and
the CSV reader (issue 18).

Invalid input must raise a scikit-learn-style ``ValueError`` naming the problem; valid input must
satisfy oracles that need no tolerance tuned to the data:

- predict = classes_[argmax decision_function] and every output finite;
- the same ``random_state`` gives the same fit;
- weak duality across fits of the *same* optimisation problem: row order, relabelling and
  duplicating every pattern with C halved leave the optimum unchanged, so each fit's dual value is
  at most every other fit's primal value (max_k D_k <= min_k P_k) — a wrong fit breaks it, however
  loose its own tolerance;
- on tiny problems the same weak duality against the reference layer's cvxpy optimum.

The slacks are float64's, derived rather than tuned: a fit's outputs f = sum_j coef_j k(x_j, x)
with |coef_j| <= L C are computed to N eps L C sum_j |k(x_j, x)| (a dot product's rounding bound),
and its primal value, C times N L such outputs, to (C N)^2 L eps max|K|.  On ordinary data these
are ~1e-10; they matter where the campaign draws them (x = 400, C = 100: outputs of 0.5 from
terms of 1.6e7, and a primal of 343.75 known only to 1e-5).

Profiles: ``ci`` (the default, about 1 000 inputs in a minute or two) and ``campaign``
(``HYPOTHESIS_PROFILE=campaign``, 40 times as many: the issue's >= 10 000 inputs; run by
``benchmarks/properties.sh`` with ``--hypothesis-show-statistics``).
"""

from __future__ import annotations

import faulthandler
import os
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import ConvergenceWarning

from msvm.core import datasets
from msvm.core.kernels import kernel_matrix
from msvm.core.validation import resolve_kernel
from msvm.fast import (
    CrammerSingerSVC,
    InhibitorySVC,
    LeeLinWahbaSVC,
    MKPMClassifier,
    MultiPrototypeSVC,
    OneVsAllSVC,
    SimplexSVC,
    WestonWatkinsSVC,
)
from msvm.fast.loo import leave_one_out_path
from msvm.reference import FORMULATIONS, Problem
from msvm.reference.problem import NotSolvedError
from msvm.verify.cli import main

settings.register_profile(
    "ci",
    max_examples=1,
    deadline=None,
    derandomize=True,  # the same inputs on every CI run
    suppress_health_check=list(HealthCheck),
)
settings.register_profile(
    "campaign", max_examples=40, deadline=None, suppress_health_check=list(HealthCheck)
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)
SCALE = settings.get_profile(PROFILE).max_examples  # max_examples below are per unit of SCALE


def examples(n: int):
    return settings(max_examples=n * SCALE)


@pytest.fixture(autouse=True)
def no_hang():
    """A test that runs past 20 minutes is a hang: dump every thread's stack and exit."""
    faulthandler.dump_traceback_later(1200, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# machines with a dual lower bound (objective_, dual_objective_) and their reference formulation
DUAL_MACHINES = {
    InhibitorySVC: "inhibitory",
    OneVsAllSVC: "one_vs_all",
    WestonWatkinsSVC: "weston_watkins",
    CrammerSingerSVC: "crammer_singer",
    LeeLinWahbaSVC: "lee_lin_wahba",
    SimplexSVC: "simplex_hinge",
}
ALL = [*DUAL_MACHINES, MultiPrototypeSVC, MKPMClassifier]
KERNELS = ["linear", "rbf", "poly", "precomputed"]


# -- strategies -----------------------------------------------------------------------------------
@st.composite
def training_sets(draw, max_n=20, scale_exponents=(-4, 4)):
    """(X, y): 4-20 points in 1-4 dimensions, 2-4 classes, duplicates and conflicting labels
    allowed (hard data), features scaled by 10^k."""
    n = draw(st.integers(4, max_n))
    d = draw(st.integers(1, 4))
    L = draw(st.integers(2, min(4, n)))
    scale = 10.0 ** draw(st.integers(*scale_exponents))
    entries = st.floats(-5, 5, allow_nan=False, allow_infinity=False)
    X = draw(arrays(np.float64, (n, d), elements=entries)) * scale
    y = draw(arrays(np.int64, n, elements=st.integers(0, L - 1)))
    y[:L] = np.arange(L)  # every class present
    return X, y


@st.composite
def kernel_params(draw):
    kernel = draw(st.sampled_from(KERNELS))
    gamma = draw(st.one_of(st.just("scale"), st.just("auto"), st.floats(1e-3, 1e2)))
    return dict(
        kernel=kernel,
        gamma=gamma,
        degree=draw(st.integers(1, 3)),
        coef0=draw(st.floats(0.0, 2.0)),
    )


def machine_params(draw, Estimator, C_range=(-3, 3)):
    params = draw(kernel_params())
    if Estimator is MKPMClassifier:
        params["selection"] = draw(st.sampled_from(["loo", "train", "validation", "cv"]))
        if params["kernel"] == "precomputed" and params["selection"] != "loo":
            params["selection"] = "train"
        return params
    params["C"] = 10.0 ** draw(st.floats(*C_range))
    if Estimator is MultiPrototypeSVC:
        params["n_prototypes"] = draw(st.integers(1, 2))
        params["n_assignment_steps"] = draw(st.integers(0, 2))
    if Estimator is SimplexSVC:
        params["loss"] = draw(st.sampled_from(["hinge", "squared"]))
    if Estimator is WestonWatkinsSVC:
        params["fit_intercept"] = draw(st.booleans())
    return params


def as_input(X, params):
    """X itself, or its Gram matrix under the drawn kernel when ``kernel="precomputed"``."""
    if params["kernel"] != "precomputed":
        return X
    return kernel_matrix(X, X, "rbf", 1.0 / X.shape[1])


def fit(Estimator, X, y, **params):
    """A fit with at most 1 000 epochs: the oracles (weak duality, the output bound) hold at any
    feasible point, converged or not, and generated hard data (duplicates with conflicting
    labels, kernel values ~1e10) can need 10^7 steps, as scikit-learn's SVC does on them."""
    if Estimator is not MKPMClassifier:
        params.setdefault("max_iter", 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return Estimator(random_state=0, **params).fit(X, y)


def class_scores(model, X):
    scores = model.decision_function(X)
    return np.column_stack([-scores, scores]) if scores.ndim == 1 else scores


def objectives(model):
    """(primal, dual) of a fit whose dual value is a lower bound on the optimum, else None."""
    if type(model) not in DUAL_MACHINES or getattr(model, "fit_intercept", False):
        return None
    return model.objective_, model.dual_objective_


EPS = np.finfo(np.float64).eps


def output_rounding(K, C, n_classes):
    """float64's bound on each output's error: N eps L C sum_j |k(x_j, x)| per row of K."""
    return K.shape[1] * EPS * n_classes * C * np.abs(K).sum(axis=1)


def objective_rounding(K, C, n_classes):
    """float64's bound on a primal value's error: (C N)^2 L eps max|K|."""
    return (C * K.shape[0]) ** 2 * n_classes * EPS * np.abs(K).max()


def assert_same_optimum(fits, slack):
    """Weak duality across fits of one problem: every dual value <= every primal value + slack."""
    pairs = [objectives(m) for m in fits]
    if any(p is None for p in pairs):
        return
    primal = min(p for p, _ in pairs)
    dual = max(d for _, d in pairs)
    assert dual <= primal + 1e-9 * max(1.0, abs(primal)) + slack, pairs


def gamma_scale_overflows(X) -> bool:
    """Whether scikit-learn's gamma="scale", 1 / (d var X), exceeds float64's range, with var X
    computed exactly in rationals (float64's X.var() rounds: 8e-317 for equal entries).  Where
    float64's variance underflows to 0, scikit-learn's rule gives 1, and so does ours."""
    values = [Fraction(v) for v in X.ravel()]
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    overflows = var > 0 and 1 / (X.shape[1] * var) > Fraction(sys.float_info.max)
    return overflows and X.var() > 0


# -- valid input ----------------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", ALL, ids=lambda E: E.__name__)
@examples(40)
@given(data=st.data())
def test_valid_input_fits_with_finite_consistent_outputs(Estimator, data):
    X, y = data.draw(training_sets())
    params = machine_params(data.draw, Estimator)
    K = as_input(X, params)
    if Estimator is MKPMClassifier and params["selection"] in ("cv", "validation"):
        n_test, counts = int(np.ceil(0.2 * y.size)), np.bincount(y)
        split = counts.min() < 2 or min(n_test, y.size - n_test) < counts.size
        if (counts.max() < 5) if params["selection"] == "cv" else split:
            with pytest.raises(ValueError, match="member|each part needs"):  # a clear refusal
                fit(Estimator, K, y, **params)
            return
    if params["gamma"] == "scale" and params["kernel"] in ("rbf", "poly"):
        if gamma_scale_overflows(X):  # a clear refusal, not an inf kernel
            with pytest.raises(ValueError, match="resolves to inf"):
                fit(Estimator, K, y, **params)
            return
    model = fit(Estimator, K, y, **params)
    scores = class_scores(model, K)
    assert np.all(np.isfinite(scores))
    np.testing.assert_array_equal(model.predict(K), model.classes_[np.argmax(scores, axis=1)])
    if hasattr(model, "objective_"):
        assert np.isfinite(model.objective_)
    pair = objectives(model)
    if pair is not None:  # the fit's own weak duality
        G = K if params["kernel"] == "precomputed" else gram(X, params)
        slack = objective_rounding(G, params["C"], model.classes_.size)
        assert pair[1] <= pair[0] + 1e-9 * max(1.0, abs(pair[0])) + slack
    again = fit(Estimator, K, y, **params)
    np.testing.assert_array_equal(again.predict(K), model.predict(K))  # random_state
    if hasattr(model, "objective_"):
        assert again.objective_ == model.objective_


def gram(X, params) -> np.ndarray:
    """The drawn kernel's Gram matrix, exactly symmetric."""
    kernel = "linear" if params["kernel"] == "precomputed" else params["kernel"]
    options = (params["gamma"], params["degree"], params["coef0"])
    K = kernel_matrix(X, X, kernel, resolve_kernel(X, kernel, *options), *options[1:])
    return (K + K.T) / 2


def assert_close_outputs(first, second, kdiag, scores_first, scores_second, rounding):
    """Outputs of two near-optimal fits of one problem.  P is 1-strongly convex in the weights
    (1/2 ||W||^2 plus a convex loss), so 1/2 ||W_k - W*||^2 <= P_k - D_k =: g_k, and the outputs at
    x, |f_1(x) - f_2(x)| <= ||W_1 - W_2|| ||phi(x)||, differ by at most
    (sqrt(2 g_1) + sqrt(2 g_2)) sqrt(k(x, x)): a bound from the fits' own certificates, plus each
    row's float64 ``rounding`` (:func:`output_rounding`, for both fits)."""
    gaps = [max(m.objective_ - m.dual_objective_, 0.0) for m in (first, second)]
    radius = sum(np.sqrt(2.0 * g) for g in gaps)
    bound = radius * np.sqrt(np.maximum(kdiag, 0.0))[:, None]
    slack = 1e-7 * (1.0 + np.abs(scores_first).max()) + rounding[:, None]
    assert np.all(np.abs(scores_first - scores_second) <= bound + slack)


@pytest.mark.parametrize("Estimator", list(DUAL_MACHINES), ids=lambda E: E.__name__)
@examples(20)
@given(data=st.data())
def test_row_order_relabelling_and_duplication_keep_the_optimum(Estimator, data):
    """On the drawn kernel's Gram matrix (precomputed, so that a permuted or duplicated problem
    is exactly that problem: an RBF kernel between two copies of a point is 1 only to
    eps gamma |x|^2, 4e-9 at gamma |x|^2 = 3e7, and the optimum moves by as much)."""
    X, y = data.draw(training_sets(max_n=14))
    params = machine_params(data.draw, Estimator, C_range=(-2, 2))
    K = gram(X, params)
    C = params["C"]
    options = dict(kernel="precomputed", C=C, tol=1e-4)
    options.update({"loss": "hinge"} if Estimator is SimplexSVC else {})
    order = np.array(data.draw(st.permutations(range(y.size))))
    names = np.array(["c", "a", "d", "b"])  # relabelled: the classes sort in another order
    base = fit(Estimator, K, y, **options)
    shuffled = fit(Estimator, K[np.ix_(order, order)], y[order], **options)
    relabelled = fit(Estimator, K, names[y], **options)
    doubled = fit(Estimator, np.block([[K, K], [K, K]]), np.r_[y, y], **{**options, "C": C / 2})
    L = base.classes_.size
    # the doubled fit: 2N points at C/2, rows of |K| summing to twice as much
    rounding = 4 * output_rounding(K, C, L)
    assert_same_optimum([base, shuffled, relabelled, doubled], 2 * objective_rounding(K, C, L))
    scores, kdiag = class_scores(base, K), np.diag(K)
    columns = np.searchsorted(relabelled.classes_, names[:L])
    close = dict(kdiag=kdiag, scores_first=scores, rounding=rounding)
    assert_close_outputs(base, shuffled, scores_second=class_scores(shuffled, K[:, order]), **close)
    relabelled_scores = class_scores(relabelled, K)[:, columns]
    assert_close_outputs(base, relabelled, scores_second=relabelled_scores, **close)
    doubled_scores = class_scores(doubled, np.hstack([K, K]))
    assert_close_outputs(base, doubled, scores_second=doubled_scores, **close)


@pytest.mark.parametrize("name", sorted(set(DUAL_MACHINES.values())))
@examples(4)
@given(data=st.data())
def test_fits_agree_with_the_reference_optimum_on_tiny_problems(name, data):
    Estimator = next(E for E, n in DUAL_MACHINES.items() if n == name)
    X, y = data.draw(training_sets(max_n=10, scale_exponents=(-2, 2)))
    params = data.draw(kernel_params())
    params["kernel"] = "linear" if params["kernel"] == "precomputed" else params["kernel"]
    C = 10.0 ** data.draw(st.floats(-2, 2))
    model = fit(Estimator, X, y, C=C, tol=1e-5, **params)
    problem = Problem(X, y, C=C, **params)
    try:
        primal = FORMULATIONS[name].primal(problem).objective
        dual = FORMULATIONS[name].dual(problem).objective
    except NotSolvedError:  # the reference layer's honest refusal (an inaccurate cone solve)
        reject()
    # the reference's own accuracy is its primal-dual gap (badly scaled poly kernels: ~1e-5)
    slack = abs(primal - dual) + 1e-8 * max(1.0, abs(primal))
    slack += objective_rounding(gram(X, params), C, model.classes_.size)
    assert model.dual_objective_ <= primal + slack
    assert dual <= model.objective_ + slack


@examples(10)
@given(data=st.data())
def test_leave_one_out_predicts_what_a_refit_predicts(data):
    X, y = data.draw(training_sets(max_n=10, scale_exponents=(-1, 1)))
    C = 10.0 ** data.draw(st.floats(-1, 1))
    Estimator = data.draw(st.sampled_from([InhibitorySVC, OneVsAllSVC, CrammerSingerSVC]))
    estimator = Estimator(kernel="rbf", gamma=0.5, tol=1e-8, random_state=0)
    path = leave_one_out_path(estimator, X, y, [C])
    i = data.draw(st.integers(0, y.size - 1))
    rest = np.delete(np.arange(y.size), i)
    if np.unique(y[rest]).size < 2:
        return
    refit = fit(Estimator, X[rest], y[rest], C=C, kernel="rbf", gamma=0.5, tol=1e-8)
    scores = class_scores(refit, X[i : i + 1])[0]
    top = np.sort(scores)[-2:]
    if top[1] - top[0] > 1e-5:  # a clear winner: the fold must find it too
        assert path.predictions[0, i] == refit.predict(X[i : i + 1])[0]


# -- invalid input --------------------------------------------------------------------------------
BAD_VALUES = st.sampled_from([np.nan, np.inf, -np.inf])


@pytest.mark.parametrize("Estimator", ALL, ids=lambda E: E.__name__)
@examples(20)
@given(data=st.data())
def test_invalid_input_is_a_value_error_naming_the_problem(Estimator, data):
    X, y = data.draw(training_sets())
    params = machine_params(data.draw, Estimator)
    params["kernel"] = "rbf" if params["kernel"] == "precomputed" else params["kernel"]
    defect = data.draw(
        st.sampled_from(
            ["nan", "one class", "lengths", "C", "kernel", "coef0", "gram shape", "gram asym"]
        )
    )
    if defect == "nan":
        X[data.draw(st.integers(0, X.shape[0] - 1)), 0] = data.draw(BAD_VALUES)
        message = "NaN|infinity"
    elif defect == "one class":
        y[:] = y[0]
        message = "number of classes"
    elif defect == "lengths":
        y = y[:-1]
        message = "inconsistent numbers of samples"
    elif defect == "C":
        if Estimator is MKPMClassifier:
            return
        params["C"] = data.draw(st.sampled_from([0.0, -1.0, np.nan, np.inf]))
        message = "'C' parameter|C must be"
    elif defect == "kernel":
        params["kernel"] = data.draw(st.sampled_from(["sigmoid", "RBF", "", "gaussian"]))
        message = "'kernel' parameter"
    elif defect == "coef0":
        params["coef0"] = data.draw(BAD_VALUES)
        message = "coef0"
    else:
        params["kernel"] = "precomputed"
        if Estimator is MKPMClassifier:
            params["selection"] = "train"
        K = X @ X.T
        if defect == "gram shape":
            X = K[:, :-1]
            message = "square Gram matrix"
        else:
            K[0, -1] += 1.0 + abs(K[0, -1])
            X = K
            message = "must be symmetric"
    with pytest.raises(ValueError, match=message):
        fit(Estimator, X, y, **params)


@pytest.mark.parametrize("Estimator", ALL, ids=lambda E: E.__name__)
@examples(10)
@given(data=st.data())
def test_extreme_but_finite_values_fit_or_refuse_never_nan(Estimator, data):
    """Features up to 1e300, gamma up to 1e300, C up to 1e12: a finite fit or a ValueError, and
    no RuntimeWarning from numpy's arithmetic on the way."""
    X, y = data.draw(training_sets(scale_exponents=(-300, 300)))
    params = machine_params(data.draw, Estimator, C_range=(-12, 12))
    if data.draw(st.booleans()):
        params["gamma"] = 10.0 ** data.draw(st.floats(-300, 300))
    params["kernel"] = "rbf" if params["kernel"] == "precomputed" else params["kernel"]
    if Estimator is MKPMClassifier and params["selection"] in ("cv", "validation"):
        params["selection"] = "train"  # splits of tiny classes: the valid-input test's subject
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warnings stay inside
        try:
            model = fit(Estimator, X, y, **params)
        except ValueError as error:
            message = str(error)
            assert "overflow" in message or "too large" in message or "resolves" in message
            return
        if hasattr(model, "objective_"):
            assert np.isfinite(model.objective_)
        try:
            scores = class_scores(model, X)
        except ValueError as error:
            assert "overflowed" in str(error)
            return
    assert np.all(np.isfinite(scores))


@examples(20)
@given(data=st.data())
def test_the_reference_problem_refuses_what_the_estimators_refuse(data):
    X, y = data.draw(training_sets())
    defect = data.draw(st.sampled_from(["nan", "one class", "C", "kernel", "coef0", "huge"]))
    options = dict(C=1.0, kernel="rbf")
    if defect == "nan":
        X[0, 0] = np.nan
    elif defect == "one class":
        y[:] = 0
    elif defect == "C":
        options["C"] = data.draw(st.sampled_from([0.0, -1.0, np.nan, np.inf]))
    elif defect == "kernel":
        options["kernel"] = "sigmoid"
    elif defect == "coef0":
        options["coef0"] = np.nan
    else:
        X[0, 0] = 1e300
    with pytest.raises(ValueError):
        Problem(X, y, **options)


# -- the CSV reader -------------------------------------------------------------------------------
CELLS = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.integers(-100, 100).map(str),
    st.sampled_from(["", "a", "nan", "1e400", " 2 ", '"3"', "x y"]),
)


@examples(50)
@given(
    rows=st.lists(st.lists(CELLS, min_size=1, max_size=4), min_size=0, max_size=8),
    delimiter=st.sampled_from([",", ";", "\t"]),
)
def test_the_csv_reader_returns_a_table_or_a_value_error(tmp_path_factory, rows, delimiter):
    path = tmp_path_factory.mktemp("csv") / "data.csv"
    width = max((len(r) for r in rows), default=2)
    header = delimiter.join(f"c{k}" for k in range(width))
    path.write_text("\n".join([header] + [delimiter.join(r) for r in rows]) + "\n")
    try:
        X, y = datasets.load_csv(str(path))
    except ValueError as error:
        assert str(error)
        return
    assert X.shape == (y.size, width - 1)
    assert X.dtype == np.float64


@examples(10)
@given(data=st.data())
def test_leave_one_out_refuses_what_fit_refuses(data):
    X, y = data.draw(training_sets(max_n=10))
    defect = data.draw(st.sampled_from(["nan", "one class", "lengths", "Cs", "bias"]))
    Cs, estimator = [1.0], InhibitorySVC()
    message = {
        "nan": "NaN|infinity",
        "one class": "number of classes",
        "lengths": "inconsistent numbers of samples",
        "Cs": "Cs must be",
        "bias": "fit_intercept",
    }[defect]
    if defect == "nan":
        X[0, 0] = np.nan
    elif defect == "one class":
        y[:] = 1
    elif defect == "lengths":
        y = y[1:]
    elif defect == "Cs":
        Cs = data.draw(st.sampled_from([[], [0.0], [-1.0], [np.nan], [1.0, np.inf]]))
    else:
        estimator = WestonWatkinsSVC(fit_intercept=True)
    with pytest.raises(ValueError, match=message):
        leave_one_out_path(estimator, X, y, Cs)


# -- the command line -----------------------------------------------------------------------------
def _number(text: str) -> float:
    """The option's value as argparse's float reads it (NaN for what it refuses)."""
    try:
        return float(text)
    except ValueError:
        return np.nan


OPTION_VALUES = st.one_of(
    st.sampled_from(["0", "-1", "nan", "inf", "1e400", "x", "", "2", "0.5", "3"]),
    st.floats(-10, 10, allow_nan=False).map(repr),
)


@examples(8)
@given(
    C=OPTION_VALUES,
    n=OPTION_VALUES,
    kernel=st.sampled_from(["linear", "rbf", "poly", "sigmoid"]),
    dataset=st.sampled_from(["good", "irs", "missing.csv", "onecls"]),
)
def test_the_command_line_runs_or_exits_2_with_a_message(
    tmp_path_factory, capsys, C, n, kernel, dataset
):
    folder = tmp_path_factory.mktemp("cli")
    X, y = datasets.load("iris", n_samples=12)
    labels = {"good": y, "onecls": np.zeros_like(y)}
    if dataset in labels:
        rows = zip(X[:, :2].tolist(), labels[dataset], strict=True)
        lines = ["a;b;label"] + [f"{a!r};{b!r};{c}" for (a, b), c in rows]
        (folder / f"{dataset}.csv").write_text("\n".join(lines) + "\n")
        dataset = str(folder / f"{dataset}.csv")
    argv = ["verify", "--quick", "--dataset", dataset, "--formulations", "one_vs_all"]
    argv += ["--C", C, "--n-samples", n, "--kernel", kernel]
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse refused an option
        status = exit_.code
    err = capsys.readouterr().err
    assert status in (0, 2)
    if dataset.endswith("good.csv") and kernel != "sigmoid" and 0 < _number(C) < np.inf:
        if n.isdigit() and int(n) >= 3:
            assert status == 0, err  # every option valid: the check runs and passes
        if n.isdigit() and 0 < int(n) < 3:  # a balanced subset cannot hold iris' three classes
            assert status == 2 and "cannot hold all 3 classes" in err  # (C's refusal comes first)
    if status == 2:
        assert "error:" in err and "Traceback" not in err


# -- the class-balanced subset of ``msvm verify --n-samples`` ------------------------------------
@examples(200)
@given(
    sizes=st.lists(st.integers(1, 40), min_size=2, max_size=6),
    wanted=st.integers(1, 260),
    seed=st.integers(0, 2**16),
)
def test_a_balanced_subset_takes_exactly_n_rows_as_evenly_as_the_classes_allow(sizes, wanted, seed):
    """n rows (every row when n >= N), none twice, no class beyond its size, the classes not
    taken whole within one row of each other and any taken whole at most one row above them (the
    water-filling of ``balanced_counts``); the same rows for the same seed; fewer rows than
    classes is a ValueError."""
    y = np.repeat(np.arange(len(sizes)), sizes)
    X = np.arange(y.size, dtype=float)[:, None]
    if wanted < len(sizes):
        with pytest.raises(ValueError, match="cannot hold all"):
            datasets.balanced_subset(X, y, wanted, seed)
        return
    X_sub, y_sub = datasets.balanced_subset(X, y, wanted, seed)
    assert y_sub.size == min(wanted, y.size) and np.unique(X_sub).size == y_sub.size
    counts, sizes = np.bincount(y_sub, minlength=len(sizes)), np.array(sizes)
    assert np.all(counts <= sizes) and np.all(counts >= 1)
    short = counts < sizes
    if short.any():
        assert counts[short].max() - counts[short].min() <= 1
        assert np.all(counts[~short] <= counts[short].min() + 1)
    again = datasets.balanced_subset(X, y, wanted, seed)[0]
    np.testing.assert_array_equal(again, X_sub)
