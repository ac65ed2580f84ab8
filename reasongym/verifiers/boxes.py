r"""Find the ``\boxed{}`` answers of a completion, and which of them make up its final statement.

A completion is untrusted text of any size: boxes are counted with ``str.count``, found with one regex
scan, and each box argument is read through at most :data:`MAX_BOX_CHARS` characters.

Which boxes are the answer. The last box is the final answer, as in every widely used grader: an
earlier box is an earlier attempt (``First $\boxed{20}$, no wait: it is $\boxed{21}$``, a box inside
``<think>...</think>``, a box before "let me recheck"). Boxes written together in one statement,
with nothing between them but separators (commas, "and", "or", "maybe", ``\quad``, math delimiters,
labels such as ``x_2 =``), are read as one statement of several values: ``$\boxed{3}$ and
$\boxed{-5}$`` states the two roots; ``\boxed{723} or \boxed{729}`` is a hedge. The grader decides
what several values mean (right for a multi-valued gold that they match exactly, wrong otherwise).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_BOXES", "MAX_BOX_CHARS", "BoxScan", "extract_boxed", "find_boxes", "read_box_argument"]

MAX_BOXES = 64
"""More box commands than this in one completion is degenerate output: no answer is extracted."""
MAX_BOX_CHARS = 5_000
"""The longest box argument read; a longer one gives no answer (math graders refuse far less)."""

_BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_BRACE_TOKEN = re.compile(r"\\[\\{}]|[{}]")
_SPACES = re.compile(r"[ \t]*")
_BARE_ARGUMENT = re.compile(rf"[^\s$]{{1,{MAX_BOX_CHARS}}}")
# What may stand between two boxes of one statement, one piece at a time (``_joined`` walks the gap
# piece by piece, so no quantifier is nested and the walk is linear).
_JOINER = re.compile(
    r"\s+|\$+|\\[()\[\],;:! ]|[,;&.:*]|\\q?quad(?![A-Za-z])"
    r"|\\(?:text|textrm|mbox|mathrm)[ \t]*\{[ \t]*(?:and|or|,)?[ \t]*\}"
    r"|(?i:and|or|also|maybe|perhaps|possibly|either|alternatively)(?![A-Za-z])"
    r"|[A-Za-z](?:_\{?\w{1,3}\}?)?[ \t]*(?:=|\\in(?![A-Za-z]))"
)
_MAX_GAP = 80


@dataclass(frozen=True)
class BoxScan:
    """Every top-level box in a text.

    Attributes:
        contents: The raw arguments of the complete top-level boxes, in text order.
        problem: None, or why no box answer may be used: "truncated", "too_many_boxes", "box_too_long".
        final_start: Index in ``contents`` of the first box of the final statement (see the module
            docstring); the last box is always part of it.
        end: Where the last box ends in the text (0 without a box).
    """

    contents: tuple[str, ...]
    problem: str | None = None
    final_start: int = 0
    end: int = 0

    @property
    def final(self) -> tuple[str, ...]:
        """The boxes of the final statement, in text order."""
        return self.contents[self.final_start :]


def read_box_argument(text: str, start: int) -> tuple[str, str, int]:
    """Read the argument of a box (or text) command ending at ``start``: (status, content, end).

    Status is "ok", "empty" (no argument on this line), "truncated" (the text ends inside it) or
    "box_too_long".
    """
    pos = _SPACES.match(text, start).end()
    if pos >= len(text):
        return "truncated", "", pos
    if text[pos] != "{":
        bare = _BARE_ARGUMENT.match(text, pos)
        if bare is None:  # "\boxed$" or "\boxed\n": no argument on this line
            return "truncated" if not text[pos:].strip() else "empty", "", pos
        return "ok", bare.group(0), bare.end()
    window_end = min(len(text), pos + MAX_BOX_CHARS + 2)
    depth = 0
    for token in _BRACE_TOKEN.finditer(text, pos, window_end):
        brace = token.group(0)
        if brace == "{":
            depth += 1
        elif brace == "}":
            depth -= 1
            if depth == 0:
                return "ok", text[pos + 1 : token.start()], token.end()
    return ("truncated" if window_end == len(text) else "box_too_long"), "", window_end


def _unwrap_nested_box(content: str) -> str:
    r"""``\boxed{5}`` inside a box reads as ``5``."""
    stripped = content.strip()
    while stripped.startswith(("\\boxed", "\\fbox")):
        command = _BOX_COMMAND.match(stripped)
        if command is None:
            break
        status, inner, end = read_box_argument(stripped, command.end())
        if status != "ok" or stripped[end:].strip():
            break
        stripped = inner.strip()
    return stripped


def _joined(gap: str) -> bool:
    """Whether the text between two boxes only separates values of one statement."""
    if len(gap) > _MAX_GAP:
        return False
    pos = 0
    while pos < len(gap):
        piece = _JOINER.match(gap, pos)
        if piece is None:
            return False
        pos = piece.end()
    return True


def find_boxes(text: str) -> BoxScan:
    r"""Read every top-level ``\boxed``/``\fbox`` argument of ``text``, in linear time.

    Args:
        text: A model completion.

    Returns:
        The raw box arguments in text order and where the final statement starts, or an empty scan
        with the problem that forbids using them ("truncated" when a box is never closed,
        "too_many_boxes", "box_too_long").

    Example:
        >>> find_boxes(r"so \boxed{\frac{1}{2}} or \boxed 3").contents
        ('\\frac{1}{2}', '3')
        >>> find_boxes(r"\boxed{20}, no wait: \boxed{21} and \boxed{22}").final
        ('21', '22')
    """
    count = text.count("\\boxed") + text.count("\\fbox")
    if count == 0:
        return BoxScan(())
    if count > MAX_BOXES:
        return BoxScan((), "too_many_boxes")
    contents: list[str] = []
    spans: list[tuple[int, int]] = []
    resume = 0
    for command in _BOX_COMMAND.finditer(text):
        if command.start() < resume:  # nested inside the previous box
            continue
        status, content, resume = read_box_argument(text, command.end())
        if status in ("truncated", "box_too_long"):
            return BoxScan((), status)
        if status == "ok":
            contents.append(_unwrap_nested_box(content))
            spans.append((command.start(), resume))
    start = len(spans) - 1
    while start > 0 and _joined(text[spans[start - 1][1] : spans[start][0]]):
        start -= 1
    return BoxScan(tuple(contents), None, max(start, 0), spans[-1][1] if spans else 0)


def extract_boxed(text: str) -> str | None:
    r"""Return the content of the last complete ``\boxed{...}`` / ``\fbox{...}`` in ``text``.

    Braces are balanced (nested braces are kept, ``\{`` and ``\}`` do not count), bare
    ``\boxed 5`` is read as ``5``, and the content is returned with outer whitespace removed.

    Args:
        text: A model completion.

    Returns:
        The box content, or None when there is no box, a box is never closed (truncated output),
        or the boxes are degenerate (see :func:`find_boxes`).

    Example:
        >>> extract_boxed(r"First \boxed{1}, then $\boxed{\frac{a}{b}}$.")
        '\\frac{a}{b}'
        >>> extract_boxed(r"\boxed{12") is None
        True
    """
    scan = find_boxes(text)
    if scan.problem is not None or not scan.contents:
        return None
    return scan.contents[-1].strip()
