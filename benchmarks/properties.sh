#!/bin/sh
# The property-based campaign of tests/test_properties.py at 40x the CI profile (>= 10 000
# generated inputs), with numba's bounds checks on, in a fresh numba cache (bounds-checked code is
# compiled apart from the normal build).  Prints hypothesis's per-test counts and timings.
#   sh benchmarks/properties.sh            # about 12 minutes on 2 cores (32 080 inputs)
set -e
cache=$(mktemp -d)
HYPOTHESIS_PROFILE=campaign NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR="$cache" \
    python -m pytest -q -p no:cacheprovider tests/test_properties.py \
    --hypothesis-show-statistics "$@"
rm -rf "$cache"
