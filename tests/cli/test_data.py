"""``reasongym data``: a file the user has becomes the data root's layout that every benchmark reads back; a
hub out of reach, a FIFO, a folder or an overlong CSV field fail at once with the file named."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.running import cli, run_main

ENV = "reasongym/Arithmetic-v0"


@pytest.mark.slow  # converts the real GSM8K file in a subprocess
def test_data_converts_a_file_a_user_has_into_the_data_root_layout(data_dir: Path, tmp_path: Path) -> None:
    original = data_dir / "gsm8k" / "original" / "test.jsonl"  # the release's layout: "rationale #### 18"
    done = cli(
        "data", "reasongym/GSM8K-v0", "--split", "test", "--from", str(original), "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"wrote {tmp_path / 'gsm8k' / 'test.jsonl'}: 1319 problems (reasongym/GSM8K-v0, split test)",
        f"use it: export REASONGYM_DATA_DIR={tmp_path}",
    ]
    import reasongym

    ours = reasongym.make("reasongym/GSM8K-v0", source_kwargs={"data_dir": tmp_path / "gsm8k"}).unwrapped
    shared = reasongym.make("reasongym/GSM8K-v0").unwrapped
    assert [ours.problem_at(i, split="test") for i in (0, 700, 1318)] == [
        shared.problem_at(i, split="test") for i in (0, 700, 1318)
    ]


@pytest.mark.slow  # reads and writes every real benchmark file
def test_every_benchmark_reads_back_what_the_data_command_writes(data_dir: Path, tmp_path: Path) -> None:
    from reasongym.envs.benchmarks import BENCHMARK_ENVS
    from reasongym.envs.benchmarks.data import entry_source, write_split

    for entry in BENCHMARK_ENVS:
        source = entry_source(entry)
        for split, route in source.routes.items():
            lines = (data_dir / route.shared_file).read_text(encoding="utf-8").splitlines()[:40]
            given = tmp_path / "given" / route.shared_file
            given.parent.mkdir(parents=True, exist_ok=True)
            given.write_text("\n".join(lines) + "\n", encoding="utf-8")
            written, count = write_split(entry.id, split, tmp_path / "root", from_file=given)
            expected = entry_source(entry, data_dir={split: given}).rows(split)
            again = entry_source(entry, data_dir={split: written}).rows(split)
            assert count == len(expected) and list(again) == list(expected), (entry.id, split)


@pytest.mark.slow  # starts the command line in subprocesses
def test_data_fails_at_once_where_the_hub_cannot_be_reached(tmp_path: Path) -> None:
    started = time.monotonic()
    done = cli(
        "data",
        "reasongym/AIME24-v0",
        "--out",
        str(tmp_path),
        HF_HUB_OFFLINE="",  # other tests of the session may have set either
        HF_DATASETS_OFFLINE="",
        HF_ENDPOINT="http://127.0.0.1:9",
    )
    assert done.returncode == 1 and time.monotonic() - started < 30
    assert "the hub cannot be reached (127.0.0.1:9 cannot be reached" in done.stderr
    assert "--from FILE" in done.stderr and not (tmp_path / "aime24").exists()
    refused = cli("data", ENV, "--out", str(tmp_path))
    assert refused.returncode == 2 and "is not a benchmark with data files" in refused.stderr


def test_data_from_a_fifo_fails_at_once(tmp_path: Path) -> None:

    os.mkfifo(tmp_path / "pipe.jsonl")
    argv = ["data", "reasongym/SVAMP-v0", "--out", str(tmp_path / "out"), "--split", "test"]
    done = subprocess.run(
        [sys.executable, "-m", "reasongym", *argv, "--from", str(tmp_path / "pipe.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 2, done.stderr
    assert "pipe.jsonl' is not a regular file (a pipe, device or socket)" in done.stderr


def test_data_from_a_folder_or_a_long_csv_field_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["data", "reasongym/SVAMP-v0", "--out", str(tmp_path / "out"), "--split", "test", "--from"]
    (tmp_path / "folder.jsonl").mkdir()
    code, _, err = run_main([*argv, str(tmp_path / "folder.jsonl")], capsys)
    assert code == 2 and "folder.jsonl' is a folder; expected a .jsonl, .json, .csv, .parquet file" in err
    long = "x" * 200_000
    (tmp_path / "rows.csv").write_text(f"id,Body,Question,Answer\n1,{long},How many?,3\n", encoding="utf-8")
    code, out, err = run_main([*argv, str(tmp_path / "rows.csv")], capsys)
    assert "_csv.Error" not in err and "field larger than field limit" not in err
    assert code == 0 or (code == 2 and "rows.csv" in err)
