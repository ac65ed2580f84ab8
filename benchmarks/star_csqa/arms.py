"""The arms: STaR (with and without rationalization, and its random-filter control), direct SFT, GRPO with
chains, and the evaluation-only arms; `run_arm` trains one and records it; `smoke` is the GPU check's pass."""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.controls import RunVerdicts
from benchmarks.harness.machine import Snapshot
from benchmarks.real_learning import (
    ArmRun,
    load,
    rl_arm,
)
from benchmarks.star_csqa.budget import RationaleBudget
from benchmarks.star_csqa.control import RandomFilter, prompt_key
from benchmarks.star_csqa.diagnostics import (
    kept_diagnostics,
)
from benchmarks.star_csqa.evaluation import held_out, make_env
from benchmarks.star_csqa.setting import (
    TRAIN_START,
    Setting,
)
from reasongym import distributed
from reasongym.agents import preset_configs
from reasongym.agents.rationales import STaRTask
from reasongym.agents.runtime.engine import following_engine
from reasongym.agents.sft import train_sft
from reasongym.agents.star import sft_steps_for_iteration, train_star
from reasongym.generation import HFGenerator
from reasongym.policy.loading import format_prompt


def star_problems(setting: Setting) -> int:
    """Training problems per STaR iteration: as many as ``budget_tokens / star_iterations`` tokens sample."""
    per_problem = setting.star_samples * setting.mean_completion_tokens
    return max(2, setting.budget_tokens // (setting.star_iterations * per_problem))


def star_total_sft_steps(setting: Setting) -> int:
    """Optimizer steps of STaR's fine-tunes over ``star_iterations`` iterations (`direct_sft` takes as many)."""
    cfg = preset_configs("default", "star", sft_steps=setting.star_sft_steps)["star"]
    return sum(sft_steps_for_iteration(cfg, i) for i in range(1, setting.star_iterations + 1))


def star_configs(setting: Setting, arm: str, seed: int) -> dict[str, Any]:
    """STaR's configs for ``arm``: the training problems of `star_problems` from `TRAIN_START`, our sizes."""
    return preset_configs(
        "default",
        "star",
        max_steps=1_000,  # the budget ends the run
        group_size=setting.star_samples,
        temperature=setting.star_temperature,
        max_new_tokens=setting.max_new_tokens,
        generation_batch_size=setting.generation_batch,
        engine=setting.engine,
        lr=setting.lr,
        seed=seed,
        autocast=setting.autocast,
        split="train",
        eval_split="validation",
        eval_problems=min(8, setting.eval_problems),  # STaR's own check; the study's is `held_out`
        keep_checkpoints=1,
        progress_bar=False,
        rationalize=arm == "star",
        num_train_problems=star_problems(setting),
        train_start=TRAIN_START,
        sft_steps=setting.star_sft_steps,
    )


def star_arm(run: ArmRun) -> dict[str, Any]:
    """STaR (``star``, ``star_no_rationalization``) or its control (``star_random_filter``) until the budget is
    spent or ``star_iterations`` iterations ran; the tokens sampled, the per-iteration kept shares and their
    diagnostics, 10 kept rationales."""
    setting, seed = run.setting, run.seed
    configs = star_configs(setting, run.arm, seed)
    base_env = make_env(setting)
    engine = following_engine(run.model, run.tokenizer, configs["rollout"], seed, distributed.current())
    inner = engine or HFGenerator(run.model, run.tokenizer, batch_size=setting.generation_batch)
    sampler = RationaleBudget(inner, setting.budget_tokens, setting.budget_chunk)
    env: Any = base_env  # STaR's train accuracy is its iterations' direct share (`star_record`)
    if run.arm == "star_random_filter":
        env = random_filter(base_env, run, configs, getattr(inner, "takes_messages", False))
        sampler.on_sampled = env.plan
    halfway: list[int] = []

    def stop_when_spent(iteration: int, step: str, model: Any) -> bool:
        if step != "generate" or iteration == 1:
            return False
        if sampler.tokens >= setting.budget_tokens // 2 and not halfway:
            halfway.append(sampler.tokens)  # once, between iterations: the half-way evaluation
            run.on_half(sampler.tokens)
        return sampler.spent or iteration > setting.star_iterations  # True: the run ends before it

    with tempfile.TemporaryDirectory(prefix="star-csqa-") as folder:
        train_star(
            configs["star"],
            run.model,
            run.tokenizer,
            env,
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=folder,
            rationale_generator=sampler,
            on_step=stop_when_spent,
        )
        record = star_record(Path(folder), base_env.unwrapped, configs["star"].num_train_problems)
    if isinstance(env, RandomFilter):
        record["random_filter"] = env.log
    return {"sampled_tokens": sampler.tokens, **record}


def random_filter(base_env: Any, run: ArmRun, configs: dict[str, Any], messages: bool) -> RandomFilter:
    """`RandomFilter` over the arm's training problems, keyed by the prompts STaR will sample them with."""
    env = base_env.unwrapped
    cfg = configs["star"]
    task = STaRTask(env, run.tokenizer)
    training = {}
    for index in range(cfg.train_start, cfg.train_start + cfg.num_train_problems):
        problem = env.problem_at(index, split="train")
        prompt = task.messages(problem) if messages else task.prompt(problem)
        training[prompt_key(prompt)] = problem
    return RandomFilter(base_env, run.verdicts, training, seed=run.seed)


def star_record(folder: Path, env: Any, problems: int) -> dict[str, Any]:
    """From a STaR run folder: per completed iteration the share of training problems kept (direct, with the
    hint, in all) and the kept rationales' diagnostics (`kept_diagnostics`); 10 rationales of the last one."""
    rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    iterations = []
    last_kept: list[dict[str, Any]] = []
    previous: set[tuple[int, str]] | None = None
    for row in rows:
        if "star/kept_total" not in row:
            continue
        kept_file = folder / f"iteration-{row['step']:03d}" / "kept.jsonl"
        kept = [json.loads(line) for line in kept_file.read_text().splitlines()] if kept_file.exists() else []
        last_kept = kept or last_kept
        kept_set = {(k["index"], k["completion"]) for k in kept}
        iterations.append(
            {
                "iteration": row["step"],
                # a fixed point: the model rewrote exactly what it was fine-tuned on
                "same_kept_as_previous": previous is not None and kept_set == previous,
                "kept_share": round(row["star/kept_total"] / problems, 4),
                "direct_share": round(row["star/kept_direct"] / problems, 4),
                "rationalized_share": round(row["star/kept_rationalized"] / problems, 4),
                "sft_steps": row["star/sft_steps"],
                **kept_diagnostics(env, kept),
            }
        )
        previous = kept_set
    sample = [{"index": k["index"], "source": k["source"], "text": k["completion"]} for k in last_kept[:10]]
    return {"problems_per_iteration": problems, "iterations": iterations, "kept_sample": sample}


def direct_sft_arm(run: ArmRun) -> dict[str, Any]:
    """Fine-tuning on the gold letters ("The answer is (X)."), one epoch over as many distinct training problems
    as STaR's fine-tunes take optimizer steps of batch 8 in all; samples nothing."""
    setting, tokenizer = run.setting, run.tokenizer
    env = make_env(setting).unwrapped
    steps = star_total_sft_steps(setting)
    pairs = []
    for index in range(TRAIN_START, TRAIN_START + 8 * steps):
        problem = env.problem_at(index, split="train")
        pairs.append((format_prompt(tokenizer, env.messages(problem)), f"The answer is ({problem.answer})."))
    configs = preset_configs(
        "default",
        "sft",
        max_steps=steps,
        lr=setting.lr,
        seed=run.seed,
        batch_size=8,
        autocast=setting.autocast,
        progress_bar=False,
    )

    def halfway(step: int) -> bool:
        if step == steps // 2:
            run.on_half(0)
        return False

    train_sft(configs["sft"], run.model, tokenizer, pairs, run=configs["run"], stop_when=halfway)
    return {"sampled_tokens": 0, "sft_steps": steps, "sft_examples": len(pairs)}


def grpo_arm(run: ArmRun) -> dict[str, Any]:
    """GRPO with a chain of thought: `real_learning.rl_arm` on this environment with this setting's sizes."""
    return {"sampled_tokens": rl_arm(dataclasses.replace(run, arm="grpo"))}


TRAINERS = {
    "direct_sft": direct_sft_arm,
    "star_no_rationalization": star_arm,
    "star": star_arm,
    "star_random_filter": star_arm,
    "grpo_cot": grpo_arm,
}


def run_arm(setting: Setting, arm: str, seed: int) -> dict[str, Any]:
    """Train one arm from the starting model; its held-out curve, final answers, sampled tokens, CPU-seconds."""
    torch.manual_seed(seed)
    model, tokenizer = load(setting, seed)
    curve: list[dict[str, Any]] = []
    started = Snapshot()

    def evaluate_at(tokens: int) -> None:
        result = held_out(model, tokenizer, setting)
        curve.append({"tokens": tokens, **{k: result[k] for k in CURVE_KEYS}})
        print(json.dumps({"arm": arm, "seed": seed, **curve[-1]}), file=sys.stderr, flush=True)

    on_half = evaluate_at if setting.halfway_eval else lambda tokens: None
    run = ArmRun(setting, arm, model, tokenizer, seed, on_half=on_half, verdicts=RunVerdicts(seed))
    trained = TRAINERS[arm](run)
    train_cpu = time.process_time() - started.cpu - sum(point["eval_cpu_seconds"] for point in curve)
    final = held_out(model, tokenizer, setting)
    curve.append({"tokens": trained["sampled_tokens"], **{k: final[k] for k in CURVE_KEYS}})
    return {
        "machine": started.since(),
        "arm": arm,
        "seed": seed,
        "train_cpu_seconds": round(train_cpu, 1),
        "train_episodes": len(run.verdicts.correct),
        "train_correct": round(float(np.mean(run.verdicts.correct)), 4) if run.verdicts.correct else None,
        **trained,
        **{k: v for k, v in final.items() if k not in ("eval_cpu_seconds", "eval_wall_seconds")},
        "curve": curve,
    }


CURVE_KEYS = ("accuracy", "extracted_rate", "eval_cpu_seconds")


def evaluation_arm(setting: Setting, arm: str) -> dict[str, Any]:
    """An evaluation-only arm: the starting model's held-out answers, zero-shot or few-shot."""
    model, tokenizer = load(setting, 0)
    result = held_out(model, tokenizer, setting, few_shot=arm == "few_shot_cot")
    return {"arm": arm, "seed": None, "sampled_tokens": 0, **result}


def smoke(setting: Setting) -> dict[str, Any]:
    """A short STaR run of ``setting`` with its engine (`gpu_check.py --learning`): held-out accuracy before and
    after, the tokens sampled, the kept share of each iteration, the wall time."""
    started = time.perf_counter()
    before = evaluation_arm(setting, "zero_shot_cot")
    after = run_arm(setting, "star", seed=0)
    return {
        "wall_s": round(time.perf_counter() - started, 1),
        "accuracy_before": before["accuracy"],
        "extracted_rate_before": before["extracted_rate"],
        "accuracy_after": after["accuracy"],
        "extracted_rate_after": after["extracted_rate"],
        "sampled_tokens": after["sampled_tokens"],
        "budget_tokens": setting.budget_tokens,
        "kept_share": [iteration["kept_share"] for iteration in after["iterations"]],
    }
