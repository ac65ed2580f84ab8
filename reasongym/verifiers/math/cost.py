r"""Refuse answers by their estimated cost, before anything is computed.

Two checks. :func:`check_text` looks at the raw string only (length, digit count, bracket depth), so
a 1 MB string is refused in microseconds. :func:`estimate_digits` walks the parsed tree and bounds,
in decimal digits, the size of every exact value and the magnitude of every numeric one, without
computing them: ``10^{10^{10^{10}}}``, ``(10^8)!`` or ``\binom{10^9}{5\cdot 10^8}`` are refused in
microseconds rather than exhausting memory. Variables count as values of modulus about 3, which is
what the numeric sampling of :mod:`equivalence` uses.
"""

from __future__ import annotations

import math

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.nodes import Node, Refused

__all__ = [
    "MAX_CHARS",
    "MAX_DIGITS",
    "MAX_NESTING_CHARS",
    "MAX_RESULT_DIGITS",
    "check_text",
    "estimate_digits",
]

MAX_CHARS = 2_000
"""Longest answer (or gold) accepted, in characters."""
MAX_DIGITS = 2_000
"""Most digit characters accepted in one answer."""
MAX_NESTING_CHARS = 50
"""Deepest bracket nesting accepted in the raw text."""
MAX_RESULT_DIGITS = 10_000
"""Largest estimated size (digits of an exact value, or log10 of a magnitude) accepted."""

_INF = math.inf
_LOG10_E = math.log10(math.e)
_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")


def check_text(text: str) -> None:
    """Refuse a raw answer that is too long, has too many digits, or nests too deeply.

    Args:
        text: The answer as given.

    Raises:
        Refused: With the limit that was exceeded.
    """
    if len(text) > MAX_CHARS:
        raise Refused(f"the answer has {len(text)} characters; at most {MAX_CHARS} are graded")
    digits = sum(map(str.isdigit, text))
    if digits > MAX_DIGITS:
        raise Refused(f"the answer has {digits} digits; at most {MAX_DIGITS} are graded")
    if sum(map(text.count, _OPENERS)) <= MAX_NESTING_CHARS:
        return  # brackets cannot nest deeper than there are opening ones
    depth = deepest = 0
    for ch in text:
        if ch in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in _CLOSERS:
            depth -= 1
    if deepest > MAX_NESTING_CHARS:
        raise Refused(f"brackets nest {deepest} deep; at most {MAX_NESTING_CHARS} levels are graded")


def _exp10(x: float) -> float:
    return _INF if x > 300 else 10.0**x


def _num_cost(node: ast.Num) -> tuple[float, float]:
    digits = max(0.3, math.log10(abs(node.mantissa) + 1))  # log10 takes ints of any size
    return digits + abs(node.exp10), max(0.0, digits + node.exp10)


def _func_cost(node: ast.Func) -> tuple[float, float]:
    sizes, mags = zip(*(_cost(arg) for arg in node.args), strict=True)
    size, mag = sum(sizes), max(mags)
    if node.name in ("exp", "sinh", "cosh"):
        grown = _exp10(mag) * _LOG10_E
        return size + grown, grown
    if node.name in ("sin", "cos", "tan", "cot", "sec", "csc"):
        return size + mag, 1.0  # reducing a huge argument needs as many digits as it has
    if node.name in ("log", "ln"):
        return size, math.log10(max(mag, size) * 2.31 + 1) + 1
    if node.name in ("abs", "floor", "ceil"):
        return size, mag
    return size, 1.0


def _pow_cost(node: ast.Pow) -> tuple[float, float]:
    base_size, base_mag = _cost(node.base)
    exp_size, exp_mag = _cost(node.exp)
    exponent = _exp10(exp_mag)
    grown = exponent * max(base_size, base_mag, 1.0)
    return base_size + exp_size + grown, grown


def _factorial_cost(node: ast.Factorial) -> tuple[float, float]:
    size, mag = _cost(node.arg)
    n = _exp10(mag)
    digits = _INF if n > 1e12 else math.lgamma(n + 1) / math.log(10) / node.step
    return size + digits, digits


def _binom_cost(node: ast.Binom) -> tuple[float, float]:
    n_size, n_mag = _cost(node.n)
    k_size, k_mag = _cost(node.k)
    n, k = _exp10(n_mag), _exp10(k_mag)
    digits = min(k * math.log10(n + 1), n * math.log10(2) + 1)  # C(n, k) <= n^k and <= 2^n
    return n_size + k_size + digits, digits


def _cost(node: Node) -> tuple[float, float]:
    """(size, magnitude): digits of the exact value, and an upper bound of log10 |value|."""
    if isinstance(node, ast.Num):
        return _num_cost(node)
    if isinstance(node, (ast.Sym, ast.Const, ast.Text)):
        return 1.0, 0.5
    if isinstance(node, ast.BaseNum):
        return float(len(node.digits)), float(len(node.digits))
    if isinstance(node, ast.Pow):
        return _pow_cost(node)
    if isinstance(node, ast.Func):
        return _func_cost(node)
    if isinstance(node, ast.Factorial):
        return _factorial_cost(node)
    if isinstance(node, ast.Binom):
        return _binom_cost(node)
    if isinstance(node, ast.Add):
        costs = [_cost(term) for term in node.terms]
        return sum(c[0] for c in costs), max(c[1] for c in costs) + math.log10(len(costs))
    if isinstance(node, ast.Mul):
        num = [_cost(factor) for factor in node.num]
        den = [_cost(factor) for factor in node.den]
        den_size = sum(c[0] for c in den)
        return sum(c[0] for c in num) + den_size, sum(c[1] for c in num) + den_size  # |1/b| <= 10^size(b)
    if isinstance(node, ast.Root):
        size, mag = _cost(node.arg)
        return size + _cost(node.index)[0], mag / 2
    if isinstance(node, (ast.Percent, ast.Degree)):
        size, mag = _cost(node.arg)
        return size + 3, mag
    costs = [_cost(child) for child in ast.children(node)]
    if not costs:
        return 1.0, 0.5
    return max(c[0] for c in costs), max(c[1] for c in costs)


def estimate_digits(node: Node) -> float:
    """Bound the digits any evaluation of ``node`` needs, refusing what is too costly.

    Args:
        node: A parsed answer.

    Returns:
        The estimated number of decimal digits (used to pick the numeric precision).

    Raises:
        Refused: The estimate exceeds ``MAX_RESULT_DIGITS``.
    """
    size, mag = _cost(node)
    digits = max(size, mag)
    if not digits <= MAX_RESULT_DIGITS:  # also catches NaN from inf - inf
        shown = (
            "an unbounded number of" if math.isinf(digits) or math.isnan(digits) else f"about {digits:.0f}"
        )
        raise Refused(f"evaluating the answer needs {shown} digits; at most {MAX_RESULT_DIGITS} are computed")
    return digits
