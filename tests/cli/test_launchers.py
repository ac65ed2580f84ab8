"""The command line under the launchers a user already has: ``torchrun`` and ``accelerate launch``, 2 CPU processes.

Each launch trains (or evaluates) as one job: one run folder, written by rank 0, whose path the other rank
learned; one records file, in problem order, equal to what one process writes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from reasongym.evaluation import evaluate
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"
TRAIN = [
    "train",
    "grpo",
    "--model",
    "tiny",
    "--env",
    ENV,
    "--difficulty",
    "1",
    "--max-steps",
    "2",
    "--num-prompts",
    "2",
    "--group-size",
    "2",
    "--max-new-tokens",
    "8",
    "--no-progress-bar",
]
EVAL = {"n": 2, "num_problems": 6, "batch_size": 2, "temperature": 1.0, "difficulty": 1, "max_new_tokens": 12}


def _run(command: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def _torchrun(*args: str) -> subprocess.CompletedProcess:
    return _run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            "-m",
            "reasongym",
            *args,
        ]
    )


def _one_run_folder(root: Path, done: subprocess.CompletedProcess) -> Path:
    assert done.returncode == 0, done.stderr[-3000:]
    folders = [path for path in root.iterdir() if path.name != "latest"]  # `latest` links to the run
    assert len(folders) == 1, folders  # one job, one folder: the other rank used rank 0's
    assert (root / "latest").resolve() == folders[0].resolve()
    # rank 0 alone says which preset it chose
    assert done.stderr.count("reasongym: using preset 'tiny'") == 1, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])  # rank 0 alone prints the summary
    assert summary["run_dir"] == str(folders[0]) and summary["steps"] == 2
    assert [r["step"] for r in read_metrics(folders[0])] == [1, 2]  # rank 0 alone logs
    assert (folders[0] / "checkpoints" / "step-000002").is_dir() and (folders[0] / "run.json").is_file()
    return folders[0]


@pytest.fixture(scope="module")
def torchrun_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("torchrun")
    return _one_run_folder(root, _torchrun(*TRAIN, "--output-dir", str(root)))


@pytest.mark.slow
def test_torchrun_trains_one_run(torchrun_run: Path) -> None:
    assert json.loads((torchrun_run / "run.json").read_text())["algo"] == "grpo"


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("accelerate") is None and not Path(sys.executable).with_name("accelerate").exists(),
    reason="accelerate is not installed",
)
def test_accelerate_launch_trains_one_run(tmp_path: Path) -> None:
    with socket.socket() as probe:  # accelerate's default port may be taken by another job
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    launcher = str(Path(sys.executable).with_name("accelerate"))
    # --multi_gpu is accelerate's switch for its torchrun launcher; without CUDA the processes use gloo.
    command = [
        launcher,
        "launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        port,
        "-m",
        "reasongym",
    ]
    _one_run_folder(tmp_path, _run([*command, *TRAIN, "--output-dir", str(tmp_path)]))


@pytest.mark.slow
def test_torchrun_evaluation_resumes_one_process_records_in_problem_order(
    torchrun_run: Path, tmp_path: Path
) -> None:
    expected = tmp_path / "one.jsonl"
    evaluate(str(torchrun_run), ENV, out_path=expected, progress=False, verbose=False, device="cpu", **EVAL)
    shared = tmp_path / "shared.jsonl"  # one process did the first 2 problems; 2 processes do the rest
    evaluate(
        str(torchrun_run),
        ENV,
        out_path=shared,
        progress=False,
        verbose=False,
        device="cpu",
        **{**EVAL, "num_problems": 2},
    )
    # --num-samples: torchrun's parser would take --n for an abbreviation of one of its own flags
    flags = [
        f"--{key.replace('_', '-')}={value}"
        for key, value in {**EVAL, "num_samples": 2}.items()
        if key != "n"
    ]
    done = _torchrun("eval", str(torchrun_run), ENV, "--out", str(shared), "--no-progress", "--json", *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    assert shared.read_text() == expected.read_text()  # the same records, seeds and order
    report = json.loads(done.stdout.strip().splitlines()[-1])  # rank 0 alone prints
    assert report["num_problems"] == 6
    assert not list(tmp_path.glob(".shared.jsonl.rank*"))
