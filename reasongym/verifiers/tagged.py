r"""Find a final answer that may be any text (a word, a list, a grid of several lines).

Tasks whose answers are not math (reasoning-gym's puzzles: grids, move lists, words, JSON) are asked to
put the answer between ``<answer>`` and ``</answer>``, the convention of reasoning-gym, GEM and
verifiers. :func:`extract_tagged_answer` reads, in order:

1. When the completion closes a ``<think>`` block, the text after the last ``</think>``; the whole
   completion only when that holds no tag, box or answer phrase.
2. The content of the last complete ``<answer>...</answer>`` (tags in any case; several lines kept
   as written, outer whitespace removed). A ``\boxed{}`` that is the whole content is unwrapped. An
   ``<answer>`` opened after the last ``</answer>`` and never closed means the output was cut off:
   no answer (a truncated answer is never graded on its first half).
3. Otherwise the last ``\boxed{}`` or answer phrase, as :func:`~reasongym.verifiers.extract.extract_answer_span`
   finds them (one line for a phrase).

No last-number fallback: for these answers a stray number is not an answer. An answer longer than
:data:`MAX_TAGGED_CHARS` characters is refused (``method == "answer_too_long"``).
"""

from __future__ import annotations

import re

from reasongym.verifiers.extract import Extraction, extract_answer_span

__all__ = ["MAX_TAGGED_CHARS", "extract_tagged_answer"]

MAX_TAGGED_CHARS = 20_000
"""Longest answer read between tags (a 30x30 grid is under 2,000 characters)."""
_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE = re.compile(r"</answer>", re.IGNORECASE)
_THINK_END = "</think>"
_WHOLE_BOX = re.compile(r"^\\(?:boxed|fbox)\s*\{(?P<inner>.*)\}$", re.DOTALL)


def _last(pattern: re.Pattern[str], text: str, end: int) -> re.Match[str] | None:
    last = None
    for last in pattern.finditer(text, 0, end):  # noqa: B007 - only the last match is wanted
        pass
    return last


def _from_tags(text: str) -> Extraction | None:
    """The answer in the last complete tag pair; None when the text has no ``<answer>`` tag at all."""
    opened_last = _last(_OPEN, text, len(text))
    if opened_last is None:
        return None
    close = _last(_CLOSE, text, len(text))
    if close is None or close.start() < opened_last.start():
        return Extraction(None, "truncated", "An <answer> tag is opened and never closed (cut off).")
    opened = _last(_OPEN, text, close.start())
    if opened is None:
        return None
    inner = text[opened.end() : close.start()].strip()
    if len(inner) > MAX_TAGGED_CHARS:
        reason = f"The tagged answer has {len(inner):,} characters, over {MAX_TAGGED_CHARS:,}."
        return Extraction(None, "answer_too_long", reason)
    whole_box = _WHOLE_BOX.match(inner)
    if whole_box is not None:
        inner = whole_box["inner"].strip()
    if not inner:
        return Extraction(None, "tag", "The <answer> tags are empty.")
    return Extraction(inner, "tag", "Taken from the last <answer>...</answer>.", candidates=(inner,))


def _extract(text: str) -> Extraction:
    tagged = _from_tags(text)
    return tagged if tagged is not None else extract_answer_span(text)


def extract_tagged_answer(completion: str) -> Extraction:
    r"""Extract a final answer of any shape from a full completion (rules in the module docstring).

    Args:
        completion: A full model output.

    Returns:
        An :class:`~reasongym.verifiers.extract.Extraction`; ``method`` is "tag", "boxed", "phrase" or
        "gsm8k" with an answer, or "none", "truncated", "answer_too_long" (and the box refusals) without.

    Example:
        >>> extract_tagged_answer("Rows first. <answer>1 0\n0 1</answer>").answer
        '1 0\n0 1'
        >>> extract_tagged_answer("<answer>1 0</answer> wait <answer>0 1").method
        'truncated'
        >>> extract_tagged_answer("So the final answer is \\boxed{Friday}.").answer
        'Friday'
    """
    think_end = completion.rfind(_THINK_END)
    if think_end != -1:
        found = _extract(completion[think_end + len(_THINK_END) :])
        if found.method != "none":
            return found
        completion = completion.replace(_THINK_END, "\n")
    return _extract(completion)
