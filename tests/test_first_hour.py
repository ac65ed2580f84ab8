"""What a new user meets in the first hour (issue 29): thread settings, Ctrl-C, the ``latest`` pointer, offline
data, the CLI's names and errors, the warnings that say why a run learns nothing, and the run's summary.

Commands run through ``python -m reasongym`` where a signal, the environment or the interpreter's start
matters, in-process (``main``) elsewhere.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasongym.cli import main

ENV = "reasongym/Arithmetic-v0"
TINY_SFT = ["--difficulty", "1", "--num-examples", "32", "--batch-size", "4", "--no-progress-bar"]
TINY_RL = ["--difficulty", "1", "--num-prompts", "2", "--group-size", "2", "--max-new-tokens", "8"]


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **extra}
    return {key: value for key, value in env.items() if value != ""}  # "" removes a variable


def _cli(*args: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "reasongym", *args]
    return subprocess.run(command, capture_output=True, text=True, env=_env(**extra), cwd=cwd, timeout=600)


# ---------------------------------------------------------------------------------------------- 1. threads


@pytest.mark.parametrize(
    ("variables", "policy"),
    [
        ({"OMP_NUM_THREADS": ""}, "PASSIVE"),
        ({"OMP_NUM_THREADS": "2"}, None),
        ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"),
    ],
)
def test_the_cli_lets_idle_torch_threads_sleep_unless_the_user_chose(
    variables: dict[str, str], policy: str | None
) -> None:
    code = (
        "import os, sys; from reasongym.cli import main; before = 'torch' in sys.modules; "
        "main(['list', '--json']); print(json.dumps([before, os.environ.get('OMP_WAIT_POLICY')]))"
    )
    env = _env(**{"OMP_WAIT_POLICY": "", **variables})
    done = subprocess.run(
        [sys.executable, "-c", "import json; " + code], capture_output=True, text=True, env=env, timeout=120
    )
    # torch reads the policy when it loads: the command line sets it before anything imports torch
    assert json.loads(done.stdout.splitlines()[-1]) == [False, policy], done.stderr


# ---------------------------------------------------------------------------------------------- 2. Ctrl-C


def _interrupt_after_first_step(args: list[str], root: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """Start ``reasongym train ...`` in ``root``, send ``signum`` once its first metrics line is written."""
    code = (  # SIGINT may be ignored where the tests run (a background job): the child restores the handler
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from reasongym.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, "train", *args],
        cwd=root,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        logged = [path for path in root.glob("runs/*/*/metrics.jsonl") if path.stat().st_size]
        if logged and any(json.loads(line)["step"] >= 1 for line in logged[0].read_text().splitlines()):
            break
        time.sleep(0.05)
    process.send_signal(signum)
    out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.parametrize(
    ("algo", "flags", "signum"),
    [("sft", TINY_SFT, signal.SIGINT), ("grpo", [*TINY_RL, "--no-progress-bar"], signal.SIGTERM)],
)
def test_an_interrupt_saves_a_checkpoint_that_resumes(
    tmp_path: Path, algo: str, flags: list[str], signum: int
) -> None:
    args = [
        algo,
        "--model",
        "tiny",
        "--env",
        ENV,
        "--max-steps",
        "500",
        "--output-dir",
        f"runs/{algo}",
        *flags,
    ]
    stopped = _interrupt_after_first_step(args, tmp_path, signum)
    assert stopped.returncode == 130, stopped.stderr
    message = stopped.stderr.strip().splitlines()[-1]
    assert message.startswith("reasongym: interrupted after step ") and "checkpoint step-" in message
    run = (tmp_path / "runs" / algo / "latest").resolve()
    assert f"resume with `reasongym train {algo} --run-dir {run.relative_to(tmp_path)}`" in message
    saved = int(message.split("interrupted after step ")[1].split()[0])
    assert saved >= 1 and (run / "checkpoints" / f"step-{saved:06d}" / "checkpoint.json").is_file()
    resumed = _cli(
        "train", algo, "--run-dir", f"runs/{algo}/latest", "--max-steps", str(saved + 1), cwd=tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["steps"] == saved + 1


def test_a_start_that_fails_leaves_no_run_folder_and_latest_points_back(tmp_path: Path) -> None:
    args = [
        "train",
        "sft",
        "--model",
        "tiny",
        "--env",
        ENV,
        "--max-steps",
        "1",
        "--output-dir",
        str(tmp_path),
    ]
    assert main([*args, *TINY_SFT]) == 0
    first = (tmp_path / "latest").resolve()
    # --split names no split of the environment: found after the run folder is made, and it is removed again
    assert main([*args, *TINY_SFT, "--split", "nope"]) == 2
    assert [p for p in tmp_path.iterdir() if p.name != "latest"] == [first]
    assert (tmp_path / "latest").resolve() == first


def test_a_run_that_logged_steps_is_kept_though_it_has_no_checkpoint(tmp_path: Path) -> None:
    # What an interrupted torchrun job leaves (no checkpoint on interrupt across processes): its metrics stay.
    from reasongym.distributed import SINGLE_PROCESS
    from reasongym.errors import TrainingInterrupted
    from reasongym.runs.lifecycle import job_folder

    options = {"resume": None, "name": ("grpo", ENV, 0), "run_info": {"algo": "grpo"}, "info": SINGLE_PROCESS}
    with pytest.raises(TrainingInterrupted) as stop:
        with job_folder(tmp_path / "b", **options) as logged:
            logged.folder.metrics_path.write_text(
                '{"step": 1, "rollout/reward_mean": 0.5}\n', encoding="utf-8"
            )
            raise TrainingInterrupted("grpo stopped by Ctrl-C after step 1 of 10")
    assert logged.folder.metrics_path.is_file()
    assert "no checkpoint to resume from" in str(stop.value) and str(logged.path) in str(stop.value)
    with pytest.raises(TrainingInterrupted, match="held nothing to resume and was removed"):
        with job_folder(tmp_path / "a", **options) as empty:
            raise TrainingInterrupted("grpo stopped by Ctrl-C after step 0 of 10")
    assert not empty.path.exists()


# ---------------------------------------------------------------------------------------------- 3. latest


def test_latest_names_the_newest_run_and_the_parent_folder_stands_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for seed in ("1", "2"):
        args = [
            "train",
            "sft",
            "--env",
            ENV,
            "--max-steps",
            "1",
            "--seed",
            seed,
            "--output-dir",
            str(tmp_path),
        ]
        assert main([*args, *TINY_SFT]) == 0
        runs.append(Path(json.loads(capsys.readouterr().out.splitlines()[-1])["run_dir"]))
    assert (tmp_path / "latest").is_symlink() and (tmp_path / "latest").resolve() == runs[1].resolve()
    evaluate = [
        ENV,
        "--difficulty",
        "1",
        "--num-problems",
        "2",
        "--max-new-tokens",
        "4",
        "--no-progress",
        "--json",
    ]
    for model in (tmp_path / "latest", tmp_path):  # the pointer, and the folder of runs itself
        out = tmp_path / f"{model.name}.jsonl"
        assert main(["eval", str(model), *evaluate, "--out", str(out)]) == 0
        capsys.readouterr()
        assert json.loads(out.read_text().splitlines()[0])["settings"]["model"] == str(runs[1].resolve())
    # a run started from the folder of runs takes that run's preset (tiny), as from the run itself
    assert main(["train", "grpo", "--model", str(tmp_path), "--env", ENV, "--help"]) == 0
    assert "(default: 0.0001; preset default: 1e-06)" in " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------------------------------------------- 4. data


def test_list_says_where_each_environment_finds_its_data(tmp_path: Path) -> None:
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "test.jsonl").write_text(
        json.dumps({"id": "g0", "question": "1 + 1?", "answer": "2", "solution": None}) + "\n"
    )
    listed = _cli("list", "--json", REASONGYM_DATA_DIR=str(tmp_path))
    data = {row["id"]: row["data"] for row in map(json.loads, listed.stdout.splitlines())}
    assert data[ENV] == "generated" and data["reasongym/GSM8K-v0"] == "local: test"
    assert data["reasongym/AIME24-v0"] == "hub"
    table = _cli("list", REASONGYM_DATA_DIR=str(tmp_path)).stdout
    assert "`reasongym data ENV_ID --out DIR` writes one" in table


def test_data_converts_a_file_a_user_has_into_the_data_root_layout(data_dir: Path, tmp_path: Path) -> None:
    original = data_dir / "gsm8k" / "original" / "test.jsonl"  # the release's layout: "rationale #### 18"
    done = _cli(
        "data", "reasongym/GSM8K-v0", "--split", "test", "--from", str(original), "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"wrote {tmp_path / 'gsm8k' / 'test.jsonl'}: 1319 problems (reasongym/GSM8K-v0, split test)",
        f"use it: export REASONGYM_DATA_DIR={tmp_path}",
    ]
    import reasongym

    ours = reasongym.make("reasongym/GSM8K-v0", source_kwargs={"data_dir": tmp_path / "gsm8k"}).unwrapped
    shared = reasongym.make("reasongym/GSM8K-v0").unwrapped
    assert [ours.problem_at(i, split="test") for i in (0, 700, 1318)] == [
        shared.problem_at(i, split="test") for i in (0, 700, 1318)
    ]


def test_every_benchmark_reads_back_what_the_data_command_writes(data_dir: Path, tmp_path: Path) -> None:
    from reasongym.envs.benchmarks import BENCHMARK_ENVS
    from reasongym.envs.benchmarks.data import entry_source, write_split

    for entry in BENCHMARK_ENVS:
        source = entry_source(entry)
        for split, route in source.routes.items():
            lines = (data_dir / route.shared_file).read_text(encoding="utf-8").splitlines()[:40]
            given = tmp_path / "given" / route.shared_file
            given.parent.mkdir(parents=True, exist_ok=True)
            given.write_text("\n".join(lines) + "\n", encoding="utf-8")
            written, count = write_split(entry.id, split, tmp_path / "root", from_file=given)
            expected = entry_source(entry, data_dir={split: given}).rows(split)
            again = entry_source(entry, data_dir={split: written}).rows(split)
            assert count == len(expected) and list(again) == list(expected), (entry.id, split)


def test_data_fails_at_once_where_the_hub_cannot_be_reached(tmp_path: Path) -> None:
    started = time.monotonic()
    done = _cli(
        "data",
        "reasongym/AIME24-v0",
        "--out",
        str(tmp_path),
        HF_HUB_OFFLINE="",  # other tests of the session may have set either
        HF_DATASETS_OFFLINE="",
        HF_ENDPOINT="http://127.0.0.1:9",
    )
    assert done.returncode == 1 and time.monotonic() - started < 30
    assert "the hub cannot be reached (127.0.0.1:9 cannot be reached" in done.stderr
    assert "--from FILE" in done.stderr and not (tmp_path / "aime24").exists()
    refused = _cli("data", ENV, "--out", str(tmp_path))
    assert refused.returncode == 2 and "is not a benchmark with data files" in refused.stderr


# ---------------------------------------------------------------------------------------------- 8. the CLI


@pytest.mark.parametrize(
    ("ours", "trl", "value"),
    [("lr", "--learning-rate", 0.003), ("group_size", "--num-generations", 3), ("kl_coef", "--beta", 0.5)],
)
def test_trls_names_are_other_names_of_our_flags(ours: str, trl: str, value: float) -> None:
    from reasongym.cli.flags import parse, trl_names
    from reasongym.cli.train import _Layers, _nested, train_command

    layers = _Layers.read("grpo", [])
    parsed = parse(
        train_command("grpo"),
        [trl, str(value)],
        default=layers.default,
        prog="reasongym train grpo",
        description="",
        nested=_nested("grpo"),
        aliases=trl_names("grpo"),
    )
    section = {"lr": parsed.run, "group_size": parsed.rollout, "kl_coef": parsed.grpo}[ours]
    assert getattr(section, ours) == value


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (
            ["show", ENV, "--nn", "2"],
            ["unrecognized arguments: --nn 2; did you mean --n?", "usage: reasongym show"],
        ),
        (["verify", "x", "1", "--glod", "2"], ["did you mean --gold?", "usage: reasongym verify"]),
        (
            ["train", "grpo", "--env", ENV, "--num-generation", "4"],
            ["did you mean --num-generations/--group-size"],
        ),
        (["compare", "a.jsonl", "--plots", "p.png"], ["did you mean --plot?", "usage: reasongym compare"]),
    ],
)
def test_errors_show_the_commands_usage_and_the_nearest_flag(
    args: list[str], lines: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert all(line in err for line in lines) and "usage: reasongym [-h]" not in err


def test_show_takes_n_and_verify_takes_the_gold_as_its_second_word(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", ENV, "-n", "2"]) == 0
    assert capsys.readouterr().out.count(f"--- {ENV} test #") == 2
    assert main(["verify", "so x = \\boxed{1/2}", "0.5"]) == 0
    assert capsys.readouterr().out.startswith("correct")
    assert main(["verify", "x", "0.5", "--gold", "1"]) == 2
    assert "two gold answers" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- 6, 7. warnings


def test_identical_samples_at_a_temperature_are_called_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(Path(__file__).parent / "served"))
    from benchmarks.harness.fake_server import Reply, chat_body, fake_server

    # a server that ignores n and temperature: one choice per request, the same text every time
    with fake_server([Reply(body=chat_body(["So \\boxed{152}."]))] * 40) as server:
        argv = ["eval", "--base-url", server.base_url, "--model", "m", ENV, "--num-problems", "3", "--n", "4"]
        assert main([*argv, "--temperature", "0.8", "--out", str(tmp_path / "o.jsonl"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "(test, 3 problems, n=4, temperature 0.8)" in out
    assert "warning: all 4 samples of each of the 3 problems are identical at temperature 0.8" in out
    assert "`transformers serve` ignores n and temperature" in out


def test_a_run_that_cannot_learn_says_why(tmp_path: Path) -> None:
    # a random-init model never earns a reward: every group is all wrong, every advantage 0
    args = [
        "train",
        "grpo",
        "--model",
        "tiny",
        "--env",
        ENV,
        "--max-steps",
        "10",
        *TINY_RL,
        "--no-progress-bar",
    ]
    done = _cli(*args, "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (
        "grpo: on average 100% of the groups had the same reward for every sample over the last 10 steps"
        in (done.stderr)
    )
    assert "all wrong: 100%" in done.stderr and "The problems are too hard for the model" in done.stderr
    summary, last = done.stdout.splitlines()[-2:]
    assert summary.startswith("grpo: 10 of 10 steps; ") and "reward 0 -> 0" in summary
    assert json.loads(last)["steps"] == 10


# ---------------------------------------------------------------------------------------------- 9. say why


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


# ---------------------------------------------------------------------------------------------- 10. pictures


def test_the_metrics_picture_merges_equal_panels_and_leaves_flags_out(tmp_path: Path) -> None:
    from reasongym.runs.metrics import MetricsWriter
    from reasongym.runs.plots import _panels, plot_metrics

    with MetricsWriter(tmp_path, tensorboard=False) as writer:
        for step in range(1, 31):
            share = step / 30
            writer.log(
                step,
                {
                    "rollout/reward_mean": share,
                    "rollout/correct_rate": share,
                    "train/entropy": 1 - share,
                    "train/entropy_collapsed": float(step > 20),
                    "loss/policy": 0.1,
                    "loss/total": 0.1,
                },
            )
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    panels = _panels(records, ("rollout/reward_mean", "rollout/correct_rate", "train/entropy", "loss/"))
    assert [(title, [label for label, _, _ in series]) for title, series in panels] == [
        ("reward (batch mean) = correct samples (share)", ["rollout/reward_mean"]),
        ("token entropy", ["train/entropy"]),  # the 0/1 flag is no curve
        ("losses", ["policy = total"]),
    ]
    png = plot_metrics(
        tmp_path, tmp_path / "m.png", keys=("rollout/reward_mean", "rollout/correct_rate", "train/")
    )
    width, height = (
        int.from_bytes(png.read_bytes()[16:20], "big"),
        int.from_bytes(png.read_bytes()[20:24], "big"),
    )
    assert width <= 1300 and height <= 1000  # rows of at most three panels, not one row 3,000 px wide


# ---------------------------------------------------------------------------------------------- 5. a real model


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


# ---------------------------------------------------------------------------------------------- 6. served


def test_ctrl_c_sends_no_queued_request_and_leaves_a_working_client() -> None:
    sys.path.insert(0, str(Path(__file__).parent / "served"))
    from benchmarks.harness.fake_server import Reply, fake_server

    child = (  # six prompts, two in flight; Ctrl-C; then one more call on the same generator
        "import signal, sys, time; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from reasongym.generation import SamplingParams\n"
        "from reasongym.generation.served import OpenAIGenerator, ServedModelConfig\n"
        "params = SamplingParams(n=1, max_new_tokens=4, temperature=1.0, seed=0)\n"
        "generator = OpenAIGenerator(ServedModelConfig(model='m', base_url=sys.argv[1], max_concurrency=2))\n"
        "try:\n    generator.generate([f'p{i}' for i in range(6)], params)\n"
        "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n"
        "time.sleep(1)\nprint(len(generator.generate(['again'], params)), flush=True)\n"
    )
    with fake_server([Reply(delay=60)] * 2) as server:
        process = subprocess.Popen(
            [sys.executable, "-c", child, server.base_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)  # not the 60 s the requests in flight would take
    assert out.split() == ["interrupted", "1"], err
    # the four queued requests were never sent; the call after Ctrl-C got a fresh connection pool
    assert [request["messages"][0]["content"] for request in server.requests][2:] == ["again"]


# ---------------------------------------------------------------------------------------------- 11. eval output


def test_the_evaluation_table_says_how_it_sampled_and_what_it_means(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.evaluation.report import comparability_warning, format_report, summarize

    records = [
        {
            "index": i,
            "env_id": ENV,
            "split": "test",
            "kind": "math",
            "completions": ["a", "b"],
            "extracted": ["1", "2"],
            "correct": [i == 0, False],
            "finish_reasons": ["length", "stop"],
            "settings": {"temperature": 0.7},
        }
        for i in range(3)
    ]
    report = summarize(records, ks=(1,))
    table = format_report(report)
    assert table.splitlines()[0] == f"{ENV} (test, 3 problems, n=2, temperature 0.7)"
    assert "  3 of 6 completions were cut at the length limit (max_new_tokens) before they ended" in table
    assert "95% interval (bootstrap over problems)" in table and report.sampling_warning is None
    other = summarize(records[:2], ks=(1,))
    assert comparability_warning([report, report]) is None
    assert comparability_warning([report, other]) == (
        "the files differ in problem counts (3, 2): their metrics are averages over different problems or "
        "samples, so differences between columns are not only the models'"
    )
    for name, rows in (("three", records), ("two", records[:2])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["compare", str(tmp_path / "three.jsonl"), str(tmp_path / "two.jsonl")]) == 0
    assert "reasongym: warning: the files differ in problem counts (3, 2)" in capsys.readouterr().err


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
