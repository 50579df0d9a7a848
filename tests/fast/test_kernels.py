"""Kernel columns computed on demand, and kernel blocks, against the Gram matrix of msvm.core."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from msvm.core.kernels import kernel_matrix, rbf_exponent
from msvm.fast.kernels import (
    EXP_FLOOR,
    GRAM_BLOCK,
    blocked_kernel,
    column_source,
    exp_nonpositive,
    get_column,
    gram,
    kernel_block,
    kernel_value,
    lru_column,
)
from msvm.fast.threads import blas_threads


def test_whole_gram_source_compiles_no_lru_code(typed_names):
    """A whole-Gram source has no clock, and numba prunes the LRU code from get_column's
    specialisation for it (a fifth of a first fit's compile time); an LRU source's keeps it."""
    X = np.random.default_rng(0).normal(size=(6, 3))
    whole = column_source(X, "rbf", 0.5, 3, 0.0, cache_size=1.0)
    lru = column_source(X, "rbf", 0.5, 3, 0.0, cache_size=2 * 8 * 6 / 2**20)
    assert whole[11] is None and lru[7].shape[0] == 2
    np.testing.assert_array_equal(get_column(whole, 2), whole[7][2])
    np.testing.assert_allclose(get_column(lru, 2), whole[7][2], rtol=0, atol=1e-15)
    assert "compute_column" not in typed_names(lru_column, whole, 2, whole[11])
    assert "compute_column" in typed_names(lru_column, lru, 2, lru[11])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "kernel, gamma, degree, coef0",
    [("rbf", 0.3, 3, 0.0), ("poly", 0.5, 3, 1.0), ("linear", 0, 3, 0)],
)
def test_columns_on_demand_equal_the_gram_matrix(kernel, gamma, degree, coef0, sparse):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.6)
    K = kernel_matrix(X, X, kernel, gamma, degree, coef0)
    # 0.001 MB holds 3 of the 40 columns: every other one is computed on demand (LRU).
    source = column_source(sp.csr_matrix(X) if sparse else X, kernel, gamma, degree, coef0, 0.001)
    assert source[7].shape[0] < X.shape[0]
    for i in rng.permutation(np.tile(np.arange(40), 2)):
        np.testing.assert_allclose(get_column(source, i), K[:, i], rtol=1e-12, atol=1e-12)


def test_vectorised_exponential_is_within_one_ulp_of_numpys():
    """exp_nonpositive (range reduction and a Taylor polynomial, for the RBF columns) against
    numpy's exp over the whole range a Gaussian kernel produces, and at its edges."""
    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, -1e-300, -1e-12, -0.5 * np.log(2), -708.0, -708.0001, -745.2, -1e6]
    x = np.concatenate([edges, -rng.uniform(0, 708, 200_001), -rng.exponential(1, 100_000)])
    y = x.copy()
    exp_nonpositive(y)
    expected = np.exp(x)
    normal = x >= EXP_FLOOR
    ulps = np.abs(y[normal] - expected[normal]) / np.spacing(expected[normal])
    assert ulps.max() <= 1.0
    assert np.all(y[~normal] == 0.0)  # underflow: exp(-708) = 3.3e-308 is the least kept
    assert y[0] == 1.0 and y[1] == 1.0
    # an exponent that rounding left above 0 is clipped in the same pass (blocked_kernel relies
    # on it): exp(min(x, 0)) = 1
    above = np.array([1e-300, 2e-16, 3.0, 700.0])
    exp_nonpositive(above)
    np.testing.assert_array_equal(above, 1.0)
    # one entry at a time (kernel_value, behind engine.kernel_entry) gives the same bits: the
    # entries of a pattern whose steps wait agree with the columns computed for them
    singles = np.array([kernel_value(0.0, -v, 0.0, 1, 1.0, 3, 0.0) for v in x[:5000]])
    np.testing.assert_array_equal(singles, y[:5000])


def test_kernel_blocks_of_a_column_source_agree_with_its_columns():
    """kernel_block (the compact phases' and the Newton steps' blocks): to rounding the same
    entries as get_column and as the reference layer's kernel, and the same bits whatever the
    threads (its exponential is checked to the bit in the blocked-kernel test below)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, 9))
    source = column_source(X, "rbf", 0.2, 3, 0.0, 0.05)
    rows, cols = rng.permutation(700)[:600], rng.permutation(700)[:37]
    block = kernel_block(source, rows, cols)
    columns = np.stack([get_column(source, j)[rows] for j in cols], axis=1)
    np.testing.assert_allclose(block, columns, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(block, kernel_matrix(X[rows], X[cols], "rbf", 0.2), rtol=1e-13,
                               atol=1e-15)  # fmt: skip
    previous = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        np.testing.assert_array_equal(kernel_block(source, rows, cols), block)
    finally:
        numba.set_num_threads(previous)


@pytest.mark.parametrize("n, m, d", [(700, 900, 20), (256, 300, 3), (513, 64, 200)])
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_rbf_kernel_is_kernel_matrix_block_by_block(n, m, d, threads):
    # blocked_kernel computes dense RBF blocks in place from factors made once; each block must
    # be kernel_matrix's exponent for its rows, clipped, to the last bit (on one BLAS thread, as
    # blocked_kernel runs), exponentiated as the columns are (exp_nonpositive), whatever the
    # number of threads that fill the blocks; and kernel_matrix's whole kernel to rounding.
    rng = np.random.default_rng(d)
    A, B = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    gamma = 1.0 / d
    with blas_threads(1):
        expected = np.vstack([np.minimum(rbf_exponent(A[s : s + GRAM_BLOCK], B, gamma), 0.0)
                              for s in range(0, n, GRAM_BLOCK)])  # fmt: skip
    exp_nonpositive(expected.reshape(-1))
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        K = blocked_kernel(A, B, "rbf", gamma, 3, 0.0)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(K, expected)
    np.testing.assert_allclose(K, kernel_matrix(A, B, "rbf", gamma), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n", [5, 256, 700])
@pytest.mark.parametrize(
    "kernel, gamma, degree, coef0",
    [("rbf", 0.05, 3, 0.0), ("poly", 0.05, 3, 1.0), ("linear", 0, 3, 0)],
)
def test_gram_is_exactly_symmetric_and_the_kernel_matrix(kernel, gamma, degree, coef0, n, sparse):
    """``gram`` computes each row block from its diagonal on and mirrors it: exactly symmetric
    (the whole product rounded entries (i, j) and (j, i) apart), the RBF diagonal exactly 1,
    kernel_matrix's entries to rounding, and the same bits on one thread or two (its blocks
    each on one BLAS thread)."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 20)) * (rng.random((n, 20)) < 0.7)
    previous, grams = numba.get_num_threads(), []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        try:
            with blas_threads(threads):
                grams.append(gram(sp.csr_matrix(X) if sparse else X, kernel, gamma, degree, coef0))
        finally:
            numba.set_num_threads(previous)
    K = grams[0]
    np.testing.assert_array_equal(grams[1], K)
    np.testing.assert_array_equal(K, K.T)
    if kernel == "rbf":
        np.testing.assert_array_equal(np.diag(K), 1.0)
    expected = kernel_matrix(X, X, kernel, gamma, degree, coef0)
    np.testing.assert_allclose(K, expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_blocked_kernel_times_a_matrix_is_the_same_whatever_the_threads(kernel):
    """``times=T``: k(A, B) T, each row block multiplied on one BLAS thread, so the product is the
    same to the last bit on one thread or two (the compact phases' update of the other patterns'
    outputs, ``DecompositionSolver._compact``), and k(A, B) T to rounding."""
    rng = np.random.default_rng(3)
    A, B, T = rng.normal(size=(900, 20)), rng.normal(size=(700, 20)), rng.normal(size=(700, 6))
    products = []
    previous = numba.get_num_threads()
    for threads in (1, 2):
        numba.set_num_threads(threads)
        try:
            with blas_threads(threads):
                products.append(blocked_kernel(A, B, kernel, 0.05, 3, 1.0, times=T))
        finally:
            numba.set_num_threads(previous)
    np.testing.assert_array_equal(products[0], products[1])
    expected = kernel_matrix(A, B, kernel, 0.05, 3, 1.0) @ T
    np.testing.assert_allclose(
        products[0], expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max()
    )
