"""benchmarks/bench.py: the shuffled-reward control keeps the reward rate, loses the relation to the
completion, and does so through ``step`` (GRPO, DAPO) and through ``score``/``score_many`` (STaR)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest

from reasongym.rollouts.env_pool import episode_envs
from reasongym.verifiers import Outcome, Verdict

SCRIPT = "benchmarks.controls"


class StubEnv(gymnasium.Env):
    """One-step episodes: the completion ``right`` is correct (reward 1), ``wrong`` is not (reward 0),
    ``ungradable`` has a gold that cannot be graded (correct None)."""

    observation_space = gymnasium.spaces.Text(64)
    action_space = gymnasium.spaces.Text(64)

    def __init__(self) -> None:
        self.source = "the problems"
        self.split = "train"

    def problem_at(self, index: int, split: str = "train") -> str:
        return f"problem {index}"

    def score(self, problem: str, completion: str) -> Verdict:
        if completion == "ungradable":
            return Verdict(None, Outcome.REFUSED, None, "the gold cannot be graded")
        right = completion == "right"
        return Verdict(right, Outcome.CORRECT if right else Outcome.WRONG, completion, "stub")

    def score_many(self, problem: str, completions: list[str]) -> list[Verdict]:
        return [self.score(problem, text) for text in completions]

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        self.split = (options or {}).get("split", "train")
        return "problem", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        verdict = self.score("problem", action)
        return "", verdict.score, True, False, {"correct": verdict.correct, "replay": {"split": self.split}}


def _completions(count: int, rate: float = 0.3, seed: int = 0) -> list[str]:
    right = np.random.default_rng(seed).random(count) < rate
    return ["right" if r else "wrong" for r in right]


def _step_rewards(env: gymnasium.Env, completions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    rewards, correct = [], []
    for text in completions:
        env.reset()
        _, reward, terminated, _, info = env.step(text)
        assert terminated
        rewards.append(reward)
        correct.append(info["correct"])
    return np.array(rewards, dtype=float), np.array(correct, dtype=float)


def test_through_step_the_rate_is_kept_and_the_link_to_correctness_is_gone(bench: Any) -> None:
    verdicts = bench.RunVerdicts(seed=0)
    env = bench.RecordedVerdicts(StubEnv(), verdicts, shuffle=True)
    texts = _completions(4000)
    rewards, correct = _step_rewards(env, texts)
    real = np.array([text == "right" for text in texts], dtype=float)
    assert np.array_equal(correct, real)  # info["correct"] stays real: metrics and evaluation read it
    assert verdicts.correct == [bool(r) for r in real]
    assert abs(rewards.mean() - real.mean()) < 0.03
    assert abs(np.corrcoef(real, rewards)[0, 1]) < 0.06
    assert not np.array_equal(rewards, real)


def test_without_shuffle_the_same_wrapper_only_records(bench: Any) -> None:
    verdicts = bench.RunVerdicts(seed=0)
    env = bench.RecordedVerdicts(StubEnv(), verdicts, shuffle=False)
    texts = _completions(200)
    rewards, correct = _step_rewards(env, texts)
    assert np.array_equal(rewards, correct)
    assert verdicts.correct == [text == "right" for text in texts]
    assert env.unwrapped.score("p", "right").correct is True


def test_through_score_and_score_many_as_star_grades(bench: Any) -> None:
    verdicts = bench.RunVerdicts(seed=1)
    env = bench.RecordedVerdicts(StubEnv(), verdicts, shuffle=True)
    base = env.unwrapped  # what STaR grades with: the wrapper itself, the env's attributes forwarded
    assert base is env and base.source == "the problems" and base.problem_at(3) == "problem 3"
    texts = _completions(4000, rate=0.4, seed=1)
    handed = [base.score("p", text) for text in texts[:2000]]
    handed += [v for i in range(2000, 4000, 8) for v in base.score_many("p", texts[i : i + 8])]
    drawn = np.array([v.correct for v in handed], dtype=float)
    real = np.array([text == "right" for text in texts], dtype=float)
    assert len(verdicts.correct) == 4000
    assert abs(drawn.mean() - real.mean()) < 0.03
    assert abs(np.corrcoef(real, drawn)[0, 1]) < 0.06
    for verdict in handed:  # the outcome agrees with the drawn correctness
        assert (verdict.outcome is Outcome.CORRECT) == verdict.correct
        assert verdict.reason.startswith("shuffled-reward control")


def test_a_verdict_never_comes_from_its_own_completion(bench: Any) -> None:
    env = bench.RecordedVerdicts(StubEnv(), bench.RunVerdicts(seed=0), shuffle=True)
    rewards, _ = _step_rewards(env, ["right", "wrong"])
    assert rewards.tolist() == [0.0, 1.0]  # nothing earlier for the first; the second gets the first's
    env = bench.RecordedVerdicts(StubEnv(), bench.RunVerdicts(seed=0), shuffle=True)
    rewards, _ = _step_rewards(env, ["wrong"] * 30 + ["right"])
    assert rewards[-1] == 0.0  # drawn from the 30 wrong ones before it, never from itself
    grader = bench.RecordedVerdicts(StubEnv(), bench.RunVerdicts(seed=0), shuffle=True)
    assert grader.score("p", "right").correct is False
    grader = bench.RecordedVerdicts(StubEnv(), bench.RunVerdicts(seed=0), shuffle=True)
    assert not any(v.correct for v in grader.score_many("p", ["wrong"] * 30 + ["right"]))


def test_ungradable_verdicts_and_held_out_episodes_pass_through_unrecorded(bench: Any) -> None:
    verdicts = bench.RunVerdicts(seed=0)
    env = bench.RecordedVerdicts(StubEnv(), verdicts, shuffle=True)
    env.reset()
    _, reward, *_ = env.step("ungradable")
    assert reward == 0.0 and env.score("p", "ungradable").correct is None
    assert verdicts.correct == []
    env.reset(options={"split": "test"})  # a trainer's held-out evaluation: real, and not training's
    assert env.step("right")[1] == 1.0 and verdicts.correct == []
    env.reset()
    assert env.step("right")[1] == 0.0 and verdicts.correct == [True]  # training: drawn from nothing


def test_every_copy_the_trainer_makes_draws_from_one_seeded_pool(bench: Any) -> None:
    def run(seed: int) -> list[float]:
        verdicts = bench.RunVerdicts(seed=seed)
        copies = episode_envs(bench.RecordedVerdicts(StubEnv(), verdicts, shuffle=True), 4)
        assert all(copy.verdicts is verdicts for copy in copies)
        rewards = []
        for batch in range(100):
            for copy, text in zip(copies, _completions(4, seed=batch), strict=True):
                copy.reset()
                rewards.append(copy.step(text)[1])
        assert len(verdicts.correct) == 400
        return rewards

    assert run(seed=0) == run(seed=0)
    assert run(seed=0) != run(seed=1)


@pytest.mark.parametrize("shuffle", [False, True])
def test_star_filters_on_the_controls_verdicts(bench: Any, shuffle: bool) -> None:
    """STaR's own filter (`filter_correct`, through `STaRTask.from_env`, which looks through wrappers)
    keeps exactly the right answers on the real arm, and keeps on drawn verdicts on the control."""
    import reasongym
    from reasongym.agents.config import RunConfig
    from reasongym.agents.rationales import STaRTask, filter_correct
    from reasongym.envs.core import format_final_answer, gold_answer_text
    from reasongym.generation import Completion
    from reasongym.policy.tiny import make_char_tokenizer

    verdicts = bench.RunVerdicts(seed=0)
    env = bench.RecordedVerdicts(reasongym.make("reasongym/Arithmetic-v0"), verdicts, shuffle=shuffle)
    task = STaRTask.from_env(env, make_char_tokenizer(), RunConfig(progress_bar=False))
    assert task.env is env
    problems = [env.problem_at(i, split="train") for i in range(60)]
    right = [i % 3 == 0 for i in range(60)]
    texts = [
        format_final_answer(p.answer_type, gold_answer_text(p)) if ok else "No answer."
        for p, ok in zip(problems, right, strict=True)
    ]
    samples = [[Completion(text, None, None, "stop")] for text in texts]
    kept = filter_correct(task, problems, range(60), samples, source="direct", max_per_problem=1)
    kept_indices = [example.index for example in kept]
    assert verdicts.correct == right
    if not shuffle:
        assert kept_indices == [i for i in range(60) if right[i]]
    else:
        assert 8 <= len(kept) <= 32 and kept_indices != [i for i in range(60) if right[i]]
