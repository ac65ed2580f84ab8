"""Rollouts drawn ahead by a sampler process (max_staleness K >= 1): every batch at most K versions old, the
synchronous loop untouched at K = 0, the unsupported combinations refused, and a killed run resumed."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.dapo import train_dapo
from reasongym.agents.grpo import train_grpo
from reasongym.agents.runtime.async_rollouts import problem_order
from reasongym.errors import ConfigError
from reasongym.policy.checkpoints import latest_checkpoint
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"
WORKER = Path(__file__).with_name("async_worker.py")
SMALL = {"num_prompts": 4, "group_size": 4, "max_new_tokens": 16, "eval_every": 0, "progress_bar": False}


def _grpo(tiny, **fields: object) -> tuple[torch.nn.Module, list[dict[str, float]]]:
    configs = preset_configs("tiny", "grpo", **{**SMALL, **fields})
    model, tokenizer = tiny()
    result = train_grpo(
        configs["grpo"], model, tokenizer, ENV, run=configs["run"], rollout=configs["rollout"]
    )
    return model, list(result.history)


def test_with_k_1_every_batch_is_at_most_one_version_old_and_the_sampler_ends(tiny) -> None:
    _, history = _grpo(tiny, max_steps=4, max_staleness=1)
    staleness = [row["async/staleness"] for row in history]
    assert staleness[0] == 0 and max(staleness) == 1 and all(s in (0, 1) for s in staleness), staleness
    assert all(row["async/dropped"] == 0 for row in history)
    assert all(row["perf/tokens_per_s"] > 0 and row["train/tokens"] > 0 for row in history)
    # the stale batches' sampler log-probs differ from the trainer's: the off-policy correction measured it
    stale = [row for row in history if row["async/staleness"] == 1]
    assert all(row["sampler/logp_diff_max"] > 0 for row in stale)
    assert all(row["sampler/logp_diff_max"] < 1e-4 for row in history if row["async/staleness"] == 0)
    time.sleep(0.5)
    assert multiprocessing.active_children() == []  # the sampler process is gone


def test_k_0_is_the_synchronous_loop(tiny) -> None:
    explicit, first = _grpo(tiny, max_steps=2, max_staleness=0)
    default, second = _grpo(tiny, max_steps=2)
    for p, q in zip(explicit.parameters(), default.parameters(), strict=True):
        assert torch.equal(p, q)
    assert "async/staleness" not in first[0] and first[0]["loss/policy"] == second[0]["loss/policy"]


def test_the_sampler_draws_the_synchronous_loops_problems() -> None:
    # a finite split: each pass is a seeded permutation; a generated source: seed-derived indices
    order = problem_order(3, 0, 10, 4)
    assert sorted(order[:4]) == [0, 1, 2, 3] and sorted(order[4:8]) == [0, 1, 2, 3]
    assert problem_order(3, 4, 6, 4) == order[4:]
    assert problem_order(3, 5, 2, None) == [3 * 1_000_003 + 5, 3 * 1_000_003 + 6]


def test_what_k_1_does_not_support_is_refused_with_the_reason(tiny) -> None:
    configs = preset_configs("tiny", "dapo", **{**SMALL, "max_staleness": 1, "max_steps": 1})
    model, tokenizer = tiny()
    with pytest.raises(ConfigError, match=r"max_staleness=1 is not allowed with DAPO .*use max_staleness=0"):
        train_dapo(configs["dapo"], model, tokenizer, ENV, run=configs["run"], rollout=configs["rollout"])
    with pytest.raises(ConfigError, match=r"max_staleness=-1 is not allowed"):
        preset_configs("tiny", "grpo", max_staleness=-1)


@pytest.mark.slow  # three runs in subprocesses, each with its sampler process
def test_a_killed_run_resumes_and_its_sampler_does_not_outlive_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    killed = subprocess.run(
        [sys.executable, str(WORKER), str(run), "--kill-at-step", "3"], capture_output=True, text=True
    )
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert latest_checkpoint(run).name == "step-000002"
    samplers = [int(pid) for pid in (run / "sampler.pid").read_text().split()]
    assert samplers  # the trainer had its sampler process
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in samplers) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(_alive(pid) for pid in samplers)  # it ended with its trainer
    resumed = subprocess.run([sys.executable, str(WORKER), str(run)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    logged = read_metrics(run)
    assert [row["step"] for row in logged if "async/staleness" in row] == [1, 2, 3, 4, 5]
    assert all(row["async/staleness"] <= 1 for row in logged if "async/staleness" in row)
    assert latest_checkpoint(run).name == "step-000005"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped) has no command line left to run
        return Path(f"/proc/{pid}/cmdline").read_bytes() != b""
    except OSError:
        return False
