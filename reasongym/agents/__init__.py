"""The trainers and what they share; names load on first use, so this import pulls in no torch.

Algorithms, one file each: `sft` (supervised fine-tuning), `star` (STaR), `grpo` (GRPO, Dr. GRPO, and the
family around it as named choices: GSPO, CISPO, RLOO, REINFORCE++), `dapo` (DAPO), `distill` (on-policy
distillation from a teacher). Shared configs: `config` (`RunConfig`, `RolloutConfig`) and `presets` (named settings: ``default``,
``tiny``, ``paper``). The RL runtime: `runtime` (episodes into `RolloutBatch`, the training session, the
update and its `PolicyLoss` interface, the step hooks, torch.distributed helpers); `registries` (the open
registries of policy losses, advantage estimators and divergences: ``register_policy_loss``, ...). `warm_start` fine-tunes until a probe
shows the answer format is learnt.

Example:
    >>> from reasongym.agents import preset_configs, train_grpo
    >>> c = preset_configs("tiny", "grpo", max_steps=20)
    >>> train_grpo(c["grpo"], model, tokenizer, "reasongym/Arithmetic-v0", run=c["run"], rollout=c["rollout"])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reasongym.agents.algorithm_configs import (
        DAPOConfig,
        DistillConfig,
        GRPOConfig,
        SFTConfig,
        STaRConfig,
    )
    from reasongym.agents.algorithms import preset_configs
    from reasongym.agents.config import RolloutConfig, RunConfig
    from reasongym.agents.dapo import dapo_loss, train_dapo
    from reasongym.agents.distill import distill_loss, train_distill
    from reasongym.agents.grpo import grpo_loss, train_grpo
    from reasongym.agents.presets import PRESETS
    from reasongym.agents.registries import (
        register_advantage_estimator,
        register_divergence,
        register_policy_loss,
    )
    from reasongym.agents.runtime.hooks import StepHook, StepView
    from reasongym.agents.runtime.session import RLResult
    from reasongym.agents.runtime.update import BatchTotals, PolicyLoss, recompute_old_logp
    from reasongym.agents.sft import SFTResult, train_sft
    from reasongym.agents.star import STaRResult, train_star
    from reasongym.agents.warm_start import WarmStart, warm_start
    from reasongym.rollouts.batch import RolloutBatch, collect_rollouts

_LAZY = {
    "RunConfig": "config",
    "RolloutConfig": "config",
    "PRESETS": "presets",
    "preset_configs": "algorithms",
    "GRPOConfig": "algorithm_configs",
    "grpo_loss": "grpo",
    "train_grpo": "grpo",
    "DAPOConfig": "algorithm_configs",
    "dapo_loss": "dapo",
    "train_dapo": "dapo",
    "DistillConfig": "algorithm_configs",
    "distill_loss": "distill",
    "train_distill": "distill",
    "SFTConfig": "algorithm_configs",
    "SFTResult": "sft",
    "train_sft": "sft",
    "STaRConfig": "algorithm_configs",
    "STaRResult": "star",
    "train_star": "star",
    "RLResult": "runtime.session",
    "StepHook": "runtime.hooks",
    "StepView": "runtime.hooks",
    "register_policy_loss": "registries",
    "register_advantage_estimator": "registries",
    "register_divergence": "registries",
    "RolloutBatch": "reasongym.rollouts.batch",
    "collect_rollouts": "reasongym.rollouts.batch",
    "recompute_old_logp": "runtime.update",
    "BatchTotals": "runtime.update",
    "PolicyLoss": "runtime.update",
    "WarmStart": "warm_start",
    "warm_start": "warm_start",
}

__all__ = [
    "BatchTotals",
    "DAPOConfig",
    "DistillConfig",
    "GRPOConfig",
    "PRESETS",
    "PolicyLoss",
    "RLResult",
    "RolloutBatch",
    "RolloutConfig",
    "RunConfig",
    "SFTConfig",
    "SFTResult",
    "STaRConfig",
    "STaRResult",
    "StepHook",
    "StepView",
    "WarmStart",
    "collect_rollouts",
    "dapo_loss",
    "distill_loss",
    "grpo_loss",
    "preset_configs",
    "recompute_old_logp",
    "register_advantage_estimator",
    "register_divergence",
    "register_policy_loss",
    "train_dapo",
    "train_distill",
    "train_grpo",
    "train_sft",
    "train_star",
    "warm_start",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = _LAZY[name]
        return getattr(
            importlib.import_module(
                module if module.startswith("reasongym.") else f"reasongym.agents.{module}"
            ),
            name,
        )
    raise AttributeError(f"module 'reasongym.agents' has no attribute {name!r}")
