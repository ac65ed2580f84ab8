"""``python -m reasongym``: the same command line as the ``reasongym`` console script."""

import sys

from reasongym.cli import main

if __name__ == "__main__":  # a process that Python's spawn starts imports this module: it must not run again
    sys.exit(main())
