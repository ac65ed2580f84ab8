"""Reasoning-specific conformance checks that every registered environment must pass.

Gymnasium's ``check_env`` proves the API shape; these checks prove the grading is honest: the gold
answer earns the reward, and empty text, garbage, a near-miss and a gold answer followed by a
different final answer earn nothing.
"""

from __future__ import annotations

import copy
import json
import re
import time
import warnings
from typing import Any

import gymnasium
from gymnasium.utils.env_checker import check_env

from reasongym.envs.core import ReasoningEnv, format_final_answer, gold_answer_text
from reasongym.envs.problem import Problem
from reasongym.errors import ReasonGymError

GARBAGE = "qwzx vbnm ~~ %% zzz"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Gymnasium colours its warnings


class ConformanceError(ReasonGymError):
    """An environment broke the reasoning-environment contract; the message says which check and why."""


def _fresh_instance(env: ReasoningEnv) -> ReasoningEnv:
    """A second, independent instance built the same way as ``env``."""
    if env.spec is not None:
        return gymnasium.make(env.spec, disable_env_checker=True).unwrapped
    twin = copy.copy(env)
    twin.source = copy.deepcopy(env.source)
    return twin


def _other_answer(problem: Problem) -> str:
    """A final answer that is certainly different from the gold one."""
    gold = problem.answer.strip()
    if problem.answer_type == "choice":
        labels = [label for label, _ in problem.choices] or ["A", "B", "C", "D", "E"]
        return next(label for label in labels if label.strip().upper() != gold.upper())
    if problem.answer_type == "yesno":
        return "no" if gold.lower() in ("yes", "true") else "yes"
    if problem.answer_type == "countdown":
        return "99999 + 99999"
    if problem.answer_type == "exact":
        return "zzz not the answer"
    return "1" if gold not in ("1", "1.0") else "2"


_DECIMAL = re.compile(r"(-?\d+)(\.\d+)")


def _near_miss(gold: str) -> str:
    """The gold with a digit added: appended, or before the point of a decimal (``0.125`` -> ``7.125``).

    Appending a digit to a decimal changes it by less than a tolerance a task may state (three
    significant figures); a digit before the point changes its value at least sevenfold.
    """
    decimal = _DECIMAL.fullmatch(gold.strip())
    if decimal is not None and decimal.group(1).lstrip("-") == "0":
        return f"{decimal.group(1).replace('0', '7')}{decimal.group(2)}"
    return f"{decimal.group(1)}7{decimal.group(2)}" if decimal is not None else gold + "7"


def negative_completions(problem: Problem) -> dict[str, str]:
    """Completions that must score wrong: empty, garbage, gold with a digit added, gold then a different answer."""
    gold = gold_answer_text(problem)
    gold_text = format_final_answer(problem.answer_type, gold)
    other = format_final_answer(problem.answer_type, _other_answer(problem))
    return {
        "empty text": "",
        "a garbage string": GARBAGE,
        "the gold answer with an extra digit appended": format_final_answer(
            problem.answer_type, _near_miss(gold)
        ),
        "the gold answer followed by a different final answer": f"{gold_text}\nWait, let me redo that.\n{other}",
    }


def _require(ok: bool, env_name: str, message: str) -> None:
    if not ok:
        raise ConformanceError(f"{env_name}: {message}")


def _check_json(env_name: str, what: str, value: Any) -> None:
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise ConformanceError(f"{env_name}: {what} is not JSON-serialisable: {exc}") from exc


def _check_determinism(env: ReasoningEnv, twin: ReasoningEnv, name: str, seeds: list[int]) -> None:
    for seed in seeds:
        prompt, info = env.reset(seed=seed)
        twin_prompt, twin_info = twin.reset(seed=seed)
        _require(
            prompt == twin_prompt and info["problem_id"] == twin_info["problem_id"],
            name,
            f"reset(seed={seed}) showed different problems in two fresh instances "
            f"({info['problem_id']!r} vs {twin_info['problem_id']!r})",
        )
        again = twin.reset(seed=0, options={"index": info["index"], "split": info["split"]})[1]
        _require(
            env.problem_at(info["index"], info["split"]) == twin.problem_at(info["index"], info["split"]),
            name,
            f"problem_at({info['index']}) differs between two fresh instances",
        )
        _require(
            again["problem_id"] == info["problem_id"],
            name,
            "options['index'] did not replay the same problem",
        )


_MAX_EPISODE_STEPS = 16


def _step_timed(env: ReasoningEnv, seed: int, completion: str) -> tuple[float, dict[str, Any], float]:
    """Answer with ``completion`` until the episode ends; return the total reward, last info, slowest step.

    Single-turn environments end after one step; a retry environment asks again after a wrong answer, so
    the same completion is repeated until it gives up.
    """
    env.reset(seed=seed)
    total, slowest = 0.0, 0.0
    for _ in range(_MAX_EPISODE_STEPS):
        start = time.perf_counter()
        _, reward, terminated, truncated, info = env.step(completion)
        slowest = max(slowest, time.perf_counter() - start)
        total += float(reward)
        if terminated or truncated:
            break
    if not (terminated and not truncated):
        raise ConformanceError(
            f"answering must end the episode within {_MAX_EPISODE_STEPS} steps (terminated=True, "
            f"truncated=False), got {terminated}, {truncated}"
        )
    return total, info, slowest


def _check_grading(env: ReasoningEnv, name: str, seeds: list[int], budget_s: float) -> None:
    slowest = 0.0
    for n_step, seed in enumerate(seeds):
        prompt, info = env.reset(seed=seed, options={"include_answer": True})
        _check_json(name, f"reset info for seed {seed}", info)
        problem = env.problem
        gold = format_final_answer(problem.answer_type, gold_answer_text(problem))
        gold_reward, step_info, elapsed = _step_timed(env, seed, gold)
        _check_json(name, "step info", step_info)
        _require(
            step_info["correct"] is True and gold_reward >= env.config.correct_reward,
            name,
            f"the gold answer of {problem.id!r} ({gold!r}) was graded {step_info['outcome']!r} "
            f"with reward {gold_reward} ({step_info['reason']})",
        )
        slowest = max(slowest, elapsed if n_step else 0.0)  # the first step may start a worker process
        for what, completion in negative_completions(problem).items():
            reward, step_info, elapsed = _step_timed(env, seed, completion)
            slowest = max(slowest, elapsed)
            _require(
                step_info["correct"] is False and reward < gold_reward,
                name,
                f"{what} ({completion!r}) for {problem.id!r} (gold {problem.answer!r}) was graded "
                f"{step_info['outcome']!r} with reward {reward}; it must be wrong",
            )
    _require(slowest <= budget_s, name, f"a step took {slowest:.2f}s, over the {budget_s:.2f}s budget")


def _check_gymnasium(env: ReasoningEnv, name: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check_env(env, skip_render_check=True)
        except AssertionError as exc:
            raise ConformanceError(f"{name}: gymnasium check_env failed: {exc}") from exc
    messages = [
        _ANSI.sub("", str(w.message))
        for w in caught
        if "gymnasium" in (w.filename or "") or "Gym" in str(w.message)
    ]
    _require(not messages, name, f"gymnasium check_env warned: {messages}")


def check_reasoning_env(
    env: gymnasium.Env, *, n: int = 5, seed: int = 0, step_budget_s: float | None = None
) -> None:
    """Check that ``env`` honours the reasoning-environment contract.

    Checks: the same seed (and the same index) gives the same problem in two fresh instances; the gold
    answer, written as the instruction asks, is correct; empty text, garbage, the gold answer with a digit
    appended, and the gold answer followed by a different final answer are wrong; reset and step info are
    JSON-serialisable; each step finishes within ``step_budget_s``; Gymnasium's ``check_env`` passes.

    Args:
        env: A :class:`~reasongym.envs.core.ReasoningEnv`, wrapped or not.
        n: How many problems (seeds ``seed .. seed + n - 1``) to check.
        seed: The first seed.
        step_budget_s: Longest allowed step in seconds; default ``2 * verify_timeout + 1``.

    Raises:
        ConformanceError: A check failed; the message names the check, the problem and the grade.
    """
    base = env.unwrapped
    if not isinstance(base, ReasoningEnv):
        raise ConformanceError(f"expected a ReasoningEnv, got {type(base).__name__}")
    name = base.spec.id if base.spec is not None else type(base).__name__
    seeds = list(range(seed, seed + n))
    _check_determinism(base, _fresh_instance(base), name, seeds)
    budget = step_budget_s if step_budget_s is not None else 2 * base.config.verify_timeout + 1.0
    _check_grading(base, name, seeds, budget)
    _check_gymnasium(base, name)
