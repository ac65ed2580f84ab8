r"""The tools a model may call inside its answer: an exact calculator and a safe sympy evaluator.

Syntax (what :data:`TOOL_INSTRUCTION` tells the model)::

    <calc>3*(4+5)</calc>                 ->  <result>27</result>
    <calc>1/3 + 1/6</calc>               ->  <result>1/2 = 0.5</result>
    <sympy>factor(x^2 - 1)</sympy>       ->  <result>(x - 1)*(x + 1)</result>
    <sympy>solve(2x + 3 = 7)</sympy>     ->  <result>x = 2</result>

Expressions use the grammar of the math verifier (``^`` or ``**`` for powers, implicit products such as
``2x``, ``sqrt(2)``, ``\frac{1}{3}``, ``5!``, ``\binom{5}{2}``, ``sin``, ``ln``, ``pi``, ``e``).
The sympy operations are ``simplify``, ``expand``, ``factor`` and ``solve`` (an equation, an expression
taken as ``= 0``, or several separated by ``,`` for a system).

Safety: model text is never given to ``eval``, ``sympify`` or a LaTeX parser. It is parsed by the
verifier's own parser (:func:`reasongym.verifiers.math.parser.parse_answer`), which first refuses
anything too long, too deep or too costly to evaluate (:mod:`reasongym.verifiers.math.cost`). The
calculator then evaluates the syntax tree exactly with fractions (or with mpmath for irrational
values) in this process, every value bounded by that cost check; sympy objects are built node by
node from the tree, in the verifiers' worker process under a hard time limit
(:func:`reasongym.verifiers.timeout.run_with_timeout`). Every failure becomes an ``error: ...`` result
for the model to read, never an exception.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from reasongym.errors import ConfigError, VerifierOutOfMemory, VerifierTimeout
from reasongym.verifiers.base import VERIFY_TIMEOUT_S
from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.cost import MAX_CHARS
from reasongym.verifiers.math.evaluate import exact_value, numeric_value
from reasongym.verifiers.math.nodes import AnswerRejected, Node
from reasongym.verifiers.math.parser import parse_answer

TOOLS = ("calc", "sympy")
"""The tool names; each is called as ``<name>...</name>``."""
SYMPY_OPERATIONS = ("simplify", "expand", "factor", "solve")
"""What ``<sympy>operation(...)</sympy>`` may ask for."""
MAX_ARGUMENT_CHARS = MAX_CHARS + 100
"""Longest text between a tool's tags that is read (the expression limit plus room for ``solve(...)``)."""
RESULT_FORMAT = "\n<result>{result}</result>\n"
"""How a tool result is shown to the model (the observation after a tool call)."""
TOOL_INSTRUCTION = (
    "You may use tools before your final answer. To compute exactly, write <calc>EXPRESSION</calc>, "
    "e.g. <calc>3*(4+5)</calc>. For algebra, write <sympy>OPERATION(EXPRESSION)</sympy> where OPERATION "
    "is simplify, expand, factor or solve, e.g. <sympy>factor(x^2 - 1)</sympy> or "
    "<sympy>solve(2x + 3 = 7)</sympy>. Use ^ for powers and * for products. Stop writing right after the "
    "closing tag: the result comes back as <result>...</result> and you continue from there. Only the "
    "first tool call of a reply runs. A reply without a tool call is your final answer; you have at most "
    "{max_turns} replies."
)
"""The tool part of the prompt; ``{max_turns}`` is filled in by the environment."""

_DECIMAL_DIGITS = 12
# Opening and closing tags are found separately: one lazy pattern "<calc>(.*?)</calc>" rescans the rest
# of the text from every opening tag, which is quadratic in a reply of thousands of unclosed tags.
_OPEN = {name: re.compile(rf"<{name}>", re.IGNORECASE) for name in TOOLS}
_CLOSE = {name: re.compile(rf"</{name}>", re.IGNORECASE) for name in TOOLS}
_OPERATION = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$", re.DOTALL)


class ToolError(Exception):
    """A tool call cannot be answered; the message is shown to the model as ``error: <message>``."""


@dataclass(frozen=True)
class ToolCall:
    """One complete tool call found in a model turn.

    Attributes:
        tool: The tool name, one of :data:`TOOLS`.
        argument: The text between the tags.
        start: Index of the opening tag in the turn.
        end: Index just after the closing tag.
    """

    tool: str
    argument: str
    start: int
    end: int


def stop_strings(tools: tuple[str, ...] = TOOLS) -> tuple[str, ...]:
    """The closing tags at which generation should stop so that the tool can answer."""
    return tuple(f"</{name}>" for name in tools)


def find_tool_call(text: str, tools: tuple[str, ...] = TOOLS) -> ToolCall | None:
    """The first complete call of any of ``tools`` in ``text``, or None.

    Example:
        >>> find_tool_call("First <calc>2+2</calc> then <calc>3</calc>").argument
        '2+2'
    """
    found = [call for name in tools if (call := _first_call(text, name)) is not None]
    return min(found, key=lambda call: call.start) if found else None


def _first_call(text: str, tool: str) -> ToolCall | None:
    """The first ``<tool>...</tool>``: the first opening tag, closed by the first closing tag after it.

    That is what the lazy pattern ``<tool>(.*?)</tool>`` finds (when the first opening tag has no
    closing tag after it, no later one has), in two linear scans.
    """
    opening = _OPEN[tool].search(text)
    if opening is None:
        return None
    closing = _CLOSE[tool].search(text, opening.end())
    if closing is None:
        return None
    return ToolCall(tool, text[opening.end() : closing.start()], opening.start(), closing.end())


def run_tool(call: ToolCall, *, timeout: float = VERIFY_TIMEOUT_S, max_chars: int = 500) -> tuple[str, bool]:
    """Answer a tool call.

    Args:
        call: The call to answer.
        timeout: Seconds the sympy step may take.
        max_chars: Longest result shown; a longer one is cut and says how long it was.

    Returns:
        ``(result_text, ok)``: the result, or ``"error: ..."`` with ok False.
    """
    try:
        if len(call.argument) > MAX_ARGUMENT_CHARS:
            raise ToolError(
                f"the call has {len(call.argument):,} characters; at most {MAX_ARGUMENT_CHARS:,} are read"
            )
        if call.tool == "calc":
            result = calculate(call.argument)
        elif call.tool == "sympy":
            result = sympy_tool(call.argument, timeout=timeout)
        else:
            raise ToolError(f"unknown tool {call.tool!r}; tools: {', '.join(TOOLS)}")
    except ToolError as exc:
        return f"error: {exc}", False
    except RecursionError:
        return "error: the expression nests too deeply", False
    except ConfigError:
        raise  # a bad timeout: the caller's mistake, not the model's
    except Exception as exc:  # noqa: BLE001 - a tool bug must not end the episode; it is reported below
        warnings.warn(
            f"{call.tool} raised {type(exc).__name__}: {exc} (please report it)", RuntimeWarning, stacklevel=2
        )
        return f"error: the {call.tool} tool failed ({type(exc).__name__})", False
    if len(result) > max_chars:
        result = f"{result[:max_chars]}... (cut: {len(result)} characters)"
    return result, True


def _parse(text: str) -> Node:
    if not text.strip():
        raise ToolError("the expression is empty")
    try:
        return parse_answer(text)
    except AnswerRejected as exc:
        raise ToolError(f"could not read {text.strip()[:80]!r}: {exc.reason}") from None


def _int_text(value: int) -> str:
    """The digits of any int the cost check allows.

    ``str(int)`` stops at 4,300 digits (Python's guard against parsing hostile text), below the
    10,000 digits the calculator computes; ``Decimal`` converts an int exactly without that limit.
    """
    return str(Decimal(value))


def _decimal(value: Fraction) -> str | None:
    """``value`` as a terminating decimal of at most 12 places, or None."""
    scaled = value * 10**_DECIMAL_DIGITS
    if scaled.denominator != 1:
        return None
    digits = _int_text(abs(scaled.numerator)).rjust(_DECIMAL_DIGITS + 1, "0")
    whole, fraction = digits[:-_DECIMAL_DIGITS], digits[-_DECIMAL_DIGITS:].rstrip("0")
    return ("-" if value < 0 else "") + (f"{whole}.{fraction}" if fraction else whole)


def _approximate(value: Fraction) -> str:
    """``value`` to 12 significant digits; beyond the float range through ``Decimal``."""
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if math.isfinite(number) and (number != 0 or value == 0):
        return f"{number:.{_DECIMAL_DIGITS}g}"
    with localcontext() as context:
        context.prec = _DECIMAL_DIGITS
        return f"{Decimal(value.numerator) / Decimal(value.denominator):.{_DECIMAL_DIGITS}g}"


def _show_exact(value: Fraction, approximate_input: bool) -> str:
    if value.denominator == 1:
        return _int_text(value.numerator)
    decimal = _decimal(value)
    if approximate_input and decimal is not None:
        return decimal
    fraction = f"{_int_text(value.numerator)}/{_int_text(value.denominator)}"
    return f"{fraction} = {decimal}" if decimal is not None else f"{fraction} ≈ {_approximate(value)}"


def _show_numeric(value: Any) -> str:
    real, imag = (float(value.real), float(value.imag)) if hasattr(value, "imag") else (float(value), 0.0)
    if imag == 0.0 and math.isinf(real) and value.real == value.real and abs(value.real) != math.inf:
        import mpmath  # a finite value past the float range, such as sqrt(2) * 10^400

        return f"≈ {mpmath.nstr(value.real, _DECIMAL_DIGITS)}"
    if not (math.isfinite(real) and math.isfinite(imag)):
        raise ToolError("the value is undefined or infinite")
    if real == 0.0 and imag != 0.0:
        return f"≈ {imag:.{_DECIMAL_DIGITS}g}i"
    if imag == 0.0:
        return f"≈ {real:.{_DECIMAL_DIGITS}g}"
    return f"≈ {real:.{_DECIMAL_DIGITS}g} {'+' if imag >= 0 else '-'} {abs(imag):.{_DECIMAL_DIGITS}g}i"


def calculate(expression: str) -> str:
    """Evaluate a numeric expression exactly (fractions), or to 12 digits when it is irrational.

    Raises:
        ToolError: The text is not one numeric expression, is too costly, or is undefined.

    Example:
        >>> calculate("3*(4+5)"), calculate("1/3 + 1/6"), calculate("sqrt(2)")
        ('27', '1/2 = 0.5', '≈ 1.41421356237')
    """
    node = _parse(expression)
    if not ast.is_scalar(node):
        raise ToolError("the calculator takes one numeric expression (no lists, equations or units)")
    names = ast.free_symbols(node)
    if names:
        raise ToolError(
            f"the calculator works on numbers only, found {sorted(names)}; use <sympy> for algebra"
        )
    try:
        value = exact_value(node)
        if value is not None:
            return _show_exact(value, ast.has_approximate(node))
        return _show_numeric(numeric_value(node, _DECIMAL_DIGITS + 8))
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except (ValueError, OverflowError, ArithmeticError, TypeError) as exc:
        raise ToolError(f"the value is undefined ({type(exc).__name__})") from None


def _sympy_arguments(operation: str, argument: str) -> tuple[Node, ...]:
    """The parsed argument(s) of an operation: one expression, or equations for ``solve``."""
    node = _parse(argument)
    items = node.items if isinstance(node, ast.Seq) and operation == "solve" else (node,)
    for item in items:
        sides = (item.label, item.value) if isinstance(item, ast.Labeled) else getattr(item, "sides", (item,))
        if isinstance(item, ast.Rel) and item.ops != ("=",):
            raise ToolError("solve takes equations with a single '=' (no inequalities or chains)")
        if isinstance(item, (ast.Rel, ast.Labeled)) and operation != "solve":
            raise ToolError(f"{operation} takes an expression, not an equation")
        if not all(ast.is_scalar(side) for side in sides):
            raise ToolError(f"{operation} takes algebraic expressions (no lists, intervals, units or text)")
    return tuple(items)


def sympy_tool(command: str, *, timeout: float = VERIFY_TIMEOUT_S) -> str:
    """Run ``operation(expression)`` with sympy, in the verifiers' worker process under ``timeout``.

    Raises:
        ToolError: Unknown operation, unreadable or too costly expression, a timeout, or sympy failed.

    Example:
        >>> sympy_tool("factor(x^2 - 1)", timeout=30.0)
        '(x - 1)*(x + 1)'
    """
    from reasongym.verifiers.timeout import WORKER_MEMORY_BYTES, run_with_timeout  # starts workers when used

    match = _OPERATION.match(command)
    if match is None:
        raise ToolError(f"write OPERATION(EXPRESSION) with OPERATION one of {', '.join(SYMPY_OPERATIONS)}")
    operation = match.group(1).lower()
    if operation not in SYMPY_OPERATIONS:
        raise ToolError(f"unknown operation {match.group(1)!r}; operations: {', '.join(SYMPY_OPERATIONS)}")
    arguments = _sympy_arguments(operation, match.group(2))
    try:
        return run_with_timeout(sympy_compute, (operation, arguments), seconds=timeout)
    except VerifierTimeout:
        raise ToolError(f"{operation} took longer than {timeout:g} s") from None
    except VerifierOutOfMemory:
        raise ToolError(f"{operation} needed more than {WORKER_MEMORY_BYTES >> 20} MiB of memory") from None
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever sympy raised, the model reads a short error
        raise ToolError(f"{operation} failed ({type(exc).__name__})") from None


def _show_sympy(value: Any) -> str:
    return str(value).replace("**", "^")


def sympy_compute(operation: str, arguments: tuple[Node, ...]) -> str:
    """Build sympy objects from parsed nodes and apply ``operation`` (runs in the worker process)."""
    import sympy

    from reasongym.verifiers.math.to_sympy import to_sympy

    def expression(item: Node) -> Any:
        if isinstance(item, ast.Rel):
            return to_sympy(item.sides[0]) - to_sympy(item.sides[1])
        if isinstance(item, ast.Labeled):
            return to_sympy(item.label) - to_sympy(item.value)
        return to_sympy(item)

    exprs = [expression(item) for item in arguments]
    if operation != "solve":
        result = getattr(sympy, operation)(exprs[0])
        return "undefined" if result.has(sympy.zoo, sympy.nan) else _show_sympy(result)
    unknowns = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    if not unknowns:
        return "no unknowns to solve for"
    solutions = sympy.solve(exprs, unknowns, dict=True)
    if not solutions:
        return "no solution found"
    shown = (
        ", ".join(f"{name} = {_show_sympy(value)}" for name, value in sorted(solution.items(), key=str))
        for solution in solutions
    )
    return " or ".join(shown)
