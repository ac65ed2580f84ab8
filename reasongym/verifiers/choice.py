r"""Multiple-choice grading: find which option a completion picks, compare it with the gold label.

Where the answer is looked for: the commitment stages (:mod:`~reasongym.verifiers.pipeline`), with the
choice kind's phrases and readings (:mod:`~reasongym.verifiers.choice_reading` says how a span or a
sentence is read as an option):

1. **Segment**: a new turn or question ends the completion; after ``</think>``, the text after it first.
2. **The decisive claim**: the last complete ``\boxed{}``/``\fbox{}`` (an unclosed box means truncated
   output: no answer; boxes of the final statement that name different options are answer spraying:
   wrong), else the last ``<answer>`` tag, else a JSON object's answer field, else the last phrase "answer
   is", "Answer:", "choice is", "option is", "Final Answer" (and "would be", "should be", "must be"), "I
   pick/choose/select/go with" (also "I'd ..."), and in other languages 答案是, 答えは, 正解は, 정답은, 답:,
   उत्तर है, सही उत्तर, "la respuesta (correcta) es (la)", "Réponse :", "die (richtige) Antwort ist", "a
   resposta é", "la risposta è". A phrase that reports a mention ("One might think the answer is B") is
   skipped.
3. **Commitment**: a correction after the box or phrase ("The answer is B... no wait, ..., so C.", "Oops,
   it is C.") picks the corrected option, as for every kind (:mod:`~reasongym.verifiers.commitment`).
4. **Plain claims**, with ``fallback``: the last non-empty line (when it is item n of a numbered list after
   item n - 1, only a claim such as "3. C is correct" picks: a list of steps names options without
   picking), read strictly (a bare label such as "B", "(B)", "**B.**", "B) library", or an option's full
   text); else its last sentence (:func:`~reasongym.verifiers.choice_reading.read_sentence`).
"""

from __future__ import annotations

import re

from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.choice_reading import Reading, read_sentence, read_span
from reasongym.verifiers.choice_sets import Choices, ChoiceSet, make_choice_set
from reasongym.verifiers.claims import Extraction, later_phrases
from reasongym.verifiers.commitment import BARE_FILLER, resolve
from reasongym.verifiers.phrases import ANSWER_PHRASES
from reasongym.verifiers.pipeline import commit
from reasongym.verifiers.rules import Rule, union
from reasongym.verifiers.spans import clean_answer

__all__ = ["CHOICE_PHRASE", "CHOICE_PHRASES", "ChoiceSet", "Choices", "make_choice_set", "verify_choice"]


CHOICE_PHRASES = (
    Rule(
        "option named",
        re.compile(
            r"\b(?:choice|option)\s*(?:\*\*\s*)?(?:is\b|(?:would|should|must)\s+be\b|[:=])", re.IGNORECASE
        ),
        "'The correct option is C' and 'Choice: C' name the pick.",
        hints=("option", "choice"),
    ),
    Rule(
        "pick",
        re.compile(r"(?-i:\bI)(?:'d|\s+would|\s+will)?\s+(?:pick|choose|select|go\s+with)\b", re.IGNORECASE),
        "'I pick C', 'I'd go with C' state the pick.",
        hints=("pick", "choose", "select", "go with"),
    ),
    Rule(
        "chinese choose",
        re.compile(r"选(?:择)?(?=\s*[(（]?[A-Za-z]\b)"),
        "'所以选C' ('so choose C').",
        hints=("选",),
    ),
    Rule(
        "alternative",
        re.compile(
            r"\b(?:alternativa|opci[óo]n|op[çc][ãa]o)(?:\s+(?:correta|correcta|certa))?\s*(?:[:é]|es\b)",
            re.IGNORECASE,
        ),
        "'Alternativa correta: C', 'Opción correcta: c)'.",
        hints=("alternativa", "opci", "opç", "opc"),
    ),
    Rule(
        "hindi",
        re.compile(r"(?:सही\s+)?उत्तर(?:\s+है)?\s*[:：]?(?=\s*\(?[A-Za-z]\b)"),
        "'सही उत्तर C है' ('the right answer is C').",
        hints=("उत्तर",),
    ),
)
"""The phrases that introduce a choice besides every kind's answer phrases."""
CHOICE_PHRASE = union(ANSWER_PHRASES + CHOICE_PHRASES)
_LIST_ITEM = re.compile(r"(\d{1,3})[.)][ \t]+")
_CORRECT_CLAIM = re.compile(
    r"(?:\b(?:option|choice|answer)\s+)?(\(?)\b([A-Za-z])\b\)?\s+(?:is|must\s+be)\s+(?:the\s+)?"
    r"(?:correct|right|best|better|true)\b",
    re.IGNORECASE,
)
_BOX_PROBLEMS = ("truncated", "too_many_boxes", "box_too_long")
Found = tuple[Reading, "str | None"]


def _reading_from_boxes(contents: tuple[str, ...], options: ChoiceSet) -> Reading:
    """Read the last box; boxes of the final statement naming different options are spraying."""
    readings = [read_span(content, options) for content in contents]
    named = {reading.label for reading in readings if reading.label is not None}
    if len(named) > 1:
        return Reading(None, "sprayed", ", ".join(sorted(named)))
    return readings[-1]


def _revised_label(sentence: str, options: ChoiceSet) -> str | None:
    """The label a sentence of a revision picks ("so C.", "it is C"), or None."""
    stripped = sentence[BARE_FILLER.match(sentence).end() :]
    reading = read_sentence(stripped, options) if stripped.strip() else None
    return reading.label if reading is not None else None


def _read_claim(claim: Extraction, after: str, options: ChoiceSet) -> Found | None:
    """A decisive claim's pick, with a revision after it (commitment rule 1); None: read the last line."""
    if claim.method in _BOX_PROBLEMS:
        return Reading(None, "none", f"no usable box ({claim.method.replace('_', ' ')})"), None
    if claim.answer is None:
        return (Reading(None, "none"), "") if claim.method == "boxed" else None
    contents = claim.candidates if claim.method == "boxed" and claim.candidates else (claim.answer,)
    reading = (
        _reading_from_boxes(contents, options)
        if claim.method == "boxed"
        else read_span(claim.answer, options)
    )
    resolution = resolve(
        reading.label,
        after,
        lambda sentence: _revised_label(sentence, options),
        lambda text: [label for label in _later_labels(text, options) if label is not None],
    )
    if resolution.how == "revised" and resolution.value is not None:
        return Reading(resolution.value, "ok"), claim.answer
    if resolution.how == "hedged" and reading.label is not None:
        return Reading(None, "hedge", f"{reading.label}, then {resolution.others[0]}"), claim.answer
    return reading, claim.answer


def _later_labels(text: str, options: ChoiceSet) -> list[str | None]:
    """The options that answer phrases after the decisive claim pick (commitment rule 2)."""
    readings = (read_span(answer, options) for answer in later_phrases(text, ANSWER_PHRASES + CHOICE_PHRASES))
    return [f"({reading.detail})" if reading.status == "hedge" else reading.label for reading in readings]


def _ends_a_list(before: str, last_line: str) -> bool:
    """Whether the last line is item n of a numbered list whose item n - 1 is the line before it.

    Why: "1. Plant seeds / 2. Plant seeds in the soil / 3. Grow corn" lists steps; its last item names an
    option's text without picking it.
    """
    item = _LIST_ITEM.match(last_line)
    previous = _LIST_ITEM.match(before.rsplit("\n", 1)[-1].strip())
    return bool(item and previous and int(previous.group(1)) + 1 == int(item.group(1)))


def _read_plain(part: str, options: ChoiceSet) -> Found | None:
    """The last line's pick (rule 4), or None when the part is empty."""
    lines = part[-2_000:].strip().rsplit("\n", 1)
    last_line = lines[-1].strip() if lines else ""
    if not last_line:
        return None
    if _ends_a_list(lines[0] if len(lines) == 2 else "", last_line):  # only a claim picks: "3. C is correct"
        claim = _CORRECT_CLAIM.search(last_line)
        label = options.canonical(claim.group(2)) if claim else None
        if claim is None or label is None or not (claim.group(1) or claim.group(2) == label):
            return Reading(None, "none", "the text ends with an item of a numbered list"), None
        return Reading(label, "ok"), clean_answer(last_line)
    reading = read_span(last_line, options, strict=True)
    if reading.status == "none":
        reading = read_sentence(last_line, options)
    return reading, clean_answer(last_line)


def _find_reading(completion: str, options: ChoiceSet, fallback: bool) -> Found:
    """Where the completion answers, and which option it picks there (rules 1-4)."""
    found = commit(
        completion,
        lambda claim, after: _read_claim(claim, after, options),
        (lambda part: _read_plain(part, options)) if fallback else None,
        phrases=ANSWER_PHRASES + CHOICE_PHRASES,
    )
    if found is not None:
        return found
    if not fallback:
        return Reading(None, "none", "no box and no answer phrase"), None
    return Reading(None, "none", "the completion is empty"), None


def verify_choice(
    completion: str, gold: str, options: ChoiceSet | Choices = None, *, fallback: bool = True
) -> Verdict:
    """Grade a multiple-choice completion against the gold label.

    Args:
        completion: A full model output.
        gold: The correct option's label ("B"; "(b)" is accepted too).
        options: A :class:`ChoiceSet` or any ``choices`` form (None: labels A-E without texts).
        fallback: Read the last line when there is no box and no answer phrase.

    Returns:
        The verdict; ``extracted`` is the chosen label, or the unreadable span. ``correct`` is None
        when ``gold`` is not one of the labels.

    Example:
        >>> verify_choice("I think the answer is (B).", "B").correct
        True
        >>> verify_choice("The answer is C or D.", "C").outcome.value
        'wrong'
    """
    options = options if isinstance(options, ChoiceSet) else make_choice_set(options)
    gold_label = options.canonical(gold.strip().strip("()[] "))
    if gold_label is None:
        allowed = ", ".join(options.labels)
        return Verdict(
            None, Outcome.UNPARSEABLE, None, f"Gold {gold[:40]!r} is not one of the labels {allowed}."
        )
    reading, span = _find_reading(completion, options, fallback)
    if reading.label is not None:
        if gold_label in (reading.label, *reading.same_text):
            return Verdict(True, Outcome.CORRECT, gold_label, f"Picked option {gold_label}, the gold.")
        return Verdict(
            False, Outcome.WRONG, reading.label, f"Picked option {reading.label}; gold is {gold_label}."
        )
    if reading.status == "hedge":
        return Verdict(False, Outcome.WRONG, span, f"Hedged between options ({reading.detail}).")
    if reading.status == "sprayed":
        return Verdict(False, Outcome.WRONG, span, f"Boxes name different options ({reading.detail}).")
    if reading.status == "mismatch":
        return Verdict(False, Outcome.WRONG, span, f"Contradictory answer: {reading.detail}.")
    if span is None:
        return Verdict(False, Outcome.UNPARSEABLE, None, f"No answer found: {reading.detail}.")
    return Verdict(False, Outcome.UNPARSEABLE, span[:200], f"{span[:40]!r} names none of the options.")
