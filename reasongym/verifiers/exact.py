r"""String answers: normalised exact match (``exact``) and yes/no questions (``yesno``).

``exact``: the answer is the last complete box, else the text after the last answer phrase ("The
answer is", "Answer:", "Réponse :", ... in any of the phrases' languages), else the value after the label
of the last line ("Sorted: apple, banana, cherry"), else an emphasized value (bold, code or quotes) that
ends the text ("The reversed word is **nohtyp**."), else the whole completion (after a think block, its
answer part). A gloss in brackets after the answer is dropped ("Mercury (the closest planet to the Sun)"
answers Mercury) unless it offers another answer ("Monday (or Tuesday ...)" is a hedge). Both sides are normalised (Unicode, outer
whitespace, whitespace runs, case, trailing periods, surrounding quotes, ``$`` and ``**``,
``\text{}`` wrappers) and must then be equal. There is no substring credit: "Paris, France" is
not "Paris". An answer (or gold) longer than :data:`MAX_EXACT_CHARS` characters is not compared
(REFUSED; an ungradable gold): stripping a million nested quotes one layer at a time is quadratic.

``yesno`` lives in :mod:`~reasongym.verifiers.yesno`.

Both kinds decide what the completion commits to through the commitment stages
(:mod:`~reasongym.verifiers.pipeline`): a new turn or question ends the completion, the answer after a
think block comes first, and a revision after the answer replaces it ("\boxed{\text{Monday}}. Oops,
Tuesday." answers Tuesday; a revision is read as the words that follow its marker, up to four of them).
"""

from __future__ import annotations

import re

from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.claims import Extraction, later_phrases
from reasongym.verifiers.commitment import BARE_FILLER, resolve
from reasongym.verifiers.phrases import ANSWER_PHRASES
from reasongym.verifiers.pipeline import commit, read_parts
from reasongym.verifiers.sentences import after_last_verb
from reasongym.verifiers.spans import strip_text_wrapper
from reasongym.verifiers.text import normalize_unicode

__all__ = ["MAX_EXACT_CHARS", "normalize_exact", "verify_exact"]

MAX_EXACT_CHARS = 10_000
"""Longest answer or gold that ``exact`` compares; string answers are words, not essays."""

_SPACES = re.compile(r"\s+")
_WRAPPERS = (("**", "**"), ("$", "$"), ('"', '"'), ("'", "'"), ("`", "`"))
_MAX_BARE_WORDS = 4
_PLAIN_LINE_CHARS = 2_000
_GLOSS = re.compile(
    r"[ \t]*\((?![ \t]*(?:or|maybe|perhaps|possibly|alternatively|otherwise|unless|if|except)\b)[^()]{1,120}\)[ \t.]*$",
    re.IGNORECASE,
)  # "Mercury (the closest planet to the Sun)" answers Mercury; "Monday (or Tuesday ...)" stays a hedge
_LABEL_LINE = re.compile(r"[ \t*#>-]*[^\W\d_][\w' -]{0,30}?[ \t*]*:[ \t*]*(\S.{0,300}?)[ \t.]*")
_EMPHASIZED_END = re.compile(r"(?:\*\*([^*\n]{1,200})\*\*|`([^`\n]{1,200})`|\"([^\"\n]{1,200})\")[ \t.!]*$")


def normalize_exact(text: str) -> str:
    r"""Normalise a string answer for exact comparison.

    Args:
        text: An answer or a gold string.

    Returns:
        The text with Unicode normalised, ``\text{}`` wrappers, outer whitespace, trailing periods
        and surrounding quotes / ``$`` / ``**`` removed, whitespace runs collapsed, and casefolded.

    Example:
        >>> normalize_exact('  **"New   York".**  ')
        'new york'
    """
    normalized = _SPACES.sub(" ", normalize_unicode(text)).strip()
    previous = None
    while normalized != previous:
        previous = normalized
        normalized = strip_text_wrapper(normalized.rstrip(". ").strip())
        for opener, closer in _WRAPPERS:
            wrapped = normalized.startswith(opener) and normalized.endswith(closer)
            if wrapped and len(normalized) >= len(opener) + len(closer):
                normalized = normalized[len(opener) : len(normalized) - len(closer)].strip()
                break
    return normalized.casefold()


def _bare_words(sentence: str) -> str | None:
    """A revision's words ("Oops, Tuesday.", "... two days later is Wednesday."), normalised; None for prose."""
    rest = sentence[BARE_FILLER.match(sentence).end() :].strip(" \t.!*")
    if rest and len(rest.split()) <= _MAX_BARE_WORDS:
        return normalize_exact(rest)
    predicate = after_last_verb(rest)
    return normalize_exact(predicate) if predicate and len(predicate.split()) <= _MAX_BARE_WORDS else None


def _without_gloss(answer: str) -> str:
    """The answer without a gloss in brackets after it ("Mercury (the closest planet)"); "(or ...)" stays."""
    gloss = _GLOSS.search(answer)
    return answer[: gloss.start()].rstrip() if gloss is not None and gloss.start() > 0 else answer


def _read_claim(claim: Extraction, after: str) -> Extraction:
    """A box or phrase answer without its gloss, replaced by a revision after it (commitment rule 1)."""
    if claim.answer is None or claim.sprayed:
        return claim
    answer = _without_gloss(claim.answer)
    resolution = resolve(normalize_exact(answer), after, _bare_words, _later_answers)
    if resolution.how == "hedged":
        reason = f"Committed to {answer[:40]!r} and, later, to {resolution.others[0][:40]!r}."
        return Extraction(answer, claim.method, reason, candidates=(*resolution.others, answer), hedged=True)
    if resolution.how != "revised":
        return (
            claim
            if answer == claim.answer
            else Extraction(answer, claim.method, claim.reason, candidates=(answer,))
        )
    reason = f"A correction after the answer {claim.answer[:40]!r} states {resolution.value[:40]!r}."
    return Extraction(resolution.value, "revised", reason, candidates=(resolution.value,))


def _later_answers(text: str) -> list[str]:
    """The normalised answers of the answer phrases after the decisive claim (commitment rule 2)."""
    return [normalize_exact(_without_gloss(answer)) for answer in later_phrases(text, ANSWER_PHRASES)]


def _read_plain(part: str) -> Extraction | None:
    """A last line "Label: value" ("Sorted: apple, banana"), or an emphasized value ending the text."""
    line = part[-_PLAIN_LINE_CHARS:].strip().rsplit("\n", 1)[-1].strip()
    labelled = _LABEL_LINE.fullmatch(line)
    if labelled is not None:
        return Extraction(labelled.group(1), "sentence", "Read the value after the last line's label.")
    emphasized = _EMPHASIZED_END.search(line)
    if emphasized is not None:
        value = next(group for group in emphasized.groups() if group is not None)
        return Extraction(value, "sentence", "Read the emphasized value that ends the text.")
    return None


def verify_exact(completion: str, gold: str) -> Verdict:
    """Grade a completion by normalised exact match against ``gold`` (rules in the module docstring).

    Args:
        completion: A full model output.
        gold: The expected answer string.

    Returns:
        The verdict; ``correct`` is None when the gold normalises to the empty string.

    Example:
        >>> verify_exact("The answer is: Paris.", "paris").correct
        True
        >>> verify_exact("The answer is Paris, France.", "Paris").correct
        False
    """
    if len(gold) > MAX_EXACT_CHARS:
        reason = f"Gold has {len(gold):,} characters; at most {MAX_EXACT_CHARS:,} are compared."
        return Verdict(None, Outcome.UNPARSEABLE, None, reason)
    gold_normalized = normalize_exact(gold)
    if not gold_normalized:
        return Verdict(None, Outcome.UNPARSEABLE, None, "Gold is empty after normalisation.")
    found = commit(completion, _read_claim, _read_plain) or Extraction(
        None, "none", "No box and no answer phrase."
    )
    if found.answer is None and found.method != "none":  # truncated box, empty box, bare phrase
        return Verdict(False, Outcome.UNPARSEABLE, None, found.reason)
    raw = found.answer if found.answer is not None else read_parts(completion)[0]
    if len(raw) > MAX_EXACT_CHARS:
        reason = f"The answer has {len(raw):,} characters; at most {MAX_EXACT_CHARS:,} are compared."
        return Verdict(False, Outcome.REFUSED, None, reason)
    answer = normalize_exact(raw)
    if not answer:
        return Verdict(False, Outcome.UNPARSEABLE, None, "The completion holds no answer.")
    if found.hedged:
        return Verdict(False, Outcome.WRONG, answer[:200], f"{found.reason} (a hedge)")
    if found.sprayed and len({normalize_exact(candidate) for candidate in found.candidates}) > 1:
        return Verdict(False, Outcome.WRONG, answer[:200], "Boxes hold different answers (answer spraying).")
    if answer == gold_normalized:
        return Verdict(True, Outcome.CORRECT, answer, "Matches the gold exactly after normalisation.")
    return Verdict(False, Outcome.WRONG, answer[:200], "Differs from the gold after normalisation.")
