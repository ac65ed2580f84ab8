"""AIME-style integer answers in 0-999."""

from __future__ import annotations

import pytest

from reasongym.verifiers.base import Outcome
from reasongym.verifiers.integer import parse_integer_answer, verify_integer

C, W, U = Outcome.CORRECT, Outcome.WRONG, Outcome.UNPARSEABLE

ROWS = [
    # (completion, gold, outcome)
    # accepted forms
    (r"\boxed{42}", "42", C),
    (r"\boxed{042}", "42", C),
    (r"\boxed{42}", "042", C),
    ("The answer is $42$.", "42", C),
    ("The answer is 42.0", "42", C),  # integral decimal: exactly 42
    ("The answer is 42.000.", "42", C),
    (r"\boxed{m+n = 42}", "42", C),
    (r"\boxed{x=42}", "42", C),
    (r"\boxed{\text{42}}", "42", C),
    ("The answer is 42 ways.", "42", C),
    (r"\boxed{+42}", "42", C),
    (r"\boxed{0}", "0", C),
    (r"\boxed{000}", "0", C),
    (r"\boxed{999}", "999", C),
    ("#### 7", "7", C),
    ("We get 3 + 4 = 7", "7", C),  # last number fallback
    (r"\boxed{42} and again \boxed{042}", "42", C),  # same value
    # wrong values
    (r"\boxed{43}", "42", W),
    (r"\boxed{420}", "42", W),
    (r"\boxed{4}", "42", W),
    ("The answer is 42.5", "42", W),
    (r"\boxed{-42}", "42", W),
    (r"\boxed{1000}", "42", W),
    (r"\boxed{" + "9" * 5000 + "}", "42", W),
    (r"\boxed{\frac{84}{2}}", "42", C),  # issue 50: an exact, unevaluated integer is that integer
    (r"\boxed{\frac{85}{2}}", "42", W),  # not an integer
    (r"\boxed{4.2e1}", "42", C),  # 42 exactly
    (r"\boxed{42^2}", "42", W),
    # hedges and spraying
    (r"\boxed{42 or 43}", "42", W),
    (r"\boxed{41, 42}", "42", W),
    ("The answer is 42 or 43.", "43", W),
    (r"\boxed{41} \boxed{42}", "42", W),
    # no answer
    (r"\boxed{x}", "42", U),
    ("no idea", "42", U),
    (r"so \boxed{4", "4", U),  # truncated
    ("", "42", U),
    # gold ungradable
    (r"\boxed{42}", "1000", None),
    (r"\boxed{42}", "-1", None),
    (r"\boxed{42}", "42.5", None),
    (r"\boxed{42}", "forty-two", None),
    (r"\boxed{42}", "", None),
]


@pytest.mark.parametrize(("completion", "gold", "outcome"), ROWS)
def test_verify_integer(completion: str, gold: str, outcome: Outcome | None) -> None:
    verdict = verify_integer(completion, gold)
    if outcome is None:
        assert verdict.correct is None
    else:
        assert verdict.outcome == outcome, verdict.reason
        assert verdict.correct == (outcome == C)


def test_fallback_off() -> None:
    assert verify_integer("We get 3 + 4 = 7", "7", last_number_fallback=False).outcome == U


@pytest.mark.parametrize(
    ("answer", "value", "problem"),
    [
        ("042", 42, ""),
        ("42.0", 42, ""),
        ("x = 5", 5, ""),
        ("-3", -3, ""),
        ("5^\\circ", 5, ""),
        ("7 or 8", None, "more than one number"),
        ("3.5", None, "not an integer"),
        ("\\sqrt{2}", None, "not an integer"),
        ("abc", None, "no digits"),
        ("1" * 4300, 10**4, ""),  # capped, never converted digit by digit
    ],
)
def test_parse_integer_answer(answer: str, value: int | None, problem: str) -> None:
    assert parse_integer_answer(answer) == (value, problem)
