"""Issue 51, item 9: the sampler process of a run with ``max_staleness`` >= 1 dies (SIGKILL, or an exit of its
own). The trainer says which process died, its pid and how, that the run's checkpoints are intact and how to
resume, instead of gloo's ``pair.cc:553 Connection closed by peer``."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

import reasongym
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.grpo import train_grpo
from reasongym.policy.checkpoints import latest_checkpoint, verify_checkpoint


def _train_killing_the_sampler(
    tiny: Any, run_dir: Path | None, at_step: int
) -> tuple[BaseException, list[int]]:
    configs = preset_configs(
        "tiny",
        "grpo",
        max_steps=5,
        num_prompts=2,
        group_size=2,
        max_new_tokens=8,
        save_every=2,
        eval_every=1,
        eval_problems=1,
        progress_bar=False,
        max_staleness=1,
    )
    model, tokenizer = tiny()
    evaluations: list[int] = []
    killed: list[int] = []

    def kill_the_sampler(_: Any) -> dict[str, float]:
        evaluations.append(1)  # the first evaluation is step 0's
        if len(evaluations) - 1 == at_step:
            for child in multiprocessing.active_children():
                killed.append(child.pid)  # type: ignore[arg-type]
                os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        return {}

    with pytest.raises(RuntimeError) as caught:
        train_grpo(
            configs["grpo"],
            model,
            tokenizer,
            reasongym.make("reasongym/Arithmetic-v0"),
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=run_dir,
            eval_fn=kill_the_sampler,
        )
    return caught.value, killed


def test_a_killed_sampler_is_named_with_its_pid_and_signal_and_the_resume_command(
    tiny: Any, tmp_path: Path
) -> None:
    error, killed = _train_killing_the_sampler(tiny, tmp_path, at_step=2)
    message = str(error)
    assert len(killed) == 1
    assert "\n" not in message and "pair.cc" not in message, message
    assert f"the sampler process (pid {killed[0]}) was killed by signal 9 (SIGKILL)" in message, message
    checkpoint = latest_checkpoint(tmp_path)
    assert checkpoint is not None and checkpoint.name == "step-000002"
    verify_checkpoint(checkpoint)  # the message's claim, checked
    assert re.search(r"the run's checkpoints are intact \(the latest, step-000002, verified\)", message), (
        message
    )
    assert f"resume with `reasongym train grpo --run-dir {tmp_path}`" in message, message


def test_without_a_run_folder_it_says_nothing_was_saved(tiny: Any) -> None:
    error, killed = _train_killing_the_sampler(tiny, None, at_step=1)
    assert f"the sampler process (pid {killed[0]}) was killed by signal 9 (SIGKILL)" in str(error)
    assert "no run folder, so nothing was saved" in str(error)


def test_an_exit_code_and_a_signal_are_told_apart() -> None:
    from reasongym.runs.helper_death import describe_exit

    context = multiprocessing.get_context("spawn")
    exits = context.Process(target=os._exit, args=(3,))
    exits.start()
    exits.join(timeout=60)
    assert describe_exit(exits) == f"(pid {exits.pid}) exited with code 3"
    sleeps = context.Process(target=signal.pause)
    sleeps.start()
    os.kill(sleeps.pid, signal.SIGTERM)  # type: ignore[arg-type]
    sleeps.join(timeout=60)
    assert describe_exit(sleeps) == f"(pid {sleeps.pid}) was killed by signal 15 (SIGTERM)"


def test_before_the_first_checkpoint_it_says_a_resume_starts_over(tiny: Any, tmp_path: Path) -> None:
    """Probe: killed in step 2, before the first checkpoint (every 2 steps)."""
    error, killed = _train_killing_the_sampler(tiny, tmp_path, at_step=1)
    assert f"the sampler process (pid {killed[0]}) was killed by signal 9 (SIGKILL)" in str(error)
    assert f"the run folder {tmp_path} holds no checkpoint yet" in str(
        error
    ) and "starts it from step 0" in str(error)
