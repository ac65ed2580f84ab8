"""A warm start: SFT on an environment's reference solutions until a greedy probe shows the format is learnt.

RL from a verifier needs a policy that sometimes earns a reward. A random-init model never does, so the
demo, the benchmarks and the tiny-model recipes first fine-tune on reference solutions, and stop on a
held-out probe rather than on a step count: accuracy jumps once the solution format is learnt, and RL needs
room left to improve (the demo aims at 25-50%). The settings default to the ``tiny`` preset's SFT.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

from reasongym.agents.config import RunConfig
from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft
from reasongym.errors import ConfigError


@dataclass(frozen=True)
class WarmStart:
    """What ``warm_start`` did."""

    steps: int
    """SFT steps taken."""
    probe_accuracy: float
    """Greedy pass@1 on the validation probe when SFT stopped."""
    reached_target: bool
    """Whether the probe reached ``target_accuracy`` before the last step."""


def warm_start(
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str = "reasongym/Arithmetic-v0",
    *,
    target_accuracy: float = 0.3,
    run: RunConfig | None = None,
    sft: SFTConfig | None = None,
    num_pairs: int = 4000,
    probe_problems: int = 64,
    probe_every: int = 10,
    max_new_tokens: int = 72,
    run_dir: str | None = None,
) -> WarmStart:
    """Fine-tune on reference solutions until a greedy probe on the validation split reaches ``target_accuracy``.

    Args:
        model: The policy, trained in place.
        tokenizer: Its tokenizer.
        env_id: Environment whose reference solutions are the SFT data (``run.difficulty`` picks the level).
        target_accuracy: Stop once the probe's greedy pass@1 is at least this.
        run: SFT length, optimizer and seed; None: the ``tiny`` preset's SFT run with up to 800 steps.
        sft: Batch and length; None: the ``tiny`` preset's (batch 32, 256 tokens).
        num_pairs: Training problems turned into pairs.
        probe_problems: Validation problems of each probe.
        probe_every: Probe every this many steps.
        max_new_tokens: Longest completion of the probe.
        run_dir: Run folder of the SFT run, or None.

    Returns:
        A ``WarmStart``.
    """
    import reasongym
    from reasongym.agents.presets import preset_configs
    from reasongym.evaluation.runner import greedy_pass_at_1
    from reasongym.generation import HFGenerator

    if not 0 < target_accuracy <= 1:
        raise ConfigError(
            f"target_accuracy={target_accuracy!r} is not allowed; expected 0 < target_accuracy <= 1"
        )
    tiny = preset_configs("tiny", "sft")
    run = run or dataclasses.replace(tiny["run"], max_steps=800, progress_bar=False)
    env = reasongym.make(env_id, difficulty=run.difficulty) if run.difficulty else reasongym.make(env_id)
    pairs = sft_pairs_from_env(env, num_pairs, split="train", tokenizer=tokenizer)
    probe = {"accuracy": 0.0}
    generator = HFGenerator(model, tokenizer)

    def stop_when(step: int) -> bool:
        if step % probe_every:
            return False
        probe["accuracy"] = greedy_pass_at_1(
            generator, env, tokenizer=tokenizer, split="validation", num_problems=probe_problems,
            difficulty=run.difficulty, max_new_tokens=max_new_tokens,
        )  # fmt: skip
        model.train()
        return probe["accuracy"] >= target_accuracy

    result = train_sft(
        sft or tiny["sft"], model, tokenizer, pairs, run=run, run_dir=run_dir, stop_when=stop_when
    )
    return WarmStart(result.steps, probe["accuracy"], result.stopped_early)
