"""``check_labels``: a 1-D array of integers or strings skips scikit-learn's target checks (it
is a classification target as it stands) but keeps what they say of it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.utils.multiclass import check_classification_targets

from msvm.core.validation import check_labels

MANY = np.concatenate([np.arange(20), np.arange(10)])  # 20 classes of 30 labels


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, str, float])
def test_many_classes_warn_as_scikit_learn_warns(dtype):
    """More classes than half the labels: scikit-learn's warning that y may be a regression
    target, whatever the labels' type (integers and strings lost it at first; review, stop 52)."""
    y = MANY.astype(dtype)
    with pytest.warns(UserWarning, match="unique classes is greater than 50%"):
        check_classification_targets(y)
    with pytest.warns(UserWarning, match="unique classes is greater than 50%"):
        classes, y_index = check_labels(y)
    np.testing.assert_array_equal(classes[y_index], y)


@pytest.mark.parametrize("dtype", [np.int64, str])
def test_few_classes_do_not_warn(dtype):
    y = np.repeat(np.arange(3), 10).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        classes, y_index = check_labels(y)
    assert classes.size == 3 and y_index.dtype == np.int64


@pytest.mark.parametrize(
    "y, match",
    [
        (np.array([0.5, 1.0, 2.0]), "Unknown label type: continuous"),
        (MANY.astype(object), "Unknown label type: unknown"),  # (objects that are not strings)
        (np.array([b"a", b"b"]), "bytes"),
        (np.zeros(5, dtype=int), "greater than one"),
        (np.array(["a"] * 4), "greater than one"),
    ],
)
def test_what_scikit_learn_refuses_is_refused(y, match):
    with pytest.raises((ValueError, TypeError), match=match):
        check_labels(y)
