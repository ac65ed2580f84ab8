"""Vector environments over text observations, and group sampling for GRPO."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector.utils import create_shared_memory, write_to_shared_memory

import reasongym
from reasongym.envs.core import TextSpace, format_final_answer
from reasongym.envs.problem import Problem
from reasongym.envs.vector import group_seeds, make_group, make_vector, reset_group
from reasongym.envs.wrappers import CurriculumWrapper
from reasongym.errors import ConfigError

UNICODE_ID = "test/UnicodeProducts-v0"


def _unicode_product(rng: np.random.Generator, difficulty: int) -> Problem:
    a, b = (int(x) for x in rng.integers(2, 40, size=2))
    return Problem(f"Compute {a} × {b} (≤ 2000, naïvely).", str(a * b), "integer")


@pytest.fixture(scope="module", autouse=True)
def unicode_env() -> None:
    reasongym.register_generator(UNICODE_ID, _unicode_product, answer_type="integer", override=True)


def _golds(infos: dict) -> list[str]:
    return [
        format_final_answer(kind, answer)
        for kind, answer in zip(infos["answer_type"], infos["answer"], strict=True)
    ]


def test_gymnasium_shared_memory_cannot_carry_unicode_text() -> None:
    """Why make_vector turns shared memory off: the Text path maps characters through the charset."""
    space = TextSpace(64)
    memory = create_shared_memory(space, n=1)
    with pytest.raises(KeyError):
        write_to_shared_memory(space, 0, "7 × 6", memory)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_vector_env_round_trip_keeps_text_and_rewards(asynchronous: bool) -> None:
    kwargs = {"context": "fork"} if asynchronous else {}
    envs = make_vector(UNICODE_ID, 2, asynchronous=asynchronous, **kwargs)
    try:
        prompts, infos = envs.reset(seed=[5, 6], options={"include_answer": True})
        single = reasongym.make(UNICODE_ID)
        assert prompts == tuple(single.reset(seed=s)[0] for s in (5, 6))
        assert all("×" in p and "≤" in p and "naïvely" in p for p in prompts)
        wrong = "\\boxed{-1}"
        next_prompts, rewards, terminated, truncated, step_infos = envs.step([_golds(infos)[0], wrong])
        assert rewards.tolist() == [1.0, 0.0]
        assert terminated.tolist() == [True, True] and truncated.tolist() == [False, False]
        # same-step autoreset: the next prompts come back at once, the finished episodes under final_*
        assert step_infos["final_info"]["correct"].tolist() == [True, False]
        assert all("×" in p for p in next_prompts) and next_prompts != prompts
    finally:
        envs.close()


def test_group_seeds_keep_groups_aligned_across_autoresets() -> None:
    seeds = group_seeds(100, num_groups=2, group_size=3)
    envs = make_vector("reasongym/Arithmetic-v0", 6)
    prompts, infos = envs.reset(seed=seeds, options={"include_answer": True})
    for _ in range(3):
        assert len(set(prompts[:3])) == 1 and len(set(prompts[3:])) == 1 and prompts[0] != prompts[3]
        prompts, _, _, _, infos = envs.step(["\\boxed{0}"] * 6)
    envs.close()


def test_vector_env_applies_wrappers() -> None:
    envs = make_vector("reasongym/Arithmetic-v0", 2, wrappers=[lambda e: CurriculumWrapper(e, start_level=3)])
    _, infos = envs.reset(seed=0)
    assert infos["difficulty"].tolist() == [3, 3]
    assert infos["curriculum"]["level"].tolist() == [3, 3]
    envs.close()


def test_next_step_autoreset_can_be_chosen() -> None:
    envs = make_vector("reasongym/Arithmetic-v0", 2, autoreset_mode="next_step")
    envs.reset(seed=0)
    envs.step(["\\boxed{0}"] * 2)
    _, rewards, terminated, _, _ = envs.step(["ignored"] * 2)  # this step only resets
    assert rewards.tolist() == [0.0, 0.0] and terminated.tolist() == [False, False]
    envs.close()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: make_vector("reasongym/Arithmetic-v0", 0), "num_envs must be an int >= 1"),
        (lambda: make_vector("reasongym/Arithmetic-v0", 2, autoreset_mode="sometimes"), "autoreset_mode"),
        (lambda: group_seeds(0, 2, 0), "group_size must be an int >= 1"),
        (lambda: group_seeds(-1, 2, 2), "seed must be a non-negative int"),
        (lambda: reset_group([]), "at least one environment"),
    ],
)
def test_bad_arguments_are_config_errors(call, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ConfigError, match=message):
        call()


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (
            "abc",
            "step takes a sequence of 3 completions (one string per environment), not 'abc' (of type str)",
        ),
        (["a", "b"], "step takes 3 completions, one per environment; got 2"),
        (["a", 1, "c"], "action 1 is 1; every action is a completion string"),
        (5, "not 5 (of type int)"),
    ],
)
def test_step_refuses_what_is_not_one_completion_per_env(asynchronous: bool, actions, message: str) -> None:  # noqa: ANN001
    envs = make_vector("reasongym/Arithmetic-v0", 3, asynchronous=asynchronous)
    envs.reset(seed=0)
    try:  # issue 28, item 12: "abc" was taken as the three actions "a", "b", "c"
        with pytest.raises(ConfigError) as caught:
            envs.step(actions)
        assert message in str(caught.value)
        _, rewards, _, _, _ = envs.step(("1", "2", "3"))  # the refused step left the envs usable
        assert len(rewards) == 3
    finally:
        envs.close()


@pytest.mark.parametrize("seed", [None, 4])
def test_reset_group_shows_one_problem_to_every_copy(seed: int | None) -> None:
    envs = make_group("reasongym/ToolArithmetic-v0", 4)
    prompts, infos = reset_group(envs, seed=seed, options={"difficulty": 2})
    assert len(set(prompts)) == 1 and len({i["problem_id"] for i in infos}) == 1
    assert {i["difficulty"] for i in infos} == {2}
    # the copies are independent episodes: one ends, the others go on
    envs[0].step("\\boxed{0}")
    assert envs[1].step("<calc>1+1</calc>")[0] == "\n<result>2</result>\n"


def test_group_copies_of_different_seeds_differ() -> None:
    envs = make_group("reasongym/Arithmetic-v0", 2)
    first, _ = reset_group(envs, seed=1)
    second, _ = reset_group(envs, seed=2)
    assert first[0] != second[0]
