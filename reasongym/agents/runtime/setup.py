"""Starting an RL session (`start_session`), and what it is built from, once, before its first step: the
settings checked, the optimizer (restored on resume), the memory savers (gradient checkpointing, LoRA
adapters), the weights of the checkpoint to resume from, the frozen KL reference (together, the `Learner`),
the sampler, and the source of its batches.

The run folder, its writers and the checkpoint to resume from are `reasongym.runs.lifecycle.RunLife`'s; this
is apart from the session so that its file reads as the steps of a run.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import torch

from reasongym import distributed
from reasongym.agents.common import disable_dropout, enable_checkpointing, seed_everything
from reasongym.agents.config import RolloutConfig, RunConfig, resolve_splits
from reasongym.agents.runtime import parallel
from reasongym.agents.runtime.async_rollouts import AheadSetting, AsyncRollouts, check_async, sampler_job
from reasongym.agents.runtime.diagnostics import EntropyWatch, Watches, ZeroVarianceWatch
from reasongym.agents.runtime.draw import DrawPlan
from reasongym.agents.runtime.engine import EngineSync, PolicySampler, build_sampler, weights_copy
from reasongym.agents.runtime.engine_ahead import EngineAhead
from reasongym.agents.runtime.heap import HeapTrimmer
from reasongym.agents.runtime.hooks import Hooks, StepHook
from reasongym.agents.runtime.learner import Learner
from reasongym.agents.runtime.optimizer import (
    allow_tf32,
    autocast_context,
    build_optimizer,
    check_autocast,
    grad_scaler,
    restore_optimizer,
)
from reasongym.agents.runtime.session import PLOT_KEYS, EvalFn, RLSession
from reasongym.agents.runtime.sources import BatchSource, InProcess
from reasongym.envs import make
from reasongym.errors import ConfigError
from reasongym.generation import HFGenerator
from reasongym.generation.base import TimedGenerator
from reasongym.generation.engines import engine_identity
from reasongym.generation.progress import TokenCount
from reasongym.policy.base_model import BASE_FILE, REFERENCE_FILE, fingerprint, record_base
from reasongym.policy.checkpoints import load_checkpoint, load_optimizer_states
from reasongym.policy.loading import load_base
from reasongym.policy.lora import add_adapters
from reasongym.runs.folder import RunDir
from reasongym.runs.helper_death import ResumableRun
from reasongym.runs.lifecycle import Plot, RunLife


def start_session(
    run_cfg: RunConfig,
    rollout_cfg: RolloutConfig,
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str | Any,
    *,
    algo: str,
    config_record: Mapping[str, Any],
    run_dir: str | Path | RunDir | None,
    generator: Any | None,
    with_reference: bool,
    eval_fn: EvalFn | None = None,
    groups: bool = True,
    hooks: Iterable[StepHook] = (),
    old_logp_in_update: bool = False,
) -> RLSession:
    """The session of a new or resumed run: the run folder locked (released by `RLSession.close`), the seed
    set, the environment made and its splits checked, the learner built (resumed from the run folder's newest
    intact checkpoint), the sampler and the source of batches (a sampler ahead starts drawing now).

    Args:
        run_cfg, rollout_cfg, model, tokenizer, env_id: As the trainers take them (an id, or a built env).
        algo: The algorithm's name (the bar, the plot, ``config.json``); ``config_record``: what
            ``config.json`` stores; ``run_dir``: the run folder, or None.
        generator: The sampler passed in, or None for the one ``rollout_cfg.engine`` names.
        with_reference: Build the frozen KL reference; ``eval_fn``: an extra evaluation.
        groups: Groups are compared (a warning when they teach nothing); ``hooks``: the step hooks.
        old_logp_in_update: `RLSession.old_logp_in_update`.
    """
    info = distributed.current()
    check_settings(run_cfg, rollout_cfg, model, info, groups=groups)
    hooked = Hooks(hooks)
    life = RunLife.open(run_dir, run_cfg, info=info)  # one lock per job: rank 0 holds it for every process
    try:
        return _session_in(
            life,
            run_cfg,
            rollout_cfg,
            model,
            tokenizer,
            env_id,
            algo=algo,
            config_record=config_record,
            generator=generator,
            with_reference=with_reference,
            groups=groups,
            hooks=hooked,
            eval_fn=eval_fn,
            old_logp_in_update=old_logp_in_update,
        )
    except BaseException:
        life.close(plot=False)  # the lock is released if starting fails, else `close` releases it
        raise


def _session_in(
    life: RunLife,
    run_cfg: RunConfig,
    rollout_cfg: RolloutConfig,
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str | Any,
    *,
    algo: str,
    config_record: Mapping[str, Any],
    generator: Any | None,
    with_reference: bool,
    groups: bool,
    hooks: Hooks,
    eval_fn: EvalFn | None,
    old_logp_in_update: bool,
) -> RLSession:
    """`start_session`'s work inside the locked run folder, in order."""
    seed_everything(run_cfg.seed)
    env = make(env_id) if isinstance(env_id, str) else env_id
    life.plot = Plot("metrics.png", PLOT_KEYS, algo, getattr(getattr(env, "spec", None), "id", None))
    train_split, eval_split = resolve_splits(run_cfg, env)
    learner, start, state = build_learner(model, run_cfg, rollout_cfg, life, with_reference)
    sampler = policy_sampler(learner, tokenizer, rollout_cfg, generator)
    engine = engine_identity(sampler.generator.inner)
    life.open_writers({"algo": algo, **config_record, "engine": engine}, start or None, samples=True)
    cursor = int(state.get("cursor", 0))
    plan = DrawPlan.for_run(env, run_cfg, rollout_cfg, train_split, life.info, cursor=cursor, version=start)
    entropy = EntropyWatch(run_cfg.entropy_collapse_ratio, state.get("initial_entropy"))
    session = RLSession(
        algo,
        run_cfg,
        rollout_cfg,
        env,
        tokenizer,
        plan,
        learner,
        sampler,
        open_source(
            plan,
            env,
            tokenizer,
            sampler,
            passed_in=generator is not None,
            run_cfg=run_cfg,
            run=ResumableRun(algo, life.path),
        ),
        life,
        eval_split,
        Watches(entropy, ZeroVarianceWatch(warned=not groups)),  # no group compared: nothing to warn of
        hooks=hooks,
        eval_fn=eval_fn,
        old_logp_in_update=old_logp_in_update,
        cursor=cursor,
        saved_cursor=cursor,
    )
    _count_tokens_in_the_bar(session)
    return session


def _count_tokens_in_the_bar(session: RLSession) -> None:
    """Sampled tokens count in the progress bar as they come (our sampler, on the main process)."""
    inner = session.sampler.generator.inner
    if isinstance(inner, HFGenerator) and session.run_cfg.progress_bar and session.info.is_main:
        inner.progress = TokenCount(lambda: session.bar)


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


def build_learner(
    model: torch.nn.Module,
    run_cfg: RunConfig,
    rollout_cfg: RolloutConfig,
    life: RunLife,
    with_reference: bool,
) -> tuple[Learner, int, dict[str, Any]]:
    """The `Learner` of ``model``: dropout off, memory savers, LoRA, the checkpoint's weights on resume, the
    DDP or FSDP wrapper, the optimizer (restored) and, when ``with_reference``, the KL reference; with the
    step and trainer state of the checkpoint resumed from (0 and {} on a fresh run)."""
    adapted, reference = prepare_policy(model, run_cfg, life, with_reference)
    start, state, checkpoint = resume_weights(life, adapted or model)
    train_model = parallel.wrap_model(model, life.info, run_cfg.parallelism)  # DDP, or sharded in place
    optimizer, scheduler = optimizer_for(model, run_cfg, checkpoint)
    learner = Learner(
        model,
        optimizer,
        scheduler,
        run_cfg,
        rollout_cfg,
        life.info,
        train_model,
        grad_scaler(run_cfg),
        adapted=adapted,
        reference=reference,
        reference_without_adapters=with_reference and adapted is not None,
        heap=HeapTrimmer(),
    )
    return learner, start, state


def policy_sampler(
    learner: Learner, tokenizer: Any, rollout_cfg: RolloutConfig, generator: Any | None
) -> PolicySampler:
    """The run's sampler: ``generator``, or the one ``rollout_cfg.engine`` names, built on the policy; an engine
    with its own copy of the weights is kept in step with every optimizer step of ``learner``."""
    model, adapted, run_cfg = learner.model, learner.adapted, learner.run_cfg
    sampler = generator or build_sampler(model, tokenizer, rollout_cfg, adapted, run_cfg.seed, learner.info)
    # An engine the run built from the policy's current weights starts in sync; one passed in may hold others.
    engine = EngineSync(sampler, model, adapted, synced=0 if generator is None else None)
    learner.stepped = engine.stepped
    return PolicySampler(TimedGenerator(sampler), engine, functools.partial(autocast_context, run_cfg))


def open_source(
    plan: DrawPlan,
    env: Any,
    tokenizer: Any,
    sampler: PolicySampler,
    *,
    passed_in: bool,
    run_cfg: RunConfig,
    run: ResumableRun,
) -> BatchSource:
    """Where the run's batches come from (`reasongym.agents.runtime.sources`): the trainer's sampler at
    ``max_staleness`` 0; else a sampler process, or a thread driving a vLLM engine, started now. ``run``:
    what a sampler process's death names (`reasongym.runs.helper_death`).

    Raises:
        ConfigError: ``max_staleness`` >= 1 with what it does not support (`check_async`).
    """
    staleness, engine = plan.rollout.max_staleness, sampler.engine
    if not staleness:
        return InProcess(plan, env, tokenizer, sampler)
    sharded = plan.place.world_size > 1 and run_cfg.parallelism == "fsdp"
    check_async(AheadSetting(staleness, env, passed_in, sampler.is_policy, engine.holds_weights, sharded))
    if engine.holds_weights:  # vLLM computes apart already: a thread has it draw ahead
        copy_weights = functools.partial(weights_copy, engine.model, engine.adapted)
        return EngineAhead(plan, staleness, engine.sampler, env, tokenizer, copy_weights)
    job = sampler_job(
        engine.model, tokenizer, env, plan, run_cfg.lora if engine.adapted is not None else None
    )
    exact_logp = plan.rollout.stale_old_logp == "sampler"
    return AsyncRollouts.start(job, engine.model, staleness, exact_logp, run)


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
