r"""Recursive-descent parser of math answers into the syntax tree of :mod:`nodes`.

The grammar, loosest binding first::

    answer   := item (("," | ";" | "or" | "and") item)*          an unordered list if several
    item     := ["$"] [label ("=" | "\in")] relation ("\cup" relation)* ("\setminus" relation)* [units]
    relation := expr [units] (relop expr [units])*   "2 <= x < 5" becomes the interval [2, 5)
    expr     := ["-" | "+" | "\pm"] term (("+" | "-" | "\pm") term)*
    term     := factor (("*" | "/") factor | implicit-product power)*
    factor   := ("-" | "+")* power
    power    := postfix ["^" exponent]                right-associative; "^\circ" is degrees
    postfix  := atom ("!" | "!!" | "%" | "_base")*             each operator counts as one nesting level
    atom     := number | variable | constant | (...) | [...) | ]...[ | {...} | \{...\} | \{x \mid ...\}
              | |...| | \frac a b | \sqrt[n] a | \binom a b | function [^p] arg | matrix

Sums and scalar multiples of matrices are computed entry by entry (:mod:`matrices`). Nothing here
evaluates; every failure raises ``Unparseable`` (or ``Refused`` for nesting deeper
than ``MAX_NESTING``) naming what was not understood.

Why this file is long: the levels of the grammar call one another, so they are the methods of one class
read top to bottom; atoms (:mod:`atoms`), units (:mod:`quantities`) and matrices live in their own modules.
"""

from __future__ import annotations

import re
from decimal import Decimal

from reasongym.verifiers.math import matrices
from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.atoms import parse_atom, parse_text_item
from reasongym.verifiers.math.cost import check_text, estimate_digits
from reasongym.verifiers.math.lexer import Token, tokenize
from reasongym.verifiers.math.nodes import Node, Refused, Unparseable
from reasongym.verifiers.math.quantities import (
    item_units,
    parse_unit_tail,
    unit_before_relation,
    unit_tail_ahead,
)
from reasongym.verifiers.math.sets import difference, intersection
from reasongym.verifiers.math.shape import finish_answer, relation_node, signed, union
from reasongym.verifiers.math.units import CURRENCY_SIGNS, is_single_letter_unit, lookup_unit
from reasongym.verifiers.set_words import sets_in_words
from reasongym.verifiers.text import normalize_unicode

__all__ = ["MAX_NESTING", "parse_answer", "parse_tokens"]

MAX_NESTING = 50
_FUNCTION_VALUE = r"[A-Za-z](?:\^\{?-1\}?|'{1,2})?[ \t]*\([ \t]*-?\d+(?:\.\d+)?[ \t]*\)"
_FUNCTION_VALUES = re.compile(
    rf"^[ \t]*{_FUNCTION_VALUE}(?:[ \t]*[-+*/][ \t]*(?:{_FUNCTION_VALUE}|\d+))*[ \t]*=(?=[ \t]*[-+]?[\d\\.])"
)
"""A left side made of function values at numbers (``f(2) + g(3) =``, ``f^{-1}(0)+f^{-1}(6) =``): it names
the asked quantity, so the value after it is the answer (as ``x =`` is a label)."""
_DOLLAR = re.compile(r"(?<!\\)\$+")
_PLAIN_INTEGER = re.compile(r"0|[1-9][0-9]{0,17}")
"""The commonest answer, a whole number as written ("42"), which the grammar reads as ``Num(42)``."""
_OVER = re.compile(r"\{([^{}]{1,200})\\over(?![A-Za-z])([^{}]{1,200})\}")
_RELOPS = frozenset({"=", "<", ">", "<=", ">=", "!="})
_CURRENCIES = {"dollar": "$", "euro": "€", "pound": "£", "yen": "¥", "rupee": "₹"}
_BOUNDARY_OPS = frozenset({",", ";", ")", "]", "}", "set}", "&", "\\\\", "|", "rfloor", "rceil"})
_IMPLICIT_OPS = frozenset({"(", "{", "lfloor", "lceil", "set{"})
_IMPLICIT_CMDS = frozenset({"frac", "sqrt", "binom", "begin"})  # 2\begin{pmatrix}...: a scalar times a matrix


_TOKEN_NAMES = {
    "num": "number",
    "nword": "number word",
    "ordinal": "ordinal",
    "part": "fraction word",
    "colon": "time or ratio",
}
"""Token kinds a reason names in words; the others (``word``, ``sym``, ``op``, ...) read as they are."""


def _describe(tok: Token) -> str:
    """The token as a person reads it in a reason: its kind and its text, never a node's repr."""
    if tok.kind == "end":
        return "the end of the answer"
    return f"{_TOKEN_NAMES.get(tok.kind, tok.kind)} {_spelled(tok.value)!r}"


def _spelled(value: object) -> str:
    """A token's value in the notation it was written in (a number as its digits, a clock time as h:mm)."""
    if isinstance(value, ast.Num):
        if value.decimals is not None and -40 <= value.exp10 <= 0:
            return f"{Decimal(value.mantissa).scaleb(value.exp10):f}"
        return str(value.mantissa) if value.exp10 == 0 else f"{value.mantissa}e{value.exp10}"
    if isinstance(value, ast.Mul) and all(isinstance(f, ast.Num) for f in (*value.num, *value.den)):
        return "/".join(_spelled(f) for f in (*value.num, *value.den))  # a repeating decimal, as a fraction
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        first, *rest = value[0]  # a clock time's (or ratio's) parts
        return ":".join([str(first), *(f"{part:02d}" for part in rest)])
    return str(value)[:40]


def _scalar(node: Node, where: str) -> Node:
    if not ast.is_scalar(node):
        raise Unparseable(f"a {type(node).__name__.lower()} cannot be used {where}")
    return node


def _interval_like(node: Node) -> bool:
    pair = isinstance(node, ast.Seq) and node.kind == "tuple" and len(node.items) == 2
    return pair or isinstance(node, (ast.Interval, ast.Union))


def _has_variables(factors: list[Node]) -> bool:
    return any(ast.free_symbols(factor) for factor in factors)


class Parser:
    """One answer's tokens and a cursor over them; each method parses one level of the grammar above."""

    def __init__(self, tokens: list[Token]) -> None:
        self.toks = tokens
        self.last = len(tokens) - 1  # the end token's place (tokens are replaced, never added)
        self.i = 0
        self.depth = 0

    # ---- token helpers: the hottest calls of the grader (no min(), no len(), no call they can avoid) ----
    def peek(self, offset: int = 0) -> Token:
        index = self.i + offset
        return self.toks[index] if index <= self.last else self.toks[-1]

    def at(self, kind: str, value: object = None, offset: int = 0) -> bool:
        index = self.i + offset
        tok = self.toks[index] if index <= self.last else self.toks[-1]
        return tok.kind == kind and (value is None or tok.value == value)

    def at_op(self, *values: str) -> bool:
        tok = self.toks[self.i] if self.i <= self.last else self.toks[-1]
        return tok.kind == "op" and tok.value in values

    def take(self) -> Token:
        tok = self.peek()
        self.i = self.i + 1 if self.i < self.last else self.last
        return tok

    def expect_op(self, value: str) -> None:
        if not self.at_op(value):
            raise Unparseable(f"expected {value!r} but found {_describe(self.peek())}")
        self.take()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise Refused(f"nesting deeper than {MAX_NESTING} levels")

    def at_boundary(self, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok.kind in ("end", "sep") or (tok.kind == "op" and tok.value in _BOUNDARY_OPS)

    # ---- answer and items ----
    def answer(self) -> Node:
        items, joiners = [self.item()], set()
        while self.at_op(",", ";") or self.at("sep"):
            while self.at_op(",", ";") or self.at("sep"):
                joiners.add(self.take().value)
            if self.at("end"):
                break
            items.append(self.item())
        if not self.at("end"):
            raise Unparseable(f"unexpected {_describe(self.peek())}")
        if len(items) == 1:
            return items[0]
        common = intersection(items) if joiners == {"and"} else None
        if common is not None:
            return common  # "x > 2 and x < 5" is (2, 5)
        joined_by_words = bool(joiners & {"and", "or"})
        if joined_by_words and all(isinstance(x, (ast.Interval, ast.Union)) for x in items):
            return union(items)  # "x < 1 or x > 3"
        return ast.Seq("list", tuple(items), hedged=joined_by_words)

    def item(self) -> Node:
        while self.peek().kind == "op" and self.peek().value == "=" and not self.at("end", offset=1):
            self.take()  # "= 5", "\\approx 8.24"
        negate = self.at_op("-") and any(self.at("op", name, 1) for name in _CURRENCIES) and bool(self.take())
        money = self._currency()
        label = self.label()
        money = money or self._currency()
        text = parse_text_item(self)
        node = text if text is not None else self.relation()
        while self.at_op("cup") or (self.at("sym", "U") and _interval_like(node)):
            self.take()
            node = union([node, self.relation()])
        while self.at_op("setminus"):  # \mathbb{R} \setminus \{0\}
            self.take()
            node = difference(node, self.relation())
        node = item_units(self, node, money)
        if negate:
            node = (
                ast.Quantity(ast.Neg(node.value), node.unit)
                if isinstance(node, ast.Quantity)
                else ast.Neg(node)
            )
        return ast.Labeled(label, node) if label is not None else node

    def _per_unit(self) -> bool:
        """Whether a "/" here opens a unit's denominator ("$18/day"), read by the unit tail."""
        word = self.peek(1)
        return self.at_op("/") and word.kind == "word" and lookup_unit(str(word.value)) is not None

    def _currency(self) -> ast.Unit | None:
        """The currency of a sign before the amount ("$5", "£5"), taken; None when there is none."""
        token = self.peek()
        if token.kind != "op" or token.value not in _CURRENCIES:
            return None
        self.take()
        return CURRENCY_SIGNS[_CURRENCIES[str(token.value)]]

    def label(self) -> Node | None:
        r"""Consume "x =", "a_1 =", "f(x) =", "f'(x) =", "f^{-1}(x) =", "(x, y) =" or "x \in" when one starts it."""
        j = 0
        words = 0
        while self.at("word", offset=words) and words < 3:  # \text{ans} =, \text{total cost} =
            words += 1
        if words and self.at("op", "=", words) and not self.at("end", offset=words + 1):
            name = " ".join(str(self.take().value) for _ in range(words))
            self.take()
            return ast.Sym(name)
        if self.at("sym"):
            j = 1
            if self.at("op", "_", 1):
                j = self._skip_group(2) if self.at("op", "{", 2) else 3
            while j and self.at("op", "'", j):  # f'(x) =, y'' =
                j += 1
            if j and self.at("op", "^", j) and self.at("op", "{", j + 1):  # f^{-1}(x) =
                after = self._skip_group(j + 1)
                j = after if after and self.at("op", "(", after) else 0
            if j and self.at("op", "(", j):
                j = self._skip_symbol_tuple(j)
        elif self.at_op("("):
            j = self._skip_symbol_tuple(0)
        if not j or not (self.peek(j).kind == "op" and self.peek(j).value in ("=", "in")):
            return None
        if self.at("end", offset=j + 1):
            return None
        name = "".join(str(self.take().value) for _ in range(j))
        self.take()
        return ast.Sym(name)

    def _skip_group(self, j: int) -> int:
        while not self.at("end", offset=j) and not self.at("op", "}", j):
            j += 1
        return j + 1 if self.at("op", "}", j) else 0

    def _skip_symbol_tuple(self, j: int) -> int:
        k = j + 1
        while self.at("sym", offset=k) or self.at("op", ",", k):
            k += 1
        return k + 1 if k > j + 1 and self.at("op", ")", k) else 0

    # ---- relations and arithmetic ----
    def relation(self) -> Node:
        first = self.side(after_relation=False) if self.toks[self.i].kind == "sym" else self.expr()
        if unit_before_relation(self):  # "5\sqrt2 cm \approx 7.07 cm": units on each member
            first = parse_unit_tail(self, first, None)
        if not self.at_op(*_RELOPS):
            return first
        sides, ops = [first], []
        while self.at_op(*_RELOPS):
            ops.append(self.take().value)
            side = self.side(after_relation=True)
            sides.append(parse_unit_tail(self, side, None) if unit_before_relation(self, last=True) else side)
        return relation_node(tuple(ops), tuple(sides))

    def side(self, after_relation: bool) -> Node:
        """One side of a relation; ``g(x)`` next to a relation sign names a function: 1 < g(x) < 4."""
        tok = self.toks[self.i]
        j = self._skip_symbol_tuple(1) if tok.kind == "sym" and self.at("op", "(", 1) else 0
        if j:
            after = self.peek(j)
            if (after.kind == "op" and after.value in _RELOPS) or (after_relation and self.at_boundary(j)):
                return ast.Sym("".join(str(self.take().value) for _ in range(j)))
        return self.expr()

    def expr(self) -> Node:
        terms = []
        sign = self.take().value if self.at_op("pm", "mp") else None
        while True:
            terms.append(signed(self.term(), sign))
            if not self.at_op("+", "-", "pm", "mp"):
                break
            sign = self.take().value
        if len(terms) == 1:
            return terms[0]
        return matrices.add(terms) or ast.Add(tuple(_scalar(t, "in a sum") for t in terms))

    def term(self) -> Node:
        num, den = [self.factor()], []
        while True:
            if self.at_op("*"):
                self.take()
                num.append(self.factor())
            elif self.at_op("/", ":") and not self._per_unit():  # a ratio 3:1 is the quotient 3/1
                self.take()
                den.append(self.factor())
            elif ast.is_scalar(num[-1]) and self.starts_implicit_factor(
                after_variables=self.at("sym") and _has_variables(num)
            ):
                num.append(self.power())
            elif (
                isinstance(num[-1], ast.Pow)
                and self.at("num")
                and self.peek().spaced
                and self.at("op", "^", 1)
            ):
                num.append(self.power())  # 2^6 3^5 5^4 is a product of powers
            else:
                break
        if len(num) == 1 and not den:
            return num[0]
        matrix = matrices.product(num, den)
        if matrix is not None:
            return matrix
        return ast.Mul(
            tuple(_scalar(x, "in a product") for x in num), tuple(_scalar(x, "in a quotient") for x in den)
        )

    def starts_implicit_factor(self, functions: bool = True, after_variables: bool = False) -> bool:
        """Whether the next tokens begin a factor; a spaced ``m`` or ``h`` ending a number is its unit."""
        tok = self.peek()
        if tok.kind == "sym":  # after variables ("2\pi r h") a letter is one more variable
            unit = tok.spaced and is_single_letter_unit(tok.value) and unit_tail_ahead(self)
            return after_variables or not unit
        if tok.kind == "func":
            return functions
        return (
            tok.kind == "const"
            or (tok.kind == "cmd" and tok.value in _IMPLICIT_CMDS)
            or (tok.kind == "op" and tok.value in _IMPLICIT_OPS)
        )

    def factor(self) -> Node:
        negate = False
        while self.at_op("-", "+"):
            negate ^= self.take().value == "-"
        node = self.power()
        if negate and isinstance(node, ast.BaseNum):
            return ast.BaseNum("-" + node.digits, node.base)  # -221_3
        if negate and isinstance(node, ast.Matrix):
            return matrices.negate(node)
        return ast.Neg(_scalar(node, "with a minus sign")) if negate else node

    def power(self) -> Node:
        base = self.postfix()
        if not self.at_op("^"):
            return base
        self.take()
        if self.at_op("deg") or (self.at_op("{") and self.at("op", "deg", 1) and self.at("op", "}", 2)):
            self.i += 1 if self.at_op("deg") else 3
            return ast.Degree(_scalar(base, "in degrees"))
        return ast.Pow(_scalar(base, "as a base"), self.exponent())

    def exponent(self) -> Node:
        self.enter()
        negate = False
        while self.at_op("-", "+"):
            negate ^= self.take().value == "-"
        if self.at("num"):
            node: Node = self.take().value
        elif self.at_op("{"):
            self.take()
            node = self.expr()
            self.expect_op("}")
        else:
            node = self.atom()
        if negate:
            node = ast.Neg(node)
        if self.at_op("^"):
            self.take()
            node = ast.Pow(node, self.exponent())
        self.depth -= 1
        return _scalar(node, "as an exponent")

    def postfix(self) -> Node:
        node, wrapped = self.atom(), 0
        while True:
            if self.at_op("!"):
                self.take()
                double = self.at_op("!") and not self.peek().spaced
                self.i += double
                node = ast.Factorial(_scalar(node, "in a factorial"), 2 if double else 1)
            elif self.at_op("%"):
                self.take()
                node = ast.Percent(_scalar(node, "with percent"))
            elif self.at_op("deg"):
                self.take()
                node = ast.Degree(_scalar(node, "in degrees"))
            elif self.at_op("_") and ast.is_int_literal(node):
                self.take()
                base = self.subscript_text().strip(
                    "()"
                )  # 143_{(5)}: the base in brackets, as in some textbooks
                if not base.isdigit() or not 2 <= int(base) <= 36:
                    raise Unparseable(f"base {base!r} must be a whole number from 2 to 36")
                if int(base) != 10:  # 11_{10} is the decimal number 11
                    node = ast.BaseNum(str(node.mantissa), int(base))
            else:
                self.depth -= wrapped
                return node
            wrapped += 1
            self.enter()  # each operator wraps the node once more: "3!!!...!" nests like brackets

    def subscript_text(self) -> str:
        if not self.at_op("{"):
            value = self.take().value
            if isinstance(value, ast.Num):
                return str(value.mantissa)
            if isinstance(value, Node):  # a repeating decimal "9.5\overline{3}" is no subscript
                raise Unparseable("a subscript must be a whole number or a name")
            return str(value)
        self.take()
        parts = []
        while not self.at_op("}"):
            tok = self.take()
            if tok.kind == "end":
                raise Unparseable("unclosed subscript")
            parts.append(
                str(tok.value.mantissa if tok.kind == "num" and ast.is_int_literal(tok.value) else tok.value)
            )
        self.take()
        return "".join(parts)

    def atom(self) -> Node:
        self.enter()
        node = parse_atom(self)
        self.depth -= 1
        return node


def parse_tokens(tokens: list[Token]) -> Node:
    """Parse a token list (from :func:`~reasongym.verifiers.math.lexer.tokenize`) into one answer node.

    Args:
        tokens: The tokens of one answer, ending with the ``end`` token.

    Returns:
        The syntax tree, before the answer-level clean-up of :func:`parse_answer`.

    Raises:
        Unparseable: The tokens do not form an answer.
        Refused: The answer nests deeper than ``MAX_NESTING``.
    """
    try:
        return Parser(tokens).answer()
    except RecursionError:
        raise Refused("the answer nests too deeply to parse") from None


def _strip_delimiters(text: str) -> str:
    r"""Drop ``$`` delimiters (an even count) and ``\(...\)`` / ``\[...\]``; ``{a \over b}`` is ``\frac{a}{b}``."""
    text = _OVER.sub(r"\\frac{\1}{\2}", text.strip()) if "\\over" in text else text.strip()
    for opener, closer in (("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opener) and text.endswith(closer):
            text = text[len(opener) : -len(closer)].strip()
    dollars = _DOLLAR.findall(text)
    if dollars and len(dollars) % 2 == 0:
        text = _DOLLAR.sub("", text).strip()  # an odd count keeps "$5" as money
    return text.removesuffix(".").strip()


def parse_answer(text: str) -> Node:
    r"""Parse one final answer (already extracted from a completion) into a syntax tree.

    Refusals come first and look only at the raw text (length, digits, bracket depth), then at the
    parsed tree (estimated digits of every value), so nothing costly is ever evaluated.

    Args:
        text: The answer, for example ``"x = \frac{1}{2}"``, ``"5 cm"`` or ``"[2, 5)"``.

    Returns:
        The answer's syntax tree (see :mod:`reasongym.verifiers.math.nodes`).

    Raises:
        Unparseable: The text is empty or outside the grammar; the message says what was not understood.
        Refused: The answer is too long or too costly to evaluate.

    Example:
        >>> parse_answer("x = 3")
        Labeled(label=Sym(name='x'), value=Num(mantissa=3, exp10=0, decimals=None))
    """
    check_text(text)
    if _PLAIN_INTEGER.fullmatch(text):  # the grammar's tree without the grammar (tested against it)
        return ast.Num(int(text))
    prepared = _strip_delimiters(sets_in_words(normalize_unicode(text)))
    prepared = _FUNCTION_VALUES.sub("", prepared, count=1)  # "f^{-1}(0)+f^{-1}(6) = 0" states 0
    if not prepared:
        raise Unparseable("the answer is empty")
    node = finish_answer(parse_tokens(tokenize(prepared)))
    estimate_digits(node)
    return node
