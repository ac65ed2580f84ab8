"""The reward as named, weighted terms: TRL's weighted sum of the exported functions is the env's reward."""

from __future__ import annotations

import pytest

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
