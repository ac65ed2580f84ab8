r"""String answers: normalised exact match (``exact``) and yes/no questions (``yesno``).

``exact``: the answer is the last complete box, else the text after the last answer phrase ("The
answer is", "Answer:", ...), else the whole completion. Both sides are normalised (Unicode, outer
whitespace, whitespace runs, case, trailing periods, surrounding quotes, ``$`` and ``**``,
``\text{}`` wrappers) and must then be equal. There is no substring credit: "Paris, France" is
not "Paris". An answer (or gold) longer than :data:`MAX_EXACT_CHARS` characters is not compared
(REFUSED; an ungradable gold): stripping a million nested quotes one layer at a time is quadratic.

``yesno``: the final claim decides. In order: the last box or answer phrase ("The answer is no",
"Answer: yes") when it starts with (or holds only one of) yes/no/true/false; else, with
``fallback``, the last standalone yes/no/true/false word of the text. Standalone means followed by
punctuation or the end of a line ("So, no."), or starting a sentence ("Yes, because ..."; "No it
is not"), but not "no" used as a determiner ("no one", "no longer", "there is no way"). A final
claim holding both polarities ("yes or no", "yes and no", "true/false") is a hedge: wrong. A negated
word claims the opposite ("Not yes." and "The claim is not true." answer no, as does "isn't true"), and
a qualified negation ("not exactly yes", "not necessarily true") is a hedge.

Verdicts in other words and languages (issue 35): "Correct", "Absolutely", "Certainly", "Indeed", "Of
course", "Yep", "Sure", "Right", "That's right", "Without a doubt", "No doubt", "Affirmative", Sí, Oui, Ja,
Sim, Evet, Tak, Ano, Kyllä, Igen, Ναι, Да, はい, 네, 예, हाँ, نعم, Có, Ya, כן, 是的 are yes; "Not at all",
"Certainly/Definitely/Absolutely/Of course not", "No way", "Nope", "Nah", "Not really", "Probably not",
"Unlikely", "Negative", "That's wrong", "Incorrect", Non, Nein, Não, Hayır, Nie, Nee, Nej, Nei, Ei, Nem, Ne,
Όχι, Нет, いいえ, 아니요, नहीं, لا, Không, Tidak, Bukan, לא, 不是, 否 are no (the words a model that
answers in the question's language opens its reply with). A whole completion "Y" or "N" is yes or no. Why only
when punctuation or the end of the text follows them and, for the English and Latin-script words, when
they open a sentence: inside a sentence these words are seldom verdicts ("the correct value is 4",
"certainly the largest"), while "Nope." or "Нет, ..." answering the question always is. "It is (not)
true that ..." states yes (no). A yes/no word in a concession ("No. Although, yes, he was Greek, ...",
also "though", "granted", "admittedly", "even if") is not the verdict.
"""

from __future__ import annotations

import re

from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.extract import TAIL_CHARS, clean_answer, extract_answer_span, strip_text_wrapper
from reasongym.verifiers.text import normalize_unicode

__all__ = ["MAX_EXACT_CHARS", "normalize_exact", "read_yes_no", "verify_exact", "verify_yesno"]

MAX_EXACT_CHARS = 10_000
"""Longest answer or gold that ``exact`` compares; string answers are words, not essays."""

_SPACES = re.compile(r"\s+")
_WRAPPERS = (("**", "**"), ("$", "$"), ('"', '"'), ("'", "'"), ("`", "`"))
_POLARITY = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}
_WORD = re.compile(r"\b(yes|no|true|false)\b", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(yes|no|true|false)\s*(?:,\s*(?:or\b|and\b)?|/|\bor\b|\band\b)\s*(yes|no|true|false)\b", re.IGNORECASE
)
_FOLLOWED_BY_PUNCTUATION = re.compile(
    r"[ \t]*(?:[.,!;:)\]*\"'\n\u3001\u3002\uff0c\u2014\u060c\u061b\u06d4\u0964]|$)"
)  # also the Arabic comma, semicolon and full stop, and the Devanagari danda
# Verdicts in other words and languages, read only when punctuation or the end follows them ("Nope.",
# "Of course.", "Нет, ...", "はい、..."): inside a sentence these words are rarely verdicts ("the correct
# value", "certainly the largest"). Longest first, so that "certainly not" is not read as "certainly".
_NO_WORDS = (
    r"certainly not|definitely not|absolutely not|of course not|surely not|not at all|no way|not really|"
    r"probably not|unlikely|negative|that(?:'s| is) (?:wrong|false|incorrect|not (?:right|true|correct))|"
    r"nope|nah|incorrect|false|non|nein|нет|いいえ|不是|不对|否|não|hayır|nie|nee|nej|nei|ei|nem|ne|όχι|"
    r"아니요|아니오|아뇨|नहीं|नही|لا|không|tidak|bukan|לא"
)
_YES_WORDS = (
    r"without (?:a|any) doubt|no doubt|that(?:'s| is) (?:right|correct|true)|"
    r"yep|yeah|yup|correct|absolutely|certainly|definitely|indeed|of course|affirmative|sure|right|"
    r"sí|oui|ja|да|はい|是的|对的|sim|evet|tak|ano|kyllä|igen|ναι|네|예|हाँ|हां|نعم|có|ya|כן"
)
_OTHER_WORD = re.compile(rf"(?<!\w)(?:({_NO_WORDS})|({_YES_WORDS}))(?!\w)", re.IGNORECASE)
_CLAIM_THAT = re.compile(
    r"(?:^|[.!?\n][\s*]*)it(?:\s+is|'s)\s+(not\s+)?(true|false)\s+that\b", re.IGNORECASE
)  # "It is not true that ...": a verdict stated as a claim about the statement
# A yes/no word in a concession is not the verdict: "No. Although, yes, he was Greek, he did not."
_CONCEDED = re.compile(
    r"\b(?:although|though|granted|admittedly|while|whereas|even\s+if|even\s+though)[\s,*\"']*$",
    re.IGNORECASE,
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:\n(])[\s*\"'>#-]*$")
_DETERMINER_USES = frozenset(
    "one longer more matter way doubt other less such single body idea need reason evidence".split()
)
_NEXT_WORD = re.compile(r"\s+(\w+)")
_OPPOSITE = {"yes": "no", "no": "yes"}
_ONE_LETTER = re.compile(r"[\s*\"'`(]*([YyNn])[\s*\"'`).!]*")
# What stands right before a negated yes/no word ("not yes", "isn't true", "never a yes"); group 1 holds the
# words that qualify a negation into a hedge ("not exactly yes", "not necessarily true").
_NEGATED = re.compile(
    r"(?:\b(?:not|never)|n['’]t)[\s*\"'`]+"
    r"(?:(exactly|quite|entirely|necessarily|always|really|fully|completely|simply|just)\s+)?"
    r"(?:an?\s+)?[\"'`*]*$",
    re.IGNORECASE,
)


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
    found = extract_answer_span(completion)
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


def _is_hedge(text: str, hedge: re.Match[str] | None) -> bool:
    """Whether a "yes or no" match joins both polarities (and the "no" is not "no one")."""
    if hedge is None or _POLARITY[hedge.group(1).casefold()] == _POLARITY[hedge.group(2).casefold()]:
        return False
    following = _NEXT_WORD.match(text, hedge.end())
    return following is None or following.group(1).casefold() not in _DETERMINER_USES


def _claim(text: str, match: re.Match[str]) -> str:
    """What one yes/no word claims: its polarity, the opposite after a negation, 'hedge' after a qualified one."""
    polarity = _POLARITY[match.group(1).casefold()]
    negation = _NEGATED.search(text, max(0, match.start() - 40), match.start())
    if negation is None:
        return polarity
    return "hedge" if negation.group(1) else _OPPOSITE[polarity]


def _polarity_of_span(span: str) -> str | None:
    """'yes', 'no', 'hedge' or None for an answer span (box content or text after a phrase)."""
    text = strip_text_wrapper(clean_answer(span)).strip("*\"'` ")
    if _is_hedge(text, _HEDGE.search(text)):
        return "hedge"
    first = _WORD.match(text)
    if first:
        return _POLARITY[first.group(1).casefold()]
    other = _OTHER_WORD.match(text)
    if other and _FOLLOWED_BY_PUNCTUATION.match(text, other.end()):
        return "no" if other.group(1) else "yes"
    claims = {_claim(text, match) for match in _WORD.finditer(text)}
    if len(claims) == 1:
        return claims.pop()
    return "hedge" if claims else None


def _is_standalone(text: str, match: re.Match[str]) -> bool:
    """Whether a yes/no word is an answer rather than part of a phrase ("no one", "is true that")."""
    if _FOLLOWED_BY_PUNCTUATION.match(text, match.end()):
        return True
    if not _SENTENCE_START.search(text, max(0, match.start() - 8), match.start()):
        return False
    if match.group(1).casefold() != "no":
        return True
    following = _NEXT_WORD.match(text, match.end())
    return following is None or following.group(1).casefold() not in _DETERMINER_USES


def _last_standalone_polarity(completion: str) -> str | None:
    """'yes', 'no', 'hedge' or None from the last standalone yes/no word of the text."""
    tail = normalize_unicode(completion[-TAIL_CHARS:])
    last = None
    for match in _WORD.finditer(tail):
        if _is_standalone(tail, match) and not _conceded(tail, match):
            last = match
    other = _last_other_word(tail)
    if other is not None and (last is None or other[0] > last.start()):
        return other[1]
    if last is None:
        claims = list(_CLAIM_THAT.finditer(tail))  # "It is not true that he went." answers no
        if not claims:
            return None
        negated, word = claims[-1].group(1), _POLARITY[claims[-1].group(2).casefold()]
        return _OPPOSITE[word] if negated else word
    hedge = None
    for hedge in _HEDGE.finditer(tail, max(0, last.start() - 40)):  # noqa: B007 - the last one decides
        pass
    if hedge is not None and hedge.end() >= last.end() and _is_hedge(tail, hedge):
        return "hedge"
    return _claim(tail, last)


def _conceded(text: str, match: re.Match[str]) -> bool:
    return _CONCEDED.search(text, max(0, match.start() - 30), match.start()) is not None


def _last_other_word(tail: str) -> tuple[int, str] | None:
    """(position, polarity) of the last verdict said in other words and followed by punctuation."""
    last = None
    for match in _OTHER_WORD.finditer(tail):
        if _FOLLOWED_BY_PUNCTUATION.match(tail, match.end()) and not _conceded(tail, match):
            start_ok = _SENTENCE_START.search(tail, max(0, match.start() - 8), match.start())
            if start_ok or not match.group(0).isascii():
                last = (match.start(), "no" if match.group(1) else "yes")
    return last


def read_yes_no(completion: str, *, fallback: bool = True) -> tuple[str | None, str]:
    """Find a completion's final yes/no claim.

    Args:
        completion: A full model output.
        fallback: Use the last standalone yes/no word when no box or phrase gives the answer.

    Returns:
        ``(claim, how)``: claim is "yes", "no", "hedge" or None; ``how`` says where it came from.

    Example:
        >>> read_yes_no("Yes, because no one lives there.")
        ('yes', 'last standalone yes/no word')
    """
    letter = _ONE_LETTER.fullmatch(completion)
    if letter is not None:  # "Y" or "N" and nothing else: a one-letter verdict
        return ("yes" if letter.group(1).casefold() == "y" else "no"), "a one-letter verdict"
    found = extract_answer_span(completion)
    if found.method in ("truncated", "too_many_boxes", "box_too_long"):
        return None, found.reason
    if found.sprayed:
        claims = {_polarity_of_span(candidate) for candidate in found.candidates}
        if len(claims) > 1:
            return "hedge", "boxes"
    if found.answer is not None:
        claim = _polarity_of_span(found.answer)
        if claim is not None:
            return claim, "box" if found.method == "boxed" else "answer phrase"
    if not fallback:
        return None, "no box or answer phrase with yes/no"
    return _last_standalone_polarity(completion), "last standalone yes/no word"


def verify_yesno(completion: str, gold: str, *, fallback: bool = True) -> Verdict:
    """Grade a yes/no completion (rules in the module docstring).

    Args:
        completion: A full model output.
        gold: "yes"/"no" (or "true"/"false"; any case).
        fallback: Use the last standalone yes/no word when no box or phrase gives the answer.

    Returns:
        The verdict; ``extracted`` is "yes" or "no". ``correct`` is None for any other gold.

    Example:
        >>> verify_yesno("It is in Europe. So, no.", "no").correct
        True
        >>> verify_yesno("The answer is yes or no.", "yes").outcome.value
        'wrong'
    """
    gold_claim = _POLARITY.get(normalize_exact(gold))
    if gold_claim is None:
        return Verdict(None, Outcome.UNPARSEABLE, None, f"Gold {gold[:40]!r} is not yes/no/true/false.")
    claim, how = read_yes_no(completion, fallback=fallback)
    if claim is None:
        return Verdict(False, Outcome.UNPARSEABLE, None, f"No yes/no answer found ({how}).")
    if claim == "hedge":
        return Verdict(False, Outcome.WRONG, None, f"Hedged between yes and no ({how}).")
    if claim == gold_claim:
        return Verdict(True, Outcome.CORRECT, claim, f"Answered {claim} ({how}), the gold.")
    return Verdict(False, Outcome.WRONG, claim, f"Answered {claim} ({how}); gold is {gold_claim}.")
