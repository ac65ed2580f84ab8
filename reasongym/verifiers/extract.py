r"""Find the final answer in a full model completion.

A completion is untrusted text of any size. Every function here runs in time linear in the input:
boxes are found by :mod:`~reasongym.verifiers.boxes`, answer phrases and the last number are looked
for only in the last :data:`TAIL_CHARS` characters, and no regex nests quantifiers.

Rules for math answers (:func:`extract_math_answer`), in priority order:

1. When the completion closes a ``<think>`` block, the text after the last ``</think>`` is read first;
   the whole completion (each ``</think>`` read as a line break) only when that holds no box or phrase.
2. The last complete ``\boxed{...}`` / ``\fbox{...}`` (balanced, nested braces; ``\{`` and ``\}``
   are escaped braces) or bare ``\boxed 5``. For math, empty boxes are no answers and are skipped
   ("put the answer in \boxed{}" echoes the instruction), as in math-verify. A box nested inside another box is part of the outer
   one, and ``\boxed{\boxed{5}}`` reads as ``5``. Earlier boxes are earlier attempts and are
   ignored, except boxes written together with the last one in one statement (see
   :mod:`~reasongym.verifiers.boxes`): those are ``candidates`` of one multi-valued answer.
3. The content of the last complete ``<answer>...</answer>`` tag; an answer phrase inside it is read
   as below ("<answer>The answer is 12 apples.</answer>" answers 12).
4. The last answer phrase: "Final Answer: ...", "The final answer is ...", "The answer is ...",
   "Answer: ...", "The answer must be ...", GSM8K's "#### ...", and for math also "The solutions
   are ..." / "The roots are ...". The answer runs to the end of its sentence or line; when it
   starts with math delimiters it runs to the closing one, and values joined by "or"/"and"/"," in
   several ``$...$`` are one answer (``$x = 4$ or $x = -1$``). When the line is empty after the
   phrase, the next non-empty line is the answer, or the display math block (``$$ ... $$``,
   ``\[ ... \]``) that starts there, over several lines. For math, the sentence after the phrase is
   read for the value it states (:func:`~reasongym.verifiers.sentences.answer_in_sentence`: "The
   smallest $k$ is 17." gives 17, "42, not 24" gives 42, "3/8 of the pizza" gives 3/8); a sentence
   with a negation ("It cannot be 17") states no value and stays as written.
5. For math, a correction after the answer of rules 2-4 replaces it (method "revised"; see
   :mod:`~reasongym.verifiers.claims`): "... $\boxed{24}$. Wait, actually ... that gives 6." gives 6.
6. Only when ``last_number_fallback`` is true, with no box, tag or phrase: the value the last
   sentence states, when the text ends with a finished sentence (method "sentence": "So the number
   of handshakes is **36**."), else the last number in the text (method "last_number"; integers,
   thousands groups, decimals, ``a/b``, ``\frac{a}{b}``, mixed numbers, numbers in words) with a
   unit right after it (``24 m^2``, ``25%``). A number inside an exponent or a subscript is not a
   number of the text, and a number that is only a fragment is no answer: it ends a longer
   arithmetic expression (``... + 1``) or a hedge (``3 or 4``), follows a negation or a bound, or
   the text stops mid-sentence more than three words or a line after it (output cut off by the
   length limit: "Step 16: Determine the final depth of"). Rules and reasons in
   :mod:`~reasongym.verifiers.claims`.

No answer at all (``answer is None``) when:

- a box is never closed. The text then ends inside the box: the output was truncated, and a
  truncated completion must not be rewarded, so there is no fall back to phrases or numbers;
- there are more than :data:`MAX_BOXES` boxes (degenerate output), or one box argument is longer
  than :data:`MAX_BOX_CHARS` characters (no answer is that long);
- the answer after a phrase is longer than 1,000 characters (``answer_too_long``): it is refused
  whole, never graded on a cut-off piece.

Why this file is long: it is one idea, the priority order above (think block, box, tag, phrase,
correction, last sentence, last number), and each step reads the one before it; the pieces that stand
alone (boxes, spans, sentences, claims) already live in their own modules.

Cleaning: Unicode is normalised (:func:`~reasongym.verifiers.text.normalize_unicode`), end-of-turn
tokens that leak into text (``<|eot_id|>``, ``<|im_end|>``, ``</s>``) end the line they are on, then
outer whitespace, ``$...$`` / ``\(...\)`` / ``\[...\]`` wrappers, Markdown ``**`` (also an unpaired
one) and code spans, and trailing periods are removed. ``\text{}`` and units are left to the math
grader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reasongym.verifiers.boxes import (
    MAX_BOX_CHARS,
    MAX_BOXES,
    BoxScan,
    extract_boxed,
    find_boxes,
    read_box_argument,
)
from reasongym.verifiers.claims import (
    END_TOKENS,
    REVISION,
    final_claim,
    is_mention,
    json_answer,
    last_number,
    revised_value,
    without_questions,
)
from reasongym.verifiers.sentences import answer_in_sentence, sentence_value, without_remarks
from reasongym.verifiers.spans import MAX_ANSWER_CHARS, answer_after_phrase
from reasongym.verifiers.text import chinese_number, normalize_unicode

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
    "strip_text_commands",
    "strip_text_wrapper",
]

TAIL_CHARS = 20_000
"""Answer phrases and the last number are looked for only this far back from the end."""
_THINK_END = "</think>"
_MAX_REMARK_CHARS = 300
_NEGATED_THEN_CLAUSE = re.compile(
    r"[ \t]*not\b[^;\n.]{0,60};[ \t]*([^;\n]{1,200}?)[ \t]*(?:[.!]|$)", re.IGNORECASE
)
"""A phrase's answer that only says what the answer is not, then a clause after a semicolon that says what it is."""
_TAG_OPEN, _TAG_CLOSE = "<answer>", "</answer>"

ANSWER_PHRASE = re.compile(
    r"\b(?:final\s+answer|answer)\s*(?:\*\*\s*)?(?:is\b|was\b|(?:would|should|will|must)\s+be\b|[:=])"
    r"|(?m:^[ \t#*]*final\s+answer[ \t*:]*$)"
    r"|####|答案(?:是|为|[:：])",
    re.IGNORECASE,
)
"""Phrases that introduce a final answer ("The answer is", "Final Answer:", "#### ", ...)."""
_SOLUTION_PHRASE = re.compile(
    r"\b(?:solutions|roots|zeros|solution\s+set)\s+(?:are|is)(?=[ \t]*(?:\$|\\[(\[]|[-+]?\d|[a-z][ \t]*=))",
    re.IGNORECASE,
)
MATH_PHRASE = re.compile(ANSWER_PHRASE.pattern + "|" + _SOLUTION_PHRASE.pattern, re.IGNORECASE)
"""The answer phrases of math answers: also "The solutions are", "The roots are", when math follows."""
_SOLUTION_WORDS = ("solution", "root", "zero")

_EMPTY_BOX = re.compile(r"\\(?:boxed|fbox)[ \t]*\{\s*\}")
_SPACE_RUN = re.compile(r"\s+")
_ITALIC = re.compile(r"\*([^*\s][^*]*)\*|_([^_{\s][^_]*)_")
_EITHER = re.compile(r"either\s+", re.IGNORECASE)  # "either 3 or 4" is graded as the hedge "3 or 4"
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|mbox)\s*\{")


@dataclass(frozen=True)
class Extraction:
    """The final answer found in a completion, and how it was found.

    Attributes:
        answer: The cleaned final answer; None when there is none (see ``reason``).
        method: How it was found: "boxed", "tag", "phrase", "gsm8k", "revised", "sentence",
            "last_number", or, with no answer, "none", "truncated", "too_many_boxes", "box_too_long"
            or "answer_too_long".
        reason: One sentence for people reading rollouts.
        sprayed: True when the final statement boxes several different values.
        candidates: Every distinct value of the final statement, last one = ``answer``.
    """

    answer: str | None
    method: str
    reason: str
    sprayed: bool = False
    candidates: tuple[str, ...] = ()


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
        text = text[_EITHER.match(text).end() :] if _EITHER.match(text) else text
        for opener, closer in (
            ("**", "**"),
            ("`", "`"),
            ("$$", "$$"),
            ("$", "$"),
            ("\\(", "\\)"),
            ("\\[", "\\]"),
        ):
            if len(text) >= len(opener) + len(closer) and text.startswith(opener) and text.endswith(closer):
                text = text[len(opener) : len(text) - len(closer)]
                break
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


def _box_extraction(scan: BoxScan) -> Extraction:
    """Turn a box scan with at least one box (or a problem) into an Extraction."""
    if scan.problem == "truncated":
        return Extraction(None, "truncated", "A \\boxed{ is never closed, so the output was cut off.")
    if scan.problem == "too_many_boxes":
        return Extraction(None, "too_many_boxes", f"More than {MAX_BOXES} boxes: degenerate output.")
    if scan.problem == "box_too_long":
        return Extraction(None, "box_too_long", f"A box argument is longer than {MAX_BOX_CHARS} characters.")
    answer = clean_answer(scan.contents[-1])
    if not answer:
        return Extraction(None, "boxed", "The last box is empty.")
    distinct: dict[str, str] = {}
    for content in scan.final:
        cleaned = clean_answer(content)
        key = "".join(cleaned.split())
        if key:
            distinct.pop(key, None)  # re-insert so that the last occurrence decides the order
            distinct[key] = cleaned
    candidates = tuple(distinct.values())
    if len(candidates) > 1:
        reason = f"The final statement boxes {len(candidates)} different values; the last is {answer[:80]!r}."
        return Extraction(answer, "boxed", reason, sprayed=True, candidates=candidates)
    earlier = " (earlier boxes are earlier attempts)" if scan.final_start > 0 else ""
    return Extraction(answer, "boxed", f"Taken from the last \\boxed{{}}{earlier}.", candidates=(answer,))


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of ``pattern`` that is a commitment, not a mention ("One might think the answer is 12")."""
    last = None
    for found in pattern.finditer(text):
        if not is_mention(text, found.start()):
            last = found
    return last


def _last_phrase(tail: str, phrase: re.Pattern[str]) -> re.Match[str] | None:
    """The last phrase match; for MATH_PHRASE its rarer half is scanned only when its words occur."""
    if phrase is not MATH_PHRASE:
        return _last_match(phrase, tail)
    last = _last_match(ANSWER_PHRASE, tail)
    lowered = tail.lower()
    if any(word in lowered for word in _SOLUTION_WORDS):
        solution = _last_match(_SOLUTION_PHRASE, tail)
        if solution is not None and (last is None or solution.start() > last.start()):
            return solution
    return last


def _answer_tag(text: str) -> tuple[str, int] | None:
    """The content of the last complete ``<answer>...</answer>`` and where the tag ends, or None."""
    start = text.rfind(_TAG_OPEN)
    close = text.find(_TAG_CLOSE, start) if start != -1 else -1
    if close == -1:
        return None
    return text[start + len(_TAG_OPEN) : close], close + len(_TAG_CLOSE)


def _span(completion: str, phrase: re.Pattern[str]) -> tuple[Extraction, str]:
    """The box, tag or phrase answer of ``completion``, and the text that follows it."""
    scan = find_boxes(completion)
    if scan.problem is not None or scan.contents:
        return _box_extraction(scan), completion[scan.end :]
    tag = _answer_tag(completion)
    if tag is not None:
        content = END_TOKENS.sub(" ", normalize_unicode(tag[0]))
        inner = _last_phrase(content, phrase)
        answer = clean_answer(content if inner is None else answer_after_phrase(content, inner.end()) or "")
        if answer:
            found = Extraction(answer, "tag", "Taken from the last <answer> tag.", candidates=(answer,))
            return found, completion[tag[1] :]
    tail = END_TOKENS.sub("\n", normalize_unicode(completion[-TAIL_CHARS:]))
    last = _last_phrase(tail, phrase)
    if last is None:
        return Extraction(None, "none", "No \\boxed{} answer and no answer phrase."), ""
    written = last.group(0).strip()
    after = answer_after_phrase(tail, last.end())
    if after is None:
        reason = f"The answer after {written!r} is longer than {MAX_ANSWER_CHARS:,} characters."
        return Extraction(None, "answer_too_long", reason), ""
    answer = clean_answer(after)
    method = "gsm8k" if written == "####" else "phrase"
    if not answer:
        return Extraction(None, method, f"Nothing follows the phrase {written!r}."), ""
    rest = tail[tail.find(after, last.end()) + len(after) :]
    return Extraction(answer, method, f"Taken after {written!r}.", candidates=(answer,)), rest


def _locate(completion: str, phrase: re.Pattern[str]) -> tuple[Extraction, str]:
    """:func:`extract_answer_span` and the text after the answer (for corrections written after it)."""
    think_end = completion.rfind(_THINK_END)
    if think_end != -1:
        found = _span(completion[think_end + len(_THINK_END) :], phrase)
        if found[0].method != "none":
            return found
        completion = completion.replace(_THINK_END, "\n")  # the tag ends the sentence that runs into it
    return _span(completion, phrase)


def extract_answer_span(completion: str, *, phrase: re.Pattern[str] = ANSWER_PHRASE) -> Extraction:
    """Find the final answer from boxes, ``<answer>`` tags or answer phrases only (no number fallback).

    Args:
        completion: A full model output.
        phrase: The pattern of phrases that introduce the answer (kinds add their own words).

    Returns:
        An :class:`Extraction`; ``method == "none"`` when neither a box nor a phrase was found.
    """
    return _locate(completion, phrase)[0]


def _phrase_answer(found: Extraction, after: str) -> Extraction:
    """The value a phrase's (or tag's) answer states: revised in brackets, read from its sentence, or as found."""
    revised = _bracketed_revision(found.answer or "", after)
    if revised is not None:  # "Answer: 12 (wait, that's the perimeter; the area is 9)" answers 9
        answer = clean_answer(revised)
        reason = f"A correction in brackets after the answer {found.answer!r:.40} states {answer!r:.40}."
        return Extraction(answer, "revised", reason, candidates=(answer,))
    stated = clean_answer(answer_in_sentence(found.answer or ""))
    corrected = _NEGATED_THEN_CLAUSE.match((found.answer or "") + after[:_MAX_REMARK_CHARS])
    if corrected is not None:  # "The answer is not an integer; it is 7/2." states 7/2
        stated = clean_answer(sentence_value(corrected.group(1)) or stated)
    if stated == found.answer:
        return found
    return Extraction(stated, found.method, found.reason, candidates=(stated,))


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


def extract_math_answer(completion: str, *, last_number_fallback: bool = True) -> Extraction:
    r"""Extract the final math answer from a full completion (rules in the module docstring).

    Args:
        completion: A full model output.
        last_number_fallback: Use the last number in the text when there is no box and no phrase.

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
    found, after = _locate(completion, MATH_PHRASE)
    if found.method == "boxed" and found.answer is None:  # "put it in \boxed{}" is no answer
        found, after = _locate(_EMPTY_BOX.sub(" ", completion), MATH_PHRASE)
    if found.method in ("phrase", "gsm8k", "tag") and found.answer is not None:
        found = _phrase_answer(found, after)
        if found.method == "revised":
            return found
    if found.answer is not None:
        revised = revised_value(after)
        if revised is None or clean_answer(revised) == found.answer:
            return found
        answer = clean_answer(revised)
        reason = f"A correction after the {found.method} answer {found.answer[:40]!r} states {answer[:40]!r}."
        return Extraction(answer, "revised", reason, candidates=(answer,))
    if found.method != "none" or not last_number_fallback:
        return found
    structured = json_answer(completion)
    if structured is not None:
        answer = clean_answer(structured)
        return Extraction(answer, "tag", "Taken from the JSON object's answer.", candidates=(answer,))
    text = without_remarks(without_questions(completion.replace(_THINK_END, "\n")))
    claim = final_claim(
        text
    )  # a remark in brackets that ends the text is no claim: "4:15 (she spent 60 minutes)."
    if claim is not None:
        answer = clean_answer(claim)
        return Extraction(
            answer, "sentence", "No box or answer phrase: read the last sentence.", candidates=(answer,)
        )
    number = last_number(text)
    if number is None:
        return Extraction(
            None,
            "none",
            "No box, no answer phrase, and no last number that is a whole answer (not a piece of an expression, a hedge or a cut-off sentence).",
        )
    return Extraction(
        number, "last_number", "No box or answer phrase: took the last number.", candidates=(number,)
    )
