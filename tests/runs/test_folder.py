"""Run folders (`reasongym.runs.folder`): the ``latest`` pointer, what a failed start leaves, the run info a run
started from Python records, and a full disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasongym.cli import main

ENV = "reasongym/Arithmetic-v0"


TINY_SFT = ["--difficulty", "1", "--num-examples", "32", "--batch-size", "4", "--no-progress-bar"]


@pytest.mark.slow  # trains SFT through the command line
def test_a_start_that_fails_leaves_no_run_folder_and_latest_points_back(tmp_path: Path) -> None:
    args = [
        "train",
        "sft",
        "--model",
        "tiny",
        "--env",
        ENV,
        "--max-steps",
        "1",
        "--output-dir",
        str(tmp_path),
    ]
    assert main([*args, *TINY_SFT]) == 0
    first = (tmp_path / "latest").resolve()
    # --split names no split of the environment: found after the run folder is made, and it is removed again
    assert main([*args, *TINY_SFT, "--split", "nope"]) == 2
    assert [p for p in tmp_path.iterdir() if p.name != "latest"] == [first]
    assert (tmp_path / "latest").resolve() == first


@pytest.mark.slow  # trains twice and evaluates through the command line
def test_latest_names_the_newest_run_and_the_parent_folder_stands_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for seed in ("1", "2"):
        args = [
            "train",
            "sft",
            "--env",
            ENV,
            "--max-steps",
            "1",
            "--seed",
            seed,
            "--output-dir",
            str(tmp_path),
        ]
        assert main([*args, *TINY_SFT]) == 0
        runs.append(Path(json.loads(capsys.readouterr().out.splitlines()[-1])["run_dir"]))
    assert (tmp_path / "latest").is_symlink() and (tmp_path / "latest").resolve() == runs[1].resolve()
    evaluate = [
        ENV,
        "--difficulty",
        "1",
        "--num-problems",
        "2",
        "--max-new-tokens",
        "4",
        "--no-progress",
        "--json",
    ]
    for model in (tmp_path / "latest", tmp_path):  # the pointer, and the folder of runs itself
        out = tmp_path / f"{model.name}.jsonl"
        assert main(["eval", str(model), *evaluate, "--out", str(out)]) == 0
        capsys.readouterr()
        assert json.loads(out.read_text().splitlines()[0])["settings"]["model"] == str(runs[1].resolve())
    # a run started from the folder of runs takes that run's preset (tiny), as from the run itself
    assert main(["train", "grpo", "--model", str(tmp_path), "--env", ENV, "--help"]) == 0
    assert "(default: 0.0001; preset default: 1e-06)" in " ".join(capsys.readouterr().out.split())


def test_a_run_started_from_python_records_its_algorithm_and_environment(
    tiny: object, tmp_path: Path
) -> None:
    from reasongym.agents import preset_configs, train_sft
    from reasongym.agents.sft_data import sft_pairs_from_env

    model, tokenizer = tiny()  # type: ignore[operator]
    import reasongym

    pairs = sft_pairs_from_env(reasongym.make(ENV), 8, split="train", tokenizer=tokenizer)
    configs = preset_configs("default", "sft", max_steps=1, progress_bar=False, tensorboard=False)
    train_sft(configs["sft"], model, tokenizer, pairs, run=configs["run"], run_dir=tmp_path / "run")
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info == {"algo": "sft", "env": None, "model": None, "preset": None, "started_by": "python"}


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_latest_that_is_not_our_link_is_named_in_a_warning(tmp_path: Path, kind: str) -> None:
    from reasongym.runs.folder import RunDir

    stale = tmp_path / "latest"
    stale.mkdir() if kind == "folder" else stale.write_text("old")
    with pytest.warns(
        RuntimeWarning, match=rf"{stale}' is a {kind}, not the link reasongym keeps to the newest"
    ):
        run = RunDir.create(tmp_path, algo="grpo", env=ENV, seed=0, timestamp="t")
    assert run.path.name in str(run.path) and not stale.is_symlink()


def test_run_json_on_a_full_disk_says_so_and_leaves_no_temporary(full_disk: Path) -> None:
    from reasongym.runs.metrics import write_json_atomic

    (full_disk / "filler").write_bytes(b"x" * (120 << 10))
    with pytest.raises(OSError, match=rf"^the disk is full: cannot write '{full_disk}/run.json'"):
        write_json_atomic(full_disk / "run.json", {"text": "y" * (64 << 10)})
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]
