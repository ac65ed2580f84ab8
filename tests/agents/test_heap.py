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
