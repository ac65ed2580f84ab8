"""The curriculum wrapper: difficulty follows the measured success rate."""

from __future__ import annotations

import json

import pytest

import reasongym
from reasongym.envs.core import ReasoningEnv, format_final_answer
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource
from reasongym.envs.wrappers import CurriculumConfig, CurriculumWrapper
from reasongym.errors import ConfigError


def _episode(env: CurriculumWrapper, seed: int, solve: bool) -> dict:
    """One episode answered correctly or not; returns the last info plus the episode's difficulty."""
    _, info = env.reset(seed=seed, options={"include_answer": True})
    answer = info["answer"] if solve else "123456789"
    step_info = env.step(format_final_answer(info["answer_type"], answer))[4]
    return {**step_info, "difficulty": info["difficulty"]}


def _curriculum(**overrides: object) -> CurriculumWrapper:
    return CurriculumWrapper(reasongym.make("reasongym/Arithmetic-v0"), window=4, min_episodes=4, **overrides)


def test_a_solver_climbs_to_the_top_level_and_stays() -> None:
    env = _curriculum()
    levels = []
    for seed in range(30):
        info = _episode(env, seed, solve=True)
        levels.append(info["difficulty"])
        json.dumps(info)
    assert levels[:4] == [1] * 4 and levels[4:8] == [2] * 4  # up after min_episodes
    assert levels[-1] == 5 and env.level == 5 and env.moves == 4
    assert info["curriculum"]["last_move"] == "up"


def test_a_failing_agent_walks_back_down() -> None:
    env = _curriculum(start_level=3)
    for seed in range(12):
        info = _episode(env, seed, solve=False)
    assert env.level == 1 and env.moves == 2
    assert info["curriculum"] == {
        "level": 1,
        "success_rate": 0.0,
        "episodes_at_level": 4,
        "last_move": "down",
        "moves": 2,
    }


def test_a_middling_rate_holds_the_level() -> None:
    env = _curriculum(start_level=2)
    for seed in range(12):
        _episode(env, seed, solve=seed % 2 == 0)
    assert (env.level, env.moves, env.success_rate) == (2, 0, 0.5)


def test_the_rate_is_measured_over_the_window_only() -> None:
    env = CurriculumWrapper(
        reasongym.make("reasongym/Arithmetic-v0"), window=4, min_episodes=2, promote_at=0.75
    )
    for seed, solve in enumerate([False, True, False, True]):
        _episode(env, seed, solve)
    assert env.level == 1  # 2 of 4
    _episode(env, 10, True)  # window now True, False, True, True
    assert env.level == 2


def test_an_explicit_difficulty_wins_and_is_not_counted() -> None:
    env = _curriculum()
    _, info = env.reset(seed=0, options={"difficulty": 4, "include_answer": True})
    assert info["difficulty"] == 4
    env.step(format_final_answer("math", info["answer"]))
    assert env.state()["episodes_at_level"] == 0 and env.level == 1


def test_truncated_tool_episodes_count_as_failures() -> None:
    env = CurriculumWrapper(
        reasongym.make("reasongym/ToolArithmetic-v0", max_turns=1), start_level=5, window=2, min_episodes=2
    )
    for seed in range(2):
        env.reset(seed=seed)
        _, _, _, truncated, info = env.step("<calc>1+1</calc>")
        assert truncated
    assert info["curriculum"]["last_move"] == "down" and env.level == 4


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"window": 0}, "CurriculumConfig.window"),
        ({"window": 4, "min_episodes": 5}, "min_episodes .5. must be <= window"),
        ({"promote_at": 1.5}, "CurriculumConfig.promote_at"),
        ({"promote_at": 0.3, "demote_at": 0.4}, "must be below promote_at"),
        ({"levels": ()}, "CurriculumConfig.levels"),
        ({"start_level": 9}, "start_level 9 is not one of the levels"),
    ],
)
def test_bad_settings_are_config_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CurriculumWrapper(reasongym.make("reasongym/Arithmetic-v0"), **overrides)


def test_a_source_without_levels_needs_explicit_levels() -> None:
    rows = [Problem("What is 1 + 1?", "2", id="p0")]
    env = ReasoningEnv(DatasetSource.from_problems("tiny", "math", {"test": rows}))
    with pytest.raises(ConfigError, match="no difficulty levels"):
        CurriculumWrapper(env)


def test_a_ready_config_is_accepted_and_overridden() -> None:
    env = CurriculumWrapper(
        reasongym.make("reasongym/Arithmetic-v0"), CurriculumConfig(window=8, min_episodes=4), start_level=2
    )
    assert (env.config.window, env.level, env.levels) == (8, 2, (1, 2, 3, 4, 5))
