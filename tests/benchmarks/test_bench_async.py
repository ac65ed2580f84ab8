"""benchmarks/bench_async.py: its arithmetic (throughput over the steps after the first, the phases from the
trainer's current metric names, the ratios) and TRL's run on the tiny preset's batch."""

from __future__ import annotations

from typing import Any

import pytest

SCRIPT = "benchmarks.bench_async"


def _step(seconds: float, tokens: float, **metrics: float) -> dict[str, float]:
    return {"perf/step_s": seconds, "perf/tokens_per_s": tokens / seconds, **metrics}


def test_throughput_leaves_the_first_step_out_and_reads_the_async_metrics(bench: Any) -> None:
    history = [
        _step(10.0, 999.0, **{"perf/train_s": 9.0}),  # the sampler's start: not timed
        _step(2.0, 100.0, **{"perf/train_s": 1.5, "perf/old_logp_s": 0.25, "async/staleness_mean": 1.0}),
        _step(3.0, 200.0, **{"perf/train_s": 2.5, "perf/old_logp_s": 0.75, "async/staleness_mean": 2.0}),
    ]
    # Step starts at 0, 10 and 12.5 s, the last step ends at 16 s: 2 timed steps over 6 wall seconds (the
    # wall time between steps counts, not only the steps' own perf/step_s).
    stamps = [(0.0, 0.0), (0.0, 10.0), (0.0, 12.5), (0.0, 16.0)]
    row = bench.summarize(history, stamps)
    assert row["steps_per_s"] == pytest.approx(2 / 6)
    assert row["tokens_per_s"] == pytest.approx(300 / 6)
    assert row["step_s"] == pytest.approx(3.0)
    assert row["step_median_s"] == pytest.approx(3.0)  # the median of 2.5 and 3.5
    assert row["update"] == pytest.approx(2.0)
    assert row["rescore"] == pytest.approx(0.5)
    assert row["staleness"] == pytest.approx(1.5)
    assert row["trainer_wait"] == 0.0  # absent at K = 0


def test_ratios_are_steps_per_second_over_k0_and_median_steps_over_trl(bench: Any) -> None:
    rows = {
        "K=0": {"steps_per_s": 0.5, "step_median_s": 2.0},
        "K=1": {"steps_per_s": 0.7, "step_median_s": 1.5},
        "K=2": {"steps_per_s": 0.4, "step_median_s": 2.4},
        "TRL": {"steps_per_s": 0.25, "step_median_s": 4.0},
    }
    assert bench.ratios(rows) == {
        "speedup_k1": 1.4,
        "speedup_k2": 0.8,
        "ratio_to_trl_k0": 0.5,
        "ratio_to_trl_k1": 0.375,
        "ratio_to_trl_k2": 0.6,
    }
    del rows["TRL"]
    assert bench.ratios(rows)["ratio_to_trl_k1"] is None


def test_trl_runs_on_the_tiny_presets_batch_with_its_first_step_untimed(
    bench: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = []

    def trl_step_seconds(setting: Any) -> dict[str, float]:
        asked.append(vars(setting))
        return {"step_wall_s": 4.0, "completion_tokens": 800.0}

    monkeypatch.setattr(bench, "trl_step_seconds", trl_step_seconds)
    row = bench.tiny_trl(12)
    assert asked == [{"prompts": 16, "group": 8, "tokens": 72, "warmup": 1, "steps": 11}]
    assert (row["steps_per_s"], row["tokens_per_s"], row["step_median_s"]) == (0.25, 200.0, 4.0)
