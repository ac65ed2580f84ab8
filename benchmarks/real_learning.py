"""Does a real model get better from a verifier alone? STaR, GRPO and DAPO on SmolLM2, compute-matched.

The setting (how it was chosen, and the results: benchmarks/README.md, "A real model learns"):
SmolLM2-135M-Instruct answers 2-digit additions (``reasongym/Arithmetic-v0`` level 1) told to reply with
the number only, through its chat template; completions of at most 16 tokens (its answers take 5-12). It
starts at 18% greedy accuracy on held-out problems, and its samples at temperature 0.7 are right often
enough (7%) for groups of 8 to disagree. Full fine-tuning for every arm (SFT and STaR's fine-tuning take no
LoRA yet; 135M parameters fit easily).

Arms, each given the same number of sampled completion tokens (``budget_tokens``; CPU-seconds beside):

- ``grpo``, ``dapo``: the library's trainers on the verifier's reward;
- ``star``: STaR's filter loop (rationalization off: only verified samples of the policy are kept);
- ``grpo_shuffled``, ``dapo_shuffled``, ``star_shuffled``: the same, but every verdict is replaced by one
  drawn from the earlier verdicts of the run (``benchmarks/controls.py``: same reward rate, no relation to
  the completion);
- ``sft``: the reference: supervised fine-tuning on gold answers (``The answer is N.``).
- ``grpo_async`` (not run by default; issue 38): ``grpo`` with ``max_staleness`` = 1, its batches drawn by a
  sampler process at most one version behind. Every RL arm checks its budget before each step and counts
  each rollout batch's tokens after it (`SessionBudget`, a step hook), so K = 0 and K = 1 stop alike;
  each evaluation records the wall seconds since the arm's start, and ``OUT/accuracy_vs_wall.png`` plots
  them (``--arms grpo grpo_async``: both in one sitting, as a wall-time comparison needs).

Held-out greedy accuracy on the first ``eval_problems`` test problems is measured before training (once; all
arms start from the same model), half-way through the budget and at its end. Each (arm, seed) writes
``OUT/runs/ARM-sSEED.json`` when it ends, so a rerun skips what is done (resumable per arm and seed). The
summary compares each verifier-only arm with its control and with the start: the mean difference over
seeds with a 95% bootstrap interval (resampling seeds within each arm and problems, paired), written to
``OUT/summary.json``, with ``OUT/accuracy.png`` (held-out accuracy against sampled tokens, per arm).

``--preset chain`` (issue 39, item 2) asks whether RL after SFT beats more SFT, as DeepSeekMath reports: on
3-digit additions and subtractions with the env's own step-by-step prompt, every arm starts from SmolLM2
fine-tuned on the generator's column-by-column solutions (`warm_started`), then ``grpo`` and ``dapo`` spend the
budget against ``sft_more``, the same SFT on fresh problems for the same compute (`RL_ROW_COST_IN_SFT_ROWS`);
the summary's ``rl_vs_more_sft`` holds the two differences with their intervals.

``--gpu`` swaps in the preset for one large GPU (an 0.5B instruct model from the hub, GSM8K for training,
GSM8K and MATH-500 test for evaluation, bf16, the vLLM engine); ``--smoke STEPS`` runs only a few GRPO steps
of a preset and prints step time, tokens/s and the reward curve (what ``gpu_check.py --learning`` runs);
``--dry`` shrinks any of it to seconds on a CPU with the tiny random model, so tests keep the script working.
Any field of `Setting` is a flag too (``--budget-tokens 4000``, ``--warm-start None``: `benchmarks.harness.settings`).

One file on purpose, past the usual size: the arms, the control and the statistics of one experiment, read
in run order.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.real_learning --model PATH/TO/SmolLM2-135M-Instruct.Q4_1.gguf

Last line: one JSON object (the summary).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import reasongym  # noqa: E402
from benchmarks.controls import RecordedVerdicts, RunVerdicts  # noqa: E402
from benchmarks.harness import report, settings, stats  # noqa: E402
from benchmarks.harness.machine import Snapshot  # noqa: E402
from reasongym.agents import preset_configs  # noqa: E402
from reasongym.agents.dapo import train_dapo  # noqa: E402
from reasongym.agents.grpo import train_grpo  # noqa: E402
from reasongym.agents.runtime.hooks import StepHook, StepView  # noqa: E402
from reasongym.agents.sft import train_sft  # noqa: E402
from reasongym.agents.sft_data import sft_pairs_from_env  # noqa: E402
from reasongym.agents.star import train_star  # noqa: E402
from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.loading import format_prompt, load_policy  # noqa: E402
from reasongym.rollouts.batch import collect_rollouts  # noqa: E402

ARMS = ("grpo", "grpo_shuffled", "dapo", "dapo_shuffled", "star", "star_shuffled", "sft")
"""The arms of issue 27's experiment, run by default."""
ASYNC_ARMS = ("grpo_async",)
"""Issue 38: GRPO with its batches drawn by a sampler process at most one version behind (``--arms grpo
grpo_async``: the same GRPO at K = 0 and K = 1, in one sitting for their wall seconds)."""
CHAIN_ARMS = ("sft_more",)
"""Issue 39, item 2 (``--preset chain``): after the warm start on worked solutions, more of the same SFT on
fresh problems, given as much compute as an RL arm's budget (`sft_more_arm`): does RL after SFT beat more SFT?"""
RL_ROW_COST_IN_SFT_ROWS = 5 / 3
"""What one sampled row of GRPO or DAPO costs, in SFT rows of the same length: sampling (2N FLOPs a token),
the old log-probs (2N) and the update (6N) against SFT's update alone (6N), N the parameters. The records also
keep each arm's measured CPU-seconds, so the match can be checked."""
VERIFIER_ARMS = ("grpo", "dapo", "star")
BAR_POINTS = 0.10
"""The bar (issue 27): a verifier-only arm beats its shuffled control and its start by this much held-out
greedy accuracy, each with a 95% interval clear of zero, ..."""
BAR_CPU_SECONDS = 3600.0
"""... within this many CPU-seconds of training per arm (every seed's)."""


@dataclass(frozen=True)
class Setting:
    """One experiment's task, model and sizes; `PRESETS` names the CPU one and the GPU one."""

    model: str
    """A .gguf file, a model folder or a hub id."""
    env_id: str
    """The training environment."""
    difficulty: int | None
    """Its level (None: the env's default)."""
    instruction: str | None
    """Answer-format instruction shown to the model (None: the env's own)."""
    eval_env_ids: tuple[str, ...]
    """Held-out environments (test split); the first one is the bar's measure."""
    max_new_tokens: int
    """Longest completion, in training and evaluation."""
    temperature: float
    """Sampling temperature of the training rollouts (evaluation is greedy)."""
    warm_start: float | None
    """Before any arm, fine-tune on the env's reference solutions until greedy accuracy on 64 validation
    problems reaches this (`reasongym.agents.warm_start`); every arm starts from that model. None: none."""
    num_prompts: int
    """Prompts per RL step (STaR's iterations are sized from the budget: `star_arm`)."""
    group_size: int
    """Samples per prompt."""
    lr: float
    """Learning rate of every arm (full fine-tuning: SFT and STaR's fine-tuning take no LoRA yet)."""
    budget_tokens: int
    """Sampled completion tokens per arm."""
    eval_problems: int
    """Held-out problems per evaluation."""
    autocast: str = "off"
    """Mixed precision of the updates (``bf16`` on a GPU)."""
    engine: str = "hf"
    """Sampler of the rollouts: ``hf``, ``vllm``, or ``auto`` (`resolve_offline` decides before any run)."""
    sampler_weights: str = "policy"
    """What our sampler decodes with (`RolloutConfig.sampler_weights`): ``bf16``, a bfloat16 copy (GPU)."""
    side_eval_problems: int = 0
    """Problems of each held-out environment after the first (0: ``eval_problems``), with its own prompt."""
    tempered_logprobs: bool = True
    """GRPO's and DAPO's log-probs at the sampling temperature (`RolloutConfig.tempered_logprobs`); false:
    the raw model's, as before issue 42."""
    warm_start_max_steps: int = 400
    """The warm start's SFT steps at most (batch 8), when its probe never reaches ``warm_start``."""


PRESETS = {
    "cpu": Setting(
        model="",
        env_id="reasongym/Arithmetic-v0",
        difficulty=1,
        instruction="Reply with the number only.",
        eval_env_ids=("reasongym/Arithmetic-v0",),
        max_new_tokens=16,
        temperature=0.7,
        warm_start=None,
        num_prompts=8,
        group_size=8,
        lr=1e-5,
        budget_tokens=16_000,
        eval_problems=300,
    ),
    # Issue 39, item 2: a task where the chain matters. 3-digit additions and subtractions (level 2), the env's
    # own prompt (reason step by step, answer in \\boxed{}); every arm starts from SmolLM2 fine-tuned on the
    # generator's column-by-column solutions until a 64-problem probe reaches 0.3 (`warm_started`).
    # Arms: grpo, dapo and sft_more (`CHAIN_ARMS`).
    "chain": Setting(
        model="",
        env_id="reasongym/Arithmetic-v0",
        difficulty=2,
        instruction=None,
        eval_env_ids=("reasongym/Arithmetic-v0",),
        max_new_tokens=64,
        temperature=0.7,
        warm_start=0.3,
        num_prompts=8,
        group_size=8,
        lr=1e-5,
        budget_tokens=32_000,
        eval_problems=300,
    ),
    # One GPU window (benchmarks/gpu_window, README "Running a GPU window"), offline: SmolLM2-135M-Instruct from
    # the device kit (--model, or $REASONGYM_KIT_MODEL that the kit's install writes), the task the CPU runs
    # taught it (2-digit additions, number only: +50 points there) since the SVAMP pilot's pass@8 at 256 tokens
    # was under 0.25 (benchmarks/README.md, "A GPU window"); GSM8K test beside it (its own prompt); 256 new
    # tokens at most (SmolLM2 loops to any limit); lr 1e-5 as on the CPU; our sampler unless vLLM is there,
    # decided before any evaluation (`resolve_offline`); the bf16 sampler copy; about 40 steps an arm.
    "gpu": Setting(
        model="",
        env_id="reasongym/Arithmetic-v0",
        difficulty=1,
        instruction="Reply with the number only.",
        eval_env_ids=("reasongym/Arithmetic-v0", "reasongym/GSM8K-v0"),
        max_new_tokens=256,
        temperature=0.7,
        warm_start=None,
        num_prompts=16,
        group_size=8,
        lr=1e-5,
        budget_tokens=60_000,
        eval_problems=300,
        autocast="bf16",
        engine="auto",
        sampler_weights="bf16",
        side_eval_problems=200,
    ),
}
GPU_ARMS = ("grpo", "grpo_shuffled")
"""The arms a GPU window runs by default (``--gpu``): the verifier-only arm and its control."""
KIT_MODEL_ENV = "REASONGYM_KIT_MODEL"
"""Where the device kit's install leaves the model file (benchmarks/gpu_window/kit.py)."""


def resolve_offline(setting: Any) -> Any:
    """``setting`` (this file's or star_csqa's) ready for a machine without network, before anything runs: the
    kit's model when none is named, and ``engine`` ``auto`` resolved (`resolve_engine`: vLLM only where it is
    installed and a GPU is there), so that a missing engine fails before a starting evaluation, not after."""
    from reasongym.generation.engines import resolve_engine

    model = setting.model or os.environ.get(KIT_MODEL_ENV, "")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return dataclasses.replace(setting, model=model, engine=resolve_engine(setting.engine, device))


class BudgetSpent(Exception):
    """Raised by a STaR arm's sampler once the arm's tokens are spent; the model keeps what it learned."""


class Budget:
    """An arm's sampled completion tokens: counted, evaluated at the half-way mark, and stopped at the budget.

    `spent` runs before each RL step and before each STaR sampling call: an RL arm's step hook
    (`SessionBudget`, counting each rollout batch, whichever process sampled it) then stops the trainer, the
    STaR sampler (`budgeted`) raises `BudgetSpent`; either way the last update is finished.
    """

    def __init__(self, run: ArmRun) -> None:
        self.run, self.tokens, self.half_done = run, 0, False

    def check(self) -> None:
        """`spent`, raising `BudgetSpent` when it is (the STaR sampler's way to stop the run)."""
        if self.spent():
            raise BudgetSpent

    def spent(self) -> bool:
        """Print the recent training accuracy; evaluate once half is spent; whether all of it is."""
        budget, recent = self.run.setting.budget_tokens, self.run.verdicts.correct[-256:]
        if recent:  # per-batch progress: an arm takes minutes
            print(
                f"  tokens {self.tokens}/{budget}: train accuracy of the last {len(recent)} episodes "
                f"{np.mean(recent):.3f}",
                file=sys.stderr,
                flush=True,
            )
        if not self.half_done and self.tokens >= budget // 2:
            self.half_done = True
            self.run.on_half(self.tokens)
        return self.tokens >= budget


class BudgetedSampler:
    """Mixed into the sampler's own class by `budgeted`: its sampling calls check and count the `Budget`.

    A mixin rather than a wrapper: the trainer takes an `HFGenerator` on the policy's module at its word (its
    log-probs are the policy's), while any other object makes it rescore every batch, a forward pass more.
    """

    budget: Budget

    def generate_batch(self, prompts: Any, params: SamplingParams) -> Any:
        self.budget.check()
        batch = super().generate_batch(prompts, params)  # type: ignore[misc]
        self.budget.tokens += int(batch.completion_mask.sum())
        return batch

    def generate(self, prompts: Any, params: SamplingParams) -> Any:
        self.budget.check()
        groups = super().generate(prompts, params)  # type: ignore[misc]
        self.budget.tokens += sum(len(c.token_ids or ()) for group in groups for c in group)
        return groups


def budgeted(sampler: Any, budget: Budget) -> Any:
    """``sampler`` (an `HFGenerator` or a vLLM engine) with `BudgetedSampler` mixed into its class."""
    sampler.__class__ = type(f"Budgeted{type(sampler).__name__}", (BudgetedSampler, type(sampler)), {})
    sampler.budget = budget
    return sampler


class SessionBudget(StepHook):
    """A step hook: every RL step checks ``budget`` before it draws (a spent budget stops the trainer there) and
    counts the completion tokens of each batch it draws: the same stop whether this process samples (K = 0) or
    a sampler process draws ahead (``max_staleness`` >= 1, which takes no sampler passed in). With
    ``record``, the batch's real verdicts go to the run's log too (the sampler process steps its own copy
    of the environment, so a `RecordedVerdicts` wrapper here would see none)."""

    def __init__(self, budget: Budget, *, record: bool) -> None:
        self.budget, self.record = budget, record

    def before_sampling(self, view: StepView) -> bool:
        return self.budget.spent()

    def after_sampling(self, view: StepView, batch: Any) -> None:
        self.budget.tokens += int(batch.lengths.sum())
        if self.record:
            for correct, gradable in zip(batch.correct.tolist(), batch.gradable.tolist(), strict=True):
                if gradable:
                    self.budget.run.verdicts.record(bool(correct))


@dataclass
class ArmRun:
    """One (arm, seed) being trained: what its trainer function (`rl_arm`, `star_arm`, `sft_arm`) gets."""

    setting: Setting
    arm: str
    """``grpo``, ``grpo_shuffled``, ..., ``sft`` (`ARMS`)."""
    model: Any
    tokenizer: Any
    seed: int
    on_half: Callable[[int], None]
    """Called with the tokens sampled so far once half the budget is spent (the half-way evaluation)."""
    verdicts: RunVerdicts
    """The run's real verdicts, and its control's draws (`benchmarks/controls.py`)."""
    train_steps: list[dict[str, Any]] = field(default_factory=list)
    """An RL arm's logged steps (their ``train/`` metrics), for its record's clip fractions."""

    @property
    def shuffled(self) -> bool:
        """Whether this is a shuffled-reward control."""
        return self.arm.endswith("_shuffled")


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


def load(setting: Setting, seed: int) -> tuple[Any, Any]:
    """The setting's starting model and tokenizer, on the GPU when there is one."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if setting.model == "tiny":
        from reasongym.policy.tiny import tiny_policy

        model, tokenizer = tiny_policy(seed)
        return model.to(device), tokenizer
    return load_policy(setting.model, device=device)


def smoke(setting: Setting, steps: int) -> dict[str, Any]:
    """A few GRPO steps of ``setting`` with its engine: step time, tokens/s, the reward curve, and held-out
    accuracy before and after (what `gpu_check.py --learning` prints on a GPU)."""
    model, tokenizer = load(setting, 0)
    before = held_out(model, tokenizer, setting)
    configs = rl_configs(setting, "grpo", seed=0, max_steps=steps)
    started = time.perf_counter()
    result = train_grpo(
        configs["grpo"], model, tokenizer, make_env(setting), run=configs["run"], rollout=configs["rollout"]
    )
    wall = time.perf_counter() - started
    after = held_out(model, tokenizer, setting)
    steady = result.history[1:] or result.history  # the first step pays for warm-up (engine build, kernels)
    return {
        "steps": len(result.history),
        "wall_s": round(wall, 1),
        "step_s": round(float(np.mean([h["perf/step_s"] for h in steady])), 2),
        "tokens_per_s": round(float(np.mean([h["perf/tokens_per_s"] for h in steady])), 1),
        "reward_curve": [round(h["rollout/reward_mean"], 4) for h in result.history],
        "accuracy_before": before["accuracy"],
        "accuracy_after": after["accuracy"],
        **{f"after/{k}": v for k, v in after.items() if "/" in k},
    }


def dry(setting: Setting) -> Setting:
    """``setting`` shrunk to seconds on a CPU: the tiny random model, a few short samples, our sampler."""
    return settings.dry(
        setting,
        dict(
            model="tiny",
            max_new_tokens=8,
            num_prompts=2,
            group_size=2,
            budget_tokens=48,
            eval_problems=4,
            autocast="off",
            engine="hf",
            sampler_weights="policy",
            side_eval_problems=min(setting.side_eval_problems, 2),
            warm_start=None if setting.warm_start is None else 1.0,  # never reached: it stops at its 2 steps
            warm_start_max_steps=2,
        ),
    )


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


def interval(runs: dict[str, list[dict[str, Any]]], arm: str, baseline: str) -> dict[str, Any]:
    """Mean held-out accuracy of ``arm`` minus ``baseline`` over seeds, with a 95% bootstrap interval (seeds
    and problems resampled, paired: `stats.bootstrap_difference`)."""
    return stats.bootstrap_difference(
        [r["correct"] for r in runs[arm]], [r["correct"] for r in runs[baseline]]
    )


def accuracy_interval(records: list[dict[str, Any]]) -> dict[str, Any]:
    """An arm's final accuracy with its 95% interval (`stats.accuracy_interval`)."""
    return stats.accuracy_interval([r["correct"] for r in records])


def summarize(out: Path, setting: Setting) -> dict[str, Any]:
    """Every finished run in ``out/runs``: per-arm means, the bar's comparisons, the plot."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((out / "runs").glob("*-s*.json")):
        record = json.loads(path.read_text())
        runs.setdefault(record["arm"], []).append(record)
    start = json.loads((out / "runs" / "start.json").read_text())
    runs["start"] = [start]
    arms = {
        arm: {
            "seeds": len(records),
            "accuracy": round(float(np.mean([r["accuracy"] for r in records])), 4),
            "accuracy_ci95": accuracy_interval(records)["ci95"],
            "accuracy_by_seed": [r["accuracy"] for r in records],
            "sampled_tokens": int(np.mean([r["sampled_tokens"] for r in records])),
            "train_cpu_seconds": round(float(np.mean([r["train_cpu_seconds"] for r in records])), 1),
            **wall_record(records),
        }
        for arm, records in runs.items()
        if arm != "start"
    }
    bar: dict[str, Any] = {}
    for arm in VERIFIER_ARMS:
        if arm in runs and f"{arm}_shuffled" in runs:
            vs_control, vs_start = interval(runs, arm, f"{arm}_shuffled"), interval(runs, arm, "start")
            beats = all(c["clear_of_zero"] and c["difference"] >= BAR_POINTS for c in (vs_control, vs_start))
            in_time = max(r["train_cpu_seconds"] for r in runs[arm]) <= BAR_CPU_SECONDS
            bar[arm] = {
                "vs_control": vs_control,
                "vs_start": vs_start,
                "within_cpu_budget": in_time,
                "holds": beats and in_time,
            }
    summary = {
        "setting": {**dataclasses.asdict(setting), "model": Path(setting.model).name},
        "start_accuracy": start["accuracy"],
        "arms": arms,
        "bar": bar,
        "bar_holds": any(result["holds"] for result in bar.values()),
    }
    if "sft_more" in runs:  # issue 39, item 2: RL after the warm start against more SFT, same compute
        summary["rl_vs_more_sft"] = {
            arm: interval(runs, arm, "sft_more") for arm in ("grpo", "dapo") if arm in runs
        }
    if "grpo" in runs and "grpo_async" in runs:  # issue 38: the sampler one version ahead against K = 0
        summary["async_vs_sync"] = interval(runs, "grpo_async", "grpo")
    report.write_record(out / "summary.json", summary)
    level = "" if setting.difficulty is None else f" level {setting.difficulty}"
    title = f"{Path(setting.model).name}, {setting.env_id}{level}"
    plot(runs, start, out / "accuracy.png", title)
    timed = {arm: records for arm, records in runs.items() if all("wall_seconds" in r for r in records)}
    if timed:
        plot_wall(timed, start, out / "accuracy_vs_wall.png", title)
    return summary


def wall_record(records: list[dict[str, Any]]) -> dict[str, Any]:
    """An arm's wall seconds to the end of training (evaluations included, and without them), the CPU of its
    sampler processes, and the load averages (1 min) at each seed's start and end: means over seeds;
    nothing for records from before these were kept."""
    if not all("wall_seconds" in r for r in records):
        return {}
    return {
        "wall_seconds": round(float(np.mean([r["wall_seconds"] for r in records])), 1),
        "wall_seconds_by_seed": [r["wall_seconds"] for r in records],
        "train_wall_seconds": round(float(np.mean([r["train_wall_seconds"] for r in records])), 1),
        "sampler_cpu_seconds": round(float(np.mean([r["sampler_cpu_seconds"] for r in records])), 1),
        "load_start_end": [[r["load_start"][0], r["load_end"][0]] for r in records],
    }


def plot(runs: dict[str, list[dict[str, Any]]], start: dict[str, Any], path: Path, title: str) -> None:
    """Held-out accuracy against sampled tokens: each arm's mean over seeds, the band its seeds' range, and at
    the end the 95% bootstrap interval of its accuracy (seeds and problems resampled, as in `interval`)."""
    lines = []
    for arm, records in sorted(runs.items()):
        if arm in ("start", *SFT_LINES):
            continue
        points = min(len(r["curve"]) for r in records)
        tokens = [0.0] + [float(np.mean([r["curve"][i]["tokens"] for r in records])) for i in range(points)]
        values = np.array(
            [[start["accuracy"]] + [r["curve"][i]["accuracy"] for i in range(points)] for r in records]
        )
        style = {"color": _colour(arm), "linestyle": "--" if arm.endswith("_shuffled") else "-"}
        band = (values.min(axis=0), values.max(axis=0))
        lines.append(
            report.Line(tokens, values.mean(axis=0), f"{arm} ({len(records)} seeds)", band=band, style=style)
        )
        lines.append(_final_interval(records, tokens[-1], _colour(arm)))
    levels = [
        (float(np.mean([r["accuracy"] for r in runs[arm]])), label, {"linestyle": style})
        for arm, (label, style) in SFT_LINES.items()
        if arm in runs
    ]
    report.plot(
        path,
        lines,
        xlabel="sampled completion tokens",
        ylabel="held-out greedy accuracy",
        title=f"{title}: mean of seeds, their range, 95% interval at the end",
        levels=levels,
        size=(7, 4.5),
    )


def _final_interval(records: list[dict[str, Any]], x: float, colour: str) -> report.Line:
    """An arm's final accuracy as a point with its 95% bootstrap interval (no label: its arm's line has one)."""
    final = accuracy_interval(records)
    low, high = final["ci95"]
    below, above = final["difference"] - low, high - final["difference"]
    return report.Line([x], [final["difference"]], "", yerr=[[below], [above]], style={"color": colour})


SFT_LINES = {
    "sft": ("SFT on gold answers (reference)", ":"),
    "sft_more": ("more SFT on worked solutions (one RL arm's compute)", "-."),
}
"""The arms that sample nothing, drawn as horizontal lines: their label and line style."""


def _colour(arm: str) -> str:
    """An arm and its control share a colour; the sampler-ahead arm has its own."""
    return "C3" if arm in ASYNC_ARMS else f"C{VERIFIER_ARMS.index(arm.removesuffix('_shuffled'))}"


def plot_wall(runs: dict[str, list[dict[str, Any]]], start: dict[str, Any], path: Path, title: str) -> None:
    """Held-out accuracy against wall seconds since the arm's start (evaluations included): each arm's mean
    over seeds (its range of wall seconds as horizontal bars) and at the end the 95% bootstrap interval."""
    lines = []
    for arm, records in sorted(runs.items()):
        if arm in ("start", *SFT_LINES):
            continue
        points = min(len(r["curve"]) for r in records)
        walls = np.array([[0.0] + [r["curve"][i]["wall_s"] for i in range(points)] for r in records])
        values = np.array(
            [[start["accuracy"]] + [r["curve"][i]["accuracy"] for i in range(points)] for r in records]
        )
        x = walls.mean(axis=0)
        spread = [x - walls.min(axis=0), walls.max(axis=0) - x]
        label = f"{arm} ({len(records)} seeds)"
        lines.append(report.Line(x, values.mean(axis=0), label, xerr=spread, style={"color": _colour(arm)}))
        lines.append(_final_interval(records, x[-1], _colour(arm)))
    report.plot(
        path,
        lines,
        xlabel="wall seconds since the arm's start (evaluations included)",
        ylabel="held-out greedy accuracy",
        title=f"{title}\nmean of seeds, range of their wall seconds, 95% interval at the end",
        size=(7, 4.5),
    )


def warm_started(setting: Setting, folder: Path) -> Setting:
    """The setting with its model replaced by the warm-started one (trained once into ``folder``, then reused)."""
    if setting.warm_start is None:
        return setting
    if not (folder / "config.json").exists():
        from reasongym.agents.warm_start import warm_start
        from reasongym.policy.loading import save_policy

        model, tokenizer = load(setting, 0)
        configs = preset_configs(
            "default",
            "sft",
            max_steps=setting.warm_start_max_steps,
            lr=setting.lr,
            batch_size=8,
            eval_every=10,
            eval_problems=64,
            eval_split="validation",
            difficulty=setting.difficulty,
            eval_max_new_tokens=setting.max_new_tokens,
            progress_bar=False,
        )
        done = warm_start(
            model,
            tokenizer,
            setting.env_id,
            target_accuracy=setting.warm_start,
            run=configs["run"],
            sft=configs["sft"],
        )
        print(json.dumps({"warm_start": dataclasses.asdict(done)}), file=sys.stderr, flush=True)
        save_policy(model, tokenizer, folder)
    return dataclasses.replace(setting, model=str(folder))


def check_same_setting(out: Path, setting: Setting) -> None:
    """Record the setting in ``out`` on the first run; a rerun with another one would mix results: refuse it."""
    recorded = out / "setting.json"
    current = json.loads(json.dumps({**dataclasses.asdict(setting), "model": Path(setting.model).name}))
    if not recorded.exists():
        recorded.write_text(json.dumps(current, indent=1) + "\n")
        return
    changed = {
        k: (v, current.get(k)) for k, v in json.loads(recorded.read_text()).items() if current.get(k) != v
    }
    if changed:
        raise SystemExit(
            f"{out} holds runs of another setting (field: (recorded, now)): {changed}; "
            "use another --out-dir, or remove the folder to start over"
        )


def main(argv: list[str] | None = None) -> None:
    """Parse flags; run the smoke pass, or every (arm, seed) not yet done and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="cpu", choices=sorted(PRESETS))
    parser.add_argument("--gpu", action="store_true", help="the same as --preset gpu")
    parser.add_argument(
        "--arms",
        nargs="+",
        default=None,
        choices=ARMS + ASYNC_ARMS + CHAIN_ARMS,
        help="default: ARMS; --gpu: GPU_ARMS",
    )
    parser.add_argument(
        "--seeds", nargs="*", type=int, default=[0, 1, 2], help="none: only the warm start and the start"
    )
    parser.add_argument(
        "--smoke", type=int, default=0, metavar="STEPS", help="only a GRPO smoke run of STEPS"
    )
    parser.add_argument("--out-dir", default="benchmarks/results/real_learning")
    parser.add_argument(
        "--work-dir", default="outputs/real_learning", help="where the warm-started model goes"
    )
    args, setting = settings.parse(
        parser, Setting, lambda a: PRESETS["gpu" if a.gpu else a.preset], dry, argv
    )
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    setting = resolve_offline(setting)
    arms = args.arms or list(GPU_ARMS if args.gpu or args.preset == "gpu" else ARMS)
    if not setting.model:
        raise SystemExit(
            f"--model is required with this preset (or ${KIT_MODEL_ENV}): a .gguf file, a model folder or a hub id"
        )
    if args.smoke:
        print(
            json.dumps(
                {"smoke": smoke(warm_started(setting, Path(args.work_dir) / "warm_start"), args.smoke)}
            )
        )
        return
    out = Path(args.out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    check_same_setting(out, setting)
    setting = warm_started(setting, Path(args.work_dir) / "warm_start")
    if not (out / "runs" / "start.json").exists():  # every arm starts from the same model: measured once
        model, tokenizer = load(setting, 0)
        report.write_record(out / "runs" / "start.json", held_out(model, tokenizer, setting))
    for seed in args.seeds:
        for arm in arms:
            path = out / "runs" / f"{arm}-s{seed}.json"
            if path.exists():
                continue
            record = report.write_record(path, run_arm(setting, arm, seed))
            print(json.dumps({k: v for k, v in record.items() if k != "correct"}), flush=True)
    print(json.dumps(summarize(out, setting)))


if __name__ == "__main__":
    main()
