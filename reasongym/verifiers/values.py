r"""A value as written at the start of a text: digits, number words, a math span, and what is written after it.

The sentence readers (:mod:`~reasongym.verifiers.sentences`) and the revision readers read a value here once
they know where it stands. A value is a number in digits (with a currency sign before it), a number in words
("twelve", "two hundred and five", "negative three", "third", "three quarters"), or a math span (``$...$``,
``**...**``, ``\(...\)``); it keeps the unit, multiplier or scale word written right after it ("24 m^2",
"5 dozen", "1.5 million") and may be followed by plain words in any script ("3/8 of the pizza", "7 です",
"12개입니다", "9'dur"). An operation word next to it is read ("5 squared" is 25) or the value is refused
("5 doubled"): grading the bare operand paid the operand.
"""

from __future__ import annotations

import re

from reasongym.verifiers.commitment import BARE_FILLER
from reasongym.verifiers.spans import NUMBER, unit_end

__all__ = ["MATH_OPENERS", "OPERATION_AFTER", "WORD_NUMBER", "bare_value", "leading_value", "short_value"]

_CARDINAL = (
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
    "hundred|thousand|million|billion"
)
_ORDINAL = (
    r"first|(?<!\b[Aa][ \t])second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
    "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth|fortieth|"
    "fiftieth|sixtieth|seventieth|eightieth|ninetieth|hundredth|thousandth"
)
_PARTS = "halves|half|quarters|quarter|thirds|fourths|fifths|sixths|sevenths|eighths|ninths|tenths"
WORD_NUMBER = re.compile(
    rf"(?<![\w-])(?:(?:negative|minus)[ \t]+)?(?:(?:{_CARDINAL}|{_ORDINAL})(?:(?:[ \t]+and[ \t]+|[ \t]+|-)"
    rf"(?:{_CARDINAL}|{_ORDINAL}|{_PARTS}))*|a[ \t]+(?:half|quarter|third)|infinity)(?![\w-])",
    re.IGNORECASE,
)
"""A number in words: "twelve", "two hundred and five", "negative three", "third", "three quarters",
"(negative) infinity"."""
_SCALE_AFTER = re.compile(r"[ \t]+(?:hundred|thousand|million|billion)\b", re.IGNORECASE)
_MONEY = re.compile(r"(?:\\?[$€£¥₹][ \t]*)?")
_WORDS_ONLY = re.compile(
    r"(?:(?:[ \t,;:.!?)\u3002\uff0c]|'(?=[^\W\d_])|(?=[\u3040-\u30ff\uac00-\ud7af]|[\u4e00-\u9fff](?<![十百千万亿])))"
    r"(?:[^\W\d_]|[ \t,;:'\"().!?\u3000-\u303f-])*)?"
)  # "2k" is no "2" followed by a word; "7 です", "12개입니다", "9'dur", "32 lápices": words after the value
MATH_OPENERS = (("**", "**"), ("$", "$"), ("\\(", "\\)"))
OPERATION_AFTER = re.compile(
    r"[ \t]*(?:squared|cubed|doubled|tripled|halved|factorial|times|plus|minus|divided|multiplied|"
    r"raised|to[ \t]+the[ \t]+power|percent[ \t]+of|less|more)\b",
    re.IGNORECASE,
)
_POWER_WORD = {"squared": "^2", "cubed": "^3"}


def _closing(text: str, opener: str, closer: str) -> int:
    """Where the span that ``text`` opens with ``opener`` closes (after the closer), or -1."""
    close = text.find(closer, len(opener))
    while close > 0 and closer == "$" and text[close - 1] == "\\":
        close = text.find(closer, close + 1)  # "$\$36$": an escaped dollar is money
    return -1 if close <= 0 else close + len(closer)


def leading_value(text: str) -> str | None:
    """The value that opens ``text`` when only plain words follow it ("3/8 of the pizza" gives "3/8").

    Args:
        text: What follows a verb or an answer phrase.

    Returns:
        The value with the unit written right after it, or None when ``text`` does not open with a
        value followed by plain words.
    """
    text = text.strip()
    for opener, closer in MATH_OPENERS:
        end = _closing(text, opener, closer) if text.startswith(opener) else -1
        if end != -1:  # an unclosed "$" is money: "$18 every day"
            unit = unit_end(text, end)
            if not _WORDS_ONLY.fullmatch(text, unit):
                return None
            inner = text[len(opener) : end - len(closer)]
            return text[:end] if unit == end else f"{inner}{text[end:unit]}"  # "**7 million** dollars"
    money = _MONEY.match(text)
    number = NUMBER.match(text, money.end()) if money else None
    if number is not None:
        scale = _SCALE_AFTER.match(text, number.end())
        if scale is not None:
            return text[: scale.end()] if _WORDS_ONLY.fullmatch(text, scale.end()) else None
        end = unit_end(text, number.end())
        operation = OPERATION_AFTER.match(text, number.end())
        if operation is not None:  # "5 squared" is 25: never the bare operand
            power = _POWER_WORD.get(operation.group(0).strip().lower())
            return (
                f"{text[: number.end()].strip()}{power}"
                if power and _WORDS_ONLY.fullmatch(text, operation.end())
                else None
            )
        return text[:end].strip() if _WORDS_ONLY.fullmatch(text, end) else None
    words = WORD_NUMBER.match(text)
    if words is not None and _WORDS_ONLY.fullmatch(text, words.end()):
        return words.group(0)
    return None


def short_value(clause: str) -> str | None:
    """A value with at most two words after it ("so 12 chairs", "なので、9 です"), or None."""
    value = leading_value(clause)
    return value if value is not None and len(clause[len(value) :].split()) <= 2 else None


def bare_value(sentence: str) -> str | None:
    """A sentence that is only a value, said without a verb: "Oops, 6.", "No wait, it's 6.", "six."."""
    rest = sentence[BARE_FILLER.match(sentence).end() :].rstrip(" \t.!*")
    value = leading_value(rest)
    return value if value is not None and rest[len(value) :].strip() == "" else None
