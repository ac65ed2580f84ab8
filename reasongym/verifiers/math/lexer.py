"""Tokenizer of the math answer grammar (LaTeX and plain text).

One left-to-right pass with anchored regular expressions; nothing is evaluated. Text that the
grammar does not know (an unknown LaTeX command, a stray symbol) raises
:class:`~reasongym.verifiers.math.nodes.Unparseable` with the offending piece named.

Token kinds: ``num`` (value: a Num or exact Mul node), ``sym`` (a one-letter or Greek variable),
``const`` (pi, e, oo), ``word`` (a unit or text word), ``sep`` (the words "or"/"and"), ``func``
(sin, log, ...), ``cmd`` (frac, sqrt, binom, begin, end, reals, emptyset, boxed), ``op`` (every
operator and bracket, with canonical names such as ``<=``, ``pm``, ``set{``, ``deg``, ``dollar``),
``colon`` (whole numbers joined by colons, ``4:30 pm`` or ``3:1``; value: the fields of a
:class:`~reasongym.verifiers.math.nodes.Colon`); ``nword``, ``ordinal`` and ``part`` (numbers in words,
merged into ``num`` tokens by :func:`~reasongym.verifiers.math.words.join_number_words`).

Why this file is long: the lexer is one left-to-right pass whose cases (numbers in their many spellings,
LaTeX commands, words) share the cursor; the token patterns above it are the table it reads.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

from reasongym.verifiers.math.nodes import Mul, Num, Unparseable
from reasongym.verifiers.math.units import PERCENT_WORDS, POWER_WORDS, SHORT_UNIT_WORDS
from reasongym.verifiers.math.words import (
    NUMBER_WORDS,
    ORDINAL_WORDS,
    PART_WORDS,
    SIGN_WORDS,
    join_number_words,
)

__all__ = ["Token", "tokenize", "FUNCTIONS", "NUMBER_WORDS"]


class Token(NamedTuple):
    """One token; ``spaced`` is True when white space came right before it."""

    kind: str
    value: object
    spaced: bool = False


FUNCTIONS = frozenset("sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh log ln exp lg".split())
_FUNCTION_ALIASES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "sqrt": "sqrt", "abs": "abs"}
_GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi "
    "rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Sigma Phi Psi Omega".split()
)
_SKIPPED_COMMANDS = frozenset(
    ", ; : ! > quad qquad left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr "
    "displaystyle textstyle limits nolimits middle enspace thinspace medspace thickspace".split()
) | {" ", "\n", "\t"}
_TEXT_WRAPPERS = frozenset("text textrm textbf textit textnormal textsf texttt textup mbox hbox emph".split())
_MATH_WRAPPERS = frozenset(
    "mathrm mathbf mathit mathsf mathtt mathnormal mathup boldsymbol bm operatorname boxed fbox underline".split()
)
_COMMAND_TOKENS: dict[str, tuple[str, object]] = {
    "frac": ("cmd", "frac"),
    "dfrac": ("cmd", "frac"),
    "tfrac": ("cmd", "frac"),
    "cfrac": ("cmd", "frac"),
    "sqrt": ("cmd", "sqrt"),
    "binom": ("cmd", "binom"),
    "dbinom": ("cmd", "binom"),
    "tbinom": ("cmd", "binom"),
    "begin": ("cmd", "begin"),
    "end": ("cmd", "end"),
    "emptyset": ("cmd", "emptyset"),
    "varnothing": ("cmd", "emptyset"),
    "pi": ("const", "pi"),
    "infty": ("const", "oo"),
    "infin": ("const", "oo"),
    "cdot": ("op", "*"),
    "times": ("op", "*"),
    "ast": ("op", "*"),
    "div": ("op", "/"),
    "pm": ("op", "pm"),
    "mp": ("op", "mp"),
    "cup": ("op", "cup"),
    "cap": ("op", "cap"),
    "setminus": ("op", "setminus"),
    "backslash": ("op", "setminus"),
    "le": ("op", "<="),
    "leq": ("op", "<="),
    "leqslant": ("op", "<="),
    "ge": ("op", ">="),
    "geq": ("op", ">="),
    "geqslant": ("op", ">="),
    "ne": ("op", "!="),
    "neq": ("op", "!="),
    "lt": ("op", "<"),
    "gt": ("op", ">"),
    "approx": ("op", "="),
    "equiv": ("op", "="),  # n \equiv 5 \pmod{7} states the residue 5
    "in": ("op", "in"),
    "circ": ("op", "deg"),
    "degree": ("op", "deg"),
    "%": ("op", "%"),
    "$": ("op", "dollar"),
    "{": ("op", "set{"),
    "}": ("op", "set}"),
    "lbrace": ("op", "set{"),
    "rbrace": ("op", "set}"),
    "|": ("op", "|"),
    "vert": ("op", "|"),
    "lvert": ("op", "|"),
    "rvert": ("op", "|"),
    "mid": ("op", "|"),
    "lfloor": ("op", "lfloor"),
    "rfloor": ("op", "rfloor"),
    "lceil": ("op", "lceil"),
    "rceil": ("op", "rceil"),
    "\\": ("op", "\\\\"),
    "&": ("op", "&"),
    "lbrack": ("op", "["),
    "rbrack": ("op", "]"),
    "langle": ("op", "("),
    "rangle": ("op", ")"),
    "colon": ("op", ":"),
    "to": ("op", "to"),
}
_OPERATORS = (
    "**",
    "<=",
    ">=",
    "!=",
    "=<",
    "=>",
    "+",
    "-",
    "*",
    "/",
    "^",
    "_",
    "!",
    "=",
    "<",
    ">",
    ",",
    ";",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "|",
    "%",
    "&",
    ":",
    "'",
)
_CURRENCY = {"$": "dollar", "€": "euro", "£": "pound", "¥": "yen", "₹": "rupee"}
"""Currency signs: the amount is read in its currency (only the number matters against a bare gold)."""
_OPERATOR_NAMES = {"**": "^", "=<": "<=", "=>": ">="}
_OPERATOR = re.compile("|".join(re.escape(op) for op in _OPERATORS))
"""The first of :data:`_OPERATORS` a text continues with (alternatives are tried in order, so "**" before "*")."""

_SPACE = re.compile(r"\s+")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)", re.S)
_LETTERS = re.compile(r"[A-Za-z]+")
_NUMBER = re.compile(r"(\d+)(?:\.(\d*))?|\.(\d+)")
# Thousands groups: "1,000" only outside brackets, where "(1,000)" could also be a pair; "1{,}000",
# "14{, }916", "1, \! 000" and "1\,000" are unambiguous everywhere. One mark throughout a number, and
# every group after the first has exactly three digits. A space (NFKC made thin and no-break spaces
# plain), "\;", "\ " or "~" groups only after a first group of one to three digits, so "2 3" stays
# two numbers and "3 125/8" a mixed number.
_LATEX_GROUPS = (
    r"(?:,[ \t]*\\![ \t]*\d{3})+(?!\d)|(?:[ \t]*\{,[ \t]*\}[ \t]*\d{3})+(?!\d)|(?:\\,\d{3})+(?!\d)"
)
_GROUPED_ANY = re.compile(
    rf"[1-9]\d{{0,2}}(?:(?:,\d{{3}})+(?!\d|,\d)|(?:,\d{{2}})+,\d{{3}}(?!\d|,\d)|(?:'\d{{3}})+(?!\d|'\d)|{_LATEX_GROUPS})"
)  # also Indian groups of two before the last three ("10,00,000") and Swiss apostrophes ("1'000'000")
_GROUPED_LATEX = re.compile(rf"[1-9]\d{{0,2}}(?:{_LATEX_GROUPS})")
_GROUPED_SPACE = re.compile(r"[1-9]\d{0,2}(?P<mark> |\\;|\\ |~)\d{3}(?:(?P=mark)\d{3})*(?![\d/])")
_GROUP_MARK_START = frozenset(", \t{\\~'")  # what may follow the first digit group of a grouped number
_GROUP_MARK = re.compile(r",[ \t]*\\![ \t]*|[ \t]*\{,[ \t]*\}[ \t]*|,|\\,|\\;|\\ | |~|'")
# Whole numbers joined by colons: "3:1", "1 : 2", "4:30", "12:05:59", "4:30 p.m." (see nodes.Colon).
_COLON = re.compile(r"\d+(?:[ \t]*:[ \t]*\d+)+(?![\d.])")
_CLOCK_SHAPE = re.compile(r"(?:[01]?\d|2[0-4]):[0-5]\d(?::[0-5]\d)?")
_HALF_DAY = re.compile(
    r"[ \t]*(?:\\[ ,;:!][ \t]*)?(?:\\(?:text|textrm|mathrm|mbox)[ \t]*\{[ \t]*([aApP])\.?[ \t]?[mM]\.?[ \t]*\}"
    r"|([aApP])\.?[ \t]?[mM]\.?(?![A-Za-z]))"
)
_VECTOR_WRAPPERS = frozenset({"mathbf", "boldsymbol", "bm", "vec", "hat"})
_UNIT_VECTOR = re.compile(r"[ \t]*(?:\{[ \t]*(\\[ij]math|[ijk])[ \t]*\}|(\\[ij]math|[ijk])(?![A-Za-z]))")
_DECIMAL_PART = re.compile(r"\.(\d+)")
_REPETEND = re.compile(r"\((\d+)\)")  # any period length: 1/47 repeats 46 digits
_DOTS = re.compile(r"[ \t]*(?:\.\.\.|\\[lc]?dots(?![A-Za-z]))")
_ORDINAL_SUFFIX = re.compile(
    r"(?:st|nd|rd|th)(?![A-Za-z])|\^[ \t]*\{?[ \t]*(?:\\(?:text|textrm|mathrm)[ \t]*\{[ \t]*)?(?:st|nd|rd|th)[ \t]*\}?[ \t]*\}?"
)
_EXPONENT = re.compile(r"[eE]([+-]?\d+)(?![\d.])")
_OVERLINE = re.compile(r"\\(?:overline|bar|dot)\s*(?:\{\s*(\d+)\s*\}|(\d))")


def _number(int_part: str, frac: str | None, exp: int, rep: str | None) -> Num | Mul:
    r"""A literal from its parts; ``rep`` is the repeating block of ``0.1\overline{6}``."""
    frac_digits = frac or ""
    if rep is not None:
        head = int(int_part + frac_digits)
        value = Fraction(
            int(int_part + frac_digits + rep) - head, 10 ** len(frac_digits) * (10 ** len(rep) - 1)
        )
        return Mul((Num(value.numerator),), (Num(value.denominator),))
    mantissa = int(int_part + frac_digits)
    decimals = len(frac_digits) - exp if frac_digits else None
    return Num(mantissa, exp - len(frac_digits), decimals)


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Token] = []
        self.depth = 0
        self.spaced = False

    def emit(self, kind: str, value: object) -> None:
        self.tokens.append(Token(kind, value, self.spaced))
        self.spaced = False

    def run(self, start: int, end: int, text_mode: bool) -> None:
        pos = start
        text = self.text
        while pos < end:
            char = text[pos]
            if char.isspace():
                pos = _SPACE.match(text, pos, end).end()
                self.spaced = True
            elif char.isdigit() or (char == "." and pos + 1 < end and text[pos + 1].isdigit()):
                pos = self.number(pos, end)
            elif char == "\\":
                pos = self.command(pos, end, text_mode)
            elif char.isascii() and char.isalpha():
                match = _LETTERS.match(text, pos, end)
                self.letters(match.group(0), text_mode)
                pos = match.end()
            elif char == "{" and text.startswith("{,}", pos):
                self.emit("op", ",")  # a lone "{,}" not between digit groups is a comma
                pos += 3
            else:
                pos = self.operator(pos, end, text_mode)

    def number(self, pos: int, end: int) -> int:
        text = self.text
        colon = _COLON.match(text, pos, end)
        if colon and (pos == 0 or text[pos - 1] not in ":."):
            return self.colon(colon.group(0), colon.end(), end)
        match = _NUMBER.match(text, pos, end)
        grouped = None
        if match.end() < end and text[match.end()] in _GROUP_MARK_START and len(match.group(1) or "") <= 3:
            spaced_ok = pos == 0 or text[pos - 1] not in "^_"  # "x^2 100" is no exponent 2100
            grouped = (spaced_ok and _GROUPED_SPACE.match(text, pos, end)) or (
                _GROUPED_ANY if self.depth == 0 else _GROUPED_LATEX
            ).match(text, pos, end)
        if grouped:
            int_part, frac, pos = _GROUP_MARK.sub("", grouped.group(0)), None, grouped.end()
            decimal = _DECIMAL_PART.match(text, pos, end)
            if decimal:
                frac, pos = decimal.group(1), decimal.end()
        else:
            int_part, frac = (match.group(1), match.group(2)) if match.group(1) else ("0", match.group(3))
            pos = match.end()
        rep = None
        if frac is not None and text.startswith("\\", pos):
            over = _OVERLINE.match(text, pos, end)
            if over:
                rep = over.group(1) or over.group(2)
                pos = over.end()
        if frac is not None and rep is None:
            repeat = _REPETEND.match(text, pos, end)  # 0.(3): the bracketed digits repeat
            if repeat:
                rep, pos = repeat.group(1), repeat.end()
            elif frac and _DOTS.match(text, pos, end):
                pos = _DOTS.match(text, pos, end).end()  # 0.666...: the decimal as written, cut off
        elif frac is None and not grouped:
            suffix = _ORDINAL_SUFFIX.match(text, pos, end)  # 15th, 15^{\text{th}}: the number 15
            pos = suffix.end() if suffix else pos
        exp = 0
        exp_match = _EXPONENT.match(text, pos, end) if rep is None else None
        if exp_match:
            exp = int(exp_match.group(1))
            pos = exp_match.end()
        self.emit("num", _number(int_part, frac, exp, rep))
        return pos

    def colon(self, written: str, pos: int, end: int) -> int:
        """Emit ``4:30 pm`` or ``3:1`` as one token; "am"/"pm" only after a time with hours 1-12."""
        parts = tuple(int(part) for part in written.split(":"))
        clock = _CLOCK_SHAPE.fullmatch(written) is not None
        half = _HALF_DAY.match(self.text, pos, end) if clock and 1 <= parts[0] <= 12 else None
        letter = half and (half.group(1) or half.group(2))
        self.emit("colon", (parts, clock, letter.lower() + "m" if letter else None))
        return half.end() if half else pos

    def command(self, pos: int, end: int, text_mode: bool) -> int:
        match = _COMMAND.match(self.text, pos, end)
        if match is None:
            raise Unparseable("a lone backslash")
        name, pos = match.group(1), match.end()
        if name in _SKIPPED_COMMANDS:
            if name in ("left", "right", "middle") and self.text.startswith(".", pos):
                pos += 1
            self.spaced = True
            return pos
        if name in ("phantom", "hphantom", "vphantom", "color", "pmod"):
            return self.skip_argument(pos, end)  # \color{red} 15 is 15; x \equiv 5 \pmod{7} is x = 5
        if name in ("textcolor", "colorbox"):  # \textcolor{blue}{15}: the colour, then the content
            return self.wrapper("mathrm", self.skip_argument(pos, end), end, text_mode)
        if name in _VECTOR_WRAPPERS:
            unit = _UNIT_VECTOR.match(self.text, pos, end)
            if unit is not None:  # \mathbf{i}, \hat{j}, \vec k: a unit vector
                self.emit("sym", _unit_name(unit))
                return unit.end()
            if name in ("vec", "hat"):
                raise Unparseable(f"\\{name} is only understood on the unit vectors i, j, k")
        if name in _TEXT_WRAPPERS or name in _MATH_WRAPPERS or name == "mathbb":
            return self.wrapper(name, pos, end, text_mode)
        if name in _COMMAND_TOKENS:
            kind, value = _COMMAND_TOKENS[name]
            if value in ("set{", "(", "["):
                self.depth += 1
            elif value in ("set}", ")", "]"):
                self.depth -= 1
            self.emit(kind, value)
        elif name in FUNCTIONS or name in ("arcsec", "arccsc", "arccot"):
            self.emit("func", name)
        elif name in _GREEK:
            self.emit("sym", name)
        elif name in ("overline", "bar", "dot", "ldots", "dots", "cdots", "vdots"):
            raise Unparseable(f"\\{name} is only understood after decimal digits (0.\\overline{{3}})")
        else:
            raise Unparseable(f"unknown LaTeX command \\{name}")
        return pos

    def skip_argument(self, pos: int, end: int) -> int:
        r"""Skip the invisible argument of \phantom: a braced group or one character."""
        while pos < end and self.text[pos].isspace():
            pos += 1
        if pos < end and self.text[pos] == "{":
            return _matching_brace(self.text, pos, end) + 1
        return min(pos + 1, end)

    def wrapper(self, name: str, pos: int, end: int, text_mode: bool) -> int:
        while pos < end and self.text[pos].isspace():
            pos += 1
        if pos >= end or self.text[pos] != "{":
            raise Unparseable(f"\\{name} must be followed by {{...}}")
        close = _matching_brace(self.text, pos, end)
        if name == "mathbb":
            letter = self.text[pos + 1 : close].strip()
            if letter != "R":
                raise Unparseable(f"\\mathbb{{{letter}}} is not understood (only \\mathbb{{R}})")
            self.emit("cmd", "reals")
        elif name in ("boxed", "fbox"):
            self.emit("op", "(")
            self.run(pos + 1, close, text_mode)
            self.emit("op", ")")
        else:
            self.spaced = self.spaced or (pos + 1 < close and self.text[pos + 1].isspace())
            self.run(pos + 1, close, text_mode or name in _TEXT_WRAPPERS)
        return close + 1

    def letters(self, run: str, text_mode: bool) -> None:
        lower = run.lower()
        if lower in ("or", "and"):
            self.emit("sep", lower)
        elif lower in NUMBER_WORDS:
            self.emit("nword", NUMBER_WORDS[lower])
        elif lower in ORDINAL_WORDS:
            self.emit("ordinal", ORDINAL_WORDS[lower])
        elif lower in PART_WORDS:
            self.emit("part", PART_WORDS[lower])
        elif lower in SIGN_WORDS:
            self.emit("op", "-")
        elif text_mode or lower in PERCENT_WORDS or lower in POWER_WORDS or lower == "per":
            self.emit("word", run)
        elif lower in FUNCTIONS or lower in _FUNCTION_ALIASES:
            self.emit("func", _FUNCTION_ALIASES.get(lower, lower))
        elif lower in ("pi",):
            self.emit("const", "pi")
        elif lower in ("inf", "infty", "infinity"):
            self.emit("const", "oo")
        elif run in SHORT_UNIT_WORDS or (
            run[:1].isupper() and run[1:].islower() and lower in SHORT_UNIT_WORDS
        ):
            self.emit("word", run)
        elif lower[:-1] in FUNCTIONS or lower[:-1] == "sqrt":
            self.emit("func", lower[:-1])  # "sinx", "lnx" in plain text
            self.emit("sym", run[-1])
        elif len(run) >= 4:
            self.emit("word", run)
        else:
            for letter in run:
                self.emit("sym", letter)

    def operator(self, pos: int, end: int, text_mode: bool) -> int:
        text = self.text
        if text[pos] in _CURRENCY:
            # Math-mode delimiters were stripped before; a remaining "$" (or another currency sign)
            # before a number is money.
            if pos + 1 < end and (text[pos + 1].isdigit() or text[pos + 1] in " ."):
                self.emit("op", _CURRENCY[text[pos]])
            elif text[pos] != "$":
                raise Unparseable(f"unexpected character {text[pos]!r}")
            return pos + 1
        found = _OPERATOR.match(text, pos)
        if found is not None:
            op = found.group(0)
            if op in "([{":
                self.depth += 1
            elif op in ")]}":
                self.depth -= 1
            self.emit("op", _OPERATOR_NAMES.get(op, op))
            return pos + len(op)
        if text_mode and text[pos] in ".?:'\"-":
            return pos + 1
        if text[pos] == "." and pos + 1 == end:
            return pos + 1  # a full stop ending the answer
        raise Unparseable(f"unexpected character {text[pos]!r}")


def _unit_name(unit: re.Match[str]) -> str:
    r"""``\mathbf{i}`` for the unit vector written ``\hat{\imath}``, ``\vec i``, ..."""
    written = unit.group(1) or unit.group(2)
    return "\\mathbf{" + (written[1] if written.startswith("\\") else written) + "}"


def _matching_brace(text: str, open_pos: int, end: int) -> int:
    depth = 0
    pos = open_pos
    while pos < end:
        char = text[pos]
        if char == "\\":
            pos += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return pos
        pos += 1
    raise Unparseable("unbalanced braces")


def tokenize(text: str) -> list[Token]:
    """Split an answer into tokens.

    Args:
        text: One answer, already passed through ``normalize_unicode`` and stripped of ``$``
            delimiters.

    Returns:
        The tokens, ending with an ``("end", None)`` token.

    Raises:
        Unparseable: The text holds something outside the grammar.
    """
    lexer = _Lexer(text)
    lexer.run(0, len(text), text_mode=False)
    tokens = join_number_words(lexer.tokens)
    tokens.append(Token("end", None, lexer.spaced))
    return tokens
