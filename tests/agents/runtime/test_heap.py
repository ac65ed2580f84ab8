"""`release_freed_memory` gives the heap pages of freed tensors back to the OS (glibc, Linux)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from reasongym.agents.runtime import heap

# In a fresh process, so that the heap's state is this script's alone. Freeing one 16 MB tensor raises
# glibc's mmap threshold to 16 MB, so the 1 MB tensors that follow come from the heap (as a
# training step's activations do); the last of them, kept, pins the heap's top, so only a trim
# of the free pages inside the heap (not of its top) can hand them back.
SCRIPT = textwrap.dedent(
    """
    import torch
    from reasongym.agents.runtime.heap import release_freed_memory

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    big = torch.ones(4 * 2**20)  # 16 MB, mmapped; freeing it raises the mmap threshold
    del big
    held = [torch.ones(2**18) for _ in range(201)]  # 201 x 1 MB from the heap
    pin = held.pop()  # the last one, kept, sits at the heap's top
    del held
    freed = rss_mb()
    print(release_freed_memory(), round(freed - rss_mb()))
    """
)


@pytest.mark.skipif(heap._malloc_trim() is None, reason="needs glibc's malloc_trim (Linux)")
def test_freed_heap_tensors_leave_the_resident_set() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    released, dropped_mb = out.split()
    assert released == "True"
    assert int(dropped_mb) >= 150, f"only {dropped_mb} MB of the 200 MB freed left the resident set"


def test_without_malloc_trim_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.release_freed_memory() is False


def test_the_trimmer_trims_only_when_the_resident_set_climbs_past_its_high_water_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resident = [1_000 << 20]
    calls: list[int] = []
    monkeypatch.setattr(heap, "resident_bytes", lambda: resident[0])
    monkeypatch.setattr(heap, "release_freed_memory", lambda: calls.append(1) or True)
    trimmer = heap.HeapTrimmer(growth_bytes=100 << 20)
    assert trimmer() is True  # the first boundary trims: nothing is known yet
    resident[0] = 700 << 20  # trimmed; a step's passes then climb to about where they were
    assert trimmer() is False
    resident[0] = 1_090 << 20  # a steady run oscillates under its high-water mark: no walk of the heap
    assert trimmer() is False and len(calls) == 1
    resident[0] = 1_101 << 20  # a heap that keeps growing is cut back
    assert trimmer() is True and trimmer.trims == 2 and len(calls) == 2
    resident[0] = 1_150 << 20
    assert trimmer() is False  # measured from the new high-water mark


def test_the_resident_set_is_read_in_bytes() -> None:
    if heap.resident_bytes() == 0:
        pytest.skip("no /proc/self/statm here")
    assert 10 << 20 < heap.resident_bytes() < 1 << 40
