"""``reasongym regrade``: records graded under older rules change, are reported by reason, in a new file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import reasongym
from reasongym.envs.core import format_final_answer
from reasongym.errors import ConfigError
from reasongym.evaluation import grade_completions
from reasongym.evaluation.regrade import regrade
from reasongym.verifiers.version import verifier_version

ENV = "reasongym/Arithmetic-v0"
# A verdict pinned from before commit c021dd1: the extractor read 'The answer is 3.</think>' as '3.</think>',
# wrong; today the </think> ends the sentence and the answer is 3.
OLD_THINK_VERDICT = {
    "index": 0,
    "id": "0",
    "kind": "math",
    "gold": "3",
    "n": 2,
    "completions": ["The answer is 3.</think>", "The answer is \\boxed{4}."],
    "extracted": ["3.</think>", "4"],
    "outcomes": ["wrong", "wrong"],
    "correct": [False, False],
    "verifier": "math/v0",
}

MATH_NOW = verifier_version("math")
"""The math rules' version today: what a regrade writes."""


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_record_graded_under_a_pinned_older_verdict_changes_and_is_reported(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.jsonl", [OLD_THINK_VERDICT])
    before = old.read_bytes()
    report = regrade(old)
    assert old.read_bytes() == before  # the old file is never written
    assert [(c.line, c.sample, c.before, c.after, c.extracted) for c in report.changes] == [
        (1, 0, "wrong", "correct", ("3.</think>", "3"))
    ]
    (group,) = report.groups()
    assert group[:2] == ("wrong", "correct")
    assert (report.before["accuracy"], report.after["accuracy"]) == (0.0, 0.5)
    assert (report.before["pass@1"], report.after["pass@1"]) == (0.0, 0.5)
    (new,) = map(json.loads, Path(report.out_path).read_text().splitlines())
    assert new["correct"] == [True, False] and new["verifier"] == MATH_NOW
    assert new["regraded_from"]["verifier"] == "math/v0" and new["regraded_from"]["correct"] == [False, False]
    assert "wrong -> correct (1)" in report.table()


def test_environment_records_are_rebuilt_from_their_replay_fields(tmp_path: Path) -> None:
    env = reasongym.make(ENV).unwrapped
    rows = [
        {"index": i, "completions": [format_final_answer("math", env.problem_at(i, "test").answer), "zzz"]}
        for i in range(3)
    ]
    graded = tmp_path / "graded.jsonl"
    grade_completions(
        _write(tmp_path / "in.jsonl", rows), ENV, out_path=graded, progress=False, verbose=False
    )
    records = [json.loads(line) for line in graded.read_text().splitlines()]
    assert all(r["verifier"] == MATH_NOW and r["problem_seed"] == 0 and r["reasons"] for r in records)
    records[1].update(correct=[False, False], outcomes=["wrong", "unparseable"], verifier="math/v0")
    report = regrade(_write(tmp_path / "tampered.jsonl", records), tmp_path / "new.jsonl")
    assert [(c.line, c.sample, c.before, c.after) for c in report.changes] == [(2, 0, "wrong", "correct")]
    assert report.not_regradable == 0 and report.verdicts == 6
    assert report.versions == {(MATH_NOW, MATH_NOW): 2, ("math/v0", MATH_NOW): 1}


def test_a_training_sample_row_replays_from_the_step_info(tmp_path: Path) -> None:
    env = reasongym.make(ENV, source_kwargs={"seed": 7}).unwrapped
    env.reset(seed=0, options={"index": 4, "difficulty": 2})
    completion = format_final_answer("math", env.problem.answer)
    info = env.step(completion)[4]
    assert info["replay"] == {
        "env_id": ENV,
        "split": "train",
        "index": 4,
        "difficulty": 2,
        "seed": 7,
        "problem_id": env.problem.id,
    }
    row = {
        "step": 1,
        "prompt": "...",
        "completion": completion,
        "reward": 0.0,
        "correct": False,
        "outcome": "wrong",
        "extracted": None,
        **info["replay"],
        "verifier": "math/v0",
    }
    report = regrade(_write(tmp_path / "samples.jsonl", [row]))
    assert [(c.before, c.after) for c in report.changes] == [("wrong", "correct")]
    (new,) = map(json.loads, Path(report.out_path).read_text().splitlines())
    assert (new["correct"], new["outcome"], new["verifier"]) == (True, "correct", MATH_NOW)


def test_rows_without_replay_fields_are_copied_and_counted(tmp_path: Path) -> None:
    row = {"step": 1, "prompt": "p", "completion": "c", "reward": 0.0, "correct": False, "env_id": ENV}
    report = regrade(_write(tmp_path / "samples.jsonl", [row]))
    assert (report.not_regradable, report.changes) == (1, [])
    assert json.loads(Path(report.out_path).read_text()) == row


FROM_BEFORE = Path(__file__).with_name("fixtures") / "smollm2_arithmetic_graded_math_v1.jsonl"
"""Six real records written by ``grade_completions`` at commit 63ede07 (math/v1, before issue 23's third round):
SmolLM2's eight samples on Arithmetic-v0 test problems, from benchmarks/results/smollm2/arith1_pass8.jsonl."""


def test_a_record_from_before_the_version_raise_reports_its_changes_and_versions(tmp_path: Path) -> None:
    report = regrade(FROM_BEFORE, tmp_path / "now.jsonl")
    assert report.versions == {("math/v1", MATH_NOW): 6}
    changes = [(c.line, c.sample, c.before, c.after, c.extracted) for c in report.changes]
    assert changes == [
        (2, 1, "unparseable", "wrong", ("0.0344 (rounded to two decimal places)", "0.0344")),
        (3, 4, "unparseable", "wrong", (None, "24982 * 400")),
        (4, 4, "unparseable", "wrong", ("109, not 32 + 35 which is 77", "109")),
        (5, 1, "unparseable", "wrong", ("220 is the result of the calculation", "220")),
        (
            6,
            3,
            "unparseable",
            "wrong",
            (
                "only as good as the last step-step process that gets you to the final answer",
                "you to the final answer",
            ),
        ),
    ]
    assert all(c.versions == ("math/v1", MATH_NOW) for c in report.changes)
    assert report.unversioned_changes() == []
    groups = {key: len(found) for key, found in report.groups().items()}
    assert groups[("unparseable", "wrong", "# is not #")] == 3  # '109 is not 67', '220 is not 129', ...
    table = report.table()
    assert f"graded under math/v1, now {MATH_NOW}: 6 records, 5 verdicts changed" in table
    assert "warning" not in table
    assert report.before == report.after  # the five were wrong either way: no metric moves
    regraded = [json.loads(line) for line in Path(report.out_path).read_text().splitlines()]
    assert {r["verifier"] for r in regraded} == {MATH_NOW}
    assert {r["regraded_from"]["verifier"] for r in regraded} == {"math/v1"}


def test_a_change_under_an_unchanged_version_is_flagged(tmp_path: Path) -> None:
    record = dict(OLD_THINK_VERDICT, verifier=MATH_NOW)  # today's version, yet its verdict changes
    report = regrade(_write(tmp_path / "old.jsonl", [record]))
    assert [c.versions for c in report.unversioned_changes()] == [(MATH_NOW, MATH_NOW)]
    assert "warning: 1 verdicts changed under an unchanged verifier version" in report.table()


def test_regrade_refuses_to_overwrite(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.jsonl", [OLD_THINK_VERDICT])
    with pytest.raises(ConfigError, match="writes a new file"):
        regrade(old, old)


def test_reasoning_gym_records_regrade_with_the_tasks_grader(tmp_path: Path) -> None:
    pytest.importorskip("reasoning_gym")
    env_id = "reasoning_gym/prime_factorization-v0"
    env = reasongym.make(env_id).unwrapped
    gold = env.problem_at(0, "test").answer
    rows = [{"index": 0, "completions": [f"<answer>{gold}</answer>", "<answer>zzz</answer>"]}]
    graded = tmp_path / "graded.jsonl"
    grade_completions(
        _write(tmp_path / "in.jsonl", rows), env_id, out_path=graded, progress=False, verbose=False
    )
    (record,) = map(json.loads, graded.read_text().splitlines())
    assert record["correct"] == [True, False] and record["verifier"].startswith(
        "reasoning_gym/prime_factorization:task+tagged/v2@rg"
    )
    record.update(correct=[False, False], outcomes=["wrong", "refused"])
    report = regrade(_write(tmp_path / "old.jsonl", [record]))
    assert [(c.sample, c.after) for c in report.changes] == [(0, "correct")]


def test_the_command_prints_the_changes_and_a_json_summary(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.jsonl", [OLD_THINK_VERDICT])
    out = subprocess.run(
        [sys.executable, "-m", "reasongym", "regrade", str(old), "--out", str(tmp_path / "n.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(out.stdout.splitlines()[-1])
    assert (summary["changed"], summary["before"]["accuracy"], summary["after"]["accuracy"]) == (1, 0.0, 0.5)
    assert summary["versions"] == {f"math/v0 -> {MATH_NOW}": 1} and summary["changed_under_same_version"] == 0
    assert "wrong -> correct (1)" in out.stdout


def test_regrade_reports_maj_at_k_over_every_subset_and_says_the_old_one_was_first_k(tmp_path: Path) -> None:
    from reasongym.evaluation.report import MAJ_AT_K_NOTE

    record = {**OLD_THINK_VERDICT, "completions": ["The answer is \\boxed{4}.", "The answer is 3.</think>"]}
    record["extracted"], record["n"] = ["4", "3.</think>"], 2
    report = regrade(_write(tmp_path / "old.jsonl", [record]))
    # after: one right (3) and one wrong (4): maj@1 = pass@1 = 0.5, maj@2 = the 1-1 tie, half; a first-k vote
    # would have given maj@1 0 (the first sample is wrong) and maj@2 0 (ties went to the first answer)
    assert report.after["maj@1"] == report.after["pass@1"] == 0.5
    assert report.after["maj@2"] == 0.5
    assert MAJ_AT_K_NOTE in report.table()
