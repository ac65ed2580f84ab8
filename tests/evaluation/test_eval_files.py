"""Evaluation files: resume only into the same evaluation, one writer at a time, no temporary files.

Issue 16, items 3, 4 and 10: a resume used to reuse records made with another temperature, seed,
checkpoint or length; two evaluations on one file both exited 0 with one's records lost; ``eval
--completions`` wrote only at the end through a temporary file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_runner import ENV, ScriptedGenerator  # pytest puts this folder on sys.path

from reasongym.errors import ConfigError
from reasongym.evaluation import evaluate, grade_completions, load_records, load_report

ROOT = Path(__file__).resolve().parents[2]


def _evaluate(out: Path, **overrides: object) -> object:
    options = {"n": 2, "num_problems": 3, "difficulty": 1, "batch_size": 1, "out_path": out}
    options.update(progress=False, verbose=False, **overrides)
    generator = options.pop("generator", ScriptedGenerator())
    return evaluate(generator, ENV, **options)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"temperature": 1.0}, "temperature=0.6 there, temperature=1.0 now"),
        ({"seed": 3}, "seed=0 there, seed=3 now"),
        ({"max_new_tokens": 64}, "max_new_tokens=512 there, max_new_tokens=64 now"),
        ({"top_p": 0.9}, "top_p=1.0 there, top_p=0.9 now"),
        ({"n": 4}, "n=2 there, n=4 now"),
        ({"difficulty": 2}, "difficulty=1 there, difficulty=2 now"),
        ({"env_kwargs": {"instruction": "Think."}}, "env_config="),
    ],
)
def test_resume_into_another_evaluation_names_the_field_that_differs(
    tmp_path: Path, change: dict, message: str
) -> None:
    out = tmp_path / "eval.jsonl"
    _evaluate(out)
    before = out.read_bytes()
    with pytest.raises(ConfigError) as error:
        _evaluate(out, **change)
    assert message in str(error.value)
    assert "pass another out_path (--out) to keep both, or resume=False (--no-resume)" in str(error.value)
    assert out.read_bytes() == before  # refused before touching the file
    assert _evaluate(out, resume=False, **change).num_problems == 3  # --no-resume starts fresh


def test_records_store_their_settings_and_the_same_settings_resume(tmp_path: Path) -> None:
    out = tmp_path / "eval.jsonl"
    _evaluate(out, num_problems=2)
    settings = load_records(out)[0]["settings"]
    assert {key: settings[key] for key in ("temperature", "top_p", "seed", "max_new_tokens", "n")} == {
        "temperature": 0.6,
        "top_p": 1.0,
        "seed": 0,
        "max_new_tokens": 512,
        "n": 2,
    }
    assert settings["model"] == "ScriptedGenerator" and settings["reasongym"]
    generator = ScriptedGenerator()
    _evaluate(out, generator=generator)  # one more problem, same settings: resumed
    assert len(generator.calls) == 1
    assert [r["index"] for r in load_records(out)] == [0, 1, 2]


def test_a_file_without_settings_is_refused_on_resume_but_still_compares(tmp_path: Path) -> None:
    out = tmp_path / "old.jsonl"
    _evaluate(out)
    old = [{k: v for k, v in r.items() if k != "settings"} for r in load_records(out)]
    out.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    with pytest.raises(ConfigError, match="do not say how they were made .written by an older reasongym."):
        _evaluate(out)
    assert load_report(out).num_problems == 3  # reading old files still works


def test_a_run_folder_that_trained_on_is_another_checkpoint(tmp_path: Path, tiny) -> None:
    from reasongym.policy.checkpoints import save_checkpoint

    model, tokenizer = tiny()
    run = tmp_path / "run"
    save_checkpoint(run, 1, model=model)
    tokenizer.save_pretrained(run)
    out = tmp_path / "eval.jsonl"
    options = {"n": 1, "num_problems": 1, "max_new_tokens": 4, "device": "cpu"}
    _evaluate(out, generator=str(run), **options)
    save_checkpoint(run, 2, model=model)
    with pytest.raises(ConfigError, match="checkpoint='step-000001' there, checkpoint='step-000002' now"):
        _evaluate(out, generator=str(run), **options)


# ---------------------------------------------------------------------------------------------- writers

HOLDER = """
import sys, time
from pathlib import Path
from reasongym.evaluation import evaluate
from reasongym.generation import Completion

out, started, release = map(Path, sys.argv[1:4])

class Slow:
    def generate(self, prompts, params):
        started.touch()
        while not release.exists():
            time.sleep(0.05)
        return [[Completion("\\\\boxed{7}", (1,), (0.0,), "stop")] * params.n for _ in prompts]

report = evaluate(Slow(), "reasongym/Arithmetic-v0", n=2, num_problems=4, difficulty=1, batch_size=2,
                  out_path=out, progress=False, verbose=False)
print(report.num_problems)
"""


def _python(*args: str, **kwargs: object) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def _wait_for(path: Path, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the first process never started"
        time.sleep(0.05)


@pytest.mark.slow  # a second process evaluates beside this one
def test_a_second_evaluation_on_the_same_file_fails_at_once(tmp_path: Path) -> None:
    out, started, release = tmp_path / "eval.jsonl", tmp_path / "started", tmp_path / "release"
    first = _python("-c", HOLDER, str(out), str(started), str(release))
    try:
        _wait_for(started, first)
        second = _python(
            "-m",
            "reasongym",
            "eval",
            "--completions",
            str(tmp_path / "c.jsonl"),
            ENV,
            "--out",
            str(out),
            "--no-progress",
        )
        (tmp_path / "c.jsonl").write_text('{"index": 0, "completion": "7"}\n', encoding="utf-8")
        _, stderr = second.communicate(timeout=120)
        assert second.returncode == 1, stderr
        assert f"evaluation file {str(out)!r} is in use by another process (pid {first.pid})" in stderr
        assert (
            "two writers would mix their records; wait for it to finish, or pass another out_path" in stderr
        )
    finally:
        release.touch()
        stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    assert stdout.strip() == "4"
    assert [r["index"] for r in load_records(out)] == [0, 1, 2, 3]  # the first writer lost nothing


# ---------------------------------------------------------------------------------------------- stored


def _completions_file(path: Path, rows: int) -> Path:
    lines = [{"index": i, "completions": [f"\\boxed{{{i}}}", "no answer"]} for i in range(rows)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_grading_stored_completions_writes_as_it_goes_and_resumes(tmp_path: Path) -> None:
    source = _completions_file(tmp_path / "c.jsonl", 5)
    out = tmp_path / "graded.jsonl"
    full = grade_completions(source, ENV, out_path=out, progress=False, verbose=False)
    lines = out.read_text(encoding="utf-8").splitlines()
    out.write_text("\n".join(lines[:2]) + "\n" + lines[2][:30], encoding="utf-8")  # killed mid-line
    resumed = grade_completions(source, ENV, out_path=out, progress=False, verbose=False)
    assert resumed.metrics == full.metrics
    assert out.read_text(encoding="utf-8").splitlines() == lines
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl", "graded.jsonl"]  # no temporary file


def test_resuming_grading_of_other_completions_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "graded.jsonl"
    grade_completions(
        _completions_file(tmp_path / "a.jsonl", 2), ENV, out_path=out, progress=False, verbose=False
    )
    with pytest.raises(ConfigError, match="completions=.*a.jsonl' there, completions=.*b.jsonl' now"):
        grade_completions(
            _completions_file(tmp_path / "b.jsonl", 2), ENV, out_path=out, progress=False, verbose=False
        )
    source = tmp_path / "a.jsonl"
    _completions_file(source, 3)
    source.write_text(source.read_text().replace("boxed{0}", "boxed{9}"), encoding="utf-8")
    with pytest.raises(ConfigError, match="holds graded records of other completions .input line 1 differs."):
        grade_completions(source, ENV, out_path=out, progress=False, verbose=False)


@pytest.mark.slow  # a process killed mid-grading, then a resume
def test_grading_killed_by_sigkill_leaves_no_temporary_file_and_resumes(tmp_path: Path) -> None:
    source = _completions_file(tmp_path / "c.jsonl", 3000)
    out = tmp_path / "graded.jsonl"
    args = ("-m", "reasongym", "eval", "--completions", str(source), ENV, "--out", str(out), "--no-progress")
    process = _python(*args)
    deadline = time.monotonic() + 120
    while not (out.exists() and out.stat().st_size > 2000):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl", "graded.jsonl"]
    kept = len(load_records(out, cut_off_last_line="skip"))
    assert 0 < kept < 3000
    resumed = _python(*args, "--json")
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    assert json.loads(stdout.splitlines()[-1])["num_problems"] == 3000
    assert [r["index"] for r in load_records(out, cut_off_last_line="error")] == list(range(3000))
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl", "graded.jsonl"]


def test_grading_with_a_rounding_policy_records_it(tmp_path: Path) -> None:
    source = tmp_path / "rounded.jsonl"
    rows = [{"gold": "299.94", "completions": [r"\boxed{300}", r"\boxed{310}"]}]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    exact = grade_completions(source, out_path=tmp_path / "exact.jsonl", progress=False, verbose=False)
    shown = grade_completions(
        source, out_path=tmp_path / "shown.jsonl", tolerance="shown", progress=False, verbose=False
    )
    assert exact.metrics != shown.metrics
    (record,) = load_records(tmp_path / "shown.jsonl")
    assert record["correct"] == [True, False] and record["verifier"].endswith("+shown")
    with pytest.raises(ConfigError, match="tolerance='near' is not a rounding policy"):
        grade_completions(source, tolerance="near", progress=False, verbose=False)
    with pytest.raises(ConfigError, match="holds graded records|tolerance"):
        grade_completions(source, out_path=tmp_path / "shown.jsonl", progress=False, verbose=False)
