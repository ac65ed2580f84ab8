"""Rollouts drawn ahead by an engine holding its own copy of the weights (vLLM), ``max_staleness`` >= 1.

`AsyncRollouts` gives our sampler a process of its own. A vLLM engine already computes apart from the trainer
(its engine core: a process of its own by default, on its own device when there are two), so here the
source ahead is a thread of the trainer's process that drives the engine: while the trainer updates on batch
t, the thread has the engine draw batch t + 1, paced by the staleness window (`reasongym.agents.runtime.window`)
as the sampler process is.

Weights: after each step the trainer leaves a copy of its weights (LoRA merged, named as vLLM loads them),
which the thread loads into the engine before its next batch when it is newer than what the engine holds
(vLLM's in-place reload, as the synchronous loop's `EngineSync` does). The engine takes turns: the trainer's
evaluations hold ``turn`` (they load the current weights themselves), the thread holds it for each batch (the
environment takes the same turns). The engine's log-probs stay with each batch, and the trainer's own forward
pass gives the ratio's, as in the synchronous loop with vLLM.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from reasongym.agents.runtime.draw import DrawPlan, draw_batch
from reasongym.agents.runtime.window import STOP, Ahead, draw_ahead

WeightsCopy = list[tuple[str, torch.Tensor]]
"""The trainer's weights as vLLM loads them: (name, tensor) pairs."""


class EngineAhead(Ahead):
    """The trainer's source ahead when its sampler is an engine with its own weights (vLLM)."""

    exact_logp = False  # another engine's log-probs: the trainer's forward pass gives the ratio's

    def __init__(
        self,
        plan: DrawPlan,
        max_staleness: int,
        engine: Any,
        env: Any,
        tokenizer: Any,
        weights: Callable[[], WeightsCopy],
    ) -> None:
        """Start the thread: it draws ``plan`` on ``env`` with ``engine``; ``weights()`` copies the trainer's
        current weights (called by `push`, in the trainer's thread)."""
        self.plan, self.max_staleness, self.engine = plan, max_staleness, engine
        self.env, self.tokenizer, self.copy_weights = env, tokenizer, weights
        self.turn = threading.Lock()
        self.newest_version, self.stopped = plan.version, False
        self.newest: WeightsCopy | None = None
        """The trainer's newest weights (None: the start's, which the engine holds)."""
        self.loaded = plan.version
        """The version the engine holds."""
        self.arrived = threading.Condition()
        self.requests: queue.Queue[int] = queue.Queue()
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        super().__init__()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="engine-ahead", daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------------------------ the thread

    def _run(self) -> None:
        try:
            draw_ahead(self.plan, self.max_staleness, self, self._draw, self.requests.get, self.answers.put)
        except BaseException as error:  # the trainer raises it when it asks for its next batch
            self.failure = error
            self.answers.put({})

    def take(self, at_least: int) -> float:
        """Wait until the trainer's newest weights are version ``at_least`` or newer (or it stops); the
        seconds waited. The engine loads them when it next draws."""
        started = time.perf_counter()
        with self.arrived:
            while self.newest_version < at_least and not self.stopped:
                self.arrived.wait()
        return time.perf_counter() - started

    def _draw(self, cursor: int) -> tuple[Any, int]:
        """One batch from the engine, after giving it the trainer's newest weights when they are newer than
        what it holds (or the engine dropped its weights asleep); the batch and the version that drew it."""
        with self.arrived:
            version, weights = self.newest_version, self.newest
        with self.turn:
            if weights is not None and (version > self.loaded or getattr(self.engine, "asleep", False)):
                self.engine.load_weights(iter(weights))
                self.loaded = version
            # The trainer's evaluations use the environment too, in their turns.
            return draw_batch(self.plan, cursor, self.env, self.engine, self.tokenizer), self.loaded

    # ------------------------------------------------------------------------------------ the trainer

    def exchange(self, version: int) -> dict[str, Any]:
        """Ask the thread for the next batch at ``version``; its answer."""
        self.requests.put(version)
        message = self.answers.get()
        if self.failure is not None:
            raise RuntimeError(f"the sampling thread failed: {self.failure!r}") from self.failure
        return message

    def push(self, version: int) -> None:
        """Leave a copy of the trained weights, version ``version``, for the thread."""
        copy = self.copy_weights()
        with self.arrived:
            self.newest_version, self.newest = version, copy
            self.arrived.notify_all()

    def close(self) -> None:
        """Stop the thread after the batch it is drawing (the engine is the session's to close)."""
        self.requests.put(STOP)
        with self.arrived:
            self.stopped = True
            self.arrived.notify_all()
        self.thread.join(timeout=600)
