"""The sampler of an RL run, and keeping an inference engine's copy of the weights current (weight sync).

`build_sampler` makes the run's sampler from ``RolloutConfig.engine`` (`reasongym.generation.engines`): our
in-process `HFGenerator` samples with the trained module itself and needs nothing more; a `VLLMGenerator`
holds its own copy of the weights. `EngineSync` pushes the policy's weights into that copy when they have
changed since it last did (after every optimizer step, before the next rollout or evaluation): every weight,
as tensors, through vLLM's in-place reload (nothing is written to disk, the engine is not rebuilt). With
LoRA the adapters are merged into the weights for the push (the same merged weights `HFGenerator` samples
with), rather than loaded into vLLM's own LoRA support: a merged push is one code path for both kinds of
run, and the engine then decodes at the base model's speed. On a GPU with ``vllm.sleep`` the engine frees
its memory between rollouts (`rest`) and is woken, and given the weights again, before it samples.

Across processes (torchrun) each rank would hold its own colocated engine, sampling its own share of the
prompts, as TRL's colocate mode does; vLLM's in-process engine sets up a process group of its own, which
has not been tried beside torch.distributed's, so ``engine='vllm'`` is refused there for now.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import torch

from reasongym import distributed
from reasongym.agents.config import RolloutConfig
from reasongym.agents.runtime import parallel
from reasongym.errors import ConfigError
from reasongym.generation.base import TimedGenerator
from reasongym.generation.engines import resolve_engine
from reasongym.generation.hf import HFGenerator
from reasongym.generation.sampler import build_generator
from reasongym.policy.lora import adapters_merged


def build_sampler(
    model: torch.nn.Module,
    tokenizer: Any,
    rollout: RolloutConfig,
    adapted: Any,
    seed: int,
    info: distributed.DistInfo,
) -> Any:
    """The run's sampler on ``model``: `HFGenerator`, or a vLLM engine built from the (merged) weights.

    Raises:
        ConfigError: ``engine='vllm'`` without vLLM, with several processes, or for a model it cannot load.
    """
    chosen = resolve_engine(rollout.engine, next(model.parameters()).device.type)  # the run's one decision
    if chosen == "hf" and rollout.sampler_weights != "policy":  # a low-precision copy, synced like vLLM's
        from reasongym.generation.low_precision import DTYPES, LowPrecisionGenerator

        with parallel.gathered(model), adapters_merged(adapted):
            dtype = DTYPES[rollout.sampler_weights]
            return LowPrecisionGenerator(model, tokenizer, dtype, batch_size=rollout.generation_batch_size)
    if chosen == "hf":  # samples the module itself: nothing to copy
        return HFGenerator(model, tokenizer, batch_size=rollout.generation_batch_size)
    if info.world_size > 1:
        raise ConfigError(
            f"engine={rollout.engine!r} is not allowed with {info.world_size} processes yet: each rank would hold "
            "its own vLLM engine, which has not been tried beside torch.distributed; use engine='hf' (or one "
            "process)"
        )
    with parallel.gathered(model), adapters_merged(adapted):  # the engine copies the weights it samples with
        return build_generator(
            chosen,
            model,
            tokenizer,
            fall_back=rollout.engine == "auto",
            batch_size=rollout.generation_batch_size,
            settings=rollout.vllm,
            seed=seed,
            tempered_logprobs=rollout.tempered_logprobs,
        )


@dataclass
class EngineSync:
    """Pushes the policy's weights into an engine holding a copy of them, when they have changed."""

    sampler: Any
    """The run's sampler; only one with ``load_weights`` (a `VLLMGenerator`) holds a copy."""
    model: Any
    """The policy (its LoRA adapters merged for the push when ``adapted`` is set)."""
    adapted: Any = None
    """The ``PeftModel`` around ``model`` with LoRA, else None."""
    version: int = 0
    """Optimizer steps taken since the run started (or resumed)."""
    synced: int | None = 0
    """``version`` the engine's weights are from; None when it may hold others (an engine the caller
    passed in, or one `rest` freed): they are pushed before it samples. An engine the run built from the
    policy's current weights starts in sync (0)."""

    @property
    def holds_weights(self) -> bool:
        """Whether the sampler keeps its own copy of the weights (and so needs syncing)."""
        return hasattr(self.sampler, "load_weights")

    def stepped(self, steps: int = 1) -> None:
        """The optimizer changed the policy's weights ``steps`` times."""
        self.version += steps

    def ready(self) -> float:
        """Wake the engine and give it the current weights if it lacks them; returns the seconds it took."""
        if not self.holds_weights or self.synced == self.version:
            return 0.0
        from reasongym.generation.vllm_engine import hf_weights

        started = time.perf_counter()
        with torch.no_grad(), parallel.gathered(self.model), adapters_merged(self.adapted):
            self.sampler.load_weights(hf_weights(self.model))
        self.synced = self.version
        return time.perf_counter() - started

    def rest(self) -> None:
        """Let the engine free its device memory until it samples again (vLLM's sleep; nothing on a CPU)."""
        if self.holds_weights and hasattr(self.sampler, "sleep"):
            self.sampler.sleep()
            if getattr(self.sampler, "asleep", False):
                self.synced = None  # level-2 sleep drops the weights: push them again on waking


def weights_copy(model: torch.nn.Module, adapted: Any) -> list[tuple[str, torch.Tensor]]:
    """A copy of ``model``'s weights as vLLM loads them (LoRA merged, full under FSDP): what a thread driving
    the engine ahead (`reasongym.agents.runtime.engine_ahead.EngineAhead`) loads before its next batch."""
    from reasongym.generation.vllm_engine import hf_weights

    with torch.no_grad(), parallel.gathered(model), adapters_merged(adapted):
        return [(name, tensor.clone()) for name, tensor in hf_weights(model)]


def sampling_context(
    engine: EngineSync, model: torch.nn.Module, adapted: Any, autocast: Any
) -> contextlib.ExitStack:
    """What sampling with the in-process sampler needs: full weights (FSDP), ``autocast``, LoRA merged. An
    engine with its own copy of the weights (vLLM) needs none of it."""
    stack = contextlib.ExitStack()
    if not engine.holds_weights:
        stack.enter_context(parallel.gathered(model))
        stack.enter_context(autocast)
        stack.enter_context(adapters_merged(adapted))
    return stack


@dataclass
class PolicySampler:
    """The run's sampler as the trainer uses it: the generator (timed), the sync of an engine's copy of the
    weights, and what sampling the policy module itself needs (`sampling_context`)."""

    generator: TimedGenerator
    """The sampler, its time added up (``generate`` of each step's phases)."""
    engine: EngineSync
    """Keeps a vLLM engine's copy of the weights current (nothing to do for `HFGenerator`)."""
    autocast: Callable[[], AbstractContextManager[Any]]
    """A fresh autocast context of the run (`reasongym.agents.runtime.optimizer.autocast_context`)."""

    @property
    def is_policy(self) -> bool:
        """The sampler runs the trained module itself (`HFGenerator` on the policy), so its log-probs are
        the trainer's; False for another engine (vLLM, a served model), whose batches are rescored."""
        inner = self.generator.inner
        return isinstance(inner, HFGenerator) and inner.model is self.engine.model

    def context(self) -> contextlib.ExitStack:
        """What one sampling call with this sampler needs (`sampling_context`)."""
        return sampling_context(self.engine, self.engine.model, self.engine.adapted, self.autocast())


class FollowingGenerator:
    """An engine that takes the policy's current weights before every call (STaR's rationale sampler: the
    policy is fine-tuned between calls, by a loop that does not report its steps). Implements `Generator`."""

    takes_token_ids = True
    """Prompts may be token id lists, as for the engine itself."""

    def __init__(self, sampler: Any, model: torch.nn.Module, adapted: Any = None) -> None:
        """Follow ``model`` (with the adapters of the ``PeftModel`` ``adapted`` merged in, if given) with
        ``sampler`` (a `VLLMGenerator` built from ``model``)."""
        self.sampler = sampler
        self.sync = EngineSync(sampler, model, adapted)
        self.engine_name = getattr(sampler, "engine_name", None)
        """The engine's name (`reasongym.generation.engines.engine_identity`)."""

    def generate(self, prompts: Any, params: Any) -> Any:
        """The engine's `generate`, after pushing the policy's weights."""
        self.sync.stepped()
        self.sync.ready()
        return self.sampler.generate(prompts, params)

    def generate_batch(self, prompts: Any, params: Any) -> Any:
        """The engine's `generate_batch`, after pushing the policy's weights."""
        self.sync.stepped()
        self.sync.ready()
        return self.sampler.generate_batch(prompts, params)


def following_engine(
    model: torch.nn.Module,
    tokenizer: Any,
    rollout: RolloutConfig,
    seed: int,
    info: distributed.DistInfo,
    adapted: Any = None,
) -> FollowingGenerator | None:
    """A vLLM engine following ``model`` (its LoRA adapters, those of ``adapted``, merged in) when the run's
    sampler (`build_sampler`, where ``rollout.engine`` is resolved) is one, else None (STaR's rationale sampler;
    the in-process sampler needs no copy of the weights)."""
    engine = build_sampler(model, tokenizer, rollout, adapted, seed, info)
    return FollowingGenerator(engine, model, adapted) if hasattr(engine, "load_weights") else None
