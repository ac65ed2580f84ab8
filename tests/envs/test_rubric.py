"""The reward as named, weighted terms: TRL's weighted sum of the exported functions is the env's reward."""

from __future__ import annotations

import json

import pytest
import torch

import reasongym
from reasongym.envs.export import to_dataset
from reasongym.envs.rubric import rubric, trl_reward_functions

SHAPED = {"format_reward": 0.2, "length_budget": 40, "length_penalty": 0.5, "length_buffer": 10}


def test_the_terms_and_weights_follow_the_config() -> None:
    plain = reasongym.make("reasongym/Arithmetic-v0").unwrapped
    assert [(t.name, t.weight) for t in rubric(plain)] == [("correctness", 1.0)]
    shaped = reasongym.make("reasongym/Arithmetic-v0", **SHAPED).unwrapped
    assert [(t.name, t.weight) for t in rubric(shaped)] == [
        ("correctness", 1.0),
        ("format", 0.2),
        ("length", -0.5),
    ]


@pytest.mark.parametrize("chat", [True, False])
def test_trl_weighted_sum_is_the_environments_reward(chat: bool) -> None:
    env = reasongym.make("reasongym/Arithmetic-v0", **SHAPED).unwrapped
    data = to_dataset(env, 3, seed=4, chat=chat)
    funcs, weights = trl_reward_functions(env)
    assert [f.__name__ for f in funcs] == ["correctness", "format", "length"]
    for answer in data["answer"]:
        completions = [
            f"\\boxed{{{answer}}}",  # right, short: 1 + 0.2
            f"\\boxed{{{answer}1}}",  # wrong but formatted: the format term alone pays 0.2
            "I do not know",  # no answer: 0
            "x" * 45 + f" \\boxed{{{answer}}}",  # right, 18 characters over: 1 + 0.2 - 0.5
        ]
        columns = {key: [data[key][0]] * 4 for key in ("answer", "answer_type", "choices")}
        columns["answer"] = [answer] * 4
        per_term = [f([data["prompt"][0]] * 4, completions, **columns) for f in funcs]
        totals = [sum(w * values[i] for w, values in zip(weights, per_term, strict=True)) for i in range(4)]
        problem = reasongym.envs.problem.Problem("q", answer, data["answer_type"][0])
        expected = [env.compute_reward(env.score(problem, c), c) for c in completions]
        assert totals == pytest.approx(expected)
        assert totals == pytest.approx([1.2, 0.2, 0.0, 0.7])


def test_step_reports_each_term_and_the_reward_is_their_weighted_sum() -> None:
    env = reasongym.make("reasongym/Arithmetic-v0", **SHAPED)
    terms = rubric(env.unwrapped)
    env.reset(options={"index": 0})
    gold = env.unwrapped.problem.answer
    cases = {  # completion -> (correctness, format, length)
        f"\\boxed{{{gold}}}": (1.0, 1.0, 0.0),
        f"\\boxed{{{gold}1}}": (0.0, 1.0, 0.0),  # wrong, but an answer was read
        "I do not know": (0.0, 0.0, 0.0),
        "x" * 45 + f" \\boxed{{{gold}}}": (1.0, 1.0, 1.0),  # 10 or more characters over the budget of 40
    }
    for text, expected in cases.items():
        env.reset(options={"index": 0})
        _, reward, _, _, info = env.step(text)
        assert tuple(info["reward_terms"].values()) == expected, text
        assert reward == pytest.approx(sum(t.weight * info["reward_terms"][t.name] for t in terms))


def test_the_batch_carries_the_terms_and_the_metrics_read_them(tiny) -> None:
    from reasongym.generation import HFGenerator, SamplingParams
    from reasongym.rollouts.batch import collect_rollouts
    from reasongym.rollouts.metrics import batch_rows, rollout_metrics

    model, tokenizer = tiny()
    params = SamplingParams(n=2, max_new_tokens=12, temperature=1.0, seed=0)
    env = reasongym.make("reasongym/Arithmetic-v0", **{**SHAPED, "length_budget": 4})
    batch = collect_rollouts(env, HFGenerator(model, tokenizer), tokenizer, [0, 1], params=params)
    assert list(batch.reward_terms) == ["correctness", "format", "length"]
    weighted = (
        batch.reward_terms["correctness"]
        + 0.2 * batch.reward_terms["format"]
        - 0.5 * batch.reward_terms["length"]
    )
    torch.testing.assert_close(weighted, batch.rewards)
    kept = batch.select_groups(torch.tensor([False, True]))  # the terms follow their rows
    torch.testing.assert_close(kept.reward_terms["length"], batch.reward_terms["length"][2:])
    metrics = rollout_metrics(batch_rows([batch, kept]), 2)
    assert metrics["reward/length"] == pytest.approx(
        float(torch.cat([batch.reward_terms["length"], kept.reward_terms["length"]]).mean())
    )
    retry = reasongym.make("reasongym/ArithmeticRetry-v0")  # its reward discounts attempts: not their sum
    other = collect_rollouts(retry, HFGenerator(model, tokenizer), tokenizer, [0], params=params)
    assert other.reward_terms is None
    assert not any(key.startswith("reward/") for key in rollout_metrics(batch_rows([other]), 2))


@pytest.mark.parametrize("algo", ["grpo", "dapo"])
def test_the_trainers_log_each_term_per_step(algo: str, tmp_path) -> None:
    from reasongym.agents import preset_configs
    from reasongym.agents.dapo import train_dapo
    from reasongym.agents.grpo import train_grpo
    from reasongym.policy.tiny import tiny_policy

    configs = preset_configs(
        "tiny",
        algo,
        max_steps=2,
        num_prompts=2,
        group_size=2,
        max_new_tokens=12,
        progress_bar=False,
        eval_every=0,
    )
    model, tokenizer = tiny_policy(0)
    train = train_grpo if algo == "grpo" else train_dapo
    # A budget of 4 characters, so that the random model's completions pay a length term that varies.
    env = reasongym.make("reasongym/Arithmetic-v0", **{**SHAPED, "length_budget": 4})
    result = train(
        configs[algo], model, tokenizer, env, run=configs["run"], rollout=configs["rollout"], run_dir=tmp_path
    )
    logged = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    steps = [row for row in logged if "rollout/reward_mean" in row]
    assert len(steps) == 2 == len(result.history)
    for row in steps:
        assert {"reward/correctness", "reward/format", "reward/length"} <= set(row)
        weighted = row["reward/correctness"] + 0.2 * row["reward/format"] - 0.5 * row["reward/length"]
        assert weighted == pytest.approx(row["rollout/reward_mean"])
        assert 0 < row["reward/length"] <= 1
