"""ReasoningEnv and TextSpace: spaces, config validation, reset/step semantics, rewards, Gymnasium checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from reasongym.envs.core import ReasoningEnv, ReasoningEnvConfig, TextSpace, resolve_source
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource, GeneratorSource
from reasongym.errors import ConfigError


def add_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    """A tiny generator: the sum of two numbers with ``difficulty`` digits."""
    a, b = (int(x) for x in rng.integers(10 ** (difficulty - 1), 10**difficulty, size=2))
    return Problem(f"What is {a} + {b}?", str(a + b), "integer", metadata={"a": a, "b": b})


def adder_source(seed: int = 0) -> GeneratorSource:
    return GeneratorSource("adder", add_problem, "integer", difficulties=(1, 2, 3), seed=seed)


ROWS = [
    Problem(
        "Capital of France?", "B", "choice", id="q0", choices=(("A", "Rome"), ("B", "Paris"), ("C", "Oslo"))
    ),
    Problem("Is 7 prime?", "yes", "yesno", id="q1"),
]


def chosen(problem: Problem) -> str:
    return f"The final answer is \\boxed{{{problem.answer}}}."


@pytest.fixture
def env() -> ReasoningEnv:
    return ReasoningEnv(adder_source())


# --- TextSpace ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["7 × 6", "", "∫ x dx = x²/2 + C", "emoji 🧮 and tabs\t\n", "a" * 100_000])
def test_text_space_contains_any_unicode_within_length(text: str) -> None:
    assert TextSpace(100_000).contains(text)


@pytest.mark.parametrize("value", [b"bytes", 42, None, ["a"], "a" * 100_001])
def test_text_space_rejects_non_strings_and_too_long(value: object) -> None:
    assert value not in TextSpace(100_000)


def test_text_space_samples_are_members_and_seeded() -> None:
    first, second = TextSpace(50, seed=3), TextSpace(50, seed=3)
    samples = [first.sample() for _ in range(20)]
    assert samples == [second.sample() for _ in range(20)]
    assert all(s in first and s.isprintable() and len(s) <= 50 for s in samples)


def test_text_space_is_cheap_and_compares_by_bounds() -> None:
    start = time.perf_counter()
    spaces = [TextSpace(1_000_000) for _ in range(100)]
    assert time.perf_counter() - start < 1.0
    assert (
        spaces[0] == spaces[1]
        and TextSpace(10) != TextSpace(11)
        and TextSpace(10) != gymnasium.spaces.Text(10)
    )
    assert repr(TextSpace(10)) == "TextSpace(0, 10)"


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"correct_reward": float("nan")}, "correct_reward must be a finite number"),
        ({"length_penalty": -1.0}, "length_penalty must be >= 0"),
        ({"verify_timeout": 0}, "verify_timeout=0: must be a finite number of seconds > 0"),
        (
            {"verify_timeout": 3e6},
            "ReasoningEnvConfig.verify_timeout=3000000.0: must be a finite number of seconds > 0 and at most 86400",
        ),
        ({"length_budget": -5}, "length_budget must be a non-negative int"),
        ({"difficulty": "hard"}, "difficulty must be an int or None"),
        ({"prompt_template": "{question} {answer}"}, "may use only ['choices', 'instruction', 'question']"),
        ({"prompt_template": "no fields"}, "must contain {question}"),
        (  # issue 28, item 12: the width would build a gigabyte prompt
            {"prompt_template": "{question:>999999999}"},
            "prompt_template field '{question:>999999999}' has a format spec or conversion",
        ),
        ({"prompt_template": "{instruction!r} {question}"}, "field '{instruction!r}' has a format spec"),
        ({"format_rewad": 0.1}, "unknown ReasoningEnv option 'format_rewad' (did you mean 'format_reward'?)"),
    ],
)
def test_bad_options_raise_config_errors_that_name_the_field(options: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ReasoningEnv(adder_source(), **options)
    assert message in str(caught.value)


def test_unknown_split_is_refused_at_construction() -> None:
    with pytest.raises(ConfigError) as caught:
        ReasoningEnv(adder_source(), split="tset")
    assert str(caught.value) == (
        "split 'tset' is not a split of 'adder'; splits: ['train', 'validation', 'test'] (did you mean 'test'?)"
    )


def test_config_object_and_keyword_overrides_combine() -> None:
    env = ReasoningEnv(
        adder_source(), config=ReasoningEnvConfig(format_reward=0.5, split="test"), split="validation"
    )
    assert env.config.format_reward == 0.5 and env.config.split == "validation"


def test_sources_resolve_from_strings_callables_and_objects() -> None:
    assert resolve_source(adder_source, seed=2).seed == 2
    assert resolve_source(adder_source()).name == "adder"
    assert isinstance(resolve_source("reasongym.envs.procedural.arithmetic:source"), GeneratorSource)
    with pytest.raises(ConfigError, match="must look like 'package.module:function'"):
        resolve_source("no_colon_here")
    with pytest.raises(ConfigError, match="could not be imported"):
        resolve_source("reasongym.nowhere:source")
    with pytest.raises(ConfigError, match="returned int, not a ProblemSource"):
        resolve_source(lambda: 3)


# --- reset --------------------------------------------------------------------------------------


def test_same_seed_same_problem_across_instances(env: ReasoningEnv) -> None:
    other = ReasoningEnv(adder_source())
    for seed in range(5):
        assert env.reset(seed=seed) == other.reset(seed=seed)
    assert len({env.reset(seed=s)[0] for s in range(20)}) > 10


def test_same_seed_same_problem_in_a_fresh_process(env: ReasoningEnv) -> None:
    # Compare the question text, not only the id: an id names the split and index whatever question
    # was drawn, so a split hash that changes per process (Python's salted hash()) keeps ids equal.
    code = (
        "import json; from tests.envs.test_core import ReasoningEnv, adder_source; env = ReasoningEnv(adder_source()); "
        "print(json.dumps([(env.reset(seed=s)[1]['problem_id'], env.problem.question) for s in range(11, 19)]))"
    )
    expected = [(env.reset(seed=s)[1]["problem_id"], env.problem.question) for s in range(11, 19)]
    for hash_seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        assert [tuple(pair) for pair in json.loads(out.stdout)] == expected, f"PYTHONHASHSEED={hash_seed}"


def test_unseeded_resets_follow_the_seeded_stream(env: ReasoningEnv) -> None:
    env.reset(seed=7)
    follow = [env.reset()[0] for _ in range(3)]
    env.reset(seed=7)
    assert [env.reset()[0] for _ in range(3)] == follow


def test_reset_info_has_the_documented_keys_and_no_answer_by_default(env: ReasoningEnv) -> None:
    prompt, info = env.reset(seed=0)
    assert set(info) == {
        "problem_id",
        "index",
        "split",
        "difficulty",
        "answer_type",
        "metadata",
        "hinted",
        "messages",
    }
    assert info["split"] == "train" and info["difficulty"] == 1 and info["answer_type"] == "integer"
    assert info["messages"] == [{"role": "user", "content": prompt}]
    assert "\\boxed{}" in prompt and env.problem.answer not in prompt.replace(env.problem.question, "")
    json.dumps(info)


def test_reset_options_pick_index_split_difficulty_hint_and_answer(env: ReasoningEnv) -> None:
    prompt, info = env.reset(
        options={"index": 4, "split": "test", "difficulty": 3, "hint": True, "include_answer": True}
    )
    assert env.problem == env.problem_at(4, "test", 3)
    assert (
        info["index"] == 4 and info["split"] == "test" and info["difficulty"] == 3 and info["hinted"] is True
    )
    assert info["answer"] == env.problem.answer and f"correct final answer is {env.problem.answer}" in prompt


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"indx": 3}, "unknown reset option 'indx' (did you mean 'index'?); allowed: ['index', 'split',"),
        ({"index": -1}, "reset option 'index' must be a non-negative int, got -1"),
        ({"split": "dev"}, "unknown split 'dev'"),
        ({"difficulty": 9}, "difficulty 9 is not one of [1, 2, 3]"),
    ],
)
def test_bad_reset_options_raise(env: ReasoningEnv, options: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        env.reset(seed=0, options=options)
    assert message in str(caught.value)


def test_choices_and_system_prompt_reach_the_prompt_and_messages() -> None:
    env = ReasoningEnv(
        DatasetSource.from_problems("mix", "choice", {"test": ROWS}), system_prompt="Be brief."
    )
    prompt, info = env.reset(options={"index": 0})
    assert "\n(A) Rome\n(B) Paris\n(C) Oslo" in prompt and "The answer is (X)" in prompt
    assert info["messages"][0] == {"role": "system", "content": "Be brief."}
    assert env.step("Paris is the capital. The answer is (B).")[1] == 1.0


# --- step ---------------------------------------------------------------------------------------


def test_gold_scores_one_and_wrong_scores_zero(env: ReasoningEnv) -> None:
    env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(chosen(env.problem))
    assert (obs, reward, terminated, truncated) == ("", 1.0, True, False)
    assert (
        info["outcome"] == "correct" and info["correct"] is True and info["extracted"] == env.problem.answer
    )
    env.reset(seed=1)
    assert env.step(f"{chosen(env.problem)} Actually \\boxed{{0}}")[1] == 0.0


@pytest.mark.parametrize(
    "completion", ["", "\x00\x01", "🧮" * 10_000, "x" * 2_000_000, "\\boxed{", "}}}{{{" * 1000]
)
def test_any_string_is_a_well_formed_wrong_answer(env: ReasoningEnv, completion: str) -> None:
    env.reset(seed=2)
    _, reward, terminated, _, info = env.step(completion)
    assert reward == 0.0 and terminated and info["correct"] is False


def test_non_string_action_is_a_type_error(env: ReasoningEnv) -> None:
    env.reset(seed=0)
    with pytest.raises(TypeError, match="action must be a str .* got int"):
        env.step(42)


def test_step_before_reset_and_after_the_end_asks_for_reset(env: ReasoningEnv) -> None:
    with pytest.raises(gymnasium.error.ResetNeeded, match="call env.reset"):
        env.step("hello")
    env.reset(seed=0)
    env.step("hello")
    with pytest.raises(gymnasium.error.ResetNeeded, match="call env.reset"):
        env.step("hello")


@pytest.mark.parametrize(
    ("options", "completion", "expected"),
    [
        ({"format_reward": 0.25}, "gold", 1.25),
        ({"format_reward": 0.25}, "\\boxed{-1}", 0.25),
        ({"format_reward": 0.25}, "no answer at all", 0.0),
        ({"correct_reward": 2.0}, "gold", 2.0),
        ({"length_budget": 10, "length_penalty": 0.5}, "gold", 0.5),
        ({"length_budget": 1000, "length_penalty": 0.5}, "gold", 1.0),
        (
            {"length_budget": 10, "length_penalty": 0.5, "length_buffer": 1000},
            "gold",
            1.0 - 0.5 * (42 - 10) / 1000,
        ),
    ],
)
def test_reward_shaping(options: dict, completion: str, expected: float) -> None:
    env = ReasoningEnv(adder_source(), **options)
    env.reset(options={"index": 0})
    text = chosen(env.problem).ljust(42) if completion == "gold" else completion
    assert env.step(text)[1] == pytest.approx(expected)


def test_score_grades_without_stepping(env: ReasoningEnv) -> None:
    problem = env.problem_at(3)
    assert env.score(problem, chosen(problem)).correct is True
    assert env.score(problem, "\\boxed{nope}").correct is False


def test_render_ansi_shows_prompt_and_grade() -> None:
    env = ReasoningEnv(adder_source(), render_mode="ansi")
    prompt, _ = env.reset(seed=0)
    assert env.render() == prompt
    env.step("nothing")
    assert env.render().endswith("[graded: unparseable]")
    with pytest.raises(ConfigError, match="render_mode 'human' is not supported"):
        ReasoningEnv(adder_source(), render_mode="human")


# --- Gymnasium's own checker ------------------------------------------------------------------------


def test_gymnasium_check_env_passes_directly(env: ReasoningEnv) -> None:
    check_env(env, skip_render_check=True)


def test_gymnasium_check_env_passes_through_make() -> None:
    gymnasium.register("reasongym-test/Adder-v0", entry_point=ReasoningEnv, kwargs={"source": adder_source})
    try:
        check_env(gymnasium.make("reasongym-test/Adder-v0").unwrapped)
    finally:
        gymnasium.registry.pop("reasongym-test/Adder-v0")
