r"""Numbers, quantities and percents compared as measures: one value in one unit against another.

- Units convert within a dimension (``500 cm`` is ``5 m``) and never across (``5 cm`` vs
  ``5 m`` is checked as a conversion, ``5 kg`` vs ``5 m`` is wrong); a gold without a unit ignores
  the prediction's unit, and a prediction without one is read in the gold's unit.
- An angle in degrees against a bare value that mentions pi reads the bare value in radians (``30°`` for
  a gold ``\pi/6``); a bare value without pi stays in the other side's unit (``30`` for ``30°``).
- Percent: gold ``25\%`` accepts 25 and 0.25; gold 25 accepts ``25\%`` but not 0.25; a gold below 1
  (a probability, a share) reads a percent only as hundredths (gold 0.5 accepts 50%, not 0.5%).
- A decimal gold also accepts the values its shown digits round (:mod:`~reasongym.verifiers.math.decimals`).
"""

from __future__ import annotations

from fractions import Fraction

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.decimals import Shown, rounds_to_gold, shown_decimal
from reasongym.verifiers.math.evaluate import below_one
from reasongym.verifiers.math.nodes import Node
from reasongym.verifiers.math.numeric import Match, SymbolicCheck, compare_scalars

__all__ = ["compare_measures", "is_measure"]


def is_measure(node: Node) -> bool:
    """Whether ``node`` is one value (a number, a percent, an expression) or one value in a unit."""
    return ast.is_scalar(node) or isinstance(node, ast.Quantity)


def _split_measure(node: Node) -> tuple[Node, ast.Unit | None, bool]:
    if isinstance(node, ast.Quantity):
        return node.value, node.unit, False
    if isinstance(node, ast.Percent):
        return node.arg, None, True
    return node, None, False


def _in_unit(value: Node, unit: ast.Unit, target: ast.Unit) -> Node:
    factor = unit.factor / target.factor
    num: tuple[Node, ...] = (value, ast.Num(factor.numerator))
    pi_power = unit.pi_power - target.pi_power
    if pi_power:
        num += (ast.Pow(ast.Const("pi"), ast.Num(pi_power) if pi_power > 0 else ast.Neg(ast.Num(-pi_power))),)
    return ast.Mul(num, (ast.Num(factor.denominator),))


_RADIAN = ast.Unit("rad", (("angle", 1),), Fraction(180), -1)


def _mentions_pi(node: Node) -> bool:
    return node == ast.Const("pi") or any(_mentions_pi(child) for child in ast.children(node))


def compare_measures(gold: Node, pred: Node, sym: SymbolicCheck) -> Match:
    """Whether ``pred`` is ``gold`` as measures (the module docstring's rules), and why."""
    g_value, g_unit, g_percent = _split_measure(gold)
    p_value, p_unit, p_percent = _split_measure(pred)
    if (g_unit is None) != (p_unit is None) and (g_unit or p_unit).dims == (("angle", 1),):  # type: ignore[union-attr]
        bare = g_value if g_unit is None else p_value
        if _mentions_pi(bare):  # "30°" against a gold π/6: an angle in radians, written without its unit
            g_unit, p_unit = g_unit or _RADIAN, p_unit or _RADIAN
    if g_unit is not None and p_unit is not None:
        if g_unit.dims != p_unit.dims:
            return Match(False, f"{p_unit.name} does not measure the same quantity as {g_unit.name}")
        p_value = _in_unit(p_value, p_unit, g_unit)
    shown = shown_decimal(g_value)
    hundred = ast.Num(100)
    candidates = [(g_value, p_value, shown)]
    if g_percent and not p_percent:  # gold 25% accepts 25 and 0.25
        candidates.append((ast.Mul((g_value,), (hundred,)), p_value, shown.scaled(-2) if shown else None))
    if p_percent and not g_percent:  # gold 25 accepts 25% (the number the question asked for)
        candidates.append((g_value, ast.Mul((p_value,), (hundred,)), shown))
        if below_one(g_value):  # gold 0.5 is a share of one: 0.5% is 0.005, never 0.5
            candidates.pop(0)
    first = None
    for g, p, written in candidates:
        match = _compare_values(g, p, written, sym)
        if match.equal:
            return match
        first = first or match
    return first


def _compare_values(gold: Node, pred: Node, shown: Shown | None, sym: SymbolicCheck) -> Match:
    """Exact comparison; a decimal gold also accepts the values it rounds (see :mod:`decimals`)."""
    if shown is None:
        return compare_scalars(gold, pred, None, sym)
    match = compare_scalars(gold, pred, shown.float_slack, sym)
    if match.equal or not rounds_to_gold(shown, pred):
        return match
    return Match(True, "the decimal gold is this value rounded")
