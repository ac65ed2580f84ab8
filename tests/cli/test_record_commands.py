"""``reasongym regrade`` and ``compare``: records are never trusted (a data folder they name, another
environment, a seed given to a dataset, NaN in ``correct``), every bad record is named by file, line and field,
and a full disk leaves no output."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli.running import run_main

SVAMP = "reasongym/SVAMP-v0"


ENV = "reasongym/Arithmetic-v0"


needs_svamp = pytest.mark.skipif(
    not (Path(os.environ.get("REASONGYM_DATA_DIR", "/nonexistent")) / "svamp" / "test.jsonl").is_file(),
    reason="needs REASONGYM_DATA_DIR with svamp/test.jsonl",
)


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


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
    code, out, err = run_main(["regrade", str(_write(tmp_path / "r.jsonl", [record]))], capsys)
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
    code, out, err = run_main(["regrade", str(_write(tmp_path / "r.jsonl", [record])), SVAMP], capsys)
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["not_regradable"] == 1 and summary["settings_differ"] == 1
    assert f"are of {ENV!r}, not of {SVAMP!r}" in out


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
    code, _, err = run_main([command, str(path)], capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{path}:2: {message}" in err


def test_compare_refuses_nan_in_correct(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps(GRADED) + "\n" + json.dumps(GRADED).replace("[false, false]", "[NaN, 1]") + "\n"
    )
    code, _, err = run_main(["compare", str(path)], capsys)
    assert code == 2 and f"{path}:2: field 'correct' = [nan, 1] is not allowed" in err


@needs_svamp
def test_regrade_refuses_a_seed_given_to_a_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {"index": 0, "env_id": SVAMP, "split": "test", "n": 1, "completions": ["51"], "problem_seed": 3}
    code, _, err = run_main(["regrade", str(_write(tmp_path / "r.jsonl", [record]))], capsys)
    assert (
        code == 2
        and "line 1: problem seed 3 does not fit reasongym/SVAMP-v0" in err
        and "Traceback" not in err
    )


def test_regrade_on_a_full_disk_leaves_no_output(
    tmp_path: Path, full_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {"gold": "1", "kind": "math", "completions": ["\\boxed{1}" + " pad" * 20_000], "correct": [True]}
    source = _write(tmp_path / "r.jsonl", [record] * 3)
    code, _, err = run_main(["regrade", str(source), "--out", str(full_disk / "out.jsonl")], capsys)
    assert code == 1 and "No space left on device" in err
    assert not (full_disk / "out.jsonl").exists()
