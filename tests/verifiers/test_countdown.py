"""Countdown verifier: table-driven (gold, completion, expected outcome) rows, gold format, hostile input."""

from __future__ import annotations

import time

import pytest

from reasongym.errors import ConfigError
from reasongym.verifiers.base import Outcome
from reasongym.verifiers.countdown import (
    MAX_DEPTH,
    MAX_EXPRESSION_CHARS,
    CountdownPuzzle,
    format_countdown_gold,
    parse_countdown_gold,
    verify_countdown,
)

GOLD = "target=24; numbers=3,5,7,1"
AT_MOST = "target=24; numbers=3,5,7,1,9; use=at_most_once"
C, W, U, R = Outcome.CORRECT, Outcome.WRONG, Outcome.UNPARSEABLE, Outcome.REFUSED

CASES = [
    # correct, in each place an answer can be
    (GOLD, "<answer>(7 - 3) * (5 + 1)</answer>", C),
    (GOLD, r"Thinking... \boxed{(7-3)*(5+1)}", C),
    (GOLD, "Answer: (7-3)*(5+1)", C),
    (GOLD, "The answer is (5+1)*(7-3).", C),
    (GOLD, r"<answer>\boxed{(7-3)*(5+1)}</answer>", C),
    (GOLD, "<ANSWER> (7-3)*(5+1) </ANSWER>", C),
    (GOLD, "<answer>(7-3)*(5+1) = 24</answer>", C),
    (GOLD, "<answer>24 = (7-3)*(5+1)</answer>", C),
    (GOLD, r"\boxed{(7-3) \times (5+1)}", C),
    (GOLD, r"\boxed{\left(7-3\right)\cdot\left(5+1\right)}", C),
    (GOLD, "<answer>(7−3)×(5+1)</answer>", C),
    (GOLD, "<answer>7*3+5-1</answer>", W),  # 25
    (GOLD, "<answer>(1+7/3)*... </answer>", U),
    ("target=8; numbers=1,3,6", "<answer>(1+1/3)*6</answer>", W),  # 1 used twice
    ("target=8; numbers=1,3,6", "<answer>6/3*(1+3)</answer>", W),  # 3 used twice
    ("target=8; numbers=1,1,3,6", "<answer>(1+1/3)*6</answer>", C),  # fractional intermediate
    ("target=8; numbers=1,3,6", "<answer>6*(3-1)</answer>", W),  # 12
    ("target=24; numbers=1,2,3,4", "<answer>1*2*3*4</answer>", C),
    ("target=10; numbers=2,2,6", "<answer>2+2+6</answer>", C),  # repeated number, used twice
    ("target=8; numbers=2,6", "<answer>2+2+6</answer>", W),  # only one 2 available
    ("target=6; numbers=8,3,4", "<answer>8*3/4</answer>", C),
    ("target=2; numbers=1,3,5", "<answer>(1+5)/3</answer>", C),
    ("target=10; numbers=3,4,5,8", "<answer>8/4*5</answer>", W),  # 3 unused
    ("target=3; numbers=1,2,3", "<answer>3/(2-2)</answer>", W),  # 2 twice
    ("target=3; numbers=1,2,3,3", "<answer>3/(3-3)+1+2</answer>", W),  # division by zero
    # at most once
    (AT_MOST, "<answer>(7-3)*(5+1)</answer>", C),
    (AT_MOST, "<answer>9+7+5+3</answer>", C),
    (AT_MOST, "<answer>9+9+5+1</answer>", W),
    # wrong values and false claims
    (GOLD, "<answer>(7-3)*(5+1) = 25</answer>", W),
    (GOLD, "<answer>7+3+5+1</answer>", W),
    (GOLD, "<answer>7+3+5+1 = 24</answer>", W),
    (GOLD, "<answer>(7-3)*(5+1)*1</answer>", W),
    (GOLD, "<answer>24</answer>", W),
    # unparseable
    (GOLD, "", U),
    (GOLD, "I cannot solve this.", U),
    (GOLD, "<answer></answer>", U),
    (GOLD, "<answer>-7+3*5+1+... </answer>", U),
    (GOLD, "<answer>-(3-7)*(5+1)</answer>", U),  # unary minus
    (GOLD, "<answer>(7-3)(5+1)</answer>", C),  # issue 50: between brackets, multiplication is implicit
    (GOLD, "<answer>73(5+1)</answer>", U),  # and nowhere else: "73(" does not parse
    (GOLD, "<answer>7.0*3+5-1</answer>", U),
    (GOLD, "<answer>(7-3)*(5+1</answer>", U),
    (GOLD, "<answer>(7-3)*(5+1) = 24 = 24</answer>", U),
    (GOLD, "<answer>x = (7-3)*(5+1)</answer>", U),
    (GOLD, r"\boxed{(7-3)*(5+1)", U),  # truncated box
    (GOLD, "<answer>2**3*3</answer>", U),
    # injection: nothing is evaluated as Python
    (GOLD, "<answer>__import__('os').system('echo hi')</answer>", U),
    (GOLD, "<answer>(lambda: 24)()</answer>", U),
    (GOLD, "<answer>eval('24')</answer>", U),
    (GOLD, "<answer>24; import os</answer>", U),
    (GOLD, "<answer>7*3+5-1 # + 2</answer>", U),
    # answer spraying
    (GOLD, r"\boxed{7*3+5-1} or \boxed{(7-3)*(5+1)}", W),
]


@pytest.mark.parametrize(("gold", "completion", "expected"), CASES)
def test_verdicts(gold: str, completion: str, expected: Outcome) -> None:
    verdict = verify_countdown(completion, gold)
    assert verdict.outcome is expected, verdict.reason
    assert verdict.correct is (expected is C)


@pytest.mark.parametrize(
    ("gold", "puzzle"),
    [
        ("target=24; numbers=3,5,7,1", CountdownPuzzle(24, (3, 5, 7, 1))),
        (" numbers = 2, 2 ;target= 4 ", CountdownPuzzle(4, (2, 2))),
        ("target=24; numbers=3,5; use=at_most_once", CountdownPuzzle(24, (3, 5), "at_most_once")),
        ("target=-3; numbers=1", CountdownPuzzle(-3, (1,))),
    ],
)
def test_gold_round_trip(gold: str, puzzle: CountdownPuzzle) -> None:
    assert parse_countdown_gold(gold) == puzzle
    assert parse_countdown_gold(format_countdown_gold(puzzle.target, puzzle.numbers, puzzle.use)) == puzzle


@pytest.mark.parametrize(
    "gold",
    [
        "",
        "24",
        "target=24",
        "numbers=1,2",
        "target=24; numbers=",
        "target=2.5; numbers=1,2",
        "target=24; numbers=1,-2",
        "target=24; numbers=1,2; use=twice",
        "target=24; target=25; numbers=1,2",
        "target=24; numbers=1,2; extra=3",
        "target=24; numbers=" + ",".join(["1"] * 100),
    ],
)
def test_malformed_gold_is_ungradable(gold: str) -> None:
    verdict = verify_countdown("<answer>1+2</answer>", gold)
    assert verdict.correct is None
    assert "gold" in verdict.reason


def test_format_rejects_bad_rule() -> None:
    with pytest.raises(ConfigError, match="use=.twice. is not one of"):
        format_countdown_gold(24, [1, 2], use="twice")


def test_extracted_and_reason_name_the_problem() -> None:
    verdict = verify_countdown("<answer>7+3+5+1</answer>", GOLD)
    assert verdict.extracted == "7+3+5+1"
    assert "equals 16, not 24" in verdict.reason
    unused = verify_countdown("<answer>(7-3)*6</answer>", "target=24; numbers=7,3,6,2")
    assert "unused: 2" in unused.reason


def test_last_answer_tag_wins() -> None:
    text = "<answer>7+3+5+1</answer> wait, better: <answer>(7-3)*(5+1)</answer>"
    assert verify_countdown(text, GOLD).correct is True
    reversed_order = "<answer>(7-3)*(5+1)</answer> no: <answer>7+3+5+1</answer>"
    assert verify_countdown(reversed_order, GOLD).correct is False


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("<answer>" + "1+" * MAX_EXPRESSION_CHARS + "1</answer>", R),
        ("<answer>" + "(" * (MAX_DEPTH + 1) + "24" + ")" * (MAX_DEPTH + 1) + "</answer>", R),
        ("<answer>" + "(" * (MAX_DEPTH - 1) + "(7-3)*(5+1)" + ")" * (MAX_DEPTH - 1) + "</answer>", C),
        ("<answer>" + "9" * 400 + "</answer>", W),
    ],
)
def test_size_caps(completion: str, expected: Outcome) -> None:
    assert verify_countdown(completion, GOLD).outcome is expected


@pytest.mark.parametrize(
    "completion",
    [
        "<answer>" * 200_000,
        "</answer>" * 200_000,
        "<answer>" + "(" * 500_000,
        r"\boxed{" * 100_000,
        "x" * 1_000_000 + "<answer>(7-3)*(5+1)</answer>",
        "1+" * 500_000,
    ],
)
def test_huge_inputs_are_fast(completion: str) -> None:
    start = time.perf_counter()
    verdict = verify_countdown(completion, GOLD)
    assert time.perf_counter() - start < 2.0
    assert verdict.correct in (True, False)
