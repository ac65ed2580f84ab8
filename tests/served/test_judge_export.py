"""TRL's reward function grades through the environment's own scoring, so an environment graded by a judge is
graded by that judge in TRL too (it used to grade by the rules: a judge configuration was ignored)."""

from __future__ import annotations

import pytest

from benchmarks.harness.fake_server import Reply, chat_body, fake_server
from reasongym.envs.core import ReasoningEnv, ReasoningEnvConfig
from reasongym.envs.export import reward_function, to_dataset
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource
from reasongym.verifiers.judge import JudgeConfig

pytest.importorskip("openai", reason="the judge needs the openai package (the serve extra)")
PROBLEMS = [Problem("Name a primary colour.", "red", "exact", id="c0")]


def test_the_trl_reward_of_a_judged_environment_is_the_judges_verdict() -> None:
    # The judge accepts "blue" against the gold "red" and refuses the gold itself: the rules would say the opposite.
    replies = [Reply(body=chat_body(["CORRECT"])), Reply(body=chat_body(["INCORRECT"]))]
    with fake_server(replies) as server:
        judge = JudgeConfig(model="m", base_url=server.base_url, max_concurrency=1)
        env = ReasoningEnv(
            DatasetSource.from_problems("colours", "exact", {"test": PROBLEMS}),
            config=ReasoningEnvConfig(judge=judge),
        )
        data = to_dataset(env, None, split="test")
        columns = {
            key: data[key] for key in ("answer", "answer_type", "choices", "split", "index", "difficulty")
        }
        reward = reward_function(env)
        assert reward(data["prompt"], ["The answer is \\boxed{blue}."], **columns) == [1.0]
        assert reward(data["prompt"], ["The answer is \\boxed{red}."], **columns) == [0.0]
        assert (
            len(server.requests) == 2
            and "Name a primary colour." in server.requests[0]["messages"][1]["content"]
        )
