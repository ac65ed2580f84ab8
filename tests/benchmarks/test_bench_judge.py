"""benchmarks/bench_judge.py: without the real model it says why it cannot run, in its one JSON line."""

from __future__ import annotations

import json
import os

from tests.benchmarks.conftest import run_script


def test_the_agreement_benchmark_skips_cleanly_without_the_model() -> None:
    without_model = {k: v for k, v in os.environ.items() if k != "REASONGYM_SMOLLM2_GGUF"}
    done = run_script("benchmarks.bench_judge", timeout=120, env=without_model)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "skipped": "the real model is missing (REASONGYM_SMOLLM2_GGUF=None)"
    }
