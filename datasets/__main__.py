"""``python -m msvm.datasets fetch | table``: see :mod:`msvm.datasets.cli`."""

import sys

from msvm.datasets.cli import main

if __name__ == "__main__":  # not on import (the docs' API reference imports every module)
    sys.exit(main())
