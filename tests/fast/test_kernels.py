"""Kernel columns computed on demand against the Gram matrix of msvm.core."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from msvm.core.kernels import kernel_matrix
from msvm.fast.kernels import column_source, get_column


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
