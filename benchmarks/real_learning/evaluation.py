"""The starting model, the environment, and held-out greedy accuracy (with the extracted-answer rate)."""

from __future__ import annotations

import time
from typing import Any

import torch

import reasongym
from benchmarks.real_learning.setting import (
    Setting,
)
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.policy.loading import load_policy
from reasongym.rollouts.batch import collect_rollouts


def make_env(setting: Setting, env_id: str | None = None) -> Any:
    kwargs = {} if setting.instruction is None else {"instruction": setting.instruction}
    return reasongym.make(env_id or setting.env_id, **kwargs)


def held_out(model: Any, tokenizer: Any, setting: Setting) -> dict[str, Any]:
    """Greedy accuracy (and the answer-extracted rate) on the first ``eval_problems`` test problems of each
    held-out env; ``correct`` keeps the first env's per-problem results for paired intervals."""
    params = SamplingParams(temperature=0.0, max_new_tokens=setting.max_new_tokens)
    was_training, started, wall = model.training, time.process_time(), time.perf_counter()
    model.eval()
    results: dict[str, Any] = {}
    sampler = eval_sampler(model, tokenizer, setting)
    for position, env_id in enumerate(setting.eval_env_ids):
        problems = (
            setting.eval_problems if position == 0 else setting.side_eval_problems or setting.eval_problems
        )
        batch = collect_rollouts(
            make_env(setting, env_id) if position == 0 else reasongym.make(env_id),  # the others: own prompt
            sampler,
            tokenizer,
            list(range(problems)),
            params=params,
            split="test",
            difficulty=setting.difficulty if position == 0 else None,
        )
        name = env_id.split("/")[-1]
        results[f"{name}/accuracy"] = round(float(batch.correct.float().mean()), 4)
        results[f"{name}/extracted_rate"] = round(
            sum(e is not None for e in batch.extracted) / len(batch.texts), 4
        )
        if position == 0:
            results["accuracy"] = results[f"{name}/accuracy"]
            results["correct"] = [int(c) for c in batch.correct.tolist()]
    model.train(was_training)
    results["eval_cpu_seconds"] = round(time.process_time() - started, 1)
    results["eval_wall_seconds"] = round(time.perf_counter() - wall, 1)
    return results


def eval_sampler(model: Any, tokenizer: Any, setting: Any) -> Any:
    """The greedy held-out sampler: on the policy itself, or with ``sampler_weights`` bf16 on a GPU a bfloat16
    copy of its current weights (as the trainer samples)."""
    if (
        getattr(setting, "sampler_weights", "policy") == "policy"
        or next(model.parameters()).device.type != "cuda"
    ):
        return HFGenerator(model, tokenizer)
    from reasongym.generation.low_precision import LowPrecisionGenerator

    return LowPrecisionGenerator(model, tokenizer)


def load(setting: Setting, seed: int) -> tuple[Any, Any]:
    """The setting's starting model and tokenizer, on the GPU when there is one."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if setting.model == "tiny":
        from reasongym.policy.tiny import tiny_policy

        model, tokenizer = tiny_policy(seed)
        return model.to(device), tokenizer
    return load_policy(setting.model, device=device)
