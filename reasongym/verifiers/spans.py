r"""Read an answer span: what follows an answer phrase, numbers as written in text, a number's unit.

These are the pieces of :mod:`~reasongym.verifiers.extract` that read text after it was located (its
module docstring states the rules). Each runs in time linear in its input: strings are searched with
``str.find`` and regexes without nested quantifiers, and joined math spans stop at
:data:`MAX_ANSWER_CHARS`.
"""

from __future__ import annotations

import re

from reasongym.verifiers.boxes import read_box_argument
from reasongym.verifiers.math.units import MULTIPLIERS, is_unknown_unit, lookup_unit
from reasongym.verifiers.text import chinese_number, normalize_unicode

__all__ = [
    "MAX_ANSWER_CHARS",
    "NUMBER",
    "SENTENCE_BREAK",
    "answer_after_phrase",
    "clean_answer",
    "currency_before",
    "mask_math",
    "split_sentences",
    "strip_text_commands",
    "strip_text_wrapper",
    "unit_end",
    "with_unit",
]

MAX_ANSWER_CHARS = 1_000
"""A longer answer after a phrase is refused whole, never graded on a cut-off piece."""
_NEXT_LINE_CHARS = 300

NUMBER = re.compile(
    r"(?<![\w.^_])-?(?:(?:\d+[ \t]*)?\\[dt]?frac\{\d+\}\{\d+\}|\d+[ \t]+(?:and[ \t]+)?\d+/\d+(?![\d/.])"
    r"|(?<![(\[{,])\d+,(?:\d{1,2}|\d{4,})(?![\d,)\]}])"  # a decimal comma: "1,5", "2,75" (not "(2,3)")
    r"|(?:\d{1,3}(?:,\d{3})+(?!\d)|\d{1,2}(?:,\d{2})+,\d{3}(?![\d,])|\d{1,3}(?:'\d{3})+(?![\d'])"
    r"|\d{1,3}(?: \d{3})+(?![\w,.-]|[ \t]\d)|\d+)"  # "1 000": a space between exact groups of three
    r"(?:\.\d+)?(?:[eE][-+]?\d+(?![\w.]))?(?:/\d+)?"
    r"|(?<![\d,])\.\d+(?![\d.]))"  # ".4" is 0.4
)
"""A number as written in text: integers, thousands groups (also Indian "10,00,000" and Swiss "1'000'000"),
decimals (also with a decimal comma, "1,5"), scientific ``1.2E+05``, ``a/b``, ``\\frac{a}{b}``, mixed ``2 1/2``."""
DECIMAL_COMMA = re.compile(r"(-?\d+),(\d{1,2}|\d{4,})")
"""A comma between digits that is a decimal mark: one, two, or four or more digits follow it (three
is a thousands group, "1,500"), outside brackets, where "(2,3)" is a pair."""
_UNIT_AFTER = re.compile(
    r"[ \t]*(?:\\(?:text|mathrm|textrm|mbox)\{[ \t]*)?([A-Za-zμ]{1,12})\}?(?:\^\{?[23]\}?)?"
)
_POWER_AFTER = re.compile(r"[ \t]+(?:squared|cubed)\b", re.IGNORECASE)
_CURRENCY_BEFORE = frozenset("$€£¥₹")
_PERCENT_AFTER = re.compile(r"[ \t]*\\?%")
_PER_UNIT = re.compile(r"(?:[ \t]+per[ \t]+|[ \t]*/[ \t]*)([A-Za-z]{1,12})(?![A-Za-z])")
_SENTENCE_END = re.compile(
    r"(?<!\\)(?<!\bi\.e)(?<!\be\.g)(?:[.?;]|(?<!\d)!|!(?![ \t]*=))(?=\s|$)|[。！？]"
)  # "i.e." and "e.g." end no sentence; the ideographic full stop ends one
SENTENCE_BREAK = re.compile(
    r"(?<!\\)(?<!\bi\.e)(?<!\be\.g)(?:[.?;]|(?<!\d)!|!(?![ \t]*=))(?=\s|$)|[。！？]|\n"
)
"""Where a sentence of prose ends: a full stop, "?", ";", "!" (not "!=" or a factorial), or a line break."""
_TRAILING_MARKS = " \t\n*`_"
_SPACE_RUN = re.compile(r"\s+")
_ITALIC = re.compile(r"\*([^*\s][^*]*)\*|_([^_{\s][^_]*)_")
_EITHER = re.compile(r"either\s+", re.IGNORECASE)  # "either 3 or 4" is graded as the hedge "3 or 4"
_WRAPPERS = (("**", "**"), ("`", "`"), ("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
"""Pairs a model puts around a whole answer, in the order tried ("$$" before "$")."""
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|mbox)\s*\{")
_PROSE_BREAK = re.compile(r"[.!?;]\s+\w|\n")
_CLOSERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_NEXT_MATH = re.compile(r"[ \t]*(?:,[ \t]*)?(?:(?:and|or)[ \t]+)?(?=\$|\\\()", re.IGNORECASE)


def _delimited(text: str) -> int:
    """Where the math span that opens ``text`` ends (after its closer), or -1 when it is not closed."""
    for opener, closer in _CLOSERS:
        if text.startswith(opener):
            close = text.find(closer, len(opener))
            while close > 0 and closer.startswith("$") and text[close - 1] == "\\":
                close = text.find(closer, close + 1)  # "$\$36$": an escaped dollar is money
            return close + len(closer) if close != -1 else -1
    return -1


def mask_math(text: str) -> str:
    r"""``text`` with the inside of each ``$...$`` / ``\(...\)`` blanked out, positions kept (linear).

    Two dollar signs with a sentence break between them are money, not math (``$12.50. If she pays with
    a $20 bill``), and so is a span that opens on a digit and closes after a space (``$5 + $7 = $12``).
    """
    pieces, pos = [], 0
    nearest = {"$": text.find("$"), "\\(": text.find("\\(")}
    while True:
        for opener in nearest:
            if 0 <= nearest[opener] < pos:
                nearest[opener] = text.find(opener, pos)
        found = [(index, opener) for opener, index in nearest.items() if index != -1]
        if not found:
            break
        start, opener = min(found)
        closer = "$" if opener == "$" else "\\)"
        close = text.find(closer, start + len(opener))
        if close == -1:
            break
        inner = start + len(opener)
        money = text[inner : inner + 1].isdigit() and text[close - 1 : close].isspace()  # "$5 + $7"
        if opener == "$" and (money or _PROSE_BREAK.search(text, inner, close)):
            pieces.append(text[pos:inner])  # "$12.50. If she pays with a $20 bill": dollars, not math
            pos = inner
            continue
        pieces += [text[pos:inner], "#" * (close - inner), closer]
        pos = close + len(closer)
    return "".join(pieces) + text[pos:]


def _leading_math(line: str) -> str | None:
    """``$a$``, or ``a or b, c`` from ``$a$ or $b$, $c$``: the math that opens the line, or None."""
    end = _delimited(line)
    if end == -1:
        return None
    pieces = [line[:end]]
    while end <= MAX_ANSWER_CHARS:  # a longer answer is refused anyway
        joiner = _NEXT_MATH.match(line, end)
        following = -1 if joiner is None else _delimited(line[joiner.end() : joiner.end() + MAX_ANSWER_CHARS])
        if following == -1:
            break
        pieces += [line[end : joiner.end()], line[joiner.end() : joiner.end() + following]]
        end = joiner.end() + following
    if len(pieces) == 1:
        return pieces[0]
    return "".join(piece if k % 2 else _inside(piece) for k, piece in enumerate(pieces))


def _inside(span: str) -> str:
    """The math inside one delimited span: ``$x = 4$`` gives ``x = 4``."""
    for opener, closer in _CLOSERS:
        if span.startswith(opener) and span.endswith(closer) and len(span) >= len(opener) + len(closer):
            return span[len(opener) : len(span) - len(closer)].strip()
    return span


def _display_block(text: str) -> str | None:
    r"""A display math block (``$$ ... $$``, ``\[ ... \]``) that opens ``text``, over several lines."""
    if not text.startswith(("$$", "\\[")):
        return None
    end = _delimited(text[:_NEXT_LINE_CHARS])
    return text[:end] if end != -1 else None


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def answer_after_phrase(tail: str, start: int) -> str | None:
    """The answer text after a phrase ending at ``start``; None when it is too long to grade."""
    rest = tail[start:].lstrip(" \t:")
    if rest.startswith("}"):  # "$\text{Answer: } 15$": the phrase closes a \text{} wrapper
        rest = rest[1:].lstrip(" \t:")
    if rest.startswith("**") and _first_line(rest).count("**") % 2 == 1:
        rest = rest[2:].lstrip(" \t:")  # closes a bold phrase: "**Answer:** 5"
    if not _first_line(rest).strip():
        rest = rest.strip()  # nothing on the phrase's line: the answer starts on the next one
    block = _display_block(rest)
    if block is not None:
        return block
    line = _first_line(rest).strip()
    math = _leading_math(line)
    if math is not None:
        answer = math
    else:
        sentence_end = _SENTENCE_END.search(mask_math(line))  # "$1,\! 000$" and "$a.b$" end none
        answer = line[: sentence_end.start()] if sentence_end else line
    return answer if len(answer) <= MAX_ANSWER_CHARS else None


def unit_end(text: str, pos: int) -> int:
    r"""Where a unit written at ``pos`` ends (`` cm``, `` m^2``, ``\text{ km}``, ``%``); ``pos`` when there is none."""
    percent = _PERCENT_AFTER.match(text, pos)
    if percent is not None:
        return percent.end()
    unit = _UNIT_AFTER.match(text, pos)
    if unit is None:
        return pos
    word = unit.group(1)
    if word.lower() in MULTIPLIERS or is_unknown_unit(word):
        return unit.end()  # "5 dozen" is read as 60, "5 tons" refused: never the bare 5
    if lookup_unit(word) is None:
        return pos
    per = _PER_UNIT.match(text, unit.end())  # "60 kilometres per hour", "5 m/s"
    end = per.end() if per is not None and lookup_unit(per.group(1)) is not None else unit.end()
    power = _POWER_AFTER.match(text, end)  # "5 mph squared" is in mph^2
    return power.end() if power is not None else end


def with_unit(text: str, number: re.Match[str]) -> str:
    """The number, with the unit word written right after it when there is one (``24 m^2``)."""
    end = unit_end(text, number.end())
    return text[number.start() : end].strip() if end != number.end() else number.group(0)


def currency_before(text: str, start: int) -> str:
    """The currency sign right before a number at ``start`` ("£5" is 5 pounds sterling, never 5 dollars), or ""."""
    sign = text[start - 1 : start]
    return sign if sign in _CURRENCY_BEFORE and sign != "$" else ""


def _unwrapped(text: str) -> str:
    """``text`` without the first of :data:`_WRAPPERS` that encloses all of it (one pair per call)."""
    for opener, closer in _WRAPPERS:  # startswith first: most answers have no wrapper, so it decides
        if text.startswith(opener) and text.endswith(closer) and len(text) >= len(opener) + len(closer):
            return text[len(opener) : len(text) - len(closer)]
    return text


def clean_answer(raw: str) -> str:
    r"""Normalise Unicode and strip wrappers a model puts around an answer.

    Removes outer whitespace, ``$``/``$$``, ``\(...\)``, ``\[...\]``, Markdown ``**`` and `````` ` `````` (also an
    unpaired one at either end), trailing periods and a leading "either" (so that "either 3 or 4" is graded as the hedge it is);
    collapses runs of whitespace to one space.

    Args:
        raw: An answer span, such as a box's content or the text after "The answer is".

    Returns:
        The cleaned answer (possibly empty).

    Example:
        >>> clean_answer(" **$\\frac{1}{2}$**. ")
        '\\frac{1}{2}'
    """
    text = _SPACE_RUN.sub(" ", normalize_unicode(raw)).strip()
    previous = None
    while text != previous:
        previous = text
        text = text.strip().rstrip(".\u3002").strip()  # also the ideographic full stop "。"
        either = _EITHER.match(text)
        text = text[either.end() :] if either else text
        text = _unwrapped(text)
        if text.count("**") % 2 == 1:  # "**Answer: 20%**" leaves one mark of the bold
            text = text.removesuffix("**") if text.endswith("**") else text.removeprefix("**")
        italic = _ITALIC.fullmatch(text)  # "*42*" and "_42_": Markdown italics around the whole answer
        text = (italic.group(1) or italic.group(2)) if italic else text
    return chinese_number(text) or text


def strip_text_wrapper(answer: str) -> str:
    r"""Remove ``\text{...}``-style wrappers (also ``\textbf``, ``\mathrm``, ...) around a whole answer.

    Args:
        answer: A cleaned answer.

    Returns:
        The wrapped content when one wrapper spans the whole answer (repeatedly), else ``answer``.

    Example:
        >>> strip_text_wrapper(r"\textbf{\text{(B)}}")
        '(B)'
        >>> strip_text_wrapper(r"\text{a} + \text{b}")
        '\\text{a} + \\text{b}'
    """
    text = answer.strip()
    while True:
        wrapper = _TEXT_WRAPPER.match(text)
        if wrapper is None:
            return text
        status, content, end = read_box_argument(text, wrapper.end() - 1)
        if status != "ok" or text[end:].strip():
            return text
        text = content.strip()


def strip_text_commands(answer: str) -> str:
    r"""Replace every ``\text{...}``-style command (``\textbf``, ``\mathrm``, ...) by its content.

    Args:
        answer: A cleaned answer.

    Returns:
        The answer without the commands; an unbalanced one is left as written.

    Example:
        >>> strip_text_commands(r"\text{(C) } 7")
        '(C)  7'
    """
    text, pos = answer, 0
    while True:
        wrapper = _TEXT_WRAPPER.search(text, pos)
        if wrapper is None:
            return text.strip()
        status, content, end = read_box_argument(text, wrapper.end() - 1)
        if status != "ok":
            return text.strip()
        text = text[: wrapper.start()] + content + text[end:]
        pos = wrapper.start()


def split_sentences(text: str) -> list[tuple[int, str]]:
    """The sentences of ``text`` (math kept whole) with their start offsets, empty ones dropped."""
    pieces, start = [], 0
    for end in SENTENCE_BREAK.finditer(mask_math(text)):
        pieces.append((start, text[start : end.end()]))
        start = end.end()
    pieces.append((start, text[start:]))
    return [(offset, piece.strip()) for offset, piece in pieces if piece.strip(_TRAILING_MARKS + ".;")]
