r"""Relations as answers: the same equation written another way, and relations that name a value.

Equations. ``l = r`` stands for ``l - r = 0``, and two equations are the same relation when one
difference is a non-zero constant multiple of the other: ``3x - 3y = 6`` is ``x - y = 2``;
``y = \frac{2}{3}x - 1`` is ``2x - 3y - 3 = 0`` (the same relation solved for y); ``\frac{x^2}{18} +
\frac{y^2}{8} = \frac12`` is ``\frac{x^2}{9} + \frac{y^2}{4} = 1``. The constant is read at one
rational point (the ratio of the two differences there) and then checked as an identity everywhere
by :func:`~reasongym.verifiers.math.numeric.compare_scalars`; a difference that is zero at every
point tried is never a multiple. Inequalities compare side by side (``5 \ge x`` is ``x \le 5``).

Named values. A relation whose first members are only letters joined by ``+``, products, quotients,
ratios or ``|...|`` (two letters at least, or bars), and whose last members are constants, states the
value of a named quantity: ``PQ = 4``, ``|PQ| = 5``, ``\frac{OM}{ON} = 2``, ``S_1 : S_2 = 3 : 7``,
``p + q = q + p = 57``, ``m + n = 3 + 4 = 7``. It is read like ``x = 7``: a label and a value (several
named values, ``PQ = 4, RS = 6``, match by name). The name must be written in capitals, the way points
and segments are named, unless the relation has three members or more: a gold ``x + y = 5`` or ``xy =
5`` is a curve, and ``5`` is no answer to it; an answer ``m + n = 7`` alone may be an unsolved equation
(``x + y = 7`` for a question about x), so it is not read as the value 7, while ``m + n = 3 + 4 = 7``
is. An equation with numbers in its letters' side (``x + 1 = 4``) is never a name. A chain that writes one
expression twice or more and ends in constants (``a + 2z = 2z + a = 101``) states the expression's value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from fractions import Fraction

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.evaluate import numeric_value
from reasongym.verifiers.math.nodes import Node
from reasongym.verifiers.math.numeric import Match, SymbolicCheck, compare_scalars

__all__ = ["compare_relations", "name_relations", "name_text"]

_FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "!=": "!="}
# Rational points for reading the multiple: not integers, not symmetric, so that no simple
# difference vanishes at all of them.
_POINTS = (Fraction(7, 5), Fraction(-11, 7), Fraction(13, 3))


def _letters_only(node: Node, capitals: bool) -> bool:
    if isinstance(node, ast.Sym):
        return node.name[:1].isupper() or not capitals
    if isinstance(node, ast.Add):
        return all(_letters_only(term, capitals) for term in node.terms)
    if isinstance(node, ast.Mul):
        return all(_letters_only(factor, capitals) for factor in node.num + node.den)
    if isinstance(node, ast.Func) and node.name == "abs":
        return _letters_only(node.args[0], capitals)
    return False


def _is_name(node: Node, capitals: bool) -> bool:
    """``m + n``, ``PQ``, ``|PQ|``, ``OM/ON``: letters naming a quantity (see the module docstring)."""
    if not _letters_only(node, capitals):
        return False
    return len(ast.free_symbols(node)) >= 2 or isinstance(node, ast.Func)


def _same_expression(first: Node, other: Node) -> bool:
    """Whether two expressions agree at two fixed complex points (``a + 2z`` and ``2z + a``)."""
    names = sorted(ast.free_symbols(first) | ast.free_symbols(other))
    for shift in (0, 1):
        point = {name: complex(_POINTS[(k + shift) % 3], 0.3 * (k + 1)) for k, name in enumerate(names)}
        try:
            a, b = numeric_value(first, 30, point), numeric_value(other, 30, point)
        except (ZeroDivisionError, ValueError, OverflowError, TypeError):
            return False
        if abs(a - b) > 1e-20 * max(abs(a), abs(b), 1):
            return False
    return True


def _restated_value(node: ast.Rel) -> Node | None:
    """``a + 2z = 2z + a = 101``: one expression written twice or more, then its value; else None."""
    values = [side for side in node.sides if not ast.free_symbols(side)]
    expressions = node.sides[: len(node.sides) - len(values)]
    if len(expressions) < 2 or not values or any(not ast.free_symbols(side) for side in expressions):
        return None
    if not all(_same_expression(expressions[0], side) for side in expressions[1:]):
        return None
    value = values[0] if len(values) == 1 else ast.Rel(("=",) * (len(values) - 1), tuple(values))
    return ast.Labeled(expressions[0], value)


def _named_value(node: Node, capitals: bool) -> Node:
    if not (isinstance(node, ast.Rel) and set(node.ops) == {"="}):
        return node
    restated = _restated_value(node)
    if restated is not None:
        return restated
    count = 0
    while count < len(node.sides) - 1 and _is_name(node.sides[count], capitals):
        count += 1
    values = node.sides[count:]
    if count == 0 or any(ast.free_symbols(value) for value in values):
        return node
    written_as_name = all(_letters_only(side, capitals=True) for side in node.sides[:count])
    if not capitals and len(node.sides) < 3 and not written_as_name:
        return node  # "m + n = 7" alone may be an unsolved equation; "m + n = 3 + 4 = 7" is not
    value = values[0] if len(values) == 1 else ast.Rel(("=",) * (len(values) - 1), values)
    return ast.Labeled(node.sides[0], value)


def name_relations(node: Node, *, gold: bool) -> Node:
    """Read relations that name a value (``PQ = 4``) as labelled values, also inside a list.

    Args:
        node: A parsed answer.
        gold: Whether it is the gold answer (then names must be written in capitals).

    Returns:
        The answer with each such relation turned into a :class:`~reasongym.verifiers.math.nodes.Labeled`.
    """
    if isinstance(node, ast.Seq):
        return dataclasses.replace(node, items=tuple(_named_value(item, gold) for item in node.items))
    return _named_value(node, gold)


def name_text(node: Node) -> str:
    """A label written out, for matching names: ``PQ``, ``|PQ|``, ``OM/ON``, ``m+n``."""
    if isinstance(node, ast.Sym):
        return node.name.replace(" ", "")
    if isinstance(node, ast.Add):
        return "+".join(name_text(term) for term in node.terms)
    if isinstance(node, ast.Mul):
        top = "".join(name_text(factor) for factor in node.num)
        return top + "/" + "".join(name_text(factor) for factor in node.den) if node.den else top
    if isinstance(node, ast.Func) and node.name == "abs":
        return f"|{name_text(node.args[0])}|"
    return repr(node)


def _substitute(node: Node, values: dict[str, Node]) -> Node:
    if isinstance(node, ast.Sym):
        return values.get(node.name, node)
    changes = {}
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        if isinstance(value, tuple) and all(ast.is_scalar(item) for item in value):
            changes[field.name] = tuple(_substitute(item, values) for item in value)
        elif ast.is_scalar(value):
            changes[field.name] = _substitute(value, values)
    return dataclasses.replace(node, **changes) if changes else node


def _nonzero(node: Node) -> bool:
    try:
        value = numeric_value(node, 30)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return False
    return bool(abs(value) > 1e-20)


def _same_up_to_a_factor(gold: Node, pred: Node, symbolic: SymbolicCheck) -> Match | None:
    """``gold == c * pred`` for a constant ``c != 0``, read at one rational point; None if no point fits."""
    names = sorted(ast.free_symbols(gold) | ast.free_symbols(pred))
    if not names:
        return None
    for shift in range(len(_POINTS)):
        offsets = [_POINTS[(shift + k) % len(_POINTS)] + k for k in range(len(names))]
        point = {
            name: ast.Mul((ast.Num(value.numerator),), (ast.Num(value.denominator),))
            for name, value in zip(names, offsets, strict=True)
        }
        gold_at, pred_at = _substitute(gold, point), _substitute(pred, point)
        if _nonzero(gold_at) and _nonzero(pred_at):
            return compare_scalars(ast.Mul((gold, pred_at)), ast.Mul((pred, gold_at)), None, symbolic)
    return None


def _compare_equations(gold: ast.Rel, pred: ast.Rel, symbolic: SymbolicCheck) -> Match:
    g = ast.Add((gold.sides[0], ast.Neg(gold.sides[1])))
    p = ast.Add((pred.sides[0], ast.Neg(pred.sides[1])))
    match = compare_scalars(g, p, None, symbolic)
    if not match.equal:
        match = compare_scalars(g, ast.Neg(p), None, symbolic)
    if not match.equal:
        match = _same_up_to_a_factor(g, p, symbolic) or match
    return Match(match.equal, "the same equation" if match.equal else "a different equation")


def compare_relations(
    gold: ast.Rel, pred: ast.Rel, compare: Callable[[Node, Node], Match], symbolic: SymbolicCheck
) -> Match:
    """Compare two relations: equations up to a constant factor, other relations side by side.

    Args:
        gold: The gold relation.
        pred: The predicted relation.
        compare: Compares two members (the caller's structural comparison).
        symbolic: The bounded sympy step.

    Returns:
        Whether they are the same relation.

    Raises:
        VerifierTimeout: A sympy step ran past its time limit.
    """
    if gold.ops == ("=",) and pred.ops == ("=",):
        return _compare_equations(gold, pred, symbolic)
    flipped = tuple(_FLIPPED[op] for op in reversed(pred.ops))
    for ops, sides in ((pred.ops, pred.sides), (flipped, tuple(reversed(pred.sides)))):
        if ops == gold.ops and all(compare(g, p).equal for g, p in zip(gold.sides, sides, strict=True)):
            return Match(True, "the same relation")
    return Match(False, "a different relation")
