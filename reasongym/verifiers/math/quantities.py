r"""Units after a value: ``5 cm``, ``3 km/h``, ``4 square feet``, ``25 percent``, ``2 hours 30 minutes``.

The parser reads a unit tail after each item (and after each member of a relation, ``5\sqrt2 cm \approx
7.07 cm``): a multiplier multiplies the value ("5 dozen" is 60), "squared"/"cubed" after a unit raise it,
a unit word the table cannot convert refuses the answer ("5 tons"), and words that name no unit are
counting words and are dropped (``5 apples``). The unit table itself is :mod:`units`.
"""

from __future__ import annotations

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.atoms import ExpressionParser
from reasongym.verifiers.math.nodes import Node, Unparseable
from reasongym.verifiers.math.units import (
    MULTIPLIERS,
    PERCENT_WORDS,
    POWER_WORDS,
    UNIT_POWER_WORDS,
    combine_units,
    is_single_letter_unit,
    is_unknown_unit,
    lookup_unit,
)

__all__ = ["item_units", "parse_compound", "parse_unit_tail", "unit_before_relation", "unit_tail_ahead"]

_SQUARE_OR_CUBIC = (ast.Num(2), ast.Num(3))
_OPERATION_WORDS = frozenset(
    "squared cubed doubled tripled halved factorial times plus minus divided multiplied raised".split()
)
"""Words that operate on the value before them: "5 doubled" is no 5 (grading the operand paid it)."""


_MONEY = lookup_unit("dollars").dims  # type: ignore[union-attr]


def _scalar(node: Node, where: str) -> Node:
    if not ast.is_scalar(node):
        raise Unparseable(f"a {type(node).__name__.lower()} cannot be used {where}")
    return node


def _word_in_tail(word: str, node: Node, parts: list[list], money: ast.Unit | None) -> Node | None:
    """A multiplier applied to the value, None for any other word; refuses a unit the table cannot convert."""
    lowered = word.lower()
    if lowered in MULTIPLIERS and parts in ([], [[money, 1]]):
        return ast.Mul((node, ast.Num(MULTIPLIERS[lowered])))  # "5 dozen" is 60, never 5
    if lowered in UNIT_POWER_WORDS and parts:
        parts[-1][1] *= UNIT_POWER_WORDS[lowered]  # "5 mph squared" is in mph^2
        return node
    if is_unknown_unit(word):
        raise Unparseable(f"{word!r} names a unit that the unit table cannot convert")
    return None


def parse_unit_tail(p: ExpressionParser, node: Node, money: ast.Unit | None) -> Node:
    """Read unit words after a value: ``5 cm``, ``3 km/h``, ``4 square feet``, ``25 percent``."""
    parts: list[list] = [[money, 1]] if money is not None else []  # "$18/day" is dollars per day
    percent = after_word = False
    sign, power = 1, 1
    while True:
        tok = p.peek()
        unit_letter = tok.kind == "sym" and is_single_letter_unit(tok.value) and (tok.spaced or parts)
        if tok.kind == "word" or unit_letter:
            word = str(tok.value)
            applied = _word_in_tail(word, node, parts, money)
            if applied is not None:
                node = applied
                p.take()
                after_word = True
                continue
            if word.lower() in _OPERATION_WORDS and not parts:
                raise Unparseable(
                    f"{word!r} operates on the value before it; the answer must state the result"
                )
            if word.lower() == "per":
                sign = -1
                p.take()
                continue
            if word.lower() in PERCENT_WORDS:
                percent = True
            elif word.lower() in POWER_WORDS:
                power = POWER_WORDS[word.lower()]
                p.take()
                continue
            elif (unit := lookup_unit(word)) is not None and not (parts == [[unit, 1]] and unit == money):
                parts.append([unit, sign * power])  # "$12 dollars" is 12 dollars
            sign, power = 1, 1
            p.take()
            after_word = True
            continue
        braced = p.at("op", "{", 1) and p.at("op", "}", 3)  # "m^{2}"
        if after_word and p.at_op("^") and p.peek(2 if braced else 1).value in _SQUARE_OR_CUBIC:
            p.take()
            p.i += braced
            exponent = p.take().value.mantissa
            p.i += braced
            if parts:
                parts[-1][1] *= exponent
        elif p.at_op("/") and (parts or (p.at("word", offset=1) and lookup_unit(str(p.peek(1).value)))):
            p.take()
            sign = -1
        else:
            break
    if percent:
        node = ast.Percent(_scalar(node, "with percent"))
    if parts:
        return ast.Quantity(
            _scalar(node, "with a unit"), combine_units([(unit, power) for unit, power in parts])
        )
    return node  # no unit, or only counting words ("5 apples")


def unit_before_relation(p: ExpressionParser, last: bool = False) -> bool:
    r"""True when unit words (at least one a unit) come next and end at a relation sign.

    For the ``last`` member of a relation they may end the item instead: ``cm`` in
    ``5\sqrt2 cm \approx 7.07 cm``.
    """
    k, unit = 0, False
    while p.at("word", offset=k) or (p.at("op", "^", offset=k) and unit and p.at("num", offset=k + 1)):
        unit = unit or (p.at("word", offset=k) and lookup_unit(str(p.peek(k).value)) is not None)
        k += 2 if p.at("op", "^", offset=k) else 1
    after = p.peek(k)
    relation = after.kind == "op" and after.value in ("=", "<", ">", "<=", ">=", "!=")
    return unit and (relation or (last and p.at_boundary(k)))


def parse_compound(p: ExpressionParser, node: Node) -> Node:
    """Quantities of one kind written together ("2 hours 30 minutes"), in the last unit; money in the first.

    "12 dollars and 50 cents" is 12.5 dollars: an amount is read in its currency.
    """
    while isinstance(node, ast.Quantity):
        skip = 1 if p.at("sep", "and") else 0
        if not (p.at("num", offset=skip) and p.at("word", offset=skip + 1)):
            return node
        start = p.i
        p.i += skip
        part = parse_unit_tail(p, p.take().value, None)
        if not isinstance(part, ast.Quantity) or part.unit.dims != node.unit.dims or part.unit.pi_power:
            p.i = start
            return node
        if node.unit.dims == _MONEY:  # "12 dollars and 50 cents" is 12.5 dollars, the amount in its currency
            factor = part.unit.factor / node.unit.factor
            scaled = ast.Mul((part.value, ast.Num(factor.numerator)), (ast.Num(factor.denominator),))
            node = ast.Quantity(ast.Add((node.value, scaled)), node.unit)
            continue
        factor = node.unit.factor / part.unit.factor
        scaled = ast.Mul((node.value, ast.Num(factor.numerator)), (ast.Num(factor.denominator),))
        node = ast.Quantity(ast.Add((scaled, part.value)), part.unit)
    return node


def unit_tail_ahead(p: ExpressionParser) -> bool:
    """True when the tokens from here to the end of the item are only unit words."""
    k = opened = 0
    while not p.at_boundary(k):
        tok = p.peek(k)
        ok = tok.kind == "word" or (tok.kind == "sym" and is_single_letter_unit(tok.value))
        ok = ok or (tok.kind == "op" and tok.value in ("^", "/", "{", "}")) or (tok.kind == "num" and k > 0)
        if not ok:
            return False
        opened += tok.kind == "op" and tok.value == "{"
        k += 1
    closing = p.peek(k)
    # a brace the tail did not open ends a TeX argument: "3 m" in \frac{3 m}{2} or \sqrt{3 m} is 3*m
    return k > 0 and not (closing.kind == "op" and closing.value == "}" and not opened)


def _glued_unit(node: Node) -> Node:
    """Read "5m" and "5m^2" (a number glued to a one-letter unit, as the whole item) as 5 metres (squared)."""
    if isinstance(node, ast.Mul) and len(node.num) == 2 and not node.den:
        number, letter = node.num
        power = 1
        exponent = letter.exp if isinstance(letter, ast.Pow) else None
        if isinstance(exponent, ast.Num) and exponent.exp10 == 0 and exponent.mantissa in (2, 3):
            letter, power = letter.base, exponent.mantissa  # type: ignore[union-attr]
        if isinstance(number, ast.Num) and isinstance(letter, ast.Sym) and is_single_letter_unit(letter.name):
            unit = lookup_unit(letter.name)
            return ast.Quantity(number, unit if power == 1 else combine_units([(unit, power)]))  # type: ignore[list-item]
    return node


def item_units(p: ExpressionParser, node: Node, money: ast.Unit | None) -> Node:
    """The units written after an item's value (``5m``, ``$5``, ``3 km/h``, ``2 hours 30 minutes``)."""
    return parse_compound(p, parse_unit_tail(p, _glued_unit(node), money))
