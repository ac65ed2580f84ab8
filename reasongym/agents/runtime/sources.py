"""Where a run's batches come from: a source, given a frozen `DrawPlan`, hands the trainer one batch at a time.

Three sources, one interface (`BatchSource`), and one way to draw (`reasongym.agents.runtime.draw.draw_batch`):

- `InProcess` (``max_staleness`` K = 0): the trainer's own sampler draws each batch when the trainer asks,
  with the current weights (the synchronous loop);
- `reasongym.agents.runtime.async_rollouts.AsyncRollouts` (K >= 1): a sampler process with its own copy of
  the policy draws ahead while the trainer updates;
- `reasongym.agents.runtime.engine_ahead.EngineAhead` (K >= 1 with vLLM): a thread has the vLLM engine,
  which holds its own copy of the weights, draw ahead.

The two that draw ahead share their pacing (`reasongym.agents.runtime.window`). A source knows its plan,
its sampler and its environment, never the session: the trainer asks for the next batch at its policy
version and sends each new version after a step (`push`).
"""

from __future__ import annotations

import contextlib
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from reasongym import distributed
from reasongym.agents.runtime.draw import DrawPlan, draw_batch
from reasongym.agents.runtime.engine import PolicySampler
from reasongym.rollouts.batch import RolloutBatch
from reasongym.rollouts.env_pool import EnvPool


@dataclass(frozen=True)
class Drawn:
    """One batch as a source hands it over."""

    batch: RolloutBatch
    """This rank's share of the batch."""
    cursor: int
    """The problem cursor it was drawn at (`DrawPlan.indices`)."""
    phases: dict[str, float]
    """Seconds the trainer spent on it, by phase (``generate``, ``verify``, ``weight_sync``; or
    ``wait_for_sampler`` for a source ahead)."""


class BatchSource(Protocol):
    """What the trainer draws its batches from."""

    exact_logp: bool
    """The batches' log-probs are the trained policy's own for the version that drew them (our sampler on
    the policy module): nothing to rescore. False for another engine (vLLM, a served model) and for a
    sampler ahead whose batches are rescored (``stale_old_logp='rescore'``)."""
    turn: AbstractContextManager[Any]
    """Held while the trainer uses the sampler's engine itself (an evaluation)."""

    def next(self, version: int) -> Drawn:
        """The next batch, for a trainer whose policy is at ``version`` (steps done)."""

    def push(self, version: int) -> None:
        """The trainer's weights after step ``version`` (a source ahead takes them; others need nothing)."""

    def step_metrics(self, info: distributed.DistInfo) -> dict[str, float]:
        """The source's metrics of the step (``async/`` for a source ahead), then reset."""

    def close(self) -> None:
        """Stop drawing and free what the source holds."""


class InProcess:
    """K = 0: each batch drawn when the trainer asks, by the trainer's own sampler, from the current weights."""

    turn: AbstractContextManager[Any] = contextlib.nullcontext()

    def __init__(self, plan: DrawPlan, env: Any, tokenizer: Any, sampler: PolicySampler) -> None:
        self.plan, self.env, self.tokenizer, self.sampler = plan, env, tokenizer, sampler
        self.cursor = plan.cursor
        self.exact_logp = sampler.is_policy
        self.pool: EnvPool | None = None
        """The env copies the rollouts play on, kept from batch to batch (made at the first)."""

    def next(self, version: int) -> Drawn:
        """The batch at the cursor, drawn now: the engine's weights synced first (vLLM), then sampled and
        scored; the seconds of each phase."""
        self.pool = self.pool or EnvPool(self.env)
        generator, engine = self.sampler.generator, self.sampler.engine
        phases = {"weight_sync": engine.ready()}  # an engine with its own copy of the weights (vLLM)
        started, generating = time.perf_counter(), generator.seconds
        with self.sampler.context():
            batch = draw_batch(self.plan, self.cursor, self.env, generator, self.tokenizer, self.pool)
        engine.rest()  # a GPU engine frees its memory for the update
        phases["generate"] = generator.seconds - generating
        phases["verify"] = time.perf_counter() - started - phases["generate"]
        drawn = Drawn(batch, self.cursor, phases)
        self.cursor = self.plan.following(self.cursor)
        return drawn

    def push(self, version: int) -> None:
        """Nothing: the next batch is drawn from the current weights."""

    def step_metrics(self, info: distributed.DistInfo) -> dict[str, float]:
        """None: nothing was drawn ahead."""
        return {}

    def close(self) -> None:
        """Close the env copies."""
        if self.pool is not None:
            self.pool.close()
