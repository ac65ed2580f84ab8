"""Rollouts drawn ahead by an engine holding its own copy of the weights (vLLM), ``max_staleness`` >= 1.

`AsyncRollouts` gives our sampler a process of its own. A vLLM engine already computes apart from the trainer
(its engine core: a process of its own by default, on its own device when there are two), so here the
sampler ahead is a thread of the trainer's process that drives the engine: while the trainer updates on batch
t, the thread has the engine draw batch t + 1. The pacing is `AsyncRollouts`'s: the trainer asks for each
batch at its version V, and the thread draws the next batch from version V + 1 - K or newer, so no batch is
more than K versions older than the policy that trains on it.

Weights: after each step the trainer leaves a copy of its weights (LoRA merged, named as vLLM loads them:
`hf_weights`), which the thread loads into the engine before its next batch when it is newer than what the
engine holds (vLLM's in-place reload, as the synchronous loop's `EngineSync` does). The engine takes turns:
the trainer's evaluations hold ``turn`` (they load the current weights themselves), the thread holds it for
each batch (the environment takes the same turns). The engine's log-probs stay with each batch, and the trainer rescores it, as in the synchronous
loop with vLLM.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import torch

from reasongym import distributed
from reasongym.agents.runtime import parallel
from reasongym.agents.runtime.async_rollouts import StepAccounts, problem_order, stamped
from reasongym.policy.lora import adapters_merged

_STOP = -1
"""The request that tells the thread to stop."""


class EngineAhead(StepAccounts):
    """The trainer's sampler ahead when its sampler is an engine with its own weights (vLLM)."""

    def __init__(self, session: Any) -> None:
        self.engine = session.engine.sampler
        self.session, self.max_staleness = session, session.rollout_cfg.max_staleness
        self.turn = threading.Lock()
        session.engine.turn = self.turn  # the trainer's evaluations take turns with the thread
        self.newest_version, self.stopping = session.start_step, False
        self.newest: list[tuple[str, torch.Tensor]] | None = None
        """The trainer's newest weights (None: the start's, which the engine holds)."""
        self.arrived = threading.Condition()
        self.requests: queue.Queue[int] = queue.Queue()
        self.batches: queue.Queue[dict[str, Any]] = queue.Queue()
        super().__init__()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="engine-ahead", daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, session: Any) -> EngineAhead:
        """The sampler ahead of a session whose sampler is a vLLM engine."""
        return cls(session)

    # ------------------------------------------------------------------------------------ the thread

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as error:  # the trainer raises it when it asks for its next batch
            self.failure = error
            self.batches.put({})

    def _loop(self) -> None:
        session = self.session
        source = getattr(session.env.unwrapped, "source", None)
        size = source.size(session.train_split, session.run_cfg.difficulty) if source is not None else None
        cursor, needed, loaded = session.cursor, session.start_step, session.start_step
        while True:
            waited = self._weights(at_least=needed)
            if self.stopping:
                return
            batch, loaded = self._draw(cursor, size, loaded)
            requested = self.requests.get()
            while requested != _STOP and requested - loaded > self.max_staleness:
                self.dropped += 1  # only a step that takes no batch could make it: none of this library's
                waited += self._weights(at_least=requested - self.max_staleness)
                if self.stopping:
                    return
                batch, loaded = self._draw(cursor, size, loaded)
            if requested == _STOP:
                return
            self.batches.put({"batch": batch, "version": loaded, "waited_s": waited})
            cursor, needed = cursor + session.rollout_cfg.num_prompts, requested + 1 - self.max_staleness

    def _weights(self, at_least: int) -> float:
        """Wait until the trainer's newest weights are version ``at_least`` or newer (or it stops); the
        seconds waited."""
        started = time.perf_counter()
        with self.arrived:
            while self.newest_version < at_least and not self.stopping:
                self.arrived.wait()
        return time.perf_counter() - started

    def _draw(self, cursor: int, size: int | None, loaded: int) -> tuple[Any, int]:
        """One batch from the engine, after giving it the trainer's newest weights when they are newer than
        version ``loaded`` (or the engine dropped its weights asleep); the batch and the version that drew it."""
        from reasongym.rollouts.batch import collect_rollouts

        session, rollout = self.session, self.session.rollout_cfg
        indices = problem_order(session.run_cfg.seed, cursor, rollout.num_prompts, size)
        seed = distributed.rank_seed(session.run_cfg.seed * 1_000_003 + cursor, session.info)
        with self.arrived:
            version, weights = self.newest_version, self.newest
        with self.turn:
            if weights is not None and (version > loaded or getattr(self.engine, "asleep", False)):
                self.engine.load_weights(iter(weights))
                loaded = version
            batch = collect_rollouts(
                session.env,  # the trainer's evaluations use it too, in their turns
                self.engine,
                session.tokenizer,
                distributed.shard(indices, session.info),
                params=rollout.sampling(seed),
                split=session.train_split,
                difficulty=session.run_cfg.difficulty,
            )
        return batch, loaded

    # ------------------------------------------------------------------------------------ the trainer

    def next(self, step: int) -> tuple[Any, float]:
        """The batch that step ``step`` trains on, and the seconds the trainer waited for it."""
        started = time.perf_counter()
        self.requests.put(step - 1)
        message = self.batches.get()
        if self.failure is not None:
            raise RuntimeError(f"the sampling thread failed: {self.failure!r}") from self.failure
        waited = time.perf_counter() - started
        self.waited_s += waited
        self.sampler_waited_s += message["waited_s"]
        self.staleness.append(step - 1 - message["version"])
        return stamped(message["batch"], message["version"]), waited

    def push(self, version: int) -> None:
        """Leave a copy of the trained weights (LoRA merged), version ``version``, for the thread."""
        from reasongym.generation.vllm_engine import hf_weights

        model = self.session.model
        with torch.no_grad(), parallel.gathered(model), adapters_merged(self.session.adapted):
            copy = [(name, tensor.clone()) for name, tensor in hf_weights(model)]
        with self.arrived:
            self.newest_version, self.newest = version, copy
            self.arrived.notify_all()

    def close(self) -> None:
        """Stop the thread after the batch it is drawing (the engine is the session's to close)."""
        self.requests.put(_STOP)
        with self.arrived:
            self.stopping = True
            self.arrived.notify_all()
        self.thread.join(timeout=600)
