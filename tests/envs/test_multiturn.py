"""The tool and retry environments, their tools, and their conformance on whole episodes."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import reasongym
from reasongym.envs.checker import check_reasoning_env, negative_completions
from reasongym.envs.core import format_final_answer, gold_answer_text
from reasongym.envs.multiturn import (
    RetryEnvConfig,
    RetryReasoningEnv,
    ToolEnvConfig,
    ToolReasoningEnv,
    make_retry_env,
    make_tool_env,
)
from reasongym.envs.multiturn_table import MULTITURN_ENVS, RETRY_ENVS
from reasongym.envs.problem import Problem
from reasongym.envs.sources import GeneratorSource
from reasongym.envs.tools import TOOL_INSTRUCTION, ToolCall, calculate, find_tool_call, run_tool
from reasongym.errors import ConfigError, VerifierOutOfMemory
from reasongym.verifiers import timeout as timeout_module


def _gold(env: gymnasium.Env) -> str:
    problem = env.unwrapped.problem
    return format_final_answer(problem.answer_type, gold_answer_text(problem))


def _play(env: gymnasium.Env, seed: int, completion: str, limit: int = 10) -> tuple[float, bool, bool, list]:
    """Reset, then send ``completion`` every turn until the episode ends: (return, terminated, truncated, infos)."""
    env.reset(seed=seed)
    total, infos = 0.0, []
    for _ in range(limit):
        _, reward, terminated, truncated, info = env.step(completion)
        total += reward
        infos.append(info)
        if terminated or truncated:
            return total, terminated, truncated, infos
    raise AssertionError(f"the episode did not end within {limit} steps")


# --- the tools ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("3*(4+5)", "27"),
        ("1/3 + 1/6", "1/2 = 0.5"),
        ("0.1 + 0.2", "0.3"),
        ("2^10 - 2**3", "1016"),
        ("\\frac{7}{2}", "7/2 = 3.5"),
        ("5! / \\binom{5}{2}", "12"),
        ("7 × 6", "42"),
        ("(-8)^{1/3}", "-2"),
        ("844 - 22 * (18 + 16 * 24)", "-8000"),
    ],
)
def test_calculator_is_exact(expression: str, expected: str) -> None:
    assert calculate(expression) == expected


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("1/0", "division by zero"),
        ("x + 1", "numbers only"),
        ("10^{10^{10}}", "digits"),
        ("", "empty"),
        ("1, 2", "one numeric expression"),
        ("ln(0)", "undefined"),
        ("__import__('os').system('echo pwned')", "could not read"),
        ("9" * 5000, "characters"),
        ("1+" * 1100 + "1", "error: the call has 2,201 characters; at most 2,100 are read"),
        ("3" + "!" * 1000, ": nesting deeper than 50 levels"),  # was a RecursionError
        ("4" + "%" * 300, ": nesting deeper than 50 levels"),
    ],
)
def test_calculator_errors_are_results_not_exceptions(argument: str, message: str) -> None:
    result, ok = run_tool(ToolCall("calc", argument, 0, 0))
    assert not ok
    assert result.startswith("error: ") and message in result


def test_irrational_values_are_shown_to_twelve_digits() -> None:
    assert calculate("sqrt(2)") == "≈ 1.41421356237"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("factor(x^2 - 1)", "(x - 1)*(x + 1)"),
        ("expand((x + 1)^2)", "x^2 + 2*x + 1"),
        ("simplify(sin(x)^2 + cos(x)^2)", "1"),
        ("solve(2x + 3 = 7)", "x = 2"),
        ("solve(x^2 - 1)", "x = -1 or x = 1"),
        ("solve(x + y = 3, x - y = 1)", "x = 2, y = 1"),
        ("simplify(1/0)", "undefined"),
    ],
)
def test_sympy_tool(command: str, expected: str) -> None:
    assert run_tool(ToolCall("sympy", command, 0, 0), timeout=20.0) == (expected, True)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("integrate(x)", "unknown operation 'integrate'"),
        ("factor(x^2 - 1", "OPERATION(EXPRESSION)"),
        ("factor(x = 1)", "not an equation"),
        ("solve(x < 3, x)", "no lists"),
        ('factor(__import__("os"))', "could not read"),
        ("simplify(3" + "!" * 1000 + ")", ": nesting deeper than 50 levels"),  # was a RecursionError
    ],
)
def test_sympy_tool_rejects_bad_commands(command: str, message: str) -> None:
    result, ok = run_tool(ToolCall("sympy", command, 0, 0), timeout=20.0)
    assert not ok and message in result


def test_a_slow_sympy_call_times_out_into_an_error() -> None:
    result, ok = run_tool(ToolCall("sympy", "factor(x^{200} - 1)", 0, 0), timeout=0.001)
    assert (ok, result) == (False, "error: factor took longer than 0.001 s")


def test_values_past_pythons_int_printing_limit_are_shown() -> None:
    # str(int) stops at 4,300 digits; these were "the value is undefined (ValueError)".
    assert calculate("10^{4400}") == "1" + "0" * 4400
    assert Decimal(calculate("3000!")) == Decimal(math.factorial(3000))
    assert calculate("10^{4400}/3") == f"1{'0' * 4400}/3 ≈ 3.33333333333e+4399"
    assert calculate("10^{4400} + 0.5") == f"1{'0' * 4400}.5"
    assert calculate("sqrt(2) * 10^{400}") == "≈ 1.41421356237e+400"
    assert run_tool(ToolCall("sympy", "expand(10^{4400})", 0, 0), timeout=20.0, max_chars=10_000) == (
        "1" + "0" * 4400,
        True,
    )


def test_a_sympy_call_out_of_memory_is_an_error_naming_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise VerifierOutOfMemory("the worker ran out of memory")

    monkeypatch.setattr(timeout_module, "run_with_timeout", out_of_memory)
    result = run_tool(ToolCall("sympy", "factor(x^2 - 1)", 0, 0))
    assert result == ("error: factor needed more than 1024 MiB of memory", False)


def test_long_results_are_cut() -> None:
    result, ok = run_tool(ToolCall("calc", "2^{3000}", 0, 0), max_chars=50)
    assert ok and len(result) < 100 and result.endswith("characters)")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <calc>1+1</calc> b <calc>2+2</calc>", ("calc", "1+1")),
        ("<sympy>factor(x)</sympy> then <calc>2</calc>", ("sympy", "factor(x)")),
        ("<CALC>3</CALC>", ("calc", "3")),
        ("an unfinished <calc>1+1", None),
        ("no tools here: \\boxed{2}", None),
        ("<calc>1 <calc>2</calc>", ("calc", "1 <calc>2")),  # the first opening tag, the first close after it
        ("</calc> <calc>5</calc>", ("calc", "5")),
        ("<sympy>f(<calc>1</calc>)</sympy>", ("sympy", "f(<calc>1</calc>)")),
        ("<calc>" * 16_000, None),  # 4.9 s with one lazy pattern; two linear scans now
    ],
    ids=[
        "two-calls",
        "sympy-first",
        "upper-case",
        "unfinished",
        "no-tools",
        "nested-open",
        "stray-close",
        "call-inside-call",
        "unclosed-run",
    ],
)
def test_the_first_complete_call_is_found(text: str, expected: tuple[str, str] | None) -> None:
    call = find_tool_call(text)
    assert (None if call is None else (call.tool, call.argument)) == expected


# --- the tool environment -------------------------------------------------------------------------


def test_tool_episode_calculator_then_final_answer() -> None:
    env = reasongym.make("reasongym/ToolArithmetic-v0")
    for seed in range(5):
        prompt, info = env.reset(seed=seed, options={"include_answer": True})
        assert "<calc>" in prompt and info["max_turns"] == 4 and info["difficulty"] == 5
        expression = env.unwrapped.problem.metadata["expression"]
        observation, reward, terminated, truncated, step_info = env.step(f"Compute <calc>{expression}</calc>")
        assert observation == f"\n<result>{info['answer']}</result>\n"
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert step_info["tool_ok"] and step_info["turn"] == 1
        json.dumps(step_info)
        _, reward, terminated, truncated, final = env.step(f"So \\boxed{{{step_info['tool_output']}}}.")
        assert (reward, terminated, truncated, final["correct"], final["tool_calls"]) == (
            1.0,
            True,
            False,
            True,
            1,
        )
        json.dumps(final)


def test_running_out_of_turns_truncates_with_no_reward() -> None:
    env = make_tool_env("reasongym/Arithmetic-v0", max_turns=2)
    total, terminated, truncated, infos = _play(env, 0, "<calc>1+1</calc> \\boxed{2}")
    assert (total, terminated, truncated, len(infos)) == (0.0, False, True, 2)
    assert infos[-1]["outcome"] == "unparseable" and infos[-1]["correct"] is False
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step("\\boxed{2}")


def test_tool_env_contract_errors() -> None:
    env = make_tool_env("reasongym/Arithmetic-v0")
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step("\\boxed{1}")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="must be a str"):
        env.step(42)  # type: ignore[arg-type]


def test_only_enabled_tools_run_and_stop_strings_follow_them() -> None:
    env = make_tool_env(
        "reasongym/Arithmetic-v0", tools=("calc",), tool_instruction="Use <calc>. {max_turns}"
    )
    assert env.stop_strings == ("</calc>",)
    prompt, _ = env.reset(seed=1)
    assert prompt.endswith("Use <calc>. 4")
    _, _, terminated, _, info = env.step("<sympy>factor(x^2-1)</sympy>")
    assert terminated and info["correct"] is False  # not a tool here: graded as the final answer


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_turns": 0}, "ToolEnvConfig.max_turns"),
        ({"tools": ("python",)}, "ToolEnvConfig.tools"),
        ({"tool_timeout": -1}, "ToolEnvConfig.tool_timeout"),
        (
            {"tool_timeout": 3e6},
            r"ToolEnvConfig.tool_timeout=3000000.0: must be a finite number of seconds > 0 and at most 86400",
        ),
        ({"max_turn": 3}, "did you mean 'max_turns'"),
    ],
)
def test_tool_env_options_are_validated(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_tool_env("reasongym/Arithmetic-v0", **options)


def test_tool_env_is_generic_over_sources_and_conforms() -> None:
    for env_id in ("reasongym/LinearEquation-v0", "reasongym/QuantityComparison-v0"):
        env = make_tool_env(env_id)
        check_reasoning_env(env, n=2)
        check_env(env, skip_render_check=True)
        assert TOOL_INSTRUCTION.split(".")[0] in env.reset(seed=0)[0]


def test_postfix_runs_in_a_tool_call_are_an_error_result_not_a_crash() -> None:
    env = make_tool_env("reasongym/Arithmetic-v0")
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step("<calc>3" + "!" * 1000 + "</calc>")
    assert (reward, terminated, truncated, info["tool_ok"]) == (0.0, False, False, False)
    assert observation.strip().endswith(": nesting deeper than 50 levels</result>")


def test_an_oversized_turn_is_graded_as_a_refused_answer_without_running_its_tool() -> None:
    env = make_tool_env("reasongym/Arithmetic-v0")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("<calc>1+1</calc>" + " " * 1_000_000)
    assert (reward, terminated, info["outcome"], "tool" in info) == (0.0, True, "refused", False)


def test_tool_env_renders_the_transcript() -> None:
    env = make_tool_env("reasongym/Arithmetic-v0", render_mode="ansi")
    prompt, _ = env.reset(seed=0)
    env.step("<calc>2+3</calc>")
    assert env.render() == prompt + "\n[model] <calc>2+3</calc>\n<result>5</result>\n"


# --- the retry environment ------------------------------------------------------------------------


def _sum_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    a, b = (int(x) for x in rng.integers(10, 100, size=2))
    return Problem(f"What is {a} + {b}?", str(a + b), "integer")


def _retry_env(**options: object) -> RetryReasoningEnv:
    return RetryReasoningEnv(GeneratorSource("sums", _sum_problem, "integer"), **options)


def test_retry_rewards_are_discounted_per_extra_attempt() -> None:
    env = _retry_env(max_attempts=3, discount=0.5)
    env.reset(seed=0)
    gold = _gold(env)
    wrong = format_final_answer("integer", str(int(env.problem.answer) + 1))
    steps = [env.step(text) for text in (wrong, "no idea", gold)]
    assert [s[1] for s in steps] == [0.0, 0.0, 0.25]
    assert [(s[2], s[3]) for s in steps] == [(False, False), (False, False), (True, False)]
    assert [s[4]["attempt"] for s in steps] == [1, 2, 3]
    assert f"Your final answer, {int(env.problem.answer) + 1}, is not correct" in steps[0][0]
    assert "1 more attempt." in steps[1][0] and "No final answer could be read" in steps[1][0]
    for step in steps:
        json.dumps(step[4])


def test_retry_ends_after_the_last_wrong_attempt() -> None:
    env = _retry_env(max_attempts=2)
    total, terminated, truncated, infos = _play(env, 3, "\\boxed{0}")
    assert (total, terminated, truncated, [i["attempts_left"] for i in infos]) == (0.0, True, False, [1, 0])
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step("\\boxed{0}")


def test_retry_shaping_terms_are_discounted_too() -> None:
    env = _retry_env(max_attempts=2, discount=0.5, format_reward=0.2)
    total, _, _, _ = _play(env, 1, "\\boxed{0}")
    assert total == pytest.approx(0.2 + 0.5 * 0.2)


def test_retry_feedback_can_hide_the_answer_and_be_rewritten() -> None:
    env = _retry_env(show_extracted=False, feedback=" [{judgement} {attempts_left} left]")
    env.reset(seed=0)
    assert env.step("\\boxed{0}")[0] == " [Your final answer is not correct. 2 left]"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_attempts": 0}, "RetryEnvConfig.max_attempts"),
        ({"discount": 1.5}, "RetryEnvConfig.discount"),
        ({"feedback": "{answer}"}, "RetryEnvConfig.feedback may use only"),
    ],
)
def test_retry_options_are_validated(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _retry_env(**options)


def test_retry_env_passes_gymnasium_check_env_and_the_single_attempt_checker() -> None:
    check_env(_retry_env(), skip_render_check=True)
    check_env(make_retry_env("reasongym/Fractions-v0"), skip_render_check=True)
    check_reasoning_env(make_retry_env("reasongym/Fractions-v0", max_attempts=1), n=3)


def test_retry_rows_build_their_environments() -> None:
    procedural = [row for row in RETRY_ENVS if row.size == "procedural"]
    assert procedural and all(row.entry_point.endswith(":RetryReasoningEnv") for row in RETRY_ENVS)
    for row in procedural:
        env = RetryReasoningEnv(row.source, row.source_kwargs, **row.env_kwargs)
        assert env.reset(seed=0)[1]["difficulty"] == row.env_kwargs["difficulty"]


# --- whole-episode conformance: what the checker asks, played until the episode ends -------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: reasongym.make(MULTITURN_ENVS[0].id),
        lambda: make_retry_env("reasongym/Arithmetic-v0", max_attempts=3),
        lambda: make_retry_env("reasongym/QuantityComparison-v0", max_attempts=2),
        lambda: make_tool_env("reasongym/Countdown-v0"),
    ],
    ids=["tool-arithmetic", "retry-arithmetic", "retry-choice", "tool-countdown"],
)
def test_gold_earns_full_reward_and_negatives_earn_nothing_over_an_episode(build) -> None:  # noqa: ANN001
    env = build()
    for seed in range(3):
        env.reset(seed=seed)
        problem = env.unwrapped.problem
        gold_return, terminated, _, infos = _play(env, seed, _gold(env))
        assert (gold_return, terminated, len(infos)) == (1.0, True, 1)
        for what, completion in negative_completions(problem).items():
            total, terminated, truncated, infos = _play(env, seed, completion)
            assert total == 0.0 and terminated and not truncated, what
            assert infos[-1]["correct"] is False, what


def test_gsm8k_retry_row_on_real_data(data_dir) -> None:  # noqa: ANN001 - pytest fixture
    row = next(row for row in RETRY_ENVS if row.id == "reasongym/GSM8K-Retry-v0")
    env = RetryReasoningEnv(row.source, row.source_kwargs, split="test", **row.env_kwargs)
    _, info = env.reset(seed=0, options={"include_answer": True})
    assert env.step("\\boxed{-1}")[2] is False
    assert env.step(format_final_answer("math", info["answer"]))[1] == pytest.approx(
        RetryEnvConfig().discount
    )


def test_tool_config_can_be_passed_ready() -> None:
    env = make_tool_env("reasongym/Arithmetic-v0", tool_config=ToolEnvConfig(max_turns=2))
    assert isinstance(env, ToolReasoningEnv) and env.tool_config.max_turns == 2
