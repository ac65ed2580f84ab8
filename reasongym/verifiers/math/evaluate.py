"""Evaluate parsed answers: exactly with ``fractions.Fraction``, or numerically with mpmath.

Callers run :func:`reasongym.verifiers.math.cost.estimate_digits` first, so every value computed
here has a bounded number of digits. Neither evaluator ever sees text, and neither uses sympy.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction
from typing import Any

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.nodes import Node

__all__ = ["below_one", "exact_value", "numeric_value", "numeric_context"]

_MAX_ROOT_INDEX = 10_000
_LOCAL = threading.local()


class _NotRational(Exception):
    """The value is not a rational number (or is not worth computing exactly)."""


def _iroot(value: int, n: int) -> int | None:
    """The exact integer n-th root of ``value`` >= 0, or None."""
    if value < 2:
        return value
    x = 1 << -(-value.bit_length() // n)
    while True:
        y = ((n - 1) * x + value // x ** (n - 1)) // n
        if y >= x:
            return x if x**n == value else None
        x = y


def _rational_root(value: Fraction, n: int) -> Fraction:
    if n < 1 or n > _MAX_ROOT_INDEX:
        raise _NotRational
    negative = value < 0
    if negative and n % 2 == 0:
        raise _NotRational
    num, den = _iroot(abs(value.numerator), n), _iroot(value.denominator, n)
    if num is None or den is None:
        raise _NotRational
    root = Fraction(num, den)
    return -root if negative else root


def _integer(value: Fraction) -> int:
    if value.denominator != 1:
        raise _NotRational
    return int(value)


def _power(base: Fraction, exp: Fraction) -> Fraction:
    if exp.denominator != 1:
        base = _rational_root(base, exp.denominator)
    return base ** int(exp.numerator)


def _factorial(n: int, step: int) -> int:
    if n < 0:
        raise _NotRational
    return math.factorial(n) if step == 1 else math.prod(range(n, 0, -2))


def _exact(node: Node) -> Fraction:
    if isinstance(node, ast.Num):
        return node.value
    if isinstance(node, ast.Add):
        return sum((_exact(t) for t in node.terms), Fraction(0))
    if isinstance(node, ast.Mul):
        num = math.prod((_exact(f) for f in node.num), start=Fraction(1))
        den = math.prod((_exact(f) for f in node.den), start=Fraction(1))
        return num / den  # ZeroDivisionError reaches the caller: the value is undefined
    if isinstance(node, ast.Neg):
        return -_exact(node.arg)
    if isinstance(node, ast.Pow):
        return _power(_exact(node.base), _exact(node.exp))
    if isinstance(node, ast.Root):
        return _rational_root(_exact(node.arg), _integer(_exact(node.index)))
    if isinstance(node, ast.Percent):
        return _exact(node.arg) / 100
    if isinstance(node, ast.Factorial):
        return Fraction(_factorial(_integer(_exact(node.arg)), node.step))
    if isinstance(node, ast.Binom):
        n, k = _integer(_exact(node.n)), _integer(_exact(node.k))
        if n < 0:
            raise _NotRational
        return Fraction(math.comb(n, k) if k >= 0 else 0)
    if isinstance(node, ast.Func) and node.name in ("abs", "floor", "ceil"):
        value = _exact(node.args[0])
        return (
            abs(value)
            if node.name == "abs"
            else Fraction(math.floor(value) if node.name == "floor" else math.ceil(value))
        )
    raise _NotRational


def exact_value(node: Node) -> Fraction | None:
    r"""The exact rational value of ``node``, or None when it is not a rational number.

    Args:
        node: A scalar node whose cost was checked.

    Returns:
        The value, or None for irrational, complex or symbolic expressions.

    Raises:
        ZeroDivisionError: The expression divides by zero.

    Example:
        >>> from reasongym.verifiers.math.parser import parse_answer
        >>> exact_value(parse_answer("3\\frac12"))
        Fraction(7, 2)
    """
    try:
        return _exact(node)
    except _NotRational:
        return None


def numeric_context(dps: int) -> Any:
    """A per-thread mpmath context set to ``dps`` decimal digits (never the global ``mpmath.mp``)."""
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        import mpmath  # imported on first use: integer and fraction answers never need it

        ctx = _LOCAL.ctx = mpmath.MPContext()
    ctx.dps = dps
    return ctx


_FUNCTIONS = {
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "cot": "cot",
    "sec": "sec",
    "csc": "csc",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsec": "asec",
    "arccsc": "acsc",
    "arccot": "acot",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "exp": "exp",
    "ln": "ln",
    "floor": "floor",
    "ceil": "ceil",
}


def _is_negative_real(ctx: Any, value: Any) -> bool:
    return ctx.im(value) == 0 and ctx.re(value) < 0


def _real_root(ctx: Any, value: Any, n: Any) -> Any:
    """Odd roots of negative reals are real (the cube root of -8 is -2, as a reader expects)."""
    if ctx.isint(n) and int(n) % 2 == 1 and _is_negative_real(ctx, value):
        return -ctx.root(-ctx.re(value), int(n))
    if ctx.isint(n):
        return ctx.root(value, int(n))
    return ctx.power(value, 1 / n)


def _numeric_power(ctx: Any, node: ast.Pow, env: dict[str, Any]) -> Any:
    base = _numeric(ctx, node.base, env)
    exp_exact = exact_value(node.exp) if not ast.free_symbols(node.exp) else None
    if exp_exact is not None and exp_exact.denominator % 2 == 1 and _is_negative_real(ctx, base):
        return _real_root(ctx, base, exp_exact.denominator) ** exp_exact.numerator
    return ctx.power(base, _numeric(ctx, node.exp, env))


def _numeric(ctx: Any, node: Node, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Num):
        return ctx.mpf(f"{node.mantissa}e{node.exp10}")
    if isinstance(node, ast.Sym):
        return env[node.name]
    if isinstance(node, ast.Const):
        return {"pi": ctx.pi, "e": ctx.e, "i": ctx.j, "oo": ctx.inf}[node.name]
    if isinstance(node, ast.Add):
        return ctx.fsum(_numeric(ctx, t, env) for t in node.terms)
    if isinstance(node, ast.Mul):
        num = ctx.fprod(_numeric(ctx, f, env) for f in node.num)
        den = ctx.fprod(_numeric(ctx, f, env) for f in node.den)
        if den == 0:
            raise ZeroDivisionError
        return num / den
    if isinstance(node, ast.Neg):
        return -_numeric(ctx, node.arg, env)
    if isinstance(node, ast.Pow):
        return _numeric_power(ctx, node, env)
    if isinstance(node, ast.Root):
        return _real_root(ctx, _numeric(ctx, node.arg, env), _numeric(ctx, node.index, env))
    if isinstance(node, ast.Percent):
        return _numeric(ctx, node.arg, env) / 100
    if isinstance(node, ast.Degree):
        return _numeric(ctx, node.arg, env) * ctx.pi / 180
    if isinstance(node, ast.Factorial):
        arg = _numeric(ctx, node.arg, env)
        return ctx.factorial(arg) if node.step == 1 else ctx.fac2(arg)
    if isinstance(node, ast.Binom):
        return ctx.binomial(_numeric(ctx, node.n, env), _numeric(ctx, node.k, env))
    if isinstance(node, ast.Func):
        args = [_numeric(ctx, a, env) for a in node.args]
        if node.name == "log":
            return ctx.log(*args)
        if node.name == "abs":
            return abs(args[0])
        return getattr(ctx, _FUNCTIONS[node.name])(args[0])
    raise TypeError(f"{type(node).__name__} has no numeric value")


def numeric_value(node: Node, dps: int, env: dict[str, Any] | None = None) -> Any:
    """Evaluate ``node`` with mpmath at ``dps`` digits (a real ``mpf`` or a complex ``mpc``).

    Args:
        node: A scalar node whose cost was checked.
        dps: Decimal digits of working precision.
        env: Values for the variables, by name.

    Returns:
        The value in the per-thread context of :func:`numeric_context`.

    Raises:
        ZeroDivisionError, ValueError, OverflowError: The value is undefined at this point.
    """
    return _numeric(numeric_context(dps), node, env or {})


def below_one(node: Node) -> bool:
    """Whether ``node`` is a real constant of size below 1 (a probability, a share); False when unknown."""
    try:
        number = numeric_value(node, 20)
    except (ArithmeticError, ValueError, TypeError):
        return False
    return bool(number.imag == 0 and abs(number.real) < 1)
