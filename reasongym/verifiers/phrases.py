"""The answer phrases: the words that introduce a final answer, one row per language, and the math kind's own.

Every kind reads :data:`ANSWER_PHRASE`, one row per language: ``english`` "The answer is", "Final Answer:",
"Answer:"; ``gsm8k`` "####"; ``chinese`` 答案是; ``japanese`` 答えは, 正解は; ``korean`` 정답은, 답:;
``hindi`` उत्तर:; ``french`` "Réponse :"; ``german`` "Antwort:"; ``spanish`` "La respuesta es";
``portuguese`` "A resposta é"; ``italian`` "La risposta è"; ``russian`` "Ответ:"; ``turkish`` "Doğru
cevap"; ``vietnamese`` "Đáp án là"; ``arabic`` "الإجابة هي"; ``indonesian`` "Jawaban:"; ``swahili`` "Jibu
ni". A kind may add its own words (choices add "I pick", "option is");
math also reads "The solutions are" and "The roots are" when math follows them (:data:`MATH_PHRASE`). Each
language is one :class:`~reasongym.verifiers.rules.Rule` row of :data:`ANSWER_PHRASES`, so a language is
added by adding a row (and a test row that needs it). After the phrases of languages that write a decimal
comma (:data:`DECIMAL_COMMA_LANGUAGES`), "2,5" is read as 2.5; after an English phrase it is a list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reasongym.verifiers.rules import Rule, union

__all__ = [
    "ANSWER_PHRASE",
    "ANSWER_PHRASES",
    "DECIMAL_COMMA_LANGUAGES",
    "DECIMAL_COMMA_PHRASE",
    "MATH_PHRASE",
    "MATH_PHRASES",
    "SOLUTIONS",
    "may_hold_answer_phrase",
    "phrase_matches",
]

ANSWER_PHRASES = (
    Rule(
        "english",
        re.compile(
            r"\b(?:final\s+answer|answer)\s*(?:\*\*\s*)?(?:is\b|was\b|(?:would|should|will|must)\s+be\b|[:=])"
            r"|(?m:^[ \t#*]*final\s+answer[ \t*:]*$)",
            re.IGNORECASE,
        ),
        "'The answer is', 'Final Answer:', 'Answer:' introduce the answer in English.",
        hints=("answer",),
    ),
    Rule("gsm8k", re.compile(r"####"), "GSM8K's solutions end '#### <answer>'.", hints=("####",)),
    Rule(
        "chinese",
        re.compile(r"(?:正确)?答案(?:是|为|[:：])"),
        "答案是 / 答案：'the answer is'.",
        hints=("答案",),
    ),
    Rule(
        "japanese",
        re.compile(r"答え(?:は|[:：])|正解(?:は|[:：])"),
        "答えは / 正解は 'the answer is'.",
        hints=("答え", "正解"),
    ),
    Rule(
        "korean",
        re.compile(r"정답(?:은|는|[:：])|(?<![가-힣])답(?:은|[:：])"),
        "정답은 / 답: 'the answer is'.",
        hints=("답",),
    ),
    Rule("hindi", re.compile(r"(?:सही\s+)?उत्तर\s*[:：]"), "उत्तर: 'answer:'.", hints=("उत्तर",)),
    Rule(
        "french",
        re.compile(r"\b(?:la\s+bonne\s+)?r[ée]ponse(?:\s+(?:finale|correcte))?\s*(?:est\b|:)", re.IGNORECASE),
        "'Réponse :' and 'La bonne réponse est' ('Réponse : mardi' was compared whole).",
        hints=("ponse",),
    ),
    Rule(
        "german",
        re.compile(r"\b(?:die\s+(?:richtige\s+)?)?antwort\s*(?:ist\b|lautet\b|:)", re.IGNORECASE),
        "'Antwort:' and 'Die richtige Antwort ist' ('Antwort: Berlin' was compared whole).",
        hints=("antwort",),
    ),
    Rule(
        "spanish",
        re.compile(
            r"\b(?:la\s+)?respuesta(?:\s+(?:correcta|final))?\s*(?:es\b(?:\s+la\b)?|:)", re.IGNORECASE
        ),
        "'La respuesta (correcta) es' / 'Respuesta:'.",
        hints=("respuesta",),
    ),
    Rule(
        "portuguese",
        re.compile(r"\b(?:a\s+)?resposta(?:\s+(?:correta|final))?\s*(?:[ée]\b|:)", re.IGNORECASE),
        "'A resposta (correta) é' / 'Resposta:'.",
        hints=("resposta",),
    ),
    Rule(
        "italian",
        re.compile(
            r"\b(?:la\s+)?risposta(?:\s+(?:corretta|finale))?\s*(?:[èe]\b(?:\s+la\b)?|:)", re.IGNORECASE
        ),
        "'La risposta (corretta) è (la)' / 'Risposta:'.",
        hints=("risposta",),
    ),
    Rule(
        "russian",
        re.compile(r"(?:правильный\s+)?ответ\s*(?:[:—]|-\s|это\b)", re.IGNORECASE),
        "'Правильный ответ: C' ('the correct answer:').",
        hints=("ответ",),
    ),
    Rule(
        "turkish",
        re.compile(r"\b(?:doğru\s+)?cevap(?:\s*:|\s+(?=\(?[A-Za-z0-9]))", re.IGNORECASE),
        "'Doğru cevap C'.",
        hints=("cevap",),
    ),
    Rule(
        "vietnamese",
        re.compile(r"\bđáp\s+án(?:\s+đúng)?\s*(?:là\b|:)", re.IGNORECASE),
        "'Đáp án đúng là C' ('the right answer is').",
        hints=("đáp án", "đáp  án"),
    ),
    Rule(
        "arabic",
        re.compile(r"الإجابة(?:\s+الصحيحة)?\s*(?:هي|:)"),
        "'الإجابة الصحيحة هي' ('the right answer is').",
        hints=("الإجابة",),
    ),
    Rule(
        "indonesian",
        re.compile(r"\bjawaban(?:\s+yang\s+benar)?\s*(?:adalah\b|:)", re.IGNORECASE),
        "'Jawaban: C' / 'Jawaban yang benar adalah'.",
        hints=("jawaban",),
    ),
    Rule(
        "swahili",
        re.compile(r"\bjibu(?:\s+sahihi)?\s*(?:ni\b|:)", re.IGNORECASE),
        "'Jibu sahihi ni C'.",
        hints=("jibu",),
    ),
)
"""Phrases that introduce a final answer, one row per language; every kind reads them."""
ANSWER_PHRASE = union(ANSWER_PHRASES)
"""Any answer phrase ("The answer is", "Final Answer:", "#### ", 答案是, "Réponse :", ...)."""
DECIMAL_COMMA_LANGUAGES = frozenset(
    {"french", "german", "spanish", "portuguese", "italian", "russian", "turkish", "vietnamese", "indonesian"}
)
"""Languages whose numbers use a decimal comma: after their phrases "2,5" is 2.5 (in English, "2,5" is a list)."""
DECIMAL_COMMA_PHRASE = union(rule for rule in ANSWER_PHRASES if rule.name in DECIMAL_COMMA_LANGUAGES)
"""Any phrase of a language that writes a decimal comma."""
SOLUTIONS = Rule(
    "solutions",
    re.compile(
        r"\b(?:solutions|roots|zeros|solution\s+set)\s+(?:are|is)(?=[ \t]*(?:\$|\\[(\[]|[-+]?\d|[a-z][ \t]*=))",
        re.IGNORECASE,
    ),
    "'The solutions are $x = 2$ and $x = 3$' introduces a math answer.",
    hints=("solution", "root", "zero"),
)
"""Math's own phrase: "The solutions are", "The roots are", when math follows."""
MATH_PHRASES = (*ANSWER_PHRASES, SOLUTIONS)
"""The answer phrases of math answers."""
MATH_PHRASE = union(MATH_PHRASES)
"""The answer phrases of math answers: also "The solutions are", "The roots are", when math follows."""


def phrase_matches(rows: tuple[Rule, ...], text: str) -> Iterator[re.Match[str]]:
    """Every match of the rows in ``text``, in order of position; rows whose hints are absent are skipped."""
    lowered = text.lower()
    found = [match for rule in rows if rule.may_match(lowered) for match in rule.pattern.finditer(text)]
    yield from sorted(found, key=lambda match: (match.start(), -match.end()))


_ANSWER_HINTS = (
    re.compile("|".join(re.escape(hint) for rule in ANSWER_PHRASES for hint in rule.hints))
    if all(rule.hints for rule in ANSWER_PHRASES)
    else None  # a row without hints may match anywhere
)
"""Every hint of the answer phrase rows in one pattern: a lower-cased text holds one where some row may match."""


def may_hold_answer_phrase(text: str) -> bool:
    """False only when :data:`ANSWER_PHRASE` cannot match ``text``: an ASCII text that holds no row's hint.

    Searching the union of every language's row costs about half a microsecond per character; one search
    for the rows' hints (:meth:`~reasongym.verifiers.rules.Rule.may_match`) settles most texts first. Only
    for ASCII text: case-insensitive matching pairs some letters that ``str.lower`` keeps apart (the long s
    "ſ" matches "s", the Kelvin sign matches "k"), so any other text is always searched.
    """
    if not text.isascii() or _ANSWER_HINTS is None:
        return True
    return _ANSWER_HINTS.search(text.lower()) is not None
