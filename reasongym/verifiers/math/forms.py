r"""Answer forms read more than one way: value chains and clock times.

Chains of equal values (``\sqrt{51} \approx 7.14``, ``\frac64 = 1.5``): a model often ends with
the exact value and its decimal approximation. Such a chain is graded by its exact member (the
first member without a decimal literal, else the first member), provided every other member is
consistent with it:

- a decimal literal must be the exact value rounded or truncated at its last shown digit
  (``\sqrt{51} \approx 7.14`` or ``7.141``; not ``7.2``, nor ``7.15``);
- an integer literal must equal a rational exact value, and lie within 0.5 of an irrational one
  (``\sqrt{51} \approx 7``; but ``2 + 2 = 5`` is inconsistent);
- any other member (``\frac{3}{2}``, ``2\sqrt2``) must equal the exact value.

An inconsistent chain is wrong whatever its first member, and only chains of constants joined by
``=`` or ``\approx`` are read this way: ``y - 2x = 1`` stays an equation.

Colons (``4:30``, ``3:1``): clock times compare field by field (``4:30`` is not ``2:15``, though
4/30 = 2/15), ratios as ratios; see :func:`compare_colons`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.evaluate import exact_value
from reasongym.verifiers.math.nodes import Node
from reasongym.verifiers.math.numeric import Match, SymbolicCheck, compare_scalars

__all__ = ["chain_exact", "compare_chain", "compare_colons", "states_exact"]


def _literal(node: Node) -> ast.Num | None:
    node = node.arg if isinstance(node, ast.Neg) else node
    return node if isinstance(node, ast.Num) else None


def _is_rational(node: Node) -> bool:
    try:
        return exact_value(node) is not None
    except ZeroDivisionError:
        return False


def _consistent(exact: Node, member: Node, symbolic: SymbolicCheck) -> Match:
    """Whether ``member`` states ``exact``: exactly, or as its rounding or truncation."""
    literal = _literal(member)
    if literal is None or (literal.decimals is None and (literal.exp10 != 0 or _is_rational(exact))):
        return compare_scalars(exact, member, None, symbolic)
    half_unit = Fraction(1, 2) * Fraction(10) ** -(literal.decimals or 0)
    match = compare_scalars(exact, member, half_unit, symbolic)
    if match.equal or literal.decimals is None:
        return match
    # A truncation lies within one unit of the exact value, on the side of zero: shifted half a
    # unit away from zero it is within half a unit.
    shift = ast.Mul((ast.Num(half_unit.numerator),), (ast.Num(half_unit.denominator),))
    shifted = ast.Add((member, ast.Neg(shift) if isinstance(member, ast.Neg) else shift))
    truncated = compare_scalars(exact, shifted, half_unit, symbolic)
    return truncated if truncated.equal else match


def states_exact(exact: Node, member: Node, symbolic: SymbolicCheck) -> Match:
    """Whether ``member`` states ``exact``: equal to it, or a decimal that is its rounding or truncation.

    Args:
        exact: The exact value.
        member: A chain member or a decimal answer.
        symbolic: The bounded sympy step, for members that need it.

    Returns:
        The comparison, with its reason.

    Raises:
        VerifierTimeout: A sympy step ran past its time limit.
    """
    return _consistent(exact, member, symbolic)


def _chain_member(chain: ast.Rel, symbolic: SymbolicCheck) -> tuple[Node | None, str]:
    """The exact member of a consistent chain of constants, or None and why not."""
    constant = all(ast.is_scalar(side) and not ast.free_symbols(side) for side in chain.sides)
    if set(chain.ops) != {"="} or not constant:
        return None, "a relation is not a value"
    exact = next((side for side in chain.sides if not ast.has_approximate(side)), chain.sides[0])
    for side in chain.sides:
        if side is exact:
            continue
        match = _consistent(exact, side, symbolic)
        if not match.equal:
            return None, f"the answer's chain of values is inconsistent: {match.reason}"
    return exact, ""


def chain_exact(chain: ast.Rel, symbolic: SymbolicCheck) -> Node | None:
    r"""The value a consistent chain of constants states (``\sqrt{51} \approx 7.14`` gives ``\sqrt{51}``).

    Args:
        chain: A relation.
        symbolic: The bounded sympy step, for members that need it.

    Returns:
        The chain's exact member, or None when it is not a consistent chain of constants.

    Raises:
        VerifierTimeout: A sympy step ran past its time limit.
    """
    return _chain_member(chain, symbolic)[0]


def compare_chain(
    gold: Node, chain: ast.Rel, compare: Callable[[Node, Node], Match], symbolic: SymbolicCheck
) -> Match:
    """Grade an answer chain ``exact = approximation`` against a gold that is not a relation.

    Args:
        gold: The gold answer (a value, list, interval, ...), label removed.
        chain: The prediction, a relation.
        compare: Compares the gold with one member (the caller's structural comparison).
        symbolic: The bounded sympy step, for members that need it.

    Returns:
        The comparison of the gold with the chain's exact member, or why the chain was not accepted.

    Raises:
        VerifierTimeout: A sympy step ran past its time limit.
    """
    exact, why = _chain_member(chain, symbolic)
    if exact is None:
        return Match(False, why)
    match = compare(gold, exact)
    return Match(match.equal, f"the exact value of the chain: {match.reason}")


def _clock_fields(colon: ast.Colon, half: str | None) -> tuple[int, int, int]:
    """Hours, minutes, seconds; ``half`` ("am"/"pm") turns 12-hour fields into 24-hour ones."""
    hours, minutes, seconds = (*colon.parts, 0)[:3]
    if half is not None:
        hours = hours % 12 + (12 if half == "pm" else 0)
    return hours, minutes, seconds


def _same_time(gold: ast.Colon, pred: ast.Colon) -> Match:
    if not (gold.clock and pred.clock):
        return Match(False, "a clock time is not a ratio")
    if gold.half and pred.half:
        same = _clock_fields(gold, gold.half) == _clock_fields(pred, pred.half)
    else:  # "4:30" without am/pm matches "4:30 pm" and "16:30"
        marked, plain = (gold, pred) if gold.half else (pred, gold)
        readings = {_clock_fields(marked, None), _clock_fields(marked, marked.half)}
        same = _clock_fields(plain, None) in readings
    return Match(True, "the same clock time") if same else Match(False, "a different clock time")


def _reduced(parts: tuple[int, ...]) -> tuple[int, ...]:
    divisor = math.gcd(*parts) or 1
    return tuple(part // divisor for part in parts)


def compare_colons(gold: Node, pred: Node, compare: Callable[[Node, Node], Match]) -> Match:
    """Compare answers of which at least one is a :class:`~reasongym.verifiers.math.nodes.Colon`.

    Two clock-shaped ones (``4:30``, ``2:15``) or any with am/pm are times and compare field by
    field, so 4:30 is not 2:15 although 4/30 = 2/15. Otherwise two colons are ratios and compare
    as ratios (``3:1`` is ``6:2``, ``9:24`` is ``3:8``). A number says nothing about clocks, so
    ``a:b`` against a number compares its quotient (``1:2`` is 0.5), unless am/pm marks a time.
    """
    if isinstance(gold, ast.Colon) and isinstance(pred, ast.Colon):
        if gold.half or pred.half or (gold.clock and pred.clock):
            return _same_time(gold, pred)
        if len(gold.parts) != len(pred.parts) or _reduced(gold.parts) != _reduced(pred.parts):
            return Match(False, "a different ratio")
        return Match(True, "the same ratio")
    colon, other = (gold, pred) if isinstance(gold, ast.Colon) else (pred, gold)
    if colon.half or len(colon.parts) != 2 or not (ast.is_scalar(other) or isinstance(other, ast.Quantity)):
        return Match(False, f"{'a clock time' if colon.half else 'a ratio'} is not this kind of answer")
    quotient = ast.Mul((ast.Num(colon.parts[0]),), (ast.Num(colon.parts[1]),))
    return compare(quotient, other) if colon is gold else compare(gold, quotient)
