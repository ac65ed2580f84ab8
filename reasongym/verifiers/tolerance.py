"""Rounding policies: how far a math answer may be from its gold, by name, and recorded with the verdict.

Training rewards compare exactly (``"exact"``, the default): an answer is the gold, or equal to it, or a
decimal that the gold's own shown digits round to (:mod:`reasongym.verifiers.math.decimals`). Some sets'
annotators accept answers rounded more coarsely, or golds computed with rounded constants; to evaluate
against such a set, name a looser policy (``verify(..., tolerance="shown")``,
``ReasoningEnvConfig(tolerance=...)``, ``reasongym eval --tolerance``), and the verdict's version records it
(``math/v6+shown``), so that records graded under different policies are never mixed:

- ``exact``: no rounding beyond the gold's own digits.
- ``shown``: also an answer that is the gold rounded to the answer's own shown precision ("1.3%" for a
  gold 1.27%, "300" for 299.94, "2.65" for 2.653; never "784" for 785.12: rounded, that gold is 785).
- ``relative``: also an answer within 0.2% of the gold (golds computed with pi as 22/7 or 3.14).

Only scalar answers (numbers, percents, quantities in the gold's unit) are ever rounded; lists, intervals
and expressions with variables compare exactly under every policy.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction

from reasongym.errors import ConfigError

__all__ = ["RELATIVE_TOLERANCE", "TOLERANCES", "check_tolerance", "within_tolerance"]

TOLERANCES = ("exact", "shown", "relative")
"""The rounding policies, by name."""
RELATIVE_TOLERANCE = Fraction(2, 1000)
"""The largest relative distance the ``relative`` policy accepts."""
_MAX_DIGITS = 60


def check_tolerance(tolerance: object) -> str:
    """The policy's name, or ConfigError naming the bad value and the allowed ones."""
    if tolerance not in TOLERANCES:
        raise ConfigError(f"tolerance={tolerance!r} is not a rounding policy; valid: {', '.join(TOLERANCES)}")
    return str(tolerance)


def _scalar_value(text: str) -> tuple[Fraction, int | None, str] | None:
    """(exact value, shown decimals of a plain literal or None, the unit's name) of a scalar answer, or None."""
    from reasongym.verifiers.math import nodes as ast
    from reasongym.verifiers.math.evaluate import exact_value, numeric_value
    from reasongym.verifiers.math.parser import parse_answer

    try:
        node = parse_answer(text)
    except (ast.AnswerRejected, RecursionError):
        return None
    unit = ""
    if isinstance(node, ast.Labeled):
        node = node.value
    if isinstance(node, ast.Quantity):
        node, unit = node.value, node.unit.name
    if isinstance(node, ast.Percent):
        node, unit = node.arg, "%"
    if not ast.is_scalar(node) or ast.free_symbols(node):
        return None
    literal = node.arg if isinstance(node, ast.Neg) else node
    shown = (literal.decimals or 0) if isinstance(literal, ast.Num) else None
    try:
        value = exact_value(node)
    except ZeroDivisionError:  # 4/0 has no value to round: exact comparison alone decides
        return None
    if value is None:
        approximate = numeric_value(node, 30)
        if approximate is None or not hasattr(approximate, "real") or approximate.imag:
            return None
        value = Fraction(str(approximate.real))
    return value, shown, unit


def _rounded(value: Fraction, decimals: int) -> Fraction:
    with localcontext() as context:
        context.prec = _MAX_DIGITS
        exact = Decimal(value.numerator) / Decimal(value.denominator)
        return Fraction(exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def within_tolerance(tolerance: str, answer: str, gold: str) -> str | None:
    """Why ``answer`` is accepted for ``gold`` under a looser policy, or None (the module docstring's rules).

    Example:
        >>> within_tolerance("shown", "1.3%", "1.27%")
        "the gold rounded to the answer's 1 decimals (tolerance 'shown')"
    """
    if tolerance == "exact":
        return None
    answer_value, gold_value = _scalar_value(answer), _scalar_value(gold)
    if answer_value is None or gold_value is None or answer_value[2] != gold_value[2]:
        return None
    (value, shown, _), (target, _, _) = answer_value, gold_value
    if tolerance == "shown":
        if shown is not None and shown < _MAX_DIGITS and _rounded(target, shown) == value:
            return f"the gold rounded to the answer's {shown} decimals (tolerance 'shown')"
        return None
    if target and abs(value - target) <= RELATIVE_TOLERANCE * abs(target):
        return f"within {float(RELATIVE_TOLERANCE):.1%} of the gold (tolerance 'relative')"
    return None
