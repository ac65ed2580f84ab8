r"""Decimals: when a decimal gold is its own value, when it is a rounding, and when a decimal states a fraction.

Three rules (the grading docstring in :mod:`grade` states them for users, with the same reasons):

1. **A decimal gold is exact.** GSM8K-style golds (``0.3``, ``2.5``, ``12.50``) are the values
   themselves, so ``0.25``, ``0.34`` and ``0.349`` are not ``0.3`` although they round to it, and
   ``12.504`` is not ``12.50``. Only a gold printed from a float (``1.4142135623730951``, more digits
   than a double holds) is read to a double's precision.
2. **A decimal gold may round a value it cannot write out**, when it shows at least two decimals and
   two significant digits (``0.33``, ``0.14``, ``1.41``): an answer whose decimals never end (``1/3``,
   ``1/7``, ``\sqrt2``, ``\pi``; written without a decimal point) is right when it rounds to the gold,
   and so is a longer decimal of such a fraction with a denominator of at most 12 (``0.333`` and
   ``0.3333`` state ``1/3``, so they are right for ``0.33``), when that fraction rounds to the gold.
   Any other answer must equal the gold: ``0.334`` is not ``0.33`` (no fraction a reader knows is
   0.334), and ``1/8`` (0.125, whose decimals end) is not ``0.13``. A gold with one decimal or one
   significant digit (``0.3``, ``2.5``, ``0.05``) is too coarse to be read as a rounding: ``0.3``
   rejects ``1/3``.
3. **An exact fraction gold whose decimals never end** (``1/3``, ``2/7``): a decimal answer with at
   least three significant digits is right when it is the gold rounded or cut off at its last digit
   (``0.333``, ``0.3333``; ``0.667`` and ``0.666`` for ``2/3``), and wrong otherwise (``0.3``,
   ``0.67``, ``0.668``). Three digits, because two (``0.67``) are as likely another value's rounding
   as this one's. An irrational gold (``\pi``, ``\sqrt2``) asks for its exact form: a decimal needs
   about ten significant digits (see :mod:`numeric`).

Everything here is exact arithmetic on ``Fraction`` (rule 2 evaluates an irrational answer with
mpmath); nothing calls sympy.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.cost import estimate_digits
from reasongym.verifiers.math.evaluate import exact_value, numeric_context, numeric_value
from reasongym.verifiers.math.nodes import Node

__all__ = ["Shown", "decimal_states", "rounds_to_gold", "shown_decimal", "terminates"]

_DOUBLE_PRECISION = Fraction(1, 2**52)
_MAX_DENOMINATOR = 12
_MIN_ANSWER_DIGITS = 3
_MAX_DPS = 300


def terminates(value: Fraction) -> bool:
    """True when the decimal expansion ends (3, 0.75): a decimal can then state the value exactly."""
    den = value.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    return den == 1


@dataclass(frozen=True)
class Shown:
    r"""A decimal gold as written: its exact value, the decimals it shows and its significant digits.

    ``decimals`` counts places after the point, scientific notation included (``6.67 \times 10^{-1}``
    shows 3; ``1.5e3`` shows -2, to the hundreds).
    """

    value: Fraction
    decimals: int
    digits: int

    def scaled(self, power: int) -> Shown:
        """The same gold times ``10**power`` (a percent gold read as a fraction: ``power = -2``)."""
        return Shown(self.value * Fraction(10) ** power, self.decimals - power, self.digits)

    @property
    def half_unit(self) -> Fraction:
        """Half a unit in the last shown digit: how far a value it rounds may lie from it."""
        return Fraction(1, 2) * Fraction(10) ** -self.decimals

    @property
    def float_slack(self) -> Fraction | None:
        """A double's precision, for a gold printed from a float (it shows more digits than a double holds)."""
        slack = abs(self.value) * _DOUBLE_PRECISION
        return slack if slack > self.half_unit else None

    @property
    def may_round(self) -> bool:
        """Rule 2 applies: at least two decimals and two significant digits."""
        return self.decimals >= 2 and self.digits >= 2


def _digits(literal: ast.Num) -> int:
    return len(str(literal.mantissa)) if literal.mantissa else 1


def _literal(node: Node) -> tuple[ast.Num, int] | None:
    """A decimal literal and its sign: ``0.333`` or ``-0.333``; else None."""
    sign = 1
    if isinstance(node, ast.Neg):
        node, sign = node.arg, -1
    if isinstance(node, ast.Num) and node.decimals is not None:
        return node, sign
    return None


def shown_decimal(node: Node) -> Shown | None:
    r"""How a decimal gold was written (``0.33``, ``-1.25``, ``6.67 \times 10^{-1}``); None for any other gold."""
    literal, sign = _literal(node) or (None, 1)
    if literal is not None:
        return Shown(sign * literal.value, literal.decimals or 0, _digits(literal))
    inner, sign = (node.arg, -1) if isinstance(node, ast.Neg) else (node, 1)
    if not (isinstance(inner, ast.Mul) and not inner.den and len(inner.num) == 2):
        return None
    number, power = inner.num
    if not (isinstance(number, ast.Num) and number.decimals is not None and isinstance(power, ast.Pow)):
        return None
    exponent = power.exp.arg if isinstance(power.exp, ast.Neg) else power.exp
    if power.base != ast.Num(10) or not ast.is_int_literal(exponent) or exponent.mantissa > 400:
        return None
    shift = -exponent.mantissa if isinstance(power.exp, ast.Neg) else exponent.mantissa
    return Shown(sign * number.value, number.decimals, _digits(number)).scaled(shift)


def _rounded_or_cut(value: Fraction, written: Fraction, decimals: int) -> bool:
    """Whether ``written`` is ``value`` rounded, or cut off toward zero, at ``decimals`` places."""
    unit = Fraction(10) ** -decimals
    if abs(written - value) <= unit / 2:
        return True
    same_side = (written >= 0) == (value >= 0)
    return same_side and 0 <= abs(value) - abs(written) < unit


def decimal_states(gold: Fraction, pred: Node) -> bool | None:
    """Rule 3: whether a decimal answer states a fraction gold whose decimals never end.

    Args:
        gold: The gold's exact value.
        pred: The parsed answer.

    Returns:
        None when the rule does not apply (the gold's decimals end, or the answer is not a single
        decimal literal); else whether the decimal has three or more significant digits and is the
        gold rounded or cut off at its last digit.
    """
    found = _literal(pred)
    if found is None or terminates(gold):
        return None
    literal, sign = found
    if _digits(literal) < _MIN_ANSWER_DIGITS:
        return False
    return _rounded_or_cut(gold, sign * literal.value, literal.decimals or 0)


def _small_fraction_rounding(shown: Shown, literal: ast.Num, sign: int) -> bool:
    """A longer decimal of a fraction with a small denominator (rule 2), which rounds to the gold."""
    decimals = literal.decimals or 0
    if decimals <= shown.decimals or _digits(literal) < _MIN_ANSWER_DIGITS:
        return False
    written = sign * literal.value
    for denominator in range(3, _MAX_DENOMINATOR + 1):
        fraction = Fraction(round(written * denominator), denominator)
        if terminates(fraction) or not _rounded_or_cut(fraction, written, decimals):
            continue
        if abs(fraction - shown.value) <= shown.half_unit:
            return True
    return False


def _irrational_rounding(shown: Shown, pred: Node) -> bool:
    r"""An irrational constant (``\sqrt2``, ``\pi``) that rounds to the gold."""
    dps = min(_MAX_DPS, 30 + shown.decimals + int(estimate_digits(pred)))
    try:
        value = numeric_value(pred, dps)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return False
    ctx = numeric_context(dps)
    if ctx.im(value) != 0 or not ctx.isfinite(value):
        return False
    gold = ctx.mpf(shown.value.numerator) / shown.value.denominator
    return bool(abs(ctx.re(value) - gold) <= ctx.mpf(shown.half_unit.numerator) / shown.half_unit.denominator)


def rounds_to_gold(shown: Shown, pred: Node) -> bool:
    """Rule 2: whether the answer is a value with endless decimals that the decimal gold rounds.

    Args:
        shown: The decimal gold, as written.
        pred: The parsed answer (a scalar).

    Returns:
        True for an answer written without a decimal point whose decimals never end and that rounds
        to the gold, or a longer decimal of such a fraction (denominator at most 12) that rounds to it;
        False otherwise, and always for a gold with one decimal or one significant digit.
    """
    if not shown.may_round or not ast.is_scalar(pred) or ast.free_symbols(pred):
        return False
    found = _literal(pred)
    if found is not None:
        return _small_fraction_rounding(shown, *found)
    if ast.has_approximate(pred):
        return False
    try:
        value = exact_value(pred)
    except ZeroDivisionError:
        return False
    if value is None:
        return _irrational_rounding(shown, pred)
    return not terminates(value) and abs(value - shown.value) <= shown.half_unit
