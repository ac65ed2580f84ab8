"""The commitment stages and the kind registry: every rule row is listed where its stage says what it reads.

Issue 50: each stage (segment, claims, commitment) keeps its rules as rows; adding a rule is adding a row with
a test. These checks keep the stage docstrings and the tables from drifting apart, and pin the registry's
contract: a new kind is one registration, and every list of kinds follows it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from reasongym.envs.problem import answer_types
from reasongym.errors import ConfigError
from reasongym.verifiers import (
    Outcome,
    Verdict,
    choice,
    commitment,
    mentions,
    phrases,
    pipeline,
    segment,
    verify,
)
from reasongym.verifiers.kinds import KindOptions, get_kind, kind_names, register_kind, unregister_kind
from reasongym.verifiers.rules import Rule
from reasongym.verifiers.version import verifier_version

TABLES: list[tuple[ModuleType, tuple[Rule, ...]]] = [
    (segment, segment.TURN_ENDS),
    (segment, segment.NEW_QUESTIONS),
    (segment, (segment.MARKED_CANDIDATES,)),
    (mentions, mentions.MENTIONS),
    (mentions, mentions.WORD_MENTIONS),
    (commitment, commitment.REVISIONS),
    (commitment, commitment.ASIDES),
    (phrases, phrases.ANSWER_PHRASES),
]


@pytest.mark.parametrize(("module", "table"), TABLES, ids=lambda value: getattr(value, "__name__", ""))
def test_every_rule_row_is_listed_in_its_stage_docstring(module: ModuleType, table: tuple[Rule, ...]) -> None:
    listed = module.__doc__ or ""
    missing = [rule.name for rule in table if f"``{rule.name}``" not in listed]
    assert not missing, f"{module.__name__} does not list the rows {missing} in its docstring"
    assert all(rule.why for rule in table)
    assert len({rule.name for rule in table}) == len(table)


PHRASE_TEXTS = [
    "The answer is 5.",
    "FINAL ANSWER: 12",
    "Final Answer\n42",
    "so the answer must be 7",
    "#### 1,234",
    "La bonne reponse est 3",
    "Die richtige Antwort lautet 4",
    "La respuesta es 9",
    "A resposta correta: 2,5",
    "La risposta e 8",
    "Dogru cevap: B",
    "Jawaban yang benar adalah 6",
    "Jibu sahihi ni 1",
    "\\text{The answer is } 15",
]


def _labelled_completions() -> list[str]:
    fixtures = Path(__file__).parent / "fixtures" / "pinned_verdicts.jsonl"
    rows = [json.loads(line) for line in fixtures.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row["completion"] for row in rows]


def test_the_answer_phrase_hints_settle_only_ascii_texts_without_a_phrase() -> None:
    """may_hold_answer_phrase skips the search of the union only where no row can match: checked on every
    pinned completion and on each row's own phrases (ASCII spellings)."""
    texts = PHRASE_TEXTS + _labelled_completions()
    for text in texts:
        if phrases.ANSWER_PHRASE.search(text) is not None:
            assert phrases.may_hold_answer_phrase(text), text
    assert all(phrases.ANSWER_PHRASE.search(text) for text in PHRASE_TEXTS)
    assert not phrases.may_hold_answer_phrase("\\frac{5}{2} + x^2 - 1")
    assert phrases.may_hold_answer_phrase("Ответ: 5")  # not ASCII: always searched
    assert phrases.may_hold_answer_phrase("the an\u017fwer is 5")  # "ſ" matches "s" case-insensitively


@pytest.mark.parametrize(
    "written",
    [
        "La réponse est",
        "Die Antwort ist",
        "La respuesta es",
        "A resposta é",
        "La risposta è",
        "Ответ:",
        "Doğru cevap:",
        "Đáp án là",
        "Jawaban:",
        "The answer is",
        "####",
        "答案是",
        "Jibu ni",
    ],
)
def test_the_decimal_comma_phrase_is_its_languages_rows(written: str) -> None:
    rows = [rule for rule in phrases.ANSWER_PHRASES if rule.name in phrases.DECIMAL_COMMA_LANGUAGES]
    expected = any(rule.pattern.fullmatch(written) for rule in rows)
    assert (phrases.DECIMAL_COMMA_PHRASE.fullmatch(written) is not None) == expected


def test_the_choice_phrases_are_the_answer_phrases_and_the_choice_rows() -> None:
    assert choice.CHOICE_PHRASE.search("Jawaban: C") is not None  # an answer phrase row
    assert choice.CHOICE_PHRASE.search("所以选C") is not None  # a choice row
    assert {rule.name for rule in choice.CHOICE_PHRASES} == {
        "option named",
        "pick",
        "chinese choose",
        "alternative",
        "hindi",
    }


def test_the_order_of_the_stages_lives_in_the_pipeline() -> None:
    order = [re.search(rf"\({letter}\) \*\*(\w+)\*\*", pipeline.__doc__ or "") for letter in "abcd"]
    assert [found.group(1) for found in order if found] == ["segment", "claims", "commitment", "compare"]


def _palindrome(options: KindOptions) -> object:
    def grade(completion: str, gold: str) -> Verdict:
        word = completion.strip().split()[-1].strip(".") if completion.strip() else ""
        correct = word == gold and word == word[::-1]
        return Verdict(correct, Outcome.CORRECT if correct else Outcome.WRONG, word, "palindrome check")

    return grade


def test_a_new_kind_is_one_registration_and_every_list_follows() -> None:
    register_kind("palindrome_word", version=1, description="a word that reads the same backwards")(
        _palindrome
    )
    try:
        assert "palindrome_word" in kind_names() and "palindrome_word" in answer_types()
        assert verify("The word is level.", "level", "palindrome_word").correct is True
        assert verify("The word is lever.", "level", "palindrome_word").correct is False
        assert verifier_version("palindrome_word") == "palindrome_word/v1"
    finally:
        unregister_kind("palindrome_word")
    assert "palindrome_word" not in answer_types()
    with pytest.raises(
        ConfigError, match=r"kind='palindrome_word' is not a verifier kind; valid kinds: math"
    ):
        verify("level", "level", "palindrome_word")


@pytest.mark.parametrize(
    ("name", "version", "message"),
    [
        ("math", 1, "kind 'math' is already registered; unregister_kind('math') first to replace it"),
        ("two words", 1, "kind name 'two words' must be a non-empty identifier"),
        ("fresh_kind", 0, "kind 'fresh_kind': version must be a positive int, got 0"),
        ("fresh_kind", True, "kind 'fresh_kind': version must be a positive int, got True"),
    ],
)
def test_a_bad_registration_names_the_value(name: str, version: int, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        register_kind(name, version=version, description="x")


def test_an_unknown_kind_suggests_the_nearest() -> None:
    with pytest.raises(ConfigError, match=r"kind='mathh' is not a verifier kind; .*did you mean 'math'\?"):
        get_kind("mathh")
