"""The machine around a measurement: wall seconds, CPU-seconds (this process's, and its ended children's, a
sampler process's), and the load average at the start and the end, so that every figure says what else ran."""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass, field
from typing import Any


def children_cpu_seconds() -> float:
    """CPU-seconds of this process's ended children (a sampler process, once its run has closed it)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Snapshot:
    """Where the clocks stood at the start of a measurement."""

    wall: float = field(default_factory=time.perf_counter)
    cpu: float = field(default_factory=time.process_time)
    children_cpu: float = field(default_factory=children_cpu_seconds)
    load: tuple[float, float, float] = field(default_factory=os.getloadavg)

    def since(self) -> dict[str, Any]:
        """What passed since: wall seconds, CPU-seconds of this process and of its ended children, and the
        load averages (1, 5, 15 minutes) at the start and now."""
        return {
            "wall_s": round(time.perf_counter() - self.wall, 1),
            "cpu_s": round(time.process_time() - self.cpu, 1),
            "children_cpu_s": round(children_cpu_seconds() - self.children_cpu, 1),
            "load_start": [round(x, 2) for x in self.load],
            "load_end": [round(x, 2) for x in os.getloadavg()],
        }
