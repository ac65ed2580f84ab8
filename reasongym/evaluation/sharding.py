"""Evaluation across the processes of a torch.distributed job (``torchrun``, ``accelerate launch``).

The problems still to sample are cut into the batches one process would sample, and the batches are
dealt round-robin to the ranks; each batch keeps the seed it has in one process, so the records do not
depend on the number of processes. Each rank appends its records to its own part file beside the output
(``.<name>.rank<R>.jsonl``); at the end rank 0 merges every record into the output, in problem order, and
removes the parts. A crashed run leaves its part files; a resume reads them with the output whatever the
number of processes, then and now (`part_files`). Which process is which, and how they exchange objects,
is `reasongym.distributed`'s, as for training.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reasongym.distributed import DistInfo, all_gather_objects

_PART = re.compile(r"^\.(?P<name>.+)\.rank(?P<rank>\d+)\.jsonl$")


def batches_of(todo: Sequence[int], batch_size: int, info: DistInfo) -> list[int]:
    """This rank's problems: the batches of ``batch_size`` one process would sample, dealt round-robin."""
    batches = [list(todo[i : i + batch_size]) for i in range(0, len(todo), batch_size)]
    return [index for batch in batches[info.rank :: info.world_size] for index in batch]


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


def gather_records(records: Mapping[int, Any], info: DistInfo) -> dict[int, Any]:
    """Every rank's records by problem index, on every rank."""
    return {
        index: record for part in all_gather_objects(dict(records), info) for index, record in part.items()
    }
