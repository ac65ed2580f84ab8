"""The ``reasongym`` command line: ``main`` parses and dispatches; nothing in the package imports this."""

from reasongym.cli.main import main

__all__ = ["main"]
