"""The papers' claims in miniature, with error bars: a multi-seed, compute-matched study of SFT, GRPO,
Dr. GRPO, DAPO and its four techniques, a shuffled-reward control, STaR's filter and rationalization, and
the policy-gradient family around GRPO (RLOO, REINFORCE++, REINFORCE++-baseline; GSPO and CISPO with
``mu`` = 4 updates per batch, paired against GRPO with the same ``mu``, since their claims are about clipping).

Every arm starts from the same warm start per seed (the ``tiny`` preset's SFT on reference solutions of
Arithmetic-v0 level 1, a quarter of them also shown with the hint so that STaR's hinted prompts mean
something to the model, stopped once a held-out probe reaches 40%), trains until it has SAMPLED the same
number of completion tokens (``--budget-tokens``; the SFT reference instead trains on as many tokens of gold
solutions), and is scored by greedy pass@1 on the first ``--eval-problems`` test problems, at a quarter,
half, three quarters and all of the budget. Sampled tokens, not CPU-seconds, are the matched quantity: a
token budget stops every run at the same point on any machine, where a time budget would make the stop
itself depend on the machine (issue 15 item 3). CPU-seconds at one thread are recorded beside it.

    OMP_NUM_THREADS=1 python -m benchmarks.study --out study_out              # every arm (18) x 3 seeds, ~100 CPU-min
    OMP_NUM_THREADS=1 python -m benchmarks.study --out study_out --quick      # 3 arms x 3 seeds, ~18 CPU-min
    OMP_NUM_THREADS=1 python -m benchmarks.study --out family_out --family    # GRPO + 6 family arms x 3 seeds
    OMP_NUM_THREADS=1 python -m benchmarks.study --out big --seeds 0-9 --budget-tokens 600000   # a bigger machine
    OMP_NUM_THREADS=1 python -m benchmarks.study --out t07 --tempered   # issue 42: tempered vs untempered log-probs
    OMP_NUM_THREADS=1 python -m benchmarks.study --out async_out --async   # issue 38: the sampler one version ahead

Resumable per arm and seed: ``results.jsonl`` gets one line per finished (arm, seed), and a second run with
the same settings skips those (warm starts are cached in ``warm/``). Writes ``table.md`` (mean and 95%
t-interval over seeds, and each arm's paired difference to its baseline), ``diagnostics.md`` (the RL arms'
clip fractions, largest ratio and share of zero-variance groups), ``accuracy_vs_tokens.png``, and ends with
one JSON line. ``--arms`` picks arms by name (see ``ARMS``).

Wall seconds are recorded beside tokens (issue 38): each point of the curve keeps the wall seconds since the
arm's start at which its weights were reached (``wall_s``, earlier evaluations included; ``train_wall_s``
without them), and ``wall.md`` and ``accuracy_vs_wall.png`` set them out with each arm's load average at its
start and end. With ``max_staleness`` >= 1 (``grpo_async``) a sampler process draws the batches, so the
trainer's CPU-seconds leave it out: its own are ``sampler_cpu_s``. The token budget stops every RL arm the
same way whatever its K: after the step whose trained batch passes it (`TokenBudget`, a step hook).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads

import torch  # noqa: E402

import reasongym  # noqa: E402
from benchmarks.controls import RecordedVerdicts, RunVerdicts  # noqa: E402
from benchmarks.harness import report, settings  # noqa: E402
from benchmarks.harness.machine import Snapshot  # noqa: E402
from benchmarks.harness.stats import t_interval  # noqa: E402
from reasongym.agents.algorithms import preset_configs  # noqa: E402
from reasongym.agents.common import masked_sum  # noqa: E402
from reasongym.agents.dapo import train_dapo  # noqa: E402
from reasongym.agents.grpo import train_grpo  # noqa: E402
from reasongym.agents.runtime.hooks import StepHook, StepView  # noqa: E402
from reasongym.agents.runtime.update import check_loss_shapes, ratio_metrics  # noqa: E402
from reasongym.agents.sft import sft_pairs_from_env, train_sft  # noqa: E402
from reasongym.agents.star import train_star  # noqa: E402
from reasongym.evaluation.runner import greedy_pass_at_1  # noqa: E402
from reasongym.generation import HFGenerator  # noqa: E402
from reasongym.policy.loading import format_prompt  # noqa: E402
from reasongym.policy.tiny import (
    make_char_tokenizer,
    tiny_policy,  # noqa: E402
)

ENV = "reasongym/Arithmetic-v0"
DIFFICULTY = 1
"""Level 1: 2-digit addition, column by column; the tiny model learns it from a few hundred SFT steps."""
MAX_NEW_TOKENS = 72
"""The ``tiny`` preset's completion length."""
CURVE = (0.25, 0.5, 0.75, 1.0)
"""Fractions of the budget at which held-out accuracy is measured (0 is the warm start)."""
WARM_PAIRS = 4_000
"""Reference solutions of the warm start (problems 0 .. 3,999), plus the first quarter again with the hint."""
SFT_GOLD_START = WARM_PAIRS
"""First training problem of the SFT reference: the warm start used the ones before."""
STAR_TRAIN_START = 20_000
"""First training problem of STaR (after the SFT reference's)."""


@dataclass(frozen=True)
class Arm:
    """One row of the table."""

    kind: str
    """``rl`` (GRPO or DAPO), ``star`` or ``sft``."""
    algo: str
    """``grpo``, ``dapo``, ``star`` or ``sft``: the preset section."""
    baseline: str | None
    """The arm its paired difference is taken against (same seed, same warm start); None: the warm start."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Config fields on top of the ``tiny`` preset."""
    patch: str | None = None
    """A change the configs cannot express: ``shuffled`` rewards (`controls.RecordedVerdicts`), or DAPO's
    ``sample_level`` loss."""


ARMS: dict[str, Arm] = {
    "sft_gold": Arm("sft", "sft", None),
    "grpo": Arm("rl", "grpo", None),
    "dr_grpo": Arm("rl", "grpo", "grpo", {"advantage_normalization": "none", "loss_aggregation": "constant"}),
    "shuffled_reward": Arm("rl", "grpo", "grpo", patch="shuffled"),
    "dapo": Arm("rl", "dapo", "grpo"),
    "dapo_no_clip_higher": Arm("rl", "dapo", "dapo", {"eps_high": 0.2}),
    "dapo_no_dynamic_sampling": Arm("rl", "dapo", "dapo", {"dynamic_sampling": False}),
    "dapo_no_token_level_loss": Arm("rl", "dapo", "dapo", patch="sample_level"),
    "dapo_no_overlong_shaping": Arm("rl", "dapo", "dapo", {"overlong_buffer": 0}),
    # The policy-gradient family (issue 25): one named choice changed against GRPO. The advantage
    # estimators need no clipping to act (mu = 1, as GRPO); GSPO and CISPO change what the clip does, which
    # with mu = 1 never acts (the ratio is exactly 1), so they run with 4 updates per batch against GRPO
    # with the same 4.
    "rloo": Arm("rl", "grpo", "grpo", {"advantage_normalization": "rloo"}),
    "reinforce_plus_plus": Arm("rl", "grpo", "grpo", {"advantage_normalization": "reinforce_plus_plus"}),
    "reinforce_plus_plus_baseline": Arm(
        "rl", "grpo", "grpo", {"advantage_normalization": "reinforce_plus_plus_baseline"}
    ),
    "grpo_mu4": Arm("rl", "grpo", "grpo", {"mu": 4}),
    "gspo_mu4": Arm("rl", "grpo", "grpo_mu4", {"mu": 4, "policy_loss": "gspo"}),
    "cispo_mu4": Arm("rl", "grpo", "grpo_mu4", {"mu": 4, "policy_loss": "cispo"}),
    # Issue 42: the loss at the sampling temperature (T = 0.7) or at 1 (the raw model, as before), with
    # mu = 4 so that the clip acts and its fractions say something.
    "grpo_mu4_t07": Arm("rl", "grpo", None, {"mu": 4, "temperature": 0.7}),
    "grpo_mu4_t07_untempered": Arm(
        "rl", "grpo", "grpo_mu4_t07", {"mu": 4, "temperature": 0.7, "tempered_logprobs": False}
    ),
    # Issue 38: the same GRPO with its batches drawn by a sampler process at most one version behind.
    "grpo_async": Arm("rl", "grpo", "grpo", {"max_staleness": 1}),
    "star_filter": Arm("star", "star", None, {"rationalize": False}),
    "star_rationalize": Arm("star", "star", "star_filter", {"rationalize": True}),
    "star_rationalize_faithful": Arm(
        "star", "star", "star_filter", {"rationalize": True, "faithful_rationalization": True}
    ),
}
"""Every arm, in table order."""
QUICK_ARMS = ("grpo", "dapo", "shuffled_reward")
TEMPERED_ARMS = ("grpo_mu4_t07", "grpo_mu4_t07_untempered")
ASYNC_ARMS = ("grpo", "grpo_async")
FAMILY_ARMS = (
    "grpo",
    "rloo",
    "reinforce_plus_plus",
    "reinforce_plus_plus_baseline",
    "grpo_mu4",
    "gspo_mu4",
    "cispo_mu4",
)
STAR_FIELDS = {
    "num_train_problems": 256,
    "train_start": STAR_TRAIN_START,
    "group_size": 4,
    "temperature": 0.5,
}
"""STaR samples 4 rationales at T = 0.5 for 256 problems per iteration (the tiny preset's greedy single
rationale for 128 problems would need some 20 iterations, with fine-tuning growing 20% each, to spend the
budget): about 70k tokens per iteration."""


@dataclass(frozen=True)
class StudySetting:
    """The study's sizes: each a flag (``--budget-tokens 600000``); ``--dry`` shrinks them to seconds."""

    budget_tokens: int = 200_000
    """Sampled completion tokens per arm (the SFT reference: gold tokens trained on)."""
    eval_problems: int = 200
    """Held-out test problems per evaluation (greedy pass@1)."""
    warm_max_steps: int | None = None
    """The warm start's SFT steps at most (None: the tiny preset's, stopped by its 40% probe)."""

    def record(self) -> dict[str, Any]:
        """What a result line keeps, and what a rerun must match to skip it (`_load`)."""
        kept = {"budget_tokens": self.budget_tokens, "eval_problems": self.eval_problems}
        return kept if self.warm_max_steps is None else {**kept, "warm_max_steps": self.warm_max_steps}


def dry(setting: StudySetting) -> StudySetting:
    """``setting`` shrunk to seconds: one short RL step per arm, a two-step warm start, 4 held-out problems."""
    return settings.dry(setting, {"budget_tokens": 64, "eval_problems": 4, "warm_max_steps": 2})


# ---------------------------------------------------------------------------------------------- measuring


@dataclass
class Meter:
    """Held-out accuracy at points of the budget, and the CPU- and wall seconds spent outside those
    evaluations."""

    tokenizer: Any
    eval_problems: int
    curve: list[dict[str, float]] = field(default_factory=list)
    eval_cpu_s: float = 0.0
    eval_wall_s: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    """The arm's start (``time.perf_counter``): each point's wall seconds count from here."""

    def evaluate(self, model: torch.nn.Module) -> float:
        """Greedy pass@1 on the first ``eval_problems`` test problems (its CPU and wall time kept apart)."""
        started, wall = time.process_time(), time.perf_counter()
        accuracy = greedy_pass_at_1(
            HFGenerator(model, self.tokenizer),
            ENV,
            tokenizer=self.tokenizer,
            split="test",
            num_problems=self.eval_problems,
            difficulty=DIFFICULTY,
            max_new_tokens=MAX_NEW_TOKENS,
        )
        self.eval_cpu_s += time.process_time() - started
        self.eval_wall_s += time.perf_counter() - wall
        return accuracy

    def point(self, model: torch.nn.Module, tokens: float) -> None:
        """Record held-out accuracy after ``tokens``, and the wall seconds at which these weights were reached
        (earlier evaluations included, and without them)."""
        wall_s = time.perf_counter() - self.started
        point = {"tokens": float(tokens), "wall_s": wall_s, "train_wall_s": wall_s - self.eval_wall_s}
        self.curve.append({**point, "accuracy": self.evaluate(model)})


class TokenBudget(StepHook):
    """A step hook: the RL trainer stops after the step whose rollouts bring the completion tokens it sampled
    to ``budget``, and the meter records held-out accuracy each time the running total passes the next point
    of ``CURVE``."""

    def __init__(self, budget: int, meter: Meter) -> None:
        self.budget, self.meter, self.tokens, self.steps = budget, meter, 0, 0
        self.points = [fraction * budget for fraction in CURVE]

    def after_update(self, view: StepView) -> bool:
        self.tokens += view.sampled_tokens
        self.steps += 1
        while self.points and self.tokens >= self.points[0]:
            self.points.pop(0)
            self.meter.point(view.model, self.tokens)
        return self.tokens >= self.budget


class SampleLevelLoss(AbstractContextManager["SampleLevelLoss"]):
    """While active, DAPO's loss averages each sequence's tokens first, then the sequences (GRPO's sample-level
    aggregation, DeepSeekMath Eq. 3), instead of weighing every token of the batch the same (DAPO Sec. 3.3):
    the one DAPO technique its config cannot switch off."""

    def __enter__(self) -> SampleLevelLoss:
        import reasongym.agents.dapo as dapo

        self.module, self.original = dapo, dapo.dapo_loss
        dapo.dapo_loss = sample_level_dapo_loss
        return self

    def __exit__(self, *exc: object) -> None:
        self.module.dapo_loss = self.original


def sample_level_dapo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor | None,
    adv: torch.Tensor,
    mask: torch.Tensor,
    totals: Any = None,
    *,
    cfg: Any,
) -> tuple[torch.Tensor, dict[str, float]]:
    """DAPO's clip-higher surrogate, aggregated per sequence then over the batch's sequences."""
    check_loss_shapes(logp, old_logp, None, adv, mask)
    mask = mask.to(logp.dtype)  # [B, T]
    sequences = totals.sequences if totals is not None else logp.shape[0]
    adv = adv.to(logp.dtype)[:, None]  # [B, 1]
    ratio = torch.exp(logp - old_logp)  # [B, T]
    surrogate = torch.min(ratio * adv, ratio.clamp(1 - cfg.eps_low, 1 + cfg.eps_high) * adv)  # [B, T]
    per_sequence = masked_sum(-surrogate, mask, dim=1) / mask.sum(dim=1).clamp(min=1)  # [B]
    loss = per_sequence.sum() / sequences  # []
    metrics = ratio_metrics(ratio, logp, old_logp, adv, mask, 1 - cfg.eps_low, 1 + cfg.eps_high)
    metrics["loss/policy"] = float(loss.detach())
    return loss, metrics


class CountingGenerator:
    """Wraps the STaR sampler and adds up the completion tokens it samples while ``counting`` (the training
    steps: generate, filter, rationalize with its faithfulness check), not during held-out evaluation."""

    def __init__(self, inner: HFGenerator) -> None:
        self.inner, self.tokens, self.counting = inner, 0, False

    def generate(self, prompts: list[str], params: Any) -> list[list[Any]]:
        groups = self.inner.generate(prompts, params)
        if self.counting:
            self.tokens += sum(len(c.token_ids or ()) for group in groups for c in group)
        return groups

    def generate_batch(self, prompts: list[str], params: Any) -> Any:
        batch = self.inner.generate_batch(prompts, params)
        if self.counting:
            self.tokens += int(batch.completion_mask.sum())
        return batch


# ---------------------------------------------------------------------------------------------- arms


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


# ---------------------------------------------------------------------------------------------- warm start


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


# ---------------------------------------------------------------------------------------------- summary


def summarize(records: list[dict], warm: dict[int, dict]) -> tuple[str, dict]:
    """The markdown table (DAPO's ablation layout: one row per arm) and its numbers."""
    by_arm: dict[str, dict[int, dict]] = {}
    for record in records:
        by_arm.setdefault(record["arm"], {})[record["seed"]] = record
    final = {
        arm: {seed: r["curve"][-1]["accuracy"] for seed, r in runs.items()} for arm, runs in by_arm.items()
    }
    lines = [
        "| arm | held-out pass@1 | vs. baseline (paired) | per seed | sampled tokens | CPU-s |",
        "| --- | ---: | ---: | --- | ---: | ---: |",
    ]
    warm_acc = [w["accuracy"] for w in warm.values()]
    mean, half = t_interval(warm_acc)
    lines.append(
        f"| warm start (SFT to a 40% probe) | {100 * mean:.1f} ± {100 * half:.1f} | | "
        f"{' / '.join(f'{100 * a:.1f}' for a in warm_acc)} | 0 | {statistics.mean(w['cpu_s'] for w in warm.values()):.0f} |"
    )
    numbers = {"warm_start": {"mean": mean, "ci95": half}}
    for name in ARMS:
        if name not in by_arm:
            continue
        seeds = sorted(final[name])
        mean, half = t_interval([final[name][s] for s in seeds])
        base_name = ARMS[name].baseline
        baseline = final.get(base_name, {}) if base_name else {s: warm[s]["accuracy"] for s in warm}
        paired = [final[name][s] - baseline[s] for s in seeds if s in baseline]
        diff, diff_half = t_interval(paired) if paired else (math.nan, math.nan)
        runs = by_arm[name].values()
        label = f"vs. {base_name or 'warm start'}"
        lines.append(
            f"| {name} | {100 * mean:.1f} ± {100 * half:.1f} | {100 * diff:+.1f} ± {100 * diff_half:.1f} ({label}) | "
            f"{' / '.join(f'{100 * final[name][s]:.1f}' for s in seeds)} | "
            f"{statistics.mean(r['tokens'] for r in runs):,.0f} | {statistics.mean(r['cpu_s'] for r in runs):.0f} |"
        )
        numbers[name] = {
            "mean": mean,
            "ci95": half,
            "paired_diff": diff,
            "paired_ci95": diff_half,
            "seeds": len(seeds),
        }
    return "\n".join(lines), numbers


def diagnostics_table(records: list[dict]) -> str:
    """The RL arms' training diagnostics, means over seeds: what the clip did, how far the ratio went, and how
    many groups carried no signal (records from before these were kept show ``-``)."""
    lines = [
        "| arm | clip low (tokens) | clip high (tokens) | largest ratio | zero-variance groups | advantage std |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in ARMS:
        runs = [r for r in records if r["arm"] == name and ARMS[name].kind == "rl"]
        if not runs:
            continue
        cells = []
        for key, form in (
            ("clip_low_frac", "{:.4f}"),
            ("clip_high_frac", "{:.4f}"),
            ("ratio_max", "{:.3f}"),
            ("zero_std_group_frac", "{:.2f}"),
            ("advantage_std", "{:.2f}"),
        ):
            values = [r[key] for r in runs if key in r]
            cells.append(form.format(statistics.mean(values)) if values else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(records: list[dict], warm: dict[int, dict], path: Path) -> None:
    """Held-out accuracy against sampled tokens, one line per arm: the mean over seeds with its 95% interval."""
    start = statistics.mean(w["accuracy"] for w in warm.values())
    lines = []
    for name in ARMS:
        curves = [r["curve"] for r in records if r["arm"] == name]
        if curves:
            style = "--" if ARMS[name].kind == "star" else (":" if ARMS[name].kind == "sft" else "-")
            lines.append(seed_mean_line(curves, start, name, {"linestyle": style}))
    report.plot(
        path,
        lines,
        xlabel="sampled completion tokens (SFT: gold tokens trained on)",
        ylabel="held-out greedy pass@1",
        size=(11, 6),
    )


def seed_mean_line(
    curves: list[list[dict]], start: float, label: str, style: dict[str, Any], x: str = "tokens"
) -> report.Line:
    """One arm's curves (one per seed) as a line from ``start``: the mean over seeds of ``x`` and of held-out
    accuracy, with the accuracy's 95% t-interval (the distillation study draws its arms so too)."""
    points = min(len(c) for c in curves)
    xs = [0.0] + [statistics.mean(c[i][x] for c in curves) for i in range(points)]
    means = [t_interval([c[i]["accuracy"] for c in curves]) for i in range(points)]
    errors = [0.0] + [0.0 if math.isnan(half) else half for _, half in means]
    return report.Line(xs, [start] + [mean for mean, _ in means], label, yerr=errors, style=style)


def wall_table(records: list[dict]) -> str:
    """The RL arms' time, means over seeds: wall seconds from the arm's start to its last step (with and
    without its evaluations), CPU-seconds of the trainer and of a sampler process, and the load around it."""
    lines = [
        "| arm | held-out pass@1 | wall-s (evaluations included) | wall-s training | trainer CPU-s | "
        "sampler CPU-s | sampled tokens | steps | load (1 min) at start / end |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name in ARMS:
        runs = [r for r in records if r["arm"] == name and "wall_s" in r]
        if not runs:
            continue
        mean, half = t_interval([r["curve"][-1]["accuracy"] for r in runs])
        loads = " ; ".join(f"{r['load_start'][0]:.2f} / {r['load_end'][0]:.2f}" for r in runs)
        lines.append(
            f"| {name} | {100 * mean:.1f} ± {100 * half:.1f} | {statistics.mean(r['wall_s'] for r in runs):.0f} | "
            f"{statistics.mean(r['train_wall_s'] for r in runs):.0f} | {statistics.mean(r['cpu_s'] for r in runs):.0f} | "
            f"{statistics.mean(r['sampler_cpu_s'] for r in runs):.0f} | {statistics.mean(r['tokens'] for r in runs):,.0f} | "
            f"{statistics.mean(r['steps'] for r in runs):.1f} | {loads} |"
        )
    return "\n".join(lines)


def plot_wall(records: list[dict], warm: dict[int, dict], path: Path) -> None:
    """Held-out accuracy against wall seconds since the arm's start (evaluations included), one line per arm
    that recorded them: the mean over seeds with its 95% interval, and the seeds' range of wall seconds."""
    start = statistics.mean(w["accuracy"] for w in warm.values())
    lines = []
    for name in ARMS:
        curves = [r["curve"] for r in records if r["arm"] == name and "wall_s" in r]
        if not curves:
            continue
        label = f"{name} (K = {ARMS[name].fields.get('max_staleness', 0)}, {len(curves)} seeds)"
        line = seed_mean_line(curves, start, label, {}, x="wall_s")
        walls = [[c[i]["wall_s"] for c in curves] for i in range(len(line.x) - 1)]
        line.xerr = [
            [0.0] + [x - min(w) for x, w in zip(line.x[1:], walls, strict=True)],
            [0.0] + [max(w) - x for x, w in zip(line.x[1:], walls, strict=True)],
        ]
        lines.append(line)
    report.plot(
        path,
        lines,
        xlabel="wall seconds since the arm's start (evaluations included)",
        ylabel="held-out greedy pass@1",
        title="tiny model, Arithmetic-v0 level 1: mean of seeds, 95% interval, range of wall seconds",
    )


# ---------------------------------------------------------------------------------------------- main


def _seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def _load(path: Path, settings: dict) -> list[dict]:
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("settings") == settings]


def _parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, StudySetting, list[str]]:
    """The flags, the sizes (`StudySetting`; ``--dry`` shrinks them) and the arms the flags name."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="study_out")
    parser.add_argument("--seeds", default="0,1,2", help="e.g. 0,1,2 or 0-9")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_ARMS)}")
    parser.add_argument("--family", action="store_true", help=f"only {', '.join(FAMILY_ARMS)}")
    parser.add_argument("--tempered", action="store_true", help=f"only {', '.join(TEMPERED_ARMS)}")
    parser.add_argument("--async", action="store_true", help=f"only {', '.join(ASYNC_ARMS)}")
    args, setting = settings.parse(parser, StudySetting, lambda _: StudySetting(), dry, argv)
    named = {"quick": QUICK_ARMS, "family": FAMILY_ARMS, "tempered": TEMPERED_ARMS, "async": ASYNC_ARMS}
    chosen = [arms for flag, arms in named.items() if getattr(args, flag)]
    arms = list(chosen[0]) if chosen else args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        parser.error(f"unknown arms {unknown}; choose from {list(ARMS)}")
    return args, setting, arms


def _report(records: list[dict], warm: dict[int, dict], out: Path, settings: dict) -> None:
    """Write and print the tables and the plot; end with the JSON line."""
    table, numbers = summarize(records, warm)
    (out / "table.md").write_text(table + "\n")
    (out / "diagnostics.md").write_text(diagnostics_table(records) + "\n")
    plot(records, warm, out / "accuracy_vs_tokens.png")
    print(table)
    print(diagnostics_table(records))
    if any("wall_s" in r for r in records):
        (out / "wall.md").write_text(wall_table(records) + "\n")
        plot_wall(records, warm, out / "accuracy_vs_wall.png")
        print(wall_table(records))
    cpu = sum(r["cpu_s"] + r.get("eval_cpu_s", 0.0) for r in records) + sum(w["cpu_s"] for w in warm.values())
    print(json.dumps({"arms": numbers, "settings": settings, "seeds": sorted(warm), "cpu_s_total": cpu}))


def main(argv: list[str] | None = None) -> None:
    args, setting, arms = _parse_args(argv)
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kept = setting.record()
    results = out / "results.jsonl"
    records = _load(results, kept)
    done = {(r["arm"], r["seed"]) for r in records}
    warm: dict[int, dict] = {}
    runners: dict[str, Callable[..., dict]] = {"rl": run_rl, "sft": run_sft}
    for seed in _seeds(args.seeds):
        meter = Meter(make_char_tokenizer(), setting.eval_problems)
        base, tokenizer, warm[seed] = warm_model(seed, meter, out / "warm", setting.warm_max_steps)
        print(
            f"seed {seed}: warm start {warm[seed]['sft_steps']} SFT steps, held-out {warm[seed]['accuracy']:.3f}"
        )
        state = {k: v.clone() for k, v in base.state_dict().items()}
        for name in arms:
            if (name, seed) in done:
                continue
            arm = ARMS[name]
            base.load_state_dict(state)
            if arm.kind == "star":
                record = run_star(arm, base, tokenizer, seed, setting, out / "runs" / name / f"seed-{seed}")
            else:
                record = runners[arm.kind](arm, base, tokenizer, seed, setting)
            record.update({"arm": name, "seed": seed, "settings": kept})
            records.append(report.write_record(results, record, append=True))
            print(
                f"  {name:>26}: pass@1 {record['curve'][-1]['accuracy']:.3f} after {record['tokens']:,.0f} tokens, "
                f"{record['cpu_s']:.0f} CPU-s (+{record.get('eval_cpu_s', 0):.0f} evaluating), "
                f"{record.get('wall_s', math.nan):.0f} wall-s",
                flush=True,
            )
    _report(records, warm, out, kept)


if __name__ == "__main__":
    main()
