"""Label codings: ISVM (3.1), the simplex code's defining properties (Simplex Def. 1.1), codes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from msvm.core import one_vs_all_code, random_code, sign_coding, simplex_code


def test_sign_coding():
    Y = sign_coding(np.array([0, 2, 1, 2]), 3)
    np.testing.assert_array_equal(Y, [[1, -1, -1], [-1, -1, 1], [-1, 1, -1], [-1, -1, 1]])


@given(st.integers(min_value=2, max_value=40))
def test_simplex_code_properties(T):
    """||a_i|| = 1, <a_i, a_j> = -1/(T-1) for i != j, sum_i a_i = 0, in R^{T-1}."""
    A = simplex_code(T)
    assert A.shape == (T, T - 1)
    gram = A @ A.T
    expected = np.full((T, T), -1.0 / (T - 1))
    np.fill_diagonal(expected, 1.0)
    np.testing.assert_allclose(gram, expected, atol=1e-12)
    np.testing.assert_allclose(A.sum(axis=0), 0.0, atol=1e-12)


def test_simplex_code_two_classes_is_plus_minus_one():
    np.testing.assert_array_equal(simplex_code(2), [[1.0], [-1.0]])


def test_simplex_code_decoding_recovers_each_class():
    A = simplex_code(6)
    np.testing.assert_array_equal(np.argmax(A @ A.T, axis=1), np.arange(6))


def test_simplex_code_needs_two_classes():
    with pytest.raises(ValueError):
        simplex_code(1)


def test_output_codes():
    C = one_vs_all_code(4)
    assert C.shape == (4, 4) and np.all(np.diag(C) == 1) and C.sum() == 4 - 12
    R = random_code(5, 7, random_state=0)
    assert R.shape == (5, 7)
    assert np.unique(R, axis=0).shape[0] == 5
    assert np.all(np.abs(R.sum(axis=0)) < 5)
    np.testing.assert_array_equal(R, random_code(5, 7, random_state=0))
    with pytest.raises(ValueError):
        random_code(9, 2)
