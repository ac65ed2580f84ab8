r"""AIME-style integer answers, 0 to 999. No sympy and no worker: plain string and int work.

The answer is found as for math (:func:`~reasongym.verifiers.extract.extract_math_answer`): the last
complete box, else the last answer phrase, else (with ``last_number_fallback``) the last number.

Strict but fair reading of the found answer:

- Accepted: digits with leading zeros ("042" is 42), an optional "+", an integral decimal ("42.0",
  "42.00": the value is exactly 42), a leading "x =" / "m + n =" (the part after the last "="),
  ``\text{}``/``$``/``**`` wrappers, and trailing words without digits ("42 ways").
- An exact but unevaluated value is its value: ``\frac{500}{4}`` is 125, ``2^5 - 1`` is 31 (issue 50: these
  were refused for integer golds); it is read by the math grammar and evaluated with fractions.
- Wrong: a non-integral value ("42.5", ``\frac{85}{2}``), a value outside 0-999 (including negatives), and
  any answer holding a second number ("17 or 18", "42, 43"): a hedge.
- Unparseable: no digits at all.

Several boxes with different values are answer spraying: wrong. A gold that is not an integer in
0-999 cannot be graded (``correct=None``).
"""

from __future__ import annotations

import re

from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.extract import Extraction, extract_math_answer, strip_text_wrapper

__all__ = ["INTEGER_RANGE", "parse_integer_answer", "verify_integer"]

INTEGER_RANGE = range(0, 1000)
"""The values an AIME answer can take."""

_LEADING_INTEGER = re.compile(r"([+-]?)\s*(\d+)(?:\.(\d+))?")
_DIGIT = re.compile(r"\d")
_GOLD = re.compile(r"\s*\+?0*(\d{1,4})(?:\.0*)?\s*")
_EXPONENT = re.compile(
    r"\s*[eE](?![A-Za-z])"
)  # "42e", "4.2e1" (its digits are caught apart); "42 Euro" is no exponent
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\%|%")


def parse_integer_answer(answer: str) -> tuple[int | None, str]:
    """Read an extracted answer as one integer (rules in the module docstring).

    Args:
        answer: An extracted, cleaned answer such as "042", "x = 42" or "17 or 18".

    Returns:
        ``(value, problem)``: the integer and "" when it reads as one; otherwise None and why
        ("no digits", "not an integer", "more than one number"). The value is not range-checked,
        except that more than 4 significant digits give the value 10**4 (out of range anyway).

    Example:
        >>> parse_integer_answer("$x = 042$")
        (42, '')
        >>> parse_integer_answer("17 or 18")
        (None, 'more than one number')
    """
    text = strip_text_wrapper(answer.strip().strip("$*` ").rstrip(". "))
    if "=" in text:
        text = text.rsplit("=", 1)[1].strip()
    text = strip_text_wrapper(text)
    found = _LEADING_INTEGER.match(text)
    if found is None:
        return None, ("not an integer" if _DIGIT.search(text) else "no digits")
    sign, digits, decimals = found.groups()
    if decimals is not None and decimals.strip("0"):
        return None, "not an integer"
    rest = _DEGREES.sub("", text[found.end() :])
    if _DIGIT.search(rest) or rest.lstrip()[:1] in ("/", "^", "\\", "{", "!") or _EXPONENT.match(rest):
        return None, "more than one number" if _DIGIT.search(rest) else "not an integer"
    significant = digits.lstrip("0") or "0"
    value = 10**4 if len(significant) > 4 else int(significant)  # never int() a million digits
    return (-value if sign == "-" else value), ""


def _exact_integer(answer: str) -> int | None:
    r"""The integer an unevaluated exact answer is (``\frac{500}{4}``, ``2^5 - 1``), or None.

    The answer is read by the math grammar and evaluated exactly with fractions (never sympy, never a
    float); a hedge, a list, a variable or a non-integer value is None.
    """
    from reasongym.verifiers.math.evaluate import exact_value  # the grammar loads on first use
    from reasongym.verifiers.math.nodes import AnswerRejected
    from reasongym.verifiers.math.parser import parse_answer

    try:
        value = exact_value(parse_answer(answer))
    except (AnswerRejected, RecursionError):
        return None
    return int(value) if value is not None and value.denominator == 1 and abs(value) < 10**4 else None


def _grade_one(answer: str, gold_value: int) -> tuple[int | None, str]:
    """(value, problem) for one candidate, with the range check folded into the problem."""
    value, problem = parse_integer_answer(answer)
    if problem in ("not an integer", "more than one number"):
        exact = _exact_integer(answer)
        if exact is not None:
            value, problem = exact, ""
    if value is not None and value not in INTEGER_RANGE:
        return value, f"{value if abs(value) < 10**4 else 'a number'} is outside 0-999"
    return value, problem


def verify_integer(completion: str, gold: str, *, last_number_fallback: bool = True) -> Verdict:
    r"""Grade an AIME-style completion against an integer gold in 0-999.

    Args:
        completion: A full model output.
        gold: The expected integer as a string ("42", "042").
        last_number_fallback: Use the last number when there is no box and no answer phrase.

    Returns:
        The verdict; ``extracted`` is the integer as a string when one was read.

    Example:
        >>> verify_integer(r"... so the answer is $\boxed{042}$.", "42").correct
        True
        >>> verify_integer("The answer is 42.5", "42").outcome.value
        'wrong'
    """
    gold_match = _GOLD.fullmatch(gold)
    gold_value = int(gold_match.group(1)) if gold_match else None
    if gold_value is None or gold_value not in INTEGER_RANGE:
        return Verdict(None, Outcome.UNPARSEABLE, None, f"Gold {gold[:40]!r} is not an integer in 0-999.")
    found = extract_math_answer(completion, last_number_fallback=last_number_fallback)
    if found.answer is None:
        return Verdict(False, Outcome.UNPARSEABLE, None, found.reason)
    if (found.sprayed or found.hedged) and _values_differ(found):
        reason = found.reason if found.hedged else "Boxes hold different values (answer spraying)."
        return Verdict(False, Outcome.WRONG, found.answer[:200], reason)
    value, problem = _grade_one(found.answer, gold_value)
    if problem == "no digits":
        return Verdict(False, Outcome.UNPARSEABLE, found.answer[:200], "The answer holds no integer.")
    if problem:
        return Verdict(False, Outcome.WRONG, found.answer[:200], f"Not a single integer in 0-999: {problem}.")
    if value == gold_value:
        return Verdict(True, Outcome.CORRECT, str(value), f"{value} equals the gold.")
    return Verdict(False, Outcome.WRONG, str(value), f"{value} is not the gold {gold_value}.")


def _values_differ(found: Extraction) -> bool:
    """Whether the candidates read as more than one value; for a hedge, an unreadable candidate differs too."""
    values = {_grade_one(candidate, 0)[0] for candidate in found.candidates}
    return len(values) > 1 or (found.hedged and None in values)
