"""`RunLife`, one run's life for every trainer: the folder's lock, what rank 0 alone writes, the checkpoint to resume
from, the save an interrupt makes, the plot, and the removal of a folder a failed start left empty."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from reasongym.distributed import DistInfo
from reasongym.errors import ConfigError
from reasongym.policy.checkpoints import checkpoint_step, latest_checkpoint
from reasongym.runs.folder import RunDir
from reasongym.runs.lifecycle import Plot, RunLife, discard_if_empty


@dataclasses.dataclass(frozen=True)
class Settings:
    max_steps: int = 4
    save_every: int = 2
    keep_checkpoints: int = 3
    samples_every: int = 1
    tensorboard: bool | None = False
    wandb_project: str | None = None


def test_the_folder_is_locked_while_the_run_lives_and_released_after(tmp_path: Path) -> None:
    with RunLife.open(tmp_path / "run", Settings()) as life:
        assert life.folder is not None and life.folder.locked_here()
    assert not RunDir(tmp_path / "run").locked_here()


def test_checkpoints_are_saved_when_due_and_the_newest_is_resumed(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 2)
    with RunLife.open(tmp_path, Settings()) as life:
        assert [step for step in range(1, 5) if life.save_due(step)] == [2, 4]  # every 2, and the last
        assert life.checkpoint_to_resume() is None
        life.save(2, model=model, trainer_state={"cursor": 7})
    with RunLife.open(tmp_path, Settings()) as life:
        checkpoint = life.checkpoint_to_resume()
        assert checkpoint is not None and checkpoint_step(checkpoint) == 2
    with (
        RunLife.open(tmp_path, Settings(max_steps=2)) as life,
        pytest.raises(ConfigError, match="already trained 2"),
    ):
        life.checkpoint_to_resume()


def test_an_interrupt_saves_the_last_finished_step_once(tmp_path: Path) -> None:
    saved: list[int] = []
    with RunLife.open(tmp_path, Settings(max_steps=10)) as life:

        def save() -> None:
            saved.append(3)
            life.save(3, model=torch.nn.Linear(2, 2), trainer_state={})

        error = life.interrupted(3, save=save)
        assert saved == [3] and "interrupted after step 3 of 10" in str(error) and "step-000003" in str(error)
        again = life.interrupted(3, save=save)  # the checkpoint of step 3 is there: nothing more to save
        assert saved == [3] and "step-000003" in str(again)
        life.hold("step 4")  # a second Ctrl-C inside the held stretch: the weights are not a finished step's
        inside = life.interrupted(4, save=save)
        assert saved == [3] and "stopped inside step 5" in str(inside)


def test_without_a_folder_nothing_is_written_or_resumed(tmp_path: Path) -> None:
    with RunLife.open(None, Settings()) as life:
        life.open_writers({"algo": "x"}, None, samples=True)
        life.log(1, {"loss/x": 1.0})
        assert not life.writes and life.checkpoint_to_resume() is None and life.write(lambda _: 1) is None
        assert "(no run folder)" in str(life.interrupted(1, save=lambda: pytest.fail("saved")))


def test_a_rank_other_than_0_writes_nothing(tmp_path: Path) -> None:
    life = RunLife(
        RunDir.open(tmp_path, create=True), Settings(), DistInfo(rank=1, world_size=2, local_rank=1)
    )
    life.open_writers({"algo": "x"}, None, samples=True)
    life.log(1, {"loss/x": 1.0})
    life.write_samples(1, lambda: [{"prompt": "p"}])
    assert life.write(lambda folder: (folder / "mine.txt").write_text("x")) is None
    life.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_rank_0_records_config_metrics_samples_and_draws_the_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    plot = Plot("curves.png", ("loss/",), "test")
    with RunLife.open(tmp_path, Settings(), plot=plot) as life:
        life.open_writers({"algo": "x"}, None, samples=True)
        life.log(1, {"loss/x": 1.0})
        life.log(2, {"loss/x": 0.5})
        life.write_samples(1, lambda: [{"prompt": "p"}])
    assert json.loads((tmp_path / "config.json").read_text())["algo"] == "x"
    assert [json.loads(line)["step"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()] == [
        1,
        2,
    ]
    assert json.loads((tmp_path / "samples.jsonl").read_text())["prompt"] == "p"
    assert (tmp_path / "curves.png").stat().st_size > 0


def test_a_failed_start_leaves_no_empty_folder_but_keeps_one_that_logged(tmp_path: Path) -> None:
    empty = RunDir.create(tmp_path, algo="x", env="e", seed=0)
    assert discard_if_empty(empty) and not empty.path.exists() and not (tmp_path / "latest").exists()
    logged = RunDir.create(tmp_path, algo="x", env="e", seed=1)
    with RunLife.open(logged, Settings()) as life:
        life.open_writers({"algo": "x"}, None)
        life.log(1, {"loss/x": 1.0})
    assert not discard_if_empty(logged) and logged.path.is_dir() and latest_checkpoint(logged) is None


class _Tokenizer:
    def save_pretrained(self, path: Path) -> None:
        (Path(path) / "tokenizer.json").write_text("{}", encoding="utf-8")


def test_a_job_folder_is_made_locked_and_recorded_and_removed_when_its_start_fails(tmp_path: Path) -> None:
    from reasongym.distributed import SINGLE_PROCESS
    from reasongym.errors import TrainingInterrupted
    from reasongym.runs.lifecycle import job_folder

    options = {"resume": None, "name": ("grpo", "reasongym/Arith-v0", 3), "info": SINGLE_PROCESS}
    with job_folder(tmp_path, run_info={"model": "tiny"}, **options) as job:
        folder = job.folder
        job.keep_tokenizer(_Tokenizer())
        assert folder.locked_here() and folder.path.name.startswith("grpo-reasongym_Arith-v0-s3-")
        assert folder.read_run_info() == {"model": "tiny"} and (folder.path / "tokenizer.json").is_file()
    assert not folder.locked_here() and folder.path.is_dir()  # a job that ends well keeps its folder

    interrupt = TrainingInterrupted("training interrupted at step 0 of 4")
    with pytest.raises(TrainingInterrupted, match="held nothing to resume and was removed"):
        with job_folder(tmp_path, run_info={"model": "tiny"}, **options) as failed:
            raise interrupt
    assert not failed.path.exists() and (tmp_path / "latest").resolve() == folder.path.resolve()

    with pytest.raises(RuntimeError, match="boom"):
        with job_folder(tmp_path, run_info={"model": "tiny"}, **{**options, "resume": folder}) as same:
            raise RuntimeError("boom")
    assert same.path == folder.path and folder.path.is_dir()  # a resumed run's folder is never removed


ENV = "reasongym/Arithmetic-v0"


def test_a_run_that_logged_steps_is_kept_though_it_has_no_checkpoint(tmp_path: Path) -> None:
    # What an interrupted torchrun job leaves (no checkpoint on interrupt across processes): its metrics stay.
    from reasongym.distributed import SINGLE_PROCESS
    from reasongym.errors import TrainingInterrupted
    from reasongym.runs.lifecycle import job_folder

    options = {"resume": None, "name": ("grpo", ENV, 0), "run_info": {"algo": "grpo"}, "info": SINGLE_PROCESS}
    with pytest.raises(TrainingInterrupted) as stop:
        with job_folder(tmp_path / "b", **options) as logged:
            logged.folder.metrics_path.write_text(
                '{"step": 1, "rollout/reward_mean": 0.5}\n', encoding="utf-8"
            )
            raise TrainingInterrupted("grpo stopped by Ctrl-C after step 1 of 10")
    assert logged.folder.metrics_path.is_file()
    assert "no checkpoint to resume from" in str(stop.value) and str(logged.path) in str(stop.value)
    with pytest.raises(TrainingInterrupted, match="held nothing to resume and was removed"):
        with job_folder(tmp_path / "a", **options) as empty:
            raise TrainingInterrupted("grpo stopped by Ctrl-C after step 0 of 10")
    assert not empty.path.exists()
