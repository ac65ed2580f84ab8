"""What the trainer tests share: one torch thread, small configs, one way to train (the small tiny model,
``tiny``, is every test's: tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from reasongym.agents.algorithms import ALGORITHMS, preset_configs

SMALL: dict[str, dict[str, Any]] = {
    "grpo": {
        "max_steps": 2,
        "num_prompts": 2,
        "group_size": 3,
        "max_new_tokens": 12,
        "lr": 1e-3,
        "mu": 2,
        "difficulty": 1,
        "progress_bar": False,
        "samples_every": 1,
        "eval_problems": 3,
    },
    "dapo": {
        "max_steps": 2,
        "num_prompts": 2,
        "group_size": 3,
        "max_new_tokens": 12,
        "overlong_buffer": 4,
        "lr": 1e-3,
        "mu": 2,
        "difficulty": 1,
        "progress_bar": False,
        "max_extra_rounds": 1,
    },
}
"""A few seconds of each RL trainer on the tiny model: 2 steps of 2 prompts x 3 samples of 12 tokens."""


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    # Two shared cores: a second thread only waits on the other process (see tests/conftest.py).
    torch.set_num_threads(1)


@pytest.fixture
def small_configs() -> Callable[..., dict[str, Any]]:
    """``small_configs(algo, **fields)``: the ``default`` preset's configs with `SMALL`'s values and ``fields``."""

    def build(algo: str, **fields: Any) -> dict[str, Any]:
        return preset_configs("default", algo, **{**SMALL.get(algo, {}), **fields})

    return build


@pytest.fixture
def train() -> Callable[..., Any]:
    """``train(algo, configs, model, tokenizer, env, **kwargs)``: the algorithm's trainer with those configs."""

    def run(algo: str, configs: dict[str, Any], model: Any, tokenizer: Any, env: Any, **kwargs: Any) -> Any:
        own = configs[algo]
        return ALGORITHMS[algo].train(
            own, model, tokenizer, env, run=configs["run"], rollout=configs["rollout"], **kwargs
        )

    return run
