r"""String answers: normalised exact match (``exact``) and yes/no questions (``yesno``).

``exact``: the answer is the last complete box, else the text after the last answer phrase ("The
answer is", "Answer:", ...), else the whole completion. Both sides are normalised (Unicode, outer
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
from reasongym.verifiers.claims import Extraction
from reasongym.verifiers.commitment import BARE_FILLER, resolve
from reasongym.verifiers.pipeline import commit
from reasongym.verifiers.spans import strip_text_wrapper
from reasongym.verifiers.text import normalize_unicode

__all__ = ["MAX_EXACT_CHARS", "normalize_exact", "verify_exact"]

MAX_EXACT_CHARS = 10_000
"""Longest answer or gold that ``exact`` compares; string answers are words, not essays."""

_SPACES = re.compile(r"\s+")
_WRAPPERS = (("**", "**"), ("$", "$"), ('"', '"'), ("'", "'"), ("`", "`"))
_MAX_BARE_WORDS = 4


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
    """A revision said as a few words ("Oops, Tuesday."): the words, normalised; None for a longer sentence."""
    rest = sentence[BARE_FILLER.match(sentence).end() :].strip(" \t.!*")
    return normalize_exact(rest) if rest and len(rest.split()) <= _MAX_BARE_WORDS else None


def _read_claim(claim: Extraction, after: str) -> Extraction:
    """A box or phrase answer, replaced by a revision after it (commitment rule 1)."""
    if claim.answer is None or claim.sprayed:
        return claim
    resolution = resolve(normalize_exact(claim.answer), after, _bare_words)
    if resolution.how != "revised":
        return claim
    reason = f"A correction after the answer {claim.answer[:40]!r} states {resolution.value[:40]!r}."
    return Extraction(resolution.value, "revised", reason, candidates=(resolution.value,))


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
    found = commit(completion, _read_claim) or Extraction(None, "none", "No box and no answer phrase.")
    if found.answer is None and found.method != "none":  # truncated box, empty box, bare phrase
        return Verdict(False, Outcome.UNPARSEABLE, None, found.reason)
    raw = found.answer if found.answer is not None else completion
    if len(raw) > MAX_EXACT_CHARS:
        reason = f"The answer has {len(raw):,} characters; at most {MAX_EXACT_CHARS:,} are compared."
        return Verdict(False, Outcome.REFUSED, None, reason)
    answer = normalize_exact(raw)
    if not answer:
        return Verdict(False, Outcome.UNPARSEABLE, None, "The completion holds no answer.")
    if found.sprayed and len({normalize_exact(candidate) for candidate in found.candidates}) > 1:
        return Verdict(False, Outcome.WRONG, answer[:200], "Boxes hold different answers (answer spraying).")
    if answer == gold_normalized:
        return Verdict(True, Outcome.CORRECT, answer, "Matches the gold exactly after normalisation.")
    return Verdict(False, Outcome.WRONG, answer[:200], "Differs from the gold after normalisation.")
