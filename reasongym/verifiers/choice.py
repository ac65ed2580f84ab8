r"""Multiple-choice grading: find which option a completion picks, compare it with the gold label.

Where the answer is looked for, in order:

1. The last complete ``\boxed{}``/``\fbox{}`` (an unclosed box means truncated output: no answer).
   Boxes of the final statement that name different options are answer spraying: wrong; earlier
   boxes are earlier attempts. After ``</think>``, when there is one, before the whole text.
2. The last phrase "answer is", "Answer:", "choice is", "option is", "Final Answer" (and "would be",
   "should be", "must be"), "I pick/choose/select/go with" (also "I'd ..."), and in other languages
   答案是, "la respuesta (correcta) es (la)", "Réponse :", "die (richtige) Antwort ist", "a resposta é",
   "la risposta è", in the last 20,000 characters. A phrase that reports a mention ("One might think the
   answer is B") is skipped. A correction after the box or phrase ("The answer is B... no wait, ..., so
   C.", "Oops, it is C.") picks the corrected option, as for math answers.
3. With ``fallback``: the last non-empty line (when it is item n of a numbered list after item n - 1, only
   a claim such as "3. C is correct" picks: a list of steps names options without picking), read strictly (a bare label such as "B", "(B)",
   "**B.**", "B) library", or an option's full text); else its last sentence: "Option B is correct."
   (also "B is the right answer"), a label after "Therefore"/"Thus"/"So" ("A is wrong. B is wrong.
   C is wrong. Therefore D."), a label after a noun that names it ("Option C.", "so choice (c).", "Letter
   D.", "Pick: D", "Answer - C"), or the one option whose text its last clause names ("London is
   large, but the capital of France is Paris."; two options named there are no pick).

How an answer span is read:

- A label at its start: "B", "(B)", "B)", "B.", "[B]", "Option B", "B: <text>", "B because ...".
  Labels match case-sensitively unless the label stands alone or in brackets ("(b)", "b"), so the
  article in "a bank" is not option A. "I think the answer is B" reads B: the phrase comes first.
- Text after a label must not name another option: "B: department store" when that is option C's
  text is wrong. An uppercase "A" followed by another option's text ("A library") is read as the
  article, and the span picks that option.
- Without a label, an option's text alone ("ignorance", "the bank"), compared case-insensitively
  with punctuation and extra whitespace removed; the longest matching text wins.
- Hedges are wrong: "C or D", "C, D", "C and D", "C/D", "either C or D", "C or maybe D", "bank or
  library", and labels listed one after another ("(B) (C) (C)", "[B] [D]"; "(B) (B)" is one pick).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.choice_sets import Choices, ChoiceSet, make_choice_set, normalize_option_text
from reasongym.verifiers.commitment import BARE_FILLER, REVISION
from reasongym.verifiers.extract import clean_answer, extract_answer_span, find_boxes, strip_text_commands

__all__ = ["ChoiceSet", "Choices", "make_choice_set", "verify_choice"]


CHOICE_PHRASE = re.compile(
    r"\b(?:final\s+answer|answer|choice|option)\s*(?:\*\*\s*)?(?:is\b|(?:would|should|must)\s+be\b|[:=])"
    r"|(?m:^[ \t#*]*final\s+answer[ \t*:]*$)"
    r"|(?-i:\bI)(?:'d|\s+would|\s+will)?\s+(?:pick|choose|select|go\s+with)\b"
    r"|(?:正确)?答案(?:是|为|[:：])|\bla\s+respuesta(?:\s+correcta)?\s+es(?:\s+la\b)?|\br[ée]ponse\s*:"
    r"|\bla\s+bonne\s+r[ée]ponse\s+est\b|\b(?:die\s+(?:richtige\s+)?)?antwort\s*(?:ist\b|lautet\b|:)"
    r"|\ba\s+resposta(?:\s+correta)?\s+[ée]\b|\bla\s+risposta(?:\s+corretta)?\s+[èe]\b",
    re.IGNORECASE,
)
_LEADING_FILLER = re.compile(r"(?:(?:either|both|option|choice|answer)\b[\s:]*){0,3}", re.IGNORECASE)
_ARTICLE = re.compile(r"(?:the|an|a)\s+")
_JOINER = re.compile(r"\s*(?:,|/|&|\bor\b|\band\b)\s*", re.IGNORECASE)
_LABEL_SEPARATOR = " \t.:)-]*"
_MAYBE = re.compile(r"(?:(?:maybe|perhaps|possibly|probably|even|also|just)\s+)*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_CONNECTIVE = re.compile(
    r"(?:(?:therefore|thus|so|hence|consequently|finally|overall)\b[\s,:]*)?", re.IGNORECASE
)
_LABEL_NOUN = re.compile(
    r"(?:(?:the[ \t]+)?(?:option|choice|letter|answer|pick)\b[ \t]*(?:[:\-\u2013\u2014=][ \t]*)?)?",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"(\d{1,3})[.)][ \t]+")
_CLAUSE_START = re.compile(r"\b(?:but|so|therefore|thus|hence)\b", re.IGNORECASE)
_CORRECT_CLAIM = re.compile(
    r"(?:\b(?:option|choice|answer)\s+)?(\(?)\b([A-Za-z])\b\)?\s+(?:is|must\s+be)\s+(?:the\s+)?"
    r"(?:correct|right|best|better|true)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Reading:
    """What one answer span says: a label, or why not ("hedge", "mismatch", "none")."""

    label: str | None
    status: str
    detail: str = ""
    same_text: tuple[str, ...] = ()  # other labels whose option text is the same (CSQA has a few)


def _hedge_after(rest: str, options: ChoiceSet, first: str) -> str | None:
    """The second option in "B or C" / "B, C" / "C or maybe D" / "bank or library", if ``rest`` starts one."""
    joiner = _JOINER.match(rest)
    if joiner is None or joiner.end() == 0:
        return None
    after = rest[joiner.end() :]
    after = after[_MAYBE.match(after).end() :]
    second = options.label_pattern.match(after)
    if second and second.group(2) in options.labels and second.group(2) != first:
        following = after[second.end() : second.end() + 1]
        if not following or not following.isalnum():
            return second.group(2)
    text_hits = options.texts_at_start(normalize_option_text(after))
    if text_hits and options.labels[text_hits[0]] != first:
        return options.labels[text_hits[0]]
    return None


def _listed_after(rest: str, options: ChoiceSet, first: str) -> str | None:
    """Another option's label written as a label right after the first: "(B) (C)", "B) C)", "[B] [D]".

    That is a list of picks, not one; the same label again ("(B) (B)") is one pick.
    """
    after = rest.lstrip(_LABEL_SEPARATOR)
    second = options.label_pattern.match(after)
    if second is None or not (second.group(3) or after[second.end() : second.end() + 1] == "."):
        return None  # "B (C is tempting, but wrong)": a remark about C, not a second pick
    label = options.canonical(second.group(2))
    return None if label in (None, first) or after[second.end() + 1 : second.end() + 2].isalnum() else label


def _read_by_text(span: str, options: ChoiceSet, strict: bool) -> _Reading:
    """Read a span that starts with no label: an option's text alone, maybe after an article."""
    normalized = normalize_option_text(span)
    hits = options.texts_at_start(normalized)
    article = _ARTICLE.match(normalized)
    if not hits and article and not strict:
        normalized = normalized[article.end() :]
        hits = options.texts_at_start(normalized)
    if not hits or (strict and normalized != options.texts[hits[0]]):
        return _Reading(None, "none")
    label = options.labels[hits[0]]
    rest = normalized[len(options.texts[hits[0]]) :]
    second = _hedge_after(rest, options, label)
    if second is None:  # punctuation is gone after normalising: "bank, library" reads "bank library"
        others = options.texts_at_start(rest.strip())
        second = options.labels[others[0]] if others and options.labels[others[0]] != label else None
    if second is not None:
        return _Reading(None, "hedge", f"{label} and {second}")
    return _Reading(label, "ok", same_text=options.same_text(hits[0]))


def _read_span(span: str, options: ChoiceSet, *, strict: bool = False) -> _Reading:
    """Read which option an answer span names (rules in the module docstring)."""
    text = strip_text_commands(clean_answer(span)).strip("*\"'` ")
    body = text if strict else text[_LEADING_FILLER.match(text).end() :]
    found = options.label_pattern.match(body)
    if found is None or (body[found.end() : found.end() + 1].isalnum() and not found.group(3)):
        reading = _read_by_text(text, options, strict)
        return _read_by_text(body, options, strict) if reading.status == "none" and body != text else reading
    opener, written, closer = found.groups()
    label = options.canonical(written)
    rest = body[found.end() :]
    delimited = bool(opener or closer) or rest.lstrip()[:1] in (".", ":", "-")
    if written != label and not (delimited or not rest.strip()):
        return _read_by_text(text, options, strict)  # lowercase "a bank" is an article, not option A
    second = _hedge_after(rest, options, label) or _listed_after(rest, options, label)
    if second is not None:
        return _Reading(None, "hedge", f"{label} and {second}")
    after = normalize_option_text(rest.lstrip(_LABEL_SEPARATOR))
    if not after:
        return _Reading(label, "ok")
    if strict and not delimited:
        return _Reading(None, "none")
    hits = options.texts_at_start(after)
    if not hits or options.labels.index(label) in hits:
        return _Reading(label, "ok")
    named = options.labels[hits[0]]
    if label == "A" and written == "A" and not delimited:  # "A library": the article, then an option's text
        return _Reading(named, "ok", same_text=options.same_text(hits[0]))
    return _Reading(None, "mismatch", f"label {label} with the text of option {named}")


def _reading_from_boxes(contents: tuple[str, ...], options: ChoiceSet) -> _Reading:
    """Read the last box; boxes of the final statement naming different options are spraying."""
    readings = [_read_span(content, options) for content in contents]
    named = {reading.label for reading in readings if reading.label is not None}
    if len(named) > 1:
        return _Reading(None, "sprayed", ", ".join(sorted(named)))
    return readings[-1]


def _find_reading(completion: str, options: ChoiceSet, fallback: bool) -> tuple[_Reading, str | None]:
    """Read the text after ``</think>`` first (as for math answers), then the whole completion."""
    think_end = completion.rfind("</think>")
    if think_end != -1:
        reading, span = _find_reading_in(completion[think_end + len("</think>") :], options, fallback=False)
        if span is not None or reading.status != "none":
            return reading, span
    return _find_reading_in(completion, options, fallback)


def _find_reading_in(completion: str, options: ChoiceSet, fallback: bool) -> tuple[_Reading, str | None]:
    """Find the answer span (box, phrase, last line) and read it: (reading, span or None)."""
    scan = find_boxes(completion)
    if scan.problem is not None:
        return _Reading(None, "none", f"no usable box ({scan.problem.replace('_', ' ')})"), None
    if scan.contents:
        revised = _revised_reading(completion, completion.rfind("\\boxed"), options)
        return revised or _reading_from_boxes(scan.final, options), clean_answer(scan.contents[-1])
    found = extract_answer_span(completion, phrase=CHOICE_PHRASE)
    if found.answer is not None:
        phrases = list(CHOICE_PHRASE.finditer(completion))
        revised = _revised_reading(completion, phrases[-1].end() if phrases else -1, options)
        return revised or _read_span(found.answer, options), found.answer
    if not fallback:
        return _Reading(None, "none", "no box and no answer phrase"), None
    lines = completion[-2_000:].strip().rsplit("\n", 1)
    last_line = lines[-1].strip() if lines else ""
    if not last_line:
        return _Reading(None, "none", "the completion is empty"), None
    if _ends_a_list(lines[0] if len(lines) == 2 else "", last_line):  # only a claim picks: "3. C is correct"
        claim = _CORRECT_CLAIM.search(last_line)
        label = options.canonical(claim.group(2)) if claim else None
        if claim is None or label is None or not (claim.group(1) or claim.group(2) == label):
            return _Reading(None, "none", "the text ends with an item of a numbered list"), None
        return _Reading(label, "ok"), clean_answer(last_line)
    reading = _read_span(last_line, options, strict=True)
    if reading.status == "none":
        reading = _read_last_sentence(last_line, options)
    return reading, clean_answer(last_line)


def _without_label_noun(text: str) -> str:
    """``text`` without a noun that names the label after it: "Option C", "choice (c)", "Letter D", "Pick: D"."""
    return text[_LABEL_NOUN.match(text).end() :]


def _ends_a_list(before: str, last_line: str) -> bool:
    """Whether the last line is item n of a numbered list whose item n - 1 is the line before it.

    Why: "1. Plant seeds / 2. Plant seeds in the soil / 3. Grow corn" lists steps; its last item names an
    option's text without picking it.
    """
    item = _LIST_ITEM.match(last_line)
    previous = _LIST_ITEM.match(before.rsplit("\n", 1)[-1].strip())
    return bool(item and previous and int(previous.group(1)) + 1 == int(item.group(1)))


def _revised_reading(completion: str, answer_at: int, options: ChoiceSet) -> _Reading | None:
    """The option a correction after the answer picks ("The answer is B... no wait, ..., so C."), or None.

    Why: a model that corrects itself has changed its pick; grading the label it retracted pays the
    mistake (the same rule as for math answers, :mod:`~reasongym.verifiers.claims`).
    """
    if answer_at < 0:
        return None
    marker = REVISION.search(completion, answer_at)
    if marker is None:
        return None
    after = completion[marker.end() :].strip(" \t\n,:;.!-")
    last_line = after.rsplit("\n", 1)[-1]
    last_line = last_line[BARE_FILLER.match(last_line).end() :]
    reading = _read_last_sentence(last_line, options) if last_line.strip() else None
    return reading if reading is not None and reading.label is not None else None


def _read_last_sentence(line: str, options: ChoiceSet) -> _Reading:
    """Read the last sentence of the last line: "Option B is correct.", "Therefore D.", one option named.

    The option named is the only one its last clause names ("London is large, but the capital is Paris.").
    """
    sentence = _SENTENCE_END.split(line.strip())[-1].strip().rstrip(".!")
    claim = _CORRECT_CLAIM.search(sentence)
    if claim is not None:
        label = options.canonical(claim.group(2))
        if label is not None and (claim.group(1) or claim.group(2) == label):
            return _Reading(label, "ok")
    reading = _read_span(
        _without_label_noun(sentence[_CONNECTIVE.match(sentence).end() :]), options, strict=True
    )
    if reading.status != "none":
        return reading
    starts = [found.end() for found in _CLAUSE_START.finditer(sentence)]
    if starts:  # "..., so B": a label that ends a derivation
        clause = _without_label_noun(sentence[starts[-1] :].strip(" \t,:"))
        reading = _read_span(clause, options, strict=True)
        if reading.status != "none":
            return reading
    clause = normalize_option_text(sentence[starts[-1] if starts else 0 :])
    named = {
        k for k, text in enumerate(options.texts) if text and re.search(rf"\b{re.escape(text)}\b", clause)
    }
    if len(named) == 1:
        index = named.pop()
        return _Reading(options.labels[index], "ok", same_text=options.same_text(index))
    return _Reading(None, "none")


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
