r"""Which option a piece of text picks: a label, an option's text, an ordinal, a paraphrase, or a hedge.

:mod:`~reasongym.verifiers.choice` finds where a completion answers (the commitment stages); this module
reads that span or sentence. Rules:

- **A label at the start**: "B", "(B)", "B)", "B.", "[B]", "Option B", "B: <text>", "B because ...".
  Labels match case-sensitively unless the label stands alone or in brackets ("(b)", "b"), so the article
  in "a bank" is not option A. A label glued to letters is no label, but a letter of another script after
  it is ("정답은 C입니다" reads C).
- **Text after a label must not name another option**: "B: department store" when that is option C's text
  is a contradiction (never paid). An uppercase "A" followed by another option's text ("A library") is the
  article, and the span picks that option.
- **An option's text alone** ("ignorance", "the bank"), compared case-insensitively with punctuation and
  extra whitespace removed; the longest matching text wins.
- **An ordinal** picks by position: "the second option", "the third choice", "the last one".
- **A letter and a text that disagree are a contradiction**: "72 km/h, which is option D" when 72 km/h is
  option C picks nothing (WRONG, "contradictory"); a letter that names the option of the text is one pick.
- **Hedges are wrong**: "C or D", "C, D", "C and D", "C/D", "either C or D", "C or maybe D", "bank or
  library", and labels listed one after another ("(B) (C) (C)", "[B] [D]"; "(B) (B)" is one pick).
- **A last sentence** (read when there is no box or phrase): "Option B is correct." (also "B is the right
  answer"), a label after "Therefore"/"Thus"/"So" ("A is wrong. B is wrong. C is wrong. Therefore D."), a
  label after a noun that names it ("Option C.", "so choice (c).", "Letter D.", "Pick: D", "Answer - C"),
  the one option whose text its last clause names ("London is large, but the capital of France is
  Paris."; two options named there are no pick), else the one option whose content words all appear in
  that clause, in any inflection ("She went to a stores" for "go to store"), when exactly one does and
  the clause has no negation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reasongym.verifiers.choice_sets import ChoiceSet, normalize_option_text
from reasongym.verifiers.spans import clean_answer, strip_text_commands

__all__ = ["Reading", "read_sentence", "read_span"]

_LEADING_FILLER = re.compile(
    r"(?:(?:either|both|option|choice|answer|the|la|el|il|le|lo|o)\b[\s:]*){0,3}", re.IGNORECASE
)  # "la C", "il B": the article of other languages before a label
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
_NAMED_LABEL = re.compile(
    r"\b(?:option|choice|letter)[ \t]*(?:[:\-=][ \t]*)?(\(?)([A-Za-z0-9]{1,2})\b\)?", re.IGNORECASE
)
_CLAUSE_START = re.compile(r"\b(?:but|so|therefore|thus|hence)\b", re.IGNORECASE)
_CORRECT_CLAIM = re.compile(
    r"(?:\b(?:option|choice|answer)\s+)?(\(?)\b([A-Za-z])\b\)?\s+(?:is|must\s+be)\s+(?:the\s+)?"
    r"(?:correct|right|best|better|true)\b",
    re.IGNORECASE,
)
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_ORDINAL = re.compile(
    r"(?:the[ \t]+)?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)[ \t]+"
    r"(?:option|choice|answer|one)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor)\b|n't\b", re.IGNORECASE)
_STOP_WORDS = frozenset(
    "a an the of to in on at for by with and or is are was be it its this that as from their his her they he "
    "she you your we our would will can could should may might".split()
)


@dataclass(frozen=True)
class Reading:
    """What one answer span says: a label, or why not ("hedge", "mismatch", "sprayed", "none").

    Attributes:
        label: The picked option's label, or None.
        status: "ok" with a label; else "hedge", "mismatch" (a contradiction), "sprayed" or "none".
        detail: What the hedge or contradiction was, for the verdict's reason.
        same_text: Other labels whose option text is the same as the picked one's (CSQA has a few).
    """

    label: str | None
    status: str
    detail: str = ""
    same_text: tuple[str, ...] = ()


def _glued(text: str, end: int) -> bool:
    """Whether a Latin letter or digit follows ``end`` (a label glued to a word is no label)."""
    following = text[end : end + 1]
    return following.isascii() and following.isalnum()


def _hedge_after(rest: str, options: ChoiceSet, first: str) -> str | None:
    """The second option in "B or C" / "B, C" / "C or maybe D" / "bank or library", if ``rest`` starts one."""
    joiner = _JOINER.match(rest)
    if joiner is None or joiner.end() == 0:
        return None
    after = rest[joiner.end() :]
    after = after[_MAYBE.match(after).end() :]
    second = options.label_pattern.match(after)
    if second and second.group(2) in options.labels and second.group(2) != first:
        if not _glued(after, second.end()):
            return second.group(2)
    text_hits = options.texts_at_start(normalize_option_text(after))
    if text_hits and options.labels[text_hits[0]] != first:
        return options.labels[text_hits[0]]
    return None


def _listed_after(rest: str, options: ChoiceSet, first: str) -> str | None:
    """Another option's label written as a label right after the first: "(B) (C)", "B) C)", "[B] [D]"."""
    after = rest.lstrip(_LABEL_SEPARATOR)
    second = options.label_pattern.match(after)
    if second is None or not (second.group(3) or after[second.end() : second.end() + 1] == "."):
        return None  # "B (C is tempting, but wrong)": a remark about C, not a second pick
    label = options.canonical(second.group(2))
    return None if label in (None, first) or _glued(after, second.end() + 1) else label


def _named_label(text: str, options: ChoiceSet) -> str | None:
    """The label a noun names anywhere in ``text`` ("which is option D"), or None."""
    for found in _NAMED_LABEL.finditer(text):
        label = options.canonical(found.group(2))
        if label is not None and (
            found.group(1) or found.group(2) == label or len(label) > 1 or label.isdigit()
        ):
            return label
    return None


def _contradicted(label: str, rest: str, options: ChoiceSet) -> Reading | None:
    """A contradiction when ``rest`` names another option by its label ("72 km/h, which is option D")."""
    named = _named_label(rest, options)
    if named is None or named == label:
        return None
    return Reading(None, "mismatch", f"the text of option {label} with the label {named}")


def _read_by_text(span: str, options: ChoiceSet, strict: bool) -> Reading:
    """Read a span that starts with no label: an option's text alone, maybe after an article."""
    normalized = normalize_option_text(span)
    hits = options.texts_at_start(normalized)
    article = _ARTICLE.match(normalized)
    if not hits and article and not strict:
        normalized = normalized[article.end() :]
        hits = options.texts_at_start(normalized)
    if not hits or (strict and normalized != options.texts[hits[0]]):
        return _read_ordinal(span, options)
    label = options.labels[hits[0]]
    rest = normalized[len(options.texts[hits[0]]) :]
    second = _hedge_after(rest, options, label)
    if second is None:  # punctuation is gone after normalising: "bank, library" reads "bank library"
        others = options.texts_at_start(rest.strip())
        second = options.labels[others[0]] if others and options.labels[others[0]] != label else None
    if second is not None:
        return Reading(None, "hedge", f"{label} and {second}")
    return _contradicted(label, span, options) or Reading(label, "ok", same_text=options.same_text(hits[0]))


def _read_ordinal(span: str, options: ChoiceSet) -> Reading:
    """An ordinal that picks by position ("the second option"), or no reading."""
    found = _ORDINAL.match(span.strip())
    if found is None:
        return Reading(None, "none")
    word = found.group(1).casefold()
    index = len(options.labels) - 1 if word == "last" else _ORDINALS.index(word)
    if index >= len(options.labels):
        return Reading(None, "none")
    return Reading(options.labels[index], "ok", same_text=options.same_text(index))


def read_span(span: str, options: ChoiceSet, *, strict: bool = False) -> Reading:
    """Read which option an answer span names (rules in the module docstring).

    Args:
        span: A box's content, or the text after an answer phrase.
        options: The question's options.
        strict: Read a last line: only a label alone, a label with its text, or an option's full text.

    Returns:
        The :class:`Reading`.
    """
    text = strip_text_commands(clean_answer(span)).strip("*\"'` ")
    body = text if strict else text[_LEADING_FILLER.match(text).end() :]
    found = options.label_pattern.match(body)
    if found is None or (_glued(body, found.end()) and not found.group(3)):
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
        return Reading(None, "hedge", f"{label} and {second}")
    after = normalize_option_text(rest.lstrip(_LABEL_SEPARATOR))
    if not after:
        return Reading(label, "ok")
    if strict and not delimited:
        return Reading(None, "none")
    hits = options.texts_at_start(after)
    if not hits or options.labels.index(label) in hits:
        return Reading(label, "ok")
    named = options.labels[hits[0]]
    if label == "A" and written == "A" and not delimited:  # "A library": the article, then an option's text
        return Reading(named, "ok", same_text=options.same_text(hits[0]))
    return Reading(None, "mismatch", f"label {label} with the text of option {named}")


def _without_label_noun(text: str) -> str:
    """``text`` without a noun that names the label after it: "Option C", "choice (c)", "Letter D", "Pick: D"."""
    return text[_LABEL_NOUN.match(text).end() :]


def _stem(word: str) -> str:
    """A crude English stem: "libraries" and "library", "stores" and "store", "going" and "go" agree."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix, shortest in (("ing", 6), ("ed", 5), ("es", 5), ("s", 4)):
        if word.endswith(suffix) and len(word) >= shortest:
            return word[: -len(suffix)]
    return word


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in normalize_option_text(text).split() if word not in _STOP_WORDS}


def _paraphrased(clause: str, options: ChoiceSet) -> Reading:
    """The one option whose content words all appear in ``clause``, in any inflection (no negation)."""
    if _NEGATION.search(clause):
        return Reading(None, "none")
    words = _stems(clause)
    matched = [k for k, text in enumerate(options.texts) if text and _stems(text) and _stems(text) <= words]
    if len(matched) != 1:
        return Reading(None, "none")
    return Reading(options.labels[matched[0]], "ok", same_text=options.same_text(matched[0]))


def read_sentence(line: str, options: ChoiceSet) -> Reading:
    """Read the last sentence of a line: "Option B is correct.", "Therefore D.", one option named.

    The option named is the only one its last clause names ("London is large, but the capital is Paris.").
    When the last sentence picks nothing, an earlier "X is correct" of the line does ("A is correct; B, C, D
    and E are not ...").
    """
    reading = _read_last_sentence(line, options)
    if reading.label is not None:
        return reading
    for claim in reversed(list(_CORRECT_CLAIM.finditer(line))):
        label = options.canonical(claim.group(2))
        if label is not None and (claim.group(1) or claim.group(2) == label):
            return Reading(label, "ok")
    return reading


def _read_last_sentence(line: str, options: ChoiceSet) -> Reading:
    """The last sentence's pick (the rules of :func:`read_sentence`)."""
    sentence = _SENTENCE_END.split(line.strip())[-1].strip().rstrip(".!")
    claim = _CORRECT_CLAIM.search(sentence)
    if claim is not None:
        label = options.canonical(claim.group(2))
        if label is not None and (claim.group(1) or claim.group(2) == label):
            return Reading(label, "ok")
    reading = read_span(
        _without_label_noun(sentence[_CONNECTIVE.match(sentence).end() :]), options, strict=True
    )
    if reading.status != "none":
        return reading
    starts = [found.end() for found in _CLAUSE_START.finditer(sentence)]
    if starts:  # "..., so B": a label that ends a derivation
        clause = _without_label_noun(sentence[starts[-1] :].strip(" \t,:"))
        reading = read_span(clause, options, strict=True)
        if reading.status != "none":
            return reading
    clause_text = sentence[starts[-1] if starts else 0 :]
    clause = normalize_option_text(clause_text)
    named = {
        k for k, text in enumerate(options.texts) if text and re.search(rf"\b{re.escape(text)}\b", clause)
    }
    if len(named) == 1:
        index = named.pop()
        label = options.labels[index]
        return _contradicted(label, clause_text, options) or Reading(
            label, "ok", same_text=options.same_text(index)
        )
    if named:
        return Reading(None, "none")
    ordinal = _ORDINAL.search(clause_text)
    if ordinal is not None:
        return _read_ordinal(ordinal.group(0), options)
    return _paraphrased(clause_text, options)
