"""``reasongym demo``: its run folder says what it is, and the runs started from it (train, resume, distill)
take the tiny preset, say the step they resume from and show training warnings on their own line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.running import cli

ENV = "reasongym/Arithmetic-v0"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quick demo's output folder (``runs``), as ``reasongym demo`` leaves it."""
    folder = tmp_path_factory.mktemp("second-hour")
    done = cli("demo", "--quick", "--no-progress", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


def _panel_titles(run: Path) -> list[str]:
    from reasongym.agents.runtime.session import PLOT_KEYS
    from reasongym.runs.plots import metrics_figure

    figure = metrics_figure(run / "metrics.jsonl", PLOT_KEYS)
    return [axes.get_title().replace("\n", " ") for axes in figure.axes if axes.get_visible()]


def test_the_demo_run_records_what_it_is_and_a_run_from_it_takes_the_tiny_settings(demo_run: Path) -> None:
    info = json.loads((demo_run / "runs" / "latest" / "run.json").read_text())
    assert info == {
        "algo": "grpo",
        "model": "tiny",
        "env": ENV,
        "preset": "tiny",
        "command": "reasongym demo",
    }
    done = cli(
        *("train", "grpo", "--model", "runs/latest", "--env", ENV, "--max-steps", "1"),
        *("--group-size", "2", "--eval-problems", "2", "--no-progress-bar", "--output-dir", "runs/more"),
        cwd=demo_run,
    )
    assert done.returncode == 0, done.stderr
    assert "reasongym: using preset 'tiny' (the preset of runs/latest; --preset changes it)" in done.stderr
    # the tiny preset's 16 prompts of 72 tokens, not the default's 1,024 and its minutes-long CPU warning
    assert "samples up to 16 prompts x 2 samples x 72 tokens = 2,304 tokens" in done.stderr
    assert "minutes" not in done.stderr


def test_the_command_line_shows_a_training_warning_on_its_own_line(demo_run: Path) -> None:
    # a random-init model earns no reward: after 10 steps with most groups at zero variance the run warns
    done = cli(
        *("train", "grpo", "--model", "tiny", "--env", ENV, "--max-steps", "11", "--num-prompts", "2"),
        *("--group-size", "2", "--max-new-tokens", "8", "--eval-every", "0", "--output-dir", "runs/warned"),
        cwd=demo_run,
    )
    assert done.returncode == 0, done.stderr
    lines = [line.rsplit("\r", 1)[-1] for line in done.stderr.split("\n")]
    warned = [line for line in lines if "had the same reward for every sample" in line]
    assert len(warned) == 1 and warned[0].startswith("reasongym: warning: grpo: ")
    assert "finish_step" not in done.stderr and "UserWarning" not in done.stderr


def test_a_resumed_run_says_the_step_it_resumes_from(demo_run: Path) -> None:
    done = cli(
        *("train", "grpo", "--run-dir", "runs/latest", "--max-steps", "2", "--no-progress-bar"),
        *("--num-prompts", "2", "--group-size", "2"),
        cwd=demo_run,
    )
    assert done.returncode == 0, done.stderr
    assert "reasongym: resuming from step 1 (runs/latest/checkpoints/step-000001)" in done.stderr


def test_distill_names_its_preset_and_counts_one_sample_in_the_singular(demo_run: Path) -> None:
    done = cli(
        *("train", "distill", "--model", "runs/latest", "--teacher", "runs/latest", "--env", ENV),
        *("--max-steps", "1", "--num-prompts", "4", "--no-progress-bar", "--output-dir", "runs/distill"),
        cwd=demo_run,
    )
    assert done.returncode == 0, done.stderr
    assert "reasongym: using preset 'tiny' (the preset of runs/latest; --preset changes it)" in done.stderr
    assert "samples up to 4 prompts x 1 sample x 72 tokens = 288 tokens" in done.stderr
    # its plot leaves out the panels about groups, constant with one sample per prompt
    from reasongym.runs.plots import GROUP_PANELS, PANEL_TITLES

    run = demo_run / "runs" / "distill" / "latest"
    assert (run / "metrics.png").is_file()
    titles = _panel_titles(run)
    assert "divergence to the teacher (per token)" in titles
    assert not {PANEL_TITLES[key] for key in GROUP_PANELS} & set(titles)
