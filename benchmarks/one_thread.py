"""Import first (before numpy): BLAS, OpenMP and so every msvm fit on one thread for the whole
benchmark, for the scripts that compare CPU times (``time.process_time``) with scikit-learn's SVC,
which runs on one.

Without it, OpenBLAS's worker threads keep spinning for a while after each product of a fit on
two threads, and ``process_time`` charges that spin to whatever is timed next: on digits at
C = 1000, gamma = scale / 10 SVC measured 0.039 s of CPU time after msvm's fits in
``grid.py`` and 0.014 s in a process of its own or with one BLAS thread (stop 32), so the grids
before stop 32 understated msvm's ratios, by up to ~3x where SVC fits in ~10 ms.  (msvm's
estimators take their thread count from ``OMP_NUM_THREADS``: ``msvm.fast.threads``.)
"""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"
