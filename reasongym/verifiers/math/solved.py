r"""Relations against values: an answer may state the asked quantity by solving the gold's relation.

A gold is often a relation (``xy = 6``, ``y + 1 = -(2x - 1)^2``, ``\rho \sin\theta = \sqrt{3}``,
``x = y = z = \frac{\sqrt{2}}{2}``) where an answer states the value it solves to (``\frac{6}{x}``,
``-4x^2 + 4x - 2``, ``\sqrt{3} \csc\theta``, ``\frac{\sqrt{2}}{2}``). The rules, each with where it stops:

1. **Solved for one variable.** An answer that is an expression (or ``v = E``) is the gold equation solved
   for ``v`` when the gold holds identically with ``v`` replaced by it (checked as an identity, numerically
   and with sympy, as every comparison). ``v`` is the one variable of the gold that the answer does not
   use. Stops: a gold that is not one equation; an answer that uses a variable the gold does not; two or
   more gold variables missing from the answer (the asked one is not known); a gold with no variable; a gold
   that holds for every value of ``v`` (an identity fixes no value, so no answer is its solution).
2. **Equal variables.** A chain ``x = y = z = c`` of variables and one value states that value; an answer
   equal to ``c`` is the answer. Stops: a chain with more than one value, or any member that is an
   expression of variables.
3. **Renamed variables.** Two answers that differ only in the name of a bound variable are the same: the
   argument of a function being defined (``f(z) = z`` is ``f(x) = x``; ``f(n) = 2n + 1007`` is ``f(m) =
   2m + 1007``), and the integer parameter of a family of solutions (``x = k\pi`` is ``n\pi``; parameters
   are the letters ``k, n, m, t, j, l``, one on each side). Stops: any other free letter differs (``2a``
   is never ``2b``: a question asked in terms of ``a``).
"""

from __future__ import annotations

import dataclasses
import re
import typing

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.nodes import Node
from reasongym.verifiers.math.numeric import Match, SymbolicCheck, compare_scalars

__all__ = ["equal_variables_value", "renamed", "solved_for"]

_PARAMETERS = frozenset("knmtjl")
_NODE_TYPES = typing.get_args(Node)
_DEFINITION = re.compile(r"([A-Za-z]\w*)\(([A-Za-z])\)")


def _substitute(node: Node, name: str, value: Node) -> Node:
    """``node`` with every ``Sym(name)`` replaced by ``value``."""
    if isinstance(node, ast.Sym):
        return value if node.name == name else node
    changes = {}
    for field in dataclasses.fields(node):
        item = getattr(node, field.name)
        if isinstance(item, tuple) and item and all(isinstance(part, _NODE_TYPES) for part in item):
            changes[field.name] = tuple(_substitute(part, name, value) for part in item)
        elif isinstance(item, _NODE_TYPES):
            changes[field.name] = _substitute(item, name, value)
    return dataclasses.replace(node, **changes) if changes else node


def solved_for(gold: ast.Rel, pred: Node, symbolic: SymbolicCheck) -> Match | None:
    """Rule 1: whether ``pred`` (an expression, or ``v = E``) is ``gold`` solved for one variable; None: no rule."""
    if gold.ops != ("=",) or not all(ast.is_scalar(side) for side in gold.sides):
        return None
    if isinstance(pred, ast.Labeled) and isinstance(pred.label, ast.Sym):
        names: list[str] = [pred.label.name]
        pred = pred.value
    elif isinstance(pred, ast.Rel) and pred.ops == ("=",) and isinstance(pred.sides[0], ast.Sym):
        names, pred = [pred.sides[0].name], pred.sides[1]
    else:
        names = []
    if not ast.is_scalar(pred):
        return None
    gold_names, pred_names = ast.free_symbols(gold), ast.free_symbols(pred)
    if not pred_names <= gold_names:
        return None
    missing = names or sorted(gold_names - pred_names)
    if len(missing) != 1 or missing[0] not in gold_names or missing[0] in pred_names:
        return None
    left, right = (_substitute(side, missing[0], pred) for side in gold.sides)
    match = compare_scalars(left, right, None, symbolic)
    if match.equal and _holds_for_any(gold, missing[0], symbolic):
        return Match(False, f"the gold holds for every {missing[0]}: it does not fix its value")
    return Match(
        match.equal, f"the gold solved for {missing[0]}" if match.equal else "not the gold solved for it"
    )


def _holds_for_any(gold: ast.Rel, name: str, symbolic: SymbolicCheck) -> bool:
    """Whether ``gold`` is an identity in ``name``: it holds at two unrelated values (no equation's pair of roots)."""
    for probe in (ast.Num(7919), ast.Num(104729)):
        left, right = (_substitute(side, name, probe) for side in gold.sides)
        if not compare_scalars(left, right, None, symbolic).equal:
            return False
    return True


def equal_variables_value(gold: ast.Rel) -> Node | None:
    """Rule 2: the value ``c`` of a chain ``x = y = z = c``, or None."""
    if set(gold.ops) != {"="} or len(gold.sides) < 2:
        return None
    values = [side for side in gold.sides if not isinstance(side, ast.Sym)]
    if len(values) != 1 or ast.free_symbols(values[0]):
        return None
    return values[0]


def _bound_argument(node: Node) -> tuple[str, str] | None:
    """(function name, argument) of a definition ``f(z) = ...`` whose argument is one letter, or None."""
    label = node.label if isinstance(node, ast.Labeled) else None
    found = _DEFINITION.fullmatch(label.name) if isinstance(label, ast.Sym) else None
    return (found.group(1), found.group(2)) if found else None


def _value(node: Node) -> Node:
    return node.value if isinstance(node, ast.Labeled) else node


def renamed(gold: Node, pred: Node) -> Node | None:
    """Rule 3: ``pred`` with its bound variable or integer parameter named as the gold's, or None."""
    gold_def, pred_def = _bound_argument(gold), _bound_argument(pred)
    gold_names, pred_names = ast.free_symbols(_value(gold)), ast.free_symbols(_value(pred))
    if gold_def and pred_def and gold_def[0] == pred_def[0] and gold_def[1] != pred_def[1]:
        if gold_def[1] not in pred_names:  # f(x) = x is f(z) = z
            return ast.Labeled(gold.label, _substitute(_value(pred), pred_def[1], ast.Sym(gold_def[1])))  # type: ignore[union-attr]
    extra_gold, extra_pred = gold_names - pred_names, pred_names - gold_names
    if len(extra_gold) == len(extra_pred) == 1 and (extra_gold | extra_pred) <= _PARAMETERS:
        return _substitute(pred, next(iter(extra_pred)), ast.Sym(next(iter(extra_gold))))  # n\pi is k\pi
    return None
