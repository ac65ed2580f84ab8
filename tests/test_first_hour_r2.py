"""A new user's first hour, round 2 (issue 41): mistakes answered before anything slow happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_readmes_own_dataset_exports_without_naming_its_split() -> None:
    """register_dataset's rows are one split (``test``); to_dataset serves it rather than asking for ``train``."""
    import reasongym
    from reasongym.envs.export import reward_function, to_dataset

    rows = [{"q": "What is 2 + 2?", "a": "4"}, {"q": "What is 3 * 3?", "a": "9"}]
    reasongym.register_dataset(
        "me/TinyExport-v0", rows, question="q", answer="a", answer_type="math", override=True
    )
    env = reasongym.make("me/TinyExport-v0")
    data = to_dataset(env, None)
    assert sorted(data["answer"]) == ["4", "9"] and set(data["split"]) == {"test"}
    columns = {key: data[key] for key in ("answer", "split", "index")}
    assert reward_function(env)(data["prompt"], [f"\\boxed{{{a}}}" for a in data["answer"]], **columns) == [
        1.0,
        1.0,
    ]
    generated = reasongym.make("reasongym/Arithmetic-v0")
    assert set(to_dataset(generated, 3)["split"]) == {"train"}  # an environment with a train split keeps it


def test_plot_panels_read_as_words_and_flat_lines_stay_apart() -> None:
    """Legends name curves by whole words (max, mean, min: not "ax, ean, in"); two panels that are flat at the
    same value are two panels (they were merged into one run-on title); each known panel has a title in words."""
    from reasongym.agents.runtime.session import PLOT_KEYS
    from reasongym.runs.plots import PANEL_TITLES, _panels

    records = [
        {
            "step": step,
            "train/ratio_max": 1.0 + step * 1e-6,
            "train/ratio_mean": 1.0,
            "train/ratio_min": 1.0 - 1e-6,
            "rollout/reward_mean": 0.0,
            "train/clip_high_frac": 0.0,
            "loss/policy": 0.0,
            "rollout/all_correct_group_frac": 0.0,
            "rollout/all_wrong_group_frac": 1.0,
        }
        for step in (1, 2, 3)
    ]
    panels = dict(_panels(records, PLOT_KEYS))
    ratio = panels["importance ratio, new / old policy"]
    assert [label for label, _, _ in ratio] == ["max", "mean", "min"]
    assert [label for label, _, _ in panels["groups all correct or all wrong (share)"]] == [
        "correct",
        "wrong",
    ]
    assert {"reward (batch mean)", "fraction of tokens clipped", "losses"} <= set(panels)
    assert all(key in PANEL_TITLES for key in PLOT_KEYS)


def test_an_sft_run_draws_its_curves(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from reasongym.agents.algorithms import preset_configs
    from reasongym.agents.sft import train_sft
    from reasongym.policy.tiny import tiny_policy

    configs = preset_configs("tiny", "sft", max_steps=3, progress_bar=False, stop_at_accuracy=None)
    model, tokenizer = tiny_policy(0)
    train_sft(
        configs["sft"], model, tokenizer, [("1+1=", "2"), ("2+2=", "4")], run=configs["run"], run_dir=tmp_path
    )
    assert (tmp_path / "metrics.png").stat().st_size > 10_000


def test_an_id_near_no_environment_gets_no_far_suggestion() -> None:
    import reasongym
    from reasongym.errors import UnknownEnvNameError

    with pytest.raises(UnknownEnvNameError, match=r"no environment named 'composite-v0' \(`reasongym list`"):
        reasongym.make("composite-v0")
    with pytest.raises(UnknownEnvNameError, match=r"did you mean 'reasongym/Arithmetic-v0'\?"):
        reasongym.make("reasongym/Arithmetc-v0")


def test_trl_names_work_in_config_files_as_they_do_as_flags(tmp_path: Path) -> None:
    from reasongym.agents.algorithms import sort_fields
    from reasongym.cli.args import read_config_file
    from reasongym.errors import ConfigError

    config = tmp_path / "grpo.toml"
    config.write_text("learning_rate = 1e-4\nnum_generations = 4\n[rollout]\nmax_completion_length = 64\n")
    sections = sort_fields("grpo", read_config_file(config), where=str(config))
    assert sections["run"]["lr"] == 1e-4 and sections["rollout"] == {"group_size": 4, "max_new_tokens": 64}
    assert sort_fields("sft", {"per_device_train_batch_size": 8}, where="f")["sft"] == {"batch_size": 8}
    with pytest.raises(
        ConfigError, match=r"unknown field 'learning_rat' for grpo; did you mean 'learning_rate'\?"
    ):
        sort_fields("grpo", {"learning_rat": 1e-4}, where="f")


def test_eval_names_the_checkpoint_it_evaluates(tmp_path: Path) -> None:
    from reasongym.cli.eval import _checkpoint_of
    from reasongym.runs.folder import RunDir

    assert _checkpoint_of("HuggingFaceTB/SmolLM2-135M-Instruct") is None  # a hub id names no checkpoint
    assert _checkpoint_of(str(tmp_path / "nothing")) is None
    from reasongym.agents.algorithms import preset_configs
    from reasongym.agents.sft import train_sft
    from reasongym.policy.tiny import tiny_policy

    run = RunDir.create(tmp_path, algo="sft", env="e", seed=0)
    configs = preset_configs("tiny", "sft", max_steps=2, progress_bar=False, stop_at_accuracy=None)
    model, tokenizer = tiny_policy(0)
    train_sft(configs["sft"], model, tokenizer, [("1+1=", "2")], run=configs["run"], run_dir=run.path)
    tokenizer.save_pretrained(run.path)
    step = run.path / "checkpoints" / "step-000002"
    assert _checkpoint_of(str(tmp_path)) == str(step.resolve())  # the folder of runs follows latest


def test_a_folder_of_runs_given_to_run_dir_names_its_newest_run(tmp_path: Path) -> None:
    from reasongym.cli.args import UsageError
    from reasongym.cli.resume import check_resumable
    from reasongym.runs.folder import RunDir

    run = RunDir.create(tmp_path, algo="sft", env="e", seed=0)  # points tmp_path/latest at it
    run.write_run_info({"algo": "sft", "model": "tiny"})
    with pytest.raises(
        UsageError, match=rf"is a folder of runs, not a run folder; .*--run-dir {run.path.resolve()}"
    ):
        check_resumable(tmp_path)


@pytest.mark.parametrize(
    ("variables", "policy"),
    [({}, "PASSIVE"), ({"OMP_NUM_THREADS": "2"}, None), ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE")],
)
def test_library_users_get_sleeping_threads_too(variables: dict[str, str], policy: str | None) -> None:
    """``import reasongym`` (no torch loaded yet) sets OpenMP's passive wait policy, as the command line does,
    unless the user chose a thread setting; torch is not imported by it, so the policy reaches torch."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
    code = "import json, os, sys, reasongym; print(json.dumps(['torch' in sys.modules, os.environ.get('OMP_WAIT_POLICY')]))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**env, **variables}, timeout=120
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [False, policy], done.stderr


def test_flags_help_and_usage_errors_never_load_torch() -> None:
    """The configs live in torch-free modules and the trainers load on first use: ``train --help`` and a
    mistyped flag answer without torch or transformers (10-27 s on a loaded machine before; under 1 s here)."""
    code = (
        "import sys; from reasongym.cli import main\n"
        "for argv in (['train', 'grpo', '--help'], ['train', 'star', '--help'], ['train', 'dapo', '--max-stepz', '3'],"
        " ['train', 'sft', '--lr', '-1'], ['train', 'grpo', '--learning-rate', 'x']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr[-2000:]
