r"""Sets of reals as answers: intervals, finite sets and their unions, normalised before comparing.

A union is brought to one canonical form before it is compared, so that the same set written
another way compares equal: finite sets merge (``\{2,5\}\cup\{7\}`` is ``\{2,5,7\}``), overlapping or
touching intervals merge (``[1,2]\cup[2,3]`` is ``[1,3]``, ``(1,2)\cup[2,3)`` is ``(1,3)``), and a point
joins an interval that contains it or closes the open end it sits on (``\{1\}\cup(1,3)`` is ``[1,3)``).
What is left is one interval, one finite set, or a union of disjoint intervals (and one finite set of
the points outside them). Ends and members must be real constants; a union with variables is
compared as written.

A set difference of intervals less finitely many points (``\mathbb{R}\setminus\{0\}``,
``[0,5]\setminus\{2\}``) is written out as the intervals that are left (:func:`difference`), so
that it compares with the union a gold may give (``(-\infty,0)\cup(0,\infty)``).

Intervals then need the same ends and the same open/closed ends (the side of an infinite end is
ignored), and unions match part by part in any order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.evaluate import numeric_value
from reasongym.verifiers.math.nodes import Node, Unparseable
from reasongym.verifiers.math.numeric import Match

__all__ = ["as_interval", "compare_interval", "compare_union", "difference", "intersection", "normalize_set"]

_INFINITIES = (ast.Const("oo"), ast.Neg(ast.Const("oo")))
_DPS = 40
_INF = float("inf")
_SAME = 1e-30  # relative: ends computed to 40 digits that agree this far are the same number

Compare = Callable[[Node, Node], Match]


def _real(node: Node) -> Any:
    """The value of an end or member, or None when it is not a real constant."""
    if not ast.is_scalar(node) or ast.free_symbols(node):
        return None
    try:
        value = numeric_value(node, _DPS)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None
    if value.imag != 0:
        return None
    return value.real


def _same(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if abs(a) == _INF or abs(b) == _INF:
        return False
    return bool(abs(a - b) <= _SAME * max(abs(a), abs(b)))


class _Piece:
    """An interval with the numeric values of its ends."""

    def __init__(self, interval: ast.Interval, lo: Any, hi: Any) -> None:
        self.interval, self.lo, self.hi = interval, lo, hi

    def contains(self, value: Any) -> bool:
        inside_lo = self.lo < value or (self.interval.lo_closed and _same(self.lo, value))
        inside_hi = value < self.hi or (self.interval.hi_closed and _same(self.hi, value))
        return bool(inside_lo and inside_hi)

    def closed_at(self, value: Any) -> _Piece | None:
        """This interval with the open end at ``value`` closed, or None when no open end is there."""
        if not self.interval.lo_closed and _same(self.lo, value):
            return _Piece(_replace(self.interval, lo_closed=True), self.lo, self.hi)
        if not self.interval.hi_closed and _same(self.hi, value):
            return _Piece(_replace(self.interval, hi_closed=True), self.lo, self.hi)
        return None


def _replace(interval: ast.Interval, **changes: Any) -> ast.Interval:
    fields = {
        "lo": interval.lo,
        "hi": interval.hi,
        "lo_closed": interval.lo_closed,
        "hi_closed": interval.hi_closed,
    }
    return ast.Interval(**(fields | changes))


def _merge(pieces: list[_Piece]) -> list[_Piece]:
    """Sort by the left end and join intervals that overlap or touch at a closed end."""
    pieces = sorted(pieces, key=lambda piece: (piece.lo, not piece.interval.lo_closed))
    merged: list[_Piece] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        touching = last is not None and _same(last.hi, piece.lo)
        joins = last is not None and (
            last.hi > piece.lo
            and not touching
            or touching
            and (last.interval.hi_closed or piece.interval.lo_closed)
        )
        if not joins:
            merged.append(piece)
            continue
        if piece.hi > last.hi and not _same(piece.hi, last.hi):
            hi, hi_node, hi_closed = piece.hi, piece.interval.hi, piece.interval.hi_closed
        else:
            hi, hi_node = last.hi, last.interval.hi
            hi_closed = last.interval.hi_closed or (_same(piece.hi, last.hi) and piece.interval.hi_closed)
        merged[-1] = _Piece(_replace(last.interval, hi=hi_node, hi_closed=hi_closed), last.lo, hi)
    return merged


def _parts(node: Node) -> tuple[list[_Piece], list[tuple[Node, Any]]] | None:
    """The intervals and points of a union or set, with their values; None if any is not real."""
    pieces: list[_Piece] = []
    points: list[tuple[Node, Any]] = []
    for part in node.parts if isinstance(node, ast.Union) else (node,):
        if isinstance(part, ast.Interval):
            lo, hi = _real(part.lo), _real(part.hi)
            if lo is None or hi is None:
                return None
            pieces.append(_Piece(part, lo, hi))
        elif isinstance(part, ast.Seq) and part.kind == "set":
            for item in part.items:
                value = _real(item)
                if value is None:
                    return None
                points.append((item, value))
        else:
            return None
    return pieces, points


def normalize_set(node: Node) -> Node:
    """The canonical form of a union of intervals and finite sets (see the module docstring).

    Args:
        node: Any parsed answer; only a :class:`~reasongym.verifiers.math.nodes.Union` changes.

    Returns:
        One interval, one finite set, or a union of disjoint intervals and one set of other points;
        the node unchanged when it is not a union of real constants.
    """
    found = _parts(node) if isinstance(node, ast.Union) else None
    if found is None:
        return node
    pieces, points = found
    pieces = _merge(pieces)
    kept: list[tuple[Node, Any]] = []
    for item, value in sorted(points, key=lambda point: point[1]):
        if any(piece.contains(value) for piece in pieces) or any(_same(value, v) for _, v in kept):
            continue
        index = next((k for k, piece in enumerate(pieces) if piece.closed_at(value) is not None), None)
        if index is None:
            kept.append((item, value))
        else:
            pieces[index] = pieces[index].closed_at(value)
    pieces = _merge(pieces)
    members = ast.Seq("set", tuple(item for item, _ in kept))
    parts: list[Node] = [piece.interval for piece in pieces] + ([members] if kept else [])
    if len(parts) == 1:
        return parts[0]
    return ast.Union(tuple(parts)) if parts else ast.Seq("set", ())


def _without_point(piece: _Piece, point: Node, value: Any) -> list[_Piece]:
    """The interval ``piece`` with one point taken out: itself, one end opened, or two pieces."""
    if not piece.contains(value):
        return [piece]
    at_lo, at_hi = _same(piece.lo, value), _same(piece.hi, value)
    if at_lo and at_hi:
        return []
    if at_lo or at_hi:
        end = {"lo_closed": False} if at_lo else {"hi_closed": False}
        return [_Piece(_replace(piece.interval, **end), piece.lo, piece.hi)]
    left = _Piece(_replace(piece.interval, hi=point, hi_closed=False), piece.lo, value)
    right = _Piece(_replace(piece.interval, lo=point, lo_closed=False), value, piece.hi)
    return [left, right]


def difference(base: Node, removed: Node) -> Node:
    r"""``base \setminus removed``: intervals (or their union) less a finite set of real numbers.

    Example: ``\mathbb{R}\setminus\{0\}`` is ``(-\infty, 0) \cup (0, \infty)``; a point outside
    ``base`` changes nothing, a point at a closed end opens it.

    Raises:
        Unparseable: ``base`` is not intervals of real ends, or ``removed`` is not real numbers.
    """
    if ast.is_scalar(removed):
        removed = ast.Seq("set", (removed,))  # \mathbb{R}\setminus{0}: the braces were not escaped
    found = _parts(base) if isinstance(base, (ast.Interval, ast.Union)) else None
    points = _parts(removed) if isinstance(removed, ast.Seq) and removed.kind == "set" else None
    if found is None or found[1] or points is None:
        raise Unparseable("a set difference is understood for intervals less a finite set of numbers")
    pieces = found[0]
    for point, value in points[1]:
        pieces = [kept for piece in pieces for kept in _without_point(piece, point, value)]
    if len(pieces) == 1:
        return pieces[0].interval
    return ast.Union(tuple(piece.interval for piece in pieces)) if pieces else ast.Seq("set", ())


def intersection(items: list[Node]) -> ast.Interval | None:
    """The interval that intervals joined by "and" describe ("x > 2 and x < 5" is ``(2, 5)``).

    Returns:
        The common interval; None when an item is not an interval of real ends or nothing is common
        (then "and" is read as a list, as it was written).
    """
    pieces = [_parts(item) for item in items if isinstance(item, ast.Interval)]
    if len(pieces) != len(items) or any(found is None or not found[0] for found in pieces):
        return None
    lo = max((found[0][0] for found in pieces if found), key=lambda p: (p.lo, not p.interval.lo_closed))
    hi = min((found[0][0] for found in pieces if found), key=lambda p: (p.hi, p.interval.hi_closed))
    if lo.lo > hi.hi or (_same(lo.lo, hi.hi) and not (lo.interval.lo_closed and hi.interval.hi_closed)):
        return None
    return ast.Interval(lo.interval.lo, hi.interval.hi, lo.interval.lo_closed, hi.interval.hi_closed)


def as_interval(node: Node) -> ast.Interval | None:
    """``node`` read as an interval (an open pair ``(a, b)`` may stand for one), or None."""
    if isinstance(node, ast.Interval):
        return node
    if isinstance(node, ast.Seq) and node.kind == "tuple" and len(node.items) == 2:
        return ast.Interval(node.items[0], node.items[1], False, False)
    if isinstance(node, ast.Union) and len(node.parts) == 1:
        return as_interval(node.parts[0])
    return None


def compare_interval(gold: ast.Interval, pred: Node, compare: Compare) -> Match:
    """Same ends, and the same open or closed ends (the side of an infinite end is ignored)."""
    interval = as_interval(pred)
    if interval is None:
        return Match(False, "the gold is an interval and the answer is not")
    for end, g, p, g_closed, p_closed in (
        ("left", gold.lo, interval.lo, gold.lo_closed, interval.lo_closed),
        ("right", gold.hi, interval.hi, gold.hi_closed, interval.hi_closed),
    ):
        if g in _INFINITIES or p in _INFINITIES:
            if g != p:
                return Match(False, f"the {end} ends differ")
            continue
        if g_closed != p_closed:
            return Match(False, f"the {end} end is {'closed' if g_closed else 'open'} in the gold")
        match = compare(g, p)
        if not match.equal:
            return Match(False, f"the {end} ends differ: {match.reason}")
    return Match(True, "the same interval")


def compare_union(gold: ast.Union, pred: Node, compare: Compare) -> Match:
    """Part by part, in any order."""
    parts = list(pred.parts if isinstance(pred, ast.Union) else (pred,))
    if len(parts) != len(gold.parts):
        return Match(False, f"{len(parts)} pieces where the gold union has {len(gold.parts)}")
    for k, part in enumerate(gold.parts):
        found = next((p for p in parts if compare(part, p).equal), None)
        if found is None:
            return Match(False, f"piece {k + 1} of the gold union is missing from the answer")
        parts.remove(found)
    return Match(True, "the same union")
