"""Trainers and their run folders (issue 16, items 4, 5 and 6): one trainer per folder, a resume that uses
what it announces, never duplicated steps, damaged checkpoints skipped, a foreign folder left alone."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.sft import train_sft
from reasongym.agents.star import STaRConfig, train_star
from reasongym.errors import ConfigError, ResourceBusyError
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def grpo_run(tiny, small_configs, train) -> object:  # noqa: ANN001
    """``grpo_run(run_dir, **fields)``: a fresh tiny model trained by GRPO (1 step, no KL) in ``run_dir``."""

    def run(run_dir: Path, **overrides: object) -> object:
        fields = {"max_steps": 1, "group_size": 2, "max_new_tokens": 8, "kl": "off", **overrides}
        model, tokenizer = tiny()
        return train("grpo", small_configs("grpo", **fields), model, tokenizer, ENV, run_dir=run_dir)

    return run


def test_a_new_lr_on_resume_is_the_rate_the_optimizer_uses(tmp_path: Path, grpo_run) -> None:
    grpo_run(tmp_path, max_steps=1, lr=1e-3)
    grpo_run(tmp_path, max_steps=2, lr=5e-4)
    assert [(row["step"], row["train/lr"]) for row in read_metrics(tmp_path)] == [(1, 1e-3), (2, 5e-4)]


def test_a_deleted_checkpoints_folder_restarts_without_duplicating_steps(tmp_path: Path, grpo_run) -> None:
    import shutil

    grpo_run(tmp_path, max_steps=2)
    shutil.rmtree(tmp_path / "checkpoints")
    with pytest.warns(
        RuntimeWarning, match=r"metrics.jsonl held lines of an earlier attempt .* moved to metrics"
    ):
        grpo_run(tmp_path, max_steps=2)
    assert [row["step"] for row in read_metrics(tmp_path)] == [1, 2]
    (aside,) = tmp_path.glob("metrics.before-*.jsonl")
    assert [row["step"] for row in read_metrics(aside)] == [1, 2]
    assert sorted({json.loads(line)["step"] for line in (tmp_path / "samples.jsonl").open()}) == [1, 2]


def test_a_damaged_latest_checkpoint_resumes_from_the_one_before(tmp_path: Path, grpo_run) -> None:
    grpo_run(tmp_path, max_steps=2, save_every=1)
    weights = tmp_path / "checkpoints" / "step-000002" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.warns(
        RuntimeWarning, match=r"step-000002/model.safetensors has 100 bytes .*resuming from step-000001"
    ):
        result = grpo_run(tmp_path, max_steps=3)
    assert result.resumed_from == 1
    assert [row["step"] for row in read_metrics(tmp_path)] == [1, 2, 3]


def _flip_bytes(file: Path, offset_from_end: int) -> None:
    """Overwrite 8 bytes near the end of ``file`` with other bytes: same size, other content."""
    data = bytearray(file.read_bytes())
    at = len(data) - offset_from_end
    data[at : at + 8] = bytes((b ^ 0x5A) for b in data[at : at + 8])
    file.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["model.safetensors", "optimizer.pt", "scheduler.pt", "trainer_state.json"])
def test_a_checkpoint_file_damaged_in_place_is_caught_and_the_run_resumes_from_the_one_before(
    tmp_path: Path, grpo_run, name: str
) -> None:
    # Issue 28, item 8: the manifest recorded sizes only, so bytes changed in place went unnoticed (weights)
    # or stopped the run (optimizer.pt) instead of falling back.
    grpo_run(tmp_path, max_steps=2, save_every=1)
    damaged = tmp_path / "checkpoints" / "step-000002" / name
    _flip_bytes(damaged, 16 if name != "trainer_state.json" else 3)
    with pytest.warns(RuntimeWarning) as caught:
        result = grpo_run(tmp_path, max_steps=3)
    messages = [str(w.message) for w in caught if "damaged" in str(w.message)]
    assert len(messages) == 1, messages  # issue 28, item 12: once, not twice
    assert f"step-000002/{name}" in messages[0] and "sha256" in messages[0], messages[0]
    assert "resuming from step-000001" in messages[0]
    assert result.resumed_from == 1
    assert [row["step"] for row in read_metrics(tmp_path)] == [1, 2, 3]


def test_a_folder_with_a_config_json_of_its_own_is_not_overwritten(tmp_path: Path, grpo_run) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    with pytest.raises(
        ConfigError, match="is not a run folder: it holds a config.json but none of a run's files"
    ):
        grpo_run(tmp_path)
    assert (tmp_path / "config.json").read_text() == '{"model_type": "llama"}'


@pytest.mark.parametrize("marker", ["metrics.jsonl", "checkpoints"])
def test_a_model_folder_that_looks_like_a_run_is_not_overwritten(
    tmp_path: Path, grpo_run, marker: str
) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')  # issue 28, item 1
    if marker == "checkpoints":
        (tmp_path / "checkpoints").mkdir()
    else:
        (tmp_path / "metrics.jsonl").write_text('{"step": 0}\n')
    with pytest.raises(
        ConfigError, match=r"config.json is not a reasongym run config \(its keys: 'model_type'"
    ):
        grpo_run(tmp_path)
    assert (tmp_path / "config.json").read_text() == '{"model_type": "llama"}'


# ---------------------------------------------------------------------------------------------- writers

HOLD_LOCK = """
import sys, time
from pathlib import Path
from reasongym.runs.locks import run_folder_lock
with run_folder_lock(sys.argv[1]):
    Path(sys.argv[2]).touch()
    while not Path(sys.argv[3]).exists():
        time.sleep(0.05)
"""

TRAIN_BLOCKED = """
import sys, time
from pathlib import Path
from reasongym.agents.grpo import train_grpo
from reasongym.agents.algorithms import preset_configs
from reasongym.generation import HFGenerator
from reasongym.policy.tiny import tiny_policy

run_dir, started, release = sys.argv[1:4]

class Blocking:
    def __init__(self, inner):
        self.inner = inner
    def __getattr__(self, name):
        return getattr(self.inner, name)
    def wait(self):
        Path(started).touch()
        while not Path(release).exists():
            time.sleep(0.05)
    def generate(self, prompts, params):
        self.wait()
        return self.inner.generate(prompts, params)
    def generate_batch(self, prompts, params):
        self.wait()
        return self.inner.generate_batch(prompts, params)

configs = preset_configs("tiny", "grpo", max_steps=1, num_prompts=1, group_size=2, max_new_tokens=4,
                         progress_bar=False, eval_every=0)
model, tokenizer = tiny_policy(0)
train_grpo(configs["grpo"], model, tokenizer, "reasongym/Arithmetic-v0", run=configs["run"],
           rollout=configs["rollout"], run_dir=run_dir, generator=Blocking(HFGenerator(model, tokenizer)))
"""


def _python(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for(path: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 180
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the first process never started"
        time.sleep(0.05)


@pytest.mark.slow  # a second process trains beside this one
def test_a_second_trainer_on_the_same_run_folder_fails_at_once(tmp_path: Path) -> None:
    run, started, release = tmp_path / "run", tmp_path / "started", tmp_path / "release"
    first = _python("-c", TRAIN_BLOCKED, str(run), str(started), str(release))
    try:
        _wait_for(started, first)
        before = {name: (run / name).read_text() for name in ("config.json", "run.json")}  # the first's
        second = _python(
            "-m",
            "reasongym",
            "train",
            "grpo",
            "--run-dir",
            str(run),
            "--model",
            "tiny",
            "--env",
            ENV,
            "--max-steps",
            "3",
            "--lr",
            "0.5",
        )
        _, stderr = second.communicate(timeout=300)
        assert second.returncode == 1, stderr
        assert f"run folder {str(run)!r} is in use by another process (pid {first.pid})" in stderr
        assert "start a new run (--output-dir) instead of resuming this one" in stderr
        # the second wrote nothing: the first trainer's record is as it left it
        assert {name: (run / name).read_text() for name in before} == before
    finally:
        release.touch()
        _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    assert [row["step"] for row in read_metrics(run)] == [1]


@pytest.mark.parametrize("trainer", ["grpo", "sft", "star"])
def test_every_trainer_takes_the_run_folder_lock(tmp_path: Path, trainer: str, grpo_run, tiny) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    (tmp_path / "run").mkdir()
    holder = _python("-c", HOLD_LOCK, str(tmp_path / "run"), str(started), str(release))
    try:
        _wait_for(started, holder)
        model, tokenizer = tiny()
        with pytest.raises(
            ResourceBusyError, match=rf"run folder '.*run' is in use by another process \(pid {holder.pid}\)"
        ):
            if trainer == "grpo":
                grpo_run(tmp_path / "run")
            elif trainer == "sft":
                configs = preset_configs("tiny", "sft", max_steps=1, progress_bar=False)
                train_sft(
                    dataclasses.replace(configs["sft"], stop_at_accuracy=None),
                    model,
                    tokenizer,
                    [("1+1=", "2")],
                    run=configs["run"],
                    run_dir=tmp_path / "run",
                )
            else:
                configs = preset_configs("tiny", "star", max_steps=1, progress_bar=False)
                train_star(
                    STaRConfig(num_train_problems=2),
                    model,
                    tokenizer,
                    ENV,
                    run=configs["run"],
                    rollout=configs["rollout"],
                    run_dir=tmp_path / "run",
                )
    finally:
        release.touch()
        holder.communicate(timeout=60)
    assert sorted(os.listdir(tmp_path / "run")) == [".lock"]  # the refused trainer wrote nothing


@pytest.mark.slow  # three processes: a first training, a lock holder, the refused second
def test_a_second_writer_is_refused_before_its_model_loads(tmp_path: Path) -> None:
    """The lock is taken before the model loads: a model that cannot load is never reached."""
    started, release, missing = tmp_path / "started", tmp_path / "release", tmp_path / "no-such-model"
    args = ["--model", "tiny", "--env", ENV, "--max-steps", "1", "--output-dir", str(tmp_path / "runs")]
    first = _python("-m", "reasongym", "train", "sft", *args)
    _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    run = (tmp_path / "runs" / "latest").resolve()
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "model": str(missing)}), encoding="utf-8")
    holder = _python("-c", HOLD_LOCK, str(run), str(started), str(release))
    try:
        _wait_for(started, holder)
        second = _python("-m", "reasongym", "train", "sft", "--run-dir", str(run))  # the model: run.json's
        _, stderr = second.communicate(timeout=300)
        assert second.returncode == 1, stderr
        assert f"is in use by another process (pid {holder.pid})" in stderr and "no-such-model" not in stderr
    finally:
        release.touch()
        holder.communicate(timeout=60)
