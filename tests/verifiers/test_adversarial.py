r"""Hostile completions through the public API: code injection, bombs, huge and odd text.

Every case must give a non-correct Verdict (never an exception) within a loose wall bound, for every
kind, and no file may be written. Golds are chosen so that no honest reading of an attack equals
them: only executing it would (``eval('6*7')`` is 42 only to Python).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasongym.envs.multiturn import make_tool_env
from reasongym.errors import ConfigError, VerifierOutOfMemory
from reasongym.verifiers import KINDS, Outcome, Verdict, exact, math_answers, verify, verify_many
from reasongym.verifiers import timeout as timeout_module

BOUND_S = 1.5  # per case; a refusal takes milliseconds, a timed-out sympy step about 1 s
REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDS = {
    "math": "42",
    "integer": "42",
    "choice": "B",
    "exact": "Paris",
    "yesno": "yes",
    "countdown": "target=42; numbers=6,7",
}
DEEP = 20_000

INJECTIONS = {
    "os_system": r"\boxed{__import__('os').system('touch PWNED') or 42}",
    "open_file": r"\boxed{open('/etc/passwd').read()}",
    "lambda": r"\boxed{(lambda: 42)()}",
    "eval": r"The answer is \boxed{eval('6*7')}",
    "exec": "\\boxed{exec(\"open('PWNED','w')\")}",
    "template_dollar": "The answer is ${7*7}",
    "template_braces": "The answer is {{7*7}}",
    "sympy_class": r"\boxed{Symbol('x').__class__}",
    "dunder_subclasses": r"\boxed{().__class__.__bases__[0].__subclasses__()}",
    "sympify_string": r"\boxed{S('6*7')}",
    "getattr": r"\boxed{getattr(__builtins__, 'eval')('6*7')}",
}

BOMBS = {
    "power_tower": r"\boxed{10^{10^{10^{10}}}}",
    "factorial_chain": r"\boxed{9!!!!!!!!}",
    "huge_factorial": r"\boxed{(10^8)!}",
    "huge_binomial": r"\boxed{\binom{10^9}{5\cdot10^8}}",
    "two_tower": r"\boxed{2^{2^{2^{2^{2^{2}}}}}}",
    "deep_braces": r"\boxed{" + "{" * DEEP + "1" + "}" * DEEP + "}",
    "deep_parens": r"\boxed{" + "(" * DEEP + "1" + ")" * DEEP + "}",
    "deep_frac": r"\boxed{" + r"\frac{1}{" * DEEP + "2" + "}" * DEEP + "}",
    "unclosed_deep": r"\boxed{" * DEEP,
    "million_digits": r"\boxed{" + "7" * 1_000_000 + "}",
    "million_digits_bare": "The answer is " + "7" * 1_000_000,
    "near_million_digits": "The answer is " + "7" * 999_000,  # under the size limit: must be read
    "four_thousand_digits": r"\boxed{" + "7" * 4_000 + "}",
    "megabyte_text": "lorem ipsum " * 87_382,  # just over 1 MB
    "near_megabyte_box": "lorem ipsum " * 83_000 + r"\boxed{24}",  # just under: read, not refused
    "null_bytes": "\x00" * 10_000 + "\\boxed{\x00}",
    "null_in_box": "The answer is \x00\x00\x00",
    "lone_surrogates": "\ud800\udfff\udc00 \\boxed{\ud83d}",
    "rtl_override": "The answer is \u202e24",  # renders as "42"; its value is 24
    "rtl_marks_box": "\u200f\\boxed{\u202b24\u202c}\u200f",
    # Postfix runs once escaped the nesting limit and raised RecursionError (issue 16, item 1).
    "percent_run": "The answer is 4" + "%" * 400,
    "factorial_run": r"\boxed{3" + "!" * 1000 + "}",
    "latex_percent_run": r"\boxed{3" + r"\%" * 600 + "}",
    "double_factorial_run": r"\boxed{5" + "!!" * 500 + "}",
    # Quadratic scans once took seconds (issue 16, item 7).
    "calc_tags": "<calc>" * 16_000,
    "sympy_tags": "<sympy>" * 14_000,
    "million_double_quotes": '"' * 999_000,
    "million_single_quotes": "'" * 999_000,
    "million_backticks": "`" * 999_000,
    "million_stars": "*" * 999_000,
}

CASES = {**INJECTIONS, **BOMBS}


@pytest.fixture(autouse=True)
def _empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Run in an empty directory and check that it stays empty and no PWNED file appears."""
    watched = [tmp_path, Path.cwd(), REPO_ROOT, Path("/tmp"), Path.home()]
    before = {place: (place / "PWNED").exists() for place in watched}
    monkeypatch.chdir(tmp_path)
    yield
    assert list(tmp_path.iterdir()) == [], "the verifier wrote a file"
    for place in watched:
        assert (place / "PWNED").exists() == before[place], f"PWNED appeared in {place}"


def _check(verdict: Verdict, elapsed: float) -> None:
    assert isinstance(verdict, Verdict)
    assert verdict.correct is not True
    assert verdict.outcome is not Outcome.CORRECT
    assert elapsed < BOUND_S, f"took {elapsed:.2f} s"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(CASES))
def test_attack_is_never_correct_and_bounded(name: str, kind: str) -> None:
    started = time.perf_counter()
    verdict = verify(CASES[name], GOLDS[kind], kind)
    _check(verdict, time.perf_counter() - started)


@pytest.mark.parametrize("kind", KINDS)
def test_verify_many_survives_all_attacks_together(kind: str) -> None:
    completions = [*CASES.values(), r"\boxed{42}"]
    started = time.perf_counter()
    verdicts = verify_many(completions, GOLDS[kind], kind)
    elapsed = time.perf_counter() - started
    assert len(verdicts) == len(completions)
    for verdict in verdicts[:-1]:
        _check(verdict, 0.0)
    assert elapsed < BOUND_S * 4, f"the batch took {elapsed:.2f} s"


def test_math_bombs_are_refused_not_computed() -> None:
    for name in ("power_tower", "factorial_chain", "huge_factorial", "huge_binomial", "two_tower"):
        started = time.perf_counter()
        verdict = verify(BOMBS[name], "42", "math")
        elapsed = time.perf_counter() - started
        assert verdict.outcome is Outcome.REFUSED, (name, verdict)
        assert elapsed < 0.5, (name, elapsed)


def test_environment_is_untouched_by_injections() -> None:
    before = dict(os.environ)
    for completion in INJECTIONS.values():
        verify(completion, "42", "math")
    assert dict(os.environ) == before


def test_slow_symbolic_comparison_times_out_and_the_next_call_works() -> None:
    # Equal, legal, and costly: sympy must expand two products of degree 60 in three variables.
    gold = r"(x+y+z)^{30}(x-y-z)^{30}"
    completion = r"\boxed{(x^2-(y+z)^2)^{30}}"
    # Start the sympy worker first (untimed): sin^2 + cos^2 = 1 needs sympy, and its start-up is
    # not part of the time limit.
    assert verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", "math").correct is True
    started = time.perf_counter()
    verdict = verify(completion, gold, "math", timeout=0.3)
    elapsed = time.perf_counter() - started
    assert verdict.outcome is Outcome.TIMEOUT, verdict
    assert verdict.correct is None  # ungradable, never a wrong answer (issue 28, item 10)
    assert elapsed < 0.3 + BOUND_S
    assert verify(r"\boxed{\frac{84}{2}}", "42", "math").correct is True
    assert verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", "math").correct is True


# Issue 28, item 3: boxes equal to the gold in costly forms (each needs sympy beyond the limit).
SLOW_GOLD = r"(x+y+z)^{30}(x-y-z)^{30}"
SLOW_BOXES = [rf"\boxed{{(x^2-(y+z)^2)^{{{k}}}(x^2-(y+z)^2)^{{{30 - k}}}}}" for k in range(1, 9)]


def test_one_verify_call_has_one_time_budget_however_many_boxes_it_grades() -> None:
    assert verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", "math").correct is True  # the worker is up
    started = time.perf_counter()
    verdict = verify("The answer is " + ", ".join(SLOW_BOXES), SLOW_GOLD, "math", timeout=0.3)
    elapsed = time.perf_counter() - started
    assert (verdict.outcome, verdict.correct) == (Outcome.TIMEOUT, None), verdict
    assert elapsed < 0.3 + BOUND_S, elapsed  # was 13.6 s: 0.3 s per box, plus a worker restart each


def test_grading_stops_as_soon_as_the_boxes_are_judged_spraying() -> None:
    assert verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", "math").correct is True
    started = time.perf_counter()
    verdict = verify(
        "The answer is " + ", ".join([r"\boxed{5}", *SLOW_BOXES[:7]]), SLOW_GOLD, "math", timeout=0.3
    )
    elapsed = time.perf_counter() - started
    assert verdict.outcome is Outcome.WRONG and "answer spraying" in verdict.reason, verdict
    assert elapsed < BOUND_S, elapsed  # was 11.9 s: every box was graded before the statement was judged


# --- postfix runs: refused by the nesting limit, not by a RecursionError ---------------------------

NESTING_REFUSAL = "answer refused: nesting deeper than 50 levels"


@pytest.mark.parametrize(
    "name", ["percent_run", "factorial_run", "latex_percent_run", "double_factorial_run"]
)
def test_postfix_runs_are_refused_as_too_deep(name: str) -> None:
    verdict = verify(BOMBS[name], "42", "math")
    assert (verdict.correct, verdict.outcome, verdict.reason) == (False, Outcome.REFUSED, NESTING_REFUSAL)


def test_postfix_operators_count_one_level_each() -> None:
    # 45 percents nest 46 levels with the number: graded; 60 are over the limit of 50.
    assert verify(r"\boxed{4" + r"\%" * 45 + "}", "4e-90").outcome is Outcome.CORRECT
    assert verify(r"\boxed{4" + r"\%" * 60 + "}", "4e-120").reason == NESTING_REFUSAL


# --- the last-resort guard: whatever a grader raises becomes a verdict -----------------------------


def test_an_unexpected_grader_error_is_refused_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(completion: str, gold: str) -> Verdict:
        raise KeyError("a bug")

    monkeypatch.setattr(exact, "verify_exact", broken)
    expected = Verdict(False, Outcome.REFUSED, None, "The verifier failed on this completion (KeyError).")
    with pytest.warns(
        RuntimeWarning, match=r"a verifier raised KeyError: 'a bug'; the completion is refused"
    ):
        assert verify("Paris", "Paris", "exact") == expected
    with pytest.warns(RuntimeWarning):
        assert verify_many(["Paris", "Rome"], "Paris", "exact") == [expected, expected]


def test_a_recursion_error_in_math_grading_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def too_deep(*args: object, **kwargs: object) -> Verdict:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(math_answers, "grade_math", too_deep)
    expected = Verdict(False, Outcome.REFUSED, None, "The answer nests too deeply to grade.")
    assert verify(r"\boxed{1}", "1") == expected
    assert verify_many([r"\boxed{1}", r"\boxed{2}"], "1") == [expected, expected]


def test_exact_answers_past_the_length_limit_are_refused_at_once() -> None:
    started = time.perf_counter()
    verdict = verify(BOMBS["million_double_quotes"], "Paris", "exact")
    assert time.perf_counter() - started < BOUND_S
    assert verdict == Verdict(
        False, Outcome.REFUSED, None, "The answer has 999,000 characters; at most 10,000 are compared."
    )
    too_long_gold = verify("Paris", "x" * 10_001, "exact")
    assert (too_long_gold.correct, too_long_gold.reason) == (
        None,
        "Gold has 10,001 characters; at most 10,000 are compared.",
    )


def test_timeouts_past_a_day_are_refused_before_reaching_the_worker() -> None:
    # 3e6 s overflowed the worker's 32-bit millisecond wait and came back as a WRONG verdict.
    message = (
        r"timeout=3000000.0: must be a finite number of seconds > 0 and at most 86400 \(for example 1.0\)"
    )
    with pytest.raises(ConfigError, match=message):
        verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", timeout=3e6)
    assert verify(r"\boxed{42}", "42", timeout=86_400).correct is True


def test_a_symbolic_step_out_of_memory_is_refused_naming_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise VerifierOutOfMemory("the worker ran out of memory")

    monkeypatch.setattr(timeout_module, "run_with_timeout", out_of_memory)
    verdict = verify(r"\boxed{\sin^2 x + \cos^2 x}", "1")  # needs sympy, so the worker
    assert (verdict.correct, verdict.outcome, verdict.reason) == (
        False,
        Outcome.REFUSED,
        "answer refused: the symbolic comparison needed more than 1024 MiB",
    )


# --- property: any string up to 100 KB gets a verdict (or a tool result) within a second -------------

PROPERTY_BOUND_S = 1.0
PROPERTY_TIMEOUT_S = 0.3  # the sympy limit; a verdict that reaches sympy ends well within the bound
PIECES = [
    "<calc>",
    "</calc>",
    "<sympy>",
    "</sympy>",
    "simplify(",
    ")",
    "!",
    "%",
    "\\%",
    '"',
    "'",
    "`",
    "*",
    "$",
    "\\boxed{",
    "{",
    "}",
    "(",
    "^",
    "2",
    "x",
    " ",
    "\\frac",
    "\\sqrt",
    "-",
    "yes",
    ",",
    "The answer is ",
    "\\text{",
    "\n",
    "\\left(",
    "||",
]
runs = st.tuples(st.one_of(st.sampled_from(PIECES), st.text(min_size=1, max_size=6)), st.integers(1, 50_000))
hostile_texts = st.lists(runs, min_size=1, max_size=4).map(
    lambda parts: "".join(piece * count for piece, count in parts)[:100_000]
)


@pytest.fixture(scope="module")
def tool_env():
    """The tool environment, with the sympy worker started before anything is timed."""
    env = make_tool_env("reasongym/ToolArithmetic-v0", tool_timeout=PROPERTY_TIMEOUT_S)
    assert verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", "math").correct is True
    return env


TOOL_ATTACKS = {
    "calc_tags": "<calc>" * 16_000,  # 4.9 s with the lazy pattern, quadratic in the number of tags
    "sympy_tags": "<sympy>" * 14_000,
    "mixed_tags": "<calc><sympy>" * 8_000,
    "huge_argument": "<calc>" + "9+" * 400_000 + "9</calc>",
    "factorial_run": "<calc>3" + "!" * 1000 + "</calc>",  # was a RecursionError
    "percent_run_in_sympy": "<sympy>simplify(4" + "%" * 500 + ")</sympy>",
}


@pytest.mark.parametrize("name", list(TOOL_ATTACKS))
def test_tool_environment_answers_attacks_within_the_bound(name: str, tool_env) -> None:  # noqa: ANN001
    tool_env.reset(seed=0)
    started = time.perf_counter()
    observation, reward, *_ = tool_env.step(TOOL_ATTACKS[name])
    elapsed = time.perf_counter() - started
    assert isinstance(observation, str) and reward == 0.0
    assert elapsed < BOUND_S, f"took {elapsed:.2f} s"


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=hostile_texts)
def test_any_text_up_to_100_kb_is_graded_within_a_second(text: str, tool_env) -> None:  # noqa: ANN001
    for kind in KINDS:
        started = time.perf_counter()
        verdict = verify(text, GOLDS[kind], kind, timeout=PROPERTY_TIMEOUT_S)
        elapsed = time.perf_counter() - started
        assert isinstance(verdict, Verdict) and elapsed < PROPERTY_BOUND_S, (kind, elapsed, text[:80])
    tool_env.reset(seed=0)
    started = time.perf_counter()
    observation, reward, *_ = tool_env.step(text)
    elapsed = time.perf_counter() - started
    assert isinstance(observation, str) and reward in (0.0, 1.0) and elapsed < PROPERTY_BOUND_S, (
        elapsed,
        text[:80],
    )
