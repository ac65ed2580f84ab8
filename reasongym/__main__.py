"""``python -m reasongym``: the same command line as the ``reasongym`` console script."""

import sys

from reasongym.cli import main

sys.exit(main())
