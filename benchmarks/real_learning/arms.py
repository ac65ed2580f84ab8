"""The arms: GRPO and DAPO (and their shuffled controls, and the sampler ahead), STaR, SFT on gold answers,
more SFT after the warm start; `run_arm` trains one from the starting model and records it."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import reasongym
from benchmarks.controls import RecordedVerdicts, RunVerdicts
from benchmarks.harness.machine import Snapshot
from benchmarks.real_learning.budget import (
    ArmRun,
    Budget,
    BudgetSpent,
    SessionBudget,
    budgeted,
)
from benchmarks.real_learning.evaluation import held_out, load, make_env
from benchmarks.real_learning.setting import (
    RL_ROW_COST_IN_SFT_ROWS,
    Setting,
)
from reasongym.agents import preset_configs
from reasongym.agents.dapo import train_dapo
from reasongym.agents.grpo import train_grpo
from reasongym.agents.sft import train_sft
from reasongym.agents.sft_data import sft_pairs_from_env
from reasongym.agents.star import train_star
from reasongym.generation import HFGenerator
from reasongym.policy.loading import format_prompt


def rl_configs(
    setting: Setting, name: str, seed: int, max_steps: int = 1_000_000, max_staleness: int = 0, **fields: Any
) -> dict[str, Any]:
    """The configs of GRPO or DAPO (``name``) in ``setting``: the ``default`` preset with the setting's sizes
    (``max_staleness``: how many versions ahead a sampler process may draw; 0, the synchronous loop);
    ``fields`` change any other config field (the window runner's cadences)."""
    cadence = {"samples_every": 0, "eval_every": 0} | fields
    return preset_configs(
        "default",
        name,
        max_steps=max_steps,
        num_prompts=setting.num_prompts,
        group_size=setting.group_size,
        max_new_tokens=setting.max_new_tokens,
        temperature=setting.temperature,
        difficulty=setting.difficulty,
        lr=setting.lr,
        seed=seed,
        autocast=setting.autocast,
        engine=setting.engine,
        sampler_weights=getattr(setting, "sampler_weights", "policy"),
        progress_bar=False,
        tempered_logprobs=setting.tempered_logprobs,
        **cadence,
        gradient_checkpointing=False,
        micro_batch_size=16,  # a whole 128-row batch at once held 14 GB of activations
        max_staleness=max_staleness,
        **(
            {"kl": "off"} if name == "grpo" else {}
        ),  # as DAPO: the reference's forward pass costs a third more
    )


def rl_arm(run: ArmRun) -> int:
    """GRPO or DAPO (``run.arm``: ``_shuffled`` for the control, ``_async`` for GRPO with the sampler one
    version ahead) until the budget is spent; tokens sampled."""
    setting, name = run.setting, run.arm.removesuffix("_shuffled").removesuffix("_async")
    ahead = run.arm.endswith("_async")
    # The sampler process rebuilds the environment from its id: a wrapper here would see no episode.
    env = (
        make_env(setting)
        if ahead
        else RecordedVerdicts(make_env(setting), run.verdicts, shuffle=run.shuffled)
    )
    configs = rl_configs(setting, name, run.seed, max_staleness=1 if ahead else 0)
    trainer = train_grpo if name == "grpo" else train_dapo
    budget = Budget(run)
    # the run folder's metrics.jsonl holds the clip fractions
    with tempfile.TemporaryDirectory(prefix="real-learning-") as folder:
        # the trainer builds its own sampler (a vLLM engine with engine="vllm"; a process with K >= 1)
        trainer(
            configs[name],
            run.model,
            run.tokenizer,
            env,
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=folder,
            hooks=[SessionBudget(budget, record=ahead)],
        )
        lines = (Path(folder) / "metrics.jsonl").read_text().splitlines()
    run.train_steps[:] = [row for row in map(json.loads, lines) if "train/clip_low_frac" in row]
    return budget.tokens


def clip_record(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """An RL arm's clip fractions and importance ratios over its steps (each step's token mean, averaged)."""
    if not steps:
        return {}
    return {
        "clip_low_frac": float(np.mean([s["train/clip_low_frac"] for s in steps])),
        "clip_high_frac": float(np.mean([s["train/clip_high_frac"] for s in steps])),
        "ratio_max": float(max(s["train/ratio_max"] for s in steps)),
        "ratio_min": float(min(s["train/ratio_min"] for s in steps)),
        "entropy_first": steps[0].get("train/entropy"),
        "entropy_last": steps[-1].get("train/entropy"),
        "steps": len(steps),
    }


def star_arm(run: ArmRun) -> int:
    """STaR's filter loop (``star``, or ``star_shuffled``) until the budget is spent; tokens sampled.

    Each iteration samples ``group_size`` completions of as many training problems as a quarter of the budget
    pays for, keeps one verified completion per problem and fine-tunes from the base on what it kept (the
    paper's loop, rationalization off): about four iterations spend the budget (the last one may go past
    it, since the budget is checked before each iteration's sampling). Samples with our sampler.
    """
    setting, seed = run.setting, run.seed
    # STaR grades through env.score on env.unwrapped: the wrapper is its own unwrapped (controls.py)
    env = RecordedVerdicts(make_env(setting), run.verdicts, shuffle=run.shuffled)
    problems = max(1, setting.budget_tokens // (4 * setting.group_size * max(4, setting.max_new_tokens // 2)))
    configs = preset_configs(
        "default",
        "star",
        max_steps=1_000,
        group_size=setting.group_size,
        temperature=setting.temperature,
        max_new_tokens=setting.max_new_tokens,
        difficulty=setting.difficulty,
        lr=setting.lr,
        seed=seed,
        autocast=setting.autocast,
        eval_problems=8,
        progress_bar=False,
        rationalize=False,
        num_train_problems=problems,
    )
    budget = Budget(run)
    sampler = budgeted(HFGenerator(run.model, run.tokenizer), budget)
    try:
        train_star(
            configs["star"],
            run.model,
            run.tokenizer,
            env,
            run=configs["run"],
            rollout=configs["rollout"],
            rationale_generator=sampler,
        )
    except BudgetSpent:
        pass
    return budget.tokens


def sft_arm(run: ArmRun) -> int:
    """The reference: one epoch on gold answers in the instructed format (``The answer is N.``), as many
    problems as an RL arm samples completions of (if they take half the longest completion). Samples nothing."""
    setting, tokenizer = run.setting, run.tokenizer
    env = make_env(setting).unwrapped
    examples = setting.budget_tokens // (setting.group_size * max(4, setting.max_new_tokens // 2))
    pairs = []
    for index in range(examples):
        problem = env.problem_at(index, split="train")
        completion = f"The answer is {problem.answer}."
        if env.score(problem, completion).correct:
            pairs.append((format_prompt(tokenizer, env.messages(problem)), completion))
    sft_epoch(run, pairs, halfway_tokens=lambda step: step * 8)
    return 0


def sft_epoch(run: ArmRun, pairs: list[tuple[str, str]], halfway_tokens: Callable[[int], int]) -> int:
    """One epoch of SFT on ``pairs`` in batches of 8, the half-way evaluation at ``halfway_tokens(step)``
    on the plot's axis; the steps taken."""
    steps = max(1, len(pairs) // 8)
    configs = preset_configs(
        "default",
        "sft",
        max_steps=steps,
        lr=run.setting.lr,
        seed=run.seed,
        batch_size=8,
        autocast=run.setting.autocast,
        progress_bar=False,
    )

    def halfway(step: int) -> bool:
        if step == steps // 2:
            run.on_half(halfway_tokens(step))
        return False

    train_sft(configs["sft"], run.model, run.tokenizer, pairs, run=configs["run"], stop_when=halfway)
    return steps


WARM_START_PROBLEMS = 4000
"""Training problems the warm start draws its worked solutions from (`warm_start`'s ``num_pairs``)."""


def sft_more_arm(run: ArmRun) -> int:
    """More SFT on worked solutions (problems after the warm start's), as many rows as the budget would buy an
    RL arm times `RL_ROW_COST_IN_SFT_ROWS`, the rows counted in the solutions' mean length. Samples nothing."""
    setting, tokenizer = run.setting, run.tokenizer
    kwargs = {} if setting.instruction is None else {"instruction": setting.instruction}
    env = reasongym.make(setting.env_id, difficulty=setting.difficulty, **kwargs)
    probe = sft_pairs_from_env(env, 64, tokenizer=tokenizer, start=WARM_START_PROBLEMS)
    solution_tokens = float(
        np.mean([len(tokenizer(c, add_special_tokens=False).input_ids) for _, c in probe])
    )
    rows = max(8, round(RL_ROW_COST_IN_SFT_ROWS * setting.budget_tokens / solution_tokens))
    pairs = sft_pairs_from_env(env, rows, tokenizer=tokenizer, start=WARM_START_PROBLEMS)
    # plotted where an RL arm would be at this compute
    steps = sft_epoch(run, pairs, halfway_tokens=lambda step: setting.budget_tokens // 2)
    print(json.dumps({"sft_more": {"rows": len(pairs), "steps": steps, "solution_tokens": solution_tokens}}))
    return 0


def run_arm(setting: Setting, arm: str, seed: int) -> dict[str, Any]:
    """Train one arm from the starting model; its held-out curve, sampled tokens, CPU- and wall seconds.

    Each point of the curve keeps the wall seconds since the arm's start at which its weights were reached
    (``wall_s``: earlier evaluations included; ``train_wall_s``: without them), and the record the load
    average at the arm's start and end (another job on the machine slows it) and the CPU-seconds of its
    ended child processes (the sampler process of ``grpo_async``, whose CPU the trainer's leave out).
    """
    torch.manual_seed(seed)
    model, tokenizer = load(setting, seed)
    curve: list[dict[str, Any]] = []
    started = Snapshot()

    def evaluate_at(tokens: int) -> dict[str, Any]:
        wall_s = time.perf_counter() - started.wall
        train_wall_s = wall_s - sum(point["eval_wall_seconds"] for point in curve)
        result = held_out(model, tokenizer, setting)
        times = {"wall_s": round(wall_s, 1), "train_wall_s": round(train_wall_s, 1)}
        curve.append({"tokens": tokens, **times, **{k: v for k, v in result.items() if k != "correct"}})
        print(json.dumps({"arm": arm, "seed": seed, **curve[-1]}), file=sys.stderr, flush=True)
        return result

    run = ArmRun(setting, arm, model, tokenizer, seed, on_half=evaluate_at, verdicts=RunVerdicts(seed))
    trainers = {"sft": sft_arm, "sft_more": sft_more_arm}
    trainer = trainers.get(arm, star_arm if arm.startswith("star") else rl_arm)
    tokens = trainer(run)
    train_cpu = time.process_time() - started.cpu - sum(point["eval_cpu_seconds"] for point in curve)
    final = evaluate_at(tokens)
    machine = started.since()
    return {
        "arm": arm,
        "seed": seed,
        "sampled_tokens": tokens,
        "train_cpu_seconds": round(train_cpu, 1),
        "wall_seconds": curve[-1]["wall_s"],
        "train_wall_seconds": curve[-1]["train_wall_s"],
        "sampler_cpu_seconds": machine["children_cpu_s"],
        "load_start": machine["load_start"],
        "load_end": machine["load_end"],
        "accuracy": curve[-1]["accuracy"],
        "correct": final["correct"],
        "curve": curve,
        **train_correct_record(run.verdicts.correct),
        **clip_record(run.train_steps),
    }


def train_correct_record(log: list[bool]) -> dict[str, Any]:
    """The real training accuracy of an arm's episodes: how many, and in the first and last quarter."""
    quarter = max(1, len(log) // 4)
    return {
        "episodes": len(log),
        "train_correct_first_quarter": round(float(np.mean(log[:quarter])), 4) if log else None,
        "train_correct_last_quarter": round(float(np.mean(log[-quarter:])), 4) if log else None,
    }
