r"""The value a sentence states: "There are 12 ways." states 12, "So x = 2 and y = -1." states both.

These read a sentence once it was chosen, after an answer phrase ("The answer is 42, not 24"), in an
``<answer>`` tag, or as a completion's last sentence (see :mod:`~reasongym.verifiers.claims`). What a
sentence states, in order:

0. After a label of one to three words and a colon ("In short: 30 km.", "Expanding: x**2 + 2*x + 1"), the
   rest is read as a sentence, else as a value with its unit, else as math when it holds no words.
   In a sentence that concludes (", so", ", therefore", ", thus", ", hence"), only the clause after the last
   such word is read: "There are 3 rows of 4, so the hall holds 12 chairs." states what its conclusion does.
1. A rejected alternative after the value is dropped: "42, not 24 as one might first guess" states 42
   (also "rather than 24", "instead of 24"); "not 24 but 42" and "not 24, it's 42" state 42. After an
   answer phrase, a value then a colon and a reason states the value ("The answer is 7: the quadratic has
   no real roots." answers 7).
2. "No (real) solutions" as what the sentence states ("There are no real solutions.", "The equation has
   no roots.", "No solution.") states the empty set, and "no solution except x = 2" (also "besides",
   "apart from", "other than") states x = 2; inside a noun phrase it states nothing ("The only case with
   no solution is k = 3." states k = 3). "All real numbers (except 0)" states that set
   (:mod:`~reasongym.verifiers.set_words`).
3. A sentence with a negation ("It cannot be 17", "not", "never", ``\ne``) or a bound ("at least 12",
   "more than 5", "between 10 and 12") states no value.
4. Several assignments or inequalities joined by "and", "or" or commas ("x = 2 and y = -1", "x = 2
   or x = -2", "x ≤ -1 or x ≥ 3") state all of them, as one list (a union); a last sentence that ends
   in one inequality ("So x ≤ 3.") states it. A restriction keeps its value ("x = 5 and x = -2, but
   only x = 5 is valid" states x = 5), and a remark in brackets that ends the sentence is dropped
   ("x = 5 (we reject x = -2 since a length is positive)").
5. Else the words after the last "is", "are", "was", "equals", "=", "gives", "get(s)", "becomes" or
   ``\in``: "The smallest $k$ is 17" states 17. A value followed by plain words keeps only the value
   and a unit written right after it: "3/8 of the pizza" is 3/8, "$18 every day" is $18, "two hundred
   memberships" is two hundred, "24 m^2 in all" is 24 m^2.
6. Else a value that ends the sentence in math or bold: "... is $- 3$", "... is **36**".

Numbers in words are values here ("twelve", "two hundred", "negative three", "third"); the math
grammar reads them (:mod:`~reasongym.verifiers.math.lexer`). Every regex is free of nested unbounded
quantifiers, and callers pass one sentence (at most :data:`~reasongym.verifiers.spans.MAX_ANSWER_CHARS`
characters), so each function is linear in its input.
"""

from __future__ import annotations

import re

from reasongym.verifiers.set_words import sets_in_words
from reasongym.verifiers.spans import NUMBER, currency_before, mask_math, with_unit
from reasongym.verifiers.values import MATH_OPENERS, OPERATION_AFTER, WORD_NUMBER, leading_value, short_value

__all__ = [
    "after_last_verb",
    "answer_in_sentence",
    "labelled_value",
    "sentence_value",
    "without_remarks",
]

_VALUE_START = re.compile(r"[-+\d.$\\(\[{]|\*\*")
_SENTENCE_START = re.compile(r"(?:[^\W\d_]{2,}[,:]?\s+\S+|[^\W\d_]\s+[^\W\d_]{2,})\s+\S")
_NEGATION = re.compile(r"\b(?:not|never|no|cannot)\b|n't\b|\\neq?\b|\\notin\b", re.IGNORECASE)
_SENTENCE_VERB = re.compile(
    r"(?:\s(?:is|are|was|were|equals|be|gives|give|get|gets|becomes|yields|go\s+with|going\s+with|pick|choose|"
    r"settle\s+on|commit\s+to|ist|sind|beträgt|est|sont|es|son|é|são|è|sono|равно|равен|равна)|=|\\in"
    r"|\bc['’]est)\s+"
    r"|(?:是|为|等于)\s*",
    re.IGNORECASE,
)  # also the copulas of the languages whose answer phrases are read ("ist", "est", "é", "равно", 是)
_REJECTED = re.compile(
    r"[ \t]*(?:,|;|--|\u2014|\()?[ \t]*(?:and[ \t]+)?(?:not|rather[ \t]+than|instead[ \t]+of|though|although|"
    r"even[ \t]+though|while|whereas)[ \t]+(?=\S)",
    re.IGNORECASE,
)
_BOUND = re.compile(
    r"\b(?:at\s+(?:least|most)|(?:more|less|fewer|greater|smaller|larger)\s+than|up\s+to|between)\b",
    re.IGNORECASE,
)
_NO_SOLUTION = re.compile(
    r"(?:^|\bthere[ \t]+(?:is|are|exists?)[ \t]+|\b(?:has|have|gives?|yields?)[ \t]+)"
    r"no[ \t]+(?:real[ \t]+)?(?:solutions?|roots?|zeros?)\b",
    re.IGNORECASE,
)  # the sentence's predicate: "There are no real solutions", "No solution", "The equation has no roots"
_EXCEPTION = re.compile(
    r"[ \t]*,?[ \t]*(?:except|besides|apart[ \t]+from|other[ \t]+than|but)(?:[ \t]+for)?\b[ \t]*",
    re.IGNORECASE,
)
_NOT_BUT = re.compile(
    r"[ \t*]*(?:(?:it|that|this)(?:'s|[ \t]+is)[ \t]+|the[ \t]+answer[ \t]+is[ \t]+)?not[ \t]+[^,;.!?\n]{1,60}?"
    r"(?:,?[ \t]+but[ \t]+(?:(?:it|that)(?:'s|[ \t]+is)[ \t]+|rather[ \t]+)?|[,;][ \t]*(?:it|that)(?:'s|[ \t]+is)[ \t]+)",
    re.IGNORECASE,
)  # "Not 24 but 42.", "It's not 24, it's 42.": the value after the contrast is the one stated
_IS_THE_ANSWER = re.compile(
    r"[ \t]+(?:is|are)[ \t]+(?:the|our)[ \t]+(?:final[ \t]+)?(?:solution(?:[ \t]+set)?|answer|range|domain)s?\b",
    re.IGNORECASE,
)
_LEADING_CONNECTIVE = re.compile(r"[ \t*]*(?:(?:therefore|thus|so|hence|finally)[ \t,]+)?", re.IGNORECASE)
_VALUE_THEN_REASON = re.compile(r"([^:]{1,40}?)[ \t]*:[ \t]+(?=[A-Za-z])")
_ASSIGNMENT = re.compile(
    r"(?<![\w\\])[A-Za-z](?:_\{?\w{1,3}\}?)?[ \t]*(?:=|<|>|\\(?:in|le|leq|ge|geq|lt|gt)(?![A-Za-z]))"
)
_RELATION_END = re.compile(
    r"(?:(?<![\w\\.])-?\d+(?:\.\d+)?[ \t]*(?:<|>|\\(?:le|leq|ge|geq|lt|gt)(?![A-Za-z]))[ \t]*)?"  # "0 < "
    r"(?<![\w\\])[A-Za-z](?:_\{?\w{1,3}\}?)?[ \t]*(?:<|>|\\(?:le|leq|ge|geq|lt|gt)(?![A-Za-z]))"
    r"(?:[^A-Za-z<>=\\]|\\[A-Za-z]+|(?<![A-Za-z])[A-Za-z](?![A-Za-z]))*$"  # math to the end, no words
)
_REMARK = re.compile(r"\([^()]*[A-Za-z]{2,}[ \t]+[A-Za-z]{2,}[^()]*\)")
_REASON = re.compile(
    r"[ \t]*(?:,|;|--|\u2014)?[ \t]*\(?[ \t]*(?:because|since|given[ \t]+that|due[ \t]+to|as[ \t]+shown|"
    r"which[ \t]+(?:is|gives|means|checks)|check(?:ing)?:|(?:attained|achieved|reached|obtained|occurring)"
    r"[ \t]+(?:at|when|for|by)|which[ \t]+occurs[ \t]+(?:at|when))(?![\w-])"
    r"|[ \t]*,[ \t]*(?:when|where|at[ \t]+which|for[ \t]+which)(?![\w-])",
    re.IGNORECASE,
)  # the value is what the phrase names; a reason or a condition after it ("3, attained at x = 5") is not
_HEDGE_REMARK = re.compile(
    r"\([ \t]*(?:or|maybe|perhaps|possibly|alternatively|otherwise)\b[^()]*\d", re.IGNORECASE
)  # "7 (or 8 if we count the endpoint)" offers a second value: a hedge, kept for the grader to refuse
_ONLY = re.compile(r"\bbut[ \t]+only[ \t]+", re.IGNORECASE)
_LABEL_COLON = re.compile(r"[ \t*#>-]*[^\W\d_][\w';-]*(?:[ \t]+[^\W\d_][\w';-]*){0,2}[ \t]*:[ \t]+(?=\S)")
_MATH_ONLY = re.compile(r"(?:[^A-Za-z\\]|\\[A-Za-z]+|(?<![A-Za-z])[A-Za-z](?![A-Za-z]))+")
_NUMBER_ONLY = re.compile(r"[-+]?[\d,.]+")
_CONCLUSION = re.compile(
    r"[,;][ \t]*(?:(?:and[ \t]+)?(?:so|therefore|thus|hence)|donc|alors|entonces|por[ \t]+lo[ \t]+tanto|portanto|"
    r"quindi|dunque|daher|deshalb|somit|also(?=[ \t]+(?:ist|sind|beträgt|gilt))|así[ \t]+que|por[ \t]+eso|"
    r"dolayısıyla|поэтому|итак|значит)\b[ \t,]*"
    r"|[,;，、]?[ \t]*(?:所以|因此|因而|なので|ので|したがって|따라서|그러므로)[ \t,，、]*",
    re.IGNORECASE,
)  # also the conclusions of the languages whose answer phrases are read ("donc", "also ist", "поэтому", 所以)
_KEPT_END = re.compile(r"[ \t]+(?:is|are|works?|fits?|satisfies|holds?)\b", re.IGNORECASE)
_JOINER_END = re.compile(r"(?:,|;|\band|\bor|\\text\{[ \t]*(?:and|or)[ \t]*\})[ \t]*$", re.IGNORECASE)
_JOINED_BEFORE = re.compile(r"(?:[-+*/^=,]|\bor|\band)[ \t]*$", re.IGNORECASE)
_DELIMITER = re.compile(r"(?<!\\)\$|\\[()]")
_OPERATION_BEFORE = re.compile(
    r"\b(?:root|square|cube|half|twice|double|triple|thrice|sum|product|difference|quotient|factorial|"
    r"log(?:arithm)?|power|reciprocal|inverse|percent|times|plus|minus)[ \t]+(?:of[ \t]+)?$",
    re.IGNORECASE,
)


def _drop_reason(answer: str) -> str:
    """The answer without the reason given after its value ("8 (since $2^3 = 8$)", "x = 4, because 2x = 8")."""
    for found in _REASON.finditer(mask_math(answer)):
        before = answer[: found.start()].strip()
        if before and (before[-1].isdigit() or before[-1] in "$}*%)" or leading_value(before) is not None):
            return before
    return answer


def _drop_rejected(answer: str) -> str:
    """The answer without a rejected alternative after its value ("42, not 24 as one might guess")."""
    for found in _REJECTED.finditer(mask_math(answer)):
        before = answer[: found.start()].strip()
        if not before or _NEGATION.search(before):
            return answer
        if before[-1].isdigit() or before[-1] in "$}*%)" or leading_value(before) is not None:
            return before
    return answer


def _assignments(sentence: str) -> str | None:
    """Two or more assignments joined by and/or/commas ("x = 2 and y = -1"), or None."""
    text = _DELIMITER.sub(" ", sentence).strip().rstrip(".")
    starts = list(_ASSIGNMENT.finditer(text))
    if len(starts) < 2:
        return None
    for previous, following in zip(starts, starts[1:], strict=False):
        between = text[previous.end() : following.start()]
        joiner = _JOINER_END.search(between)
        if joiner is None or not between[: joiner.start()].strip():
            return None
    return text[starts[0].start() :].strip()


def after_last_verb(sentence: str) -> str | None:
    """The words after the sentence's last verb ("is", "are", "=", "gives", ...), or None."""
    verbs = list(_SENTENCE_VERB.finditer(mask_math(sentence)))  # "is", not the "=" of "$y = 2x$"
    if not verbs:
        return None
    rest = sentence[verbs[-1].end() :].strip().rstrip(".!?").strip()
    return rest or None


def answer_in_sentence(answer: str) -> str:
    """The value an answer phrase's sentence states ("The smallest $k$ is 17" gives "17").

    Args:
        answer: The text after an answer phrase (or inside an ``<answer>`` tag), cleaned.

    Returns:
        The value it states (rules 1-5 of the module docstring); a sentence with a negation, or text
        in which no rule finds a value, comes back unchanged for the grader to read (or reject).
    """
    answer = _drop_rejected(without_remarks(_drop_reason(sets_in_words(answer))))
    contrast = _NOT_BUT.match(answer)
    if contrast is not None:
        return answer_in_sentence(answer[contrast.end() :])
    subject = _subject_answer(answer)
    if subject is not None:
        return subject
    reasoned = _VALUE_THEN_REASON.match(answer)
    if reasoned is not None and leading_value(reasoned.group(1)) == reasoned.group(1).strip():
        return reasoned.group(1).strip()  # "7: the quadratic has no real roots" answers 7, then says why
    no_solution = _no_solution(answer)
    if no_solution is not None:
        return no_solution
    only = _only_valid(answer)
    if only is not None:
        return only
    if not _SENTENCE_START.match(answer):
        return leading_value(answer) or answer  # "3/8 of the pizza"
    if _NEGATION.search(answer):
        return answer  # "It cannot be 17" states no value
    assignments = _assignments(answer)
    if assignments is not None:
        return assignments
    rest = after_last_verb(answer)
    if rest is not None:
        return leading_value(rest) or rest  # "between 3 and 4" stays, and is no value
    numbers = list(NUMBER.finditer(answer))
    if len(numbers) == 1 and not _BOUND.search(answer) and not _operated(answer, numbers[0]):
        return currency_before(answer, numbers[0].start()) + with_unit(
            answer, numbers[0]
        )  # "at least 12" states none
    return answer


def _subject_answer(sentence: str) -> str | None:
    """The math that a sentence names as its answer ("Therefore $x >= 5$ is the solution."), or None."""
    found = _IS_THE_ANSWER.search(mask_math(sentence))
    if found is None:
        return None
    subject = sentence[_LEADING_CONNECTIVE.match(sentence).end() : found.start()].strip()
    inner = (
        subject[1:-1] if subject.startswith("$") and subject.endswith("$") and len(subject) > 2 else subject
    )
    return inner.strip() if inner and _MATH_ONLY.fullmatch(inner) and "$" not in inner else None


def _no_solution(sentence: str) -> str | None:
    """The empty set for "there are no (real) solutions", the exception for "no solution except x = 2", or None.

    Only "no solution" as what the sentence states counts: "The only case with no solution is k = 3."
    states k = 3.
    """
    found = _NO_SOLUTION.search(sentence)
    if found is None:
        return None
    exception = _EXCEPTION.match(sentence, found.end())
    if exception is None:
        return "\\emptyset"
    value = sentence[exception.end() :].strip().rstrip(".!")
    return value or None


def _operated(text: str, number: re.Match[str]) -> bool:
    """Whether an operation word stands next to the number ("half of 10", "5 doubled"): no bare value."""
    return bool(
        _OPERATION_BEFORE.search(text, 0, number.start()) or OPERATION_AFTER.match(text, number.end())
    )


def without_remarks(sentence: str) -> str:
    """The sentence without a remark in brackets that ends it ("x = 5 (we reject x = -2 ...).")."""
    body = sentence.rstrip(" \t.!?")
    if body.endswith(")"):
        start = body.rfind("(")
        if start > 0 and _REMARK.fullmatch(body, start) and not _HEDGE_REMARK.match(body, start):
            return body[:start].rstrip() + sentence[len(body) :]
    return sentence


def _only_valid(answer: str) -> str | None:
    """The value a restriction keeps ("x = 5 and x = -2, but only x = 5 is valid" states x = 5), or None."""
    only = _ONLY.search(answer)
    if only is None:
        return None
    kept = _KEPT_END.search(answer, only.end())
    return answer[only.end() : kept.start()].strip() if kept else None


def labelled_value(line: str) -> str | None:
    """The value after a label of one to three words and a colon ("In short: 30 km", "Expanding: x**2 + 1").

    Returns:
        The rest read as a sentence, else as a value with its unit, else as math when it holds no words;
        None when ``line`` has no such label or nothing after it is a value.
    """
    label = _LABEL_COLON.match(line)
    if label is None:
        return None
    rest = line[label.end() :].strip().rstrip(".!?").rstrip()
    return sentence_value(rest) or leading_value(rest) or (rest if _MATH_ONLY.fullmatch(rest) else None)


def _last_conclusion(sentence: str) -> str | None:
    """The clause after the sentence's last ", so" / ", therefore" / ", thus" / ", hence", or None."""
    found = None
    for found in _CONCLUSION.finditer(mask_math(sentence)):  # noqa: B007 - the last one decides
        pass
    return sentence[found.end() :] if found is not None and sentence[found.end() :].strip() else None


def sentence_value(sentence: str) -> str | None:
    """The value a completion's final sentence states, or None (rules 1-6 of the module docstring).

    Stricter than :func:`answer_in_sentence`: no answer phrase vouches for the sentence, so only a
    value in one of the listed places counts; anything else is left to the last-number reading.

    Args:
        sentence: One sentence, without its final full stop or with it.

    Returns:
        The value, or None.
    """
    sentence = _drop_rejected(without_remarks(_drop_reason(sets_in_words(sentence.strip()))))
    contrast = _NOT_BUT.match(sentence)
    if contrast is not None:
        rest = sentence[contrast.end() :]
        return sentence_value(rest) or leading_value(rest.rstrip(" \t.!?"))
    reasoned = _VALUE_THEN_REASON.match(sentence)
    if reasoned is not None and leading_value(reasoned.group(1)) == reasoned.group(1).strip():
        return reasoned.group(1).strip()  # "18: the stall fee comes off." states 18
    subject = _subject_answer(sentence)
    if subject is not None and not _NUMBER_ONLY.fullmatch(subject):
        return subject  # "$x \\geq 5$ is the solution."; a bare "12 is the answer." is left to the phrases
    conclusion = _last_conclusion(sentence)
    if conclusion is not None:  # "There are 3 rows of 4, so the hall holds 12.": the claim is the last clause
        return sentence_value(conclusion) or short_value(conclusion.rstrip(" \t.!?\u3002"))
    if _LABEL_COLON.match(sentence):
        return labelled_value(sentence)
    no_solution = _no_solution(sentence)
    if no_solution is not None:
        return no_solution
    only = _only_valid(sentence)
    if only is not None:
        return only
    if sentence.startswith("\\mathbb{R}"):
        return sentence.rstrip(" \t.!?")  # "All real numbers except 0.": a set in words, nothing else
    if _NEGATION.search(sentence) or _BOUND.search(sentence):
        return None
    assignments = _assignments(sentence)
    if assignments is not None:
        return assignments
    relation = _RELATION_END.search(_DELIMITER.sub(" ", sentence).rstrip(" \t.!?"))
    if relation is not None:
        return relation.group(0).strip()  # "So x ≤ 3." states the set x ≤ 3
    rest = after_last_verb(sentence)
    if rest is not None:
        value = leading_value(rest)
        if value is not None:
            return value
        if _VALUE_START.match(rest) or WORD_NUMBER.match(rest):
            return rest
    body = sentence.rstrip(" \t.!?")
    for opener, closer in MATH_OPENERS:
        if body.endswith(closer):
            start = body.rfind(opener, 0, len(body) - len(closer))
            joined = _JOINED_BEFORE.search(body, 0, max(start, 0))  # "$1$ or $2$": a hedge, not a value
            if start != -1 and start + len(opener) < len(body) - len(closer) and joined is None:
                return body[start:]
    return None
