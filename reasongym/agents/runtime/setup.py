"""What an RL session is built from, once, before its first step: the settings checked, the optimizer (restored
on resume), the memory savers (gradient checkpointing, LoRA adapters), the
weights of the checkpoint to resume from, and the frozen KL reference.

`reasongym.agents.runtime.session.RLSession.start` calls these in order (the run folder, its writers and
the checkpoint to resume from are `reasongym.runs.lifecycle.RunLife`'s); they are apart from the session so
that its file reads as the steps of a run.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import torch

from reasongym import distributed
from reasongym.agents.common import disable_dropout, enable_checkpointing
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.runtime import parallel
from reasongym.agents.runtime.optimizer import allow_tf32, build_optimizer, check_autocast, restore_optimizer
from reasongym.errors import ConfigError
from reasongym.policy.base_model import BASE_FILE, REFERENCE_FILE, fingerprint, record_base
from reasongym.policy.checkpoints import load_checkpoint, load_optimizer_states
from reasongym.policy.loading import load_base
from reasongym.policy.lora import add_adapters
from reasongym.runs.lifecycle import RunLife


def check_settings(
    run_cfg: RunConfig,
    rollout_cfg: RolloutConfig,
    model: torch.nn.Module,
    info: distributed.DistInfo,
    *,
    groups: bool = True,
) -> None:
    """Raise ConfigError for settings an RL run cannot take (greedy sampling, single samples where ``groups``
    are compared, CPU autocast, fewer prompts than processes)."""
    rollout_cfg.check_for_rl(groups=groups)
    check_autocast(run_cfg, model)
    allow_tf32(run_cfg, model)
    if rollout_cfg.num_prompts < info.world_size:
        raise ConfigError(
            f"num_prompts={rollout_cfg.num_prompts} is not allowed with {info.world_size} processes; each "
            f"process samples whole groups of at least one prompt, so use num_prompts >= {info.world_size}"
        )


def optimizer_for(model: torch.nn.Module, run_cfg: RunConfig, checkpoint: Path | None) -> tuple[Any, Any]:
    """AdamW and its schedule, with the checkpoint's state when resuming (and the run's learning rate)."""
    optimizer, scheduler = build_optimizer(model, run_cfg)
    if checkpoint is not None:
        optimizer_state, scheduler_state = load_optimizer_states(checkpoint)
        parallel.load_optimizer_state(model, optimizer, optimizer_state)
        scheduler.load_state_dict(scheduler_state)
        restore_optimizer(optimizer, scheduler, run_cfg)
    return optimizer, scheduler


def prepare_policy(
    model: torch.nn.Module, run_cfg: RunConfig, life: RunLife, with_reference: bool
) -> tuple[Any, torch.nn.Module | None]:
    """Dropout off (the sampler scores in eval mode), the memory savers, and the frozen KL reference when
    ``with_reference``: (the LoRA ``PeftModel`` or None, the reference or None). With LoRA the reference is
    the model with its adapters off."""
    disable_dropout(model)
    if run_cfg.gradient_checkpointing:
        enable_checkpointing(model)
    adapted = run_adapters(model, run_cfg, life)
    wants_reference = with_reference and adapted is None
    return adapted, reference_model(model, life, run_cfg.parallelism) if wants_reference else None


def run_adapters(model: torch.nn.Module, run_cfg: RunConfig, life: RunLife) -> Any:
    """LoRA adapters on ``model`` when ``run_cfg.lora.rank`` asks, the run folder recording the base model they
    sit on (what `load_policy` of the run merges them into); returns the ``PeftModel``, or None (full
    fine-tuning). Every trainer's way to LoRA (GRPO, DAPO, SFT, STaR); the adapters' initial weights depend on
    ``run_cfg.seed`` alone."""
    lora = run_cfg.lora
    if not lora.rank:
        return None
    if life.info.world_size > 1:
        raise ConfigError(
            f"lora.rank={lora.rank} is not allowed with {life.info.world_size} processes yet; LoRA runs in one "
            "process"
        )
    life.write(lambda folder: record_base(model, folder))  # what `reasongym eval RUN` puts adapters on
    # The adapters' initial weights follow the run's seed, not the history of the global RNG.
    with torch.random.fork_rng():
        torch.manual_seed(run_cfg.seed)
        return add_adapters(
            model, rank=lora.rank, alpha=lora.alpha, dropout=lora.dropout, target_modules=lora.target_modules
        )


def resume_weights(life: RunLife, model: torch.nn.Module) -> tuple[int, dict[str, Any], Path | None]:
    """Load the weights, RNG and trainer state of the checkpoint to resume from (the one rank 0 finds, on every
    rank) into the unwrapped model: (step, trainer state, checkpoint). The optimizer is loaded once built."""
    checkpoint = life.checkpoint_to_resume()
    if checkpoint is None:
        return 0, {}, None
    start, state = load_checkpoint(checkpoint, model=model)
    return start, state, checkpoint


def reference_model(model: torch.nn.Module, life: RunLife, parallelism: str) -> torch.nn.Module:
    """The frozen KL reference: the model the run started from. The run folder records it once
    (`reasongym.policy.base_model`: its source when it can be rebuilt from there, else its weights); a copy of
    ``model`` when ``model`` still is that model, else rebuilt from the record, so that a resume keeps the
    same reference. Sharded like the policy under FSDP."""
    kept, folder, info = life.on_main(lambda folder: record_base(model, folder)), life.path, life.info
    if kept == BASE_FILE and folder is not None and _recorded_fingerprint(folder) != fingerprint(model):
        reference = load_base(folder).to(next(model.parameters()).device)  # e.g. a resume from Python
    else:
        reference = copy.deepcopy(model).eval().requires_grad_(False)
    if kept == REFERENCE_FILE and folder is not None:
        from safetensors.torch import load_model

        load_model(reference, str(folder / REFERENCE_FILE))
    return (
        parallel.shard_model(reference, info) if parallelism == "fsdp" and info.world_size > 1 else reference
    )


def _recorded_fingerprint(folder: Path) -> str:
    return json.loads((folder / BASE_FILE).read_text(encoding="utf-8"))["fingerprint"]
