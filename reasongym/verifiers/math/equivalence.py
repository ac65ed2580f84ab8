r"""Decide whether a parsed prediction equals a parsed gold answer, gold first.

Structures are compared by shape, then element by element with
:func:`~reasongym.verifiers.math.numeric.compare_scalars`:

- A label is ignored on either side (``x = 3`` equals ``3``), except that two variables named on both
  sides must be the same (``y = 3`` is not ``x = 3``), that a labelled gold
  equation compares with an unlabelled one as an equation, and that a gold of named assignments
  (``a = 2, b = 3``: different names) matches by name; unnamed values go in the gold's order.
- Tuples, points and vectors are ordered; sets and bare lists of solutions are unordered
  multisets; a list of several answers never equals a single-valued gold (a hedge is wrong; so is
  ``32, 349`` for 32349: a comma followed by a space separates values).
- A chain of constants ``\sqrt{51} \approx 7.14`` is graded by its exact member (see
  :mod:`~reasongym.verifiers.math.forms`).
- Clock times (``4:30``, ``4:30 pm``) compare field by field, ratios (``3:1``) as ratios (see
  :func:`~reasongym.verifiers.math.forms.compare_colons`).
- Intervals need equal ends and equal open/closed ends (the side of an infinite end is ignored);
  unions match part by part in any order. An open pair ``(a, b)`` may stand for an interval.
- Equations ``l = r`` compare by ``l - r`` (up to sign); inequalities side by side.
- Numerals in another base (``204_5``) compare by their digits and base, never by value.
- Numbers, quantities and percents compare as measures (:mod:`~reasongym.verifiers.math.measures`).
- Text answers compare case-insensitively, word by word.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reasongym.verifiers.base import VERIFY_TIMEOUT_S
from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.forms import chain_exact, compare_chain, compare_colons, states_exact
from reasongym.verifiers.math.measures import compare_measures, is_measure
from reasongym.verifiers.math.nodes import Node
from reasongym.verifiers.math.numeric import Match, SymbolicCheck
from reasongym.verifiers.math.relations import compare_relations, name_relations, name_text
from reasongym.verifiers.math.sets import compare_interval, compare_union, normalize_set
from reasongym.verifiers.math.solved import equal_variables_value, renamed, solved_for
from reasongym.verifiers.math.words import text_name

__all__ = ["Match", "answers_equal"]

_MAX_ITEMS = 64
_VARIABLE = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?|[a-z]+")  # x, a_1, theta; not f(x), (x,y), PQ


def answers_equal(
    gold: Node, pred: Node, *, timeout: float = VERIFY_TIMEOUT_S, symbolic: SymbolicCheck | None = None
) -> Match:
    r"""Compare a parsed prediction with a parsed gold answer.

    Args:
        gold: The gold answer, from :func:`~reasongym.verifiers.math.parser.parse_answer`.
        pred: The prediction, parsed the same way.
        timeout: Seconds allowed for the sympy steps of the comparison together (run in a worker process).
        symbolic: The sympy step to use instead of a new one with ``timeout``: a caller that passes its own
            can tell afterwards whether the comparison asked sympy (``symbolic.asked``).

    Returns:
        A :class:`Match`: whether they are equal, and a short reason.

    Raises:
        VerifierTimeout: The sympy steps ran past ``timeout``.

    Example:
        >>> from reasongym.verifiers.math.parser import parse_answer
        >>> answers_equal(parse_answer("\\frac{1}{2}"), parse_answer("0.5")).equal
        True
    """
    gold, pred = name_relations(gold, gold=True), name_relations(pred, gold=False)
    return _compare(gold, pred, symbolic if symbolic is not None else SymbolicCheck(timeout))


def _compare(gold: Node, pred: Node, sym: SymbolicCheck) -> Match:
    if gold == pred:
        return Match(True, "the same expression")
    match = _compare_as_written(gold, pred, sym)
    if match.equal:
        return match
    other = renamed(gold, pred)  # f(x) = x for f(z) = z; n\pi for k\pi (solved.py, rule 3)
    return _compare_as_written(gold, other, sym) if other is not None else match


def _compare_as_written(gold: Node, pred: Node, sym: SymbolicCheck) -> Match:
    if gold == pred:
        return Match(True, "the same expression")
    if isinstance(gold, ast.Labeled) and isinstance(pred, ast.Rel) and ast.free_symbols(gold.value):
        return _relations(ast.Rel(("=",), (gold.label, gold.value)), pred, sym)  # y = 2x + 3
    if isinstance(gold, ast.Rel) and isinstance(pred, ast.Labeled):
        match = _relations(gold, ast.Rel(("=",), (pred.label, pred.value)), sym)
        solved = None if match.equal else solved_for(gold, pred, sym)  # y = 6/x for xy = 6
        return solved if solved is not None and solved.equal else match
    named = _named_assignments(gold)
    if named is not None:
        return _compare_named(named, pred, sym)
    names = _variable_name(gold), _variable_name(pred)
    if None not in names and names[0] != names[1]:
        return Match(False, f"the answer names {names[1]}, the gold {names[0]}")  # y = 3 for x = 3
    gold, pred = _unlabel(gold), _unlabel(pred)
    if isinstance(gold, ast.Colon) or isinstance(pred, ast.Colon):
        return compare_colons(gold, pred, lambda g, p: _compare(g, p, sym))
    exact = chain_exact(gold, sym) if isinstance(gold, ast.Rel) and not isinstance(pred, ast.Rel) else None
    if exact is not None:
        return _compare_gold_chain(gold, exact, pred, sym)
    if isinstance(pred, ast.Rel) and not isinstance(gold, ast.Rel) and "=" in pred.ops:
        return compare_chain(gold, pred, lambda g, p: _compare(g, p, sym), sym)
    if isinstance(gold, ast.Text) or (isinstance(pred, ast.Text) and _as_text(gold, letters=True)):
        return _compare_text(gold, pred)
    if isinstance(pred, ast.Text):
        return Match(False, "the answer is words where the gold is not")
    if isinstance(gold, ast.Union) or isinstance(pred, ast.Union):
        gold, pred = normalize_set(gold), normalize_set(pred)  # {2,5} \cup {7} is {2,5,7}
    if isinstance(gold, ast.Seq):
        return _compare_sequence(gold, pred, sym)
    if isinstance(pred, ast.Seq) and pred.kind == "list":
        how = "joined by or/and" if pred.hedged else "in a list"
        return Match(False, f"{len(pred.items)} answers {how} for a single-valued gold (a hedge)")
    if isinstance(gold, ast.Interval):
        return compare_interval(gold, pred, _comparer(sym))
    if isinstance(gold, ast.Union):
        return compare_union(gold, pred, _comparer(sym))
    if isinstance(gold, ast.Matrix):
        return _compare_matrix(gold, pred, sym)
    if isinstance(gold, ast.Rel):
        value = equal_variables_value(gold)  # x = y = z = c states c (solved.py, rule 2)
        if value is not None and not isinstance(pred, ast.Rel):
            return _compare(value, pred, sym)
        solved = solved_for(gold, pred, sym)  # xy = 6 solved for y is 6/x (solved.py, rule 1)
        if solved is not None and (solved.equal or not isinstance(pred, ast.Rel)):
            return solved
        if not isinstance(pred, ast.Rel):
            return Match(False, "the gold is a relation and the answer is not")
        return _relations(gold, pred, sym)
    if isinstance(gold, ast.BaseNum) or isinstance(pred, ast.BaseNum):
        return _compare_base(gold, pred)
    if is_measure(gold) and is_measure(pred):
        return compare_measures(gold, pred, sym)
    return Match(False, f"a {_kind(pred)} is not a {_kind(gold)}")


def _compare_gold_chain(gold: ast.Rel, exact: Node, pred: Node, sym: SymbolicCheck) -> Match:
    r"""A gold chain ``\frac{\sqrt3}{3} \approx 0.577``: its exact value, or a decimal it states itself."""
    match = _compare(exact, pred, sym)
    if match.equal or not ast.has_approximate(pred):
        return match
    for side in gold.sides:
        if ast.has_approximate(side) and _compare(side, pred, sym).equal:
            return Match(True, "the decimal the gold itself states")
    literal = pred.arg if isinstance(pred, ast.Neg) else pred
    if isinstance(literal, ast.Num) and literal.decimals is not None and len(str(literal.mantissa)) >= 3:
        if states_exact(exact, pred, sym).equal:  # 0.5774 for \frac{\sqrt3}{3} \approx 0.577
            return Match(True, "the gold's exact value, rounded or cut off at the answer's last digit")
    return match


def _kind(node: Node) -> str:
    names = {
        ast.Seq: "list",
        ast.Interval: "interval",
        ast.Union: "union",
        ast.Matrix: "matrix",
        ast.Rel: "relation",
    }
    return names.get(type(node), "value")


def _variable_name(node: Node) -> str | None:
    """The variable a labelled value names (``x`` in ``x = 3``, ``a_1``), or None for other labels (``f(x)``)."""
    if (
        isinstance(node, ast.Labeled)
        and isinstance(node.label, ast.Sym)
        and _VARIABLE.fullmatch(node.label.name)
    ):
        return node.label.name
    return None


def _unlabel(node: Node) -> Node:
    return node.value if isinstance(node, ast.Labeled) else node


# ---- named assignments ----------------------------------------------------------------


def _label_name(node: Node) -> str | None:
    return name_text(node.label) if isinstance(node, ast.Labeled) else None


def _named_assignments(gold: Node) -> dict[str, Node] | None:
    """``a = 2, b = 3``: a list whose items name different unknowns, by name; else None."""
    if not isinstance(gold, ast.Seq) or gold.kind not in ("list", "set") or len(gold.items) < 2:
        return None
    names = [_label_name(item) for item in gold.items]
    if None in names or len(set(names)) != len(names):
        return None
    return {name: item.value for name, item in zip(names, gold.items, strict=True)}


def _assignments_of(pred: Node) -> list[tuple[str | None, Node]]:
    """The answer's values with their names: ``b = 3, a = 2``, ``(a, b) = (2, 3)`` or ``2, 3``."""
    name = _label_name(pred)
    if name is not None and name.startswith("(") and isinstance(pred.value, ast.Seq):
        names = name[1:-1].split(",")
        if len(names) == len(pred.value.items):
            return list(zip(names, pred.value.items, strict=True))
    items = _items_of(_unlabel(pred))
    if items is None:
        return [(name, _unlabel(pred))]
    return [(_label_name(item), _unlabel(item)) for item in items]


def _compare_named(gold: dict[str, Node], pred: Node, sym: SymbolicCheck) -> Match:
    """Named values match by name; values named otherwise (or not at all) in the gold's order."""
    values = _assignments_of(pred)
    if len(values) != len(gold):
        return Match(False, f"{len(values)} values where the gold names {len(gold)}")
    order = list(gold)
    names = [name for name, _ in values]
    if any(name in gold for name in names):
        names = [order[k] if name is None else name for k, name in enumerate(names)]
        if sorted(names) != sorted(order):
            return Match(False, f"the answer names {', '.join(map(str, names))}, the gold {', '.join(gold)}")
    else:
        names = order
    for name, (_, value) in zip(names, values, strict=True):
        match = _compare(gold[name], value, sym)
        if not match.equal:
            return Match(False, f"{name}: {match.reason}")
    return Match(True, "the same value for every name")


# ---- text -------------------------------------------------------------------------------------------


def _as_text(node: Node, letters: bool = False) -> str | None:
    """The words a node spells: text, or letters read as variables ("Tom" was read as T*o*m).

    With ``letters``, only variables count (a gold ``e`` is Euler's number, not the word "e").
    """
    if isinstance(node, ast.Text):
        return None if letters else node.text.replace(" ", "")
    if isinstance(node, ast.Sym) or (not letters and isinstance(node, ast.Const) and node.name in ("e", "i")):
        return node.name.lower()  # "(E)" was read as Euler's number
    if isinstance(node, ast.Mul) and not node.den:
        parts = [_as_text(f) for f in node.num]  # in "Yes" (Y*e*s) the e is a letter, not Euler's number
        return None if None in parts else "".join(parts)
    return None


def _compare_text(gold: Node, pred: Node) -> Match:
    r"""Text against text, or words against a gold spelled in letters (gold ``No``, answer ``\text{No}``)."""
    want = _as_text(gold)
    text = _as_text(pred)
    if text is not None and text_name(text) == text_name(want):
        return Match(True, "the same words")
    return Match(False, f"the answer does not read {want!r}")


# ---- sequences, intervals, matrices -------------------------------------------------------------------


def _items_of(pred: Node) -> tuple[Node, ...] | None:
    if isinstance(pred, ast.Seq):
        return pred.items
    if isinstance(pred, ast.Matrix) and (len(pred.rows) == 1 or all(len(r) == 1 for r in pred.rows)):
        return tuple(cell for row in pred.rows for cell in row)  # a row or column vector
    return None


def _compare_sequence(gold: ast.Seq, pred: Node, sym: SymbolicCheck) -> Match:
    if gold.kind == "tuple" and isinstance(pred, ast.Interval) and len(gold.items) == 2:
        return compare_interval(
            ast.Interval(gold.items[0], gold.items[1], False, False), pred, _comparer(sym)
        )
    items = _items_of(pred)
    if items is None:
        items = (pred,)
    if len(items) != len(gold.items):
        return Match(False, f"{len(items)} values where the gold has {len(gold.items)}")
    if len(items) > _MAX_ITEMS:
        return Match(False, f"more than {_MAX_ITEMS} values are not compared")
    if gold.kind == "tuple":
        if isinstance(pred, ast.Seq) and pred.kind == "set":
            return Match(False, "a set where the gold is an ordered tuple")
        return _compare_in_order(gold.items, items, sym)
    return _compare_any_order(gold.items, items, sym)


def _compare_in_order(gold: tuple[Node, ...], pred: tuple[Node, ...], sym: SymbolicCheck) -> Match:
    for k, (g, p) in enumerate(zip(gold, pred, strict=True)):
        match = _compare(g, p, sym)
        if not match.equal:
            return Match(False, f"entry {k + 1}: {match.reason}")
    return Match(True, "equal entry by entry")


def _compare_any_order(gold: tuple[Node, ...], pred: tuple[Node, ...], sym: SymbolicCheck) -> Match:
    unused = list(pred)
    for k, g in enumerate(gold):
        found = next((p for p in unused if _compare(g, p, sym).equal), None)
        if found is None:
            return Match(False, f"the answer lacks value {k + 1} of the gold")
        unused.remove(found)
    return Match(True, "the same values in any order")


def _compare_matrix(gold: ast.Matrix, pred: Node, sym: SymbolicCheck) -> Match:
    if isinstance(pred, ast.Matrix):
        shape = (len(gold.rows), len(gold.rows[0]))
        if (len(pred.rows), len(pred.rows[0])) != shape:
            return Match(False, f"the gold matrix is {shape[0]}x{shape[1]}")
        return _compare_in_order(_items_of_matrix(gold), _items_of_matrix(pred), sym)
    gold_items, items = _items_of(gold), _items_of(pred)
    if items is None and isinstance(pred, ast.Interval) and pred.lo_closed and pred.hi_closed:
        items = (pred.lo, pred.hi)  # a vector written [a, b]
    if gold_items is None or items is None or len(items) != len(gold_items):
        return Match(False, "the gold is a matrix and the answer is not")
    return _compare_in_order(gold_items, items, sym)


def _items_of_matrix(matrix: ast.Matrix) -> tuple[Node, ...]:
    return tuple(cell for row in matrix.rows for cell in row)


# ---- relations, bases, measures ---------------------------------------------------------------------


def _comparer(sym: SymbolicCheck) -> Callable[[Node, Node], Match]:
    return lambda g, p: _compare(g, p, sym)


def _relations(gold: ast.Rel, pred: ast.Rel, sym: SymbolicCheck) -> Match:
    return compare_relations(gold, pred, _comparer(sym), sym)


def _compare_base(gold: Node, pred: Node) -> Match:
    def digits(node: Node) -> tuple[str, int | None] | None:
        if isinstance(node, ast.BaseNum):
            sign = "-" if node.digits.startswith("-") else ""
            return sign + (node.digits.lstrip("-0") or "0"), node.base
        if isinstance(node, ast.Neg) and isinstance(node.arg, ast.Num) and node.arg.mantissa > 0:
            found = digits(node.arg)
            return None if found is None else ("-" + found[0], None)
        if isinstance(node, ast.Num) and node.exp10 == 0 and node.decimals is None and node.mantissa >= 0:
            return str(node.mantissa), None
        return None

    g, p = digits(_unlabel(gold)), digits(pred)
    if g is None or p is None:
        return Match(False, "a numeral in another base compares only with digits")
    if g[0] != p[0]:
        return Match(False, f"the digits {p[0]} are not {g[0]}")
    if g[1] is not None and p[1] is not None and g[1] != p[1]:
        return Match(False, f"base {p[1]} is not base {g[1]}")
    if g[1] is None and p[1] is not None:
        return Match(False, "a numeral in another base where the gold is a decimal number")
    return Match(True, "the same digits")
