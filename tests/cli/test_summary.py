"""`reasongym.cli.summary`: the summary line says why a run stopped early and what a step costs on a CPU, and
STaR reports its iterations with the same metric as GRPO."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_sft_says_why_it_stopped_early_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from reasongym.cli.summary import summary_line

    class Stopped:
        steps, stopped_early = 30, True
        history = (
            {"loss/sft": 2.0},
            {"loss/sft": 0.5, "eval/pass@1": 0.25},
            {"loss/sft": 0.25, "eval/pass@1": 0.5},
        )

    from reasongym.agents.algorithms import preset_configs

    run = preset_configs("tiny", "sft")["run"]
    assert summary_line("sft", Stopped(), run, "validation", 0.4) == (
        "sft: 30 of 800 steps (stopped early: held-out pass@1 0.50 reached stop_at_accuracy 0.4); held-out "
        "pass@1 0.25 -> 0.50 (greedy, 64 problems of the validation split); loss 2 -> 0.25"
    )


def test_star_reports_its_iterations_and_the_same_metric_as_grpo(tmp_path: Path) -> None:
    from reasongym.agents.star import IterationStats, STaRResult
    from reasongym.cli.summary import result_summary

    stats = IterationStats(1, 0.25, 0.5, 0.75, 3, 4, 5, 6, 0.125)
    summary = result_summary(STaRResult(0.25, (stats,), None, None))
    assert summary["steps"] == 1 and summary["iterations"] == 1
    assert summary["last"]["eval/pass@1"] == 0.5 and summary["initial_accuracy"] == 0.25


def test_a_real_model_on_a_cpu_is_told_what_a_step_costs_and_offered_a_smaller_one() -> None:
    from reasongym.agents.algorithms import preset_configs
    from reasongym.cli.summary import step_cost

    real = step_cost("grpo", preset_configs("default", "grpo"), "models/smollm2", "cpu")
    assert real is not None and real.startswith(
        "reasongym: each step samples up to 16 prompts x 8 samples x 1024 tokens = 131,072 tokens; on a CPU"
    )
    assert real.endswith("pass --num-prompts 4 --group-size 4 --max-new-tokens 256")
    tiny = step_cost("grpo", preset_configs("tiny", "grpo"), "tiny", "cpu")
    assert tiny == "reasongym: each step samples up to 16 prompts x 8 samples x 72 tokens = 9,216 tokens"
    assert "CPU-sized" not in (step_cost("grpo", preset_configs("default", "grpo"), "m", "cuda:0") or "")
    assert step_cost("sft", preset_configs("tiny", "sft"), "tiny", "cpu") is None
