"""The policy being trained and what trains it: the update over a batch, the reference's and the old policy's
log-probs, and the checkpoint of its state.

`Learner.update` runs ``mu`` optimizer steps over the same rollouts, each accumulated over micro-batches
normalised by the whole batch's totals (`reasongym.agents.runtime.update`), under autocast and DDP's
all-reduce, every rank's metrics merged. A batch whose old log-probs are not known yet (drawn by another
engine, or ahead) is scored by the update's own forward pass when there is one update (``mu`` = 1), or by
`rescore` before it otherwise. Shapes use the legend of `reasongym.agents.common`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from reasongym import distributed
from reasongym.agents.algorithm_configs import ImportanceSamplingConfig
from reasongym.agents.common import token_logprobs
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.runtime import parallel
from reasongym.agents.runtime.diagnostics import advantage_metrics
from reasongym.agents.runtime.heap import HeapTrimmer
from reasongym.agents.runtime.optimizer import autocast_context, optimizer_step
from reasongym.agents.runtime.update import (
    BackwardPart,
    PolicyLoss,
    accumulate_gradients,
    global_totals,
    merge_rank_metrics,
    policy_backward_part,
    recompute_old_logp,
)
from reasongym.errors import ConfigError
from reasongym.runs.lifecycle import RunLife


@dataclass
class Learner:
    """The trained model, its optimizer and the frozen reference of one RL run."""

    model: torch.nn.Module
    """The policy, trained in place."""
    optimizer: torch.optim.Optimizer
    scheduler: Any
    run_cfg: RunConfig
    rollout_cfg: RolloutConfig
    """The rollouts' settings: the loss's temperature and the length limit."""
    info: distributed.DistInfo
    """This process's place in the job."""
    train_model: torch.nn.Module
    """The model the update runs forward and backward (``model``, or its DDP wrapper across processes)."""
    scaler: Any
    """The gradient scaler (`grad_scaler`: enabled for fp16 autocast only)."""
    adapted: Any = None
    """With LoRA, the ``PeftModel`` around ``model``: checkpoints hold its adapters, and ``model`` inside its
    ``disable_adapter()`` is the KL reference."""
    reference: torch.nn.Module | None = None
    """The frozen KL reference; None without one, or with LoRA (see ``reference_without_adapters``)."""
    reference_without_adapters: bool = False
    """The KL reference is ``model`` with its LoRA adapters off."""
    heap: HeapTrimmer | Callable[[], Any] = lambda: None
    """Called at phase boundaries: hands freed heap pages back to the OS once the resident set has grown."""
    stepped: Callable[[], None] = lambda: None
    """Called after every optimizer step (an engine's copy of the weights is then behind)."""

    @torch.no_grad()
    def reference_logprobs(self, batch: Any) -> Tensor | None:
        """[B, T] log-probs of the completions under the frozen reference (at the loss's temperature,
        `RolloutConfig.logprob_temperature`), or None without one."""
        if self.reference is None and not self.reference_without_adapters:
            return None
        reference = self.reference or self.model
        adapters_off = self.adapted.disable_adapter() if self.reference is None else contextlib.nullcontext()
        with adapters_off, parallel.gathered(reference), autocast_context(self.run_cfg):
            logp, _ = token_logprobs(
                reference,
                batch.input_ids,
                batch.attention_mask,
                batch.completion_start,
                micro_batch_size=self.run_cfg.micro_batch_size,
                temperature=self.rollout_cfg.logprob_temperature,
            )
        self.heap()
        return logp * batch.completion_mask

    def rescore(self, batch: Any) -> Any:
        """``batch`` with ``old_logp`` from a no-grad forward pass of the policy (`recompute_old_logp`): the
        sampler's own log-probs stay beside them as ``sampler_logp``, for the off-policy correction."""
        with parallel.gathered(self.model), autocast_context(self.run_cfg):
            rescored = recompute_old_logp(
                self.model, batch, self.run_cfg.micro_batch_size, self.rollout_cfg.logprob_temperature
            )
        self.heap()  # the scoring pass's logits
        return rescored

    def update(
        self,
        batch: Any,
        adv: Tensor,
        loss: PolicyLoss,
        *,
        mu: int,
        phases: MutableMapping[str, float],
        ref_logp: Tensor | None = None,
        mask: Tensor | None = None,
        correction: ImportanceSamplingConfig | None = None,
        backward_part: BackwardPart = policy_backward_part,
    ) -> dict[str, float]:
        """``mu`` optimizer steps over ``batch`` (this rank's share), each accumulated over micro-batches; the
        metrics averaged over the steps, every rank's. Seconds go to ``phases`` (``forward_backward``,
        ``optimizer``); the arguments are `reasongym.agents.runtime.session.RLSession.update`'s."""
        if not batch.old_logp_known and mu > 1:
            raise ConfigError(
                "batch.old_logp holds placeholders (its generator returned text only) and mu > 1 updates "
                "use it: call recompute_old_logp(model, batch) first (the clipped objective needs the "
                "log-probs of the policy that sampled it)"
            )
        mask = batch.completion_mask if mask is None else mask  # [B, T]
        totals = global_totals(mask, self.rollout_cfg.max_new_tokens)
        per_epoch: list[dict[str, float]] = []
        entropy = 0.0
        self.model.train()
        for epoch in range(mu):
            started = time.perf_counter()
            metrics = self._backward(
                batch, adv, loss, totals, mask, (ref_logp, correction), epoch == 0, backward_part
            )
            entropy = metrics.pop("train/entropy", entropy)
            stepping = time.perf_counter()
            phases["forward_backward"] += stepping - started
            step = optimizer_step(
                self.model, self.optimizer, self.scheduler, self.run_cfg, scaler=self.scaler
            )
            self.stepped()
            per_epoch.append({**metrics, **step})
            self.heap()  # the optimizer's temporaries
            phases["optimizer"] += time.perf_counter() - stepping
        metrics = {key: float(np.mean([m[key] for m in per_epoch])) for key in per_epoch[0]}
        metrics["train/entropy"] = entropy
        every_adv = torch.cat(distributed.all_gather_objects(adv.detach().cpu(), self.info))  # [B_all]
        return {**metrics, **advantage_metrics(every_adv)}

    def _backward(
        self,
        batch: Any,
        adv: Tensor,
        loss: PolicyLoss,
        totals: Any,
        mask: Tensor,
        extra: tuple[Tensor | None, ImportanceSamplingConfig | None],
        with_entropy: bool,
        backward_part: BackwardPart,
    ) -> dict[str, float]:
        """One forward and backward over ``batch`` in micro-batches, under autocast and DDP's all-reduce;
        every rank's loss metrics merged. ``extra``: the reference log-probs and the off-policy correction."""
        ref_logp, correction = extra
        with autocast_context(self.run_cfg), distributed.collective("update", self.info):
            metrics = accumulate_gradients(
                self.train_model,
                batch,
                adv,
                loss,
                totals,
                mask=mask,
                ref_logp=ref_logp,
                correction=correction,
                micro_batch_size=self.run_cfg.micro_batch_size,
                with_entropy=with_entropy,
                temperature=self.rollout_cfg.logprob_temperature,
                world_size=self.info.world_size,
                scaler=self.scaler,
                after_pass=self.heap,
                backward_part=backward_part,
            )
        return merge_rank_metrics(distributed.all_gather_objects(metrics, self.info))

    def save(self, life: RunLife, step: int, trainer_state: dict[str, Any], *, gathered: bool = True) -> None:
        """Checkpoint step ``step``: the weights (the adapters with LoRA), optimizer, schedule and
        ``trainer_state``; a sharded model's gathered whole first (every rank calls) unless ``gathered`` is
        False (after an interrupt, when the ranks no longer meet)."""
        model_state, optimizer_state = (
            parallel.full_state(self.model, self.optimizer) if gathered else (None, None)
        )
        life.save(
            step,
            model=self.adapted or self.model,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            trainer_state=trainer_state,
            model_state=model_state,
            optimizer_state=optimizer_state,
        )
