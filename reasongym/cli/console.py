"""Warnings on the command line: one line each, on a line of their own, without Python's source echo.

Python prints a warning as ``FILE:LINE: Category: message`` followed by the source line that raised it
(``session.finish_step(step, metrics, batch)``), written straight to stderr: in the middle of a progress bar's
line it is glued onto the bar, and the source line means nothing to a user. While a command runs, warnings are
formatted as ``reasongym: warning: message`` (a library's warning also names its category and where it came
from), on a line of its own when a bar is being drawn.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
"""The reasongym package: a warning raised in it is ours, and needs no origin."""


def format_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int) -> str:
    """``reasongym: warning: message``; a warning from another library adds its category and origin."""
    text = " ".join(str(message).split("\n"))
    try:
        ours = Path(filename).resolve().is_relative_to(PACKAGE)
    except (OSError, ValueError):
        ours = False
    origin = "" if ours else f" ({category.__name__}, {Path(filename).name}:{lineno})"
    return f"reasongym: warning: {text}{origin}"


def format_line(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    """`warnings.formatwarning` for the command line: `format_warning`'s line, started on a fresh line when a
    progress bar is drawn (the bar's line is left as it was, and the bar goes on under the warning)."""
    return ("\n" if _bar_on_screen() else "") + format_warning(message, category, filename, lineno) + "\n"


def _bar_on_screen() -> bool:
    """Whether a tqdm bar is being drawn now (tqdm keeps its live bars in ``tqdm._instances``)."""
    if "tqdm" not in sys.modules:
        return False
    from tqdm import tqdm

    return any(not bar.disable for bar in list(getattr(tqdm, "_instances", ())))


@contextmanager
def warnings_on_their_own_line() -> Iterator[None]:
    """While the block runs, warnings are formatted by `format_line`; the previous format comes back after.

    Only the format is replaced, not how warnings are shown: ``warnings.catch_warnings(record=True)`` (and
    pytest's ``pytest.warns``) still records them.
    """
    previous = warnings.formatwarning
    warnings.formatwarning = format_line
    try:
        yield
    finally:
        warnings.formatwarning = previous
