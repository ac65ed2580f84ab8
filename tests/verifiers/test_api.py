"""The front door: verify / verify_many, option validation, math orchestration, real benchmark golds."""

from __future__ import annotations

import json
import os
import re
import sys
import types
from pathlib import Path

import pytest

from reasongym.errors import ConfigError
from reasongym.verifiers import KINDS, Outcome, Verdict, verify, verify_many

DATA_DIR = Path(
    os.environ.get("REASONGYM_DATA_DIR", Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
)


# ---- option validation: messages are pinned -------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        (
            "mth",
            "kind='mth' is not a verifier kind; valid kinds: math, integer, choice, exact, yesno, countdown; did you mean 'math'?",
        ),
        ("yes_no", "did you mean 'yesno'?"),
        ("choices", "did you mean 'choice'?"),
        ("zzz", "kind='zzz' is not a verifier kind; valid kinds: math, integer, choice, exact, yesno"),
    ],
)
def test_unknown_kind_lists_kinds_and_suggests(kind: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        verify("x", "y", kind=kind)
    with pytest.raises(ConfigError, match=re.escape(message)):
        verify_many(["x"], "y", kind=kind)


def test_kinds_constant() -> None:
    assert KINDS == ("math", "integer", "choice", "exact", "yesno", "countdown")


@pytest.mark.parametrize(("completion", "name"), [(None, "NoneType"), (5, "int"), (b"5", "bytes")])
def test_non_str_completion_is_type_error(completion: object, name: str) -> None:
    with pytest.raises(TypeError, match=f"completion must be a str, got {name}"):
        verify(completion, "5", kind="exact")  # type: ignore[arg-type]


def test_non_str_gold_and_batch_items_are_type_errors() -> None:
    with pytest.raises(TypeError, match="gold must be a str, got int"):
        verify("5", 5, kind="exact")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"completions\[1\] must be a str, got int"):
        verify_many(["5", 5], "5", kind="exact")  # type: ignore[list-item]
    with pytest.raises(TypeError, match="completions must be a sequence of str, got str"):
        verify_many("5", "5", kind="exact")
    with pytest.raises(TypeError, match=r"golds\[0\] must be a str, got float"):
        verify_many(["5"], [5.0], kind="exact")  # type: ignore[list-item]


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), "1", True])
def test_bad_timeout(timeout: object) -> None:
    with pytest.raises(ConfigError, match=r"timeout=.*must be a finite number of seconds > 0"):
        verify("5", "5", kind="integer", timeout=timeout)  # type: ignore[arg-type]


def test_other_option_errors() -> None:
    with pytest.raises(
        ConfigError, match=re.escape("choices is only used with kind='choice', got kind='exact'")
    ):
        verify("5", "5", kind="exact", choices=["a", "b"])
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "unknown option 'timout'; valid options: choices, "
            "last_number_fallback, timeout, tolerance; did you mean 'timeout'?"
        ),
    ):
        verify_many(["5"], "5", kind="exact", timout=2)
    with pytest.raises(ConfigError, match="golds has 1 items but completions has 2"):
        verify_many(["5", "6"], ["5"], kind="integer")


@pytest.mark.parametrize("kind", KINDS)
def test_oversized_completion_is_refused_quickly(kind: str) -> None:
    verdict = verify("9" * 1_000_001, "B" if kind == "choice" else "9", kind=kind)
    assert (verdict.correct, verdict.outcome) == (False, Outcome.REFUSED)
    assert "1,000,001 characters" in verdict.reason


# ---- verify_many agrees with verify ------------------------------------------------------------

BATCH = {
    "integer": (
        ["\\boxed{42}", "The answer is 41", "so 42", "", "\\boxed{4", "\\boxed{42}"],
        ["42", "42", "42", "42", "4", "7"],
    ),
    "choice": (["Answer: B", "(C)", "B or C", "library", "Answer: B"], "B"),
    "exact": (
        ["Paris", "The answer is Paris.", "Paris, France", "Paris"],
        ["paris", "Paris", "Paris", "Lyon"],
    ),
    "yesno": (["Yes.", "So, no.", "yes or no", "Answer: yes", "Yes."], ["yes", "yes", "yes", "yes", "maybe"]),
}


@pytest.mark.parametrize("kind", sorted(BATCH))
def test_verify_many_equals_verify(kind: str) -> None:
    completions, golds = BATCH[kind]
    options = {"choices": ["bank", "library", "store"]} if kind == "choice" else {}
    gold_list = [golds] * len(completions) if isinstance(golds, str) else golds
    expected = [verify(c, g, kind=kind, **options) for c, g in zip(completions, gold_list, strict=True)]
    assert verify_many(completions, golds, kind=kind, **options) == expected
    assert len({v.outcome for v in expected}) >= 2  # the batch mixes outcomes


def test_verify_many_empty() -> None:
    assert verify_many([], [], kind="exact") == []


# ---- math orchestration, against a stand-in grader (the real one is tested by its own file) ----


@pytest.fixture
def fake_math(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Replace the math grader by a string comparison that records its calls."""
    calls: list[tuple[str, str]] = []

    def verify_math_answer(answer: str, gold: str, *, timeout: float = 1.0) -> Verdict:
        calls.append((answer, gold))
        if gold == "UNGRADABLE":
            return Verdict(None, Outcome.UNPARSEABLE, None, "Gold cannot be parsed.")
        value = answer.split("=")[-1].strip()
        return Verdict(value == gold, Outcome.CORRECT if value == gold else Outcome.WRONG, value, "stand-in")

    def verify_math_statement(answers: list[str], gold: str, *, timeout: float = 1.0) -> Verdict:
        calls.append((", ".join(answers), gold))
        values = sorted(answer.split("=")[-1].strip() for answer in answers)
        right = values == sorted(part.strip() for part in gold.split(","))
        return Verdict(right, Outcome.CORRECT if right else Outcome.WRONG, ", ".join(answers), "stand-in")

    module = types.ModuleType("reasongym.verifiers.math.grade")
    module.verify_math_answer = verify_math_answer  # type: ignore[attr-defined]
    module.verify_math_statement = verify_math_statement  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "reasongym.verifiers.math.grade", module)
    return calls


MATH_ROWS = [
    # (completion, gold, correct, outcome, extracted)
    (r"so \boxed{3}", "3", True, Outcome.CORRECT, "3"),
    (r"so \boxed{4}", "3", False, Outcome.WRONG, "4"),
    ("The answer is 3.", "3", True, Outcome.CORRECT, "3"),
    ("3 + 4 = 7", "7", True, Outcome.CORRECT, "7"),
    # the last box is the answer; boxes of one statement are one multi-valued answer
    (r"\boxed{3} or \boxed{4}", "3", False, Outcome.WRONG, "3, 4"),
    (r"\boxed{4} or \boxed{3}", "3", False, Outcome.WRONG, "4, 3"),
    (r"\boxed{x = 3} so \boxed{3}", "3", True, Outcome.CORRECT, "3"),
    (r"\boxed{x = 3} and \boxed{3}", "3", True, Outcome.CORRECT, "x = 3, 3"),
    (r"First \boxed{20}, no wait: it is \boxed{21}.", "21", True, Outcome.CORRECT, "21"),
    (r"First \boxed{21}, no wait: it is \boxed{20}.", "21", False, Outcome.WRONG, "20"),
    (r"$\boxed{3}$ and $\boxed{-5}$", "-5, 3", True, Outcome.CORRECT, "3, -5"),
    (r"$\boxed{3}$, $\boxed{-5}$ and $\boxed{7}$", "-5, 3", False, Outcome.WRONG, "3, -5, 7"),
    ("".join(rf"\boxed{{{i}}}" for i in range(9)), "8", False, Outcome.WRONG, ", ".join(map(str, range(9)))),
    # list spraying for a single-valued gold
    ("The answer is 1, 2, 3, 4, 5", "3", False, Outcome.WRONG, "1, 2, 3, 4, 5"),
    ("The answer is 1, 2, 3", "1, 2, 3", True, Outcome.CORRECT, "1, 2, 3"),
    (r"\boxed{1,000,000}", "1,000,000", True, Outcome.CORRECT, "1,000,000"),
    # no answer
    (r"so \boxed{3", "3", False, Outcome.UNPARSEABLE, None),
    ("no idea", "3", False, Outcome.UNPARSEABLE, None),
    (r"\boxed{1}" * 65, "1", False, Outcome.REFUSED, None),
    ("The answer is " + "+".join(["2"] * 1000), "2", False, Outcome.REFUSED, None),
    # an ungradable gold gives correct=None, with or without an answer
    (r"\boxed{3}", "UNGRADABLE", None, Outcome.UNPARSEABLE, "3"),
    ("no idea", "UNGRADABLE", None, Outcome.UNPARSEABLE, None),
]


@pytest.mark.parametrize(("completion", "gold", "correct", "outcome", "extracted"), MATH_ROWS)
def test_math_orchestration(
    fake_math: list[tuple[str, str]],
    completion: str,
    gold: str,
    correct: bool | None,
    outcome: Outcome,
    extracted: str | None,
) -> None:
    verdict = verify(completion, gold)
    assert (verdict.correct, verdict.outcome, verdict.extracted) == (correct, outcome, extracted), (
        verdict.reason
    )


def test_math_sprayed_beyond_eight_is_wrong_without_grading(fake_math: list[tuple[str, str]]) -> None:
    verify("".join(rf"\boxed{{{i}}}" for i in range(9)), "8")
    assert fake_math == []


def test_verify_many_grades_each_distinct_answer_once(fake_math: list[tuple[str, str]]) -> None:
    group = [
        r"\boxed{5}",
        "The answer is 5.",
        r"so $\boxed{6}$",
        "#### 5",
        r"\boxed{6}",
        "nothing",
        "nothing else",
    ]
    verdicts = verify_many(group * 10, "5")
    assert [v.correct for v in verdicts[:7]] == [True, True, False, True, False, False, False]
    # "5" and "6" once each, plus one gold check (gold against itself) for the answerless completions
    assert sorted(fake_math) == [("5", "5"), ("5", "5"), ("6", "5")]
    assert verdicts == [verify(c, "5") for c in group * 10]


# ---- the real math grader, when it is there ------------------------------------------------

REAL_MATH_ROWS = [
    # (completion, gold, correct)
    (r"Thus $\boxed{\frac{1}{2}}$.", r"\frac12", True),
    ("The answer is 0.5.", r"\frac{1}{2}", True),
    ("#### 1,080", "1080", True),
    ("The final answer is $25\\%$. I hope it is correct.", r"25\%", True),
    (r"\boxed{x = 3} so \boxed{3}", "3", True),
    (r"\boxed{\frac{1}{2}} or equivalently \boxed{0.5}", r"\frac12", True),
    # hedges and spraying
    (r"\boxed{3} or \boxed{4}", "4", False),
    (r"\boxed{17 or 18}", "17", False),
    ("The answer is either 3 or 4.", "3", False),
    ("The answer is 1, 2, 3, 4, 5", "3", False),
    # truncation and garbage
    (r"The answer is 1, so \boxed{1", "1", False),
    ("I do not know", "7", False),
]


@pytest.mark.parametrize(("completion", "gold", "correct"), REAL_MATH_ROWS)
def test_real_math_grader(completion: str, gold: str, correct: bool) -> None:
    pytest.importorskip("reasongym.verifiers.math.grade")
    verdict = verify(completion, gold)
    assert verdict.correct is correct, verdict.reason


def test_real_math_ungradable_gold_without_an_answer() -> None:
    pytest.importorskip("reasongym.verifiers.math.grade")
    assert verify("no answer here", "{{{").correct is None


# ---- real benchmark golds: the gold written as an answer is correct, a wrong one is not -----


def _rows(relative: str, limit: int = 400) -> list[dict]:
    path = DATA_DIR / relative
    if not path.exists():
        pytest.skip(f"benchmark data not found at {path} (set REASONGYM_DATA_DIR)")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for _, line in zip(range(limit), handle, strict=False)]


def test_commonsenseqa_golds() -> None:
    rows = _rows("commonsenseqa/dev.jsonl")
    for row in rows:
        choices = [(c["label"], c["text"]) for c in row["choices"]]
        other = next(label for label, _ in choices if label != row["answer"])
        assert verify(f"The answer is ({row['answer']}).", row["answer"], "choice", choices=choices).correct
        assert verify(
            f"So the answer is {row['answer_text']}.", row["answer"], "choice", choices=choices
        ).correct
        assert verify(f"Answer: {other}", row["answer"], "choice", choices=choices).correct is False


def test_strategyqa_golds() -> None:
    rows = _rows("strategyqa/dev.jsonl")
    flip = {"yes": "no", "no": "yes"}
    golds = [row["answer"] for row in rows]
    assert all(
        v.correct for v in verify_many([f"{g.title()}, because reasons." for g in golds], golds, "yesno")
    )
    assert not any(
        v.correct for v in verify_many([f"The answer is {flip[g]}." for g in golds], golds, "yesno")
    )


def test_gsm8k_and_math500_golds() -> None:
    pytest.importorskip("reasongym.verifiers.math.grade")
    gsm8k = [row["answer"] for row in _rows("gsm8k/test.jsonl", limit=200)]
    assert all(v.correct for v in verify_many([f"So she pays 3 dollars.\n#### {g}" for g in gsm8k], gsm8k))
    assert not any(v.correct for v in verify_many([f"The answer is {g}1." for g in gsm8k], gsm8k))
    math500 = [row["answer"] for row in _rows("math500/test.jsonl", limit=200)]
    verdicts = verify_many([rf"Hence $\boxed{{{g}}}$." for g in math500], math500, timeout=2.0)
    assert sum(bool(v.correct) for v in verdicts) >= 0.95 * len(math500)


@pytest.mark.parametrize("relative", ["aime24/test.jsonl", "aime_1983_2023/train.jsonl"])
def test_aime_golds(relative: str) -> None:
    golds = [row["answer"] for row in _rows(relative)]
    assert all(v.correct for v in verify_many([rf"so $\boxed{{{g}}}$." for g in golds], golds, "integer"))
    wrong = [str((int(g) + 1) % 1000) for g in golds]
    assert not any(v.correct for v in verify_many([f"The answer is {w}" for w in wrong], golds, "integer"))
