"""The arms: RL (GRPO, DAPO and their variants), SFT on gold solutions and STaR, each from the seed's warm
start (`warm_model`) to the budget."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import statistics
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

import reasongym
from benchmarks.controls import RecordedVerdicts, RunVerdicts
from benchmarks.harness.machine import Snapshot
from benchmarks.study.measuring import (
    CountingGenerator,
    Meter,
    SampleLevelLoss,
    TokenBudget,
)
from benchmarks.study.setting import (
    CURVE,
    DIFFICULTY,
    ENV,
    SFT_GOLD_START,
    STAR_FIELDS,
    WARM_PAIRS,
    Arm,
    StudySetting,
)
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.dapo import train_dapo
from reasongym.agents.grpo import train_grpo
from reasongym.agents.sft import sft_pairs_from_env, train_sft
from reasongym.agents.star import train_star
from reasongym.generation import HFGenerator
from reasongym.policy.loading import format_prompt
from reasongym.policy.tiny import (
    tiny_policy,
)


def run_rl(arm: Arm, model: torch.nn.Module, tokenizer: Any, seed: int, setting: StudySetting) -> dict:
    """GRPO or DAPO from the warm start until ``budget`` sampled tokens; held-out accuracy along the way."""
    configs = preset_configs(
        "tiny",
        arm.algo,
        max_steps=1_000_000,
        seed=seed,
        difficulty=DIFFICULTY,
        progress_bar=False,
        samples_every=0,
        **arm.fields,
    )
    train = train_dapo if arm.algo == "dapo" else train_grpo
    patch = SampleLevelLoss if arm.patch == "sample_level" else nullcontext
    meter = Meter(tokenizer, setting.eval_problems)
    started = Snapshot()
    budget = TokenBudget(setting.budget_tokens, meter)
    with patch():
        history = train(
            configs[arm.algo],
            model,
            tokenizer,
            _rl_env(arm, seed),
            run=configs["run"],
            rollout=configs["rollout"],
            hooks=[budget],
        ).history
    wall_s, machine = time.perf_counter() - meter.started, started.since()
    return {
        "curve": meter.curve,
        "tokens": budget.tokens,
        "steps": budget.steps,
        "cpu_s": time.process_time() - started.cpu - meter.eval_cpu_s,
        "eval_cpu_s": meter.eval_cpu_s,
        "wall_s": wall_s,
        "train_wall_s": wall_s - meter.eval_wall_s,
        "eval_wall_s": meter.eval_wall_s,
        "sampler_cpu_s": machine["children_cpu_s"],
        "load_start": machine["load_start"],
        "load_end": machine["load_end"],
        **_rl_diagnostics(history),
    }


def _rl_env(arm: Arm, seed: int) -> Any:
    """The arm's environment: every synchronous arm through the same wrapper (the control's rewards are drawn
    from earlier ones, controls.py); with ``max_staleness`` the sampler process rebuilds the environment from
    its registered id, so a wrapper here would see no episode: the plain one, and no shuffled control."""
    if arm.fields.get("max_staleness"):
        if arm.patch == "shuffled":
            raise ValueError("the shuffled control needs the synchronous loop (max_staleness=0)")
        return reasongym.make(ENV)
    return RecordedVerdicts(reasongym.make(ENV), RunVerdicts(seed), shuffle=arm.patch == "shuffled")


def _rl_diagnostics(history: list[dict[str, float]]) -> dict[str, Any]:
    """An RL arm's entropy, training accuracy, clip fractions, largest ratio, zero-variance groups and, with
    a sampler ahead, the mean staleness of its batches and the trainer's total wait for them."""
    tail = history[-5:]
    record = {
        "entropy_first": history[0].get("train/entropy"),
        "entropy_last5": statistics.mean(h.get("train/entropy", math.nan) for h in tail),
        "train_accuracy_last5": statistics.mean(h["rollout/correct_rate"] for h in tail),
        "clip_high_frac": statistics.mean(h.get("train/clip_high_frac", 0.0) for h in history),
        "clip_low_frac": statistics.mean(h.get("train/clip_low_frac", 0.0) for h in history),
        "ratio_max": max(h.get("train/ratio_max", 1.0) for h in history),
        "zero_std_group_frac": statistics.mean(h["rollout/zero_std_group_frac"] for h in history),
        "advantage_std": statistics.mean(h.get("train/advantage_std", math.nan) for h in history),
    }
    if "async/staleness" in history[0]:
        record["staleness_mean"] = statistics.mean(h["async/staleness"] for h in history)
        record["trainer_wait_s"] = sum(h["async/trainer_wait_s"] for h in history)
    return record


def run_sft(arm: Arm, model: torch.nn.Module, tokenizer: Any, seed: int, setting: StudySetting) -> dict:
    """More SFT on gold solutions of new problems, on as many completion tokens as the others sample."""
    configs = preset_configs(
        "tiny",
        "sft",
        seed=seed,
        difficulty=DIFFICULTY,
        progress_bar=False,
        stop_at_accuracy=None,
        max_steps=1,
    )
    batch = configs["sft"].batch_size
    env = reasongym.make(ENV, difficulty=DIFFICULTY)
    probe = sft_pairs_from_env(env, 64, split="train", tokenizer=tokenizer, start=SFT_GOLD_START)
    per_pair = statistics.mean(len(tokenizer(c, add_special_tokens=False)["input_ids"]) + 1 for _, c in probe)
    steps = math.ceil(setting.budget_tokens / (per_pair * batch))
    pairs = sft_pairs_from_env(env, steps * batch, split="train", tokenizer=tokenizer, start=SFT_GOLD_START)
    every = max(1, steps // len(CURVE))
    run = dataclasses.replace(configs["run"], max_steps=steps, eval_every=every)
    meter = Meter(tokenizer, setting.eval_problems)
    started = time.process_time()
    result = train_sft(
        configs["sft"],
        model,
        tokenizer,
        pairs,
        run=run,
        eval_fn=lambda m: {"accuracy": meter.evaluate(m)},
    )
    cumulative = [0.0]
    for metrics in result.history:
        cumulative.append(cumulative[-1] + metrics["train/tokens"])
    meter.curve = [
        {"tokens": cumulative[step], "accuracy": metrics["eval/accuracy"]}
        for step, metrics in enumerate(result.history, start=1)
        if "eval/accuracy" in metrics
    ]
    if result.steps % every:  # the last step fell between evaluations
        meter.point(model, cumulative[-1])
    return {
        "curve": meter.curve,
        "tokens": cumulative[-1],
        "steps": result.steps,
        "cpu_s": time.process_time() - started - meter.eval_cpu_s,
        "eval_cpu_s": meter.eval_cpu_s,
    }


def run_star(
    arm: Arm, model: torch.nn.Module, tokenizer: Any, seed: int, setting: StudySetting, folder: Path
) -> dict:
    """STaR from the warm start, one more iteration at a time (resuming its run folder) until the budget."""
    shutil.rmtree(folder, ignore_errors=True)
    counter = CountingGenerator(HFGenerator(model, tokenizer))
    clock = {"cpu_s": 0.0, "since": 0.0}

    def hook(iteration: int, step: str, _model: Any) -> None:
        counter.counting = step in ("generate", "filter", "rationalize")
        if step == "generate":
            clock["since"] = time.process_time()
        elif step == "evaluate":  # the held-out evaluation of the iteration is not training
            clock["cpu_s"] += time.process_time() - clock["since"]

    curve, iterations = [], 0
    while counter.tokens < setting.budget_tokens:
        iterations += 1
        configs = preset_configs(
            "tiny",
            "star",
            max_steps=iterations,
            seed=seed,
            difficulty=DIFFICULTY,
            progress_bar=False,
            eval_problems=setting.eval_problems,
            eval_split="test",
            **STAR_FIELDS,
            **arm.fields,
        )
        result = train_star(
            configs["star"],
            model,
            tokenizer,
            ENV,
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=folder,
            generator=counter,
            on_step=hook,
        )
        curve.append({"tokens": float(counter.tokens), "accuracy": result.final_accuracy})
    return {
        "curve": curve,
        "tokens": counter.tokens,
        "steps": iterations,
        "cpu_s": clock["cpu_s"],
        "iterations": [dataclasses.asdict(stats) for stats in result.iterations],
        "rationalized_exact_steps": _exact_steps(folder, "rationalized"),
        "direct_exact_steps": _exact_steps(folder, "direct"),
    }


def _exact_steps(folder: Path, source: str) -> list[float | None]:
    """Per iteration, the share of kept ``source`` rationales whose every column step is right.

    On level 1 the reference solution is the one correct way to write the column sums, so a rationale is
    right step by step exactly when it equals the problem's reference solution.
    """
    env = reasongym.make(ENV, difficulty=DIFFICULTY).unwrapped
    shares: list[float | None] = []
    for kept in sorted(folder.glob("iteration-*/kept.jsonl")):
        rows = [json.loads(line) for line in kept.read_text().splitlines()]
        rows = [row for row in rows if row["source"] == source]
        exact = [
            row["completion"].strip() == env.problem_at(row["index"], split="train").solution for row in rows
        ]
        shares.append(sum(exact) / len(exact) if exact else None)
    return shares


def warm_model(
    seed: int, meter: Meter, cache: Path, max_steps: int | None = None
) -> tuple[torch.nn.Module, Any, dict]:
    """The seed's warm-started tiny policy (weights cached in ``cache``), and its record with held-out accuracy."""
    from safetensors.torch import load_file, save_file

    model, tokenizer = tiny_policy(seed)
    weights, record_path = cache / f"seed-{seed}.safetensors", cache / f"seed-{seed}.json"
    if weights.exists() and record_path.exists():
        model.load_state_dict(load_file(str(weights)))
        record = json.loads(record_path.read_text())
    else:
        started = time.process_time()
        steps = {} if max_steps is None else {"max_steps": max_steps}
        configs = preset_configs("tiny", "sft", seed=seed, difficulty=DIFFICULTY, progress_bar=False, **steps)
        env = reasongym.make(ENV, difficulty=DIFFICULTY)
        base = env.unwrapped
        pairs = sft_pairs_from_env(env, WARM_PAIRS, split="train", tokenizer=tokenizer)
        # A quarter of them again with the hint shown: a model that never saw a hinted prompt cannot use one,
        # and STaR's rationalization would then measure nothing.
        hinted = [base.problem_at(i, split="train") for i in range(WARM_PAIRS // 4)]
        pairs += [
            (format_prompt(tokenizer, base.messages(p, hint=True)), pairs[i][1]) for i, p in enumerate(hinted)
        ]
        result = train_sft(configs["sft"], model, tokenizer, pairs, run=configs["run"], env=env)
        probes = [m["eval/pass@1"] for m in result.history if "eval/pass@1" in m]
        record = {
            "seed": seed,
            "sft_steps": result.steps,
            "probe_accuracy": probes[-1] if probes else 0.0,
            "cpu_s": time.process_time() - started,
        }
        cache.mkdir(parents=True, exist_ok=True)
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(weights))
        record_path.write_text(json.dumps(record))
    return model, tokenizer, {**record, "accuracy": meter.evaluate(model)}
