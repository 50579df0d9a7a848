"""Input validation shared by both layers: clear scikit-learn style ``ValueError``s.

Every entry point goes through these checks — the reference layer's ``Problem``, every fast
estimator's ``fit`` (``msvm.fast.base.validate_training_data``), the leave-one-out path and the
command line — so a bad input gets the same message wherever it enters:

- ``check_labels``: classification targets, one dimension (a column vector is raveled with
  scikit-learn's ``DataConversionWarning``), at least two classes;
- ``check_gram``: a precomputed training kernel is square, finite and symmetric;
- ``check_kernel_psd``: a kernel that is not positive semi-definite by construction (a
  precomputed one, a poly kernel with coef0 < 0) has no significantly negative eigenvalue: the
  formulations are convex only for a positive semi-definite kernel;
- ``resolve_kernel``: the kernel parameters are valid and the kernel's values are representable
  in float64 on the data (a row whose squared norm overflows, or gamma = 1e300, would otherwise
  turn into NaN or inf silently);
- ``check_finite``: a result computed from valid input is finite (values near float64's range can
  still overflow inside a fit: say so rather than return NaN).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.utils import check_array, check_X_y, column_or_1d
from sklearn.utils.multiclass import check_classification_targets

from msvm.core.kernels import kernel_matrix, resolve_gamma, squared_norms

KERNEL_NAMES = ("linear", "rbf", "poly", "precomputed")

# A precomputed kernel is symmetric when |K - K^T| <= SYMMETRY_RTOL |K| + SYMMETRY_ATOL max|K|.
SYMMETRY_RTOL, SYMMETRY_ATOL = 1e-10, 1e-12


def check_C(C) -> float:
    """Return ``C`` as a float, or raise ``ValueError`` unless it is a finite number > 0."""
    if isinstance(C, bool) or not isinstance(C, numbers.Real):
        raise ValueError(f"C must be a positive real number, got {C!r}.")
    C = float(C)
    if not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be a finite number > 0, got {C!r}.")
    return C


def check_kernel_params(kernel, gamma, degree, coef0) -> None:
    """Check the kernel name and its parameters (values as in scikit-learn's ``SVC``)."""
    if not isinstance(kernel, str) or kernel not in KERNEL_NAMES:
        raise ValueError(f"Unknown kernel {kernel!r}; expected one of {KERNEL_NAMES}.")
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"gamma must be 'scale', 'auto' or a float > 0, got {gamma!r}.")
    elif isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not gamma > 0:
        raise ValueError(f"gamma must be 'scale', 'auto' or a float > 0, got {gamma!r}.")
    elif not np.isfinite(gamma):
        raise ValueError(f"gamma must be finite, got {gamma!r}.")
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
        raise ValueError(f"degree must be an integer >= 1, got {degree!r}.")
    if isinstance(coef0, bool) or not isinstance(coef0, numbers.Real) or not np.isfinite(coef0):
        raise ValueError(f"coef0 must be a finite real number, got {coef0!r}.")


def check_labels(y):
    """``classes`` (sorted unique labels) and ``y_index`` (each row's class index, int64).

    Raises ``ValueError`` for continuous or multi-output targets and for fewer than two classes.
    A 1-D array of integers or of strings is a classification target as it stands
    (scikit-learn's ``type_of_target``: "binary" or "multiclass"), and skips the checks that
    would say so: on a fit of 149 points they took 0.3 ms, an eighth of the fit (glass,
    C = 0.01).  Floats (which must be integral), bytes (refused) and objects are checked, and
    so are labels with more classes than half their count, for scikit-learn's warning that
    they may be a regression target.
    """
    plain = isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iuU"
    if not plain:
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
    classes, y_index = np.unique(y, return_inverse=True)
    if plain and classes.size > y.size // 2:
        check_classification_targets(y)  # (it decides whether to warn)
    if classes.size < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {classes.size} class."
        )
    return classes, y_index.astype(np.int64)


def check_gram(K: np.ndarray) -> np.ndarray:
    """A precomputed training kernel: square, finite (checked by the caller's ``check_array``)
    and symmetric to ``SYMMETRY_RTOL``; returned C-contiguous and writable (numba's column cache
    reads it as a mutable array, so a read-only or memory-mapped input is copied)."""
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(
            f"A precomputed kernel for training must be a square Gram matrix; got shape {K.shape}."
        )
    n = K.shape[0]
    scale = max(float(K.max()), -float(K.min())) if n else 0.0
    step = max(1, 2**22 // max(n, 1))  # row blocks: no N x N temporaries
    for start in range(0, n, step):
        rows, cols = K[start : start + step], K[:, start : start + step].T
        excess = np.abs(rows - cols) - SYMMETRY_RTOL * np.abs(cols) - SYMMETRY_ATOL * scale
        if np.any(excess > 0):
            i, j = np.unravel_index(np.argmax(excess), excess.shape)
            raise ValueError(
                "A precomputed kernel for training must be symmetric; "
                f"K[{start + i}, {j}] = {float(rows[i, j])!r} but K[{j}, {start + i}] = "
                f"{float(cols[i, j])!r}."
            )
    if not (K.flags.writeable and K.flags.c_contiguous):
        K = np.array(K, dtype=np.float64, order="C")
    return K


def resolve_kernel(X, kernel: str, gamma, degree: int, coef0: float) -> float:
    """The numeric gamma for training data ``X`` (0 for the linear and precomputed kernels),
    after checking that the kernel's values on ``X`` are finite in float64.

    The bound checked is each kernel's largest magnitude over the rows of X: max |x|^2
    (linear), 4 gamma max |x|^2 (the RBF exponent), (gamma max |x|^2 + |coef0|)^degree (poly).
    """
    check_kernel_params(kernel, gamma, degree, coef0)
    if kernel == "precomputed":
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        largest = float(squared_norms(X).max()) if X.shape[0] else 0.0
        if not np.isfinite(largest):
            raise ValueError(
                "X has values too large for a kernel: a row's squared norm overflows float64 "
                f"(largest |x_ij| = {_largest_entry(X):.3g}); rescale the features."
            )
        value = 0.0 if kernel == "linear" else resolve_gamma(gamma, X)
        if kernel != "linear" and not (np.isfinite(value) and value > 0):
            raise ValueError(
                f"gamma={gamma!r} resolves to {float(value)!r} on this X (feature variance out of "
                "float64's range); rescale the features or pass a number."
            )
        if kernel == "linear":
            bound = largest
        elif kernel == "rbf":
            bound = np.float64(4.0) * (value * largest)  # (4 gamma alone can overflow)
        else:
            bound = (np.float64(value) * largest + abs(coef0)) ** int(degree)
    if not np.isfinite(bound):
        raise ValueError(
            f"The {kernel} kernel overflows float64 on X (gamma={value:.3g}, degree={degree}, "
            f"coef0={coef0:.3g}, largest squared norm {largest:.3g}); rescale the features "
            "or lower gamma / degree."
        )
    return value


def _largest_entry(X) -> float:
    data = X.data if sp.issparse(X) else X
    return float(np.abs(data).max()) if data.size else 0.0


def check_finite(what: str, *arrays) -> None:
    """Raise ``ValueError`` if any of ``arrays`` (or scalars) holds NaN or inf: ``what``, computed
    from finite input, overflowed float64."""
    for a in arrays:
        if not np.all(np.isfinite(a)):
            raise ValueError(
                f"{what} overflowed float64: the input is finite but too large for this "
                "problem (kernel values times C times the number of samples); rescale the "
                "features, or lower C or gamma."
            )


# The largest scale of a fit's outputs and objective that float64 holds with room for their sums.
SCALE_LIMIT = 1e300


def check_fit_scale(kernel_max: float, bounds, n_classes: int) -> None:
    """Raise ``ValueError`` before a fit whose outputs or objective could overflow float64.

    With 0 <= alpha_ij <= hi_ij every output is at most kernel_max * S in size, S = sum_i
    max_j hi_ij (|K_ii'| <= the largest diagonal entry), and the squared norm of the weights at
    most n_classes * kernel_max * S^2; beyond SCALE_LIMIT the epochs would run on values where
    rounding swamps every step (10^7 steps before the overflow showed).
    """
    total = float(np.max(bounds, axis=1).sum()) if bounds.size else 0.0
    scale = kernel_max * total * max(total, 1.0) * n_classes
    if not scale <= SCALE_LIMIT:
        raise ValueError(
            f"The fit would overflow float64: its scale, the largest kernel value (with "
            f"fit_intercept plus the bias penalty, at least 1 / (C n_samples)) ({kernel_max:.1e}) "
            "times the classes times (C times the number of samples) squared, "
            f"is {scale:.1e}; rescale the features, or lower C or gamma."
        )


def check_gram_memory(
    n_samples: int, cache_size: float, what: str, owner: str = "", hint: str = ""
) -> None:
    """ValueError where ``what`` would hold a whole N x N Gram matrix larger than ``cache_size``
    MB (the estimators' bound on kernel memory; that of ``owner``), saying the size it needs: a
    closed form or a leave-one-out path on 60 000 points met numpy's MemoryError for 27 GB, or
    hours of swapping and an O(N^3) solve."""
    needed = 8.0 * n_samples**2 / 2**20
    if needed > cache_size:
        raise ValueError(
            f"{what} holds the whole Gram matrix: {n_samples} patterns need {needed:.1f} MB for "
            f"it, above {owner}cache_size={cache_size:g} MB. Raise {owner}cache_size to "
            f"{np.ceil(needed):.0f} or more to allow it{hint}."
        )


def check_training_data(X, y, *, kernel: str = "linear", accept_sparse=False):
    """Validate a training set and encode its labels.

    Returns ``X`` (float64, finite), ``classes`` (sorted unique labels) and ``y_index`` (integer
    class index of each row, in ``0..L-1``).  Raises ``ValueError`` for NaN/inf, mismatched
    lengths, fewer than two classes, and a precomputed kernel that is not square and symmetric.
    """
    X, y = check_X_y(X, y, accept_sparse=accept_sparse, dtype=np.float64, y_numeric=False)
    classes, y_index = check_labels(y)
    if kernel == "precomputed":
        X = check_gram(X)
    return X, classes, y_index


def check_predict_input(X, *, n_features: int, kernel: str, accept_sparse=False) -> np.ndarray:
    """Validate inputs to ``decision_function``: finite, and with the training width.

    With ``kernel="precomputed"`` the input is the kernel between new points and the training
    points, so it must have one column per training point.
    """
    X = check_array(X, accept_sparse=accept_sparse, dtype=np.float64)
    if X.shape[1] != n_features:
        what = "training points" if kernel == "precomputed" else "features"
        raise ValueError(
            f"X has {X.shape[1]} columns, but the model was fitted with {n_features} {what}."
        )
    return X


def gram_eigh(K: np.ndarray):
    """``numpy.linalg.eigh`` of a symmetric Gram matrix, with a ``ValueError`` (not a
    ``LinAlgError`` or NaN eigenvalues) when its entries are too large to factor in float64."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            s, V = np.linalg.eigh(K)
    except np.linalg.LinAlgError as error:
        raise ValueError(
            f"The Gram matrix cannot be factored ({error}); rescale the features."
        ) from None
    check_finite("The Gram matrix's eigendecomposition", s, V)
    return s, V


# A Gram matrix is refused as indefinite when its smallest eigenvalue is below -INDEFINITE_RTOL
# times its largest: scikit-learn's bar for "significant negative eigenvalues" of a kernel matrix
# (``sklearn.utils.validation._check_psd_eigenvalues``, used by KernelPCA).  Rounding alone stays
# far below it, also where the kernel's values lose digits of their own: an RBF kernel computed as
# exp(-gamma (|x|^2 + |y|^2 - 2 x.y)) on features near 100 is accurate to about 1e-12, not eps, and
# showed a smallest eigenvalue of -3e-12 beside a largest of 30, five times the former rounding
# bar 2 N eps max|eigenvalue|, which refused it.  Sigmoid and poly kernels with coef0 < 0 have
# negative eigenvalues of the order of the largest.
INDEFINITE_RTOL = 1e-5


def indefinite_threshold(s: np.ndarray) -> float:
    """How far below 0 the smallest eigenvalue of a Gram matrix with eigenvalues ``s`` may be
    before it counts as indefinite: INDEFINITE_RTOL times the largest."""
    s = np.asarray(s)
    return INDEFINITE_RTOL * float(np.abs(s).max(initial=0.0))


def check_positive_semidefinite(
    s: np.ndarray, threshold=None, where: str = "", scale: float = 1.0
) -> None:
    """Refuse a Gram matrix whose smallest eigenvalue (of ``s``) is significantly negative:
    below -``threshold``, by default ``indefinite_threshold(s)``; ``where`` says of which matrix
    ``s`` are the eigenvalues when it is not the whole Gram matrix, ``scale`` by what the matrix
    was divided (the message gives the eigenvalue and bound in the Gram matrix's own units)."""
    bound = "(1e-05 times the largest eigenvalue)"
    if threshold is None:
        threshold = indefinite_threshold(s)
    else:
        bound = "(1e-05 times a bound on the whole matrix's largest eigenvalue)"
    if s.size and s.min() < -threshold:
        with np.errstate(over="ignore"):  # (inf in the message for a Gram matrix near 1e308)
            smallest, threshold = float(s.min()) * scale, threshold * scale
        raise ValueError(
            f"The kernel matrix is not positive semi-definite: {where}its smallest eigenvalue is "
            f"{smallest:.6g}, below -{threshold:.3g} {bound}.  The formulations are convex "
            "only for a positive semi-definite kernel, and msvm does not silently solve the "
            "problem of its positive part instead.  Use a positive semi-definite kernel (for a "
            "poly kernel, coef0 >= 0), or project it yourself (clip the negative eigenvalues) if "
            "that is the problem you mean."
        )


# The fast layer's test of a kernel that is not positive semi-definite by construction factors
# the Gram matrix of at most PSD_CHECK_SIZE points (Cholesky, N^3 / 3: 60 ms at 2 000 points on
# one core); above that, the principal submatrix of PSD_CHECK_SIZE evenly spaced training points.
PSD_CHECK_SIZE = 2000


def psd_by_construction(kernel, coef0: float) -> bool:
    """Whether the kernel is positive semi-definite on any data: linear, rbf, poly with coef0 >= 0
    (not a precomputed one or a callable, nor poly with coef0 < 0: their Gram matrices are
    tested)."""
    if callable(kernel):
        return False
    return not (kernel == "precomputed" or (kernel == "poly" and coef0 < 0))


def check_kernel_psd(X, kernel: str, gamma: float, degree: int, coef0: float) -> None:
    """Refuse training data on which a kernel that is not positive semi-definite by construction
    -- a precomputed Gram matrix ``X``, a poly kernel with coef0 < 0 -- has a significantly
    negative eigenvalue (``indefinite_threshold``), as the reference layer does
    (``msvm.reference.problem``), without its eigendecomposition.

    A Cholesky factorisation of K + delta I, delta = INDEFINITE_RTOL ||K||_inf (||K||_inf bounds
    the largest eigenvalue), succeeds when the smallest eigenvalue of K is above -delta, up to
    the factorisation's own rounding; then K is accepted.  When it fails, the eigenvalues decide
    by the reference layer's rule (``indefinite_threshold``).  Above PSD_CHECK_SIZE points the
    test runs on the principal submatrix of that many evenly spaced points and is one-sided: by
    interlacing its smallest eigenvalue is at least the whole matrix's, so a refusal is certain
    (against delta, from a bound on the whole matrix's largest eigenvalue) and an indefinite K
    may pass.
    """
    if psd_by_construction(kernel, coef0):
        return
    n = X.shape[0]
    rows = np.unique(np.linspace(0, n - 1, min(n, PSD_CHECK_SIZE)).round().astype(np.intp))
    scale = 1.0  # the test runs on K / scale, |entries| < 2: no sum overflows
    if kernel == "precomputed":  # (a power of 2 at most the largest entry: exact)
        scale = float(np.ldexp(1.0, np.frexp(_largest_entry(X))[1] - 1))
        K = X[np.ix_(rows, rows)] / scale
        step = max(1, 2**22 // max(n, 1))  # ||X||_inf >= ||X||_2, by row blocks
        norm = max(
            float((np.abs(X[i : i + step]) / scale).sum(axis=1).max()) for i in range(0, n, step)
        )
    else:
        K = kernel_matrix(X[rows], X[rows], kernel, gamma, degree, coef0)
        if rows.size == n:
            norm = float(np.abs(K).sum(axis=1).max(initial=0.0))
        else:  # every |k(x, y)| is at most (gamma max|x|^2 + |coef0|)^degree, ||K||_2 N times it
            norm = n * (gamma * float(squared_norms(X).max()) + abs(coef0)) ** degree
    delta = INDEFINITE_RTOL * norm
    shifted = K + K.T  # the one N x N temporary
    shifted *= 0.5
    shifted.flat[:: rows.size + 1] += delta
    _, info = scipy.linalg.lapack.dpotrf(shifted, lower=1, clean=0, overwrite_a=1)
    if info == 0:
        return
    s = gram_eigh(0.5 * (K + K.T))[0]
    if rows.size == n:
        check_positive_semidefinite(s, scale=scale)
    else:
        where = f"on the principal submatrix of {rows.size} of its {n} points "
        check_positive_semidefinite(s, delta, where, scale)


def check_sample_weight(sample_weight, n_samples: int, y_index=None, class_weight=None):
    """The per-pattern loss weights s_i = sample_weight_i * class_weight[y_i] (shape (n,)).

    ``sample_weight``: None (ones) or an array-like of n_samples finite values >= 0;
    ``class_weight``: None, "balanced" or a dict {class index: weight} (the estimators map their
    labels to indices, ``class_weight_vector``).  A pattern of weight 0 is allowed (its dual
    variables get the bound 0: it does not enter the fit); all weights 0 is refused, as are a
    wrong length, negative entries, NaN and inf, each with a ValueError that names the problem.
    Returns None when every weight is 1, so that an unweighted fit stays bit for bit what it was.
    """
    if sample_weight is None:
        s = np.ones(n_samples)
    else:
        if isinstance(sample_weight, numbers.Number):
            raise ValueError(
                f"sample_weight must be an array of shape ({n_samples},), got the scalar "
                f"{sample_weight!r}."
            )
        s = check_array(
            sample_weight, ensure_2d=False, dtype=np.float64, ensure_all_finite=False,
            input_name="sample_weight",
        )  # fmt: skip
        if s.ndim != 1 or s.shape[0] != n_samples:
            raise ValueError(
                f"sample_weight must have shape ({n_samples},) (one weight per sample), "
                f"got shape {s.shape}."
            )
        if not np.all(np.isfinite(s)):
            raise ValueError("sample_weight must be finite: it contains NaN or inf.")
        if np.any(s < 0):
            raise ValueError(
                f"sample_weight must be non-negative; got {int(np.sum(s < 0))} negative "
                f"value(s), the smallest {float(s.min()):g}."
            )
        s = s.copy()
    if class_weight is not None:
        s = s * np.asarray(class_weight, dtype=np.float64)[y_index]
    if not np.any(s > 0):
        raise ValueError(
            "sample_weight (times class_weight) is zero for every sample: there is nothing to fit."
        )
    return None if np.all(s == 1.0) else s


def class_weight_vector(class_weight, classes, y_index) -> np.ndarray | None:
    """The weight of each class (in ``classes`` order) for ``class_weight`` as in scikit-learn's
    SVC: None, a dict {label: weight} (labels not named weigh 1), or "balanced",
    n_samples / (n_classes * bincount(y)) (``sklearn.utils.class_weight.compute_class_weight``).
    """
    if class_weight is None:
        return None
    from sklearn.utils.class_weight import compute_class_weight

    weights = compute_class_weight(class_weight, classes=classes, y=classes[y_index])
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("class_weight must be finite and non-negative.")
    return weights
