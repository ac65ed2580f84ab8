"""What the math grader remembers between calls: parsed trees, and comparisons settled without sympy.

A remembered result must be the one a fresh call would give; a result that depended on the time left (sympy's,
or a timeout) must never be remembered, so that a later call with more time asks again.
"""

from __future__ import annotations

import pytest

from reasongym.errors import VerifierTimeout
from reasongym.verifiers.base import Outcome
from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math import remembered
from reasongym.verifiers.math.grade import verify_math_answer
from reasongym.verifiers.math.nodes import AnswerRejected, Refused, Unparseable
from reasongym.verifiers.math.numeric import SymbolicCheck
from reasongym.verifiers.math.parser import parse_answer
from reasongym.verifiers.math.remembered import answer_tree, gold_tree


def test_remembered_trees_are_the_parsers_and_long_answers_are_parsed_every_time() -> None:
    assert answer_tree("x = 3") == parse_answer("x = 3")
    assert answer_tree("x = 3") is answer_tree("x = 3")  # remembered
    assert gold_tree("\\frac12") is gold_tree("\\frac12")
    long_answer = " + ".join(["x"] * 40)  # 157 characters: a model's long answer is not kept
    assert answer_tree(long_answer) == parse_answer(long_answer)
    assert answer_tree(long_answer) is not answer_tree(long_answer)
    rejected = answer_tree("1 +")
    assert isinstance(rejected, Unparseable) and rejected.reason == _reason_of("1 +")
    assert rejected.__traceback__ is None  # a kept rejection keeps no frames alive
    assert isinstance(answer_tree("9" * 2001), Refused)


def _reason_of(text: str) -> str:
    with pytest.raises(AnswerRejected) as raised:
        parse_answer(text)
    return raised.value.reason


def test_a_refusal_at_the_recursion_limit_is_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Python's stack runs out depends on the caller's depth: a deeper caller's refusal must not stick."""
    calls = []

    def out_of_stack_once(text: str) -> ast.Node:
        calls.append(text)
        if len(calls) == 1:
            try:
                raise RecursionError
            except RecursionError:
                raise Refused("the answer nests too deeply to parse") from None
        return parse_answer(text)

    monkeypatch.setattr(remembered, "parse_answer", out_of_stack_once)
    text = "(((4242)))"  # a text no other test parses, so that no cache holds it yet
    first = answer_tree(text)
    assert isinstance(first, Refused)
    assert answer_tree(text) == ast.Num(4242)
    assert answer_tree(text) == ast.Num(4242) and len(calls) == 2


def _counting_comparisons(
    monkeypatch: pytest.MonkeyPatch,
) -> list[tuple[tuple[object, ...], dict[str, object]]]:
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []
    compare = remembered.answers_equal

    def counted(*args: object, **kwargs: object) -> object:
        calls.append((args, kwargs))
        return compare(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(remembered, "answers_equal", counted)
    return calls


def test_the_sympy_step_gets_the_callers_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_comparisons(monkeypatch)
    verify_math_answer("0.0625", "\\frac{1}{16}", timeout=0.5)  # a pair no other test grades
    [(_, keywords)] = calls
    symbolic = keywords["symbolic"]
    assert isinstance(symbolic, SymbolicCheck) and symbolic.timeout == 0.5


def test_a_comparison_settled_without_sympy_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_comparisons(monkeypatch)
    first = verify_math_answer("0.4375", "\\frac{7}{16}")  # a pair no other test grades
    assert verify_math_answer("0.4375", "\\frac{7}{16}") == first
    assert first.correct is True and len(calls) == 1
    long_answer = "0.4375" + " + 0" * 30  # 126 characters: compared on every call
    assert verify_math_answer(long_answer, "\\frac{7}{16}") == verify_math_answer(
        long_answer, "\\frac{7}{16}"
    )
    assert len(calls) == 3


def test_neither_sympys_answer_nor_a_timeout_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first call runs out of time; the next ones, with time left, ask sympy again and get its answer."""
    asked = []

    def out_of_time_once(self: SymbolicCheck, gold: ast.Node, pred: ast.Node) -> bool:
        self.asked = True
        asked.append(pred)
        if len(asked) == 1:
            raise VerifierTimeout("the comparison's time budget of 1 s is spent")
        return True

    monkeypatch.setattr(SymbolicCheck, "__call__", out_of_time_once)
    answer = "\\sin^2 y + \\cos^2 y"  # the variable changes, so only sympy can settle it
    assert verify_math_answer(answer, "1").outcome is Outcome.TIMEOUT
    assert verify_math_answer(answer, "1").correct is True
    assert verify_math_answer(answer, "1").correct is True
    assert len(asked) == 3
