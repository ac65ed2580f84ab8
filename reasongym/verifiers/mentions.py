"""What is never a claim: answer phrases and words that a completion only mentions.

The claim stage (:mod:`~reasongym.verifiers.claims`) skips these, and so do the kinds' plain claims and
the commitment stage's revisions. An answer phrase in a sentence that reports what someone might answer commits to
nothing, unless a contrast follows the report ("C would be tempting, but ..., so the answer is D"):

- ``hypothetical``: "might/may/could/would think, guess, say, assume, expect, conclude" (not after "I" or
  "we": "I would say the answer is 12" commits).
- ``tempting``: "tempting", "naive(ly)", "at first glance/sight".
- ``mistaken``: "mistakenly", "wrongly", "incorrectly", "a common mistake/error".
- ``reported``: "some (people) say/think/claim".
- ``not that``: "not that the answer is ...".

Words that a kind reads as plain claims (verdict words, labels) are mentions in these places
(:data:`WORD_MENTIONS`, checked by :func:`word_mention`):

- ``quoted``: inside quotation marks (``No. The Spanish word for yes is "sí".``).
- ``example``: after "e.g.", "for example", "such as", "예:", "例如".
- ``bracketed``: inside brackets ("Yes. Antarctica is always below zero (negative).").
- ``reported word``: after "say(s)", "said", "called", "the word for", "means", "in <language>".
- ``translation``: after a language name and a colon ("Yes. Arabic: لا.").
- ``list item``: opening an item of a numbered or bulleted list ("Yes. 1. Incorrect.").
- ``concession``: after "although", "though", "granted", "admittedly", "while", "even if".
"""

from __future__ import annotations

import re

from reasongym.verifiers.rules import Rule, union

__all__ = ["MENTION", "MENTIONS", "WORD_MENTIONS", "is_mention", "word_mention"]

MENTIONS = (
    Rule(
        "hypothetical",
        re.compile(
            r"(?<!\bi\s)(?<!\bwe\s)\b(?:might|may|could|would)\s+(?:think|guess|say|assume|expect|conclude)\b",
            re.IGNORECASE,
        ),
        "'One might think the answer is 12' reports an answer nobody commits to ('I would say' commits).",
    ),
    Rule(
        "tempting",
        re.compile(r"\btempting\b|\bnaive(?:ly)?\b|\bat\s+first\s+(?:glance|sight)\b", re.IGNORECASE),
        "'Naively, the answer is 12' introduces the answer the model is about to reject.",
    ),
    Rule(
        "mistaken",
        re.compile(
            r"\bmistakenly\b|\bwrongly\b|\bincorrectly\b|\bcommon\s+(?:mistake|error)\b", re.IGNORECASE
        ),
        "'A common mistake is to say the answer is 12' names a wrong answer.",
    ),
    Rule(
        "reported",
        re.compile(r"\bsome\s+(?:people\s+)?(?:say|think|claim)\b", re.IGNORECASE),
        "'Some say the answer is 12' reports others' answer.",
    ),
    Rule("not that", re.compile(r"\bnot\s+that\b", re.IGNORECASE), "'Not that the answer is 12' denies it."),
)
"""Words before an answer phrase, in its sentence, that make it a mention rather than a claim."""
MENTION = union(MENTIONS)
"""Any mention row."""
_CONTRAST = re.compile(r"\b(?:but|however|yet|instead)\b", re.IGNORECASE)
_MENTION_WINDOW = 80

_LANGUAGES = (
    r"arabic|chinese|mandarin|japanese|korean|hindi|greek|russian|spanish|french|german|portuguese|italian|"
    r"turkish|polish|dutch|swedish|norwegian|danish|finnish|czech|hungarian|hebrew|vietnamese|indonesian|"
    r"malay|thai|persian|farsi|latin|english|ukrainian|romanian"
)
WORD_MENTIONS = (
    Rule(
        "quoted",
        re.compile(r"[\"“«„'‘][ \t]*$"),
        "'No. The Spanish word for yes is \"sí\".' was read as yes.",
    ),
    Rule(
        "example",
        re.compile(r"(?:\be\.g\.|\bfor\s+example|\bsuch\s+as|예[ \t]*:|例如[:：]?)[ \t,:]*$", re.IGNORECASE),
        "'아니요. 예: 고래.' (예: is 'e.g.:') was read as yes.",
    ),
    Rule(
        "bracketed",
        re.compile(r"\([^()\n]{0,40}$"),
        "'Yes. Antarctica is always below zero (negative).' was read as no.",
    ),
    Rule(
        "reported word",
        re.compile(
            rf"(?<!\bi\s)(?<!\bi'd\s)(?<!\bi\swould\s)(?<!\bwe\s)\b(?:says?|said|called|means?|"
            rf"the\s+word\s+for\s+\w+(?:\s+is)?|in\s+(?:{_LANGUAGES}))[ \t,:]*$",
            re.IGNORECASE,
        ),
        "'No. Greeks say ναι.' was read as yes.",
    ),
    Rule(
        "translation",
        re.compile(rf"\b(?:{_LANGUAGES})[ \t]*:[ \t]*$", re.IGNORECASE),
        "'Yes. Arabic: لا.' was read as no.",
    ),
    Rule(
        "list item",
        re.compile(
            r"(?:^|\n)[ \t>]*(?:\d{1,3}[.)]|[-*•])[ \t]*(?:\*\*)?$|(?<=[.!?])[ \t]+\d{1,3}[.)][ \t]*(?:\*\*)?$"
        ),
        "'Yes. 1. Incorrect.' judges an item of a list, not the question.",
    ),
    Rule(
        "concession",
        re.compile(
            r"\b(?:although|though|granted|admittedly|while|whereas|even\s+if|even\s+though)[\s,*\"']*$",
            re.IGNORECASE,
        ),
        "'No. Although, yes, he was Greek, he never went there.' concedes a point, not the answer.",
    ),
)
"""Places where a word that a kind reads as a plain claim (a verdict word, a label) is only mentioned."""
_WORD_WINDOW = 40


def is_mention(text: str, start: int) -> bool:
    """Whether the answer phrase at ``start`` reports what someone might answer (:data:`MENTIONS`).

    Only the sentence that holds the phrase, at most 80 characters back, is read, so scanning every
    phrase of a megabyte of "####" stays linear.
    """
    window = max(0, start - _MENTION_WINDOW)
    sentence_start = max(window - 1, *(text.rfind(mark, window, start) for mark in ".!?\n"))
    mention = MENTION.search(text, sentence_start + 1, start)
    # "C would be tempting, but ..., so the answer is D": after a contrast the sentence makes its own claim
    return mention is not None and _CONTRAST.search(text, mention.end(), start) is None


def word_mention(text: str, start: int, end: int) -> Rule | None:
    """The :data:`WORD_MENTIONS` row that makes the word at ``text[start:end]`` a mention, or None."""
    before = text[max(0, start - _WORD_WINDOW) : start]
    if start <= _WORD_WINDOW:
        before = "\n" + before  # the text's start opens a line, as a list item needs
    for rule in WORD_MENTIONS:
        if rule.pattern.search(before):
            if rule.name == "bracketed" and ")" not in text[end : end + 80]:
                continue  # an unclosed bracket is no remark
            return rule
    return None
