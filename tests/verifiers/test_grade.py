"""Whole verdicts of the math grader's two entry points (grade.py): outcome, extracted text and reason.

Written against the survivors of mutation testing (benchmarks/README.md, "Mutation testing"): each row pins
every field of the Verdict, so a changed message, a dropped strip, a wrong outcome or a swapped branch fails.
"""

from __future__ import annotations

import pytest

import reasongym.verifiers.math.grade as grade
from reasongym.errors import ConfigError, VerifierTimeout
from reasongym.verifiers import Outcome, Verdict
from reasongym.verifiers.math.grade import verify_math_answer, verify_math_statement
from reasongym.verifiers.math.nodes import Refused

CORRECT, WRONG, UNPARSEABLE, REFUSED = Outcome.CORRECT, Outcome.WRONG, Outcome.UNPARSEABLE, Outcome.REFUSED
SPRAY = "2 different values stated together for a single-valued gold (answer spraying)"
# 10^(10^10) has 10^10 + 1 digits; the cost estimate says about 2.97e11 (it bounds, it does not compute)
HUGE = "answer refused: evaluating the answer needs about 297121486779 digits; at most 10000 are computed"
OPEN_FRAC = "unexpected the end of the answer"


@pytest.mark.parametrize(
    ("answers", "gold", "expected"),
    [
        # two values for a two-valued gold, in any order; the label "x =" is ignored; items are stripped
        (["3", " x = -5 "], "-5, 3", Verdict(True, CORRECT, "3, x = -5", "the same values in any order")),
        (["3", "-5", "7"], "-5, 3", Verdict(False, WRONG, "3, -5, 7", "3 values where the gold has 2")),
        (["1", "1"], "1, 2", Verdict(False, WRONG, "1, 1", "the answer lacks value 2 of the gold")),
        # a single-valued gold, bare or labelled, never accepts several values
        (["3", "5"], "3", Verdict(False, WRONG, "3, 5", SPRAY)),
        (["1", "2"], "x = 3", Verdict(False, WRONG, "1, 2", SPRAY)),
        # a box holding a bare list counts as its items; a tuple is one value
        (["1, 2", "3"], "1, 2, 3", Verdict(True, CORRECT, "1, 2, 3", "the same expression")),
        (["(1, 2)", "3"], "1, 2, 3", Verdict(False, WRONG, "(1, 2), 3", "2 values where the gold has 3")),
        # a labelled gold list is matched by name, a tuple in order, a set in any order
        (["1", "2"], "x = 1, y = 2", Verdict(True, CORRECT, "1, 2", "the same value for every name")),
        (["2", "1"], "(1, 2)", Verdict(False, WRONG, "2, 1", "entry 1: 2 is not 1")),
        (["2", "1"], "\\{1, 2\\}", Verdict(True, CORRECT, "2, 1", "the same values in any order")),
        # a bad answer among the values: the whole statement is unparseable or refused
        (
            ["3", "\\frac{"],
            "3, 4",
            Verdict(False, UNPARSEABLE, "3, \\frac{", f"answer not understood: {OPEN_FRAC}"),
        ),
        (["3", "10^{10^{10}}"], "3, 4", Verdict(False, REFUSED, "3, 10^{10^{10}}", HUGE)),
        # a gold that cannot be graded: correct is None (trainers skip it), nothing is shown
        (
            ["3", "4"],
            "\\frac{",
            Verdict(None, UNPARSEABLE, None, f"gold answer cannot be graded: {OPEN_FRAC}"),
        ),
        (
            ["3", "4"],
            None,
            Verdict(None, UNPARSEABLE, None, "gold answer cannot be graded: the gold is not a string"),
        ),
    ],
)
def test_statement_verdicts_are_pinned_whole(answers: list, gold: object, expected: Verdict) -> None:
    assert verify_math_statement(answers, gold) == expected


def test_a_long_statement_is_shown_cut_at_200_characters() -> None:
    answers = ["1" * 150, "2" * 150]
    verdict = verify_math_statement(answers, "1, 2")
    assert verdict.extracted == "1" * 150 + ", " + "2" * 48 + "..."  # 200 characters, then "..."
    assert (verdict.correct, verdict.outcome) == (False, WRONG)


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("3", "3", Verdict(True, CORRECT, "3", "the same expression")),
        (" 3 ", "3", Verdict(True, CORRECT, "3", "the same expression")),  # shown stripped
        ("4", "3", Verdict(False, WRONG, "4", "4 is not 3")),
        (
            "1 or 2",
            "1",
            Verdict(False, WRONG, "1 or 2", "2 answers joined by or/and for a single-valued gold (a hedge)"),
        ),
        ("\\frac{", "3", Verdict(False, UNPARSEABLE, "\\frac{", f"answer not understood: {OPEN_FRAC}")),
        ("10^{10^{10}}", "3", Verdict(False, REFUSED, "10^{10^{10}}", HUGE)),
        (None, "3", Verdict(False, UNPARSEABLE, None, "no answer was given")),
        (
            "3",
            None,
            Verdict(None, UNPARSEABLE, None, "gold answer cannot be graded: the gold is not a string"),
        ),
        ("3", "\\frac{", Verdict(None, UNPARSEABLE, None, f"gold answer cannot be graded: {OPEN_FRAC}")),
    ],
)
def test_answer_verdicts_are_pinned_whole(answer: object, gold: object, expected: Verdict) -> None:
    assert verify_math_answer(answer, gold) == expected


def test_a_long_answer_is_shown_cut_at_200_characters() -> None:
    shown = verify_math_answer("  " + "x" * 300, "3").extracted
    assert shown == "x" * 200 + "..."
    assert verify_math_answer("x" * 200, "3").extracted == "x" * 200  # exactly 200: shown whole


@pytest.mark.parametrize(
    "timeout", [0, -1.0, 0.0, float("inf"), float("nan"), True, "1", None, 86_400.5, 1e7]
)
def test_math_timeouts_outside_the_range_are_refused_by_name(timeout: object) -> None:
    message = (
        f"timeout={timeout!r}: must be a finite number of seconds > 0 and at most 86400 (for example 1.0)"
    )
    with pytest.raises(ConfigError) as caught:
        verify_math_answer("3", "3", timeout=timeout)
    assert str(caught.value) == message


@pytest.mark.parametrize("timeout", [1e-3, 1, 86_400, 86_400.0])
def test_math_timeouts_in_the_range_are_accepted(timeout: float) -> None:
    assert verify_math_answer("3", "3", timeout=timeout).correct is True


def _raising(error: BaseException):  # noqa: ANN202
    def compare(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise error

    return compare


@pytest.mark.parametrize(
    ("error", "expected_outcome", "reason"),
    [
        (VerifierTimeout("late"), Outcome.TIMEOUT, "the symbolic comparison ran past 0.25 s"),
        (Refused("too many digits"), REFUSED, "answer refused: too many digits"),
    ],
)
def test_a_comparison_that_times_out_or_is_refused_is_a_verdict(
    monkeypatch: pytest.MonkeyPatch, error: BaseException, expected_outcome: Outcome, reason: str
) -> None:
    monkeypatch.setattr(grade, "settled_match", _raising(error))  # one answer's comparison (remembered.py)
    monkeypatch.setattr(grade, "answers_equal", _raising(error))  # a statement's
    # A timeout is ungradable (correct None), never a wrong answer (issue 28, item 10).
    correct = None if expected_outcome is Outcome.TIMEOUT else False
    assert verify_math_answer(" 3 ", "3", timeout=0.25) == Verdict(correct, expected_outcome, "3", reason)
    statement = verify_math_statement(["1", " 2 "], "1, 2", timeout=0.25)
    assert statement == Verdict(correct, expected_outcome, "1, 2", reason)


@pytest.fixture
def comparison_timeouts(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The time limit of every comparison the grader asks for, in order."""
    seen: list[float] = []
    original_match, original_equal = grade.settled_match, grade.answers_equal

    def settled_match(gold, answer, trees, timeout):  # noqa: ANN001, ANN202
        seen.append(timeout)
        return original_match(gold, answer, trees, timeout)

    def answers_equal(gold, pred, *, timeout):  # noqa: ANN001, ANN202
        seen.append(timeout)
        return original_equal(gold, pred, timeout=timeout)

    monkeypatch.setattr(grade, "settled_match", settled_match)  # one answer's comparison (remembered.py)
    monkeypatch.setattr(grade, "answers_equal", answers_equal)  # a statement's
    return seen


def test_the_comparison_gets_the_callers_timeout(comparison_timeouts: list[float]) -> None:
    seen = comparison_timeouts
    verify_math_answer("3", "3", timeout=0.5)
    verify_math_statement(["1", "2"], "1, 2", timeout=0.75)
    assert seen == [0.5, 0.75]


@pytest.mark.parametrize("gold", ["x = 1, 2", "S = \\{1, 2\\}"])
def test_a_labelled_gold_list_takes_several_values(gold: str) -> None:
    assert verify_math_statement(["2", "1"], gold) == Verdict(
        True, CORRECT, "2, 1", "the same values in any order"
    )


def test_the_default_time_limit_is_one_second(comparison_timeouts: list[float]) -> None:
    seen = comparison_timeouts
    verify_math_answer("3", "3")
    verify_math_statement(["1", "2"], "1, 2")
    assert seen == [1.0, 1.0]
