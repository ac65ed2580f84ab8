"""Ready-made settings for the CPU demo: a tiny policy, a short SFT warm start, and RL configs that learn.

The demo is "RL from a verifier alone": a 0.5M-parameter Llama-style model with a character tokenizer
is fine-tuned on reference solutions of ``reasongym/Arithmetic-v0`` level 1 (2-digit addition written
column by column) only until a greedy probe solves about a third of held-out problems, then GRPO or
DAPO trains it from rewards. The RL settings (16 prompts x 8 samples, T = 1, lr 1e-4) come from a
prototype on this machine: lr 2e-4 stalled and 3e-4 collapsed the policy. Plain SFT would learn faster
here; the point is that the verifier's reward alone moves held-out accuracy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

from reasongym.agents.dapo import DAPOConfig
from reasongym.agents.grpo import GRPOConfig
from reasongym.agents.runtime.session import greedy_pass_at_1
from reasongym.errors import ConfigError

DEMO_ENV = "reasongym/Arithmetic-v0"
"""The demo's environment."""
DEMO_DIFFICULTY = 1
"""Level 1: 2-digit addition with a column-by-column solution."""
DEMO_MAX_NEW_TOKENS = 72
"""Longest completion of the demo (level-1 solutions take 40-56 characters plus EOS)."""


def tiny_policy(seed: int = 0, *, hidden_size: int = 128, num_layers: int = 2) -> tuple[Any, Any]:
    """A character tokenizer and a random-init Llama-style model of about 0.5M parameters (at the defaults).

    Args:
        seed: Seed of the weight initialisation.
        hidden_size: Width of the model (intermediate size is 4x).
        num_layers: Decoder blocks.

    Returns:
        ``(model, tokenizer)``.
    """
    from reasongym.models import make_char_tokenizer, make_tiny_model

    tokenizer = make_char_tokenizer()
    model = make_tiny_model(
        tokenizer, hidden_size=hidden_size, num_layers=num_layers, num_heads=4,
        intermediate_size=4 * hidden_size, seed=seed,
    )  # fmt: skip
    return model, tokenizer


@dataclass(frozen=True)
class WarmStart:
    """What ``warm_start`` did."""

    steps: int
    """SFT steps taken."""
    probe_accuracy: float
    """Greedy pass@1 on the validation probe when SFT stopped."""
    reached_target: bool
    """Whether the probe reached ``target_accuracy`` before ``max_steps``."""


def warm_start(
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str = DEMO_ENV,
    *,
    difficulty: int | None = DEMO_DIFFICULTY,
    target_accuracy: float = 0.3,
    max_steps: int = 800,
    lr: float = 2e-3,
    batch_size: int = 32,
    num_pairs: int = 4000,
    probe_problems: int = 64,
    probe_every: int = 10,
    seed: int = 0,
    run_dir: str | None = None,
) -> WarmStart:
    """Fine-tune on reference solutions until a greedy probe on the validation split reaches ``target_accuracy``.

    Accuracy jumps abruptly once the model has learned the solution format, so this stops on the probe,
    not on a step count; stop early enough that RL has room to improve (the demo aims at 25-50%).

    Args:
        model: The policy, trained in place.
        tokenizer: Its tokenizer.
        env_id: Environment whose reference solutions are the SFT data.
        difficulty: Problem difficulty for SFT data and probe.
        target_accuracy: Stop once the probe's greedy pass@1 is at least this.
        max_steps: Give up after this many SFT steps.
        lr: Peak SFT learning rate (cosine over ``max_steps``, 20 warmup steps).
        batch_size: Pairs per SFT step.
        num_pairs: Training problems turned into pairs.
        probe_problems: Validation problems of each probe.
        probe_every: Probe every this many steps.
        seed: SFT seed.
        run_dir: Run folder of the SFT run, or None.

    Returns:
        A ``WarmStart``.
    """
    import reasongym
    from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft

    if not 0 < target_accuracy <= 1:
        raise ConfigError(
            f"target_accuracy={target_accuracy!r} is not allowed; expected 0 < target_accuracy <= 1"
        )
    env = reasongym.make(env_id, difficulty=difficulty)
    pairs = sft_pairs_from_env(env, num_pairs, split="train", tokenizer=tokenizer)
    cfg = SFTConfig(
        lr=lr, batch_size=batch_size, max_steps=max_steps, warmup_steps=20, max_length=256, seed=seed,
        progress_bar=False, tensorboard=False,
    )  # fmt: skip
    probe = {"accuracy": 0.0}

    def stop_when(step: int) -> bool:
        if step % probe_every:
            return False
        probe["accuracy"] = greedy_pass_at_1(
            model, tokenizer, env, range(probe_problems), split="validation", difficulty=difficulty,
            max_new_tokens=DEMO_MAX_NEW_TOKENS,
        )  # fmt: skip
        model.train()
        return probe["accuracy"] >= target_accuracy

    result = train_sft(cfg, model, tokenizer, pairs, run_dir=run_dir, stop_when=stop_when)
    return WarmStart(result.steps, probe["accuracy"], result.stopped_early)


def demo_grpo_config(**overrides: Any) -> GRPOConfig:
    """GRPO settings that learn on the demo in about two minutes on one CPU core; fields can be overridden."""
    base = GRPOConfig(
        max_steps=60, num_prompts=16, group_size=8, max_new_tokens=DEMO_MAX_NEW_TOKENS, temperature=1.0,
        lr=1e-4, kl="off", mu=1, difficulty=DEMO_DIFFICULTY, eval_every=0, samples_every=10,
    )  # fmt: skip
    return dataclasses.replace(base, **overrides)


def demo_dapo_config(**overrides: Any) -> DAPOConfig:
    """DAPO settings for the demo (same budget as ``demo_grpo_config``); fields can be overridden."""
    base = DAPOConfig(
        max_steps=60, num_prompts=16, group_size=8, max_new_tokens=DEMO_MAX_NEW_TOKENS, overlong_buffer=8,
        temperature=1.0, lr=1e-4, mu=1, difficulty=DEMO_DIFFICULTY, max_extra_rounds=2, eval_every=0,
        samples_every=10,
    )  # fmt: skip
    return dataclasses.replace(base, **overrides)
