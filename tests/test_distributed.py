"""`reasongym.distributed`: single-process no-ops, the launch checks, sharding, and a stalled rank named within the
collective timeout (two gloo processes on CPU, tests/stall_worker.py)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from reasongym import distributed
from reasongym.agents.runtime import parallel
from reasongym.errors import ConfigError


def test_a_single_process_needs_no_process_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    info = distributed.init_distributed()
    assert info == distributed.SINGLE_PROCESS and info.is_main and distributed.current() == info
    model = torch.nn.Linear(2, 2)
    assert parallel.wrap_model(model, info) is model and parallel.unwrap_model(model) is model
    assert distributed.all_reduce_mean({"loss": 2.5, "tokens": 3}) == {"loss": 2.5, "tokens": 3.0}
    distributed.barrier()
    distributed.cleanup()


def test_a_launch_without_rendezvous_variables_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(ConfigError, match=r"WORLD_SIZE=2 but \['MASTER_ADDR', 'MASTER_PORT'\] are not set"):
        distributed.init_distributed()


@pytest.mark.parametrize(("rank", "expected"), [(0, [0, 3, 6]), (1, [1, 4]), (2, [2, 5])])
def test_shards_are_disjoint_balanced_and_cover_everything(rank: int, expected: list[int]) -> None:
    info = distributed.DistInfo(rank=rank, world_size=3, local_rank=rank)
    assert distributed.shard(list(range(7)), info) == expected


@pytest.mark.slow  # two processes under torchrun
@pytest.mark.parametrize(
    ("mode", "seen"), [("sleep", "is still at collective 1 (barrier)"), ("stop", "not heard from")]
)
def test_a_stalled_rank_is_named_within_the_collective_timeout(tmp_path: Path, mode: str, seen: str) -> None:
    # Issue 28, item 6: a hung rank blocked the others silently for torch's default 30 minutes.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    process = subprocess.Popen(
        [*command, str(Path(__file__).with_name("stall_worker.py")), mode, str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    lines, seen_lines = [], []
    try:
        for line in process.stderr:  # until rank 0 says what it waited for (the stalled rank never returns)
            seen_lines.append(line)
            if "waited past the collective timeout" in line:
                lines.append(line)
                break
    finally:
        for pid_file in tmp_path.glob("rank*.pid"):  # the workers run in sessions of their own
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), 9)
        os.killpg(process.pid, 9)
        process.communicate()
    assert lines, "".join(seen_lines)[-3000:]
    assert "rank 0: all_gather_objects (collective 2) waited past the collective timeout of 3 s" in lines[0]
    assert f"rank 1 {seen}" in lines[0], lines[0]
    assert float(lines[0].split("after ")[1].split(" s")[0]) < 3 + 5  # not 30 minutes
