r"""Countdown's arithmetic: integer literals, ``+ - * /`` and brackets, parsed by recursive descent, exact.

:mod:`~reasongym.verifiers.countdown` reads a completion's expression with this grammar::

    expression := term (("+" | "-") term)*
    term       := atom (("*" | "/") atom | atom-in-brackets-after-a-bracket)*
    atom       := integer | "(" expression ")"

``×``, ``÷``, ``·``, ``\times``, ``\div``, ``\cdot``, ``\left(`` and ``\right)`` are read as their plain
signs. There is no unary minus and no decimal; the only implicit product is between brackets
(``(7-3)(5+1)``). Values are exact fractions (``(1+1/3)*6`` is 8); nothing is ever
``eval``-ed. Brackets nest at most :data:`MAX_DEPTH` deep.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["MAX_DEPTH", "evaluate", "normalize_expression", "parse_expression"]

MAX_DEPTH = 32
"""Deeper parenthesis nesting is refused (it bounds the parser's recursion)."""


_TOKEN = re.compile(r"\s*(?:([0-9]+)|([-+*/()]))")


_SYMBOLS = (
    ("\\left(", "("),
    ("\\right)", ")"),
    ("\\times", "*"),
    ("\\cdot", "*"),
    ("\\div", "/"),
    ("×", "*"),
    ("·", "*"),
    ("÷", "/"),
    ("−", "-"),
)


class _ParseError(ValueError):
    """The expression does not follow the grammar."""


class _TooDeep(ValueError):
    """Parentheses nest deeper than MAX_DEPTH."""


def _tokenize(expression: str) -> list[str]:
    tokens, position = [], 0
    expression = expression.rstrip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if match is None:
            raise _ParseError(f"unexpected character {expression[position:].lstrip()[:1]!r}")
        tokens.append(match.group(1) or match.group(2))
        position = match.end()
    return tokens


class _Parser:
    """Recursive descent over tokens: expr := term (+|- term)*, term := atom (*|/ atom)*, atom := int | (expr)."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.position, self.depth = tokens, 0, 0
        self.literals: list[int] = []

    def parse(self) -> tuple:
        if not self.tokens:
            raise _ParseError("the expression is empty")
        tree = self._expression()
        if self.position != len(self.tokens):
            raise _ParseError(f"unexpected {self.tokens[self.position]!r} after a complete expression")
        return tree

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _expression(self) -> tuple:
        node = self._term()
        while self._peek() in ("+", "-"):
            operator = self.tokens[self.position]
            self.position += 1
            node = (operator, node, self._term())
        return node

    def _term(self) -> tuple:
        node = self._atom()
        while self._peek() in ("*", "/") or (self._peek() == "(" and self.tokens[self.position - 1] == ")"):
            operator = "*" if self._peek() == "(" else self.tokens[self.position]  # "(7-3)(5+1)" multiplies
            self.position += operator != "*" or self._peek() != "("
            node = (operator, node, self._atom())
        return node

    def _atom(self) -> tuple:
        token = self._peek()
        if token is None:
            raise _ParseError("the expression ends too early")
        self.position += 1
        if token[0] in "0123456789":
            self.literals.append(int(token))
            return ("n", int(token))
        if token != "(":
            raise _ParseError(f"expected a number or '(' but found {token!r} (no unary minus)")
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooDeep(f"parentheses nest deeper than {MAX_DEPTH}")
        node = self._expression()
        if self._peek() != ")":
            raise _ParseError("a '(' is never closed")
        self.position += 1
        self.depth -= 1
        return node


def evaluate(node: tuple) -> Fraction:
    """Exact value; raises ZeroDivisionError on division by zero."""
    if node[0] == "n":
        return Fraction(node[1])
    operator, left, right = node
    a, b = evaluate(left), evaluate(right)
    if operator == "+":
        return a + b
    if operator == "-":
        return a - b
    if operator == "*":
        return a * b
    return a / b


def parse_expression(expression: str) -> tuple[tuple, list[int]] | str:
    """(tree, the integer literals in order), or why the expression cannot be graded."""
    try:
        parser = _Parser(_tokenize(expression))
        return parser.parse(), parser.literals
    except _TooDeep as error:
        return f"Not graded: {error}."
    except _ParseError as error:
        return f"Not a Countdown expression: {error}."


def normalize_expression(expression: str) -> str:
    r"""The expression with ``×``, ``÷``, ``\times``, ``\left(``, ... written as plain signs."""
    for symbol, plain in _SYMBOLS:
        expression = expression.replace(symbol, plain)
    return expression.strip()
