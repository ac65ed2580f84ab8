"""Any text, of any size and any code points, gives a Verdict for every kind: never an exception."""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasongym.verifiers import (
    KINDS,
    Outcome,
    Verdict,
    extract_boxed,
    extract_math_answer,
    verify,
    verify_many,
)

HAS_MATH = importlib.util.find_spec("reasongym.verifiers.math.grade") is not None
FUZZ_KINDS = [kind for kind in KINDS if kind != "math" or HAS_MATH]

# Fragments that steer random text into the code paths that matter: boxes, braces, phrases, hedges.
FRAGMENTS = [
    "\\boxed{",
    "\\boxed",
    "\\fbox{",
    "{",
    "}",
    "\\{",
    "\\}",
    "\\\\",
    "$",
    "$$",
    "**",
    "\\text{",
    "\\frac{1}{2}",
    "The answer is ",
    "Answer:",
    "Final Answer",
    "####",
    "\n",
    " or ",
    ", ",
    "(B)",
    "B)",
    "A ",
    "I ",
    "yes",
    "no",
    "true",
    "false",
    "no one",
    "42",
    "042",
    "-7",
    "3.50",
    "1,000",
    "\u2212",
    "\uff15",
    "\u200b",
    "\u00a0",
    "\u202e",
    "\u00bd",
    "\x00",
    "\ud800",
    "x = ",
    "=",
    "e",
    "\\circ",
    "%",
    "17 or 18",
]
odd_text = st.text(
    alphabet=st.characters(categories=["L", "M", "N", "P", "S", "Z", "C"]), max_size=200
)  # C: surrogates too
steered_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), odd_text), max_size=25).map("".join)
completions = st.one_of(odd_text, steered_text)
golds = st.one_of(st.sampled_from(["42", "B", "yes", "no", "Paris", "\\frac{1}{2}", "", "7"]), odd_text)


def _check(verdict: Verdict) -> None:
    assert isinstance(verdict, Verdict)
    assert verdict.correct in (True, False, None)
    assert isinstance(verdict.outcome, Outcome)
    assert verdict.extracted is None or isinstance(verdict.extracted, str)
    assert isinstance(verdict.reason, str) and verdict.reason
    assert (verdict.outcome == Outcome.CORRECT) == (verdict.correct is True)


@pytest.mark.parametrize("kind", FUZZ_KINDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(completion=completions, gold=golds)
def test_any_text_gives_a_verdict(kind: str, completion: str, gold: str) -> None:
    _check(verify(completion, gold, kind=kind, timeout=2.0))


@settings(max_examples=200, deadline=None)
@given(text=completions)
def test_extraction_never_raises(text: str) -> None:
    found = extract_math_answer(text)
    assert found.answer is None or isinstance(found.answer, str)
    assert found.answer is None or not found.sprayed or found.answer == found.candidates[-1]
    boxed = extract_boxed(text)
    assert boxed is None or isinstance(boxed, str)


HUGE = [
    "x" * 1_000_000,
    "\\boxed{" * 50_000,
    "}" * 1_000_000,
    "\U0001f600" * 250_000,
    "\ud800\udfff" * 100_000,
    "The answer is " + "(" * 500_000,
    "yes or no " * 90_000,
    "B or C " * 100_000,
    "9" * 999_999,
]


@pytest.mark.parametrize("kind", FUZZ_KINDS)
def test_huge_inputs_give_verdicts(kind: str) -> None:
    gold = {"choice": "B", "yesno": "yes", "exact": "Paris"}.get(kind, "42")
    for verdict in verify_many(HUGE, gold, kind=kind):
        _check(verdict)
        assert verdict.correct is not True
