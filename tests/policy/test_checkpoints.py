"""Run folders and checkpoints: naming, full-state round trip, atomic writes under SIGKILL, pruning, damage."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from reasongym.errors import CheckpointError, ConfigError
from reasongym.policy.checkpoints import (
    ensure_steps_remaining,
    latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
)
from reasongym.runs.folder import RunDir, SamplesWriter


def _model_and_optimizer(seed: int) -> tuple[torch.nn.Module, torch.optim.Optimizer, object]:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    model(torch.randn(3, 4)).sum().backward()
    optimizer.step()
    scheduler.step()
    return model, optimizer, scheduler


def test_run_folders_are_named_after_algo_env_seed_and_time_and_never_clash(tmp_path: Path) -> None:
    first = RunDir.create(
        tmp_path, algo="grpo", env="reasongym/GSM8K-v0", seed=7, timestamp="20250101-120000"
    )
    second = RunDir.create(
        tmp_path, algo="grpo", env="reasongym/GSM8K-v0", seed=7, timestamp="20250101-120000"
    )
    assert first.path.name == "grpo-reasongym_GSM8K-v0-s7-20250101-120000"
    assert second.path.name == first.path.name + "-2"
    assert RunDir.open(first.path) == first
    with pytest.raises(ConfigError, match="does not exist; pass an existing run folder or create=True"):
        RunDir.open(tmp_path / "missing")


def test_a_checkpoint_restores_weights_optimizer_scheduler_rngs_and_trainer_state(tmp_path: Path) -> None:
    model, optimizer, scheduler = _model_and_optimizer(seed=0)
    generator = torch.Generator().manual_seed(11)
    state = {
        "cursor": {"epoch": 2, "index": 5},
        "order": (3, 1, 2),
        "data_rng": generator,
        "np_rng": np.random.default_rng(5),
        "py_rng": random.Random(9),
    }
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    path = save_checkpoint(
        tmp_path, 12, model=model, optimizer=optimizer, scheduler=scheduler, trainer_state=state
    )
    expected_draws = (random.random(), np.random.rand(), torch.rand(1).item())
    expected_rngs = (
        generator.initial_seed(),
        torch.rand(2, generator=generator),
        state["np_rng"].random(),
        state["py_rng"].random(),
    )

    other, other_optimizer, other_scheduler = _model_and_optimizer(seed=1)
    random.seed(99), np.random.seed(99), torch.manual_seed(99)
    step, restored = load_checkpoint(path, model=other, optimizer=other_optimizer, scheduler=other_scheduler)
    assert step == 12 and path.name == "step-000012"
    for name, tensor in model.state_dict().items():
        assert torch.equal(other.state_dict()[name], tensor)
    assert json.dumps(other_optimizer.state_dict(), default=str) == json.dumps(
        optimizer.state_dict(), default=str
    )
    assert other_scheduler.state_dict() == scheduler.state_dict()
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected_draws
    assert restored["cursor"] == {"epoch": 2, "index": 5} and restored["order"] == (3, 1, 2)
    got_rngs = (
        restored["data_rng"].initial_seed(),
        torch.rand(2, generator=restored["data_rng"]),
        restored["np_rng"].random(),
        restored["py_rng"].random(),
    )
    assert got_rngs[0] == expected_rngs[0] and torch.equal(got_rngs[1], expected_rngs[1])
    assert got_rngs[2:] == expected_rngs[2:]


def test_trainer_state_that_json_cannot_hold_is_refused_naming_the_key(tmp_path: Path) -> None:
    model, _, _ = _model_and_optimizer(seed=0)
    with pytest.raises(ConfigError, match=r"trainer_state\['cursor'\] holds object .* cannot store"):
        save_checkpoint(tmp_path, 1, model=model, trainer_state={"cursor": object()})
    assert latest_checkpoint(tmp_path) is None


def test_half_written_checkpoints_are_ignored_and_cleaned_up(tmp_path: Path) -> None:
    model, _, _ = _model_and_optimizer(seed=0)
    save_checkpoint(tmp_path, 3, model=model)
    checkpoints = tmp_path / "checkpoints"
    partial = checkpoints / ".tmp-step-000004-deadbeef"  # a writer died before the rename
    partial.mkdir()
    (partial / "model.safetensors").write_bytes(b"truncated")
    unfinished = checkpoints / "step-000005"  # no manifest: never finished
    unfinished.mkdir()
    assert latest_checkpoint(tmp_path).name == "step-000003"
    (checkpoints / "latest").write_text("step-000005\n")  # a pointer to an unfinished folder is not trusted
    assert latest_checkpoint(tmp_path).name == "step-000003"
    (checkpoints / "latest").unlink()
    assert latest_checkpoint(tmp_path).name == "step-000003"
    save_checkpoint(tmp_path, 4, model=model)
    assert not partial.exists() and latest_checkpoint(tmp_path).name == "step-000004"


def test_a_process_killed_mid_write_leaves_the_previous_checkpoint(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, signal, torch
        from reasongym.policy import checkpoints as runs
        model = torch.nn.Linear(3, 3)
        runs.save_checkpoint({str(tmp_path)!r}, 1, model=model)
        def die(path):  # files of step 2 are written, nothing is published yet
            os.kill(os.getpid(), signal.SIGKILL)
        runs._fsync_file = die
        with torch.no_grad():
            model.weight.add_(1.0)
        runs.save_checkpoint({str(tmp_path)!r}, 2, model=model)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    leftovers = [
        p.name for p in (tmp_path / "checkpoints").iterdir() if p.name.startswith(".tmp-step-000002")
    ]
    assert leftovers  # the kill really hit the write
    assert latest_checkpoint(tmp_path).name == "step-000001"
    model = torch.nn.Linear(3, 3)
    assert load_checkpoint(latest_checkpoint(tmp_path), model=model, restore_rng=False)[0] == 1


def test_only_the_newest_checkpoints_are_kept_and_an_abandoned_future_is_dropped(tmp_path: Path) -> None:
    model, _, _ = _model_and_optimizer(seed=0)
    for step in (1, 2, 3, 4):
        save_checkpoint(tmp_path, step, model=model, keep_last=2)
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir() if p.name.startswith("step-"))
    assert names == ["step-000003", "step-000004"]
    save_checkpoint(tmp_path, 3, model=model, keep_last=2)  # resumed from 2 and saving 3 again
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir() if p.name.startswith("step-"))
    assert names == ["step-000003"] and latest_checkpoint(tmp_path).name == "step-000003"
    with pytest.raises(ConfigError, match="keep_last=0 is not allowed"):
        save_checkpoint(tmp_path, 5, model=model, keep_last=0)


@pytest.mark.parametrize(("trained", "total"), [(100, 100), (120, 100)])
def test_a_resume_with_nothing_left_to_train_is_an_error(trained: int, total: int) -> None:
    with pytest.raises(ConfigError) as raised:
        ensure_steps_remaining(trained, total)
    assert f"already trained {trained} of {total} steps; raise total steps to continue" in str(raised.value)
    assert f"max_steps={total} must be greater than {trained}" in str(raised.value)
    ensure_steps_remaining(99, 100)  # one step left is fine


def test_samples_are_written_every_n_steps_and_trimmed_on_resume(tmp_path: Path) -> None:
    run = RunDir.open(tmp_path)
    writer = SamplesWriter(run, every=2)
    for step in range(1, 7):
        if writer.due(step):
            writer.write(step, [{"prompt": "1+1=", "completion": str(step), "reward": 1.0}])
    writer.close()
    lines = [json.loads(line) for line in run.samples_path.read_text().splitlines()]
    assert [line["step"] for line in lines] == [2, 4, 6] and lines[0]["completion"] == "2"
    SamplesWriter(run, every=2, resume_from_step=4).close()
    assert [json.loads(line)["step"] for line in run.samples_path.read_text().splitlines()] == [2, 4]


def test_samples_with_an_undefined_reward_are_strict_json(tmp_path: Path) -> None:
    run = RunDir.open(tmp_path)
    writer = SamplesWriter(run, every=1)
    writer.write(1, [{"prompt": "1+1=", "completion": "", "reward": float("nan")}])
    writer.close()
    line = run.samples_path.read_text()
    assert "NaN" not in line and json.loads(line)["reward"] is None


def test_run_info_round_trips_and_is_empty_for_an_older_run(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, algo="grpo", env="reasongym/Arithmetic-v0", seed=0, timestamp="t")
    assert run.read_run_info() == {}
    run.write_run_info({"algo": "grpo", "model": "tiny", "env": "reasongym/Arithmetic-v0"})
    assert RunDir.open(run.path).read_run_info()["model"] == "tiny"
    run.run_info_path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="must hold a JSON object"):
        run.read_run_info()


# ---------------------------------------------------------------------------------------------- damage


def _truncate(file: Path) -> None:
    file.write_bytes(file.read_bytes()[: file.stat().st_size // 2])


DAMAGE = [
    ("model.safetensors", _truncate, r"model.safetensors has \d+ bytes where the manifest recorded \d+"),
    ("optimizer.pt", _truncate, r"optimizer.pt has \d+ bytes where the manifest recorded \d+"),
    ("rng_state.json", lambda f: f.write_text("{}"), r"rng_state.json has \d+ bytes where the manifest"),
    ("trainer_state.json", lambda f: f.unlink(), r"trainer_state.json is missing"),
    ("checkpoint.json", lambda f: f.write_text("{garbage"), r"checkpoint.json is not valid JSON"),
]
"""(file, how it is damaged, what the error says about it)."""


@pytest.mark.parametrize(("name", "damage", "message"), DAMAGE)
def test_a_damaged_checkpoint_names_its_file_and_resume_falls_back(
    tmp_path: Path, name: str, damage: object, message: str
) -> None:
    model, optimizer, scheduler = _model_and_optimizer(seed=0)
    for step in (1, 2):
        save_checkpoint(tmp_path, step, model=model, optimizer=optimizer, scheduler=scheduler)
    damaged = tmp_path / "checkpoints" / "step-000002"
    damage(damaged / name)
    with pytest.raises(CheckpointError, match=message):
        verify_checkpoint(damaged)
    with pytest.raises(CheckpointError, match=message) as error:
        load_checkpoint(damaged, model=model, optimizer=optimizer, scheduler=scheduler)
    assert str(damaged / name) in str(error.value)
    with pytest.warns(RuntimeWarning, match=f"{message}.*; resuming from step-000001 instead"):
        assert latest_checkpoint(tmp_path).name == "step-000001"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("rng_state.json", "{}", r"rng_state.json lacks the keys \['numpy', 'python', 'torch'\]"),
        ("trainer_state.json", "not json", r"trainer_state.json is not valid JSON"),
        (
            "model.safetensors",
            None,
            r"model.safetensors has \d+ bytes where its header needs \d+ .truncated.",
        ),
    ],
)
def test_a_checkpoint_of_an_older_version_without_sizes_is_still_checked(
    tmp_path: Path, name: str, content: str | None, message: str
) -> None:
    model, _, _ = _model_and_optimizer(seed=0)
    path = save_checkpoint(tmp_path, 1, model=model)
    (path / "checkpoint.json").write_text(json.dumps({"step": 1, "time": 0.0}))  # no recorded sizes
    if content is None:  # the last tensor's bytes cut off
        (path / name).write_bytes((path / name).read_bytes()[:-8])
    else:
        (path / name).write_text(content)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path, model=model)


def test_when_every_checkpoint_is_damaged_resume_refuses_naming_each(tmp_path: Path) -> None:
    model, _, _ = _model_and_optimizer(seed=0)
    for step in (1, 2):
        save_checkpoint(tmp_path, step, model=model)
        _truncate(tmp_path / "checkpoints" / f"step-{step:06d}" / "model.safetensors")
    with pytest.raises(
        CheckpointError, match="no intact checkpoint in .*step-000002/model.safetensors.*step-000001"
    ):
        latest_checkpoint(tmp_path)


def test_a_checkpoint_on_a_full_disk_says_so_and_leaves_nothing(full_disk: Path) -> None:
    import torch

    from reasongym.errors import CheckpointError
    from reasongym.policy.checkpoints import save_checkpoint

    model = torch.nn.Linear(256, 256)  # 257 KiB of weights: more than the disk holds
    with pytest.raises(
        CheckpointError,
        match=rf"^the disk is full: checkpoint step-000001 could not be written in '{full_disk}/checkpoints'",
    ):
        save_checkpoint(full_disk, 1, model=model, optimizer=torch.optim.AdamW(model.parameters()))
    assert list((full_disk / "checkpoints").iterdir()) == []
