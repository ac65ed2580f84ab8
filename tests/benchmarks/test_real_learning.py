"""benchmarks/real_learning/: its dry pass (every arm, the summary, resuming) and its statistics (its control:
tests/benchmarks/test_controls.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.harness import settings
from tests.benchmarks.conftest import run_script

SCRIPT = "benchmarks.real_learning"


def _run(*flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *flags, env={**os.environ, **(env or {})})


@pytest.mark.slow  # trains every arm of the benchmark
def test_the_dry_pass_trains_every_arm_summarizes_and_resumes_without_retraining(tmp_path: Path) -> None:
    flags = (
        "--dry",
        "--seeds",
        "0",
        "--out-dir",
        str(tmp_path / "out"),
        "--work-dir",
        str(tmp_path / "work"),
    )
    done = _run(*flags)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(summary["arms"]) == {
        "grpo",
        "grpo_shuffled",
        "dapo",
        "dapo_shuffled",
        "star",
        "star_shuffled",
        "sft",
    }
    for arm, result in summary["arms"].items():
        # the budget is checked before each sampling call, so an arm spends at least its budget
        assert result["sampled_tokens"] >= (0 if arm == "sft" else 48), arm
    assert set(summary["bar"]) == {"grpo", "dapo", "star"}
    assert (tmp_path / "out" / "accuracy.png").stat().st_size > 0
    runs = sorted((tmp_path / "out" / "runs").glob("*-s0.json"))
    stamps = {path: path.stat().st_mtime_ns for path in runs}

    again = _run(*flags)  # resumable per arm and seed: nothing left to train
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout.strip().splitlines()[-1]) == summary
    assert {path: path.stat().st_mtime_ns for path in runs} == stamps

    changed = _run(*flags, "--lr", "0.001")
    assert changed.returncode != 0
    assert "lr" in changed.stderr and "another setting" in changed.stderr


@pytest.mark.slow  # a warm start and three trainings
def test_the_chain_preset_warm_starts_once_and_compares_rl_with_more_sft(tmp_path: Path) -> None:
    folders = ("--out-dir", str(tmp_path / "out"), "--work-dir", str(tmp_path / "work"))
    prepared = _run(
        "--dry", "--preset", "chain", "--seeds", *folders
    )  # no seeds: the warm start and the start
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    assert [path.name for path in (tmp_path / "out" / "runs").iterdir()] == ["start.json"]
    flags = ("--dry", "--preset", "chain", "--arms", "grpo", "dapo", "sft_more", "--seeds", "0")
    done = _run(*flags, *folders)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["setting"]["difficulty"] == 2 and summary["setting"]["model"] == "warm_start"
    assert (tmp_path / "work" / "warm_start" / "config.json").exists()  # every arm starts from it
    assert set(summary["rl_vs_more_sft"]) == {"grpo", "dapo"}
    for result in summary["rl_vs_more_sft"].values():
        low, high = result["ci95"]
        assert low <= result["difference"] <= high
    sft = json.loads((tmp_path / "out" / "runs" / "sft_more-s0.json").read_text())
    assert sft["sampled_tokens"] == 0 and sft["train_cpu_seconds"] > 0
    more = [json.loads(line)["sft_more"] for line in done.stdout.splitlines() if '"sft_more"' in line[:12]]
    # the budget buys 5/3 of an RL arm's rows, counted in the solutions' length (at least one batch of 8)
    assert more and more[0]["rows"] == max(8, round(5 / 3 * 48 / more[0]["solution_tokens"]))
    assert (tmp_path / "out" / "accuracy.png").stat().st_size > 0


def test_the_interval_resamples_seeds_and_problems(bench: Any) -> None:
    right, wrong = {"correct": [1] * 50}, {"correct": [0] * 50}
    clear = bench.interval({"a": [right, right], "b": [wrong, wrong, wrong]}, "a", "b")
    assert clear == {"difference": 1.0, "ci95": [1.0, 1.0], "clear_of_zero": True}
    rng = np.random.default_rng(1)
    same = [{"correct": rng.integers(0, 2, 200).tolist()} for _ in range(3)]
    noise = bench.interval({"a": same, "b": same[::-1]}, "a", "b")
    assert noise["ci95"][0] <= 0 <= noise["ci95"][1] and not noise["clear_of_zero"]
    # seeds that disagree widen the interval beyond what the problems alone give
    apart = [{"correct": [1] * 100 + [0] * 100}, {"correct": [0] * 200}]
    spread = bench.interval({"a": apart, "b": [{"correct": [0] * 200}]}, "a", "b")
    assert spread["ci95"][0] <= 0.05 and spread["ci95"][1] >= 0.45


def test_a_setting_field_is_a_flag_checked_by_name_and_type(
    bench: Any, capsys: pytest.CaptureFixture
) -> None:
    """Every field of `Setting` is a flag on top of the preset (`benchmarks.harness.settings`): a mistyped
    name is refused with the nearest one, a value of the wrong type naming the flag."""
    cpu = bench.PRESETS["cpu"]
    with pytest.raises(SystemExit):
        settings.fields(cpu, ["--temprature", "0.5"], prog="real_learning")
    assert "--temperature" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        settings.fields(cpu, ["--budget-tokens", "lots"], prog="real_learning")
    assert "--budget-tokens" in capsys.readouterr().err
    changed = settings.fields(
        cpu, ["--lr", "1e-5", "--instruction", "None", "--model", "some/folder"], prog="real_learning"
    )
    assert (changed.lr, changed.instruction, changed.model) == (1e-5, None, "some/folder")
    assert settings.fields(cpu, ["--no-tempered-logprobs"], prog="x").tempered_logprobs is False
    with pytest.raises(SystemExit):
        settings.fields(cpu, ["--tempered-logprobs", "no"], prog="real_learning")


@pytest.mark.slow  # the GPU recipe's trainings, on a CPU
def test_the_gpu_recipe_runs_its_smoke_pass_on_the_cpu(tmp_path: Path) -> None:
    data = os.environ.get("REASONGYM_DATA_DIR")
    if not data or not (Path(data) / "gsm8k").exists():
        pytest.skip("REASONGYM_DATA_DIR with GSM8K and MATH-500 is needed (.ci/run sets it)")
    done = _run("--gpu", "--dry", "--smoke", "2", "--work-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    smoke = json.loads(done.stdout.strip().splitlines()[-1])["smoke"]
    assert smoke["steps"] == 2 and len(smoke["reward_curve"]) == 2
    assert smoke["step_s"] > 0 and smoke["tokens_per_s"] > 0
    assert {"after/Arithmetic-v0/accuracy", "after/GSM8K-v0/accuracy"} <= set(smoke)


@pytest.mark.slow  # two trainings, one with a sampler process
def test_grpo_async_stops_at_the_same_budget_as_grpo_and_records_wall_seconds(tmp_path: Path) -> None:
    flags = ("--dry", "--arms", "grpo", "grpo_async", "--seeds", "0", "--out-dir", str(tmp_path / "out"))
    done = _run(*flags, "--work-dir", str(tmp_path / "work"))
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(summary["arms"]) == {"grpo", "grpo_async"}
    runs = {
        arm: json.loads((tmp_path / "out" / "runs" / f"{arm}-s0.json").read_text()) for arm in summary["arms"]
    }
    for arm, record in runs.items():
        # checked on the session before each batch: both spend the budget and stop within one batch of it
        assert 48 <= record["sampled_tokens"] < 48 + 2 * 2 * 8, arm
        walls = [point["wall_s"] for point in record["curve"]]
        assert walls == sorted(walls) and walls[0] > 0, arm
        assert record["curve"][-1]["train_wall_s"] <= record["wall_seconds"], arm
        assert len(record["load_start"]) == 3 and len(record["load_end"]) == 3, arm
        assert record["episodes"] > 0, arm  # the sampler process's verdicts reach the run's log too
    assert runs["grpo"]["sampler_cpu_seconds"] == 0.0
    assert runs["grpo_async"]["sampler_cpu_seconds"] > 0  # the sampler process ran, and was counted
    assert summary["async_vs_sync"]["ci95"][0] <= summary["async_vs_sync"]["difference"]
    assert (tmp_path / "out" / "accuracy_vs_wall.png").stat().st_size > 0


def test_the_offline_gpu_preset_takes_the_kits_model_and_decides_its_engine_first(
    bench: Any, monkeypatch
) -> None:
    monkeypatch.setenv("REASONGYM_KIT_MODEL", "/tmp/kit/model/SmolLM2-135M-Instruct.Q4_1.gguf")
    setting = bench.PRESETS["gpu"]
    assert (setting.engine, setting.model, setting.max_new_tokens, setting.lr) == ("auto", "", 256, 1e-5)
    ready = bench.resolve_offline(setting)
    assert ready.model.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert ready.engine == "hf"  # no vLLM here (nor a GPU): our sampler, decided before any evaluation
    assert bench.resolve_offline(bench.dry(setting)).engine == "hf"
