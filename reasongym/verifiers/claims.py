r"""Stage (b) of commitment: the places where a completion states an answer, strongest first.

A claim is a place in the text that states an answer, with its strength. From strongest to weakest:

1. **box**: the last complete ``\boxed{...}`` / ``\fbox{...}`` (balanced, nested braces), or bare
   ``\boxed 5``. Boxes written together with the last one in one statement are one multi-valued claim
   (:mod:`~reasongym.verifiers.boxes`); earlier boxes are earlier attempts. A box that is never closed
   means the output was cut off: there is no answer, and no weaker claim is read.
2. **tag**: the content of the last complete ``<answer>...</answer>``.
3. **JSON**: the ``"answer"`` (``"final_answer"``, ``"result"``, ``"value"``, ``"solution"``) field of a JSON
   object that ends the text, bare, in a code block or as a tool call's arguments.
4. **phrase**: the last answer phrase (:data:`~reasongym.verifiers.phrases.ANSWER_PHRASES`, one row per
   language; each kind adds its own words, such as "I pick" for choices), and the sentence or line after
   it.
5. **plain**: what a kind reads without any of the above: a last sentence or line, a verdict word, a
   label, the last number (each kind's reader says which; :mod:`~reasongym.verifiers.plain` for math).

The first four are found here, for every kind, by :func:`decisive_claim`. Mentions are never claims
(:mod:`~reasongym.verifiers.mentions` lists what makes an answer phrase or a word a mention).

Every scan is linear: answer phrases are looked for only in the last :data:`TAIL_CHARS` characters and
no pattern nests unbounded quantifiers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from reasongym.verifiers.boxes import MAX_BOX_CHARS, MAX_BOXES, BoxScan, find_boxes
from reasongym.verifiers.mentions import MENTION, is_mention
from reasongym.verifiers.phrases import (
    ANSWER_PHRASE,
    ANSWER_PHRASES,
    DECIMAL_COMMA_PHRASE,
    may_hold_answer_phrase,
    phrase_matches,
)
from reasongym.verifiers.rules import Rule
from reasongym.verifiers.segment import SPECIAL_TOKEN
from reasongym.verifiers.spans import MAX_ANSWER_CHARS, answer_after_phrase, clean_answer, strip_text_wrapper
from reasongym.verifiers.text import normalize_unicode

__all__ = [
    "TAIL_CHARS",
    "Extraction",
    "decisive_claim",
    "json_answer",
    "later_phrases",
]

TAIL_CHARS = 20_000
"""Answer phrases are looked for only this far back from the end."""

_REPEAT_GAP = 200


@dataclass(frozen=True)
class Extraction:
    """The answer a completion commits to, and how it was found.

    Attributes:
        answer: The cleaned final answer; None when there is none (see ``reason``).
        method: How it was found: "boxed", "tag", "json", "phrase", "gsm8k", "revised", "sentence",
            "last_number", or, with no answer, "none", "truncated", "too_many_boxes", "box_too_long"
            or "answer_too_long".
        reason: One sentence for people reading rollouts.
        sprayed: True when the final statement boxes several different values.
        candidates: Every distinct value of the final statement, last one = ``answer``; for a hedge,
            every value the completion committed to, the decisive claim's (``answer``) last.
        hedged: True when the completion committed to every value of ``candidates`` in separate claims
            (:mod:`~reasongym.verifiers.commitment`, rule 2): right only when each of them is.
        decimal_comma: True when the answer phrase's language writes a decimal comma ("a resposta é 2,5").
    """

    answer: str | None
    method: str
    reason: str
    sprayed: bool = False
    candidates: tuple[str, ...] = ()
    hedged: bool = False
    decimal_comma: bool = False


def _box_extraction(scan: BoxScan) -> Extraction:
    """Turn a box scan with at least one box (or a problem) into an Extraction."""
    if scan.problem == "truncated":
        return Extraction(None, "truncated", "A \\boxed{ is never closed, so the output was cut off.")
    if scan.problem == "too_many_boxes":
        return Extraction(None, "too_many_boxes", f"More than {MAX_BOXES} boxes: degenerate output.")
    if scan.problem == "box_too_long":
        return Extraction(None, "box_too_long", f"A box argument is longer than {MAX_BOX_CHARS} characters.")
    final = [clean_answer(content) for content in scan.final]  # the last box is the final statement's last
    answer = _phrase_inside(final[-1])
    if not answer:
        return Extraction(None, "boxed", "The last box is empty.")
    distinct: dict[str, str] = {}
    for cleaned in final:
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


def _phrase_inside(answer: str) -> str:
    r"""The answer of a box that holds a sentence with an answer phrase (``\boxed{\text{The answer is 5}}``)."""
    inner = strip_text_wrapper(answer)
    found = ANSWER_PHRASE.search(inner) if len(inner) > 8 and may_hold_answer_phrase(inner) else None
    if found is None:
        return answer
    after = answer_after_phrase(inner, found.end())
    stated = clean_answer(after) if after else ""
    return stated or answer


def _last_phrase(tail: str, phrases: tuple[Rule, ...]) -> re.Match[str] | None:
    """The last phrase of ``tail`` that is a claim, not a mention ("One might think the answer is 12")."""
    last = None
    for found in phrase_matches(phrases, tail):
        if (last is None or found.start() >= last.end()) and not is_mention(tail, found.start()):
            last = found
    return last


_TAG_OPEN, _TAG_CLOSE = "<answer>", "</answer>"
_ANSWER_KEYS = ("answer", "final_answer", "result", "value", "solution")
_TOOL_CALL_END = re.compile(r"</(?:tool_call|function_call|tool_use)>$")


def _answer_tag(text: str) -> tuple[str, int] | None:
    """The content of the last complete ``<answer>...</answer>`` and where the tag ends, or None."""
    start = text.rfind(_TAG_OPEN)
    close = text.find(_TAG_CLOSE, start) if start != -1 else -1
    if close == -1:
        return None
    return text[start + len(_TAG_OPEN) : close], close + len(_TAG_CLOSE)


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


def decisive_claim(text: str, phrases: tuple[Rule, ...] = ANSWER_PHRASES) -> tuple[Extraction, str]:
    """The strongest claim of ``text`` (box, tag, JSON, phrase; rules 1-4) and the text after it.

    Args:
        text: One part of a segmented completion (:mod:`~reasongym.verifiers.segment`).
        phrases: The kind's answer phrase rows.

    Returns:
        ``(claim, after)``: ``claim.method`` is "none" when the text makes none of these claims, and
        ``after`` is the text that follows the claim, where revisions and later claims are read.
    """
    scan = find_boxes(text)
    if scan.problem is not None or scan.contents:
        return _box_extraction(scan), text[scan.end :]
    tag = _answer_tag(text)
    if tag is not None:
        content = SPECIAL_TOKEN.sub(" ", normalize_unicode(tag[0]))
        inner = _last_phrase(content, phrases)
        answer = clean_answer(content if inner is None else answer_after_phrase(content, inner.end()) or "")
        if answer:
            found = Extraction(answer, "tag", "Taken from the last <answer> tag.", candidates=(answer,))
            return found, text[tag[1] :]
    structured = json_answer(text) if text.rstrip().endswith(("}", "```", ">")) else None
    if structured is not None and clean_answer(structured):
        answer = clean_answer(structured)
        return Extraction(answer, "tag", "Taken from the JSON object's answer.", candidates=(answer,)), ""
    return _phrase_claim(text, phrases)


def _phrase_claim(text: str, phrases: tuple[Rule, ...]) -> tuple[Extraction, str]:
    """The last answer phrase of ``text`` and its answer (rule 4), and the text after it."""
    tail = SPECIAL_TOKEN.sub("\n", normalize_unicode(text[-TAIL_CHARS:]))
    last = _last_phrase(tail, phrases)
    if last is None:
        return Extraction(None, "none", "No \\boxed{} answer and no answer phrase."), ""
    after = answer_after_phrase(tail, last.end())
    if _nothing_after(after):  # "The answer is 5. The answer is": cut off as it repeated
        earlier = _last_phrase(tail[: last.start()], phrases)
        if earlier is not None and _repeats(tail, earlier, last):
            last, after = earlier, answer_after_phrase(tail, earlier.end())
    written = last.group(0).strip()
    if after is None:
        reason = f"The answer after {written!r} is longer than {MAX_ANSWER_CHARS:,} characters."
        return Extraction(None, "answer_too_long", reason), ""
    answer = clean_answer(after)
    method = "gsm8k" if written == "####" else "phrase"
    if not answer:
        return Extraction(None, method, f"Nothing follows the phrase {written!r}."), ""
    rest = tail[tail.find(after, last.end()) + len(after) :]
    comma = DECIMAL_COMMA_PHRASE.fullmatch(written) is not None
    found = Extraction(answer, method, f"Taken after {written!r}.", candidates=(answer,), decimal_comma=comma)
    return found, rest


def _nothing_after(after: str | None) -> bool:
    """Whether nothing but a mention follows a phrase ("The answer is" at the end, or before "One might think")."""
    return after is not None and (not after.strip(" \t\n:*") or MENTION.search(after) is not None)


def _repeats(tail: str, earlier: re.Match[str], last: re.Match[str]) -> bool:
    """Whether the phrase cut off at the end repeats the one before it (a small model looping)."""
    return (
        earlier.group(0).casefold() == last.group(0).casefold()
        and last.start() - earlier.end() <= _REPEAT_GAP
    )


def later_phrases(after: str, phrases: tuple[Rule, ...]) -> list[str]:
    """The answers of the answer phrases in ``after`` that are claims (commitment rule 2), in order."""
    answers, end = [], 0
    for found in phrase_matches(phrases, after[:TAIL_CHARS]):
        if found.start() < end or is_mention(after, found.start()):
            continue
        end = found.end()
        answer = answer_after_phrase(after, found.end())
        if answer is not None and clean_answer(answer):
            answers.append(answer)
    return answers
