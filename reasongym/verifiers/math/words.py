r"""Numbers written in words, read by the math grammar: "twelve", "negative three", "third", "3 over 4".

The lexer (:mod:`lexer`) turns each word into a token; :func:`join_number_words` then merges runs of
them into one number token. What is read:

- cardinals: "twelve", "forty-five", "two hundred and five", "one thousand", and a number in digits
  times a scale word ("1.5 million", "2 thousand");
- "negative three", "minus 3" (the lexer reads "negative" and "minus" as a minus sign);
- ordinals stand for their position: "third" is 3, "twenty-first" is 21, ``15th``, ``15^{\text{th}}``
  (the suffix is dropped by the lexer), ``\text{first}``;
- fractions: a cardinal before an ordinal or a part word is a fraction ("one third", "two-thirds",
  "three quarters", "one-quarter", "a half", "one and a half"); "half" alone is 1/2;
- "3 over 4", "three over four" and "1 in 6" (a chance) are fractions.

A word that names no number stays a word, and "second" stays the unit of time unless it stands alone
(then it is the ordinal 2). Number words side by side that English grammar does not join
("five five", "twenty twenty", "one million million", "nineteen ninety-nine") are no number: the answer
is refused, never summed. "a second" is a moment, not the ordinal.

Text answers: :func:`text_name` spells out the short names of weekdays and months ("Fri." is Friday).
"""

from __future__ import annotations

from reasongym.verifiers.math.nodes import Mul, Node, Num, Unparseable

__all__ = ["NUMBER_WORDS", "ORDINAL_WORDS", "PART_WORDS", "SIGN_WORDS", "join_number_words", "text_name"]


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {
    **{word: value for value, word in enumerate(_UNITS)},
    **{word: 10 * (k + 2) for k, word in enumerate(_TENS)},
    "hundred": 100,
    "thousand": 1000,
    "million": 10**6,
    "billion": 10**9,
}
"""Cardinal words and their values."""
_ORDINAL_UNITS = (
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
).split()
ORDINAL_WORDS = {
    **{word: value for value, word in enumerate(_ORDINAL_UNITS) if word != "second"},
    **{word[:-1] + "ieth": 10 * (k + 2) for k, word in enumerate(_TENS)},
    "hundredth": 100,
    "thousandth": 1000,
}
"""Ordinal words and the position they name ("second" is handled apart: it is also a unit)."""
PART_WORDS = {
    "half": 2,
    "halves": 2,
    "quarter": 4,
    "quarters": 4,
    **{word + "s": value for word, value in ORDINAL_WORDS.items() if value >= 3},
}
"""Plural denominators ("thirds", "quarters") and the two parts with their own names (half, quarter)."""
SIGN_WORDS = frozenset({"negative", "minus"})
"""Words the lexer reads as a minus sign."""
_SCALES = frozenset({100, 1000, 10**6, 10**9})


def _is(tokens: list, i: int, kind: str, value: object = None) -> bool:
    return i < len(tokens) and tokens[i].kind == kind and (value is None or tokens[i].value == value)


def _joins(total: int, current: int, last_scale: int, value: int) -> bool:
    """Whether the word worth ``value`` continues the number read so far (English number grammar).

    Why: "five five", "twenty twenty", "one million million" and "nineteen ninety-nine" are no one
    number; summing them paid 10 for "five five".
    """
    if value >= 1000:
        return value < last_scale and (current > 0 or total == 0)
    if value == 100:
        return current < 100 and current % 100 != 0 or current == 0 and total == 0
    rest = current % 100
    return rest == 0 or (rest >= 20 and rest % 10 == 0 and 0 < value < 10)


def _cardinal(tokens: list, i: int) -> tuple[int, int]:
    """Value of the run of cardinal words from ``i`` ("two hundred and five", "forty-five") and its end.

    Raises:
        Unparseable: when the words side by side do not form one number ("five five").
    """
    total = current = 0
    last_scale = 10**12
    start = i
    while i < len(tokens):
        if _is(tokens, i, "nword"):
            value = tokens[i].value
            if i > start and not _joins(total, current, last_scale, value):
                words = " ".join(
                    str(tokens[k].value) for k in range(start, i + 1) if tokens[k].kind == "nword"
                )
                raise Unparseable(f"the number words {words!r} do not form one number")
            if value == 100:
                current = max(current, 1) * 100
            elif value >= 1000:
                total += max(current, 1) * value
                current, last_scale = 0, value
            else:
                current += value
            i += 1
        elif _is(tokens, i, "op", "-") and _is(tokens, i + 1, "nword") and not tokens[i].spaced:
            i += 1
        elif _is(tokens, i, "sep", "and") and _is(tokens, i + 1, "nword") and (total or current >= 100):
            i += 1
        else:
            break
    return total + current, i


def _fraction(numerator: Node, denominator: int) -> Node:
    return Mul((numerator,), (Num(denominator),))


def _after_cardinal(tokens: list, i: int, value: int) -> tuple[Node, int]:
    """What follows a cardinal run: a compound ordinal (twenty-first), a fraction (two thirds), or nothing."""
    hyphen = int(_is(tokens, i, "op", "-") and not tokens[i].spaced)
    j = i + hyphen
    if _is(tokens, j, "ordinal") and value % 10 == 0 and 20 <= value < 100 and tokens[j].value < 10:
        return Num(value + tokens[j].value), j + 1  # "twenty-first" is 21
    if _is(tokens, j, "ordinal") and tokens[j].value >= 3 or _is(tokens, j, "part"):
        return _fraction(Num(value), int(tokens[j].value)), j + 1  # "one third", "three quarters"
    if _is(tokens, i, "sep", "and") and _is(tokens, i + 1, "sym", "a") and _is(tokens, i + 2, "part"):
        denominator = int(tokens[i + 2].value)
        return _fraction(Num(value * denominator + 1), denominator), i + 3  # "one and a half"
    return Num(value), i


def _over(tokens: list, i: int, numerator: Node) -> tuple[Node, int]:
    """A fraction written "3 over 4" or "1 in 6": a number, the word "over" (or "in") and a number."""
    written_in = _is(tokens, i, "sym", "i") and _is(tokens, i + 1, "sym", "n") and not tokens[i + 1].spaced
    if written_in:  # "1 in 6": one chance in six
        i += 1
    elif not (_is(tokens, i, "word") and str(tokens[i].value).lower() == "over"):
        return numerator, i
    if _is(tokens, i + 1, "num"):
        return Mul((numerator,), (tokens[i + 1].value,)), i + 2
    if _is(tokens, i + 1, "nword"):
        value, end = _cardinal(tokens, i + 1)
        return Mul((numerator,), (Num(value),)), end
    return numerator, i


def _number_at(tokens: list, i: int) -> tuple[Node, int] | None:
    """The number that starts at token ``i`` and where it ends, or None when none starts there."""
    tok = tokens[i]
    if tok.kind == "nword":
        value, end = _cardinal(tokens, i)
        return _after_cardinal(tokens, end, value)
    if tok.kind == "num" and _is(tokens, i + 1, "nword") and tokens[i + 1].value in _SCALES:
        return Mul((tok.value, Num(tokens[i + 1].value))), i + 2  # "1.5 million"
    if tok.kind == "ordinal":
        return Num(int(tok.value)), i + 1
    if tok.kind == "part":
        return _fraction(Num(1), int(tok.value)), i + 1  # "half"
    if tok.kind == "sym" and tok.value == "a" and _is(tokens, i + 1, "part"):
        return _fraction(Num(1), int(tokens[i + 1].value)), i + 2  # "a half", "a quarter"
    if tok.kind == "sym" and tok.value == "a" and _is(tokens, i + 1, "ordinal") and tokens[i + 1].value >= 3:
        return _fraction(Num(1), int(tokens[i + 1].value)), i + 2  # "a third"
    return None


def _alone(tokens: list, i: int) -> bool:
    """Whether token ``i`` stands alone in its item (no number before it, an item boundary after it)."""
    before_ok = i == 0 or tokens[i - 1].kind not in ("num", "nword")
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    after_ok = after is None or after.kind in ("end", "sep") or (after.kind == "op" and after.value in ",;)")
    return before_ok and after_ok


def join_number_words(tokens: list) -> list:
    """Merge number words (and "3 over 4") into single ``num`` tokens; other tokens pass through.

    Args:
        tokens: The lexer's tokens (``nword``, ``ordinal`` and ``part`` tokens among them).

    Returns:
        The tokens with each number in words replaced by one ``num`` token holding its node.
    """
    out: list = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "word" and str(tok.value).lower() == "second" and _alone(tokens, i):
            out.append(type(tok)("num", Num(2), tok.spaced))  # "second" alone is the ordinal
            i += 1
            continue
        found = _number_at(tokens, i)
        if found is None and tok.kind == "num":
            found = _over(tokens, i + 1, tok.value)
            found = None if found[1] == i + 1 else found
        elif found is not None and tok.kind in ("nword", "num"):
            found = _over(tokens, found[1], found[0])
        if found is None:
            out.append(tok)
            i += 1
            continue
        out.append(type(tok)("num", found[0], tok.spaced))
        i = found[1]
    return out


_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_MONTHS = "january february march april may june july august september october november december".split()
_ABBREVIATIONS = {
    **{name[:3]: name for name in _DAYS + _MONTHS},
    **{"tues": "tuesday", "thur": "thursday", "thurs": "thursday", "sept": "september"},
}
"""Short names of weekdays and months ("Fri." is Friday, "Sept" September): one name, two spellings."""


def text_name(text: str | None) -> str | None:
    """``text`` casefolded, a short weekday or month name spelled out ("Fri." -> "friday")."""
    if text is None:
        return None
    folded = text.casefold().rstrip(".")
    return _ABBREVIATIONS.get(folded, folded)
