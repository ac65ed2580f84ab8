"""benchmarks/study.py and distill: their dry passes (the tiny model, a two-step warm start, one
short step an arm) write every table and plot, and a rerun skips what is done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.conftest import run_script


@pytest.mark.slow  # three arms on the tiny model (a minute on 2 loaded cores)
def test_the_study_dry_pass_writes_its_tables_and_plots_and_resumes(tmp_path: Path) -> None:
    flags = ("--dry", "--quick", "--seeds", "0", "--out", str(tmp_path))
    done = run_script("benchmarks.study", *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(summary["arms"]) == {"warm_start", "grpo", "dapo", "shuffled_reward"}
    assert summary["settings"] == {"budget_tokens": 64, "eval_problems": 4, "warm_max_steps": 2}
    for name in ("table.md", "diagnostics.md", "wall.md", "accuracy_vs_tokens.png", "accuracy_vs_wall.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert all(len(r["load_start"]) == 3 and r["cpu_s"] > 0 for r in records)
    again = run_script("benchmarks.study", *flags)
    assert again.returncode == 0 and "pass@1" not in again.stdout.split("| arm")[0]  # nothing retrained


@pytest.mark.slow  # a teacher, a warm start and four arms on the tiny model
def test_the_distillation_study_dry_pass_reaches_its_table(tmp_path: Path) -> None:
    done = run_script("benchmarks.distill", "--dry", "--seeds", "0", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(summary["arms"]) >= {"distill", "distill_sampled", "grpo", "sft_teacher", "teacher"}
    assert (tmp_path / "table.md").stat().st_size > 0
    assert (tmp_path / "accuracy_vs_tokens.png").stat().st_size > 0


def test_a_study_size_is_a_flag_and_a_mistyped_one_is_refused() -> None:
    done = run_script("benchmarks.study", "--dry", "--budget-token", "5", timeout=120)
    assert done.returncode == 2 and "--budget-tokens" in done.stderr
