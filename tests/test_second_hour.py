"""Issue 54, the second hour of a new user: what they hit after the demo, each item checked where it lives.

Item 1 (the README's commands and the CPU test) is in tests/test_readme.py and tests/benchmarks; item 7 (maj@k)
in tests/evaluation; item 6 (``reasongym demo --real``) in tests/test_demo_real.py. The rest is here: a run
folder says what it is and a model from it brings its preset (2), an environment registered in Python is
explained on the command line and ``evaluate`` names the command's options (3), warnings during training get
a line of their own (5), and the small items (8).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ENV = "reasongym/Arithmetic-v0"
REPO = Path(__file__).resolve().parents[1]


def reasongym(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "reasongym", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


# ---------------------------------------------------------------------------------------------- 2. run.json


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quick demo's output folder (``runs``), as ``reasongym demo`` leaves it."""
    folder = tmp_path_factory.mktemp("second-hour")
    done = reasongym("demo", "--quick", "--no-progress", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


def test_the_demo_run_records_what_it_is_and_a_run_from_it_takes_the_tiny_settings(demo_run: Path) -> None:
    info = json.loads((demo_run / "runs" / "latest" / "run.json").read_text())
    assert info == {
        "algo": "grpo",
        "model": "tiny",
        "env": ENV,
        "preset": "tiny",
        "command": "reasongym demo",
    }
    done = reasongym(
        *("train", "grpo", "--model", "runs/latest", "--env", ENV, "--max-steps", "1"),
        *("--group-size", "2", "--eval-problems", "2", "--no-progress-bar", "--output-dir", "runs/more"),
        cwd=demo_run,
    )
    assert done.returncode == 0, done.stderr
    assert "reasongym: using preset 'tiny' (the preset of runs/latest; --preset changes it)" in done.stderr
    # the tiny preset's 16 prompts of 72 tokens, not the default's 1,024 and its minutes-long CPU warning
    assert "samples up to 16 prompts x 2 samples x 72 tokens = 2,304 tokens" in done.stderr
    assert "minutes" not in done.stderr


def test_a_run_started_from_python_records_its_algorithm_and_environment(
    tiny: object, tmp_path: Path
) -> None:
    from reasongym.agents import preset_configs, train_sft
    from reasongym.agents.sft_data import sft_pairs_from_env

    model, tokenizer = tiny()  # type: ignore[operator]
    import reasongym

    pairs = sft_pairs_from_env(reasongym.make(ENV), 8, split="train", tokenizer=tokenizer)
    configs = preset_configs("default", "sft", max_steps=1, progress_bar=False, tensorboard=False)
    train_sft(configs["sft"], model, tokenizer, pairs, run=configs["run"], run_dir=tmp_path / "run")
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info == {"algo": "sft", "env": None, "model": None, "preset": None, "started_by": "python"}


# ---------------------------------------------------------------------------------------------- 3. Python envs


def test_an_id_registered_in_python_is_explained_on_the_command_line(tmp_path: Path) -> None:
    done = reasongym("eval", "tiny", "me/Primes-v0", "--num-problems", "2", cwd=tmp_path)
    assert done.returncode == 2
    err = done.stderr
    assert err.startswith("reasongym: error: no environment named 'me/Primes-v0'")
    assert "register it in a plugin" in err and "reasongym.evaluation.evaluate(model, env_id" in err
    assert list(tmp_path.iterdir()) == []  # refused before the model loads or the records file is made
    typo = reasongym("show", "reasongym/Arithmetc-v0", cwd=tmp_path)  # a near id: the hint, not the lecture
    assert "did you mean 'reasongym/Arithmetic-v0'" in typo.stderr and "plugin" not in typo.stderr


def test_an_unknown_id_is_refused_before_torch_loads() -> None:
    code = (
        "import sys\nfrom reasongym.cli.main import main\n"
        "for args in (['eval', 'tiny', 'me/Primes-v0'], ['train', 'grpo', '--env', 'me/Primes-v0']):\n"
        "    assert main(args) == 2\n"
        "print('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize(
    ("flag", "where"),
    [
        ("show", "reasongym.evaluation.records.sample_completions(out_path, count)"),
        ("out", "evaluate(..., out_path=PATH)"),
        ("completions", "reasongym.evaluation.grade_completions"),
    ],
)
def test_evaluate_names_an_option_of_the_command_and_what_does_its_work_in_python(
    flag: str, where: str
) -> None:
    import reasongym
    from reasongym.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        reasongym.evaluate("unused", ENV, **{flag: 2})
    message = str(raised.value)
    assert message.startswith(
        f"{flag}=2: --{flag} is an option of the `reasongym eval` command, not of evaluate()"
    )
    assert where in message


def test_the_readme_shows_the_python_evaluation_entry_point() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "from reasongym.evaluation import evaluate" in readme
    assert "sample_completions(" in readme


# ---------------------------------------------------------------------------------------------- 5. warnings


def test_a_warning_during_a_progress_bar_gets_its_own_line_without_the_source_echo() -> None:
    from tqdm.auto import tqdm

    from reasongym.cli.console import PACKAGE, warnings_on_their_own_line

    original = warnings.formatwarning
    ours = str(PACKAGE / "agents" / "runtime" / "session.py")
    with warnings_on_their_own_line():
        bar = tqdm(total=10, file=io.StringIO(), desc="grpo")
        bar.update(3)
        during = warnings.formatwarning("most groups had no reward variance", UserWarning, ours, 300)
        library = warnings.formatwarning(
            "old API", DeprecationWarning, "/x/site-packages/torch/io.py", 12, "src"
        )
        bar.close()
        after = warnings.formatwarning("most groups had no reward variance", UserWarning, ours, 300)
    # a line of its own under the bar, no "FILE:LINE: UserWarning:", no source line
    assert during == "\nreasongym: warning: most groups had no reward variance\n"
    assert library == "\nreasongym: warning: old API (DeprecationWarning, io.py:12)\n"
    assert after == "reasongym: warning: most groups had no reward variance\n"  # no bar: no blank line
    assert warnings.formatwarning is original  # the command's format is the command's only


def test_the_command_line_shows_a_training_warning_on_its_own_line(demo_run: Path) -> None:
    # a random-init model earns no reward: after 10 steps with most groups at zero variance the run warns
    done = reasongym(
        *("train", "grpo", "--model", "tiny", "--env", ENV, "--max-steps", "11", "--num-prompts", "2"),
        *("--group-size", "2", "--max-new-tokens", "8", "--eval-every", "0", "--output-dir", "runs/warned"),
        cwd=demo_run,
    )
    assert done.returncode == 0, done.stderr
    lines = [line.rsplit("\r", 1)[-1] for line in done.stderr.split("\n")]
    warned = [line for line in lines if "had the same reward for every sample" in line]
    assert len(warned) == 1 and warned[0].startswith("reasongym: warning: grpo: ")
    assert "finish_step" not in done.stderr and "UserWarning" not in done.stderr


# ---------------------------------------------------------------------------------------------- 8. small items


def test_list_calls_a_registered_dataset_local_and_a_generator_generated() -> None:
    from reasongym.envs.benchmarks.data import availability
    from reasongym.envs.registration import CatalogEntry

    rows = CatalogEntry(
        id="acme/Squares-v0",
        source="reasongym.envs.registration:user",
        description="squares",
        answer_type="integer",
        size="test 5",
        origin="plugin acme-envs 1.2.0",
    )
    assert availability(rows) == "local"
    assert availability(dataclasses.replace(rows, size="procedural")) == "generated"


def test_a_resumed_run_says_the_step_it_resumes_from(demo_run: Path) -> None:
    done = reasongym(
        *("train", "grpo", "--run-dir", "runs/latest", "--max-steps", "2", "--no-progress-bar"),
        *("--num-prompts", "2", "--group-size", "2"),
        cwd=demo_run,
    )
    assert done.returncode == 0, done.stderr
    assert "reasongym: resuming from step 1 (runs/latest/checkpoints/step-000001)" in done.stderr


def test_distill_names_its_preset_and_counts_one_sample_in_the_singular(demo_run: Path) -> None:
    done = reasongym(
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


def _panel_titles(run: Path) -> list[str]:
    from reasongym.agents.runtime.session import PLOT_KEYS
    from reasongym.runs.plots import metrics_figure

    figure = metrics_figure(run / "metrics.jsonl", PLOT_KEYS)
    return [axes.get_title().replace("\n", " ") for axes in figure.axes if axes.get_visible()]


def test_help_lists_every_trainer() -> None:
    from reasongym.cli.jobs import JOBS
    from reasongym.cli.main import build_parser

    text = build_parser().format_help()
    assert "train: sft, grpo, dapo, star or distill" in " ".join(text.split())
    assert set(JOBS) == {"sft", "grpo", "dapo", "star", "distill"}


def test_no_legend_covers_a_curve(tmp_path: Path) -> None:
    from reasongym.agents.runtime.session import PLOT_KEYS
    from reasongym.runs.plots import metrics_figure

    # the ratio's three curves fill their panel, where the legend used to sit on the min
    rows = [
        {
            "step": step,
            "train/ratio_max": 1 + 1e-6 * (step % 3),
            "train/ratio_mean": 1.0,
            "train/ratio_min": 1 - 1e-6 * (step % 2),
            "rollout/all_correct_group_frac": 0.1 * step,
            "rollout/all_wrong_group_frac": 1 - 0.1 * step,
        }
        for step in range(1, 9)
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    figure = metrics_figure(tmp_path / "metrics.jsonl", PLOT_KEYS, title="t")
    renderer = figure.canvas.get_renderer()
    figure.draw(renderer)
    legends = [(axes, axes.get_legend()) for axes in figure.axes if axes.get_legend() is not None]
    assert len(legends) == 2
    for axes, legend in legends:
        box, plot_area = legend.get_window_extent(renderer), axes.get_window_extent(renderer)
        assert not box.overlaps(plot_area), axes.get_title()
