"""Which process is which, and what runs on rank 0: the one torch.distributed module, for training and
evaluation alike, and a no-op when run as one process.

Launch with ``torchrun --nproc_per_node=N script.py`` or ``accelerate launch script.py``: both set
``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and ``MASTER_ADDR``/``MASTER_PORT``, which is all
``init_distributed`` reads. `DistInfo` is a process's place in the job. Only rank 0 (``DistInfo.is_main``)
writes: a run folder's metrics, samples and checkpoints, an evaluation's records file; `on_main` runs a
step there and hands its result (or its exception) to every rank, `barrier` waits for every rank, and the
``all_gather_*`` / ``all_reduce_*`` functions exchange values. What a trainer does to its model across
processes (DDP, FSDP) is `reasongym.agents.runtime.parallel`'s.

Shards are round-robin (`shard`: item ``i`` goes to rank ``i % world_size``) and `unshard` is its inverse,
so whatever the ranks gather comes back in the order one process would have produced it. The RL loops
shard whole groups (`shard_groups`, `all_gather_groups`): a prompt's G samples always live on one rank.

A rank that hangs (a deadlock, a frozen process, a stuck device) would hold the others at their next
collective for torch's default of 30 minutes, silently. `init_distributed` takes a collective timeout
(`DEFAULT_COLLECTIVE_TIMEOUT_S` unless given; ``reasongym train --collective-timeout``), and every rank
keeps a heartbeat in the process group's store: the collective it last entered, refreshed by a thread a
few times per timeout. A collective of this module (and any code run under `collective`, such as a DDP backward pass) that
times out raises `CollectiveTimeout` naming the ranks that are behind (still at an earlier collective) or
silent (no heartbeat: stopped or frozen).
"""

from __future__ import annotations

import datetime
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch
import torch.distributed as dist

from reasongym.errors import CollectiveTimeout, ConfigError

T = TypeVar("T")

DEFAULT_COLLECTIVE_TIMEOUT_S = 600.0
"""How long a process waits at a collective for the others by default: ten minutes, past any step, checkpoint
or evaluation the other ranks wait through, far short of torch's 30."""


@dataclass(frozen=True)
class DistInfo:
    """Where this process sits in the job."""

    rank: int
    """Global index of this process, 0 .. world_size - 1."""
    world_size: int
    """Number of processes in the job (1 when not distributed)."""
    local_rank: int
    """Index of this process on its machine; picks its GPU."""

    @property
    def is_main(self) -> bool:
        """True on rank 0, the one process that writes metrics, samples and checkpoints."""
        return self.rank == 0

    @property
    def device(self) -> torch.device:
        """This process's GPU when CUDA is available, else the CPU."""
        if torch.cuda.is_available():
            return torch.device("cuda", self.local_rank)
        return torch.device("cpu")


SINGLE_PROCESS = DistInfo(rank=0, world_size=1, local_rank=0)
"""The ``DistInfo`` of a plain, single-process run; passed explicitly (this very object), it means "this process
alone" even inside a process group, e.g. an evaluation that one rank runs by itself."""


def init_distributed(backend: str | None = None, *, timeout_s: float | None = None) -> DistInfo:
    """Join the process group described by the launcher's environment, or do nothing when alone.

    Args:
        backend: ``"nccl"`` or ``"gloo"``; ``None`` picks nccl when CUDA is available, else gloo.
        timeout_s: Seconds a collective waits for the other ranks before it fails, naming the stalled ones;
            None: `DEFAULT_COLLECTIVE_TIMEOUT_S`.

    Returns:
        This process's ``DistInfo`` (``SINGLE_PROCESS`` when ``WORLD_SIZE`` is unset or 1).

    Raises:
        ConfigError: ``WORLD_SIZE`` > 1 but ``RANK`` or ``MASTER_ADDR`` is missing, an unknown backend, or a
            timeout that is not a positive number of seconds.
    """
    timeout = DEFAULT_COLLECTIVE_TIMEOUT_S if timeout_s is None else timeout_s
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < 1e9:
        raise ConfigError(f"timeout_s={timeout_s!r} is not allowed; expected seconds > 0 (e.g. 600)")
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return SINGLE_PROCESS
    missing = [name for name in ("RANK", "MASTER_ADDR", "MASTER_PORT") if name not in os.environ]
    if missing:
        raise ConfigError(
            f"WORLD_SIZE={world_size} but {missing} are not set; launch with `torchrun --nproc_per_node=N` "
            "or `accelerate launch`, which set them"
        )
    chosen = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    if chosen not in ("nccl", "gloo"):
        raise ConfigError(f"backend={backend!r} is not supported; allowed: 'nccl', 'gloo', or None (auto)")
    info = DistInfo(
        rank=int(os.environ["RANK"]),
        world_size=world_size,
        local_rank=int(os.environ.get("LOCAL_RANK", "0")),
    )
    if chosen == "nccl":
        torch.cuda.set_device(info.local_rank)
    if not dist.is_initialized():
        dist.init_process_group(
            backend=chosen, rank=info.rank, world_size=world_size, timeout=datetime.timedelta(seconds=timeout)
        )
        _Heartbeat.start(info, timeout)
    return info


def is_alone(info: DistInfo) -> bool:
    """Nobody to talk to: `SINGLE_PROCESS` itself, or one process without a process group (a group of one,
    e.g. a GPU check of the NCCL path, still runs its collectives)."""
    return info is SINGLE_PROCESS or (
        info.world_size == 1 and not (dist.is_available() and dist.is_initialized())
    )


def current() -> DistInfo:
    """The ``DistInfo`` of an already initialised process group, or ``SINGLE_PROCESS``."""
    if not (dist.is_available() and dist.is_initialized()):
        return SINGLE_PROCESS
    return DistInfo(
        rank=dist.get_rank(),
        world_size=dist.get_world_size(),
        local_rank=int(os.environ.get("LOCAL_RANK", "0")),
    )


# ---------------------------------------------------------------------------------------------- data


def shard(items: Sequence[T], info: DistInfo | None = None) -> list[T]:
    """This rank's share of ``items``: every ``world_size``-th item starting at ``rank``.

    Shares differ in size by at most one; their union is ``items``.
    """
    info = info or current()
    return list(items[info.rank :: info.world_size])


def unshard(parts: Sequence[Sequence[T]]) -> list[T]:
    """The inverse of `shard`: ``parts[r]`` is rank ``r``'s share; returns the items in their original order.

    Raises:
        ConfigError: Shares whose sizes `shard` cannot have produced.
    """
    sizes = [len(part) for part in parts]
    if any(size not in (sizes[0], sizes[0] - 1) for size in sizes) or sizes != sorted(sizes, reverse=True):
        raise ConfigError(
            f"shares of sizes {sizes} do not come from shard(); expected sizes n, .., n, n-1, .."
        )
    return [parts[i % len(parts)][i // len(parts)] for i in range(sum(sizes))]


def shard_groups(x: torch.Tensor, group_size: int, info: DistInfo | None = None) -> torch.Tensor:
    """This rank's groups of a [B] tensor in group layout (B = N * G): groups ``rank, rank + W, ..``."""
    info = info or current()
    return x.view(-1, group_size)[info.rank :: info.world_size].reshape(-1)  # [B_rank]


def all_gather_groups(x: torch.Tensor, group_size: int, info: DistInfo | None = None) -> torch.Tensor:
    """Every rank's `shard_groups` share of a [B] tensor, put back in group order: [B_all] on ``x``'s device."""
    info = info or current()
    if is_alone(info):
        return x
    parts = all_gather_objects(x.detach().cpu().view(-1, group_size), info)
    return torch.cat(unshard(parts)).reshape(-1).to(x.device)  # [B_all]


def all_gather_shards(items: Sequence[T], info: DistInfo | None = None) -> list[T]:
    """Every rank's `shard` of a list, put back in the original order (the same list on every rank)."""
    info = info or current()
    if is_alone(info):
        return list(items)
    return unshard(all_gather_objects(list(items), info))


def all_gather_ordered(items: Sequence[T], key: Callable[[T], Any], info: DistInfo | None = None) -> list[T]:
    """Every rank's ``items``, sorted by ``key`` (stably: items of equal key keep their rank's order)."""
    info = info or current()
    if is_alone(info):
        return sorted(items, key=key)
    return sorted((item for part in all_gather_objects(list(items), info) for item in part), key=key)


def all_gather_objects(value: T, info: DistInfo | None = None) -> list[T]:
    """``[value of rank 0, value of rank 1, ..]`` on every rank (picklable values; tensors on the CPU)."""
    info = info or current()
    if is_alone(info):
        return [value]
    gathered: list[Any] = [None] * info.world_size
    with collective("all_gather_objects", info):
        dist.all_gather_object(gathered, value)
    return gathered


def on_main(fn: Callable[[], T], info: DistInfo | None = None) -> T:
    """Run ``fn`` on rank 0 only and return its (picklable) result on every rank.

    For what exactly one process may do and the others must learn: create a run folder, pick the
    checkpoint to resume from. An exception on rank 0 is raised on every rank, so that none waits forever.
    """
    info = info or current()
    if is_alone(info):
        return fn()
    box: list[Any] = [None]
    if info.is_main:
        try:
            box[0] = ("ok", fn())
        except Exception as error:  # every rank must raise, not only the one that failed
            box[0] = ("error", error)
    with collective("on_main", info):
        dist.broadcast_object_list(box, src=0)
    status, value = box[0]
    if status == "error":
        raise value
    return value


def rank_seed(seed: int, info: DistInfo | None = None) -> int:
    """The sampling seed of this rank: ``seed`` itself on rank 0 (so one process samples as before), and a
    different stream derived from ``(seed, rank)`` on every other rank."""
    info = info or current()
    if info.rank == 0:
        return seed
    words = np.random.SeedSequence([seed % (1 << 64), info.rank]).generate_state(2, dtype=np.uint32)
    return int(words[0]) << 31 | int(words[1]) >> 1  # a 62-bit seed


def all_reduce_mean(values: Mapping[str, float], info: DistInfo | None = None) -> dict[str, float]:
    """Average each value over all ranks (every rank must pass the same keys in the same order)."""
    info = info or current()
    if is_alone(info):
        return {key: float(value) for key, value in values.items()}
    summed = all_reduce_sum(values, info)
    return {key: value / info.world_size for key, value in summed.items()}


def all_reduce_sum(values: Mapping[str, float], info: DistInfo | None = None) -> dict[str, float]:
    """Sum each value over all ranks (every rank must pass the same keys in the same order)."""
    return _all_reduce(values, "SUM", info)


def all_reduce_max(values: Mapping[str, float], info: DistInfo | None = None) -> dict[str, float]:
    """Maximum of each value over all ranks; used so that every rank takes the same skip decision."""
    return _all_reduce(values, "MAX", info)


def _all_reduce(values: Mapping[str, float], op: str, info: DistInfo | None) -> dict[str, float]:
    info = info or current()
    if is_alone(info):
        return {key: float(value) for key, value in values.items()}
    tensor = torch.tensor([float(v) for v in values.values()], dtype=torch.float64, device=info.device)
    with collective(f"all_reduce_{op.lower()}", info):
        dist.all_reduce(tensor, op=getattr(dist.ReduceOp, op))
    return dict(zip(values, tensor.tolist(), strict=True))


def barrier(info: DistInfo | None = None) -> None:
    """Wait for every rank of ``info``'s job (default: the current one); a no-op in a single process."""
    info = info or current()
    if not is_alone(info):
        with collective("barrier", info):
            dist.barrier()


def cleanup() -> None:
    """Leave the process group; a no-op in a single process."""
    _Heartbeat.stop()
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


# ---------------------------------------------------------------------------------------------- stalls


@contextmanager
def collective(name: str, info: DistInfo | None = None) -> Iterator[None]:
    """Around code in which the ranks wait for each other (this module's exchanges; a DDP backward pass):
    announce ``name`` in this rank's heartbeat, and turn a timeout inside into `CollectiveTimeout` naming the
    stalled ranks. A no-op without a heartbeat (one process)."""
    beat = _Heartbeat.running
    if beat is not None:
        beat.enter(name)
    try:
        yield
    except RuntimeError as error:
        if beat is None or isinstance(error, CollectiveTimeout) or "timed out" not in str(error).lower():
            raise
        raise CollectiveTimeout(beat.stall_report(name, info or current())) from error


class _Heartbeat:
    """This rank's heartbeat in the process group's store: the collective it last entered, and when it was
    last alive (a daemon thread refreshes it a few times per timeout)."""

    running: _Heartbeat | None = None
    """The heartbeat of this process's group (one group per process, as torch's default one)."""

    def __init__(self, info: DistInfo, timeout: float, store: Any) -> None:
        self.info, self.timeout, self.store = info, timeout, store
        self.interval = min(10.0, timeout / 4)
        self.count, self.name, self.stopped = 0, "init", threading.Event()

    @classmethod
    def start(cls, info: DistInfo, timeout: float) -> None:
        """Start beating (without a store to write to, as in a torch without one, nothing happens)."""
        store = getattr(dist.distributed_c10d, "_get_default_store", lambda: None)()
        if store is None:
            return
        cls.stop()
        cls.running = beat = cls(info, timeout, store)
        beat.publish()
        threading.Thread(target=beat.loop, name="reasongym-heartbeat", daemon=True).start()

    @classmethod
    def stop(cls) -> None:
        """Stop this process's heartbeat thread, if any."""
        if cls.running is not None:
            cls.running.stopped.set()
            cls.running = None

    def enter(self, name: str) -> None:
        self.count, self.name = self.count + 1, name
        self.publish()

    def publish(self) -> None:
        record = {"time": time.time(), "count": self.count, "name": self.name}
        try:
            self.store.set(f"reasongym/heartbeat/{self.info.rank}", json.dumps(record))
        except RuntimeError:  # the store is gone (the group is shutting down): nothing to tell
            pass

    def loop(self) -> None:
        while not self.stopped.wait(self.interval):
            self.publish()

    def stall_report(self, name: str, info: DistInfo) -> str:
        """``rank R: NAME (collective K) waited past ...`` naming the ranks behind or silent."""
        now, named = time.time(), []
        for rank in range(info.world_size):
            if rank == info.rank:
                continue
            try:
                beat = json.loads(self.store.get(f"reasongym/heartbeat/{rank}"))
            except (RuntimeError, ValueError):
                named.append(f"rank {rank} (no heartbeat at all)")
                continue
            age, where = now - beat["time"], f"collective {beat['count']} ({beat['name']})"
            if age > 2 * self.interval + 1:
                named.append(
                    f"rank {rank} not heard from for {age:.0f} s (stopped or frozen?), last at {where}"
                )
            elif beat["count"] < self.count:
                named.append(
                    f"rank {rank} is still at {where}, alive {age:.0f} s ago (stuck in its own work?)"
                )
        stalled = "; ".join(named) or "another rank (every heartbeat is recent and at this collective)"
        return (
            f"rank {info.rank}: {name} (collective {self.count}) waited past the collective timeout of "
            f"{self.timeout:g} s (--collective-timeout) for {stalled}"
        )
