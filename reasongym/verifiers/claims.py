r"""What a completion claims in prose: a correction after its answer, its last sentence, its last number.

:func:`~reasongym.verifiers.extract.extract_math_answer` uses these where a box or an answer phrase
does not settle the answer. Rules:

1. **A correction after the answer wins.** When the text after the final box or answer phrase holds a
   revision ("wait", "actually", "oops", "hmm", "on second thought", "correction", "I made a
   mistake", "that's wrong", "let me recheck/recount/reconsider", a "No," or "No:") and, after it, a
   sentence states a
   value (:func:`~reasongym.verifiers.sentences.sentence_value`: "that gives 6 seatings", "so the
   count is 6"), that value is the answer: ``... $\boxed{24}$ ways. Wait, actually, rotations are the
   same, so divide by 4: that gives 6 seatings.`` answers 6. A revision that states no value ("Wait,
   let me double-check. Yes.") leaves the answer as it was.
2. **Without a box or phrase, a display block that ends the text** (``$$ ... $$``, ``\[ ... \]``),
   **else the last sentence's value** (questions that end the text, such as an
   echo of the problem's question, are no claims and are skipped), when the text ends with a finished
   sentence (a full stop, "!", "?", or closing math or bold; a bare number ending the text may be a
   fragment, so the last number decides there): "So the number of handshakes is **36**.", "The value of $f(-1)$ is $- 3$.", "so there are
   two hundred memberships." A last sentence that opens with "If" or "Suppose" and sets up its case
   with a number the completion has not used before (any number but its last, the result) is an aside ("If she pays with a $20 bill
   she gets $7.50 back."): the sentence before it is read instead (its value, else its last number).
   "If we ..." and "If I ..." continue the solution ("If we add 5, we get 17.") and are read.
3. **Else the last number** (:func:`last_number`), as written in digits or in words.

End-of-turn tokens that leak into text (``<|eot_id|>``, ``<|im_end|>``, ``</s>``) are read as line
breaks. Every function runs in time linear in its input: only the last :data:`CLAIM_CHARS` characters
are split into sentences, and no regex nests unbounded quantifiers.
"""

from __future__ import annotations

import json
import re

from reasongym.verifiers.math.units import lookup_unit
from reasongym.verifiers.sentences import WORD_NUMBER, labelled_value, leading_value, sentence_value
from reasongym.verifiers.spans import DECIMAL_COMMA, MAX_ANSWER_CHARS, NUMBER, mask_math, with_unit
from reasongym.verifiers.text import normalize_unicode

__all__ = [
    "BARE_FILLER",
    "CLAIM_CHARS",
    "END_TOKENS",
    "REVISION",
    "asked_part",
    "final_claim",
    "is_mention",
    "json_answer",
    "last_number",
    "revised_value",
    "without_questions",
]

CLAIM_CHARS = 2_000
"""Only this many characters at the end of a text are split into sentences."""
_TAIL_CHARS = 20_000
END_TOKENS = re.compile(r"<\|[A-Za-z0-9_]{1,40}\|>|</s>")
"""Special tokens that leak into decoded text; they end the sentence they follow."""
REVISION = re.compile(
    r"\b(?:wait|actually|oops|hmm+|hold on|correction|on second thought|scratch that|no(?=[,:;!])|"
    r"i made an? (?:mistake|error)|(?:that|this) (?:is|was|'s) (?:wrong|incorrect|not right)|i was wrong|"
    r"on (?:reflection|second look)|upon review|rethinking|reconsidering|"
    r"let me (?:re-?(?:check|count|compute|calculate|consider|do|examine|think)|correct))\b",
    re.IGNORECASE,
)
"""Words that revise an answer given before them ("wait", "actually", "oops", "No,", ...)."""
_SENTENCE_END = re.compile(r"(?<!\\)(?<!\bi\.e)(?<!\be\.g)(?:[.?;]|(?<!\d)!|!(?![ \t]*=))(?=\s|$)|\n")
_ASIDE = re.compile(
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
_MENTION = re.compile(
    r"\b(?:might|may|could|would)\s+(?:think|guess|say|assume|expect|conclude)\b|\btempting\b|\bnaive(?:ly)?\b"
    r"|\bat\s+first\s+(?:glance|sight)\b|\bmistakenly\b|\bwrongly\b|\bincorrectly\b|\bcommon\s+(?:mistake|error)\b"
    r"|\bsome\s+(?:people\s+)?(?:say|think|claim)\b|\bnot\s+that\b",
    re.IGNORECASE,
)  # an answer phrase after these words reports what someone might answer; it commits to nothing
_ANSWER_KEYS = ("answer", "final_answer", "result", "value", "solution")
_TOOL_CALL_END = re.compile(r"</(?:tool_call|function_call|tool_use)>$")
_MATH_TOKEN = r"(?:[^A-Za-z\\=\n]|\\[A-Za-z]+|(?<![A-Za-z])[A-Za-z](?![A-Za-z]))"
_RESULT_LINE = re.compile(rf"{_MATH_TOKEN}*[A-Za-z\\]{_MATH_TOKEN}*\\approx[ \t]*-?\d+(?:\.\d+)?[ \t]*")
"""A line of math (no words), then "≈" and a number: exact, then approximate (``π/2 ≈ 1.5708``), read whole."""
_ARITHMETIC = re.compile(r"[-+\d.,\s*/^()]*\d[-+\d.,\s*/^()]*[-+*/^][-+\d.,\s*/^()]*")
_CONTRAST = re.compile(r"\b(?:but|however|yet|instead)\b", re.IGNORECASE)
_MENTION_WINDOW = 80
_NEW_QUESTION = re.compile(
    r"^[ \t>]*(?:#{1,6}[ \t]*|\*\*)?(?:(?:question|problem|exercise|example)[ \t]*\d*[ \t]*[:.)]"
    r"|(?:problem|exercise|question)[ \t]+\d+\b|q\d+[ \t]*[.:)]"
    r"|#*[ \t]*(?:instruction|input)[ \t]*:?[ \t]*$|(?:user|human|student)[ \t]*:)",
    re.IGNORECASE | re.MULTILINE,
)
_CONCLUDED = re.compile(r"\\boxed|\banswer\b|####|</think>|\btherefore\b|\bso\b|\bthus\b", re.IGNORECASE)
_CLOCK_BEFORE = re.compile(r"(?<![\d:])\d{1,2}:$")
BARE_FILLER = re.compile(
    r"[\s,:;.!*-]*(?:(?:it'?s|it[ \t]+is|that'?s|that[ \t]+is|make[ \t]+(?:that|it)|i[ \t]+mean|rather|so|"
    r"the[ \t]+answer[ \t]+is|should[ \t]+be)[\s,:]+)*",
    re.IGNORECASE,
)
"""Words that may open a correction said without a verb ("it's", "make that", "I mean")."""


def _sentences(text: str) -> list[tuple[int, str]]:
    """The sentences of ``text`` (math kept whole) with their start offsets, empty ones dropped."""
    pieces, start = [], 0
    for end in _SENTENCE_END.finditer(mask_math(text)):
        pieces.append((start, text[start : end.end()]))
        start = end.end()
    pieces.append((start, text[start:]))
    return [(offset, piece.strip()) for offset, piece in pieces if piece.strip(_TRAILING_MARKS + ".;")]


def _numbers(text: str) -> set[str]:
    return {number.group(0).replace(",", "").lstrip("-") for number in NUMBER.finditer(text)}


def _is_aside(sentence: str, before: str) -> bool:
    """Whether a conditional sentence sets up a new case ("If she pays with a $20 bill ...").

    Its numbers before the last one (the result) hold one the completion has not used before.
    """
    if not _ASIDE.match(sentence):
        return False
    given = [number.group(0).replace(",", "").lstrip("-") for number in NUMBER.finditer(sentence)][:-1]
    return bool(set(given) - _numbers(before))


def without_questions(text: str) -> str:
    """``text`` without the questions that end it ("The total is 20. How many were left after 3 days?")."""
    kept = text.rstrip()
    for _ in range(_MAX_QUESTIONS):
        if not kept.endswith("?"):
            break
        starts = [found.end() for found in _SENTENCE_END.finditer(mask_math(kept[:-1]))]
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
    tail = without_questions(END_TOKENS.sub("\n", normalize_unicode(text[-CLAIM_CHARS:])))
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
    sentences = _sentences(tail)
    if not sentences:
        return None
    offset, last = sentences[-1]
    if len(sentences) > 1 and _is_aside(last, tail[:offset]):
        previous = sentences[-2][1]
        return sentence_value(previous) or last_number(previous)
    return sentence_value(last)


def asked_part(completion: str) -> str:
    """The completion up to a new question it writes after concluding ("... The answer is 6. Question: ...").

    A base model that keeps writing invents the next exercise and answers it; the answer to the asked
    question is the one before. A line that opens a new question ("Question:", "Q2.", "Problem 3",
    "Exercise", "### Instruction", a "User:" turn) ends the text for grading, once the text before it
    has concluded (a box, "answer", "so", "therefore", ``</think>``): a restated question that opens
    a solution is kept.
    """
    if _NEW_QUESTION.search(completion) is None:  # the common case, and the cheaper scan of the two
        return completion
    concluded = _CONCLUDED.search(completion)
    if concluded is None:
        return completion
    found = _NEW_QUESTION.search(completion, concluded.end())
    return completion if found is None else completion[: found.start()]


def _answer_field(found: object) -> object:
    """The answer field of a JSON object, also inside a tool call's "arguments" (an object or a JSON string)."""
    if not isinstance(found, dict):
        return None
    for key in _ANSWER_KEYS:
        if key in found:
            return found[key]
    arguments = found.get("arguments", found.get("parameters", found.get("input")))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    return _answer_field(arguments) if isinstance(arguments, dict) and arguments is not found else None


def json_answer(text: str) -> str | None:
    """The "answer" of a completion that ends with a JSON object (bare or in a code block), or None.

    ``{"answer": [1, 2, 3]}`` gives "1, 2, 3", ``{"reasoning": "...", "final_answer": 42}`` gives "42" (also
    the keys "result", "value", "solution"), and a tool call gives the answer in its arguments
    (``<tool_call>{"name": "final_answer", "arguments": {"value": "3/4"}}</tool_call>`` gives "3/4"). Only
    an object that ends the text is read, and only when it parses as JSON: a brace in prose is no object.
    """
    body = _TOOL_CALL_END.sub("", text.rstrip()).removesuffix("```").rstrip()
    start = body.rfind("\n{") + 1 if not body.startswith("{") else 0
    if not body.endswith("}") or len(body) - start > MAX_ANSWER_CHARS:
        return None
    try:
        found = json.loads(body[start:])
    except ValueError:
        return None
    value = _answer_field(found)
    if isinstance(value, list) and all(isinstance(item, int | float | str) for item in value):
        return ", ".join(str(item) for item in value)
    return str(value) if isinstance(value, int | float | str) and not isinstance(value, bool) else None


def is_mention(text: str, start: int) -> bool:
    """Whether the answer phrase at ``start`` reports what someone might answer ("One might think the answer is 12").

    Only the sentence that holds the phrase, at most 80 characters back, is read, so scanning every
    phrase of a megabyte of "####" stays linear.
    """
    window = max(0, start - _MENTION_WINDOW)
    sentence_start = max(window - 1, *(text.rfind(mark, window, start) for mark in ".!?\n"))
    mention = _MENTION.search(text, sentence_start + 1, start)
    # "C would be tempting, but ..., so the answer is D": after a contrast the sentence makes its own claim
    return mention is not None and _CONTRAST.search(text, mention.end(), start) is None


def revised_value(after: str) -> str | None:
    """The value a correction after the answer states (rule 1 of the module docstring), or None.

    Args:
        after: The text that follows the final box or answer phrase.

    Returns:
        The last value stated by a sentence from the revision on, or None when there is no
        revision or it states no value.
    """
    tail = END_TOKENS.sub("\n", normalize_unicode(after[:CLAIM_CHARS]))
    marker = REVISION.search(tail)
    if marker is None:
        return None
    revision = REVISION.sub(" ", tail[marker.start() :])  # "Hmm, no: ...": the markers are no negation
    for _, sentence in reversed(_sentences(revision)):
        value = sentence_value(sentence) or _bare_value(sentence)
        if value is not None:
            return value
    return None


def _bare_value(sentence: str) -> str | None:
    """A sentence that is only a value, said without a verb: "Oops, 6.", "No wait, it's 6.", "six."."""
    rest = sentence[BARE_FILLER.match(sentence).end() :].rstrip(" \t.!*")
    value = leading_value(rest)
    return value if value is not None and rest[len(value) :].strip() == "" else None


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
    tail = END_TOKENS.sub("\n", normalize_unicode(text[-_TAIL_CHARS:]))
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
    return answer


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
