"""``python -m msvm.datasets fetch | table``: see :mod:`msvm.datasets.cli`."""

import sys

from msvm.datasets.cli import main

sys.exit(main())
