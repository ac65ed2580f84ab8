"""Multiple choice: labels, option texts, hedges, pronoun pitfalls, choice formats."""

from __future__ import annotations

import re

import pytest

from reasongym.errors import ConfigError
from reasongym.verifiers.base import Outcome
from reasongym.verifiers.choice import make_choice_set, verify_choice

CSQA = [("A", "bank"), ("B", "library"), ("C", "department store"), ("D", "mall"), ("E", "new york")]
C, W, U = Outcome.CORRECT, Outcome.WRONG, Outcome.UNPARSEABLE

ROWS = [
    # (completion, gold, outcome) with the CSQA options above
    # label formats
    ("B", "B", C),
    ("(B)", "B", C),
    ("B)", "B", C),
    ("B.", "B", C),
    ("[B]", "B", C),
    ("**B**", "B", C),
    ("**B.**", "B", C),
    (r"\boxed{B}", "B", C),
    (r"$\boxed{\text{B}}$", "B", C),
    (r"\boxed{(B) library}", "B", C),
    ("The answer is B", "B", C),
    ("<think>maybe \\boxed{A}</think>\nThe answer is B.", "B", C),  # after </think> first
    ("<think>maybe \\boxed{B}</think>\nThe answer is A.", "B", W),
    (r"First \boxed{A}, no wait: it is \boxed{B}.", "B", C),  # the last box, not spraying
    ("The answer is (B).", "B", C),
    ("Answer: B", "B", C),
    ("Answer: Option B", "B", C),
    ("**Answer:** B", "B", C),
    ("The correct answer is: B) library", "B", C),
    ("Final Answer: B", "B", C),
    ("I choose B.", "B", C),
    ("The answer is B because libraries lend books.", "B", C),
    ("the answer is (b)", "B", C),
    ("Reasoning...\nB. library", "B", C),
    ("Reasoning...\nB", "B", C),
    ("Reasoning...\nlibrary", "B", C),
    # label with text: the text must belong to that label
    ("B: library", "B", C),
    ("Answer: B: department store", "B", W),
    ("Answer: (A) library", "B", W),
    ("Answer: (A) library", "A", W),
    # option text alone (case, punctuation, articles)
    ("The answer is library.", "B", C),
    ("The answer is Department  Store!", "C", C),
    ("The answer is a bank.", "A", C),
    ("The answer is the mall", "D", C),
    ("The answer is New York.", "E", C),
    ("The answer is library", "C", W),
    # pronoun and article pitfalls
    ("I think the answer is B", "B", C),
    ("I think the answer is B", "I", None),  # "I" is no label: gold ungradable
    ("A good choice is C", "C", C),
    ("A good choice is C", "A", W),
    ("The answer is A library", "B", C),  # "A" is the article here
    ("Reasoning...\nA good place", "A", U),
    ("a", "A", C),
    # hedges are wrong even when they include the gold
    ("The answer is C or D", "C", W),
    ("The answer is C, D", "D", W),
    ("The answer is C and D", "C", W),
    ("The answer is C/D", "C", W),
    ("Answer: either B or C", "B", W),
    ("The answer is library or bank", "B", W),
    ("The answer is library, bank", "B", W),
    (r"\boxed{B} \boxed{C}", "C", W),
    (r"\boxed{B} then \boxed{B: library}", "B", C),  # same option twice is fine
    # labels listed one after another (issue 28, item 10: "(B) (C) (C)" was graded B)
    ("(B) (C) (C)", "B", W),
    ("The answer is (B) (C) (C)", "B", W),
    ("The answer is (B) (C)", "C", W),
    ("Answer: B) C)", "B", W),
    ("Answer: [B] [D]", "B", W),
    ("The answer is (B) (B)", "B", C),  # the same option twice is one pick
    ("The answer is (B) (library)", "B", C),
    ("The answer is B (C is tempting, but wrong).", "B", C),  # a remark about another option
    # no option named
    ("I am not sure.", "B", U),
    ("The answer is ignorance", "B", U),
    (r"\boxed{42}", "B", U),
    (r"The answer is \boxed{B", "B", U),  # truncated
    ("", "B", U),
    # the answer names another option
    ("The answer is E.", "B", W),
    ("Let me reason about (B) library... The answer is (C).", "B", W),
]


@pytest.mark.parametrize(("completion", "gold", "outcome"), ROWS)
def test_verify_choice_csqa(completion: str, gold: str, outcome: Outcome | None) -> None:
    verdict = verify_choice(completion, gold, CSQA)
    if outcome is None:
        assert verdict.correct is None
    else:
        assert verdict.outcome == outcome, verdict.reason
        assert verdict.correct == (outcome == C)


def test_correct_verdict_reports_the_label() -> None:
    verdict = verify_choice("The answer is department store", "C", CSQA)
    assert (verdict.extracted, verdict.reason) == ("C", "Picked option C, the gold.")


def test_ignorance_example_from_the_issue() -> None:
    options = ["knowledge", "ignorance", "wisdom"]
    assert verify_choice("so the answer is ignorance", "B", options).correct is True
    assert verify_choice("so the answer is wisdom", "B", options).correct is False


@pytest.mark.parametrize(
    "choices",
    [
        None,
        ["bank", "library", "store"],
        {"A": "bank", "B": "library"},
        [("A", "bank"), ("B", "library")],
        [["A", "bank"], ["B", "library"]],
    ],
)
def test_choice_forms_are_equivalent(choices: object) -> None:
    assert verify_choice("Answer: (B)", "B", choices).correct is True  # type: ignore[arg-type]
    assert verify_choice("Answer: (A)", "B", choices).correct is False  # type: ignore[arg-type]


def test_numeric_labels() -> None:
    options = [("1", "red"), ("2", "green"), ("10", "blue")]
    assert verify_choice("The answer is 10", "10", options).correct is True
    assert verify_choice("The answer is (1)", "10", options).correct is False
    assert verify_choice("The answer is green", "2", options).correct is True


@pytest.mark.parametrize(
    ("gold", "correct"), [("B", True), ("(B)", True), ("b", True), (" B ", True), ("F", None), ("", None)]
)
def test_gold_forms(gold: str, correct: bool | None) -> None:
    assert verify_choice("Answer: B", gold).correct is correct


def test_fallback_off_ignores_the_last_line() -> None:
    assert verify_choice("Reasoning\nB", "B", fallback=False).outcome == U
    assert verify_choice("Answer: B", "B", fallback=False).correct is True


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ("ABCDE", "choices must be a sequence or mapping, not the string 'ABCDE'"),
        ([("A", "x"), ("a", "y")], "label 'a' appears more than once"),
        ([("", "x")], "label '' must be non-empty"),
        ([3], "choices[0] = 3: expected an option text, a (label, text) pair or a"),
        ([{"label": "A"}], "choices[0] = {'label': 'A'}: expected an option text"),
        ({"label": ["A", "B"], "text": ["x"]}, "must be lists of the same length"),
        ([], "choices is empty"),
        (["t"] * 27, "27 texts given; at most 26"),
    ],
)
def test_bad_choices_raise_config_error(choices: object, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        make_choice_set(choices)  # type: ignore[arg-type]
