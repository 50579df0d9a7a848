"""msvm.fast: numba solvers behind scikit-learn estimators (not yet built; see issues 3 and 4)."""
