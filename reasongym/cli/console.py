"""Warnings on the command line: one line each, on a line of their own, without Python's source echo.

Python prints a warning as ``FILE:LINE: Category: message`` followed by the source line that raised it
(``session.finish_step(step, metrics, batch)``), written straight to stderr: in the middle of a progress bar's
line it is glued onto the bar, and the source line means nothing to a user. While a command runs, warnings are
shown as ``reasongym: warning: message`` (a library's warning also names its category and where it came from),
through tqdm when a bar may be on screen: tqdm clears the bar, prints the line, and draws the bar again below it.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

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


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """`warnings.showwarning` for the command line: `format_warning`'s line, on a line of its own."""
    text = format_warning(message, category, filename, lineno)
    stream: Any = file if file is not None else sys.stderr
    if "tqdm" in sys.modules:  # a bar may be drawn: let tqdm clear it and draw it again under the line
        from tqdm.auto import tqdm

        tqdm.write(text, file=stream)
    else:
        stream.write(text + "\n")
        stream.flush()


@contextmanager
def warnings_on_their_own_line() -> Iterator[None]:
    """While the block runs, warnings are shown by `show_warning`; the previous display comes back after."""
    previous = warnings.showwarning
    warnings.showwarning = show_warning
    try:
        yield
    finally:
        warnings.showwarning = previous
