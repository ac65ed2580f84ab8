"""A new user's first hour, round 2 (issue 41): mistakes answered before anything slow happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOLD_LOCK = """
import sys, time
from pathlib import Path

import pytest
from reasongym.runs.locks import run_folder_lock
with run_folder_lock(sys.argv[1]):
    Path(sys.argv[2]).touch()
    while not Path(sys.argv[3]).exists():
        time.sleep(0.05)
"""


def _python(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow  # three processes: a first training, a lock holder, the refused second
def test_a_second_writer_is_refused_before_its_model_loads(tmp_path: Path) -> None:
    """The lock is taken before the model loads: a model that cannot load is never reached."""
    started, release, missing = tmp_path / "started", tmp_path / "release", tmp_path / "no-such-model"
    first = _python(
        "-m",
        "reasongym",
        "train",
        "sft",
        "--model",
        "tiny",
        "--env",
        "reasongym/Arithmetic-v0",
        "--max-steps",
        "1",
        "--output-dir",
        str(tmp_path / "runs"),
    )
    _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    run = (tmp_path / "runs" / "latest").resolve()
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "model": str(missing)}), encoding="utf-8")
    holder = _python("-c", HOLD_LOCK, str(run), str(started), str(release))
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert holder.poll() is None and time.monotonic() < deadline, holder.communicate()
            time.sleep(0.05)
        second = _python("-m", "reasongym", "train", "sft", "--run-dir", str(run))  # the model: run.json's
        _, stderr = second.communicate(timeout=300)
        assert second.returncode == 1, stderr
        assert f"is in use by another process (pid {holder.pid})" in stderr and "no-such-model" not in stderr
    finally:
        release.touch()
        holder.communicate(timeout=60)
