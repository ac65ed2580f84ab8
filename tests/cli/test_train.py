"""``reasongym train``: a run that cannot learn says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.running import cli

ENV = "reasongym/Arithmetic-v0"


TINY_RL = ["--difficulty", "1", "--num-prompts", "2", "--group-size", "2", "--max-new-tokens", "8"]


@pytest.mark.slow  # trains 10 steps in a subprocess
def test_a_run_that_cannot_learn_says_why(tmp_path: Path) -> None:
    # a random-init model never earns a reward: every group is all wrong, every advantage 0
    args = [
        "train",
        "grpo",
        "--model",
        "tiny",
        "--env",
        ENV,
        "--max-steps",
        "10",
        *TINY_RL,
        "--no-progress-bar",
    ]
    done = cli(*args, "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (
        "grpo: on average 100% of the groups had the same reward for every sample over the last 10 steps"
        in (done.stderr)
    )
    assert "all wrong: 100%" in done.stderr and "The problems are too hard for the model" in done.stderr
    summary, last = done.stdout.splitlines()[-2:]
    assert summary.startswith("grpo: 10 of 10 steps; ") and "reward 0 -> 0" in summary
    assert json.loads(last)["steps"] == 10
