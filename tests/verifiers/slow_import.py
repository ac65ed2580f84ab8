"""A module that takes a second to import, for the worker's load phase (see test_timeout.py).

The worker imports a function's module when it unpickles the call, before the call's clock starts:
a call with a 0.2 s limit to a function of this module must still succeed.
"""

from __future__ import annotations

import time

IMPORT_SECONDS = 1.0
time.sleep(IMPORT_SECONDS)


def ready() -> str:
    """Return at once: only importing this module is slow."""
    return "ready"
