"""The GPU check's dry pass (CPU, gloo), so that the one script meant for a rare GPU cannot rot unseen."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.benchmarks.conftest import run_script

SCRIPT = "benchmarks.gpu_check"


@pytest.mark.slow
def test_the_gpu_check_dry_pass_runs_every_section_and_prints_one_json_line() -> None:
    done = run_script(SCRIPT, "--dry")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["dry"] is True and report["ok"] is True
    assert report["sampler"]["ours_tokens_per_s"] > 0 and report["sampler"]["generate_tokens_per_s"] > 0
    grpo = report["grpo"]  # a CPU refuses autocast: float32 and the bf16 path (sampling from a bf16 copy)
    assert set(grpo) >= {"float32", "bf16_path"} and "autocast" not in grpo
    # The copy's samples are scored by the policy (at one update per batch by the update's own forward pass,
    # so no old_logp phase of its own) and its log-probs compared with the policy's; our sampler's are the policy's.
    assert grpo["bf16_path"]["sampler_kl_k3"] > 0 and grpo["float32"]["sampler_kl_k3"] == 0
    group = report["process_group"]
    assert group["backend"] == "gloo"
    assert group["ddp"]["steps"] == group["fsdp"]["steps"] == 3  # 2 steps, then 1 more after a resume
    assert group["fsdp"]["model_class"] == "FSDPLlamaForCausalLM"


@pytest.mark.slow
def test_the_gpu_check_dry_pass_runs_the_learning_recipe_with_learning() -> None:
    data = os.environ.get("REASONGYM_DATA_DIR")
    if not data or not (Path(data) / "gsm8k").exists():
        pytest.skip("REASONGYM_DATA_DIR with GSM8K and MATH-500 is needed (.ci/run sets it)")
    done = run_script(SCRIPT, "--dry", "--learning")
    assert done.returncode == 0, done.stderr[-3000:]
    learning = json.loads(done.stdout.strip().splitlines()[-1])["learning"]
    assert learning["ok"] is True and learning["engine"] == "hf"
    assert learning["steps"] == 2 and len(learning["reward_curve"]) == 2 and learning["tokens_per_s"] > 0
    star = json.loads(done.stdout.strip().splitlines()[-1])["star_csqa"]  # issue 39's STaR, tiny model
    assert star["ok"] is True and star["engine"] == "hf"
    assert star["budget_tokens"] <= star["sampled_tokens"] and star["kept_share"]


@pytest.mark.slow
def test_the_gpu_check_dry_pass_runs_grpo_with_the_sampler_ahead_with_async() -> None:
    done = run_script(SCRIPT, "--dry", "--async")
    assert done.returncode == 0, done.stderr[-3000:]
    ahead = json.loads(done.stdout.strip().splitlines()[-1])["async"]
    assert ahead["ok"] is True and ahead["engine"] == "hf"
    assert ahead["k0"]["staleness_max"] == 0 and ahead["k1"]["staleness_max"] == 1
    assert ahead["k1"]["step_s"] > 0 and ahead["speedup_k1"] > 0


def test_only_runs_the_named_speed_sections_in_order() -> None:
    done = run_script(SCRIPT, "--dry", "--only", "decode", "grpo", "trl")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert [key for key in report if isinstance(report[key], dict)] == ["decode", "grpo", "trl"]
    decode = report["decode"]
    assert all(decode[f"{name}_tokens_per_s"] > 0 for name in ("each_step", "lean", "graphs", "generate"))
    assert report["trl"]["ours_step_s"] > 0 and report["trl"]["trl_step_s"] > 0


def test_only_refuses_an_unknown_section() -> None:
    done = run_script(SCRIPT, "--dry", "--only", "speed", timeout=120)
    assert done.returncode == 2 and "invalid choice: 'speed'" in done.stderr
