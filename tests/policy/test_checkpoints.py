"""Run folders and checkpoints: naming, full-state round trip, atomic writes under SIGKILL, pruning, damage."""

from __future__ import annotations

import fractions
import json
import random
import re
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from reasongym.errors import CheckpointError, ConfigError
from reasongym.policy.checkpoints import (
    ensure_steps_remaining,
    latest_checkpoint,
    load_checkpoint,
    load_optimizer_states,
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


# ------------------------------------------------ the details mutation testing showed unpinned (benchmarks/mutation.py):
# DDP unwrapping, safe loading, the CUDA RNG round trip, safetensors headers, manifests, pruning


class _Wrapper(torch.nn.Module):
    """Stands in for DistributedDataParallel, which keeps the trained model in ``.module``."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module


def _model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(2, 3))


def _with_optimizer(tmp_path: Path) -> Path:
    model = _model(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)
    return save_checkpoint(tmp_path, 1, model=model, optimizer=optimizer, scheduler=scheduler)


class _Config:
    """The part of a transformers config that checkpoints use: ``save_pretrained(folder)``."""

    def save_pretrained(self, folder: Path) -> None:
        (Path(folder) / "config.json").write_text('{"model_type": "tiny"}', encoding="utf-8")


def _older(path: Path) -> Path:
    """The checkpoint as an older version wrote it: a manifest without file sizes."""
    (path / "checkpoint.json").write_text('{"step": 1}', encoding="utf-8")
    return path / "model.safetensors"


def _three(tmp_path: Path) -> Path:
    for step in (1, 2, 3):
        save_checkpoint(tmp_path, step, model=_model(0), keep_last=None)
    return tmp_path / "checkpoints"


ALLOWED = "allowed: JSON values, tuples, torch.Generator, numpy.random.Generator, random.Random"


def test_a_wrapped_model_is_saved_and_loaded_as_the_model_inside(tmp_path: Path) -> None:
    trained = _model(0)
    path = save_checkpoint(tmp_path, 1, model=_Wrapper(trained))
    plain = _model(1)  # strict loading: keys named "module.0.weight" would not fit it
    assert load_checkpoint(path, model=plain, restore_rng=False)[0] == 1
    assert torch.equal(plain[0].weight, trained[0].weight)
    wrapped = _Wrapper(_model(2))
    load_checkpoint(path, model=wrapped, restore_rng=False)
    assert torch.equal(wrapped.module[0].weight, trained[0].weight)


def test_optimizer_files_load_to_the_cpu_and_refuse_pickled_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _with_optimizer(tmp_path)
    calls = []
    real_load = torch.load

    def spy(*args: object, **kwargs: object) -> object:
        calls.append({key: kwargs.get(key) for key in ("map_location", "weights_only")})
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    optimizer_state, scheduler_state = load_optimizer_states(path)
    assert optimizer_state["param_groups"][0]["lr"] == 0.1 and scheduler_state["step_size"] == 1
    assert calls == [{"map_location": "cpu", "weights_only": True}] * 2
    monkeypatch.undo()
    torch.save({"state": fractions.Fraction(1, 3)}, path / "optimizer.pt")  # not a plain tensor/container
    with pytest.raises(
        CheckpointError,
        match=r"(?s)optimizer\.pt cannot be read \(.*Unsupported global.*\); the checkpoint is damaged$",
    ):
        load_optimizer_states(path)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda file: file.unlink(), "{file} is missing; the checkpoint is damaged"),
        (lambda file: file.write_bytes(b"garbage"), "{file} cannot be read ("),
    ],
)
def test_an_unreadable_optimizer_file_is_named(tmp_path: Path, damage: object, message: str) -> None:
    path = _with_optimizer(tmp_path)
    damage(path / "optimizer.pt")
    with pytest.raises(CheckpointError) as error:
        load_optimizer_states(path)
    assert str(error.value).startswith(message.format(file=path / "optimizer.pt"))


def test_cuda_rng_states_round_trip_as_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    restored: list = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: [torch.tensor([7, 255], dtype=torch.uint8)])
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.extend)
    path = save_checkpoint(tmp_path, 1, model=_model(0))
    assert re.search(r'"cuda": \[\[7, 255\]\]', (path / "rng_state.json").read_text())
    load_checkpoint(path, model=_model(0))
    assert [state.dtype for state in restored] == [torch.uint8]
    assert [state.tolist() for state in restored] == [[7, 255]]


def test_a_checkpoint_without_cuda_states_loads_on_a_cuda_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = save_checkpoint(tmp_path, 1, model=_model(0))  # this machine: no CUDA states saved
    assert '"cuda"' not in (path / "rng_state.json").read_text()
    restored: list = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.extend)
    assert load_checkpoint(path, model=_model(0))[0] == 1
    assert restored == []


def test_given_weights_are_saved_instead_of_the_models_and_its_config_goes_along(tmp_path: Path) -> None:
    model = _model(0)
    model.config = _Config()
    gathered = {name: torch.full_like(tensor, 0.5) for name, tensor in model.state_dict().items()}
    path = save_checkpoint(tmp_path, 1, model=model, model_state=gathered)  # a sharded model's, gathered
    assert (path / "config.json").read_text(encoding="utf-8") == '{"model_type": "tiny"}'
    fresh = _model(1)
    load_checkpoint(path, model=fresh, restore_rng=False)
    assert fresh[0].weight.tolist() == [[0.5, 0.5]] * 3 and fresh[0].bias.tolist() == [0.5] * 3


@pytest.mark.parametrize(
    "content",
    [
        (100 << 20).to_bytes(8, "little") + b"{}",  # a header length of 100 MiB or more is not read at all
        (0).to_bytes(8, "little") + b"{}",  # nor is an empty one
    ],
)
def test_a_safetensors_header_length_out_of_bounds_is_refused_unread(tmp_path: Path, content: bytes) -> None:
    path = save_checkpoint(tmp_path, 1, model=_model(0))
    (path / "checkpoint.json").write_text('{"step": 1}', encoding="utf-8")  # an older manifest: no sizes
    (path / "model.safetensors").write_bytes(content)
    message = f"{path / 'model.safetensors'} has no readable safetensors header; the checkpoint is damaged"
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        verify_checkpoint(path)


def test_safetensors_problems_are_named_with_the_whole_message(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path, 1, model=_model(0))
    weights = _older(path)
    size = weights.stat().st_size
    weights.write_bytes(weights.read_bytes()[:-4])
    message = (
        f"{weights} has {size - 4} bytes where its header needs {size} (truncated); the checkpoint is damaged"
    )
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        verify_checkpoint(path)
    weights.unlink()
    with pytest.raises(
        CheckpointError, match=f"^{re.escape(f'{weights} is missing; the checkpoint is damaged')}$"
    ):
        verify_checkpoint(path)


@pytest.mark.parametrize(
    ("tensors", "metadata"),
    [
        ({"w": torch.ones(2)}, {"format": "pt"}),  # weights saved by transformers carry __metadata__
        ({}, None),  # a model without parameters: a header and no tensors
    ],
)
def test_an_intact_safetensors_file_passes(tmp_path: Path, tensors: dict, metadata: dict | None) -> None:
    path = save_checkpoint(tmp_path, 1, model=_model(0))
    save_file(tensors, str(_older(path)), metadata=metadata)
    assert verify_checkpoint(path) == 1


@pytest.mark.parametrize("manifest", ['{"time": 0}', "[1]", '{"step": "1"}'])
def test_a_manifest_without_an_integer_step_is_named(tmp_path: Path, manifest: str) -> None:
    path = save_checkpoint(tmp_path, 1, model=_model(0))
    (path / "checkpoint.json").write_text(manifest, encoding="utf-8")
    message = f"{path / 'checkpoint.json'} has no integer 'step'; the checkpoint is damaged"
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        verify_checkpoint(path)


@pytest.mark.parametrize("manifest", ['{"time": 0}', "[1]", '{"step": 1.0}'])
def test_reading_the_step_alone_names_a_manifest_without_one(tmp_path: Path, manifest: str) -> None:
    path = _with_optimizer(tmp_path)
    (path / "checkpoint.json").write_text(manifest, encoding="utf-8")
    message = f"{path / 'checkpoint.json'} has no integer 'step'; the checkpoint is damaged"
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        load_optimizer_states(path)  # reads the step alone, before anything else


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        (b"step-000002", "step-000002"),  # the pointer wins over a higher step
        (None, "step-000003"),  # no pointer: the newest
        (b"\xff\xfe", "step-000003"),  # an unreadable pointer: the newest, no crash
    ],
)
def test_latest_follows_the_pointer_else_the_newest(
    tmp_path: Path, pointer: bytes | None, expected: str
) -> None:
    folder = _three(tmp_path)
    (folder / "latest").unlink()
    if pointer is not None:
        (folder / "latest").write_bytes(pointer)
    assert latest_checkpoint(tmp_path).name == expected


def test_a_damaged_newest_falls_back_to_the_next_newest_with_a_warning(tmp_path: Path) -> None:
    folder = _three(tmp_path)
    (folder / "step-000003" / "trainer_state.json").unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert latest_checkpoint(tmp_path).name == "step-000002"
    assert len(caught) == 1 and Path(caught[0].filename).name != "checkpoints.py"  # blamed on the caller
    assert "trainer_state.json is missing; the checkpoint is damaged; resuming from step-000002" in str(
        caught[0].message
    )


def test_when_none_is_intact_each_problem_is_listed(tmp_path: Path) -> None:
    folder = _three(tmp_path)
    for step in (1, 2, 3):
        (folder / f"step-{step:06d}" / "trainer_state.json").unlink()
    problems = [
        f"{folder / f'step-{s:06d}' / 'trainer_state.json'} is missing; the checkpoint is damaged"
        for s in (3, 2, 1)
    ]
    message = f"no intact checkpoint in {str(folder)!r}: " + "; ".join(problems)
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        latest_checkpoint(tmp_path)


def test_a_file_cut_short_of_its_recorded_size_is_named_with_the_whole_message(tmp_path: Path) -> None:
    path = _with_optimizer(tmp_path)
    file = path / "optimizer.pt"
    size = file.stat().st_size
    file.write_bytes(file.read_bytes()[:-1])
    message = (
        f"{file} has {size - 1} bytes where the manifest recorded {size} (truncated or overwritten); "
        "the checkpoint is damaged"
    )
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        verify_checkpoint(path)


def test_a_missing_state_file_of_an_older_checkpoint_is_named(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path, 1, model=_model(0))
    _older(path)
    (path / "trainer_state.json").unlink()
    message = f"{path / 'trainer_state.json'} is missing; the checkpoint is damaged"
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        verify_checkpoint(path)


def test_lists_in_the_trainer_state_come_back_as_lists(tmp_path: Path) -> None:
    state = {"seen": [3, 1, [2, (4, 5)]], "pair": (6, [7])}
    path = save_checkpoint(tmp_path, 1, model=_model(0), trainer_state=state)
    assert load_checkpoint(path, model=_model(0), restore_rng=False)[1] == state


def test_a_folder_that_is_not_a_checkpoint_says_what_to_pass(tmp_path: Path) -> None:
    message = (
        f"path={str(tmp_path)!r} is not a complete checkpoint (no checkpoint.json); "
        "pass a checkpoints/step-NNNNNN folder, e.g. latest_checkpoint(run_dir)"
    )
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        load_checkpoint(tmp_path, model=_model(0))


def test_weights_load_strictly(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path, 1, model=_model(0))
    bigger = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))  # a key the file lacks
    with pytest.raises(RuntimeError, match=r"Missing key\(s\).*1\.weight"):
        load_checkpoint(path, model=bigger, restore_rng=False)


def test_a_given_optimizer_state_is_the_one_saved(tmp_path: Path) -> None:
    gathered = {"state": {}, "param_groups": [{"lr": 0.25, "params": [0, 1]}]}  # a sharded optimizer's
    path = save_checkpoint(tmp_path, 1, model=_model(0), optimizer_state=gathered, scheduler=None)
    torch.save({}, path / "scheduler.pt")  # load_optimizer_states reads both files
    assert load_optimizer_states(path)[0] == gathered


@pytest.mark.parametrize(("keep_last", "kept"), [(None, [3, 4, 5, 6]), (1, [6]), ("default", [4, 5, 6])])
def test_keep_last_keeps_the_newest_and_its_default_is_three(
    tmp_path: Path, keep_last: object, kept: list
) -> None:
    run = tmp_path / "new" / "run"  # folders that do not exist yet are made
    for step in (3, 4, 5, 6):
        extra = {} if keep_last == "default" else {"keep_last": keep_last}
        save_checkpoint(run, step, model=_model(0), **extra)
    folder = run / "checkpoints"
    assert sorted(int(p.name.split("-")[1]) for p in folder.glob("step-*")) == kept
    assert (folder / "latest").read_text(encoding="utf-8") == "step-000006\n"


def test_pruning_never_fails_a_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    removals = []
    real_rmtree = shutil.rmtree

    def spy(path: object, *args: object, **kwargs: object) -> None:
        removals.append((Path(path).name, kwargs.get("ignore_errors")))
        real_rmtree(path, *args, **kwargs)

    save_checkpoint(tmp_path, 1, model=_model(0))
    (tmp_path / "checkpoints" / ".tmp-step-000009-deadbeef").mkdir()  # left over from a crash
    monkeypatch.setattr(shutil, "rmtree", spy)
    save_checkpoint(tmp_path, 2, model=_model(0), keep_last=1)
    # A folder that cannot be removed is left behind, never raised
    assert removals == [(".tmp-step-000009-deadbeef", True), ("step-000001", True)]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (
            {"cursor": {1: 2}},
            "trainer_state['cursor'] has a non-string key among [1]; JSON keys must be strings",
        ),
        (
            {"order": (1, b"x")},
            f"trainer_state['order'] holds bytes b'x', which a checkpoint cannot store; {ALLOWED}",
        ),
        (
            {"seen": [1, b"x"]},
            f"trainer_state['seen'] holds bytes b'x', which a checkpoint cannot store; {ALLOWED}",
        ),
    ],
)
def test_trainer_state_json_cannot_hold_is_named_down_to_the_key(
    tmp_path: Path, state: dict, message: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        save_checkpoint(tmp_path, 1, model=_model(0), trainer_state=state)


def test_a_run_object_is_saved_into_its_folder(tmp_path: Path) -> None:
    run = SimpleNamespace(path=tmp_path / "run")  # anything with .path, like a RunDir
    assert save_checkpoint(run, 1, model=_model(0)) == tmp_path / "run" / "checkpoints" / "step-000001"
    assert latest_checkpoint(run).name == "step-000001"
