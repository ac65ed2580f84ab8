"""Rollouts sampled ahead of training, by a sampler in its own process, at most ``max_staleness`` versions old.

With ``RolloutConfig.max_staleness`` K >= 1 the trainer no longer samples: a sampler process (torch's
``spawn`` start method, one CPU thread, its own copy of the policy) plays the environment and sends each
rollout batch to the trainer over a two-process gloo group of its own (a TCP store on a free loopback port),
while the trainer updates on the batch before. After each update the trainer sends the new weights (a
version: the number of updates so far) without waiting; the sampler takes whatever versions have arrived
before each batch, and waits for weights when its newest version is too old: batch ``t`` (1-based, the step
that trains on it) is drawn by version ``t - 1 - K`` or newer. So no batch is ever more than K updates older
than the policy that trains on it, nothing is dropped in normal operation, and a batch that would be is
dropped and logged (``async/dropped``). K = 0 is the synchronous loop, untouched.

Each batch keeps the sampler's log-probs: the trainer rescores the batch under its current weights (the PPO
ratio's ``old_logp``) and the off-policy correction of issue 24 (`reasongym.agents.offpolicy`) weighs the
gap between the two, as for a vLLM sampler. The problem order, the cursor and the sampling seed of each batch
are the synchronous loop's (`problem_order`), so a resumed run starts the sampler at the checkpoint's cursor
and version: what was in flight is lost and drawn again.

What differs from the synchronous run: which version drew each batch depends on timing (how far the sampler
got while the trainer worked), so two runs with the same seed agree exactly only when the interleaving is the
same. The problems, their order and the sampling seeds are the same in every run.
"""

from __future__ import annotations

import datetime
import os
import pickle
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from reasongym.errors import ConfigError

_STOP = -1
"""The version number that tells the sampler to stop."""
_TIMEOUT = datetime.timedelta(minutes=30)


def problem_order(seed: int, cursor: int, count: int, size: int | None) -> list[int]:
    """The ``count`` training problems from position ``cursor`` of the run's seeded order: a permutation of
    a finite split per pass (wrapping around), or seed-derived indices of a generated source (no size)."""
    positions = range(cursor, cursor + count)
    if not size:
        return [seed * 1_000_003 + p for p in positions]
    orders: dict[int, np.ndarray] = {}
    for p in positions:
        orders.setdefault(p // size, np.random.default_rng([seed, p // size]).permutation(size))
    return [int(orders[p // size][p % size]) for p in positions]


@dataclass(frozen=True)
class SamplerJob:
    """What the sampler process needs (pickled to it when it starts)."""

    port: int
    """The loopback port of the pair's TCP store (the trainer's side listens)."""
    model_class: type
    """The policy's class; the sampler builds its own copy from ``config`` and ``weights``."""
    config: Any
    weights: dict[str, torch.Tensor]
    """The policy's weights at ``version``."""
    tokenizer: Any
    env_spec: Any
    """The environment's gymnasium spec (its id and the options it was made with)."""
    difficulty: int | None
    split: str
    rollout: Any
    """The run's `RolloutConfig`."""
    seed: int
    cursor: int
    """The problem cursor of the first batch to draw."""
    version: int
    """The version of ``weights`` (the steps done when the run started or resumed)."""


def _pair(port: int, rank: int) -> Any:
    """The trainer's (rank 0) and the sampler's (rank 1) gloo group of two."""
    store = dist.TCPStore("127.0.0.1", port, 2, is_master=rank == 0, timeout=_TIMEOUT)
    return dist.ProcessGroupGloo(store, rank, 2, _TIMEOUT)


def _flat(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().float().reshape(-1).cpu() for p in model.parameters()])


def _load_flat(model: torch.nn.Module, flat: torch.Tensor) -> None:
    offset = 0
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()


# ---------------------------------------------------------------------------------------------- the sampler


def sampler_main(job: SamplerJob, max_staleness: int) -> None:
    """The sampler process: draw batch after batch, each from weights at most ``max_staleness`` versions
    behind the step that will train on it, until the trainer says stop."""
    import reasongym
    from reasongym.generation import HFGenerator
    from reasongym.rollouts.batch import collect_rollouts

    torch.set_num_threads(1)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()
    group = _pair(job.port, rank=1)
    model = job.model_class(job.config)
    model.load_state_dict(job.weights)
    model.eval()
    generator = HFGenerator(model, job.tokenizer)
    env = reasongym.make(job.env_spec.id, **job.env_spec.kwargs)
    source = getattr(env.unwrapped, "source", None)
    size = source.size(job.split, job.difficulty) if source is not None else None
    weights = Weights(group, model, job.version)
    cursor, step = job.cursor, job.version + 1
    while True:
        waited = weights.take(at_least=step - 1 - max_staleness)
        if weights.stopped:
            return
        indices = problem_order(job.seed, cursor, job.rollout.num_prompts, size)
        params = job.rollout.sampling(job.seed * 1_000_003 + cursor)  # the synchronous loop's seed
        with torch.no_grad():
            batch = collect_rollouts(
                env,
                generator,
                job.tokenizer,
                indices,
                params=params,
                split=job.split,
                difficulty=job.difficulty,
            )
        _send_object(
            group, {"batch": batch, "version": weights.version, "cursor": cursor, "waited_s": waited}
        )
        cursor, step = cursor + job.rollout.num_prompts, step + 1


def _exit_with(parent: int) -> None:
    """End this process once its trainer is gone (killed: nobody will take its batches or stop it)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


class Weights:
    """The sampler's side of the weights channel: one pending receive of the next version's header."""

    def __init__(self, group: Any, model: torch.nn.Module, version: int) -> None:
        self.group, self.model, self.version, self.stopped = group, model, version, False
        self.size = sum(p.numel() for p in model.parameters())
        self._post()

    def _post(self) -> None:
        self.header = torch.zeros(1, dtype=torch.int64)
        self.pending = self.group.recv([self.header], 0, 1)

    def take(self, at_least: int) -> float:
        """Load every version that has arrived, waiting while the newest is older than ``at_least``; the
        seconds waited."""
        started = time.perf_counter()
        while not self.stopped and (self.version < at_least or self.pending.is_completed()):
            self.pending.wait()
            if int(self.header) == _STOP:
                self.stopped = True
                break
            flat = torch.empty(self.size)
            self.group.recv([flat], 0, 2).wait()
            _load_flat(self.model, flat)
            self.version = int(self.header)
            self._post()
        return time.perf_counter() - started


def _send_object(group: Any, value: Any) -> None:
    data = torch.frombuffer(bytearray(pickle.dumps(value)), dtype=torch.uint8)
    group.send([torch.tensor([data.numel()], dtype=torch.int64)], 0, 3).wait()
    group.send([data], 0, 4).wait()


# ---------------------------------------------------------------------------------------------- the trainer


class AsyncRollouts:
    """The trainer's side: starts the sampler, receives its batches, sends it each new version."""

    def __init__(self, job: SamplerJob, max_staleness: int) -> None:
        context = torch.multiprocessing.get_context("spawn")
        self.process = context.Process(target=sampler_main, args=(job, max_staleness), daemon=True)
        self.process.start()
        self.group = _pair(job.port, rank=0)
        self.max_staleness, self.dropped = max_staleness, 0
        self.sent: list[tuple[Any, torch.Tensor]] = []
        self.waited_s = self.sampler_waited_s = 0.0

    @classmethod
    def start(cls, session: Any) -> AsyncRollouts:
        """The sampler of a session's run: its policy, environment, rollout settings, cursor and step."""
        model = session.model
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        job = SamplerJob(
            port,
            type(model),
            model.config,
            {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
            session.tokenizer,
            session.env.spec,
            session.run_cfg.difficulty,
            session.train_split,
            session.rollout_cfg,
            session.run_cfg.seed,
            session.cursor,
            session.start_step,
        )
        return cls(job, session.rollout_cfg.max_staleness)

    def next(self, step: int) -> tuple[Any, dict[str, float]]:
        """The batch that step ``step`` trains on, and its ``async/`` metrics; a batch drawn more than
        ``max_staleness`` versions before ``step - 1`` is dropped (logged) and the next one taken."""
        while True:
            started = time.perf_counter()
            size = torch.zeros(1, dtype=torch.int64)
            self.group.recv([size], 1, 3).wait()
            data = torch.empty(int(size), dtype=torch.uint8)
            self.group.recv([data], 1, 4).wait()
            message = pickle.loads(data.numpy().tobytes())
            self.waited_s += time.perf_counter() - started
            self.sampler_waited_s += message["waited_s"]
            staleness = step - 1 - message["version"]
            if staleness <= self.max_staleness:
                break
            self.dropped += 1
        metrics = {
            "async/staleness": float(staleness),
            "async/dropped": float(self.dropped),
            "async/trainer_wait_s": self.waited_s,
            "async/sampler_wait_s": self.sampler_waited_s,
        }
        self.waited_s = self.sampler_waited_s = 0.0
        return message["batch"], metrics

    def push(self, model: torch.nn.Module, version: int) -> None:
        """Send version ``version`` of the weights without waiting for the sampler to take it.

        Never waits for the sampler to take an earlier version either: a sampler far enough ahead takes
        versions only when it needs them, and may be sending a batch the trainer has yet to ask for.
        """
        self.sent = [(work, kept) for work, kept in self.sent if not work.is_completed()]
        header, flat = torch.tensor([version], dtype=torch.int64), _flat(model)
        for tensor, tag in ((header, 1), (flat, 2)):
            self.sent.append((self.group.send([tensor], 1, tag), tensor))  # the tensor lives until sent

    def close(self) -> None:
        """Stop the sampler process. It holds nothing to keep (the batch it is drawing or sending would be
        drawn again on resume), so it is told to stop and killed if it is still sending a moment later."""
        if self.process.is_alive():
            try:
                self._keep = torch.tensor([_STOP], dtype=torch.int64)
                self.group.send([self._keep], 1, 1)
            except RuntimeError:
                pass  # the sampler's side is gone already
            self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def check_async(session: Any, generator: Any) -> None:
    """Raise ConfigError for what ``max_staleness`` >= 1 does not support yet, naming why."""
    reasons = {
        "a generator passed in": generator is not None,
        "DAPO (its dynamic sampling draws rounds of other sizes)": session.algo == "dapo",
        "more than one process (the sampler takes the second; data parallelism with it is not built)": (
            session.info.world_size > 1
        ),
        "LoRA adapters (the sampler holds whole weights)": session.adapted is not None,
        f"engine={session.rollout_cfg.engine!r} (the sampler is our in-process sampler)": (
            session.rollout_cfg.engine not in ("auto", "hf") or not session.sampler_is_policy
        ),
        "an environment built in Python (the sampler rebuilds it from its registered id)": (
            getattr(getattr(session.env, "spec", None), "id", None) is None
        ),
    }
    refused = [reason for reason, applies in reasons.items() if applies]
    if refused:
        raise ConfigError(
            f"max_staleness={session.rollout_cfg.max_staleness} is not allowed with {'; '.join(refused)}; "
            "use max_staleness=0 (the synchronous loop)"
        )
