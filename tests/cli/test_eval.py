"""``reasongym eval``: the warnings and rows of its table, ``--show``, the checkpoint it names, and what it
refuses before the model loads (a huge problem count, an output file another evaluation holds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasongym.cli import main
from tests.cli.running import run_main

ENV = "reasongym/Arithmetic-v0"


@pytest.mark.slow  # evaluates against a fake server
def test_identical_samples_at_a_temperature_are_called_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.harness.fake_server import Reply, chat_body, fake_server

    # a server that ignores n and temperature: one choice per request, the same text every time
    with fake_server([Reply(body=chat_body(["So \\boxed{152}."]))] * 40) as server:
        argv = ["eval", "--base-url", server.base_url, "--model", "m", ENV, "--num-problems", "3", "--n", "4"]
        assert main([*argv, "--temperature", "0.8", "--out", str(tmp_path / "o.jsonl"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "(test, 3 problems, n=4, temperature 0.8)" in out
    assert "warning: all 4 samples of each of the 3 problems are identical at temperature 0.8" in out
    assert "`transformers serve` ignores n and temperature" in out


def test_eval_show_prints_problems_with_their_first_completion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stored.jsonl"  # problem 0 of the level-1 test stream is 85 + 67
    path.write_text(json.dumps({"index": 0, "completions": ["So it is \\boxed{152}.", "7"]}) + "\n")
    argv = ["eval", "--completions", str(path), ENV, "--out", str(tmp_path / "g.jsonl"), "--no-progress"]
    assert main([*argv, "--show", "1"]) == 0
    shown = capsys.readouterr().out.split("records: ")[1].splitlines()[1:]
    assert shown[0] == "--- problem 0 (arithmetic-test-d1-0), gold '152'"
    assert shown[1] == "So it is \\boxed{152}."
    assert shown[2].startswith("=> extracted '152': correct; ")


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


def test_eval_refuses_a_huge_problem_count_before_the_model_loads(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["eval", "/nonexistent-model", ENV, "--num-problems", str(10**21)], capsys)
    assert (
        code == 2 and f"num_problems={10**21} is not allowed; expected an integer in [1, 2147483647]" in err
    )


def test_a_second_eval_on_a_locked_out_fails_before_its_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:

    import reasongym.distributed
    import reasongym.evaluation.loading

    def too_early(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch or the model was touched before the lock was checked")

    # Starting torch.distributed and hashing the weights (model_identity) come before the model's load; the
    # lock is checked before either.
    monkeypatch.setattr(reasongym.distributed, "init_distributed", too_early)
    monkeypatch.setattr(reasongym.evaluation.loading, "model_identity", too_early)

    out = tmp_path / "out.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom reasongym.runs.locks import exclusive_lock\n"
            f"with exclusive_lock({str(out)!r}, what='x', hint='y'):\n    print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        # A model path that does not exist fails at its load: the lock must be named first.
        code, _, err = run_main(["eval", str(tmp_path / "no-model"), ENV, "--out", str(out)], capsys)
    finally:
        holder.kill()
        holder.wait()
    assert code == 1 and f"evaluation file {str(out)!r} is in use by another process" in err
