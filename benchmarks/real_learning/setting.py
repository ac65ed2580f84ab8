"""The experiment's arms, its bar, its `Setting` and the presets that fill it (CPU, chain, GPU), and its
dry pass."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import torch

from benchmarks.harness import settings

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
    # was under 0.25 (benchmarks/gpu_window/README.md, "A GPU window"); GSM8K test beside it (its own prompt); 256 new
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
