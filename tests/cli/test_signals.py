"""Ctrl-C and SIGTERM on the command line: an interrupt saves a checkpoint that resumes, and a second SIGTERM
exits 130 with its message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.running import cli, cli_env

ENV = "reasongym/Arithmetic-v0"


TINY_SFT = ["--difficulty", "1", "--num-examples", "32", "--batch-size", "4", "--no-progress-bar"]


TINY_RL = ["--difficulty", "1", "--num-prompts", "2", "--group-size", "2", "--max-new-tokens", "8"]


def _interrupt_after_first_step(args: list[str], root: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """Start ``reasongym train ...`` in ``root``, send ``signum`` once its first metrics line is written."""
    code = (  # SIGINT may be ignored where the tests run (a background job): the child restores the handler
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from reasongym.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, "train", *args],
        cwd=root,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        logged = [path for path in root.glob("runs/*/*/metrics.jsonl") if path.stat().st_size]
        if logged and any(json.loads(line)["step"] >= 1 for line in logged[0].read_text().splitlines()):
            break
        time.sleep(0.05)
    process.send_signal(signum)
    out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.slow  # trains in subprocesses and interrupts them
@pytest.mark.parametrize(
    ("algo", "flags", "signum"),
    [("sft", TINY_SFT, signal.SIGINT), ("grpo", [*TINY_RL, "--no-progress-bar"], signal.SIGTERM)],
)
def test_an_interrupt_saves_a_checkpoint_that_resumes(
    tmp_path: Path, algo: str, flags: list[str], signum: int
) -> None:
    args = [
        algo,
        "--model",
        "tiny",
        "--env",
        ENV,
        "--max-steps",
        "500",
        "--output-dir",
        f"runs/{algo}",
        *flags,
    ]
    stopped = _interrupt_after_first_step(args, tmp_path, signum)
    assert stopped.returncode == 130, stopped.stderr
    message = stopped.stderr.strip().splitlines()[-1]
    assert message.startswith("reasongym: interrupted after step ") and "checkpoint step-" in message
    run = (tmp_path / "runs" / algo / "latest").resolve()
    assert f"resume with `reasongym train {algo} --run-dir {run.relative_to(tmp_path)}`" in message
    saved = int(message.split("interrupted after step ")[1].split()[0])
    assert saved >= 1 and (run / "checkpoints" / f"step-{saved:06d}" / "checkpoint.json").is_file()
    resumed = cli(
        "train", algo, "--run-dir", f"runs/{algo}/latest", "--max-steps", str(saved + 1), cwd=tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["steps"] == saved + 1


_TWO_SIGTERMS = """
import os, signal, sys, time
import importlib
cli = importlib.import_module("reasongym.cli.main")

def dispatch(argv):
    os.kill(os.getpid(), signal.SIGTERM)  # the first: the command stops as on Ctrl-C
    time.sleep(30)
    return 0

cli._dispatch = dispatch
code = cli.main(["train"])
os.kill(os.getpid(), signal.SIGTERM)  # the second, while the stopped process winds down
time.sleep(30)
sys.exit(code)
"""


def test_a_second_sigterm_exits_130_with_the_message() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _TWO_SIGTERMS],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.splitlines()[-1] == "reasongym: interrupted again while stopping; exiting now"
