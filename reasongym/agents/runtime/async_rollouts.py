"""Rollouts sampled ahead of training, by a sampler in its own process, at most ``max_staleness`` versions old.

With ``RolloutConfig.max_staleness`` K >= 1 the trainer no longer samples: a sampler process (torch's
``spawn`` start method, one CPU thread, its own copy of the policy) plays the environment and sends each
rollout batch to the trainer over a two-process gloo group of its own (a TCP store on a free loopback port),
while the trainer updates on the batch before. After each update the trainer sends the new weights (a
version: the number of updates so far) without waiting; with LoRA only the adapters travel, the sampler
holding the same frozen base. Under torchrun each trainer rank has a sampler of its own, drawing that rank's
share of each round (the synchronous loop's shard and seed).

The pacing: the trainer asks for each batch, saying its version V. The sampler draws one batch ahead: after
answering a request made at version V it draws the next batch from version V + 1 - K or newer (waiting for
that version, which the trainer has already sent, when it lacks it). The next request comes at version V or
V + 1 (a step takes one batch, or several rounds for DAPO's dynamic sampling, and then updates once), so a
batch is never more than K versions older than the policy that trains on it; with K >= 2 the sampler never
waits for weights. A batch found too old anyway is drawn again and counted (``async/dropped``).

Each batch keeps the sampler's log-probs: the trainer rescores the batch under its current weights (the PPO
ratio's ``old_logp``) and the off-policy correction of issue 24 (`reasongym.agents.offpolicy`) weighs the
gap between the two, as for a vLLM sampler. The problem order, the cursor and the sampling seed of each batch
are the synchronous loop's (`problem_order`), so a resumed run starts the sampler at the checkpoint's cursor
and version: what was in flight is lost and drawn again.

This module is our sampler's way (`HFGenerator` in a process of its own); an engine with its own weights
(vLLM) is driven ahead by a thread instead (`reasongym.agents.runtime.engine_ahead`), with the same pacing.

What differs from the synchronous run: which version drew each batch depends on timing (how far the sampler
got while the trainer worked), so two runs with the same seed agree exactly only when the interleaving is the
same. The problems, their order and the sampling seeds are the same in every run.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import pickle
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import torch
import torch.distributed as dist

from reasongym import distributed
from reasongym.errors import ConfigError

_STOP = -1
"""The version number (or request) that tells the sampler to stop."""
_TIMEOUT = datetime.timedelta(minutes=30)
_WEIGHTS_HEADER, _WEIGHTS, _SIZE, _BATCH, _REQUEST = 1, 2, 3, 4, 5
"""The pair's message tags."""


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
    lora: Any
    """The run's `LoRAConfig` when it trains adapters (the sampler adds the same ones), else None."""
    weights: dict[str, torch.Tensor]
    """The policy's weights at ``version`` (with LoRA: the base's and the adapters')."""
    pushed: tuple[str, ...]
    """The names of the parameters sent after each update: the trained ones."""
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
    place: distributed.DistInfo
    """The trainer rank this sampler serves: it draws that rank's share of each round."""
    device: str
    """Where the trainer's policy is (a GPU the two share, or the CPU): the sampler's copy goes there too."""


def stamped(batch: Any, version: int) -> Any:
    """``batch`` with every row marked as drawn by policy version ``version``."""
    return dataclasses.replace(batch, policy_version=torch.full((len(batch),), version, dtype=torch.int64))


def _pair(port: int, rank: int) -> Any:
    """The trainer's (rank 0) and the sampler's (rank 1) gloo group of two."""
    store = dist.TCPStore("127.0.0.1", port, 2, is_master=rank == 0, timeout=_TIMEOUT)
    return dist.ProcessGroupGloo(store, rank, 2, _TIMEOUT)


def _pushed(model: torch.nn.Module, names: tuple[str, ...]) -> list[torch.Tensor]:
    by_name = dict(model.named_parameters())
    return [by_name[name] for name in names]


def _flat(params: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat([p.detach().float().reshape(-1).cpu() for p in params])


def _load_flat(params: list[torch.Tensor], flat: torch.Tensor) -> None:
    offset = 0
    with torch.no_grad():
        for p in params:
            p.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()


def _send_object(group: Any, value: Any, to: int) -> None:
    data = torch.frombuffer(bytearray(pickle.dumps(value)), dtype=torch.uint8)
    group.send([torch.tensor([data.numel()], dtype=torch.int64)], to, _SIZE).wait()
    group.send([data], to, _BATCH).wait()


def _receive_int(group: Any, source: int, tag: int) -> int:
    value = torch.zeros(1, dtype=torch.int64)
    group.recv([value], source, tag).wait()
    return int(value)


# ---------------------------------------------------------------------------------------------- the sampler


def sampler_policy(job: SamplerJob) -> tuple[torch.nn.Module, Any]:
    """The sampler's copy of the policy at ``job.version``, in eval mode, and its ``PeftModel`` with LoRA (the
    trainer's adapters on the same frozen base: the pushed names are the same parameters), else None."""
    from reasongym.policy.lora import add_adapters

    model, adapted = job.model_class(job.config), None
    if job.lora is not None:
        lora = job.lora
        adapted = add_adapters(
            model, rank=lora.rank, alpha=lora.alpha, dropout=lora.dropout, target_modules=lora.target_modules
        )
    model.load_state_dict(job.weights)
    return model.to(job.device).eval(), adapted


def sampler_main(job: SamplerJob, max_staleness: int) -> None:
    """The sampler process: answer each of the trainer's requests with a batch drawn ahead, from weights at
    most ``max_staleness`` versions behind the request's, until the trainer says stop."""
    import reasongym
    from reasongym.generation import HFGenerator
    from reasongym.policy.lora import adapters_merged
    from reasongym.rollouts.batch import collect_rollouts

    torch.set_num_threads(1)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()
    group = _pair(job.port, rank=1)
    model, adapted = sampler_policy(job)
    generator = HFGenerator(model, job.tokenizer, batch_size=job.rollout.generation_batch_size)
    env = reasongym.make(job.env_spec.id, **job.env_spec.kwargs)
    source = getattr(env.unwrapped, "source", None)
    size = source.size(job.split, job.difficulty) if source is not None else None
    weights = Weights(group, _pushed(model, job.pushed), job.version)

    def draw(cursor: int) -> Any:
        indices = problem_order(job.seed, cursor, job.rollout.num_prompts, size)
        seed = distributed.rank_seed(job.seed * 1_000_003 + cursor, job.place)  # the synchronous loop's
        with torch.no_grad(), adapters_merged(adapted):
            return collect_rollouts(
                env,
                generator,
                job.tokenizer,
                distributed.shard(indices, job.place),
                params=job.rollout.sampling(seed),
                split=job.split,
                difficulty=job.difficulty,
            )

    cursor, needed, dropped = job.cursor, job.version, 0
    while True:
        waited = weights.take(at_least=needed)
        if weights.stopped:
            return
        batch, drawn_by = draw(cursor), weights.version
        requested = _receive_int(group, 0, _REQUEST)  # the trainer's version when it asked
        while requested != _STOP and not weights.stopped and requested - drawn_by > max_staleness:
            dropped += 1  # a step that took no batch: not the trainers of this library
            waited += weights.take(at_least=requested - max_staleness)
            batch, drawn_by = draw(cursor), weights.version
        if requested == _STOP or weights.stopped:
            return
        message = {"batch": batch, "version": drawn_by, "waited_s": waited, "dropped": dropped}
        _send_object(group, message, to=0)
        cursor, needed = cursor + job.rollout.num_prompts, requested + 1 - max_staleness


def _exit_with(parent: int) -> None:
    """End this process once its trainer is gone (killed: nobody will take its batches or stop it)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


class Weights:
    """The sampler's side of the weights channel: one pending receive of the next version's header."""

    def __init__(self, group: Any, params: list[torch.Tensor], version: int) -> None:
        self.group, self.params, self.version, self.stopped = group, params, version, False
        self.size = sum(p.numel() for p in params)
        self._post()

    def _post(self) -> None:
        self.header = torch.zeros(1, dtype=torch.int64)
        self.pending = self.group.recv([self.header], 0, _WEIGHTS_HEADER)

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
            self.group.recv([flat], 0, _WEIGHTS).wait()
            _load_flat(self.params, flat)
            self.version = int(self.header)
            self._post()
        return time.perf_counter() - started


# ---------------------------------------------------------------------------------------------- the trainer


class StepAccounts:
    """What a sampler ahead (`AsyncRollouts`, `EngineAhead`) counts for the step's ``async/`` metrics."""

    def __init__(self) -> None:
        self.staleness: list[int] = []
        self.dropped = 0
        self.waited_s = self.sampler_waited_s = 0.0

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


class AsyncRollouts(StepAccounts):
    """The trainer's side: starts the sampler, asks it for batches, sends it each new version."""

    def __init__(self, job: SamplerJob, max_staleness: int, params: list[torch.Tensor]) -> None:
        context = torch.multiprocessing.get_context("spawn")
        self.process = context.Process(target=sampler_main, args=(job, max_staleness), daemon=True)
        self.process.start()
        self.group = _pair(job.port, rank=0)
        self.max_staleness, self.params = max_staleness, params
        self.sent: list[tuple[Any, torch.Tensor]] = []
        super().__init__()

    @classmethod
    def start(cls, session: Any) -> AsyncRollouts:
        """The sampler of a session's run: its policy, environment, rollout settings, cursor, step and rank."""
        model = session.model
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        pushed = tuple(name for name, p in model.named_parameters() if p.requires_grad)
        job = SamplerJob(
            port,
            type(model),
            model.config,
            session.run_cfg.lora if session.adapted is not None else None,
            {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
            pushed,
            session.tokenizer,
            session.env.spec,
            session.run_cfg.difficulty,
            session.train_split,
            session.rollout_cfg,
            session.run_cfg.seed,
            session.cursor,
            session.start_step,
            session.info,
            str(next(model.parameters()).device),
        )
        return cls(job, session.rollout_cfg.max_staleness, _pushed(model, pushed))

    def next(self, step: int) -> tuple[Any, float]:
        """The batch that step ``step`` trains on (drawn at most ``max_staleness`` versions before
        ``step - 1``), and the seconds the trainer waited for it."""
        started = time.perf_counter()
        request = torch.tensor([step - 1], dtype=torch.int64)
        self.group.send([request], 1, _REQUEST).wait()
        data = torch.empty(_receive_int(self.group, 1, _SIZE), dtype=torch.uint8)
        self.group.recv([data], 1, _BATCH).wait()
        message = pickle.loads(data.numpy().tobytes())
        waited = time.perf_counter() - started
        self.waited_s += waited
        self.sampler_waited_s += message["waited_s"]
        self.dropped = message["dropped"]
        self.staleness.append(step - 1 - message["version"])
        return stamped(message["batch"], message["version"]), waited

    def push(self, version: int) -> None:
        """Send version ``version`` of the trained weights without waiting for the sampler to take it.

        Never waits for the sampler to take an earlier version either: a sampler far enough ahead takes
        versions only when it needs them.
        """
        self.sent = [(work, kept) for work, kept in self.sent if not work.is_completed()]
        header = torch.tensor([version], dtype=torch.int64)
        for tensor, tag in ((header, _WEIGHTS_HEADER), (_flat(self.params), _WEIGHTS)):
            self.sent.append((self.group.send([tensor], 1, tag), tensor))  # the tensor lives until sent

    def close(self) -> None:
        """Stop the sampler process. It holds nothing to keep (the batch it is drawing would be drawn again
        on resume), so it is told to stop, whether it waits for weights or for a request, and killed if it
        is still busy a moment later."""
        if self.process.is_alive():
            self._keep = [torch.tensor([_STOP], dtype=torch.int64) for _ in range(2)]
            try:
                self.group.send([self._keep[0]], 1, _WEIGHTS_HEADER)
                self.group.send([self._keep[1]], 1, _REQUEST)
            except RuntimeError:
                pass  # the sampler's side is gone already
            self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def check_async(session: Any, generator: Any) -> None:
    """Raise ConfigError for what ``max_staleness`` >= 1 does not support yet, naming why."""
    in_a_process = not session.engine.holds_weights  # our sampler: a process that rebuilds the environment
    wrappers = python_wrappers(session.env)
    reasons = {
        "a generator passed in": generator is not None,
        "parallelism='fsdp' (the sampler takes whole weights; each rank holds a shard)": (
            session.info.world_size > 1 and session.run_cfg.parallelism == "fsdp"
        ),
        "a sampler that is neither ours nor a vLLM engine": (
            not session.sampler_is_policy and not session.engine.holds_weights
        ),
        "an environment built in Python (the sampler process rebuilds it from its registered id)": (
            in_a_process and getattr(getattr(session.env, "spec", None), "id", None) is None
        ),
        f"an environment wrapped in Python ({', '.join(wrappers)}; the sampler process rebuilds it from its "
        "registered id, without them)": in_a_process and bool(wrappers),
    }
    refused = [reason for reason, applies in reasons.items() if applies]
    if refused:
        raise ConfigError(
            f"max_staleness={session.rollout_cfg.max_staleness} is not allowed with {'; '.join(refused)}; "
            "use max_staleness=0 (the synchronous loop)"
        )


def python_wrappers(env: Any) -> list[str]:
    """The names of ``env``'s wrappers that are not gymnasium's own (what ``gymnasium.make`` adds)."""
    names = []
    while isinstance(env, gymnasium.Wrapper):
        if not type(env).__module__.startswith("gymnasium."):
            names.append(type(env).__name__)
        env = env.env
    return names
