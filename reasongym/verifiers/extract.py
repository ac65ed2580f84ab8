r"""Find the final answer in a full model completion.

A completion is untrusted text of any size. Every function here runs in time linear in the input:
boxes are found with ``str.count`` and one regex scan, each box argument is read through at most
:data:`MAX_BOX_CHARS` characters, and answer phrases and the last number are looked for only in the
last :data:`TAIL_CHARS` characters. No regex has nested quantifiers.

Rules for math answers (:func:`extract_math_answer`), in priority order:

1. The last complete ``\boxed{...}`` / ``\fbox{...}`` (balanced, nested braces; ``\{`` and ``\}``
   are escaped braces) or bare ``\boxed 5``. A box nested inside another box is part of the outer
   one, and ``\boxed{\boxed{5}}`` reads as ``5``.
2. The last answer phrase: "Final Answer: ...", "The final answer is ...", "The answer is ...",
   "Answer: ...", or GSM8K's "#### ...". The answer runs to the end of its sentence or line (or to
   the closing ``$`` when it starts with ``$``); when the line is empty after the phrase, the next
   non-empty line is the answer.
3. Only when ``last_number_fallback`` is true: the last number in the text (integers, thousands
   groups, decimals, ``a/b`` and ``\frac{a}{b}``).

No answer at all (``answer is None``) when:

- a box is never closed. The text then ends inside the box: the output was truncated, and a
  truncated completion must not be rewarded, so there is no fall back to phrases or numbers;
- there are more than :data:`MAX_BOXES` boxes (degenerate output), or one box argument is longer
  than :data:`MAX_BOX_CHARS` characters (no answer is that long).

Answer spraying: when several boxes hold different candidates (compared after removing spaces,
``$`` and trailing periods; repeated identical boxes are fine), the extraction is marked
``sprayed`` and lists every distinct candidate. The grader decides what that means (``verify``
counts it wrong unless every candidate is correct).

Cleaning: Unicode is normalised (:func:`~reasongym.verifiers.text.normalize_unicode`), then outer
whitespace, ``$...$`` / ``\(...\)`` / ``\[...\]`` wrappers, Markdown ``**`` and trailing periods
are removed. ``\text{}`` and units are left to the math grader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reasongym.verifiers.text import normalize_unicode

__all__ = [
    "ANSWER_PHRASE",
    "MAX_BOXES",
    "MAX_BOX_CHARS",
    "TAIL_CHARS",
    "BoxScan",
    "Extraction",
    "clean_answer",
    "extract_answer_span",
    "extract_boxed",
    "extract_math_answer",
    "find_boxes",
    "last_number",
    "strip_text_wrapper",
]

MAX_BOXES = 64
"""More box commands than this in one completion is degenerate output: no answer is extracted."""
MAX_BOX_CHARS = 5_000
"""The longest box argument read; a longer one gives no answer (math graders refuse far less)."""
TAIL_CHARS = 20_000
"""Answer phrases and the last number are looked for only this far back from the end."""
_MAX_ANSWER_CHARS = 1_000
_NEXT_LINE_CHARS = 300

_BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_BRACE_TOKEN = re.compile(r"\\[\\{}]|[{}]")
_SPACES = re.compile(r"[ \t]*")
_BARE_ARGUMENT = re.compile(rf"[^\s$]{{1,{MAX_BOX_CHARS}}}")

ANSWER_PHRASE = re.compile(
    r"\b(?:final\s+answer|answer)\s*(?:\*\*\s*)?(?:is\b|was\b|would\s+be\b|should\s+be\b|will\s+be\b|[:=])"
    r"|(?m:^[ \t#*]*final\s+answer[ \t*:]*$)"
    r"|####",
    re.IGNORECASE,
)
"""Phrases that introduce a final answer ("The answer is", "Final Answer:", "#### ", ...)."""

_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)")
_NUMBER = re.compile(
    r"(?<![\w.])-?(?:\\[dt]?frac\{\d+\}\{\d+\}|(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:/\d+)?)"
)
_CLOSERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_SPACE_RUN = re.compile(r"\s+")
_EITHER = re.compile(r"either\s+", re.IGNORECASE)  # "either 3 or 4" is graded as the hedge "3 or 4"
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|mbox)\s*\{")


@dataclass(frozen=True)
class Extraction:
    """The final answer found in a completion, and how it was found.

    Attributes:
        answer: The cleaned final answer; None when there is none (see ``reason``).
        method: How it was found: "boxed", "phrase", "gsm8k", "last_number", or, with no answer,
            "none", "truncated", "too_many_boxes" or "box_too_long".
        reason: One sentence for people reading rollouts.
        sprayed: True when several boxes hold different candidates.
        candidates: Every distinct candidate the winning method found, last one = ``answer``.
    """

    answer: str | None
    method: str
    reason: str
    sprayed: bool = False
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoxScan:
    """Every top-level box in a text.

    Attributes:
        contents: The raw arguments of the complete top-level boxes, in text order.
        problem: None, or why no box answer may be used: "truncated", "too_many_boxes", "box_too_long".
    """

    contents: tuple[str, ...]
    problem: str | None = None


def _read_box_argument(text: str, start: int) -> tuple[str, str, int]:
    """Read the argument of a box command ending at ``start``: (status, content, end)."""
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
        status, inner, end = _read_box_argument(stripped, command.end())
        if status != "ok" or stripped[end:].strip():
            break
        stripped = inner.strip()
    return stripped


def find_boxes(text: str) -> BoxScan:
    r"""Read every top-level ``\boxed``/``\fbox`` argument of ``text``, in linear time.

    Args:
        text: A model completion.

    Returns:
        The raw box arguments in text order, or an empty scan with the problem that forbids using
        them ("truncated" when a box is never closed, "too_many_boxes", "box_too_long").

    Example:
        >>> find_boxes(r"so \boxed{\frac{1}{2}} or \boxed 3").contents
        ('\\frac{1}{2}', '3')
    """
    count = text.count("\\boxed") + text.count("\\fbox")
    if count == 0:
        return BoxScan(())
    if count > MAX_BOXES:
        return BoxScan((), "too_many_boxes")
    contents: list[str] = []
    resume = 0
    for command in _BOX_COMMAND.finditer(text):
        if command.start() < resume:  # nested inside the previous box
            continue
        status, content, resume = _read_box_argument(text, command.end())
        if status in ("truncated", "box_too_long"):
            return BoxScan((), status)
        if status == "ok":
            contents.append(_unwrap_nested_box(content))
    return BoxScan(tuple(contents))


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


def clean_answer(raw: str) -> str:
    r"""Normalise Unicode and strip wrappers a model puts around an answer.

    Removes outer whitespace, ``$``/``$$``, ``\(...\)``, ``\[...\]``, Markdown ``**``, trailing
    periods and a leading "either" (so that "either 3 or 4" is graded as the hedge it is);
    collapses runs of whitespace to one space.

    Args:
        raw: An answer span, such as a box's content or the text after "The answer is".

    Returns:
        The cleaned answer (possibly empty).

    Example:
        >>> clean_answer(" **$\\frac{1}{2}$**. ")
        '\\frac{1}{2}'
    """
    text = _SPACE_RUN.sub(" ", normalize_unicode(raw)).strip()
    previous = None
    while text != previous:
        previous = text
        text = text.strip().rstrip(".").strip()
        text = text[_EITHER.match(text).end() :] if _EITHER.match(text) else text
        for opener, closer in (("**", "**"), ("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
            if len(text) >= len(opener) + len(closer) and text.startswith(opener) and text.endswith(closer):
                text = text[len(opener) : len(text) - len(closer)]
                break
    return text


def strip_text_wrapper(answer: str) -> str:
    r"""Remove ``\text{...}``-style wrappers (also ``\textbf``, ``\mathrm``, ...) around a whole answer.

    Args:
        answer: A cleaned answer.

    Returns:
        The wrapped content when one wrapper spans the whole answer (repeatedly), else ``answer``.

    Example:
        >>> strip_text_wrapper(r"\textbf{\text{(B)}}")
        '(B)'
        >>> strip_text_wrapper(r"\text{a} + \text{b}")
        '\\text{a} + \\text{b}'
    """
    text = answer.strip()
    while True:
        wrapper = _TEXT_WRAPPER.match(text)
        if wrapper is None:
            return text
        status, content, end = _read_box_argument(text, wrapper.end() - 1)
        if status != "ok" or text[end:].strip():
            return text
        text = content.strip()


def _answer_after_phrase(tail: str, start: int) -> str:
    """The answer text that follows a phrase ending at ``start``."""
    line_end = tail.find("\n", start)
    line = tail[start : line_end if line_end != -1 else len(tail)][:_MAX_ANSWER_CHARS]
    line = line.lstrip(" \t:")
    if line.startswith("**") and line.count("**") % 2 == 1:  # closes a bold phrase: "**Answer:** 5"
        line = line[2:].lstrip(" \t:")
    if not line.strip() and line_end != -1:
        following = tail[line_end : line_end + _NEXT_LINE_CHARS].strip()
        line = following.split("\n", 1)[0] if following else ""
    line = line.strip()
    for opener, closer in _CLOSERS:
        if line.startswith(opener):
            close = line.find(closer, len(opener))
            while close > 0 and closer.startswith("$") and line[close - 1] == "\\":
                close = line.find(closer, close + 1)  # "$\$36$": an escaped dollar is money
            return line[: close + len(closer)] if close != -1 else line
    sentence_end = _SENTENCE_END.search(line)
    return line[: sentence_end.start()] if sentence_end else line


def _box_extraction(scan: BoxScan) -> Extraction:
    """Turn a box scan with at least one box (or a problem) into an Extraction."""
    if scan.problem == "truncated":
        return Extraction(None, "truncated", "A \\boxed{ is never closed, so the output was cut off.")
    if scan.problem == "too_many_boxes":
        return Extraction(None, "too_many_boxes", f"More than {MAX_BOXES} boxes: degenerate output.")
    if scan.problem == "box_too_long":
        return Extraction(None, "box_too_long", f"A box argument is longer than {MAX_BOX_CHARS} characters.")
    distinct: dict[str, str] = {}
    for content in scan.contents:
        cleaned = clean_answer(content)
        key = "".join(cleaned.split())
        if not key:
            continue
        distinct.pop(key, None)  # re-insert so that the last occurrence decides the order
        distinct[key] = cleaned
    answer = clean_answer(scan.contents[-1])
    if not answer:
        return Extraction(None, "boxed", "The last box is empty.")
    candidates = tuple(distinct.values())
    if len(candidates) > 1:
        reason = f"{len(candidates)} boxes hold different answers; the last is {answer[:80]!r}."
        return Extraction(answer, "boxed", reason, sprayed=True, candidates=candidates)
    return Extraction(answer, "boxed", "Taken from the last \\boxed{}.", candidates=(answer,))


def extract_answer_span(completion: str, *, phrase: re.Pattern[str] = ANSWER_PHRASE) -> Extraction:
    """Find the final answer from boxes or answer phrases only (no number fallback).

    Args:
        completion: A full model output.
        phrase: The pattern of phrases that introduce the answer (kinds add their own words).

    Returns:
        An :class:`Extraction`; ``method == "none"`` when neither a box nor a phrase was found.
    """
    scan = find_boxes(completion)
    if scan.problem is not None or scan.contents:
        return _box_extraction(scan)
    tail = normalize_unicode(completion[-TAIL_CHARS:])
    last = None
    for last in phrase.finditer(tail):  # noqa: B007 - only the last match is wanted
        pass
    if last is None:
        return Extraction(None, "none", "No \\boxed{} answer and no answer phrase.")
    answer = clean_answer(_answer_after_phrase(tail, last.end()))
    method = "gsm8k" if last.group(0) == "####" else "phrase"
    if not answer:
        return Extraction(None, method, f"Nothing follows the phrase {last.group(0).strip()!r}.")
    return Extraction(answer, method, f"Taken after {last.group(0).strip()!r}.", candidates=(answer,))


def last_number(text: str) -> str | None:
    r"""Return the last number in the last :data:`TAIL_CHARS` characters of ``text``.

    Numbers are integers (with an optional minus sign), thousands groups ("1,080"), decimals,
    simple fractions ("3/4") and ``\frac{3}{4}``; digits glued to letters ("x2") do not count.

    Args:
        text: Any text.

    Returns:
        The number as written, or None when there is none.

    Example:
        >>> last_number("3 apples and 1,080 pears cost -2.5 dollars, x2")
        '-2.5'
    """
    last = None
    for last in _NUMBER.finditer(normalize_unicode(text[-TAIL_CHARS:])):  # noqa: B007
        pass
    return None if last is None else last.group(0)


def extract_math_answer(completion: str, *, last_number_fallback: bool = True) -> Extraction:
    r"""Extract the final math answer from a full completion (rules in the module docstring).

    Args:
        completion: A full model output.
        last_number_fallback: Use the last number in the text when there is no box and no phrase.

    Returns:
        An :class:`Extraction`; ``answer`` is None when nothing usable was found.

    Example:
        >>> extract_math_answer("So $x = 4$. The answer is $\\frac{1}{2}$.").answer
        '\\frac{1}{2}'
        >>> extract_math_answer("#### 1,080").method
        'gsm8k'
        >>> extract_math_answer("Thus \\boxed{12").answer is None
        True
    """
    found = extract_answer_span(completion)
    if found.method != "none" or not last_number_fallback:
        return found
    number = last_number(completion)
    if number is None:
        return Extraction(None, "none", "No box, no answer phrase and no number.")
    return Extraction(
        number, "last_number", "No box or answer phrase: took the last number.", candidates=(number,)
    )
