"""A warm start: SFT on an environment's reference solutions until held-out accuracy shows the format is learnt.

RL from a verifier needs a policy that sometimes earns a reward. A random-init model never does, so the
demo, the benchmarks and the tiny-model recipes first fine-tune on reference solutions, and stop on a
held-out probe rather than on a step count (`SFTConfig.stop_at_accuracy`): accuracy jumps once the solution
format is learnt, and RL needs room left to improve. The settings default to the ``tiny`` preset's SFT, which
is what ``reasongym train sft --model tiny`` runs too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.config import RunConfig
from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft
from reasongym.envs import make


@dataclass(frozen=True)
class WarmStart:
    """What ``warm_start`` did."""

    steps: int
    """SFT steps taken."""
    probe_accuracy: float
    """Held-out greedy pass@1 at the last probe (0 if none ran)."""
    reached_target: bool
    """Whether the probe reached the target before the last step."""


def warm_start(
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str = "reasongym/Arithmetic-v0",
    *,
    target_accuracy: float | None = None,
    run: RunConfig | None = None,
    sft: SFTConfig | None = None,
    num_pairs: int = 4000,
    run_dir: str | None = None,
) -> WarmStart:
    """Fine-tune on reference solutions until held-out greedy pass@1 reaches the target.

    Args:
        model: The policy, trained in place.
        tokenizer: Its tokenizer.
        env_id: Environment whose reference solutions are the SFT data (``run.difficulty`` picks the level).
        target_accuracy: Stop once the probe reaches this; None: ``sft.stop_at_accuracy``.
        run: SFT length, optimizer, seed and probe (``eval_every``, ``eval_problems``, ``eval_split``);
            None: the ``tiny`` preset's (800 steps at most, a 64-problem validation probe every 10 steps, a
            progress bar).
        sft: Batch, length and stop; None: the ``tiny`` preset's (batch 32, stop at 0.4).
        num_pairs: Training problems turned into pairs.
        run_dir: Run folder of the SFT run, or None.

    Returns:
        A ``WarmStart``.
    """

    tiny = preset_configs("tiny", "sft")  # with its progress bar: the probe's accuracy beside the loss
    run, sft = run or tiny["run"], sft or tiny["sft"]
    if target_accuracy is not None:
        sft = dataclasses.replace(sft, stop_at_accuracy=target_accuracy)
    env = make(env_id, difficulty=run.difficulty) if run.difficulty else make(env_id)
    pairs = sft_pairs_from_env(env, num_pairs, split="train", tokenizer=tokenizer)
    result = train_sft(sft, model, tokenizer, pairs, run=run, run_dir=run_dir, env=env)
    probes = [m["eval/pass@1"] for m in result.history if "eval/pass@1" in m]
    return WarmStart(result.steps, probes[-1] if probes else 0.0, result.stopped_early)
