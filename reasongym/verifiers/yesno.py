r"""Yes/no answers (kind ``yesno``): the verdict a completion commits to, through the commitment stages.

Stages (:mod:`~reasongym.verifiers.pipeline`): the completion is segmented (a new turn or question ends it;
after ``</think>`` the answer part first, the think block only when the answer part claims nothing), then:

1. **A decisive claim** (a box, an ``<answer>`` tag, a JSON answer, an answer phrase such as "The answer is
   no" or "Answer: yes") decides when it starts with a verdict word, or holds verdict words of one polarity
   only. A revision after it replaces it ("The answer is yes. Wait, actually, no." answers no), as for every
   kind (:mod:`~reasongym.verifiers.commitment`).
2. **Else, with ``fallback``, the last verdict word of the text** that is a claim:

   - the words yes/no/true/false count when they open a sentence ("Yes, because ..."; "No it is not") or
     stand before punctuation ("So, no.", "I am not sure, but yes."), but not "no" used as a determiner
     ("no one", "no longer", "there is no way");
   - verdicts in other words and languages count only when they open a sentence (or follow a conclusion:
     "so", "therefore", "thus", "hence", "所以", "因此", "поэтому", "donc", "also") and punctuation or the
     end follows them: "Correct", "Absolutely", "Certainly", "Indeed", "Of course", "Yep", "Sure", "Right",
     "That's right", "Without a doubt", "No doubt", "Affirmative", Sí, Oui, Ja, Sim, Evet, Tak, Ano, Kyllä,
     Igen, Ναι, Да, はい, 네, 예, हाँ, نعم, Có, Ya, כן, 是的, 能, 可以 are yes; "Not at all", "Certainly /
     Definitely / Absolutely / Of course not", "No way", "Nope", "Nah", "Not really", "Probably not",
     "Unlikely", "Negative", "That's wrong", "Incorrect", Non, Nein, Não, Hayır, Nie, Nee, Nej, Nei, Ei,
     Nem, Ne, Όχι, Нет, いいえ, 아니요, नहीं, لا, Không, Tidak, Bukan, לא, 不是, 不能, 不会, 不可以, 没有, 否
     are no. Why: inside a sentence these words are seldom verdicts ("У змей ног нет." says snakes have no
     legs; "the correct value is 4");
   - a word that is only mentioned is no claim (:data:`~reasongym.verifiers.claims.WORD_MENTIONS`: quoted,
     after "e.g.", in brackets, after "say", after a language's name, opening a list item, in a
     concession), nor one after the label of a check, a note, a step or an example ("Check: right." claims nothing;
     "Answer:", "Conclusion:", "In short:" label answers), nor a word of another language
     followed by a colon ("예:" is "e.g.:");
   - an affirmation that opens a negated clause claims nothing ("Indeed, he could not.");
   - "It is (not) true that ..." states yes (no). A whole completion "Y" or "N" is yes or no.

A negated word claims the opposite ("Not yes." and "The claim is not true." answer no, as does "isn't
true"), a qualified negation ("not exactly yes", "not necessarily true") is a hedge, and a final claim
holding both polarities ("yes or no", "yes and no", "true/false") is a hedge: wrong.
"""

from __future__ import annotations

import re

from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.claims import TAIL_CHARS, Extraction, later_phrases
from reasongym.verifiers.commitment import resolve
from reasongym.verifiers.exact import normalize_exact
from reasongym.verifiers.mentions import word_mention
from reasongym.verifiers.phrases import ANSWER_PHRASES
from reasongym.verifiers.pipeline import commit
from reasongym.verifiers.spans import clean_answer, split_sentences, strip_text_wrapper
from reasongym.verifiers.text import normalize_unicode

__all__ = ["read_yes_no", "verify_yesno"]

_POLARITY = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}
_WORD = re.compile(r"\b(yes|no|true|false)\b", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(yes|no|true|false)\s*(?:,\s*(?:or\b|and\b)?|/|\bor\b|\band\b)\s*(yes|no|true|false)\b", re.IGNORECASE
)
_FOLLOWED_BY_PUNCTUATION = re.compile(
    r"[ \t]*(?:[.,!;:)\]*\"'\n\u3001\u3002\uff0c\uff01\u2014\u060c\u061b\u06d4\u0964]|$)|(?<=[\u0e00-\u0e7f])[ \t]"
)  # also the Arabic comma, semicolon and full stop, the Devanagari danda; Thai ends a phrase with a space
# Longest first, so that "certainly not" is not read as "certainly".
_NO_WORDS = (
    r"certainly not|definitely not|absolutely not|of course not|surely not|not at all|no way|not really|"
    r"probably not|unlikely|negative|that(?:'s| is) (?:wrong|false|incorrect|not (?:right|true|correct))|"
    r"nope|nah|incorrect|false|non|nein|нет|конечно нет|ні|いいえ|違います|不是|不对|不能|不会|不可以|不可能|没有|否|"
    r"não|hayır|nie|nee|nej|nei|ei|nem|ne|όχι|아니요|아니오|아뇨|아닙니다|아니에요|जी नहीं|नहीं|नही|না|لا|không|"
    r"tidak|bukan|לא|hapana|ไม่ใช่|ไม่"
)
_YES_WORDS = (
    r"without (?:a|any) doubt|no doubt|that(?:'s| is) (?:right|correct|true)|"
    r"yep|yeah|yup|correct|absolutely|certainly|definitely|indeed|of course|affirmative|sure|right|"
    r"sí|sì|si|oui|ja|doch|да|конечно|так|はい|そうです|是的|对的|对|能|可以|sim|evet|tak|taip|ano|kyllä|igen|ναι|"
    r"네|예|맞아요|맞습니다|그렇습니다|जी हाँ|हाँ|हां|হ্যাঁ|نعم|có|ya|oo|ndiyo|כן|ใช่"
)
_OTHER_WORD = re.compile(rf"(?<!\w)(?:({_NO_WORDS})|({_YES_WORDS}))(?!\w)", re.IGNORECASE)
_CLAIM_THAT = re.compile(
    r"(?:^|[.!?\n][\s*]*)it(?:\s+is|'s)\s+(not\s+)?(true|false)\s+that\b", re.IGNORECASE
)  # "It is not true that ...": a verdict stated as a claim about the statement
_SENTENCE_START = re.compile(r"(?:^|[.!?:\n\u3002\uff01])[\s*\"'>#-]*$")
_CONCLUSION_BEFORE = re.compile(
    r"(?:\b(?:so|therefore|thus|hence|donc|also|поэтому|итак|entonces|portanto|quindi)|所以|因此|因而)[\s,，、*]*$",
    re.IGNORECASE,
)
_OTHER_LABEL_BEFORE = re.compile(
    r"(?:^|[\n.!?])[ \t*#>-]*(?:check(?:ing)?|note|hint|example|translation|reasoning|explanation|question|q|"
    r"claim|statement|premise|fact|observation|assumption|analysis|hypothesis|verification|test|sanity check|"
    r"(?:step|option|case|part|item)[ \t]*\d*)[ \t*]*[:：][ \t*]*$",
    re.IGNORECASE,
)  # "Check: right." labels a check, not the answer; "Answer:", "Conclusion:", "In short:" label answers
_AS_LABEL = re.compile(r"[ \t]*[:：]")
_NEGATION = re.compile(r"\b(?:not|never|no)\b|n['’]t\b", re.IGNORECASE)
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
    if other and _FOLLOWED_BY_PUNCTUATION.match(text, other.end()) and _affirms(text, other):
        return "no" if other.group(1) else "yes"
    claims = {_claim(text, match) for match in _WORD.finditer(text)}
    if len(claims) == 1:
        return claims.pop()
    return "hedge" if claims else None


def _opens(text: str, start: int) -> bool:
    """Whether a word at ``start`` opens a sentence or follows a conclusion ("So, no.", "所以不是。")."""
    before = text[max(0, start - 12) : start]
    return bool(_SENTENCE_START.search(before) or _CONCLUSION_BEFORE.search(before)) or start == 0


def _after_other_label(text: str, start: int) -> bool:
    """Whether the word follows a label that is no answer's ("Check: right."; "Answer: no" is fine)."""
    return _OTHER_LABEL_BEFORE.search(text, max(0, start - 40), start) is not None


def _affirms(text: str, match: re.Match[str]) -> bool:
    """False for an affirmation that opens a negated clause ("Indeed, he could not."): no verdict."""
    if match.group(1) or not text.startswith(",", match.end()):
        return True
    clause_end = min(
        (i for i in (text.find(mark, match.end()) for mark in ".!?\n") if i != -1), default=len(text)
    )
    return _NEGATION.search(text, match.end(), clause_end) is None


def _is_claim(text: str, match: re.Match[str], other: bool) -> bool:
    """Whether a verdict word is a claim, not a mention, a label or a part of a sentence (rule 2)."""
    if word_mention(text, match.start(), match.end()) is not None or _after_other_label(text, match.start()):
        return False
    if other:
        if not (_FOLLOWED_BY_PUNCTUATION.match(text, match.end()) and _opens(text, match.start())):
            return False
        if not match.group(0).isascii() and _AS_LABEL.match(text, match.end()):
            return False  # "예:" is "e.g.:", a label
        return _affirms(text, match)
    if _FOLLOWED_BY_PUNCTUATION.match(text, match.end()):
        return True
    if not _opens(text, match.start()):
        return False
    if match.group(1).casefold() != "no":
        return True
    following = _NEXT_WORD.match(text, match.end())
    return following is None or following.group(1).casefold() not in _DETERMINER_USES


_PREDICATE_VERDICT = re.compile(
    r"(?:(?:so|therefore|thus|hence)[ \t,]+)?(?:the[ \t]+(?:claim|statement|assertion)|this|that|it)[ \t]+"
    r"(?:(holds|stands|is[ \t]+(?:true|correct|right|possible|valid|accurate))"
    r"|(does[ \t]+not[ \t]+hold|doesn't[ \t]+hold|is[ \t]+(?:false|incorrect|wrong|impossible|not[ \t]+(?:true|possible|correct))))"
    r"[ \t]*[.!]?[ \t]*$",
    re.IGNORECASE,
)  # a last sentence that judges the claim: "..., so the claim holds." is yes, "This is impossible." no


def _predicate_verdict(tail: str) -> str | None:
    """'yes' or 'no' when the last sentence judges the claim itself (rule 2), else None."""
    last = split_sentences(tail)
    verdict = _PREDICATE_VERDICT.search(last[-1][1]) if last else None
    if verdict is None or verdict.start() > 0 and last[-1][1][verdict.start() - 1] not in " \t,":
        return None
    return "yes" if verdict.group(1) else "no"


def _last_verdict(text: str) -> str | None:
    """'yes', 'no', 'hedge' or None from the last verdict word of the text that is a claim (rule 2)."""
    tail = normalize_unicode(text[-TAIL_CHARS:])
    last = None
    for match in _WORD.finditer(tail):
        if _is_claim(tail, match, other=False):
            last = match
    other = None
    for match in _OTHER_WORD.finditer(tail):
        if _is_claim(tail, match, other=True):
            other = match
    if other is not None and (last is None or other.start() > last.start()):
        return "no" if other.group(1) else "yes"
    if last is None:
        claims = list(_CLAIM_THAT.finditer(tail))  # "It is not true that he went." answers no
        if not claims:
            return _predicate_verdict(tail)
        negated, word = claims[-1].group(1), _POLARITY[claims[-1].group(2).casefold()]
        return _OPPOSITE[word] if negated else word
    hedge = None
    for hedge in _HEDGE.finditer(tail, max(0, last.start() - 40)):  # noqa: B007 - the last one decides
        pass
    if hedge is not None and hedge.end() >= last.end() and _is_hedge(tail, hedge):
        return "hedge"
    return _claim(tail, last)


def _read_claim(claim: Extraction, after: str) -> tuple[str | None, str] | None:
    """The verdict of a decisive claim (rule 1), revised by what follows it; None: the claim holds none."""
    if claim.method in ("truncated", "too_many_boxes", "box_too_long"):
        return None, claim.reason
    if claim.sprayed and len({_polarity_of_span(candidate) for candidate in claim.candidates}) > 1:
        return "hedge", "boxes"
    polarity = _polarity_of_span(claim.answer) if claim.answer is not None else None
    if polarity is None:
        return None
    how = "box" if claim.method == "boxed" else "answer phrase"
    resolution = resolve(polarity, after, _last_verdict, _later_polarities)
    if resolution.how == "hedged":
        return "hedge", f"{how}, then an answer phrase of the other polarity"
    return resolution.value, how if resolution.how == "claim" else f"{how}, then a revision"


def _later_polarities(text: str) -> list[str]:
    """The verdicts of the answer phrases after the decisive claim (commitment rule 2)."""
    polarities = (_polarity_of_span(answer) for answer in later_phrases(text, ANSWER_PHRASES))
    return [polarity for polarity in polarities if polarity is not None]


def read_yes_no(completion: str, *, fallback: bool = True) -> tuple[str | None, str]:
    """Find a completion's final yes/no claim (rules in the module docstring).

    Args:
        completion: A full model output.
        fallback: Read the last verdict word when no box or phrase gives the answer.

    Returns:
        ``(claim, how)``: claim is "yes", "no", "hedge" or None; ``how`` says where it came from.

    Example:
        >>> read_yes_no("Yes, because no one lives there.")
        ('yes', 'last verdict word')
    """
    letter = _ONE_LETTER.fullmatch(completion)
    if letter is not None:  # "Y" or "N" and nothing else: a one-letter verdict
        return ("yes" if letter.group(1).casefold() == "y" else "no"), "a one-letter verdict"

    def plain(part: str) -> tuple[str | None, str] | None:
        verdict = _last_verdict(part)
        return None if verdict is None else (verdict, "last verdict word")

    found = commit(completion, _read_claim, plain if fallback else None)
    if found is not None:
        return found
    return None, "last verdict word" if fallback else "no box or answer phrase with yes/no"


def verify_yesno(completion: str, gold: str, *, fallback: bool = True) -> Verdict:
    """Grade a yes/no completion (rules in the module docstring).

    Args:
        completion: A full model output.
        gold: "yes"/"no" (or "true"/"false"; any case).
        fallback: Read the last verdict word when no box or phrase gives the answer.

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
