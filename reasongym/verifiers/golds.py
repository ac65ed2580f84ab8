r"""Reading golds: a gold answer is an answer someone else wrote, read by the same stages as a completion.

Datasets write their golds in many hands: doubled backslashes from a JSON file escaped twice
(``\\frac{1}{2}``), control characters where a JSON loader read ``\f`` of ``\frac`` as a form feed, HTML
(``3<sup>x</sup>``), ``\quad`` between values, ``\text{only }x=0``, whole solutions that end in a box or an
answer phrase, sentences ("The answer is 15th Day."). A gold that the math grammar cannot read would make
every answer to it ungradable, silently: a dataset with 3% such golds trains on 3% zero rewards.

:func:`readable_gold` reads a math gold in this order, and returns the first form the grammar reads:

1. the gold as written;
2. the gold repaired (``repair``): JSON control characters put back as the commands they were
   (``\x0crac`` is ``\frac``), doubled backslashes before a command undone, HTML dropped, points written
   with semicolons and dotted thousands read as in completions, ``\quad`` and ``\qquad`` read as a space,
   ``\text{ and }`` between values read as a comma, ``m_{\max}`` read as a name, ``\text{...}`` holding
   only words dropped, named
   solutions separated by semicolons read as tuples in the names' order ("p=5,q=2;p=7,q=2" is
   ``(5, 2), (7, 2)``);
3. the repaired gold read as a completion, through the commitment stages
   (:func:`~reasongym.verifiers.extract.extract_math_answer`): the box inside a worked solution, the value
   after "The answer is" (several boxes of one statement are one list). Plain claims (a last sentence, a last number) are not read in a gold: in a
   garbled gold they would find a number nobody wrote as the answer.

A gold that none of these reads stays unreadable: :mod:`reasongym.envs.gold_check` finds them in a dataset,
so that they are reported when the dataset is registered or its files are written (``reasongym data``), never
discovered one zero reward at a time, and an environment can leave those rows out.
"""

from __future__ import annotations

import functools
import re

from reasongym.verifiers.text import dotted_thousands, semicolon_points, without_markup

__all__ = ["readable_gold", "repair"]

_CONTROL_COMMANDS = {"\x0c": "\\f", "\x08": "\\b", "\x07": "\\a", "\t": "\\t", "\x0b": "\\v", "\r": "\\r"}
_CONTROL_BEFORE_LETTER = re.compile("[\x0c\x08\x07\t\x0b\r](?=[A-Za-z])")
_DOUBLED = re.compile(r"\\\\(?=[A-Za-z])")
_SPACING = re.compile(r"\\q?quad|\\[,;:!](?=\S)")
_TEXT_JOINER = re.compile(r"\\(?:text|textrm|mbox)\s*\{\s*(?:and|or|,)\s*\}")
_ASSIGNMENT = re.compile(r"\s*([A-Za-z](?:_\{?\w{1,3}\}?)?)\s*=\s*([^=,;]+)")
_NAMED_SUBSCRIPT = re.compile(r"_\{?\s*\\(max|min)\s*\}?")
_PROSE_TEXT = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s*\{\s*[A-Za-z][A-Za-z ,.'-]*\}")


def repair(gold: str) -> str:
    r"""A gold with the damage of its file undone (rule 2 of the module docstring).

    Example:
        >>> repair("\x0crac{1}{2}")
        '\\frac{1}{2}'
    """
    text = _CONTROL_BEFORE_LETTER.sub(lambda found: _CONTROL_COMMANDS[found.group(0)], gold)
    if "\\\\" in text and _DOUBLED.search(text):
        text = _DOUBLED.sub(r"\\", text)  # "\\frac" written twice over; "\\ " between matrix rows stays
    text = _SPACING.sub(" ", dotted_thousands(semicolon_points(without_markup(text))))
    text = _NAMED_SUBSCRIPT.sub(r"_{\1}", text)  # "m_{\max}" names a value, it applies no max
    return _PROSE_TEXT.sub(" ", _TEXT_JOINER.sub(", ", text)).strip()  # "6 \text{ and } 8" lists 6, 8


def _solution_groups(text: str) -> str | None:
    """Named solutions separated by semicolons as tuples in the names' order: "p=5,q=2;p=7,q=2" is (5, 2), (7, 2)."""
    groups = [group.strip() for group in text.strip().strip("$").split(";")]
    if len(groups) < 2:
        return None
    rows = [[_ASSIGNMENT.fullmatch(item) for item in group.split(",")] for group in groups]
    matched = [[found for found in row if found is not None] for row in rows]
    if any(len(found) != len(row) for found, row in zip(matched, rows, strict=True)):
        return None
    names = [[found.group(1) for found in row] for row in matched]
    if any(row != names[0] or len(set(row)) != len(row) for row in names):
        return None
    return ", ".join("(" + ", ".join(found.group(2).strip() for found in row) + ")" for row in matched)


def _parses(text: str) -> bool:
    from reasongym.verifiers.math.nodes import AnswerRejected
    from reasongym.verifiers.math.remembered import gold_tree

    try:  # the cached tree is the one the grader takes next: the gold that reads is parsed once
        return not isinstance(gold_tree(text), AnswerRejected)
    except RecursionError:
        return False


@functools.lru_cache(maxsize=8192)
def readable_gold(gold: str) -> str | None:
    r"""The first form of a math gold that the grammar reads (rules 1-3 of the module docstring), or None.

    Args:
        gold: The gold answer as the dataset writes it.

    Returns:
        ``gold`` itself when it reads; else its repaired form, or the answer that form commits to; None
        when no form reads.

    Example:
        >>> readable_gold(r"So the answer is: \[ \boxed{32349} \]")
        '32349'
    """
    grouped = _solution_groups(gold)  # read before the grammar, which takes ";" for a plain separator
    if grouped is not None and _parses(grouped):
        return grouped
    damaged = _CONTROL_BEFORE_LETTER.search(gold) is not None  # "\x0crac{1}{2}" parses, as r*a*c*...
    if not damaged and _parses(gold):
        return gold
    repaired = repair(gold)
    if repaired != gold and _parses(repaired):
        return repaired
    from reasongym.verifiers.extract import extract_math_answer

    committed = extract_math_answer(
        repaired, last_number_fallback=False
    ).answer  # a box or phrase, never a stray number
    return committed if committed and _parses(committed) else None
