"""``python -m msvm`` is the ``msvm`` command."""

import sys

from msvm.verify.cli import main

sys.exit(main())
