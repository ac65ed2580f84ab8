"""TRL's GRPOTrainer trains the tiny model for two steps on an environment served by ``reasongym serve-env``:
the prompts come from the server (``openenv_dataset``) and every reward is the server's (``openenv_reward``)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("openenv.core", reason="the openenv extra is not installed")
trl = pytest.importorskip("trl")

import reasongym  # noqa: E402
from reasongym.envs.remote import openenv_dataset, openenv_reward  # noqa: E402
from reasongym.policy.tiny import tiny_policy  # noqa: E402
from tests.envs.openenv_server import serve_env  # noqa: E402

ENV_ID = "reasongym/Arithmetic-v0"


@pytest.mark.slow
def test_trl_grpo_trains_two_steps_on_a_served_env(tmp_path: Path) -> None:
    model, tokenizer = tiny_policy(0)
    graded: list[tuple[str, int, str, float]] = []
    with serve_env(ENV_ID) as (url, _):
        address = f"openenv://{url.removeprefix('http://')}"
        dataset = openenv_dataset(address, 4, seed=10)
        served_reward = openenv_reward(address)

        def reward(prompts, completions, index, split, **kwargs):
            rewards = served_reward(prompts, completions, index=index, split=split)
            graded.extend(zip(completions, index, split, rewards, strict=True))
            return rewards

        config = trl.GRPOConfig(
            output_dir=str(tmp_path),
            per_device_train_batch_size=4,
            num_generations=2,
            max_completion_length=8,
            max_steps=2,
            learning_rate=1e-4,
            beta=0.0,
            use_cpu=True,
            report_to=[],
            logging_steps=1,
            save_strategy="no",
            disable_tqdm=True,
            seed=0,
            dataloader_num_workers=0,
            bf16=False,
            fp16=False,
        )
        trainer = trl.GRPOTrainer(
            model=model, reward_funcs=reward, args=config, train_dataset=dataset, processing_class=tokenizer
        )
        trainer.train()
    assert trainer.state.global_step == 2
    assert len(graded) == 8  # 2 steps x 2 prompts x 2 completions
    local = reasongym.make(ENV_ID).unwrapped
    for completion, index, split, reward_value in graded:  # the server's rewards are the environment's own
        problem = local.problem_at(index, split=split)
        assert reward_value == local.compute_reward(local.score(problem, completion), completion)
    # the prompts TRL trained on are the server's, problem for problem
    for row in dataset:
        assert row["prompt"] == local.prompt(local.problem_at(row["index"], split=row["split"]))
