r"""The atoms of the math answer grammar: numbers, variables, brackets, commands and functions.

The expression levels live in :mod:`parser`; an atom needs them back only for what it brackets
(``\frac{expr}{expr}``, ``(expr, expr)``), so every function here takes the running parser through the
small ``ExpressionParser`` interface below and this module never imports the parser.

Why this file is long: every atom of the grammar (numbers, variables, brackets, sets, intervals, matrices,
commands, functions and text) is parsed here, each a short function; they share one interface. Units
after a value are read by :mod:`quantities`.
"""

from __future__ import annotations

from typing import Protocol

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.lexer import Token
from reasongym.verifiers.math.nodes import Node, Unparseable
from reasongym.verifiers.math.shape import union as shape_union

__all__ = ["ExpressionParser", "parse_atom", "parse_text_item"]


class ExpressionParser(Protocol):
    """What an atom uses of the running parser: the token cursor and the expression levels it brackets."""

    toks: list[Token]
    """The answer's tokens, ending with the ``end`` token."""
    i: int
    """Position of the next token."""

    def peek(self, offset: int = 0) -> Token:
        """The token ``offset`` places ahead (the ``end`` token past the end)."""

    def at(self, kind: str, value: object = None, offset: int = 0) -> bool:
        """Whether the token ``offset`` ahead has this kind (and value)."""

    def at_op(self, *values: str) -> bool:
        """Whether the next token is one of these operators."""

    def at_boundary(self, offset: int = 0) -> bool:
        """Whether the token ``offset`` ahead ends an item (end, separator or a closing operator)."""

    def take(self) -> Token:
        """Consume and return the next token."""

    def expect_op(self, value: str) -> None:
        """Consume the operator ``value`` or raise Unparseable."""

    def item(self) -> Node:
        """Parse one item of an answer list."""

    def expr(self) -> Node:
        """Parse a sum."""

    def power(self) -> Node:
        """Parse a power."""

    def exponent(self) -> Node:
        """Parse the exponent after ``^``."""

    def atom(self) -> Node:
        """Parse an atom, counting nesting depth."""

    def starts_implicit_factor(self, functions: bool = True, after_variables: bool = False) -> bool:
        """Whether the next tokens begin a factor of an implicit product."""

    def subscript_text(self) -> str:
        """The text of a subscript, braced or a single token."""


_TRIG = frozenset("sin cos tan cot sec csc".split())
_MATRIX_ENVS = frozenset("pmatrix bmatrix Bmatrix matrix smallmatrix array".split())
_NEG_INF = ast.Neg(ast.Const("oo"))
_SQUARE_OR_CUBIC = (ast.Num(2), ast.Num(3))
_MINUS_ONE = ast.Neg(ast.Num(1))


def _literal_text(node: Node) -> str:
    return str(node.mantissa) if ast.is_int_literal(node) else repr(node)


def _scalar(node: Node, where: str) -> Node:
    if not ast.is_scalar(node):
        raise Unparseable(f"a {type(node).__name__.lower()} cannot be used {where}")
    return node


def _describe(tok: Token) -> str:
    return "the end of the answer" if tok.kind == "end" else f"{tok.kind} {tok.value!r}"


def parse_atom(p: ExpressionParser) -> Node:
    """Parse one atom at the parser's position."""
    tok = p.peek()
    if tok.kind == "num":
        return _number(p)
    if tok.kind == "sym":
        return _symbol(p)
    if tok.kind == "const":
        p.take()
        return ast.Const(str(tok.value))
    if tok.kind == "func":
        return _function(p)
    if tok.kind == "cmd" and tok.value in _COMMANDS:
        return _COMMANDS[tok.value](p)
    if tok.kind == "op" and tok.value in _BRACKETS:
        return _BRACKETS[tok.value](p)
    if tok.kind == "colon":
        p.take()
        return ast.Colon(*tok.value)
    if tok.kind == "word":
        raise Unparseable(f"unexpected word {tok.value!r}")
    raise Unparseable(f"unexpected {_describe(tok)}")


def _number(p: ExpressionParser) -> Node:
    node = p.take().value
    if ast.is_int_literal(node):
        fraction = _mixed_fraction(p)
        if fraction is not None:
            return ast.Add((node, fraction))  # 3\frac12 and "3 1/2" are 7/2
    return node


def _mixed_fraction(p: ExpressionParser) -> Node | None:
    """Consume the fraction part of a mixed number, when integer digits of one follow."""
    if p.at("cmd", "frac"):
        shape = [p.peek(k) for k in range(1, 7)]
        braces = [(t.kind, t.value) for t in (shape[0], shape[2], shape[3], shape[5])]
        if braces == [("op", "{"), ("op", "}"), ("op", "{"), ("op", "}")]:
            num, den = shape[1].value, shape[4].value
            if ast.is_int_literal(num) and ast.is_int_literal(den):
                p.i += 7
                return ast.Mul((num,), (den,))
        two_digits = shape[0].value
        if shape[0].kind == "num" and ast.is_int_literal(two_digits) and 10 <= two_digits.mantissa <= 99:
            p.i += 2
            return ast.Mul((ast.Num(two_digits.mantissa // 10),), (ast.Num(two_digits.mantissa % 10),))
        return None
    joined = int(p.at("sep", "and") and p.peek(1).kind == "num")  # "2 and 3/4 cups" is 11/4
    num, slash, den, after = p.peek(joined), p.peek(joined + 1), p.peek(joined + 2), p.peek(joined + 3)
    if (
        num.kind == "num"
        and num.spaced
        and ast.is_int_literal(num.value)
        and (slash.kind, slash.value) == ("op", "/")
        and den.kind == "num"
        and ast.is_int_literal(den.value)
        and not (after.kind == "op" and after.value == "^")
    ):
        p.i += 3 + joined
        return ast.Mul((num.value,), (den.value,))
    return None


def _symbol(p: ExpressionParser) -> Node:
    name = str(p.take().value)
    if p.at_op("_"):
        p.take()
        return ast.Sym(f"{name}_{p.subscript_text()}")
    if p.at_op("'"):
        raise Unparseable("primes (f') are not understood")
    if name == "e":
        return ast.Const("e")
    if name == "i":
        return ast.Const("i")
    return ast.Sym(name)


def _items_until(p: ExpressionParser, closers: tuple[str, ...]) -> tuple[list[Node], str]:
    items = [p.item()]
    while p.at_op(","):
        p.take()
        items.append(p.item())
    if not p.at_op(*closers):
        raise Unparseable(f"expected {' or '.join(repr(c) for c in closers)} but found {_describe(p.peek())}")
    return items, str(p.take().value)


def _nested_rows(p: ExpressionParser) -> Node:
    """``[[1, 2], [3, 4]]``, a list of equal-length lists as Python and NumPy print a matrix."""
    rows: list[tuple[Node, ...]] = []
    while True:
        p.expect_op("[")
        items, _ = _items_until(p, ("]",))
        rows.append(tuple(_scalar(item, "in a matrix row") for item in items))
        if not p.at_op(","):
            break
        p.take()
    p.expect_op("]")
    if len({len(row) for row in rows}) != 1:
        raise Unparseable("the rows of a matrix written as nested lists differ in length")
    return ast.Matrix(tuple(rows))


def _bracket(p: ExpressionParser) -> Node:
    if p.at_op("[") and p.at("op", "[", 1):
        p.take()
        return _nested_rows(p)
    opener = p.take().value
    items, closer = _items_until(p, (")", "]", "[") if opener in ("[", "]") else (")", "]"))
    if opener == "]" or closer == "[":  # ]2, 5[ and [0, 3[: the French way to write open ends
        if len(items) != 2:
            raise Unparseable("an interval has exactly two ends")
        lo, hi = (_scalar(x, "as an interval end") for x in items)
        return ast.Interval(lo, hi, opener == "[", closer == "]")
    if len(items) == 1:
        if (opener, closer) in (("(", ")"), ("[", "]")):
            return items[0]
        raise Unparseable("a half-open interval needs two ends")
    if (opener, closer) == ("(", ")") or ((opener, closer) == ("[", "]") and len(items) != 2):
        return ast.Seq("tuple", tuple(items))
    if len(items) != 2:
        raise Unparseable("an interval has exactly two ends")
    lo, hi = (_scalar(x, "as an interval end") for x in items)
    return ast.Interval(lo, hi, opener == "[", closer == "]")


def _brace(p: ExpressionParser) -> Node:
    p.take()
    items, _ = _items_until(p, ("}",))
    return items[0] if len(items) == 1 else ast.Seq("set", tuple(items))


def _set(p: ExpressionParser) -> Node:
    p.take()
    if p.at_op("set}"):
        p.take()
        return ast.Seq("set", ())
    if _set_builder_ahead(p):
        return _set_builder(p)
    items, _ = _items_until(p, ("set}", "}"))
    return ast.Seq("set", tuple(items))


def _set_builder_ahead(p: ExpressionParser) -> bool:
    r"""``\{x \mid ...\}``, ``\{x : ...\}`` or ``\{x \in \mathbb{R} \mid ...\}`` starts here."""
    if not p.at("sym"):
        return False
    if p.at("op", "in", 1) and p.at("cmd", "reals", 2):
        return p.at("op", "|", 3) or p.at("op", ":", 3)
    return p.at("op", "|", 1) or p.at("op", ":", 1)


def _set_builder(p: ExpressionParser) -> Node:
    r"""The set of reals a condition describes: ``\{x \mid 1 < x \le 2\}`` is ``(1, 2]``."""
    p.i += 4 if p.at("op", "in", 1) else 2
    node = p.item()
    while p.at("sep", "or"):
        p.take()
        node = shape_union([node, p.item()])
    if not isinstance(node, (ast.Interval, ast.Union)):
        raise Unparseable("set-builder notation is understood for a condition solved for its variable")
    p.expect_op("set}")
    return node


def _delimited(name: str, closer: str):  # noqa: ANN202 - a small factory of parse functions
    def parse(p: ExpressionParser) -> Node:
        p.take()
        node = _scalar(p.expr(), f"inside {name}")
        p.expect_op(closer)
        return ast.Func(name, (node,))

    return parse


def _arg(p: ExpressionParser) -> Node:
    r"""One TeX argument: a braced group or a single token (``\frac12`` is 1 over 2)."""
    if p.at_op("{"):
        p.take()
        node = p.expr()
        p.expect_op("}")
        return _scalar(node, "as an argument")
    tok = p.peek()
    if tok.kind == "num" and ast.is_int_literal(tok.value) and tok.value.mantissa >= 10:
        digits = str(tok.value.mantissa)
        p.toks[p.i] = Token("num", ast.Num(int(digits[1:])), False)
        return ast.Num(int(digits[0]))
    if tok.kind in ("num", "sym", "const") or (tok.kind == "cmd" and tok.value in ("frac", "sqrt")):
        return p.atom()
    raise Unparseable(f"expected an argument in braces but found {_describe(tok)}")


def _frac(p: ExpressionParser) -> Node:
    p.take()
    num = _arg(p)
    return ast.Mul((num,), (_arg(p),))


def _sqrt(p: ExpressionParser) -> Node:
    p.take()
    index: Node = ast.Num(2)
    if p.at_op("["):
        p.take()
        index = _scalar(p.expr(), "as a root index")
        p.expect_op("]")
    return ast.Root(_arg(p), index)


def _binom(p: ExpressionParser) -> Node:
    p.take()
    n = _arg(p)
    return ast.Binom(n, _arg(p))


def _env_name(p: ExpressionParser) -> str:
    p.expect_op("{")
    parts = []
    while not p.at_op("}"):
        tok = p.take()
        if tok.kind not in ("word", "sym"):
            raise Unparseable("malformed \\begin{...}")
        parts.append(str(tok.value))
    p.take()
    return "".join(parts)


def _matrix(p: ExpressionParser) -> Node:
    p.take()
    env = _env_name(p)
    if env not in _MATRIX_ENVS:
        raise Unparseable(f"environment {env!r} is not understood (pmatrix, bmatrix, matrix, array)")
    if env == "array" and p.at_op("{"):
        while not p.at_op("}") and not p.at("end"):
            p.take()
        p.take()
    rows, row = [], [p.item()]
    while not p.at("cmd", "end"):
        if p.at_op("&"):
            p.take()
            row.append(p.item())
        elif p.at_op("\\\\"):
            p.take()
            rows.append(tuple(row))
            row = [] if p.at("cmd", "end") else [p.item()]
        else:
            raise Unparseable(f"unexpected {_describe(p.peek())} in a matrix")
    p.take()
    if row:
        rows.append(tuple(row))
    if _env_name(p) != env:
        raise Unparseable(f"\\begin{{{env}}} is closed by a different \\end")
    if len({len(r) for r in rows}) != 1:
        raise Unparseable("matrix rows have different lengths")
    return ast.Matrix(tuple(rows))


def _function(p: ExpressionParser) -> Node:
    name = str(p.take().value)
    if name in ("sqrt", "abs"):  # plain-text sqrt(2), abs(x)
        arg = _function_argument(p)
        return ast.Root(arg, ast.Num(2)) if name == "sqrt" else ast.Func("abs", (arg,))
    base: Node | None = ast.Num(10) if name == "lg" else None
    name = "log" if name == "lg" else name
    power: Node | None = None
    for _ in range(2):
        if p.at_op("_") and name == "log" and base is None:
            p.take()
            base = _arg(p) if p.at_op("{") else p.atom()
        elif p.at_op("^") and power is None:
            p.take()
            power = p.exponent()
    if power == _MINUS_ONE and name in _TRIG:
        name, power = "arc" + name, None
    arg = _function_argument(p)
    node = ast.Func(name, (arg,) if base is None else (arg, base))
    return ast.Pow(node, power) if power is not None else node


def _function_argument(p: ExpressionParser) -> Node:
    r"""``(x)``, or without parentheses the implicit product that follows (``\sin 2x``)."""
    if p.at_op("("):
        return _scalar(_bracket(p), "as a function argument")
    factors = [p.power()]
    while p.starts_implicit_factor(functions=False):
        factors.append(p.power())
    return factors[0] if len(factors) == 1 else ast.Mul(tuple(_scalar(f, "as a factor") for f in factors))


def parse_text_item(p: ExpressionParser) -> Node | None:
    r"""Words with at most parentheses around them (``\text{(A)}``, ``Monday``) are text."""
    if not (p.at("word") or (p.at_op("(") and p.at("word", offset=1))):
        return None
    k, words, depth = 0, [], 0
    while True:
        tok = p.peek(k)
        if tok.kind in ("word", "sym") or (tok.kind == "num" and ast.is_scalar(tok.value)):
            words.append(str(tok.value).lower() if tok.kind != "num" else _literal_text(tok.value))
        elif tok.kind == "op" and tok.value == "(":
            depth += 1
        elif tok.kind == "op" and tok.value == ")" and depth > 0:
            depth -= 1
        elif p.at_boundary(k):
            break
        else:
            return None
        k += 1
    p.i += k
    return ast.Text(" ".join(words))


_COMMANDS = {
    "frac": _frac,
    "sqrt": _sqrt,
    "binom": _binom,
    "begin": _matrix,
    "reals": lambda p: p.take() and ast.Interval(_NEG_INF, ast.Const("oo"), False, False),
    "emptyset": lambda p: p.take() and ast.Seq("set", ()),
}
_BRACKETS = {
    "(": _bracket,
    "[": _bracket,
    "]": _bracket,
    "{": _brace,
    "set{": _set,
    "|": _delimited("abs", "|"),
    "lfloor": _delimited("floor", "rfloor"),
    "lceil": _delimited("ceil", "rceil"),
}
