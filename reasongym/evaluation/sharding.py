"""Evaluation across the processes of a torch.distributed job (``torchrun``, ``accelerate launch``).

The problems still to sample are cut into the batches one process would sample, and the batches are
dealt round-robin to the ranks; each batch keeps the seed it has in one process, so the records do not
depend on the number of processes. Each rank appends its records to its own part file beside the output
(``.<name>.rank<R>.jsonl``); at the end rank 0 merges every record into the output, in problem order, and
removes the parts. A crashed run leaves its part files; a resume reads them with the output whatever the
number of processes, then and now (`part_files`).

This module talks to ``torch.distributed`` directly: evaluation sits below the agents, whose
`reasongym.agents.runtime.distributed` the trainers use.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_PART = re.compile(r"^\.(?P<name>.+)\.rank(?P<rank>\d+)\.jsonl$")


@dataclass(frozen=True)
class Shard:
    """Where this process sits among those that evaluate together."""

    rank: int
    """This process's index, 0 .. world_size - 1."""
    world_size: int
    """Processes evaluating together (1: this one alone)."""

    @property
    def is_main(self) -> bool:
        """True on rank 0, which merges and writes the output."""
        return self.rank == 0


def current_shard(enabled: bool) -> Shard:
    """This process's `Shard` when ``enabled`` and a torch.distributed group is initialised, else (0, 1)."""
    import torch.distributed as dist

    if not (enabled and dist.is_available() and dist.is_initialized()):
        return Shard(0, 1)
    return Shard(dist.get_rank(), dist.get_world_size())


def batches_of(todo: Sequence[int], batch_size: int, shard: Shard) -> list[int]:
    """This rank's problems: the batches of ``batch_size`` one process would sample, dealt round-robin."""
    batches = [list(todo[i : i + batch_size]) for i in range(0, len(todo), batch_size)]
    return [index for batch in batches[shard.rank :: shard.world_size] for index in batch]


def part_path(out_path: str | os.PathLike[str], rank: int) -> Path:
    """The part file rank ``rank`` appends to while evaluating into ``out_path``."""
    path = Path(out_path)
    return path.with_name(f".{path.name}.rank{rank}.jsonl")


def part_files(out_path: str | os.PathLike[str]) -> list[Path]:
    """Part files of ``out_path`` left by any number of ranks (a crashed run), in rank order."""
    path = Path(out_path)
    if not path.parent.is_dir():
        return []
    found = [
        (int(match["rank"]), child)
        for child in path.parent.iterdir()
        if (match := _PART.match(child.name)) and match["name"] == path.name
    ]
    return [child for _, child in sorted(found)]


def gather_records(records: Mapping[int, Any], shard: Shard) -> dict[int, Any]:
    """Every rank's records by problem index, on every rank."""
    if shard.world_size == 1:
        return dict(records)
    import torch.distributed as dist

    gathered: list[Any] = [None] * shard.world_size
    dist.all_gather_object(gathered, dict(records))
    return {index: record for part in gathered for index, record in part.items()}


def on_main_then_all(shard: Shard, action: Any) -> None:
    """Run ``action()`` on rank 0 while the other ranks wait for it."""
    if shard.is_main:
        action()
    if shard.world_size > 1:
        import torch.distributed as dist

        dist.barrier()


def barrier(shard: Shard) -> None:
    """Wait for every rank; nothing to wait for in one process."""
    if shard.world_size > 1:
        import torch.distributed as dist

        dist.barrier()
