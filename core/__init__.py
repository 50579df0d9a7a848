"""Shared, cvxpy-free primitives used by every layer of msvm.

``msvm.core`` holds what the reference layer (cvxpy) and the fast layer (numba) must agree on:
input validation, kernels, label codings and the numpy value of every primal objective on the
canonical scale ``1/2 ||W||^2 + C * sum(loss)``.  Importing it never imports cvxpy.
"""

from msvm.core.coding import (
    label_index,
    one_hot,
    one_vs_all_code,
    random_code,
    sign_coding,
    simplex_code,
)
from msvm.core.kernels import KERNELS, isvm_gamma, kernel_matrix, resolve_gamma
from msvm.core.validation import (
    check_C,
    check_kernel_params,
    check_predict_input,
    check_training_data,
)

__all__ = [
    "KERNELS",
    "check_C",
    "check_kernel_params",
    "check_predict_input",
    "check_training_data",
    "isvm_gamma",
    "kernel_matrix",
    "label_index",
    "one_hot",
    "one_vs_all_code",
    "random_code",
    "resolve_gamma",
    "sign_coding",
    "simplex_code",
]
