"""The sympy step: build sympy objects from the syntax tree, node by node, and test a difference.

No text ever reaches sympy: there is no ``sympify``, ``parse_expr`` or LaTeX parser here, only
constructors (``Integer``, ``Symbol``, ``Add``, ``Pow``, ``sin``, ...). :func:`_symbolic_equal` is
the one entry point; verifiers call it through
:func:`reasongym.verifiers.timeout.run_with_timeout`, so it runs in a worker process under a hard
time limit, and this module (with sympy) is imported there, not in the grading process.
"""

from __future__ import annotations

from typing import Any

import sympy
from sympy.functions.elementary.trigonometric import TrigonometricFunction

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.nodes import Node

__all__ = ["to_sympy"]

_FUNCTIONS = {
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "cot": sympy.cot,
    "sec": sympy.sec,
    "csc": sympy.csc,
    "arcsin": sympy.asin,
    "arccos": sympy.acos,
    "arctan": sympy.atan,
    "arcsec": sympy.asec,
    "arccsc": sympy.acsc,
    "arccot": sympy.acot,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "tanh": sympy.tanh,
    "exp": sympy.exp,
    "ln": sympy.log,
    "abs": sympy.Abs,
    "floor": sympy.floor,
    "ceil": sympy.ceiling,
}
_CONSTANTS = {"pi": sympy.pi, "e": sympy.E, "i": sympy.I, "oo": sympy.oo}


def _root(arg: Any, index: Any) -> Any:
    # Odd roots of negative numbers are real, as in the numeric evaluator.
    if index.is_Integer and int(index) % 2 == 1 and arg.is_number and arg.is_negative:
        return -sympy.root(-arg, index)
    return sympy.root(arg, index)


def _power(base: Any, exp: Any) -> Any:
    if exp.is_Rational and not exp.is_Integer and exp.q % 2 == 1 and base.is_number and base.is_negative:
        return _root(base, sympy.Integer(exp.q)) ** exp.p
    return sympy.Pow(base, exp)


def to_sympy(node: Node) -> Any:
    """Build the sympy expression of a scalar node.

    Args:
        node: A scalar node (numbers, variables, arithmetic, functions).

    Returns:
        The sympy expression.

    Raises:
        TypeError: The node is not a scalar.
    """
    if isinstance(node, ast.Num):
        if node.exp10 >= 0:
            return sympy.Integer(node.mantissa * 10**node.exp10)
        return sympy.Rational(node.mantissa, 10**-node.exp10)
    if isinstance(node, ast.Sym):
        return sympy.Symbol(node.name)
    if isinstance(node, ast.Const):
        return _CONSTANTS[node.name]
    if isinstance(node, ast.Add):
        return sympy.Add(*(to_sympy(t) for t in node.terms))
    if isinstance(node, ast.Mul):
        num = sympy.Mul(*(to_sympy(f) for f in node.num))
        return num / sympy.Mul(*(to_sympy(f) for f in node.den)) if node.den else num
    if isinstance(node, ast.Neg):
        return -to_sympy(node.arg)
    if isinstance(node, ast.Pow):
        return _power(to_sympy(node.base), to_sympy(node.exp))
    if isinstance(node, ast.Root):
        return _root(to_sympy(node.arg), to_sympy(node.index))
    if isinstance(node, ast.Percent):
        return to_sympy(node.arg) / 100
    if isinstance(node, ast.Degree):
        return to_sympy(node.arg) * sympy.pi / 180
    if isinstance(node, ast.Factorial):
        arg = to_sympy(node.arg)
        return sympy.factorial(arg) if node.step == 1 else sympy.factorial2(arg)
    if isinstance(node, ast.Binom):
        return sympy.binomial(to_sympy(node.n), to_sympy(node.k))
    if isinstance(node, ast.Func):
        args = [to_sympy(a) for a in node.args]
        if node.name == "log":
            return sympy.log(*args)
        return _FUNCTIONS[node.name](args[0])
    raise TypeError(f"{type(node).__name__} is not a scalar expression")


_SIN_COS = {
    sympy.tan: lambda a: sympy.sin(a) / sympy.cos(a),
    sympy.cot: lambda a: sympy.cos(a) / sympy.sin(a),
    sympy.sec: lambda a: 1 / sympy.cos(a),
    sympy.csc: lambda a: 1 / sympy.sin(a),
}


def _in_sin_cos(expr: Any) -> Any:
    """``expr`` with tan, cot, sec and csc written with sin and cos, multiple angles expanded."""
    for function, rewrite in _SIN_COS.items():
        expr = expr.replace(function, rewrite)
    return sympy.expand_trig(expr)


def _symbolic_equal(gold: Node, pred: Node) -> bool:
    """True when sympy shows ``gold - pred`` is zero (run it under ``run_with_timeout``).

    Cheap rewrites first: expand, cancel; with trig functions also the sin/cos form with multiple
    angles expanded (tan x sin 2x is 2 sin^2 x); then simplify, then Fu's trig simplification.
    """
    difference = to_sympy(gold) - to_sympy(pred)
    if difference == 0:
        return True
    for simplify in (sympy.expand, sympy.cancel):
        difference = simplify(difference)
        if difference == 0:
            return True
    trig = difference.has(TrigonometricFunction)
    if trig and sympy.cancel(_in_sin_cos(difference)) == 0:
        return True
    if sympy.simplify(difference) == 0:
        return True
    if trig and sympy.fu(difference) == 0:
        return True
    return bool(sympy.expand(sympy.expand_trig(difference)) == 0)
