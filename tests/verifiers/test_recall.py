"""Issue 55: golds written by others, relations against values, number forms, and the rounding policies.

Every right form sits beside a wrong answer of the same shape, so a rule that pays everything fails here.
"""

from __future__ import annotations

import warnings

import pytest

from reasongym.errors import ConfigError
from reasongym.verifiers import verify
from reasongym.verifiers.golds import readable_gold, repair
from reasongym.verifiers.tolerance import within_tolerance
from reasongym.verifiers.version import verifier_version

GOLDS = [
    # (completion, gold, correct): golds in the hands datasets write them
    (r"\boxed{1/2}", r"\\frac{1}{2}", True),  # a JSON file escaped twice
    (r"\boxed{1/3}", r"\\frac{1}{2}", False),
    (r"\boxed{1/2}", "\x0crac{1}{2}", True),  # a loader read \f of \frac as a form feed
    (r"\boxed{1/3}", "\x0crac{1}{2}", False),
    (r"\boxed{9}", "3<sup>2</sup>", True),
    (r"\boxed{6}", "3<sup>2</sup>", False),
    (r"\boxed{(5,2),(7,2)}", "p=5,q=2;p=7,q=2", True),  # named solutions, one group per semicolon
    (r"\boxed{(2,5),(7,2)}", "p=5,q=2;p=7,q=2", False),
    (r"\boxed{6, 8}", r"6 \text{ and } 8", True),
    (r"\boxed{6, 9}", r"6 \text{ and } 8", False),
    (r"\boxed{32349}", r"So the answer is: \[ \boxed{32349} \]", True),  # a worked solution as the gold
    (r"\boxed{32348}", r"So the answer is: \[ \boxed{32349} \]", False),
    (r"\boxed{0}", r"x=0 \text{only}", True),  # prose inside \text{} dropped
    (r"\boxed{1}", r"x=0 \text{only}", False),
]

RELATIONS = [
    (r"\boxed{y = \frac{6}{x}}", "xy = 6", True),  # the same relation, solved for y
    (r"\boxed{y = \frac{7}{x}}", "xy = 6", False),
    (r"\boxed{\frac{6}{x}}", "xy = 6", True),  # the value of the solved-for variable
    (r"\boxed{\frac{7}{x}}", "xy = 6", False),
    (r"Therefore $x \geq 5$ is the solution.", r"x \ge 5", True),
    (r"Therefore $x \geq 6$ is the solution.", r"x \ge 5", False),
    (r"\boxed{1}", r"a \cdot \frac{1}{a} = 1", False),  # an identity in a fixes no value of a
    (r"\boxed{1}", "2a = 2", True),
    (r"\boxed{p = 5, q = 2}", "(5, 2)", True),  # named values in the order they are written
    (r"\boxed{p = 2, q = 5}", "(5, 2)", False),
]

NUMBER_FORMS = [
    ("The answer is 1 000.", "1000", True),  # a space between exact groups of three
    ("The answer is 1 000.", "0", False),
    ("The answer is 1 000.", "1", False),
    ("\\boxed{1\u2009000}", "1000", True),  # a thin space
    ("\\boxed{1\u2009000}", "100", False),
    (r"\boxed{.4}", "0.4", True),
    (r"\boxed{.5}", "0.4", False),
    (r"\boxed{12^{\mathrm{th}}}", "12", True),
    (r"\boxed{13^{\mathrm{th}}}", "12", False),
    ("The answer is 15th Day.", "15", True),
    ("The answer is 16th Day.", "15", False),
    (r"\boxed{5m^2}", "5", True),  # a unit of the table after the value
    (r"\boxed{6m^2}", "5", False),
    (r"\boxed{5 yuan}", "5", True),
    (r"\boxed{6 yuan}", "5", False),
]


@pytest.mark.parametrize(("completion", "gold", "correct"), GOLDS + RELATIONS + NUMBER_FORMS)
def test_recall_rows(completion: str, gold: str, correct: bool) -> None:
    verdict = verify(completion, gold, "math")
    assert verdict.correct is correct, verdict


@pytest.mark.parametrize(
    ("gold", "read"),
    [
        (r"\\frac{1}{2}", r"\frac{1}{2}"),
        ("p=5,q=2;p=7,q=2", "(5, 2), (7, 2)"),
        (r"So the answer is: \[ \boxed{32349} \]", "32349"),
        (r"\overline{CD}", None),  # a segment's name: no value to compare
    ],
)
def test_readable_gold(gold: str, read: str | None) -> None:
    assert readable_gold(gold) == read


def test_repair_leaves_matrix_row_breaks() -> None:
    assert repair(r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}") == r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"


ROUNDING = [
    # (completion, gold, exact, shown, relative)
    (r"\boxed{1.3\%}", r"1.27\%", False, True, False),  # the gold at the answer's own precision
    (r"\boxed{300}", "299.94", False, True, True),
    (r"\boxed{2.65}", "2.653", False, True, True),
    (r"\boxed{784}", "785.12", False, False, True),  # rounded, the gold is 785: only within 0.2%
    (r"\boxed{3.1429}", "3.1416", False, False, True),  # pi as 22/7
    (r"\boxed{3.2}", "3.1416", False, False, False),
    (r"\boxed{786}", "785.12", False, False, True),
    (r"\boxed{790}", "785.12", False, False, False),
    (r"\boxed{(1.3, 2)}", "(1.27, 2)", False, False, False),  # lists compare exactly under every policy
    (
        r"\boxed{\frac{4}{0}}",
        "2",
        False,
        False,
        False,
    ),  # no value to round: wrong, not refused with a warning
]


@pytest.mark.parametrize(("completion", "gold", "exact", "shown", "relative"), ROUNDING)
def test_rounding_policies(completion: str, gold: str, exact: bool, shown: bool, relative: bool) -> None:
    for policy, expected in (("exact", exact), ("shown", shown), ("relative", relative)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a verifier that raised is a RuntimeWarning and a refusal
            assert verify(completion, gold, "math", tolerance=policy).correct is expected, policy


def test_within_tolerance_is_exact_by_default() -> None:
    assert within_tolerance("exact", "300", "299.94") is None
    assert within_tolerance("shown", "300", "299.94") is not None
    assert within_tolerance("shown", "301", "299.94") is None


def test_tolerance_is_recorded_and_checked() -> None:
    assert verifier_version("math", "shown").endswith("+shown")
    assert "+" not in verifier_version("math")
    with pytest.raises(ConfigError, match="tolerance='loose' is not a rounding policy; valid: exact, shown"):
        verify(r"\boxed{1}", "1", "math", tolerance="loose")
    with pytest.raises(ConfigError, match="rounds math answers only"):
        verify("yes", "yes", "yesno", tolerance="shown")
