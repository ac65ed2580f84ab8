r"""Shaping parsed pieces into answers: relations, unions, signs, and the answer-level clean-up.

A relation solved for one variable becomes an interval (``2 \le x < 5`` is ``[2, 5)``), "3 = x"
becomes a labelled value, ``\pm`` expands into the list of both values, and a whole answer in
degrees becomes an angle quantity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.matrices import unit_vector_column
from reasongym.verifiers.math.nodes import Node, Unparseable
from reasongym.verifiers.math.units import DEGREE

__all__ = ["finish_answer", "relation_node", "signed", "union"]

_NEG_INF = ast.Neg(ast.Const("oo"))


def signed(term: Node, sign: str | None) -> Node:
    """``term`` with the sign written before it in a sum."""
    if sign == "-":
        return ast.Neg(term)
    if sign in ("pm", "mp"):
        return ast.PlusMinus(term, minus_first=sign == "mp")
    return term


def union(items: list[Node]) -> ast.Union:
    """The union of intervals or sets (an open pair ``(a, b)`` counts as an interval)."""
    parts: list[Node] = []
    for node in items:
        if isinstance(node, ast.Seq) and node.kind == "tuple" and len(node.items) == 2:
            node = ast.Interval(node.items[0], node.items[1], False, False)
        if isinstance(node, ast.Union):
            parts.extend(node.parts)
        elif isinstance(node, ast.Interval) or (isinstance(node, ast.Seq) and node.kind == "set"):
            parts.append(node)
        else:
            raise Unparseable(f"a union joins intervals or sets, not a {type(node).__name__.lower()}")
    return ast.Union(tuple(parts))


_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "!=": "!="}
_POS_INF = ast.Const("oo")


def _negated(side: Node) -> Node:
    return side.arg if isinstance(side, ast.Neg) else ast.Neg(side)


def _without_common_unit(sides: tuple[Node, ...]) -> tuple[Node, ...]:
    r"""The members' values when every member with a unit has the same unit (``5\sqrt2 cm = 7.07 cm``)."""
    units = {side.unit for side in sides if isinstance(side, ast.Quantity)}
    if len(units) != 1:
        return sides
    return tuple(side.value if isinstance(side, ast.Quantity) else side for side in sides)


def relation_node(ops: tuple[str, ...], sides: tuple[Node, ...]) -> Node:
    r"""A relation, turned into an interval when it is solved for one variable (or for ``-x``).

    Members that all carry one unit (``5\sqrt2 cm \approx 7.07 cm``) are compared without it.
    """
    sides = _without_common_unit(sides)
    distance = _distance_relation(ops, sides)
    if distance is not None:
        return distance
    variables = [k for k, side in enumerate(sides) if isinstance(side, ast.Sym)]
    negated = [
        k for k, side in enumerate(sides) if isinstance(side, ast.Neg) and isinstance(side.arg, ast.Sym)
    ]
    if not variables and len(negated) == 1 and "=" not in ops:  # -x > -2 is x < 2
        return relation_node(tuple(_FLIP[op] for op in ops), tuple(_negated(side) for side in sides))
    if ops == ("=",) and variables == [1]:
        return ast.Labeled(sides[1], sides[0])  # "3 = x"
    if (
        len(variables) != 1
        or "=" in ops
        or any(ast.free_symbols(s) for k, s in enumerate(sides) if k != variables[0])
    ):
        return ast.Rel(ops, sides)
    if len(ops) == 1:
        op, other = (ops[0], sides[1]) if variables == [0] else (_FLIP[ops[0]], sides[0])
        if op == "!=":
            return ast.Union(
                (ast.Interval(_NEG_INF, other, False, False), ast.Interval(other, _POS_INF, False, False))
            )
        if op in ("<", "<="):
            return ast.Interval(_NEG_INF, other, False, op == "<=")
        return ast.Interval(other, _POS_INF, op == ">=", False)
    if len(ops) == 2 and variables == [1]:
        if all(op in ("<", "<=") for op in ops):
            return ast.Interval(sides[0], sides[2], ops[0] == "<=", ops[1] == "<=")
        if all(op in (">", ">=") for op in ops):
            return ast.Interval(sides[2], sides[0], ops[1] == ">=", ops[0] == ">=")
    return ast.Rel(ops, sides)


def _centre(arg: Node) -> Node | None:
    """``c`` when ``arg`` is ``x - c`` or ``x + (-c)`` for one variable ``x`` and a constant ``c``, 0 for ``x``."""
    if isinstance(arg, ast.Sym):
        return ast.Num(0)
    if (
        isinstance(arg, ast.Add)
        and len(arg.terms) == 2
        and isinstance(arg.terms[0], ast.Sym)
        and not ast.free_symbols(arg.terms[1])
    ):
        return _negated(arg.terms[1])
    return None


def _distance_relation(ops: tuple[str, ...], sides: tuple[Node, ...]) -> Node | None:
    """``|x - c| < r`` as the set it describes: ``(c - r, c + r)``; ``|x| > 3`` is two rays. Else None.

    Why: "|x| < 3" and "(-3, 3)" state one set, and models write either for an inequality's solution.
    """
    if len(ops) != 1 or ops[0] not in ("<", "<=", ">", ">="):
        return None
    op, (distance, radius) = ops[0], sides
    if not (isinstance(distance, ast.Func) and distance.name == "abs"):
        op, distance, radius = _FLIP[op], radius, distance
    if not (isinstance(distance, ast.Func) and distance.name == "abs") or ast.free_symbols(radius):
        return None
    centre = _centre(distance.args[0])
    if centre is None:
        return None
    lo = ast.Add((centre, ast.Neg(radius))) if centre != ast.Num(0) else ast.Neg(radius)
    hi = ast.Add((centre, radius)) if centre != ast.Num(0) else radius
    closed = op in ("<=", ">=")
    if op in ("<", "<="):
        return ast.Interval(lo, hi, closed, closed)
    return ast.Union((ast.Interval(_NEG_INF, lo, False, closed), ast.Interval(hi, _POS_INF, closed, False)))


def _expand_plus_minus(node: Node) -> Node:
    r"""``a \pm b`` stands for the unordered list of both values."""
    count = _count_plus_minus(node)
    if count == 0:
        return node
    if count > 3:
        raise Unparseable(f"{count} \\pm signs; at most 3 are expanded")
    variants = []
    for mask in range(2**count):
        signs = iter((mask >> bit) & 1 for bit in range(count))
        variants.append(_choose_signs(node, signs))
    return ast.Seq("list", tuple(variants))


def _count_plus_minus(node: Node) -> int:
    return int(isinstance(node, ast.PlusMinus)) + sum(_count_plus_minus(c) for c in ast.children(node))


def _choose_signs(node: Node, signs: Iterator[int]) -> Node:
    if isinstance(node, ast.PlusMinus):
        negate = next(signs) != node.minus_first
        arg = _choose_signs(node.arg, signs)
        return ast.Neg(arg) if negate else arg
    changes = {}
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        if isinstance(value, tuple) and value and ast.is_scalar(value[0]):
            changes[field.name] = tuple(_choose_signs(v, signs) for v in value)
        elif ast.is_scalar(value):
            changes[field.name] = _choose_signs(value, signs)
    return dataclasses.replace(node, **changes)


def finish_answer(node: Node) -> Node:
    r"""Answer-level clean-up: degrees become an angle quantity, \pm a list, i/j/k vectors a column."""
    if isinstance(node, ast.Seq) and node.kind in ("list", "set"):
        items: list[Node] = []
        for item in node.items:
            done = finish_answer(item)
            expanded = isinstance(done, ast.Seq) and done.kind == "list" and _count_plus_minus(item)
            items.extend(done.items if expanded else (done,))  # {1 \pm \sqrt5, -2} has three members
        return dataclasses.replace(node, items=tuple(items))
    if isinstance(node, ast.Labeled):
        return ast.Labeled(node.label, finish_answer(node.value))
    if isinstance(node, ast.Degree):
        return ast.Quantity(node.arg, DEGREE)
    if isinstance(node, ast.Neg) and isinstance(node.arg, ast.Degree):
        return ast.Quantity(ast.Neg(node.arg.arg), DEGREE)
    if ast.is_scalar(node):
        return unit_vector_column(node) or _expand_plus_minus(node)
    return node
