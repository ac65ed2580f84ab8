r"""Answer forms that other graders accept: each correct form next to a wrong answer of the same shape.

Rows are ``(completion, gold, expected)`` graded by ``verify(completion, gold, "math")`` (extraction
included); a bare answer is boxed. The themes follow issue 10; every accepted form has a rejected
twin right after it (a wrong self-correction, a wrong multiple, an extra value, a wrong unit).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reasongym.verifiers import Outcome, verify, verify_many

DATA_DIR = Path(
    os.environ.get("REASONGYM_DATA_DIR", Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
)


def _box(answer: str) -> str:
    return f"Working... so the answer is $\\boxed{{{answer}}}$."


ROWS = [
    # 1. which box is the answer: the last one; boxes of one statement are one multi-valued answer
    (r"First $\boxed{20}$, no wait: it is $\boxed{21}$.", "21", True),
    (r"First $\boxed{21}$, no wait: it is $\boxed{20}$.", "21", False),
    ("<think>maybe \\boxed{20}</think>\nSo the answer is $\\boxed{21}$.", "21", True),
    ("<think>maybe \\boxed{21}</think>\nSo the answer is $\\boxed{20}$.", "21", False),
    ("So $\\boxed{20}$.\n\nLet me recheck: 4 * 5 + 1 = 21.\n\n$\\boxed{21}$", "21", True),
    ("So $\\boxed{21}$.\n\nLet me recheck: 4 * 5 = 20.\n\n$\\boxed{20}$", "21", False),
    (r"The roots are $\boxed{3}$ and $\boxed{-5}$.", "-5, 3", True),
    (r"The roots are $\boxed{3}$, $\boxed{-5}$ and $\boxed{7}$.", "-5, 3", False),  # an extra value
    (r"The roots are $\boxed{3}$ and $\boxed{-4}$.", "-5, 3", False),
    (r"$x_1 = \boxed{3}$, $x_2 = \boxed{-5}$", "x = -5 \\text{ or } x = 3", True),
    (r"The points are $\boxed{(1,2)}$ and $\boxed{(3,4)}$.", "(1,2), (3,4)", True),
    (r"The points are $\boxed{(1,2)}$ and $\boxed{(4,3)}$.", "(1,2), (3,4)", False),
    (r"Possible answers: $\boxed{3}$, $\boxed{5}$, $\boxed{7}$.", "7", False),  # spraying
    (r"It is either $\boxed{723}$ or $\boxed{729}$.", "729", False),  # a hedge
    (_box("1, 2, 3, 4, 5, 6, 7"), "7", False),  # one box holding a candidate list
    (_box("723 \\text{ or } 729"), "729", False),
    # 2. thousands separators in every LaTeX spelling, one style, groups of three digits
    (_box(r"1,\!000,\!000,\!000"), "1000000000", True),
    (_box(r"1,\!000,\!000,\!001"), "1000000000", False),
    (_box(r"1\,000\,000\,000"), "1000000000", True),
    (_box(r"1\,000\,000\,00"), "1000000000", False),
    (_box("14{,}916"), "14916", True),
    (_box("14{,}961"), "14916", False),
    (_box("14{, }916"), "14916", True),
    (_box(r"1,000,\!000"), "1000000", False),  # two separator styles in one number
    ("The final answer is $\\$32,\\!348$.", "32348", True),
    ("The final answer is $\\$32,\\!384$.", "32348", False),
    # 3. equations: a non-zero multiple, the same relation solved for a variable, a chain's value
    (_box("3x-3y=6"), "x-y=2", True),
    (_box("3x-3y=9"), "x-y=2", False),
    (_box(r"y=\frac{2}{3}x-1"), "2x-3y-3=0", True),
    (_box(r"y=\frac{3}{2}x-1"), "2x-3y-3=0", False),
    (_box(r"\frac{x^2}{18}+\frac{y^2}{8}=\frac12"), r"\frac{x^2}{9}+\frac{y^2}{4}=1", True),
    (_box(r"\frac{x^2}{18}+\frac{y^2}{8}=1"), r"\frac{x^2}{9}+\frac{y^2}{4}=1", False),
    (_box("0x+0y=0"), "x-y=2", False),  # zero times the equation is no multiple
    (_box("p+q = q+p = 57"), "57", True),
    (_box("p+q = q+p = 56"), "57", False),
    (_box("2x = 6"), "x = 3", False),  # an unsolved equation is not the value
    (_box("m + n = 3 + 4 = 7"), "7", True),
    (_box("x + y = 7"), "7", False),  # maybe an unsolved equation: not read as the value 7
    # 4. text wrappers around answers
    (_box(r"\text{C}"), "C", True),
    (_box(r"\text{D}"), "C", False),
    (_box(r"\text{No}"), "No", True),
    (_box(r"\text{Yes}"), "No", False),
    # 5. answer phrases: a sentence, display math on its own lines, solutions in words
    ("Final Answer: The smallest $k$ is 17.", "17", True),
    ("Final Answer: The smallest $k$ is 18.", "17", False),
    ("So the answer is\n$$\n12\n$$", "12", True),
    ("So the answer is\n$$\n13\n$$", "12", False),
    ("The solutions are $x = 4$ or $x = -1$.", "-1, 4", True),
    ("The solutions are $x = 4$ or $x = 1$.", "-1, 4", False),
    ("Answer: Therefore, there are 12 cats.", "12", True),
    ("Answer: It is between 3 and 4.", "4", False),
    # 6. units with braced exponents, clock times with a text am/pm
    (_box(r"6\text{ m}^{2}"), r"6\text{ m}^{2}", True),
    (_box(r"60000\text{ cm}^{2}"), r"6\text{ m}^{2}", True),
    (_box(r"6\text{ m}"), r"6\text{ m}^{2}", False),  # a wrong unit
    (_box(r"8\mathrm{cm}^{3}"), r"8\text{ mL}", True),
    (_box(r"8\mathrm{cm}^{2}"), r"8\text{ mL}", False),
    (_box(r"2\pi r(r+h)"), r"2\pi r^2 + 2\pi r h", True),  # after variables, h is a variable
    (_box(r"2\pi r(r-h)"), r"2\pi r^2 + 2\pi r h", False),
    (_box(r"180 \text{ minutes}"), "3 h", True),  # after a number, h is hours
    (_box(r"180 \text{ seconds}"), "3 h", False),
    (_box(r"7:15 \text{ P.M.}"), "19:15", True),
    (_box(r"7:15\text{ p.m.}"), "19:15", True),
    (_box(r"7:15\text{ a.m.}"), "19:15", False),
    # 7. numbers: scientific decimal golds, float-printed golds, a gold that is a chain
    (_box("0.667"), r"6.67 \times 10^{-1}", True),
    (_box(r"\frac23"), r"6.67 \times 10^{-1}", True),
    (_box("0.668"), r"6.67 \times 10^{-1}", False),
    (_box(r"\sqrt{2}"), "1.4142135623730951", True),
    (_box(r"\sqrt{3}"), "1.4142135623730951", False),
    (_box("1.41421356"), "1.4142135623730951", False),  # the gold shows sixteen decimals
    (_box(r"\frac{\sqrt{3}}{3}"), r"\frac{\sqrt3}{3} \approx 0.577", True),
    (_box("0.577"), r"\frac{\sqrt3}{3} \approx 0.577", True),
    (_box(r"\frac{\sqrt{2}}{3}"), r"\frac{\sqrt3}{3} \approx 0.577", False),
    # 8. sets: unions of finite sets and intervals are normalised
    (_box(r"\{2,5\}\cup\{7\}"), r"\{2,5,7\}", True),
    (_box(r"\{2,5\}\cup\{8\}"), r"\{2,5,7\}", False),
    (_box(r"[1,2]\cup[2,3]"), "[1,3]", True),
    (_box(r"[1,2)\cup(2,3]"), "[1,3]", False),
    (_box(r"\{1\}\cup(1,3)"), "[1,3)", True),
    (_box(r"\{1\}\cup(1,3)"), "(1,3)", False),
    # 9. labelled golds against bare values, 1 < g(x) < 4 as an interval
    (_box("5"), "|PQ|=5", True),
    (_box("6"), "|PQ|=5", False),
    (_box("3:7"), "S_1:S_2=3:7", True),
    (_box("7:3"), "S_1:S_2=3:7", False),
    (_box("4, 6"), "PQ=4, RS=6", True),
    (_box("PQ=6, RS=4"), "PQ=4, RS=6", False),
    (_box("2"), r"\frac{OM}{ON}=2", True),
    (_box("5"), "x+y=5", False),  # a line, not a named value
    (_box("(1,4)"), "1<g(x)<4", True),
    (_box("[1,4)"), "1<g(x)<4", False),
    # 10. the last-number fallback keeps the unit and never reads an exponent
    ("The area is 24 m^2", "24", True),
    ("The area is 24 m\u00b2", r"24\text{ m}^2", True),
    ("The area is 25 m^2", "24", False),
    ("The length is 5 cm", r"5\text{ m}", False),
    # a number glued after a bracket is not read as a factor: "(x+1)1" must stay the gold with a
    # digit appended, which is wrong (a MATH-500 answer of SmolLM2 wrote (1+2i)6-3i)
    (_box("(1+2i)6-3i"), "6+9i", False),
    (_box("6(1+2i)-3i"), "6+9i", True),
    # 12. positive-only identities are not identities: variables are not assumed positive
    (_box(r"\sqrt{1/m}"), r"\frac{1}{\sqrt m}", False),
    (_box(r"\ln(a^2)"), r"2\ln a", False),
    (_box(r"\sqrt{m^{-1}}"), r"\sqrt{1/m}", True),  # an identity for every m
]


@pytest.mark.parametrize(("completion", "gold", "expected"), ROWS)
def test_answer_forms(completion: str, gold: str, expected: bool) -> None:
    verdict = verify(completion, gold, "math")
    assert verdict.correct is expected, verdict


LONG_ROWS = [
    # 11. an answer too long to grade is refused (or has no answer), never graded on a fragment
    ("The answer is " + "+".join(["2"] * 20000), "2"),
    ("The answer is " + "+".join(["1"] * 1000), "1"),
    ("The answer is " + "+".join(["1"] * 1000), "500"),
    (_box("+".join(["1"] * 1500)), "1500"),
    ("the sum is " + " + ".join(["1"] * 9000), "1"),
]


@pytest.mark.parametrize(("completion", "gold"), LONG_ROWS)
def test_long_answers_are_never_graded_on_a_fragment(completion: str, gold: str) -> None:
    verdict = verify(completion, gold, "math")
    assert verdict.correct is False
    assert verdict.outcome in (Outcome.REFUSED, Outcome.UNPARSEABLE), verdict


FORMS_OF_REAL_GOLDS = {
    # (completion from a gold g and a wrong answer w, graded against g, expected)
    "self-correction to the gold": (
        lambda g, w: f"So $\\boxed{{{w}}}$.\n\nWait, let me recheck.\n\nSo $\\boxed{{{g}}}$.",
        True,
    ),
    "self-correction away from it": (
        lambda g, w: f"So $\\boxed{{{g}}}$.\n\nWait, let me recheck.\n\nSo $\\boxed{{{w}}}$.",
        False,
    ),
    "a sentence after the phrase": (lambda g, w: f"Final Answer: The value is ${g}$.", True),
    "a wrong sentence": (lambda g, w: f"Final Answer: The value is ${w}$.", False),
    "display math after the phrase": (lambda g, w: f"The answer is\n$$\n{g}\n$$", True),
    "wrong display math": (lambda g, w: f"The answer is\n$$\n{w}\n$$", False),
    "a box after </think>": (lambda g, w: f"<think>\\boxed{{{w}}}</think>\nSo $\\boxed{{{g}}}$.", True),
    "a wrong box after </think>": (
        lambda g, w: f"<think>\\boxed{{{g}}}</think>\nSo $\\boxed{{{w}}}$.",
        False,
    ),
}


@pytest.mark.parametrize("form", list(FORMS_OF_REAL_GOLDS))
def test_forms_of_real_math500_golds(form: str) -> None:
    path = DATA_DIR / "math500" / "test.jsonl"
    if not path.exists():
        pytest.skip(f"benchmark data not found at {path} (set REASONGYM_DATA_DIR)")
    golds = [json.loads(line)["answer"] for line in path.read_text(encoding="utf-8").splitlines()[:200]]
    make, expected = FORMS_OF_REAL_GOLDS[form]
    verdicts = verify_many([make(gold, f"{gold}+1") for gold in golds], golds, timeout=2.0)
    wrong = [
        (gold, verdict.reason)
        for gold, verdict in zip(golds, verdicts, strict=True)
        if verdict.correct is not expected
    ]
    assert wrong == []
