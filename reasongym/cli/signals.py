"""SIGTERM on the command line: ``kill`` or a scheduler's stop ends a command as Ctrl-C does (a trainer saves
its last finished step, exit 130), and a second SIGTERM while the stopped command winds down exits 130 at
once with one line, never by the signal."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from reasongym.cli.args import EXIT_INTERRUPTED


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill``, a scheduler's stop) stops a command as Ctrl-C does: a trainer saves its last step."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    except KeyboardInterrupt:
        # The command is stopping; what is left (the message, closing files and worker processes at exit)
        # must not be cut short by a second SIGTERM into a death by signal (-15): it exits 130 as promised.
        signal.signal(signal.SIGTERM, _exit_interrupted)
        raise
    else:
        signal.signal(signal.SIGTERM, previous)


def _exit_interrupted(signum: int, frame: Any) -> None:
    """A second SIGTERM while a stopped command winds down: the one-line message, then exit 130 at once."""
    print("reasongym: interrupted again while stopping; exiting now", file=sys.stderr, flush=True)
    os._exit(EXIT_INTERRUPTED)
