r"""Countdown: is the completion's expression a valid way to reach the target with the given numbers?

The gold answer encodes the puzzle, not a solution (many expressions can be right)::

    target=24; numbers=3,5,7,1                      each number used exactly once (the default)
    target=24; numbers=3,5,7,1; use=at_most_once    each number used at most once

``numbers`` is a multiset: ``numbers=2,2,5`` allows two 2s. Spaces around ``;``, ``=`` and ``,`` are
ignored. A gold that does not follow this format cannot be graded (``correct=None``).

Where the expression is looked for, in order: the last ``<answer>...</answer>`` (a ``\\boxed{}``
inside it is unwrapped), then the last ``\\boxed{}``, then the last answer phrase ("Answer: ...",
"The answer is ..."). Several boxes holding different expressions are answer spraying: wrong.

Without any of these, the expression that ends the last line is read (a bold line
``**(7 − 3) × (5 + 1) = 24**``, a code block, "所以表达式是 (7-3)×(5+1)=24。"), when it holds an operator.

How the expression is read: non-negative integer literals, ``+ - * /`` (``×``, ``÷``, ``·``,
``\\times``, ``\\div``, ``\\cdot`` too) and parentheses (``\\left(`` / ``\\right)`` too), with the
usual precedence; no unary minus, no decimals; the only implicit multiplication is between brackets
(``(7-3)(5+1)``). It is parsed by a small
recursive-descent parser (never ``eval``) and evaluated exactly with ``Fraction``; intermediate
fractions are allowed (``(1+1/3)*6`` is 8). One trailing or leading ``= N`` is allowed, and N must
be the target.

Outcomes: CORRECT when the numbers obey the use rule and the value equals the target. WRONG for a
number that is not available (or used too often), a number left unused under the exactly-once
rule, division by zero, a value other than the target, or a claimed ``= N`` that is not the
target. UNPARSEABLE when no expression is found or it does not parse. REFUSED when the expression
is longer than :data:`MAX_EXPRESSION_CHARS` characters or nests parentheses deeper than
:data:`MAX_DEPTH`.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass

from reasongym.errors import ConfigError
from reasongym.verifiers.arithmetic import MAX_DEPTH, evaluate, normalize_expression, parse_expression
from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.claims import Extraction
from reasongym.verifiers.extract import clean_answer, extract_answer_span
from reasongym.verifiers.pipeline import commit
from reasongym.verifiers.text import normalize_unicode

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPRESSION_CHARS",
    "CountdownPuzzle",
    "format_countdown_gold",
    "parse_countdown_gold",
    "verify_countdown",
]

MAX_EXPRESSION_CHARS = 500
"""Longer expressions are refused (a Countdown answer uses a handful of numbers)."""
USE_RULES = ("each_once", "at_most_once")
"""``each_once``: every number exactly as often as listed; ``at_most_once``: no more often."""

_GOLD_FIELD = re.compile(r"\s*(target|numbers|use)\s*=\s*([^;]*?)\s*")
_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class CountdownPuzzle:
    """A Countdown puzzle as its gold string encodes it.

    Attributes:
        target: The value to reach.
        numbers: The available numbers, a multiset in the order given.
        use: One of :data:`USE_RULES`.
    """

    target: int
    numbers: tuple[int, ...]
    use: str = "each_once"


def format_countdown_gold(target: int, numbers: tuple[int, ...] | list[int], use: str = "each_once") -> str:
    """Encode a puzzle as its gold string, ``"target=24; numbers=3,5,7,1"``.

    Args:
        target: The value to reach.
        numbers: The available numbers (non-negative integers).
        use: One of :data:`USE_RULES`; ``each_once`` is the default and is left out of the string.

    Returns:
        The gold string that :func:`parse_countdown_gold` reads back.

    Raises:
        ConfigError: For an unknown use rule, or an empty or negative number list.

    Example:
        >>> format_countdown_gold(24, [3, 5, 7, 1], use="at_most_once")
        'target=24; numbers=3,5,7,1; use=at_most_once'
    """
    if use not in USE_RULES:
        close = difflib.get_close_matches(str(use), USE_RULES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"use={use!r} is not one of {list(USE_RULES)}{hint}")
    if not numbers or any(n < 0 for n in numbers):
        raise ConfigError(f"numbers={list(numbers)!r} must be a non-empty list of non-negative integers")
    text = f"target={target}; numbers={','.join(str(n) for n in numbers)}"
    return text if use == "each_once" else f"{text}; use={use}"


def parse_countdown_gold(gold: str) -> CountdownPuzzle | None:
    """Read a gold string (format in the module docstring); None when it is malformed.

    Example:
        >>> parse_countdown_gold("target=24; numbers=3,5,7,1")
        CountdownPuzzle(target=24, numbers=(3, 5, 7, 1), use='each_once')
    """
    fields: dict[str, str] = {}
    for part in gold.split(";"):
        match = _GOLD_FIELD.fullmatch(part)
        if match is None or match.group(1) in fields:
            return None
        fields[match.group(1)] = match.group(2)
    use = fields.get("use", "each_once")
    target, numbers = fields.get("target", ""), fields.get("numbers", "")
    if use not in USE_RULES or not re.fullmatch(r"-?\d{1,12}", target):
        return None
    if not re.fullmatch(r"\d{1,12}(?:\s*,\s*\d{1,12}){0,63}", numbers):
        return None
    return CountdownPuzzle(int(target), tuple(int(n) for n in numbers.split(",")), use)


_EXPRESSION_CHARS = frozenset("0123456789 \t()+-*/=\\abcdefghijklmnopqrstuvwxyz")
_OPERATOR = re.compile(r"[+\-*/]|\\(?:times|div|cdot)")


def _last_match(pattern: re.Pattern[str], text: str, end: int) -> re.Match[str] | None:
    last = None
    for last in pattern.finditer(text, 0, end):  # noqa: B007 - only the last match is wanted
        pass
    return last


def _answer_tag(completion: str) -> str | None:
    """The content of the last complete ``<answer>...</answer>``, found in linear time."""
    close = _last_match(_ANSWER_CLOSE, completion, len(completion))
    opened = _last_match(_ANSWER_OPEN, completion, close.start()) if close else None
    return completion[opened.end() : close.start()] if opened and close else None


def _plain_expression(part: str) -> Extraction | None:
    """The expression that ends the last line ("**(7 − 3) × (5 + 1) = 24**", a code block, "所以表达式是 ..."), or None."""
    lines = [line for line in part.replace("```", "\n").splitlines() if line.strip()]
    if not lines:
        return None
    line = normalize_unicode(lines[-1][-MAX_EXPRESSION_CHARS:]).replace("**", " ").rstrip(" \t.。`$")
    start = len(line)
    while start > 0 and line[start - 1] in _EXPRESSION_CHARS:  # a scan from the end: linear in the line
        start -= 1
    expression = line[start:].strip()
    if not any(char.isdigit() for char in expression) or not _OPERATOR.search(expression):
        return None
    return Extraction(
        expression, "sentence", "Read the expression that ends the last line.", candidates=(expression,)
    )


def _extract(completion: str) -> tuple[str | None, Verdict | None]:
    """The expression text, or the verdict that ends grading (nothing found, spraying, refused)."""
    inner = _answer_tag(completion)
    if inner is not None:
        boxed = extract_answer_span(inner) if "\\boxed" in inner or "\\fbox" in inner else None
        return (boxed.answer if boxed and boxed.answer else clean_answer(inner)), None
    found = commit(completion, lambda claim, _after: claim, _plain_expression) or extract_answer_span(
        completion
    )
    if found.answer is None:
        outcome = (
            Outcome.REFUSED if found.method in ("too_many_boxes", "box_too_long") else Outcome.UNPARSEABLE
        )
        return None, Verdict(False, outcome, None, found.reason)
    if found.sprayed:
        reason = f"{len(found.candidates)} boxes hold different expressions (answer spraying)."
        return None, Verdict(False, Outcome.WRONG, found.answer[:200], reason)
    return found.answer, None


def _split_claim(expression: str, puzzle: CountdownPuzzle) -> tuple[str, Verdict | None]:
    """Strip one ``= N`` (either side); a claimed N other than the target is wrong."""
    sides = expression.split("=")
    if len(sides) == 1:
        return expression, None
    if len(sides) > 2:
        return expression, Verdict(
            False, Outcome.UNPARSEABLE, expression, "More than one '=' in the expression."
        )
    left, right = (side.strip() for side in sides)
    if _DIGITS.fullmatch(right):
        claimed, kept = right, left
    elif _DIGITS.fullmatch(left):
        claimed, kept = left, right
    else:
        claimed = kept = None
    if claimed is None or kept is None:
        return expression, Verdict(False, Outcome.UNPARSEABLE, expression, "Neither side of '=' is a number.")
    if int(claimed) != puzzle.target:
        return kept, Verdict(
            False, Outcome.WRONG, expression, f"Claims {claimed}, but the target is {puzzle.target}."
        )
    return kept, None


def _check_numbers(used: list[int], puzzle: CountdownPuzzle) -> str | None:
    """Why the numbers used break the puzzle's rule, or None when they obey it."""
    available, counted = Counter(puzzle.numbers), Counter(used)
    for number, times in counted.items():
        if times > available[number]:
            have = available[number]
            return f"{number} is used {times} times but is available {have} time{'s' if have != 1 else ''}."
    if puzzle.use == "each_once" and counted != available:
        unused = sorted((available - counted).elements())
        return f"Every number must be used exactly once; unused: {', '.join(map(str, unused))}."
    return None


def _grade(expression: str, puzzle: CountdownPuzzle) -> Verdict:
    """Grade a cleaned expression against a parsed puzzle."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        reason = (
            f"The expression has {len(expression):,} characters, over the limit of {MAX_EXPRESSION_CHARS}."
        )
        return Verdict(False, Outcome.REFUSED, expression[:200], reason)
    body, claim_verdict = _split_claim(expression, puzzle)
    if claim_verdict is not None and claim_verdict.outcome is Outcome.UNPARSEABLE:
        return claim_verdict
    parsed = parse_expression(body)
    if isinstance(parsed, str):
        outcome = Outcome.REFUSED if parsed.startswith("Not graded") else Outcome.UNPARSEABLE
        return Verdict(False, outcome, expression[:200], parsed)
    tree, literals = parsed
    if claim_verdict is not None:
        return claim_verdict
    broken_rule = _check_numbers(literals, puzzle)
    if broken_rule is not None:
        return Verdict(False, Outcome.WRONG, expression, broken_rule)
    try:
        value = evaluate(tree)
    except ZeroDivisionError:
        return Verdict(False, Outcome.WRONG, expression, "The expression divides by zero.")
    if value != puzzle.target:
        shown = str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
        return Verdict(
            False, Outcome.WRONG, expression, f"The expression equals {shown}, not {puzzle.target}."
        )
    return Verdict(
        True, Outcome.CORRECT, expression, f"The expression reaches {puzzle.target} using allowed numbers."
    )


def verify_countdown(completion: str, gold: str) -> Verdict:
    r"""Grade a Countdown completion: extract the expression, check its numbers and its value.

    Args:
        completion: The full model output.
        gold: The puzzle, ``"target=24; numbers=3,5,7,1"`` (format in the module docstring).

    Returns:
        The :class:`~reasongym.verifiers.base.Verdict`; ``extracted`` is the expression found.
        ``correct`` is None when the gold is malformed.

    Example:
        >>> verify_countdown("<answer>(7 - 3) * (5 + 1)</answer>", "target=24; numbers=3,5,7,1").correct
        True
        >>> verify_countdown(r"\\boxed{7 * 3 + 5 - 1}", "target=24; numbers=3,5,7,1").outcome.value
        'wrong'
    """
    puzzle = parse_countdown_gold(gold)
    if puzzle is None:
        reason = f"The gold {gold[:80]!r} is not 'target=<int>; numbers=<int>,...[; use=<rule>]'."
        return Verdict(None, Outcome.UNPARSEABLE, None, reason)
    found, stop = _extract(completion)
    if stop is not None:
        return stop
    expression = normalize_expression(found or "")
    if not expression:
        return Verdict(False, Outcome.UNPARSEABLE, None, "The answer is empty.")
    return _grade(expression, puzzle)
