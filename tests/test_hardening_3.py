"""Issue 36, items 6 to 16: records that must not be trusted, config values that wreck a model, hangs and
tracebacks where a one-line error is promised, misleading messages and leftovers. Each test uses the input
that broke the code before the fix."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from reasongym.cli import main
from reasongym.errors import ConfigError

SVAMP = "reasongym/SVAMP-v0"
ENV = "reasongym/Arithmetic-v0"
TRAIN = ["train", "grpo", "--env", ENV, "--model", "tiny", "--no-progress-bar"]
needs_svamp = pytest.mark.skipif(
    not (Path(os.environ.get("REASONGYM_DATA_DIR", "/nonexistent")) / "svamp" / "test.jsonl").is_file(),
    reason="needs REASONGYM_DATA_DIR with svamp/test.jsonl",
)


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------------- item 6


@needs_svamp
def test_regrade_never_reads_a_data_folder_named_by_the_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    real = (Path(os.environ["REASONGYM_DATA_DIR"]) / "svamp" / "test.jsonl").read_text().splitlines()
    first = json.loads(real[0])
    _write(planted / "test.jsonl", [{**first, "answer": "999"}, *map(json.loads, real[1:])])
    record = {
        "index": 0,
        "env_id": SVAMP,
        "split": "test",
        "n": 1,
        "completions": ["The answer is \\boxed{999}."],
        "extracted": ["999"],
        "outcomes": ["wrong"],
        "correct": [False],
        "verifier": "math/v2",
        "settings": {"env_config": {"source_kwargs": {"data_dir": str(planted)}}},
    }
    code, out, err = _run(["regrade", str(_write(tmp_path / "r.jsonl", [record]))], capsys)
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["after"]["accuracy"] == 0.0  # graded against the registered data, not the planted gold
    assert summary["settings_differ"] == 1
    assert "1 records name environment settings that differ from those regraded against" in out


@needs_svamp
def test_regrade_against_a_named_environment_reports_records_of_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {
        "index": 0,
        "env_id": ENV,
        "split": "test",
        "n": 1,
        "completions": ["51"],
        "extracted": ["51"],
        "outcomes": ["correct"],
        "correct": [True],
        "verifier": "math/v2",
    }
    code, out, err = _run(["regrade", str(_write(tmp_path / "r.jsonl", [record])), SVAMP], capsys)
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["not_regradable"] == 1 and summary["settings_differ"] == 1
    assert f"are of {ENV!r}, not of {SVAMP!r}" in out


# ---------------------------------------------------------------------------------------------- item 9

GRADED = {
    "index": 0,
    "env_id": ENV,
    "split": "test",
    "n": 2,
    "completions": ["1", "2"],
    "extracted": ["1", "2"],
    "outcomes": ["wrong", "wrong"],
    "correct": [False, False],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"correct": ["yes", "no"]}, "field 'correct' = ['yes', 'no'] is not allowed; expected a list of"),
        ({"index": None}, "field 'index' = None is not allowed; expected an integer >= 0"),
        ({"index": float("nan")}, "field 'index' = nan is not allowed; expected an integer >= 0"),
        ({"settings": [1, 2]}, "field 'settings' = [1, 2] is not allowed; expected a mapping"),
        ({"verifier": {"a": 1}}, "field 'verifier' = {'a': 1} is not allowed; expected a string"),
        ({"settings": {"env_config": "abc"}}, "field 'settings.env_config' = 'abc' is not allowed"),
        ({"correct": [True]}, "field 'correct' holds 1 entries but 'completions' holds 2"),
    ],
)
@pytest.mark.parametrize("command", ["regrade", "compare"])
def test_every_command_that_reads_records_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, change: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path / "r.jsonl", [GRADED, {**GRADED, **change}])
    code, _, err = _run([command, str(path)], capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{path}:2: {message}" in err


def test_compare_refuses_nan_in_correct(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps(GRADED) + "\n" + json.dumps(GRADED).replace("[false, false]", "[NaN, 1]") + "\n"
    )
    code, _, err = _run(["compare", str(path)], capsys)
    assert code == 2 and f"{path}:2: field 'correct' = [nan, 1] is not allowed" in err


# ---------------------------------------------------------------------------------------------- item 13


def test_yaml_reads_exponent_floats_as_numbers(tmp_path: Path) -> None:
    from reasongym.cli.args import read_config_file

    (tmp_path / "c.yaml").write_text("lr: 1e-4\nb: -2E+3\nc: .5e1\nd: 1e4x\n")
    assert read_config_file(tmp_path / "c.yaml") == {"lr": 1e-4, "b": -2000.0, "c": 5.0, "d": "1e4x"}


def test_yaml_refuses_duplicate_keys(tmp_path: Path) -> None:
    from reasongym.cli.args import read_config_file

    (tmp_path / "c.yaml").write_text("lr: 1e-4\nrun:\n  a: 1\n  a: 2\n")
    with pytest.raises(ConfigError, match=r"c.yaml' could not be parsed: line 4: duplicate key 'a'"):
        read_config_file(tmp_path / "c.yaml")


@needs_svamp
def test_regrade_refuses_a_seed_given_to_a_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {"index": 0, "env_id": SVAMP, "split": "test", "n": 1, "completions": ["51"], "problem_seed": 3}
    code, _, err = _run(["regrade", str(_write(tmp_path / "r.jsonl", [record]))], capsys)
    assert (
        code == 2
        and "line 1: problem seed 3 does not fit reasongym/SVAMP-v0" in err
        and "Traceback" not in err
    )


# ---------------------------------------------------------------------------------------------- items 7, 10


def _config_classes() -> list[type]:
    from reasongym.agents.config import LoRAConfig, RolloutConfig, RunConfig
    from reasongym.agents.dapo import DAPOConfig
    from reasongym.agents.distill import DistillConfig
    from reasongym.agents.grpo import GRPOConfig
    from reasongym.agents.offpolicy import ImportanceSamplingConfig
    from reasongym.agents.sft import SFTConfig
    from reasongym.agents.star import STaRConfig
    from reasongym.evaluation.config import EvalConfig
    from reasongym.generation.engines import VLLMSettings

    return [
        LoRAConfig,
        RunConfig,
        RolloutConfig,
        VLLMSettings,
        ImportanceSamplingConfig,
        GRPOConfig,
        DAPOConfig,
        STaRConfig,
        SFTConfig,
        DistillConfig,
        EvalConfig,
    ]


def _numeric_fields(cls: type) -> list[str]:
    import dataclasses
    import typing

    from reasongym.ranges import _numeric

    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if _numeric(hints[f.name])[0]]


def test_every_numeric_field_of_every_config_has_a_range() -> None:
    from reasongym.ranges import FIELD_RANGES

    fields = {f"{cls.__name__}.{name}" for cls in _config_classes() for name in _numeric_fields(cls)}
    assert fields - set(FIELD_RANGES) == set() and set(FIELD_RANGES) - fields == set()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 10**21, 10**400])
def test_nan_infinity_and_huge_numbers_are_refused_in_every_numeric_field(bad: float) -> None:
    for cls in _config_classes():
        for name in _numeric_fields(cls):
            with pytest.raises(ConfigError, match=rf"{name}=.* is not allowed; expected"):
                cls(**{name: bad})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--weight-decay", "1e18"], "weight_decay=1e+18 is not allowed; expected a float in [0, 1]"),
        (
            ["--lora.rank", str(10**21)],
            f"lora.rank={10**21} is not allowed; expected an integer in [0, 65536]",
        ),
        (
            ["--eval-problems", str(10**21)],
            f"eval_problems={10**21} is not allowed; expected an integer in [1, ",
        ),
        (["--lr", "nan"], "lr=nan is not allowed; expected a float in [0, 1]"),
    ],
)
def test_train_refuses_values_that_wreck_a_model(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = _run([*TRAIN, *args], capsys)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--overlong-penalty", "overlong_penalty=nan is not allowed; expected a float in [0, 1e+06]"),
        (
            "--zero-variance-tolerance",
            "zero_variance_tolerance=nan is not allowed; expected a float in [0, 1e+06]",
        ),
    ],
)
def test_dapo_refuses_nan(capsys: pytest.CaptureFixture[str], flag: str, message: str) -> None:
    argv = ["train", "dapo", "--env", ENV, "--model", "tiny", "--no-progress-bar", flag, "nan"]
    code, _, err = _run(argv, capsys)
    assert code == 2 and message in err


def test_eval_refuses_a_huge_problem_count_before_the_model_loads(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["eval", "/nonexistent-model", ENV, "--num-problems", str(10**21)], capsys)
    assert (
        code == 2 and f"num_problems={10**21} is not allowed; expected an integer in [1, 2147483647]" in err
    )


# ---------------------------------------------------------------------------------------------- item 8


def test_data_from_a_fifo_fails_at_once(tmp_path: Path) -> None:
    import subprocess
    import sys

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
    code, _, err = _run([*argv, str(tmp_path / "folder.jsonl")], capsys)
    assert code == 2 and "folder.jsonl' is a folder; expected a .jsonl, .json, .csv, .parquet file" in err
    long = "x" * 200_000
    (tmp_path / "rows.csv").write_text(f"id,Body,Question,Answer\n1,{long},How many?,3\n", encoding="utf-8")
    code, out, err = _run([*argv, str(tmp_path / "rows.csv")], capsys)
    assert "_csv.Error" not in err and "field larger than field limit" not in err
    assert code == 0 or (code == 2 and "rows.csv" in err)


# ---------------------------------------------------------------------------------------------- item 11


def test_a_second_eval_on_a_locked_out_fails_before_its_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    import reasongym.distributed
    import reasongym.evaluation.loading

    def too_early(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch or the model was touched before the lock was checked")

    # Starting torch.distributed and hashing the weights (model_identity) come before the model's load; the
    # lock is checked before either.
    monkeypatch.setattr(reasongym.distributed, "init_distributed", too_early)
    monkeypatch.setattr(reasongym.evaluation.loading, "model_identity", too_early)

    out = tmp_path / "out.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom reasongym.runs.locks import exclusive_lock\n"
            f"with exclusive_lock({str(out)!r}, what='x', hint='y'):\n    print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        # A model path that does not exist fails at its load: the lock must be named first.
        code, _, err = _run(["eval", str(tmp_path / "no-model"), ENV, "--out", str(out)], capsys)
    finally:
        holder.kill()
        holder.wait()
    assert code == 1 and f"evaluation file {str(out)!r} is in use by another process" in err


# ---------------------------------------------------------------------------------------------- item 16

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
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.splitlines()[-1] == "reasongym: interrupted again while stopping; exiting now"


# ---------------------------------------------------------------------------------------------- item 14


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


# ---------------------------------------------------------------------------------------------- item 12


@pytest.fixture
def full_disk(tmp_path: Path) -> Any:
    """A real 128 KiB file system (tmpfs), mounted for the test; skipped where mounting is not allowed."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


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


def test_run_json_on_a_full_disk_says_so_and_leaves_no_temporary(full_disk: Path) -> None:
    from reasongym.runs.metrics import write_json_atomic

    (full_disk / "filler").write_bytes(b"x" * (120 << 10))
    with pytest.raises(OSError, match=rf"^the disk is full: cannot write '{full_disk}/run.json'"):
        write_json_atomic(full_disk / "run.json", {"text": "y" * (64 << 10)})
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]


def test_regrade_on_a_full_disk_leaves_no_output(
    tmp_path: Path, full_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {"gold": "1", "kind": "math", "completions": ["\\boxed{1}" + " pad" * 20_000], "correct": [True]}
    source = _write(tmp_path / "r.jsonl", [record] * 3)
    code, _, err = _run(["regrade", str(source), "--out", str(full_disk / "out.jsonl")], capsys)
    assert code == 1 and "No space left on device" in err
    assert not (full_disk / "out.jsonl").exists()
