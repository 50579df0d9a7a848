"""``python -m msvm.verify`` is the ``msvm`` command."""

import sys

from msvm.verify.cli import main

if __name__ == "__main__":  # not on import (the docs' API reference imports every module)
    sys.exit(main())
