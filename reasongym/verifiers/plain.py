r"""Claims made in plain prose, read when a completion has no box, tag or answer phrase (math kinds).

These are the weakest claims of the claim stage (:mod:`~reasongym.verifiers.claims`); the math reader
(:mod:`~reasongym.verifiers.extract`) reads them in this order:

1. **A display block that ends the text** (``$$ ... $$``, ``\[ ... \]``), **else the last sentence's
   value** (questions that end the text, such as an echo of the problem's question, are no claims and are
   skipped), when the text ends with a finished sentence (a full stop, "!", "?", or closing math or bold;
   a bare number ending the text may be a fragment, so the last number decides there): "So the number of
   handshakes is **36**.", "The value of $f(-1)$ is $- 3$.", "so there are two hundred memberships." A
   last sentence that is an aside is skipped and the sentence before it read instead (its value, else its
   last number): one that opens with "If" or "Suppose" and sets up its case with a number the completion
   has not used before ("If she pays with a $20 bill she gets $7.50 back."; "If we ..." and "If I ..."
   continue the solution and are read), and one that gives an approximation, a conversion or a check of
   the answer (:data:`~reasongym.verifiers.commitment.ASIDES`: "That is about 16,7%.").
2. **Else the last number** (:func:`last_number`), as written in digits or in words.

Every function runs in time linear in its input: only the last :data:`CLAIM_CHARS` characters are split
into sentences, and no regex nests unbounded quantifiers.
"""

from __future__ import annotations

import re

from reasongym.verifiers.commitment import CLAIM_CHARS, is_aside
from reasongym.verifiers.math.units import lookup_unit
from reasongym.verifiers.mentions import MENTION
from reasongym.verifiers.segment import SPECIAL_TOKEN
from reasongym.verifiers.sentences import labelled_value, sentence_value
from reasongym.verifiers.spans import (
    DECIMAL_COMMA,
    MAX_ANSWER_CHARS,
    NUMBER,
    SENTENCE_BREAK,
    currency_before,
    mask_math,
    split_sentences,
    with_unit,
)
from reasongym.verifiers.text import normalize_unicode
from reasongym.verifiers.values import WORD_NUMBER

__all__ = ["final_claim", "last_number", "without_mentions", "without_questions"]

_TAIL_CHARS = 20_000
_CONDITIONAL = re.compile(
    r"[\s*>_-]*(?:but[ \t]+|and[ \t]+)?(?:if|suppose|assuming)\b(?![ \t]+(?:we|I)\b)", re.IGNORECASE
)  # "If we add 5, we get 17." continues the solution: no aside
_FINISHED = frozenset(".!?)]}$%'\"")
_SENTENCE_CLOSERS = (".", "!", "?", "$", "**", ")", "]")
_TRAILING_MARKS = " \t\n*`_"
_EXPRESSION_BEFORE = re.compile(r"(?:[-+*/^]|\\times|\\cdot|\\div|\bor)[ \t$]*$")
_BOLD_BEFORE = re.compile(r"(?:^|[\s|:(>])\*\*$")
_EXPRESSION_AFTER = re.compile(r"[ \t]*(?:[-+*/^]|\\times|\\cdot|\\div)[ \t]*(?:[\d(\\{]|$)")
_NEGATED_BEFORE = re.compile(
    r"(?:\\neq?|\\not|\bnot(?:[ \t]+(?:be|equal[ \t]+to))?|\bcannot[ \t]+be|\bisn't|\baren't|\bnever)[ \t$]*$",
    re.IGNORECASE,
)
_BOUND_BEFORE = re.compile(
    r"\b(?:at[ \t]+(?:least|most)|(?:more|less|fewer|greater|smaller|larger)[ \t]+than|up[ \t]+to)[ \t$]*$",
    re.IGNORECASE,
)
_MEMBER_BEFORE = re.compile(r",[ \t]*$")
_MEMBER_AFTER = re.compile(r"[ \t]*(?:\\right)?[ \t]*[)\]]")
_FACTOR_AFTER = re.compile(
    r"(?!(?:st|nd|rd|th)(?![A-Za-z]))[A-Za-z(]|[ \t]*\\(?:pi|sqrt|frac|dfrac|cdot|times)(?![A-Za-z])"
)  # "3rd" is an ordinal, "16x" and "16\pi" a coefficient
_MAX_WORDS_AFTER = 3
_MAX_QUESTIONS = 3
_UNIT_WORD = re.compile(r"[A-Za-z]+$")
_QUANTITY_BEFORE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[ \t]*([A-Za-z]{1,12})[ \t]*,?[ \t]*(?:and[ \t]+)?$")
_AT_END = re.compile(r"[ \t*]*[.!?][ \t*]*$")
_ONE = re.compile(r"one", re.IGNORECASE)
_MATH_TOKEN = r"(?:[^A-Za-z\\=\n]|\\[A-Za-z]+|(?<![A-Za-z])[A-Za-z](?![A-Za-z]))"
_RESULT_LINE = re.compile(rf"{_MATH_TOKEN}*[A-Za-z\\]{_MATH_TOKEN}*\\approx[ \t]*-?\d+(?:\.\d+)?[ \t]*")
"""A line of math (no words), then "≈" and a number: exact, then approximate (``π/2 ≈ 1.5708``), read whole."""
_ARITHMETIC = re.compile(r"[-+\d.,\s*/^()]*\d[-+\d.,\s*/^()]*[-+*/^][-+\d.,\s*/^()]*")
_CONTRAST = re.compile(r"\b(?:but|however|yet|instead)\b", re.IGNORECASE)
_CLOCK_BEFORE = re.compile(r"(?<![\d:])\d{1,2}:$")
_NEGATED_WORDS = re.compile(
    r"\b(?:not|never|no|cannot|at\s+least|at\s+most|more\s+than|less\s+than)\b|n't\b", re.I
)
_ONE_OR_ORDINAL = re.compile(
    r"one|.*(?:first|second|third|th)", re.IGNORECASE
)  # ordinals end the text or say nothing
_REFERRING_BEFORE = re.compile(
    r"\b(?:the|these|those|both|all|of|between|among|in|on|at|for|with|by|from|each|every)[ \t]+$",
    re.IGNORECASE,
)
_ORDINAL_STEP = re.compile(r"\b(?:first|second|third|next|then|step)\b[ \t,]", re.IGNORECASE)


def _numbers(text: str) -> set[str]:
    return {number.group(0).replace(",", "").lstrip("-") for number in NUMBER.finditer(text)}


def _is_aside(sentence: str, before: str) -> bool:
    """Whether a conditional sentence sets up a new case ("If she pays with a $20 bill ...").

    Its numbers before the last one (the result) hold one the completion has not used before.
    """
    if not _CONDITIONAL.match(sentence):
        return False
    given = [number.group(0).replace(",", "").lstrip("-") for number in NUMBER.finditer(sentence)][:-1]
    return bool(set(given) - _numbers(before))


def without_questions(text: str) -> str:
    """``text`` without the questions that end it ("The total is 20. How many were left after 3 days?")."""
    kept = text.rstrip()
    for _ in range(_MAX_QUESTIONS):
        if not kept.endswith("?"):
            break
        starts = [found.end() for found in SENTENCE_BREAK.finditer(mask_math(kept[:-1]))]
        kept = kept[: starts[-1]].rstrip() if starts else ""
    return kept


def _display_at_end(text: str) -> str | None:
    r"""The content of a display block (``$$ ... $$``, ``\[ ... \]``) that ends the text, or None."""
    body = text.rstrip()
    for opener, closer in (("$$", "$$"), ("\\[", "\\]")):
        if body.endswith(closer):
            start = body.rfind(opener, 0, len(body) - len(closer))
            content = body[start + len(opener) : len(body) - len(closer)].strip() if start != -1 else ""
            if content and "$$" not in content and len(content) <= MAX_ANSWER_CHARS:
                return content
    return None


def final_claim(text: str) -> str | None:
    """The value the last sentence of ``text`` states (rule 2 of the module docstring), or None.

    Args:
        text: A completion (or the part of it that is read), with no box and no answer phrase.

    Returns:
        The value as written, or None when the text is cut off mid-sentence or its last sentence
        states no value.
    """
    tail = without_questions(SPECIAL_TOKEN.sub("\n", normalize_unicode(text[-CLAIM_CHARS:])))
    if not tail.rstrip(" \t\n`_").endswith(_SENTENCE_CLOSERS):
        line = tail.rstrip().rsplit("\n", 1)[-1].strip(" \t*$")
        if _RESULT_LINE.fullmatch(line):
            return line  # "π/2 ≈ 1.5708": exact, then approximate
        value = labelled_value(line)
        rest = line[line.find(":") + 1 :].split()
        if value is None or _ARITHMETIC.fullmatch(value) or len(rest) > len(value.split()) + 1:
            return None  # cut off: "Total: 1 + 1 + 1" before its "= 3", "Reason: 18 flamingos were added to"
        return value  # "Expanding: x**2 + 2*x + 1", "In short: 30 km": a labelled value is whole
    display = _display_at_end(tail)
    if display is not None:
        return display  # "So the matrix is\n$$\begin{pmatrix}1&0\\0&1\end{pmatrix}$$"
    sentences = split_sentences(tail)
    if not sentences:
        return None
    offset, last = sentences[-1]
    if _is_mention_sentence(last):  # "Some would say the answer is 12.": a mention, never the claim
        return final_claim(tail[:offset]) if offset > 0 else None
    if len(sentences) > 1 and (_is_aside(last, tail[:offset]) or is_aside(last)):
        previous = sentences[-2][1]
        return sentence_value(previous) or last_number(previous)
    return sentence_value(last) or _only_number_in_words(last)


def without_mentions(text: str) -> str:
    """``text`` without the sentences that end it by reporting what someone might answer ("One might think ...")."""
    kept = text.rstrip()
    for _ in range(_MAX_QUESTIONS):
        sentences = split_sentences(kept[-CLAIM_CHARS:])
        if not sentences or not _is_mention_sentence(sentences[-1][1]):
            break
        kept = kept[: len(kept) - min(len(kept), CLAIM_CHARS) + sentences[-1][0]].rstrip()
    return kept


def _is_mention_sentence(sentence: str) -> bool:
    """Whether a sentence reports what someone might answer (a mention row of the claim stage) without contrast."""
    mention = MENTION.search(sentence)
    return mention is not None and _CONTRAST.search(sentence, mention.end()) is None


def _only_number_in_words(sentence: str) -> str | None:
    """The one number of a sentence when it is written in words ("... sold forty-five cakes that day.")."""
    if NUMBER.search(sentence) or _NEGATED_WORDS.search(sentence):
        return None
    words = [
        found for found in WORD_NUMBER.finditer(sentence) if not _ONE_OR_ORDINAL.fullmatch(found.group(0))
    ]
    if len(words) != 1 or _ORDINAL_STEP.search(sentence):
        return None
    referring = _REFERRING_BEFORE.search(sentence, max(0, words[0].start() - 12), words[0].start())
    return None if referring else words[0].group(0)  # "between the two plans" names things, not the answer


def _word_number(tail: str, after: int) -> re.Match[str] | None:
    """The last number in words after position ``after``, if it may be an answer (see last_number)."""
    last = None
    for found in WORD_NUMBER.finditer(tail, after):
        if _ONE.fullmatch(found.group(0)):
            continue  # "the one on the left", "one of them": mostly a pronoun
        if not _AT_END.match(tail, found.end()):
            continue  # "into two groups", "the third step", "First, ...": words count only ending the text
        last = found
    return last


def last_number(text: str) -> str | None:
    r"""Return the last number in the last 20,000 characters of ``text``, with its unit.

    Numbers are integers (with an optional minus sign), thousands groups ("1,080"), decimals,
    simple fractions ("3/4"), mixed numbers ("2 1/2"), ``\frac{3}{4}`` and numbers in words
    ("... hold twelve.", "She finished third."; only when they end the text with a full stop, and never
    a lone "one", mostly a pronoun); digits glued to letters ("x2") or in an exponent or
    subscript do not count. A unit word right after the number is kept ("24 m^2"). There is no
    answer when the number is only a fragment: it ends a longer arithmetic expression ("5 + 3") or
    a hedge ("3 or 4"), follows a negation ("x cannot be 3", ``x \ne 3``) or a bound ("at least 12"),
    is the last member of a pair or interval ("(2,3)"), or the text was cut off
    mid-sentence well after it ("Step 16: Determine the final depth of").

    Args:
        text: Any text.

    Returns:
        The number as written (with its unit), or None when there is none.

    Example:
        >>> last_number("3 apples and 1,080 pears cost -2.5 dollars, x2")
        '-2.5 dollars'
        >>> last_number("The area is 24 m^2.")
        '24 m^2'
        >>> last_number("so the total is 1 + 1 + 1") is None
        True
    """
    tail = SPECIAL_TOKEN.sub("\n", normalize_unicode(text[-_TAIL_CHARS:]))
    last = None
    for number in NUMBER.finditer(tail):
        if tail[max(0, number.start() - 2) : number.start()] not in ("^{", "_{"):  # x^{2} is no number
            last = number
    words = _word_number(tail, last.end() if last is not None else 0)
    if words is not None:
        last = words
    if last is None:
        return None
    before = tail[max(0, last.start() - 12) : last.start()]  # "... + 1" or "3 or 4": no answer
    expression = _EXPRESSION_BEFORE.search(before) and not _BOLD_BEFORE.search(before)  # "**42**" is bold
    if expression or _EXPRESSION_AFTER.match(tail, last.end()):
        return None
    words_before = tail[max(0, last.start() - 20) : last.start()]
    if _NEGATED_BEFORE.search(words_before) or _BOUND_BEFORE.search(words_before):
        return None  # "x cannot be 3", "x \ne 3": a value ruled out; "at least 12": a bound
    if _MEMBER_BEFORE.search(before) and _MEMBER_AFTER.match(tail, last.end()):
        return None  # "(2,3)": a member of a pair or an interval
    answer = last.group(0) if last is words else with_unit(tail, last)
    end = last.start() + len(answer)
    if last is not words and DECIMAL_COMMA.fullmatch(last.group(0)):
        answer = DECIMAL_COMMA.sub(r"\1.\2", answer, count=1)  # "1,5" is 1.5, never the 5 after a comma
    clock = _CLOCK_BEFORE.search(tail, max(0, last.start() - 3), last.start())
    if clock is not None and last is not words:  # "4:15": the time, not its minutes
        answer = tail[clock.start() : end]
    answer = _compound_before(tail, last.start(), answer)
    if _FACTOR_AFTER.match(tail, end) or _cut_off_after(tail, end):
        return None  # "16\pi", "16x": the number is a coefficient, not the answer
    return currency_before(tail, last.start()) + answer


def _compound_before(tail: str, start: int, answer: str) -> str:
    """The answer with a quantity of the same kind written right before it ("2 hours 30 minutes")."""
    unit = _UNIT_WORD.search(answer)
    before = _QUANTITY_BEFORE.search(tail, max(0, start - 40), start)
    if unit is None or before is None:
        return answer
    first, last = lookup_unit(before.group(1)), lookup_unit(unit.group(0))
    if first is None or last is None or first.dims != last.dims or first == last:
        return answer
    return tail[before.start() : start] + answer


def _cut_off_after(text: str, end: int) -> bool:
    """Whether the text stops mid-sentence well after the number (and unit) ending at ``end``.

    A completion cut off by the length limit ("Step 16: Determine the final depth of") must not be
    rewarded for a number that happens to stand before the cut (the step number). Text that ends
    with a sentence mark, a bracket, ``$`` or a number is finished; so is a short tail of words
    after the number on its line ("19 in all").
    """
    ending = text.rstrip(_TRAILING_MARKS)
    if not ending or ending[-1] in _FINISHED or ending[-1].isdigit():
        return False
    after = text[end:].strip()
    return "\n" in after or len(after.split()) > _MAX_WORDS_AFTER
