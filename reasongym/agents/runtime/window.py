"""The staleness window: how a source that draws ahead of the trainer paces its batches, written once for
both such sources (a sampler process, `reasongym.agents.runtime.async_rollouts`; a thread driving vLLM,
`reasongym.agents.runtime.engine_ahead`).

With ``RolloutConfig.max_staleness`` K >= 1 the trainer asks for each batch saying its policy version V (the
steps done). The source draws one batch ahead: after answering a request made at version V it draws the
next batch from version V + 1 - K or newer (waiting for that version, which the trainer has already sent,
when it lacks it). The next request comes at version V or V + 1 (a step takes one batch, or several rounds
for DAPO's dynamic sampling, and then updates once), so a batch is never more than K versions older than the
policy that trains on it; with K >= 2 the source never waits for weights. A batch found too old anyway is
drawn again and counted (``async/dropped``).

`draw_ahead` is the source's side (the loop), `Ahead` the trainer's (asking, and the ``async/`` metrics of
each step). What moves between them, a request and the message answering it, is theirs to carry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np
import torch

from reasongym import distributed
from reasongym.agents.runtime.draw import DrawPlan
from reasongym.agents.runtime.sources import Drawn

STOP = -1
"""The request (or weights version) that tells a source ahead to stop."""


class WeightsIn(Protocol):
    """A source's side of the weights the trainer sends after each step."""

    stopped: bool
    """The trainer said stop."""

    def take(self, at_least: int) -> float:
        """Take every version that has arrived, waiting while the newest is older than ``at_least`` (unless
        stopped); the seconds waited."""


def draw_ahead(
    plan: DrawPlan,
    max_staleness: int,
    weights: WeightsIn,
    draw: Callable[[int], tuple[Any, int]],
    request: Callable[[], int],
    answer: Callable[[dict[str, Any]], None],
) -> None:
    """Answer each of the trainer's requests with a batch drawn ahead, from weights at most ``max_staleness``
    versions older than the request's, until the trainer says stop (`STOP`).

    Args:
        plan: What to draw, from which cursor and version.
        max_staleness: K.
        weights: The weights channel (what ``draw`` samples with follows it).
        draw: The batch at a cursor and the version that drew it.
        request: Waits for the trainer's next request, its version (or `STOP`).
        answer: Sends the trainer ``{"batch", "version", "cursor", "waited_s", "dropped"}``.
    """
    cursor, needed, dropped = plan.cursor, plan.version, 0
    while True:
        waited = weights.take(at_least=needed)
        if weights.stopped:
            return
        batch, drawn_by = draw(cursor)
        requested = request()
        while requested != STOP and requested - drawn_by > max_staleness:
            dropped += 1  # only a step that takes no batch could make it: none of this library's trainers
            waited += weights.take(at_least=requested - max_staleness)
            if weights.stopped:
                return
            batch, drawn_by = draw(cursor)
        if requested == STOP or weights.stopped:
            return
        answer(
            {"batch": batch, "version": drawn_by, "cursor": cursor, "waited_s": waited, "dropped": dropped}
        )
        cursor, needed = plan.following(cursor), requested + 1 - max_staleness


def stamped(batch: Any, version: int) -> Any:
    """``batch`` with every row marked as drawn by policy version ``version``."""
    return dataclasses.replace(batch, policy_version=torch.full((len(batch),), version, dtype=torch.int64))


class Ahead(ABC):
    """The trainer's side of a source ahead: asks for each batch, and counts each step's ``async/`` metrics."""

    turn: AbstractContextManager[Any] = contextlib.nullcontext()
    """Held while the trainer itself uses the source's engine (an evaluation); nothing to hold unless the
    source shares the trainer's engine (`EngineAhead`)."""

    def __init__(self) -> None:
        self.staleness: list[int] = []
        self.dropped = 0
        self.waited_s = self.sampler_waited_s = 0.0

    @abstractmethod
    def exchange(self, version: int) -> dict[str, Any]:
        """Send the request of a trainer at ``version``; the source's answer (`draw_ahead`)."""

    def next(self, version: int) -> Drawn:
        """The batch the trainer at ``version`` trains on next (drawn at most ``max_staleness`` versions
        before), with the seconds it waited for it."""
        started = time.perf_counter()
        message = self.exchange(version)
        waited = time.perf_counter() - started
        self.waited_s += waited
        self.sampler_waited_s += message["waited_s"]
        self.dropped = message["dropped"]
        self.staleness.append(version - message["version"])
        batch = stamped(message["batch"], message["version"])
        return Drawn(batch, message["cursor"], {"wait_for_sampler": waited})

    def step_metrics(self, info: distributed.DistInfo) -> dict[str, float]:
        """The ``async/`` metrics of the step's batches on every rank (one collective), then reset."""
        mine = {
            "staleness": self.staleness,
            "dropped": self.dropped,
            "waits": (self.waited_s, self.sampler_waited_s),
        }
        ranks = distributed.all_gather_objects(mine, info)
        staleness = [s for rank in ranks for s in rank["staleness"]]
        self.staleness, self.waited_s, self.sampler_waited_s = [], 0.0, 0.0
        return {
            "async/staleness_mean": float(np.mean(staleness)),
            "async/staleness_max": float(max(staleness)),
            "async/dropped": float(sum(rank["dropped"] for rank in ranks)),
            "async/trainer_wait_s": max(rank["waits"][0] for rank in ranks),
            "async/sampler_wait_s": max(rank["waits"][1] for rank in ranks),
        }
