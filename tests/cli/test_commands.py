"""The command line: each command once through a subprocess (`python -m reasongym`), the rest in-process.

In-process calls go through ``main(argv)``, the function the console script runs, so exit codes and
messages are the same; they only save the interpreter start-up.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from reasongym.cli import main
from tests.cli.running import cli

ENV = "reasongym/Arithmetic-v0"


# ---------------------------------------------------------------------------------------------- help


def test_help_through_the_console_module() -> None:
    result = cli("--help")
    assert result.returncode == 0, result.stderr
    assert "usage: reasongym" in result.stdout and "Exit codes" in result.stdout


@pytest.mark.parametrize(
    "args", [["eval", "--help"], ["show", "--help"], ["train", "grpo", "--help"], ["demo", "--help"]]
)
def test_help_of_each_command_exits_zero(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 0
    assert "usage: reasongym" in capsys.readouterr().out


def test_train_help_lists_config_fields_with_their_docstrings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "sft", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())  # help text is boxed and wrapped
    # the tiny preset is the one in use (no --model); the default preset's value is shown beside it
    assert "--max-steps INT" in out and "Steps to train in total" in out
    assert "(default: 0.002; preset default: 1e-05)" in out
    assert "sft: SFT's own (SFTConfig)" in out and "run: steps, optimizer" in out
    assert "--lora.target-modules [STR [STR ...]]" in out and "ELLIPSIS" not in out


def test_star_help_keeps_the_prefix_of_its_nested_fine_tuning_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["train", "star", "--help", "--preset", "default"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "--sft.batch-size INT" in out and "--lora.rank INT" in out and "--group-size INT" in out
    assert "(default: 10; preset tiny: 3)" in out  # max_steps under the default preset


def test_train_help_without_an_algorithm_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--help"]) == 0
    assert "reasongym train {sft,grpo,dapo,star,distill}" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- list, show


def test_list_shows_every_builtin_id() -> None:
    result = cli("list", "--json")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stderr
    assert {row["id"] for row in rows} >= {ENV, "reasongym/GSM8K-v0", "reasongym/AIME24-v0"}
    assert all(row["answer_type"] and row["description"] for row in rows)


def test_show_prints_gold_and_solution() -> None:
    result = cli("show", ENV, "--n", "3", "--difficulty", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("gold: ") == 3 and result.stdout.count("solution: ") == 3
    assert "\\boxed{" in result.stdout


# ---------------------------------------------------------------------------------------------- verify


def test_verify_through_the_console_module() -> None:
    result = cli("verify", "-", "--gold", "B", "--kind", "choice", stdin="So the answer is (B).")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("correct")


@pytest.mark.parametrize(
    ("args", "stdin", "correct"),
    [
        (["The answer is \\boxed{\\frac{1}{2}}", "--gold", "0.5"], None, True),
        (["-", "--gold", "B", "--kind", "choice"], "I pick (C).", False),
        (["so yes", "--gold", "yes", "--kind", "yesno"], None, True),
    ],
)
def test_verify_one_completion(
    args: list[str],
    stdin: str | None,
    correct: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin or ""))
    assert main(["verify", *args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["correct"] is correct


def test_verify_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"completion": "\\boxed{4}", "gold": "4"},
        {"completion": "\\boxed{5}", "gold": "4", "kind": "integer"},
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["verify", "--file", str(path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["correct"] for line in lines[:2]] == [True, False]
    assert lines[-1] == {"rows": 2, "correct": 1, "accuracy": 0.5}


# ---------------------------------------------------------------------------------------------- train, eval


@pytest.mark.slow  # a training and two evaluations, each a process
def test_train_then_eval_the_run_folder_then_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train = cli(
        "train",
        "sft",
        "--env",
        ENV,
        "--difficulty",
        "1",
        "--num-examples",
        "8",
        "--max-steps",
        "2",
        "--batch-size",
        "4",
        "--output-dir",
        str(tmp_path / "runs"),
        "--no-progress-bar",
    )
    assert train.returncode == 0, train.stderr
    summary = json.loads(train.stdout.splitlines()[-1])
    assert summary["steps"] == 2 and Path(summary["run_dir"]).is_dir()
    outputs = [tmp_path / "eval0.jsonl", tmp_path / "eval1.jsonl"]
    evaluated = cli(
        "eval",
        summary["run_dir"],
        ENV,
        "--difficulty",
        "1",
        "--num-problems",
        "3",
        "--n",
        "2",
        "--max-new-tokens",
        "8",
        "--out",
        str(outputs[0]),
        "--json",
        "--no-progress",
    )
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads(evaluated.stdout.splitlines()[-1])
    assert report["num_problems"] == 3
    assert set(report["metrics"]) == {"pass@1", "pass@2", "pass^1", "pass^2", "maj@1", "maj@2", "avg@2"}
    # a second evaluation of the same checkpoint (in-process), with another seed, to compare against
    args = ["eval", summary["run_dir"], ENV, "--difficulty", "1", "--num-problems", "3", "--n", "2"]
    assert (
        main([*args, "--max-new-tokens", "8", "--seed", "1", "--out", str(outputs[1]), "--no-progress"]) == 0
    )
    capsys.readouterr()
    assert main(["compare", *map(str, outputs), "--plot", str(tmp_path / "k.png")]) == 0
    assert capsys.readouterr().out.splitlines()[0].split() == ["metric", "eval0", "eval1"]
    assert (tmp_path / "k.png").is_file()


def test_eval_grades_stored_completions_without_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stored.jsonl"
    # problem 0 of the level-1 test stream is 85 + 67
    path.write_text(
        json.dumps({"index": 0, "completions": ["\\boxed{152}", "\\boxed{7}"]}) + "\n", encoding="utf-8"
    )
    assert main(["eval", "--completions", str(path), ENV, "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["pass@1"] == 0.5


def test_eval_grades_under_a_named_rounding_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, out = tmp_path / "rounded.jsonl", tmp_path / "graded.jsonl"
    path.write_text(json.dumps({"gold": "299.94", "completions": ["\\boxed{300}"]}) + "\n", encoding="utf-8")
    args = ["eval", "--completions", str(path), "--json", "--no-progress", "--out", str(out)]
    assert main([*args, "--no-resume"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["pass@1"] == 0.0  # exact: 300 is not 299.94
    assert main([*args, "--no-resume", "--tolerance", "shown"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["pass@1"] == 1.0
    assert json.loads(out.read_text(encoding="utf-8"))["verifier"].endswith("+shown")


@pytest.mark.parametrize("text", ["lr = 0.01\nbatch_size = 4\n", "[run]\nlr = 0.01\n[sft]\nbatch_size = 4\n"])
def test_config_file_values_and_flags_build_the_config(tmp_path: Path, text: str) -> None:
    from reasongym.agents.algorithms import preset_configs, sort_fields
    from reasongym.agents.presets import merge_values
    from reasongym.cli.args import read_config_file

    config = tmp_path / "sft.toml"
    config.write_text(text, encoding="utf-8")
    from_file = sort_fields("sft", read_config_file(config), where="file")
    configs = preset_configs("tiny", "sft", merge_values(from_file, {"sft": {"batch_size": 2}}))
    assert (configs["run"].lr, configs["sft"].batch_size, configs["run"].max_steps) == (0.01, 2, 800)


def _strict_loads(text: str) -> object:
    """json.loads that refuses NaN and Infinity (which Python's json accepts by default)."""

    def refuse(name: str) -> object:
        raise ValueError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_resuming_a_run_keeps_its_config_model_and_env(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = [
        "--num-prompts",
        "2",
        "--max-new-tokens",
        "8",
        "--kl",
        "off",
        "--samples-every",
        "0",
        "--no-progress-bar",
    ]
    first = [
        "train",
        "grpo",
        "--env",
        ENV,
        "--model",
        "tiny",
        "--group-size",
        "2",
        "--max-steps",
        "1",
        *small,
    ]
    assert main([*first, "--output-dir", str(tmp_path)]) == 0
    run_dir = _strict_loads(capsys.readouterr().out.splitlines()[-1])["run_dir"]
    assert main(["train", "grpo", "--run-dir", run_dir, "--max-steps", "2"]) == 0
    out, err = capsys.readouterr()
    summary = _strict_loads(out.splitlines()[-1])  # strict: an undefined metric must be null, not NaN
    config = json.loads((Path(run_dir) / "config.json").read_text())
    assert summary["steps"] == 2 and summary["env"] == ENV
    assert (
        config["rollout"]["group_size"],
        config["rollout"]["num_prompts"],
        config["run"]["max_steps"],
    ) == (2, 2, 2)
    assert "run.max_steps=2" in err and "run.max_steps=1" in err and "group_size" not in err
    assert json.loads((Path(run_dir) / "run.json").read_text())["model"] == "tiny"
    for line in (Path(run_dir) / "metrics.jsonl").read_text().splitlines():
        _strict_loads(line)
    # precedence on resume: saved run config < config file < flags
    config_file = tmp_path / "more.toml"
    config_file.write_text("max_steps = 4\nnum_prompts = 1\n", encoding="utf-8")
    assert (
        main(["train", "grpo", "--run-dir", run_dir, "--config", str(config_file), "--max-steps", "3"]) == 0
    )
    config = json.loads((Path(run_dir) / "config.json").read_text())
    assert (
        config["rollout"]["group_size"],
        config["rollout"]["num_prompts"],
        config["run"]["max_steps"],
    ) == (2, 1, 3)


@pytest.mark.parametrize(
    ("run_info", "message"),
    [
        (None, "has no run.json naming its model; pass --model"),
        (
            {"algo": "dapo", "model": "tiny", "env": ENV},
            "is a dapo run; resume it with `reasongym train dapo",
        ),
    ],
)
def test_resuming_a_run_that_cannot_be_resumed_as_asked_is_a_usage_error(
    tmp_path: Path, run_info: dict | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.agents.algorithms import preset_configs

    record = {"algo": "grpo", **{s: dataclasses.asdict(c) for s, c in preset_configs("tiny", "grpo").items()}}
    (tmp_path / "config.json").write_text(json.dumps(record), encoding="utf-8")  # a run the library wrote
    (tmp_path / "metrics.jsonl").write_text("", encoding="utf-8")
    if run_info is not None:
        (tmp_path / "run.json").write_text(json.dumps(run_info), encoding="utf-8")
    assert main(["train", "grpo", "--run-dir", str(tmp_path), "--env", ENV]) == 2
    assert message in capsys.readouterr().err


def test_the_train_summary_is_strict_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.cli import train as cli_train

    class _Result:
        steps = 1
        history = ({"rollout/len_correct_mean": float("nan"), "loss/total": float("inf"), "loss/kl": 0.5},)

    monkeypatch.setattr(cli_train, "_train", lambda *args: cli_train.result_summary(_Result()))
    assert main(["train", "grpo", "--env", ENV]) == 0
    last = _strict_loads(capsys.readouterr().out)["last"]
    assert last == {"rollout/len_correct_mean": None, "loss/total": None, "loss/kl": 0.5}


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    import reasongym

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"reasongym {reasongym.__version__}"


# ---------------------------------------------------------------------------------------------- demo


def test_demo_quick(tmp_path: Path) -> None:
    result = cli("demo", "--quick", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"pass@1_before", "pass@1_after", "pass@8_before", "pass@8_after", "run_dir"} <= set(summary)
    run_dir = Path(summary["run_dir"])
    assert (run_dir / "metrics.jsonl").is_file() and (run_dir / "metrics.png").is_file()
    assert (run_dir / "checkpoints" / "latest").is_file() and (run_dir / "tokenizer_config.json").is_file()
    recorded = json.loads((run_dir / "demo.json").read_text())
    assert recorded["config"]["quick"] is True and recorded["run_dir"] == summary["run_dir"]


# ---------------------------------------------------------------------------------------------- errors


def test_a_bad_argument_through_the_console_module() -> None:
    result = cli("show", "reasongym/Arithmetc-v0")
    assert result.returncode == 2
    assert "did you mean 'reasongym/Arithmetic-v0'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["bogus"], 2, "invalid choice: 'bogus'"),
        (["show", ENV, "--n", "0"], 2, "expected an integer >= 1"),
        (["verify", "x", "--gold", "1", "--kind", "maths"], 2, "did you mean 'math'"),
        (["verify"], 2, "give either a COMPLETION"),
        (["eval", "/no/such/model", ENV], 2, "does not exist: no such file or folder"),
        (["eval", "runs/sft/sft-*", ENV], 2, "a shell pattern that matched nothing"),
        (["train", "grpx"], 2, "did you mean 'grpo'"),
        (["train", "sft", "--env", ENV, "--lr", "-1"], 2, "lr=-1.0 is not allowed"),
        (
            ["train", "sft", "--env", ENV, "--max-stepz", "3"],
            2,
            "options: --max-stepz, 3; did you mean --max-steps?",
        ),
        (
            ["train", "sft", "--env", ENV, "--max-step", "3"],
            2,
            "did you mean --max-steps?",
        ),  # no abbreviations
        (["train", "grpo", "--env", ENV, "--kl", "kk"], 2, "invalid choice 'kk' for argument '--kl'"),
        (["eval", "--n", "2", "--k", "4", "reasongym/no-such-model", ENV], 2, "ks=[4] is not allowed"),
        (["train", "sft", "--max-steps", "3"], 2, "--env is required"),
        (["compare", "/no/such.jsonl"], 2, "does not exist"),
        (
            ["verify", "--file", "/no/such.jsonl"],
            2,
            "verify input file '/no/such.jsonl' (--file) does not exist",
        ),
        (["train", "grpo", "--run-dir", "/no/such/run"], 2, "to start a new run use --output-dir"),
        (["train", "grpo", "--run-dir", "/no/such/run", "--env", ENV], 2, "resumes an existing run folder"),
        (["demo", "--algo", "ppo"], 2, "invalid choice 'ppo' for argument '--algo'"),
    ],
)
def test_bad_arguments_give_a_clear_error_and_exit_code(
    args: list[str],
    code: int,
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # a failed command must leave no files behind
    assert main(args) == code
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    assert err.startswith("reasongym: error: ") and message in err


@pytest.mark.parametrize(
    ("name", "text"),
    [("sft.toml", f'env = "{ENV}"\nmax_step = 3\n'), ("sft.yaml", f"env: {ENV}\nmax_step: 3\n")],
)
def test_a_config_file_with_an_unknown_field_names_the_nearest(
    tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / name
    config.write_text(text, encoding="utf-8")
    assert main(["train", "sft", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "unknown field 'max_step'" in err and "did you mean 'max_steps'" in err and str(config) in err


def test_a_missing_dataset_says_how_to_provide_it(tmp_path: Path) -> None:
    result = cli("show", "reasongym/AIME24-v0", REASONGYM_DATA_DIR=str(tmp_path / "empty"))
    assert result.returncode == 1
    assert "REASONGYM_DATA_DIR" in result.stderr and "Traceback" not in result.stderr


def test_a_damaged_checkpoint_is_reported_once_when_the_command_line_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 28, item 12: the folder check and the trainer each warned about the same damaged checkpoint.
    args = ["train", "grpo", "--env", ENV, "--model", "tiny", "--group-size", "2", "--num-prompts", "1"]
    args += ["--max-new-tokens", "8", "--kl", "off", "--save-every", "1", "--no-progress-bar"]
    assert main([*args, "--max-steps", "2", "--output-dir", str(tmp_path)]) == 0
    run_dir = Path(_strict_loads(capsys.readouterr().out.splitlines()[-1])["run_dir"])
    weights = run_dir / "checkpoints" / "step-000002" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8] + b"\x00" * 8)
    with pytest.warns(RuntimeWarning) as caught:
        assert main(["train", "grpo", "--run-dir", str(run_dir), "--max-steps", "3"]) == 0
    damaged = [str(w.message) for w in caught if "damaged" in str(w.message)]
    assert len(damaged) == 1 and "resuming from step-000001" in damaged[0], damaged


@pytest.mark.slow  # starts the command line in subprocesses
def test_list_says_where_each_environment_finds_its_data(tmp_path: Path) -> None:
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "test.jsonl").write_text(
        json.dumps({"id": "g0", "question": "1 + 1?", "answer": "2", "solution": None}) + "\n"
    )
    listed = cli("list", "--json", REASONGYM_DATA_DIR=str(tmp_path))
    data = {row["id"]: row["data"] for row in map(json.loads, listed.stdout.splitlines())}
    assert data[ENV] == "generated" and data["reasongym/GSM8K-v0"] == "local: test"
    assert data["reasongym/AIME24-v0"] == "hub"
    table = cli("list", REASONGYM_DATA_DIR=str(tmp_path)).stdout
    assert "`reasongym data ENV_ID --out DIR` writes one" in table


def test_show_takes_n_and_verify_takes_the_gold_as_its_second_word(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", ENV, "-n", "2"]) == 0
    assert capsys.readouterr().out.count(f"--- {ENV} test #") == 2
    assert main(["verify", "so x = \\boxed{1/2}", "0.5"]) == 0
    assert capsys.readouterr().out.startswith("correct")
    assert main(["verify", "x", "0.5", "--gold", "1"]) == 2
    assert "two gold answers" in capsys.readouterr().err


def test_an_id_registered_in_python_is_explained_on_the_command_line(tmp_path: Path) -> None:
    done = cli("eval", "tiny", "me/Primes-v0", "--num-problems", "2", cwd=tmp_path)
    assert done.returncode == 2
    err = done.stderr
    assert err.startswith("reasongym: error: no environment named 'me/Primes-v0'")
    assert "register it in a plugin" in err and "reasongym.evaluation.evaluate(model, env_id" in err
    assert list(tmp_path.iterdir()) == []  # refused before the model loads or the records file is made
    typo = cli("show", "reasongym/Arithmetc-v0", cwd=tmp_path)  # a near id: the hint, not the lecture
    assert "did you mean 'reasongym/Arithmetic-v0'" in typo.stderr and "plugin" not in typo.stderr


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


def test_help_lists_every_trainer() -> None:
    from reasongym.cli.jobs import JOBS
    from reasongym.cli.main import build_parser

    text = build_parser().format_help()
    assert "train: sft, grpo, dapo, star or distill" in " ".join(text.split())
    assert set(JOBS) == {"sft", "grpo", "dapo", "star", "distill"}
