"""Unicode clean-up shared by answer extraction and the math grammar.

Models write the same answer in many code points: U+2212 for minus, full-width digits, ``x²``,
``½``, ``√2``, ``π``, zero-width joiners copied from web text. :func:`normalize_unicode` maps all of
these to plain ASCII or to the LaTeX command the math grammar understands, so that later stages
only ever see one spelling.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["chinese_number", "dotted_thousands", "normalize_unicode", "semicolon_points", "without_markup"]

# Invisible characters only split tokens (U+00AD soft hyphen, zero-width space/joiners, word
# joiner, BOM), so they are dropped. Control characters (NUL, ...) become a space instead: dropping
# them would glue "1\x002" into the different number "12".
_DROP: dict[int, str | None] = dict.fromkeys(
    [0x00AD, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0xFEFF]
)
_DROP.update(dict.fromkeys([c for c in range(0x20) if chr(c) not in "\t\n\r"] + [0x7F], " "))

# Superscript and subscript runs must be rewritten before NFKC, which would flatten ``x²`` to
# ``x2`` and silently change the value.
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ"
_SUPERSCRIPT_PLAIN = "0123456789+-=()ni"
_SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎"
_SUBSCRIPT_PLAIN = "0123456789+-=()"
_SUPERSCRIPT_RUN = re.compile(f"[{_SUPERSCRIPTS}]+")
_SUBSCRIPT_RUN = re.compile(f"[{_SUBSCRIPTS}]+")
_SUPERSCRIPT_TABLE = str.maketrans(_SUPERSCRIPTS, _SUPERSCRIPT_PLAIN)
_SUBSCRIPT_TABLE = str.maketrans(_SUBSCRIPTS, _SUBSCRIPT_PLAIN)

# Vulgar fractions become \frac so that "3½" reads as the mixed number 3 1/2.
_VULGAR_FRACTIONS = {
    "½": (1, 2),
    "⅓": (1, 3),
    "⅔": (2, 3),
    "¼": (1, 4),
    "¾": (3, 4),
    "⅕": (1, 5),
    "⅖": (2, 5),
    "⅗": (3, 5),
    "⅘": (4, 5),
    "⅙": (1, 6),
    "⅚": (5, 6),
    "⅐": (1, 7),
    "⅛": (1, 8),
    "⅜": (3, 8),
    "⅝": (5, 8),
    "⅞": (7, 8),
    "⅑": (1, 9),
    "⅒": (1, 10),
}

# Applied after NFKC (which leaves these alone). A trailing space keeps "πr" from reading "\pir".
_SYMBOLS = {
    "\u2212": "-",  # minus sign
    "\u2010": "-",  # hyphen
    "\u2011": "-",  # non-breaking hyphen
    "\u2796": "-",  # heavy minus
    "×": "\\times ",
    "÷": "\\div ",
    "·": "\\cdot ",
    "⋅": "\\cdot ",
    "∙": "\\cdot ",
    "√": "\\sqrt ",
    "∛": "\\sqrt[3] ",
    "∜": "\\sqrt[4] ",
    "∞": "\\infty ",
    "≤": "\\le ",
    "≦": "\\le ",
    "⩽": "\\le ",
    "≥": "\\ge ",
    "≧": "\\ge ",
    "⩾": "\\ge ",
    "≠": "\\ne ",
    "±": "\\pm ",
    "∓": "\\mp ",
    "∪": "\\cup ",
    "∈": "\\in ",
    "∉": "\\notin ",
    "≈": "\\approx ",
    "∅": "\\emptyset ",
    "∩": "\\cap ",
    "\u2216": "\\setminus ",  # set minus: "ℝ ∖ {0}"
    "°": "^\\circ ",
    "\u1680": " ",  # the one Unicode space NFKC keeps
    "\u2028": "\n",  # line separator
    "\u2029": "\n",  # paragraph separator
    "\u2032": "'",  # prime
    "\u2018": "'",
    "\u2019": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u2044": "/",  # fraction slash: "√3⁄2"
    "\u2215": "/",  # division slash
    "\u27e8": "\\langle ",  # mathematical angle brackets: "⟨3, 0, −1⟩"
    "\u27e9": "\\rangle ",
    "\u3008": "\\langle ",
    "\u3009": "\\rangle ",
}
_SYMBOL_TABLE = str.maketrans(_SYMBOLS)
# A Greek letter alone is math (``2π``, ``πr^2``, ``θ = 30°``); inside a run of Greek letters it is a word
# ("Ναι", "πετούν") and stays as written.
_GREEK_MATH = {"π": "\\pi ", "θ": "\\theta ", "α": "\\alpha ", "β": "\\beta "}
_LONE_GREEK = re.compile("(?<![\u0370-\u03ff\u1f00-\u1fff])[παβθ](?![\u0370-\u03ff\u1f00-\u1fff])")


_ROOT_OF_NUMBER = re.compile(r"([√∛∜])(\d+(?:\.\d+)?)")
_ROOT_INDEX = {"√": "", "∛": "[3]", "∜": "[4]"}


def _root_of_number(match: re.Match[str]) -> str:
    return f"\\sqrt{_ROOT_INDEX[match.group(1)]}{{{match.group(2)}}}"


_THIN_GROUPS = re.compile(r"(?<=\d)[\u202f\u2009\u00a0](?=\d{3}(?!\d))")
_SLASHED_FRACTION = re.compile(f"([{_SUPERSCRIPTS[:10]}]+)\u2044([{_SUBSCRIPTS[:10]}]+)")
_DASH_MINUS = re.compile(r"(?:(?<=[\s=(\[])|^)\u2013(?=\d)")


def _slashed_fraction(match: re.Match[str]) -> str:
    numerator = match.group(1).translate(_SUPERSCRIPT_TABLE)
    denominator = match.group(2).translate(_SUBSCRIPT_TABLE)
    return f"\\frac{{{numerator}}}{{{denominator}}}"


def _superscript(match: re.Match[str]) -> str:
    return "^{" + match.group(0).translate(_SUPERSCRIPT_TABLE) + "}"


def _subscript(match: re.Match[str]) -> str:
    return "_{" + match.group(0).translate(_SUBSCRIPT_TABLE) + "}"


def normalize_unicode(s: str) -> str:
    r"""Map the Unicode spellings of math to plain ASCII or LaTeX, keeping line breaks.

    Drops invisible characters (zero-width spaces and joiners, soft hyphens, BOM), turns control
    characters other than tab and newline (NUL, ...) and every Unicode space (NBSP, thin space, ...)
    into ``" "``, rewrites superscript and subscript runs as ``^{...}`` / ``_{...}`` and vulgar
    fractions as ``\frac{a}{b}``, applies NFKC (full-width digits and letters become ASCII), and
    replaces math symbols by the LaTeX command for them (``−`` -> ``-``, ``√`` -> ``\sqrt``,
    ``π`` -> ``\pi``, ``≤`` -> ``\le``, ``°`` -> ``^\circ``, ...). Runs in linear time.

    Args:
        s: Any text, for example a model completion or an extracted answer.

    Returns:
        The normalised text. ASCII input comes back unchanged except that control characters
        become spaces.

    Example:
        >>> normalize_unicode("x² − ½ ≤ 3π")
        'x^{2} - \\frac{1}{2} \\le  3\\pi '
    """
    s = s.translate(_DROP)
    if s.isascii():
        return s
    if "\u202f" in s or "\u2009" in s or "\u00a0" in s:  # "1 250" with a thin space is one number
        s = _THIN_GROUPS.sub("", s)
    if "\u2044" in s:  # the fraction slash: "³⁄₈" and "3⁄8" are 3/8
        s = _SLASHED_FRACTION.sub(_slashed_fraction, s).replace("\u2044", "/")
    if "\u2013" in s:  # an en dash right before a number, after a space, "=" or "(": a minus sign
        s = _DASH_MINUS.sub("-", s)
    s = _SUPERSCRIPT_RUN.sub(_superscript, s)
    s = _SUBSCRIPT_RUN.sub(_subscript, s)
    s = s.replace("ℝ", "\\mathbb{R}")  # NFKC would flatten it to the letter R
    for char, (num, den) in _VULGAR_FRACTIONS.items():
        if char in s:
            s = s.replace(char, f"\\frac{{{num}}}{{{den}}}")
    s = unicodedata.normalize("NFKC", s)
    if "√" in s or "∛" in s or "∜" in s:
        s = _ROOT_OF_NUMBER.sub(_root_of_number, s)  # "√16" is the root of 16, not √1 times 6
    s = s.translate(_SYMBOL_TABLE)
    return (
        _LONE_GREEK.sub(lambda m: _GREEK_MATH[m.group(0)], s)
        if "π" in s or "θ" in s or "α" in s or "β" in s
        else s
    )


_CHINESE_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CHINESE_UNITS = {"十": 10, "百": 100, "千": 1000}
_CHINESE_NUMBER = re.compile(
    "(?:负)?[零〇一二两三四五六七八九十百千万亿]+(?:分之[零〇一二两三四五六七八九十百千万亿]+)?"
)


def _chinese_integer(text: str) -> int:
    """The value of a Chinese integer numeral ("三百" 300, "十二" 12, "一万零五" 10005)."""
    total = section = digit = 0
    for char in text:
        if char in _CHINESE_DIGITS:
            digit = _CHINESE_DIGITS[char]
        elif char in _CHINESE_UNITS:
            section += (digit or 1) * _CHINESE_UNITS[char]
            digit = 0
        else:  # 万 and 亿 scale everything read so far in their section
            total = (total + section + digit) * (10_000 if char == "万" else 100_000_000)
            section = digit = 0
    return total + section + digit


def chinese_number(answer: str) -> str | None:
    """A whole answer written as a Chinese numeral, in digits ("三百" -> "300", "二分之一" -> "1/2"), else None.

    Only a whole answer is read: inside prose these characters are words ("一些" is "some").

    Example:
        >>> chinese_number("二分之一")
        '1/2'
    """
    if not _CHINESE_NUMBER.fullmatch(answer):
        return None
    sign = "-" if answer.startswith("负") else ""
    body = answer.removeprefix("负")
    if "分之" in body:  # "二分之一": one part of two
        denominator, numerator = body.split("分之")
        return f"{sign}{_chinese_integer(numerator)}/{_chinese_integer(denominator)}"
    return f"{sign}{_chinese_integer(body)}"


_STRUCK = re.compile(r"~~[^~\n]{1,200}~~|<(s|del|strike)>[^<\n]{0,200}</\1>", re.IGNORECASE)
_LINE_TAG = re.compile(r"<(?:br|/?p|/?div|/?li|hr)(?:[ \t][^<>\n]{0,100})?[ \t]*/?>", re.IGNORECASE)
_SCRIPT_TAG = re.compile(r"<(sup|sub)>([^<\n]{1,40})</\1>", re.IGNORECASE)
_INLINE_TAG = re.compile(
    r"</?(?:b|strong|i|em|u|mark|span|code|font|small|big|tt|ins)(?:[ \t][^<>\n]{0,100})?>", re.IGNORECASE
)


def without_markup(text: str) -> str:
    r"""``text`` without HTML and Markdown presentation: the answer a reader of the rendered text sees.

    Struck-out text (``~~12~~``, ``<s>12</s>``, ``<del>``) is gone, since its writer retracted it; line tags
    (``<br>``, ``<p>``, ``<li>``) become line breaks; ``<sup>2</sup>`` and ``<sub>5</sub>`` become ``^{2}``
    and ``_{5}``; inline tags (``<b>``, ``<strong>``, ``<em>``, ``<code>``, ``<span ...>``) are dropped,
    keeping their content. Other angle brackets (``x < 3``, ``<answer>``, ``<think>``) are left alone.

    Example:
        >>> without_markup("<b>Answer:</b> ~~12~~ 15<br>")
        'Answer:  15\n'
    """
    if "<" not in text and "~~" not in text:
        return text
    text = _STRUCK.sub("", text)
    if "<" not in text:
        return text
    text = _LINE_TAG.sub("\n", text)
    text = _SCRIPT_TAG.sub(lambda m: ("^{" if m.group(1).lower() == "sup" else "_{") + m.group(2) + "}", text)
    return _INLINE_TAG.sub("", text)


_SEMICOLON_POINT = re.compile(
    r"([(\[\]])([ \t]*[-+]?\d+(?:,\d+)?[ \t]*(?:;[ \t]*[-+]?\d+(?:,\d+)?[ \t]*)+)([)\]\[])"
)
_FRENCH_OPEN = {"]": "(", "[": "["}
_FRENCH_CLOSE = {"[": ")", "]": "]"}


def semicolon_points(text: str) -> str:
    """Points and intervals written with semicolons, as in Russian, German or French, in the comma notation.

    ``(1; 2)`` is the point ``(1, 2)`` and ``(1,5; 2)`` is ``(1.5, 2)``: where a semicolon separates the
    members, a comma between digits is a decimal mark. French intervals turn their brackets outwards to
    leave an end out: ``]1;4[`` is ``(1, 4)`` and ``[1;4[`` is ``[1, 4)``. Only brackets of plain numbers
    are rewritten.

    Example:
        >>> semicolon_points("Ответ: (1,5; 2)")
        'Ответ: (1.5, 2)'
    """
    if ";" not in text:
        return text
    return _SEMICOLON_POINT.sub(
        lambda m: (
            _FRENCH_OPEN.get(m.group(1), m.group(1))
            + m.group(2).replace(",", ".").replace(";", ",")
            + _FRENCH_CLOSE.get(m.group(3), m.group(3))
        ),
        text,
    )


_DOT_GROUPS = re.compile(
    r"(?<![\d.,])\d{1,3}(?:\.\d{3}){2,}(?![\d.,])|(?<![\d.,])\d{1,3}(?:\.\d{3})+,\d{1,2}(?![\d.,])"
)
_DOT_GROUP_AHEAD = re.compile(r"\.\d\d\d")
_DOT_GROUP_MONEY = re.compile(
    r"(?<![\d.,])\d{1,3}\.\d{3}(?=[ \t]*(?:€|Euro|EUR|CHF|Franken|Kronen|kr\b|zł|Rubel|руб|₽|Lira|TL\b|Reais))"
)


def dotted_thousands(text: str) -> str:
    """Numbers grouped by dots in the German, Spanish or Brazilian way, written without the groups.

    Unambiguous readings only: two or more dot groups (``1.000.000``), dot groups then a decimal comma
    (``2.500,50``, which becomes ``2500.50``), and one dot group before a currency that is written so
    (``2.500 Euro``, ``3.000 €``). "2.500" alone stays the decimal 2.5.

    Example:
        >>> dotted_thousands("Der Preis beträgt 2.500 Euro, also 1.000.000 Cent.")
        'Der Preis beträgt 2500 Euro, also 1000000 Cent.'
    """
    if _DOT_GROUP_AHEAD.search(text) is None:  # one cheap scan: most texts hold no ".ddd" at all
        return text
    text = _DOT_GROUPS.sub(lambda m: m.group(0).replace(".", "").replace(",", "."), text)
    return _DOT_GROUP_MONEY.sub(lambda m: m.group(0).replace(".", ""), text)
