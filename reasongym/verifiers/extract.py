r"""The math reader: the final answer of a completion, through the commitment stages.

:func:`extract_math_answer` runs the stages of :mod:`~reasongym.verifiers.pipeline` with the math kind's
readings (the ``integer`` kind reads the same way):

1. **Segment** (:mod:`~reasongym.verifiers.segment`): a new turn or question ends the completion; after a
   ``</think>``, the text after it first.
2. **The decisive claim** (:mod:`~reasongym.verifiers.claims`): the last complete box (empty boxes are no
   answers and are skipped: "put the answer in \boxed{}" echoes the instruction, as in math-verify), else
   the last ``<answer>`` tag, else the last answer phrase ("Final Answer: ...", "The answer is ...",
   "Answer: ...", "The answer must be ...", GSM8K's "#### ...", "The solutions are ...", "The roots are
   ..."). The answer after a phrase runs to the end of its sentence or line; when it starts with math
   delimiters it runs to the closing one, and values joined by "or"/"and"/"," in several ``$...$`` are one
   answer (``$x = 4$ or $x = -1$``); when the line is empty after the phrase, the next non-empty line is
   the answer, or the display math block that starts there. For a phrase or a tag, the sentence is read
   for the value it states (:func:`~reasongym.verifiers.sentences.answer_in_sentence`: "The smallest $k$
   is 17." gives 17, "42, not 24" gives 42, "3/8 of the pizza" gives 3/8); a sentence with a negation
   ("It cannot be 17") states no value and stays as written, except "not X; it is Y", which states Y.
3. **Commitment** (:mod:`~reasongym.verifiers.commitment`): a revision after the answer replaces it (method
   "revised": "... $\boxed{24}$. Wait, actually ... that gives 6." gives 6; also a revision in brackets,
   "Answer: 12 (wait, that's the perimeter; the area is 9)").
4. **Plain claims**, only with ``last_number_fallback``, when no part makes a decisive claim
   (:mod:`~reasongym.verifiers.plain`): the value the last sentence states, when the text ends with a
   finished sentence (method "sentence"), else the last number in the text (method "last_number").

No answer at all (``answer is None``) when a box is never closed (the output was truncated: no fall back to
phrases or numbers), when there are more than :data:`MAX_BOXES` boxes or one box argument is longer than
:data:`MAX_BOX_CHARS` characters, or when the answer after a phrase is longer than 1,000 characters
(``answer_too_long``: refused whole, never graded on a cut-off piece).

Cleaning (:func:`clean_answer`): Unicode is normalised, then outer whitespace, ``$...$`` / ``\(...\)`` /
``\[...\]`` wrappers, Markdown ``**`` (also an unpaired one) and code spans, and trailing periods are
removed. ``\text{}`` and units are left to the math grader.
"""

from __future__ import annotations

import re

from reasongym.verifiers.boxes import MAX_BOX_CHARS, MAX_BOXES, BoxScan, extract_boxed, find_boxes
from reasongym.verifiers.claims import TAIL_CHARS, Extraction, later_phrases
from reasongym.verifiers.commitment import CLAIM_CHARS, REVISION, is_aside, resolve, revised
from reasongym.verifiers.phrases import ANSWER_PHRASE, ANSWER_PHRASES, MATH_PHRASE, MATH_PHRASES
from reasongym.verifiers.pipeline import commit
from reasongym.verifiers.plain import final_claim, last_number, without_mentions, without_questions
from reasongym.verifiers.rules import Rule
from reasongym.verifiers.sentences import answer_in_sentence, sentence_value, without_remarks
from reasongym.verifiers.spans import (
    DECIMAL_COMMA,
    clean_answer,
    split_sentences,
    strip_text_commands,
    strip_text_wrapper,
)
from reasongym.verifiers.text import normalize_unicode
from reasongym.verifiers.values import bare_value

__all__ = [
    "ANSWER_PHRASE",
    "MATH_PHRASE",
    "MAX_BOXES",
    "MAX_BOX_CHARS",
    "TAIL_CHARS",
    "BoxScan",
    "Extraction",
    "clean_answer",
    "extract_answer_span",
    "extract_boxed",
    "extract_math_answer",
    "find_boxes",
    "last_number",
    "revised_value",
    "strip_text_commands",
    "strip_text_wrapper",
]

_MAX_REMARK_CHARS = 300
_NEGATED_THEN_CLAUSE = re.compile(
    r"[ \t]*not\b[^;\n.]{0,60};[ \t]*([^;\n]{1,200}?)[ \t]*(?:[.!]|$)", re.IGNORECASE
)
"""A phrase's answer that only says what the answer is not, then a clause after a semicolon that says what it is."""
_LABELLED = re.compile(r"[^\W\d_][\w' ]{0,24}:\s*([^:]{1,80})")
_NO_ANSWER = Extraction(None, "none", "No \\boxed{} answer and no answer phrase.")
_NO_PLAIN_ANSWER = Extraction(
    None,
    "none",
    "No box, no answer phrase, and no last number that is a whole answer (not a piece of an expression, "
    "a hedge or a cut-off sentence).",
)


def extract_answer_span(completion: str, *, phrases: tuple[Rule, ...] = ANSWER_PHRASES) -> Extraction:
    """Find the final answer from boxes, ``<answer>`` tags or answer phrases only (no plain claims).

    Args:
        completion: A full model output.
        phrases: The phrase rows that introduce the answer (kinds add their own words).

    Returns:
        An :class:`Extraction`; ``method == "none"`` when neither a box nor a phrase was found.
    """
    return commit(completion, lambda claim, _after: claim, phrases=phrases) or _NO_ANSWER


def _math_sentence(sentence: str) -> str | None:
    sentence = sentence.lstrip(" \t,:;.!*\u2014")  # what a revision marker left before the sentence
    return sentence_value(sentence) or bare_value(sentence)


def _cleaned_sentence_value(sentence: str) -> str | None:
    value = _math_sentence(sentence)
    return None if value is None else clean_answer(value)


def revised_value(after: str) -> str | None:
    """The value a revision after a math answer states (commitment rule 1), or None.

    Example:
        >>> revised_value(". Wait, actually, rotations are the same: that gives 6 seatings.")
        '6'
    """
    tail = normalize_unicode(after[:CLAIM_CHARS])
    return revised(tail, _math_sentence, lambda text: [sentence for _, sentence in split_sentences(text)])


def _bracketed_revision(answer: str, after: str) -> str | None:
    """The value a remark in brackets after the answer states when it opens with a revision word, or None.

    The answer's sentence may end inside the remark ("12 (wait, that's the perimeter; the area is 9)"), so the
    remark runs on into the text after the answer, up to its closing bracket.
    """
    opened = answer.rfind("(")
    if opened == -1 or not REVISION.match(answer, opened + 1):
        return None
    remark = answer[opened + 1 :]
    if ")" not in remark:
        remark += after[:_MAX_REMARK_CHARS].split(")", 1)[0]
    return revised_value(remark.split(")", 1)[0])


def _phrase_answer(found: Extraction, after: str) -> Extraction:
    """The value a phrase's (or tag's) answer states: revised in brackets, read from its sentence, or as found."""
    revised_in_brackets = _bracketed_revision(found.answer or "", after)
    if revised_in_brackets is not None:  # "Answer: 12 (wait, that's the perimeter; the area is 9)" answers 9
        answer = clean_answer(revised_in_brackets)
        reason = f"A correction in brackets after the answer {found.answer!r:.40} states {answer!r:.40}."
        return Extraction(answer, "revised", reason, candidates=(answer,))
    stated = clean_answer(answer_in_sentence(found.answer or ""))
    if found.decimal_comma and DECIMAL_COMMA.fullmatch(stated):
        stated = DECIMAL_COMMA.sub(r"\1.\2", stated)  # "a resposta é 2,5" answers 2.5 (in English, a list)
    corrected = _NEGATED_THEN_CLAUSE.match((found.answer or "") + after[:_MAX_REMARK_CHARS])
    if corrected is not None:  # "The answer is not an integer; it is 7/2." states 7/2
        stated = clean_answer(sentence_value(corrected.group(1)) or stated)
    if stated == found.answer:
        return found
    return Extraction(stated, found.method, found.reason, candidates=(stated,))


def _labelled_values(answer: str) -> str | None:
    """The values of a list of labelled values ("Minimum: 1, Maximum: 3" is "1, 3"), or None."""
    items = answer.split(",") if answer.count(":") >= 2 else []
    values = [_LABELLED.fullmatch(item.strip()) for item in items]
    if len(values) < 2 or any(value is None for value in values):
        return None
    return ", ".join(value.group(1).strip() for value in values if value)


def _read_claim(claim: Extraction, after: str) -> Extraction:
    """Stage (c) on a math claim: the phrase's sentence read, then a revision after it."""
    if claim.answer is None:
        return claim
    labelled = _labelled_values(claim.answer) if not claim.sprayed else None
    found = (
        claim
        if labelled is None
        else Extraction(labelled, claim.method, claim.reason, candidates=(labelled,))
    )
    if found.method in ("phrase", "gsm8k", "tag"):
        found = _phrase_answer(found, after)
        if found.method == "revised":
            return found
    resolution = resolve(
        found.answer or "",
        normalize_unicode(after[:CLAIM_CHARS]),
        _cleaned_sentence_value,
        _later_values,
        _same_text,
    )
    if resolution.how == "hedged" and not found.sprayed:
        values = (*resolution.others, found.answer or "")  # the decisive claim's value last, as the answer
        reason = f"Committed to {found.answer[:40]!r} and, later, to {resolution.others[0][:40]!r}."
        return Extraction(found.answer, found.method, reason, candidates=values, hedged=True)
    if resolution.how != "revised":
        return found
    answer = resolution.value
    reason = f"A correction after the {found.method} answer {found.answer[:40]!r} states {answer[:40]!r}."
    return Extraction(answer, "revised", reason, candidates=(answer,))


def _later_values(text: str) -> list[str]:
    """The values of the answer phrases after the decisive claim (commitment rule 2), asides left out."""
    values = []
    for answer in later_phrases(text, MATH_PHRASES):
        if not is_aside(answer):
            values.append(clean_answer(answer_in_sentence(clean_answer(answer))))
    return [value for value in values if value]


def _same_text(first: str, second: str) -> bool:
    """Whether two answers are written alike (the grader decides whether unlike ones are equal)."""
    return "".join(first.split()) == "".join(second.split())


def _read_plain(part: str) -> Extraction | None:
    """The plain claims of a part without a decisive claim: the last sentence, the last number."""
    text = without_remarks(without_questions(without_mentions(part)))
    claim = final_claim(
        text
    )  # a remark in brackets that ends the text is no claim: "4:15 (she spent 60 minutes)."
    if claim is not None:
        answer = clean_answer(claim)
        reason = "No box or answer phrase: read the last sentence."
        return Extraction(answer, "sentence", reason, candidates=(answer,))
    number = last_number(text)
    if number is None:
        return None
    return Extraction(
        number, "last_number", "No box or answer phrase: took the last number.", candidates=(number,)
    )


def extract_math_answer(completion: str, *, last_number_fallback: bool = True) -> Extraction:
    r"""Extract the final math answer from a full completion (rules in the module docstring).

    Args:
        completion: A full model output.
        last_number_fallback: Read plain claims (the last sentence, the last number) when no part makes a
            decisive claim.

    Returns:
        An :class:`Extraction`; ``answer`` is None when nothing usable was found.

    Example:
        >>> extract_math_answer("So $x = 4$. The answer is $\\frac{1}{2}$.").answer
        '\\frac{1}{2}'
        >>> extract_math_answer("#### 1,080").method
        'gsm8k'
        >>> extract_math_answer("Final Answer: The smallest $k$ is 17.").answer
        '17'
        >>> extract_math_answer("Thus \\boxed{12").answer is None
        True
    """
    if not last_number_fallback:
        return commit(completion, _read_claim, phrases=MATH_PHRASES, skip_empty_boxes=True) or _NO_ANSWER
    found = commit(completion, _read_claim, _read_plain, phrases=MATH_PHRASES, skip_empty_boxes=True)
    return found or _NO_PLAIN_ANSWER
