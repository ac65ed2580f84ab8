r"""Stage (c) of commitment: from the claims a completion makes, the one answer it commits to.

The claim stage (:mod:`~reasongym.verifiers.claims`) finds the decisive claim of a text: its last box, else
its last ``<answer>`` tag, else its last answer phrase, else (a weaker claim) its last sentence or word.
This stage reads what comes after that claim, with the same rules for every answer kind; each kind only
says how a sentence states its value (a ``Reader``):

1. **A revision replaces the claim** (:data:`REVISIONS`). When a revision marker follows the claim, the
   last value stated from the marker on is the answer; a revision that states no value ("Wait, let me
   double-check. Yes.") leaves the claim as it was. The rows:

   - ``second thought``: "wait", "actually", "oops", "hmm", "hold on", "on second thought", "scratch that",
     "on reflection", "upon review", "rethinking", "reconsidering".
   - ``no``: a "No," / "No:" / "No;" / "No!" that answers the model's own claim.
   - ``admitted mistake``: "I made a mistake", "that's wrong", "this is incorrect", "I was wrong".
   - ``recheck``: "let me recheck / recount / recompute / reconsider / correct".
   - ``correction``: "correction", and "Edit:", "Update:", "Erratum:" before a new value. Why: "The
     answer is 24. Edit: 42." was paid 24.
   - ``apology``: "sorry", "I meant", "my mistake", "my bad". Why: "The answer is 16. Sorry, I meant 18."
     was paid 16.
   - ``other languages``: "Moment", "warte", "attends", "espera", "aspetta", "подожди", 不对, 等等, 待って,
     잠깐. Why: "答案是 12。不对，…应该是 15。" was graded 12.
   - ``contrast``: "but it is ...", "but the (correct) answer is ...". Why: "The answer is 12. One might
     think the answer is 12, but it is 13." was paid 12.
   - ``not but``: a sentence that opens "Not X but Y" or "Not X, it's Y". Why: "The answer is 24. Not 24
     but 42." was paid 24.

2. **Two committed values are a hedge** unless they are equal. An answer phrase after the decisive claim
   that states another value (with no revision between them) is a second commitment: both must hold, so
   the answer is right only when each one is (a restatement "\boxed{12}. The answer is 12 apples." is
   fine; "\boxed{12} ... The answer is 13." pays nothing).
3. **An aside after the answer is no new claim** (:data:`ASIDES`): a sentence that gives an approximation
   or a conversion of the answer, or checks it, restates nothing and revises nothing:

   - ``approximation``: "That is about 16.7%", "≈ 1.41", "roughly 3.14".
   - ``conversion``: "In euros that is ...", "which is 0.5 in decimal", "in other words ...".
   - ``check``: "Check: 3 + 4 = 7.", "Verification: ...".

   When a completion has no box and no answer phrase and its last sentence is such an aside, the sentence
   before it states the answer ("... so the probability is 1/6. That is about 16,7%." answers 1/6).

Every function reads at most :data:`CLAIM_CHARS` characters after the claim,
and no pattern nests unbounded quantifiers, so each is linear in its input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from reasongym.verifiers.mentions import MENTION
from reasongym.verifiers.rules import Rule, union
from reasongym.verifiers.spans import split_sentences

__all__ = [
    "ASIDES",
    "BARE_FILLER",
    "CLAIM_CHARS",
    "REVISION",
    "REVISIONS",
    "Resolution",
    "is_aside",
    "resolve",
    "revised",
    "revision_start",
]

_CONTRAST = re.compile(r"\b(?:but|however|yet|instead)\b", re.IGNORECASE)
CLAIM_CHARS = 2_000
"""Only this many characters after a claim are read for revisions and later claims."""

V = TypeVar("V")

REVISIONS = (
    Rule(
        "second thought",
        re.compile(
            r"\b(?:wait|actually|oops|hmm+|hold on|on second thought|scratch that|on (?:reflection|second look)"
            r"|upon review|rethinking|reconsidering)\b",
            re.IGNORECASE,
        ),
        "A model that second-guesses its answer and states another has changed its answer.",
    ),
    Rule(
        "no",
        re.compile(r"\b(?:no|non|nein|нет)(?=[,:;!])|いや(?=[、,])|아니(?=[,、])", re.IGNORECASE),
        "'No, it is 6.' (also 'Non,', 'Nein,', 'Нет,', 'いや、') answers the model's own claim.",
    ),
    Rule(
        "admitted mistake",
        re.compile(
            r"\b(?:i made an? (?:mistake|error)|(?:that|this) (?:is|was|'s) (?:wrong|incorrect|not right)"
            r"|i was wrong)\b",
            re.IGNORECASE,
        ),
        "An answer the model calls wrong is no longer its answer.",
    ),
    Rule(
        "recheck",
        re.compile(
            r"\blet me (?:re-?(?:check|count|compute|calculate|consider|do|examine|think)|correct)\b",
            re.IGNORECASE,
        ),
        "A recount that ends on another value replaces the first count.",
    ),
    Rule(
        "correction",
        re.compile(r"\bcorrection\b|\b(?:edit(?:ed)?|update[d]?|erratum)[ \t]*[:\-\u2014]", re.IGNORECASE),
        "'The answer is 24. Edit: 42.' was paid 24.",
    ),
    Rule(
        "apology",
        re.compile(r"\b(?:sorry|my\s+(?:mistake|bad|apologies)|i\s+meant)\b", re.IGNORECASE),
        "'The answer is 16. Sorry, I meant 18.' was paid 16.",
    ),
    Rule(
        "other languages",
        re.compile(
            r"\b(?:moment(?:\s+mal)?|warte|attends|attendez|espera|aspetta|подожди|стоп|chờ\s+đã|tunggu)"
            r"(?=[ \t]*[,!:—])|\bme\s+equivoqu[ée]|\bje\s+me\s+suis\s+tromp[ée]|\bich\s+habe\s+mich\s+verrechnet"
            r"|不对|等等|等一下|待って|訂正|잠깐",
            re.IGNORECASE,
        ),
        "'答案是 12。不对，…应该是 15。' and 'Das Ergebnis ist 14. Moment, …' revise in other languages.",
    ),
    Rule(
        "contrast",
        re.compile(
            r"\bbut[ \t]+(?:it|this|that|the[ \t]+(?:(?:correct|real|actual|right|true)[ \t]+)?"
            r"(?:answer|result|value|count|total))[ \t]*(?:is|was|'s|must[ \t]+be)\b",
            re.IGNORECASE,
        ),
        "'The answer is 12. One might think the answer is 12, but it is 13.' was paid 12.",
    ),
    Rule(
        "not but",
        re.compile(
            r"(?:^|(?<=[.!?\n]))[ \t*]*(?=not[ \t]+[^.;!?\n]{1,60}?(?:\bbut\b|,[ \t]*it(?:'s|[ \t]+is)\b))",
            re.IGNORECASE,
        ),
        "'The answer is 24. Not 24 but 42.' was paid 24.",
    ),
)
"""Markers that revise an answer given before them (rule 1)."""

REVISION = union(REVISIONS)
"""Any revision marker."""

ASIDES = (
    Rule(
        "approximation",
        re.compile(
            r"[\s*>_-]*(?:(?:that|this|which|it)(?:'s|[ \t]+is|[ \t]+comes[ \t]+to)?[ \t,]*|or[ \t]+|i\.e\.,?[ \t]*)?"
            r"(?:about|approximately|approx\.?|roughly|around|nearly|almost|≈|\\approx|~)(?![\w])",
            re.IGNORECASE,
        ),
        "'... so the probability is 1/6. That is about 16,7%.' was graded on the approximation.",
    ),
    Rule(
        "conversion",
        re.compile(
            r"[\s*>_-]*(?:(?:that|this|which)(?:'s|[ \t]+is)?[ \t,]*)?(?:in|as)[ \t]+(?:euros?|dollars?|pounds?|"
            r"yen|rupees?|cents|percent(?:age)?|decimals?|(?:decimal|fraction|percent|scientific)[ \t]+"
            r"(?:form|notation)|other[ \t]+words|minutes|hours|seconds|meters|metres|feet|inches)\b",
            re.IGNORECASE,
        ),
        "'... costs $12. In euros that is about 11.' was graded on the conversion.",
    ),
    Rule(
        "check",
        re.compile(
            r"[\s*>_-]*(?:check|checking|verification|verify|sanity[ \t]+check|double[- ]check)[ \t]*:",
            re.IGNORECASE,
        ),
        "'Check: 3 + 4 = 7.' after the answer checks it; its last number is no new answer.",
    ),
)
"""Sentences after an answer that give an approximation or a conversion of it, or check it (rule 3)."""

BARE_FILLER = re.compile(
    r"(?:[\s,:;.!*]|-(?![\d.]))*(?:(?:it'?s|it[ \t]+is|that'?s|that[ \t]+is|make[ \t]+(?:that|it)|i[ \t]+mean|"
    r"rather|so|the[ \t]+answer[ \t]+is|should[ \t]+be)[\s,:]+)*",
    re.IGNORECASE,
)  # a dash before a number is its sign: "Oops, -6." states -6
"""Words that may open a correction said without a verb ("it's", "make that", "I mean")."""


def is_aside(sentence: str) -> bool:
    """Whether a sentence opens as an approximation, a conversion or a check of the answer (rule 3)."""
    return any(rule.pattern.match(sentence) for rule in ASIDES)


def revision_start(after: str) -> int:
    """Where the first revision marker in ``after`` starts, or -1."""
    marker = REVISION.search(after)
    return -1 if marker is None else marker.start()


def revised(after: str, read: Callable[[str], V | None], split: Callable[[str], list[str]]) -> V | None:
    """The value a revision after the claim states (rule 1), or None.

    Args:
        after: The text that follows the decisive claim.
        read: The kind's reading of one sentence (its value, or None when it states none).
        split: Splits text into sentences, in order.

    Returns:
        The last value stated by a sentence from the first revision marker on, or None when there is no
        marker or no sentence after it states a value.
    """
    start = revision_start(after)
    if start == -1:
        return None
    revision = REVISION.sub(" ", after[start:])  # "Hmm, no: ...": the markers are no negation
    for sentence in reversed(split(revision)):
        if MENTION.search(sentence) and not _CONTRAST.search(sentence):
            continue  # "One might think the answer is 10." after a revision revises nothing
        value = read(sentence)
        if value is not None:
            return value
    return None


@dataclass(frozen=True)
class Resolution(Generic[V]):
    """What a claim commits to once the text after it is read.

    Attributes:
        value: The committed value: the claim's own, or a revision's.
        how: "claim" (the claim stands), "revised" (rule 1) or "hedged" (rule 2).
        others: For "hedged", the other committed values (each must equal ``value`` for a right answer).
    """

    value: V
    how: str
    others: tuple[V, ...] = ()


def _sentences_of(text: str) -> list[str]:
    return [sentence for _, sentence in split_sentences(text)]


def resolve(
    value: V,
    after: str,
    read_sentence: Callable[[str], V | None],
    later: Callable[[str], list[V]] | None = None,
    same: Callable[[V, V], bool] | None = None,
) -> Resolution[V]:
    """Rules 1 and 2 for one decisive claim: a revision replaces it, a later different commitment hedges it.

    Args:
        value: What the decisive claim states, as the kind reads it.
        after: The text after the claim.
        read_sentence: The kind's reading of one sentence (for a revision).
        later: The values of the kind's later committed claims in a text (answer phrases after the claim);
            None when the kind checks none.
        same: Whether two values are one answer said twice; plain equality when None.

    Returns:
        The :class:`Resolution`.
    """
    if not after.strip(" \t\n.!*$"):
        return Resolution(value, "claim")  # nothing follows the claim: the common case, and no scan at all
    equal = same if same is not None else (lambda first, second: first == second)
    revision = revised(after[:CLAIM_CHARS], read_sentence, _sentences_of)
    if revision is not None:
        return Resolution(value, "claim") if equal(revision, value) else Resolution(revision, "revised")
    if later is None:
        return Resolution(value, "claim")
    others = tuple(other for other in later(after[:CLAIM_CHARS]) if not equal(other, value))
    return Resolution(value, "hedged", others) if others else Resolution(value, "claim")
