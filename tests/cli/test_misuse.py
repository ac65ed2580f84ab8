"""The command line used carelessly (issue 16, items 8 and 10): each mistake exits with the documented code
and a message that names what is wrong, never a traceback from deep inside."""

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
TRAIN = ["train", "grpo", "--env", ENV, "--model", "tiny", "--no-progress-bar"]


def _completions(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_train_help_exits_zero_through_the_console_module() -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "reasongym", "train", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "usage: reasongym train {sft,grpo,dapo,star,distill}" in done.stdout
        and "unrecognized" not in done.stderr
    )


@pytest.mark.parametrize(
    ("setup", "args", "code", "message"),
    [
        # input files: not UTF-8, cut off, or not what the command reads
        (
            lambda d: (d / "in.jsonl").write_bytes(b'{"index": 0, "completion": "caf\xe9"}\n'),
            ["eval", "--completions", "{d}/in.jsonl", ENV],
            2,
            "in.jsonl' is not UTF-8 text (byte 31 is b'\\xe9'); JSONL files must be UTF-8",
        ),
        (
            lambda d: (d / "in.jsonl").write_bytes(b'{"gold": "1", "completion": "\\\\boxed{1}"}\n\xff\xfe'),
            ["verify", "--file", "{d}/in.jsonl"],
            2,
            "in.jsonl' is not UTF-8 text",
        ),
        (
            lambda d: _completions(d / "in.jsonl", '{"index": 0, "completion": "7"}\n{"index": 1, "compl'),
            ["eval", "--completions", "{d}/in.jsonl", ENV],
            2,
            "in.jsonl:2, the last line, is cut off (not valid JSON: Unterminated string",
        ),
        (
            lambda d: _completions(d / "in.jsonl", '{"index": 0, "completion": "7"}\n'),
            ["compare", "{d}/in.jsonl"],
            2,
            "in.jsonl: record 1 has no 'correct' list: these are not graded records (completions to grade?); "
            "grade them first with `reasongym eval --completions FILE [ENV_ID] --out graded.jsonl`",
        ),
        # output paths
        (
            lambda d: _completions(d / "in.jsonl", '{"index": 0, "completion": "7"}\n'),
            ["eval", "--completions", "{d}/in.jsonl", ENV, "--out", "/proc/x"],
            2,
            "cannot open '/proc/x' for writing (evaluation file '/proc/x'): No such file or directory",
        ),
        # models and run folders
        (
            lambda d: (d / "notarun").mkdir(),
            ["eval", "{d}/notarun", ENV],
            2,
            "notarun' is a folder that holds no model: no config.json (a model saved with save_pretrained), "
            ".gguf file, checkpoint.json (a checkpoint) or checkpoints/ (a run folder)",
        ),
        (
            lambda d: ((d / "run").mkdir(), (d / "run" / "config.json").write_text('{"run": {}}')),
            ["eval", "{d}/run", ENV],
            2,
            "is not a model transformers can load: its config.json names no known model type",
        ),
        (
            lambda d: ((d / "run").mkdir(), (d / "run" / "metrics.jsonl").write_text('{"step": 1}\n')),
            ["eval", "{d}/run", ENV],
            2,
            "run' has no complete checkpoint under checkpoints/ (it stopped before its first save?)",
        ),
        (
            lambda d: (d / "file.txt").write_text("x"),
            [*TRAIN, "--run-dir", "{d}/file.txt"],
            2,
            "file.txt' is a file, not a run folder; --run-dir resumes a run folder",
        ),
        (
            lambda d: (
                (d / "model").mkdir(),
                (d / "model" / "config.json").write_text('{"model_type": "llama"}'),
            ),
            [*TRAIN, "--run-dir", "{d}/model"],
            2,
            "model' is not a run folder (it has no run.json, metrics.jsonl or checkpoints/): to start a new run "
            "use --output-dir",
        ),
        (
            lambda d: (
                (d / "run").mkdir(),
                (d / "run" / "run.json").write_text('{"algo": "grpo", "model": "tiny"}'),
            ),
            [*TRAIN, "--run-dir", "{d}/run"],
            2,
            "run' has no config.json, so resuming would train with default settings instead of the run's own",
        ),
        (
            lambda d: (
                (d / "run").mkdir(),
                (d / "run" / "config.json").write_text("{}"),
                (d / "run" / "metrics.jsonl").write_text('{"step": 1}\n{"step": 2}\n'),
            ),
            [*TRAIN, "--run-dir", "{d}/run"],
            2,
            "run' has trained steps (metrics.jsonl up to step 2) but no checkpoint under checkpoints/ to resume "
            "from: restarting at step 0 would log those steps again",
        ),
        # config values of the wrong type or range, from a config file and from flags
        (
            lambda d: (d / "c.toml").write_text('max_steps = "abc"\n'),
            [*TRAIN, "--config", "{d}/c.toml"],
            2,
            "max_steps='abc' is not allowed; expected an integer",
        ),
        (
            lambda d: (d / "c.toml").write_text("max_new_tokens = 1e9\n"),
            [*TRAIN, "--config", "{d}/c.toml"],
            2,
            "max_new_tokens=1000000000.0 is not allowed; expected an integer",
        ),
        (
            lambda d: (d / "c.yaml").write_text("max_new_tokens: 1000000000\n"),
            [*TRAIN, "--config", "{d}/c.yaml"],
            2,
            "max_new_tokens=1000000000 is not allowed; expected an integer in [1, 1048576]",
        ),
        (
            None,
            [*TRAIN, "--max-new-tokens", "1e9"],
            2,
            "--max-new-tokens: invalid literal for int() with base 10: '1e9'",
        ),
        (
            None,
            [*TRAIN, "--max-steps", "abc"],
            2,
            "--max-steps: invalid literal for int() with base 10: 'abc'",
        ),
        (None, [*TRAIN, "--max-new-tokens", "1000000000"], 2, "max_new_tokens=1000000000 is not allowed"),
        # issue 28, item 6: the collective timeout is a flag, checked like any other
        (
            None,
            [*TRAIN, "--collective-timeout", "0"],
            2,
            "collective_timeout=0.0 is not allowed; expected seconds > 0",
        ),
        # issue 28, item 11: config files that were tracebacks or exit 1
        (
            lambda d: (d / "c.yaml").write_text('a: !!python/object/apply:os.system ["echo x"]\n'),
            [*TRAIN, "--config", "{d}/c.yaml"],
            2,
            "c.yaml' could not be parsed: line 1: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system' (a config holds plain values",
        ),
        (
            lambda d: (d / "c.yaml").write_text("max_steps: [1\n"),
            [*TRAIN, "--config", "{d}/c.yaml"],
            2,
            "c.yaml' could not be parsed: line 2: expected ',' or ']'",
        ),
        (
            lambda d: (d / "c.yaml").write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n"),
            [*TRAIN, "--config", "{d}/c.yaml"],
            2,
            "c.yaml' is nested deeper than Python's recursion limit",
        ),
        (
            lambda d: (d / "c.toml").write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n"),
            [*TRAIN, "--config", "{d}/c.toml"],
            2,
            "c.toml' is nested deeper than Python's recursion limit",
        ),
        # issue 28, item 12: /dev/null exists
        (
            None,
            [*TRAIN, "--config", "/dev/null"],
            2,
            "config file '/dev/null' is not a regular file (a device, pipe or socket); --config takes a .toml",
        ),
        # issue 28, item 11: values no run can use, refused before a model loads
        (None, [*TRAIN, "--lr", "1e300"], 2, "lr=1e+300 is not allowed; expected a float in [0, 1]"),
        (None, [*TRAIN, "--lr", "nan"], 2, "lr=nan is not allowed; expected a float in [0, 1]"),
        (None, [*TRAIN, "--seed", "-1"], 2, "seed=-1 is not allowed; expected an integer in [0, 2**32 - 1"),
        (
            None,
            [*TRAIN, "--seed", str(10**20)],
            2,
            f"seed={10**20} is not allowed; expected an integer in [0, 2**32 - 1 = 4294967295]",
        ),
        (
            lambda d: (d / "c.yaml").write_text("group_size: 1000000000000\n"),
            [*TRAIN, "--config", "{d}/c.yaml"],
            2,
            "group_size=1000000000000 is not allowed; expected an integer in [1, 1048576]",
        ),
        (
            None,
            [*TRAIN, "--group-size", str(2**16), "--num-prompts", str(2**5)],
            2,
            "2097152 completions a batch; expected num_prompts * group_size <= 2**20 = 1048576",
        ),
        (None, ["eval", "--model", "tiny", ENV, "--seed", str(10**20)], 2, f"seed={10**20} is not allowed"),
        (None, ["eval", "--model", "tiny", ENV, "--n", str(10**12)], 2, "n=1000000000000 is not allowed"),
        # issue 28, item 11: rows of data files Python cannot read, or of the wrong shape, name the line
        (
            lambda d: _completions(
                d / "in.jsonl", '{"gold": "A", "kind": "choice", "completions": ["A"], "choices": 5}\n'
            ),
            ["eval", "--completions", "{d}/in.jsonl", "--out", "{d}/out.jsonl"],
            2,
            "line 1: choices must be a sequence or mapping, not 5 (of type int)",
        ),
        (
            lambda d: _completions(
                d / "in.jsonl", '{"gold": "A", "kind": "choice", "completion": "A", "choices": 5}\n'
            ),
            ["verify", "--file", "{d}/in.jsonl"],
            2,
            "in.jsonl:1: choices must be a sequence or mapping, not 5",
        ),
        (
            lambda d: _completions(
                d / "in.jsonl",
                '{"gold": "1", "completions": ["1"]}\n{"gold": "1", "completions": [%s]}\n' % ("9" * 5000),
            ),
            ["eval", "--completions", "{d}/in.jsonl", "--out", "{d}/out.jsonl"],
            2,
            "in.jsonl:2 holds an integer of more than 4300 digits",
        ),
        (
            lambda d: _completions(
                d / "in.jsonl", '{"gold": "1", "completion": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
            ),
            ["verify", "--file", "{d}/in.jsonl"],
            2,
            "in.jsonl:1 holds arrays or objects nested deeper than Python's recursion limit",
        ),
        # issue 28, item 12: output paths that cannot be written fail at once, creating nothing
        (
            lambda d: _completions(d / "g.jsonl", '{"gold": "1", "correct": [true], "completions": ["1"]}\n'),
            ["compare", "{d}/g.jsonl", "--plot", "{d}/typo/p.png"],
            2,
            "cannot write the plot '{d}/typo/p.png': the folder '{d}/typo' does not exist (it is not created",
        ),
        (
            lambda d: (d / "file.txt").write_text("x"),
            [*TRAIN, "--output-dir", "{d}/file.txt/runs"],
            2,
            "cannot create a run folder in '{d}/file.txt/runs': '{d}/file.txt' is a file",
        ),
        (
            None,
            [*TRAIN, "--output-dir", "/proc/reasongym-runs"],
            2,
            "cannot create a run folder in '/proc/reasongym-runs'",
        ),
        (None, [*TRAIN, "--split", "nope", "--output-dir", "{d}/runs"], 2, "split='nope' is not a split of"),
    ],
)
def test_a_careless_command_line_names_what_is_wrong(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: object,
    args: list[str],
    code: int,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    if setup is not None:
        setup(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main([arg.replace("{d}", str(tmp_path)) for arg in args]) == code
    err = capsys.readouterr().err
    assert message.replace("{d}", str(tmp_path)) in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # a refused command leaves no files


def test_stored_completions_resume_through_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"index": i, "completion": f"\\boxed{{{i}}}"} for i in range(4)]
    source = _completions(tmp_path / "in.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    out = str(tmp_path / "graded.jsonl")
    assert main(["eval", "--completions", source, ENV, "--out", out, "--no-progress", "--json"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[-1])
    lines = Path(out).read_text(encoding="utf-8").splitlines()
    Path(out).write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    assert main(["eval", "--completions", source, ENV, "--out", out, "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["metrics"] == first["metrics"]
    assert Path(out).read_text(encoding="utf-8").splitlines() == lines


# ------------------------------------------------------------------- issue 28, items 1 and 2: what --run-dir resumes


def _run_config(algo: str = "grpo", **drop: object) -> dict:
    """A complete config.json of a tiny run, as a trainer writes it, less the sections or fields named."""
    import dataclasses

    from reasongym.agents.algorithms import preset_configs

    record: dict = {"algo": algo}
    for section, cfg in preset_configs("tiny", algo).items():
        record[section] = json.loads(json.dumps(dataclasses.asdict(cfg)))
    for key, what in drop.items():
        if what == "section":
            del record[key]
        else:
            del record[key][str(what)]
    return record


@pytest.mark.parametrize("marker", ["metrics.jsonl", "checkpoints"])
def test_run_dir_refuses_a_model_folder_and_leaves_its_files_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], marker: str
) -> None:
    model = tmp_path / "m"
    model.mkdir()
    files = {
        "config.json": json.dumps(
            {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 9}
        ),
        "tokenizer_config.json": json.dumps({"model_max_length": 2048}),
        "tokenizer.json": json.dumps({"version": "1.0"}),
    }
    for name, text in files.items():
        (model / name).write_text(text, encoding="utf-8")
    if marker == "checkpoints":
        (model / "checkpoints").mkdir()
    else:
        (model / "metrics.jsonl").write_text('{"step": 0}\n', encoding="utf-8")
    assert main([*TRAIN, "--run-dir", str(model), "--max-steps", "1", "--num-prompts", "1"]) == 2
    err = capsys.readouterr().err
    assert "m/config.json is not a reasongym run config" in err and "model_type" in err, err
    assert "Traceback" not in err
    assert {name: (model / name).read_text(encoding="utf-8") for name in files} == files


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "config.json is not a reasongym run config (an empty object)"),
        (_run_config(rollout="section"), "config.json has no [rollout] section"),
        (_run_config(run="section", grpo="section"), "config.json has no [run], [grpo] sections"),
        ({"algo": "grpo", "run": [1]}, "config.json has no [run], [rollout], [grpo] sections"),
    ],
)
def test_run_dir_refuses_an_empty_or_partial_run_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: dict, message: str
) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps({"algo": "grpo", "model": "tiny", "env": ENV}))
    (tmp_path / "checkpoints").mkdir()
    assert main(["train", "grpo", "--run-dir", str(tmp_path), "--max-steps", "1"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert not (tmp_path / "metrics.jsonl").exists()


def test_run_dir_names_every_field_of_the_run_config_that_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.cli import train as cli_train

    seen: dict = {}
    monkeypatch.setattr(cli_train, "_train", lambda algo, configs, job: seen.update(configs) or {})
    config = _run_config(rollout="group_size")
    del config["run"]["lr"]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps({"algo": "grpo", "model": "tiny", "env": ENV}))
    (tmp_path / "checkpoints").mkdir()
    assert main(["train", "grpo", "--run-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert (
        "config.json lacks 2 fields (a run of an older reasongym?), which now take the values of " in err
    ), err
    assert f"rollout.group_size={seen['rollout'].group_size!r}" in err and f"run.lr={seen['run'].lr!r}" in err


# ------------------------------------------------------------- issue 28, item 9: the text of a missing gold


@pytest.mark.parametrize("gold", ["None", "nan", "null", "-inf"])
def test_a_gold_that_reads_as_a_missing_value_is_refused_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gold: str
) -> None:
    rule = "the text of a missing or non-finite value"
    assert main(["verify", f"\\boxed{{{gold}}}", f"--gold={gold}"]) == 2
    assert f"--gold is {gold!r}, {rule}" in capsys.readouterr().err
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"gold": gold, "completion": f"\\boxed{{{gold}}}"}) + "\n", encoding="utf-8")
    assert main(["verify", "--file", str(rows)]) == 2
    assert f"{rows}:1: 'gold' is {gold!r}, {rule}" in capsys.readouterr().err
    stored = tmp_path / "stored.jsonl"
    stored.write_text(json.dumps({"gold": gold, "kind": "math", "completions": ["\\boxed{1}"]}) + "\n")
    assert main(["eval", "--completions", str(stored), "--out", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"line 1: 'gold' is {gold!r}, {rule}" in err and "Traceback" not in err


# ------------------------------------------------ issue 28, items 11 and 12: weights and folders that cannot be used


@pytest.fixture(scope="module")
def saved_tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from reasongym.policy.tiny import tiny_policy

    folder = tmp_path_factory.mktemp("tiny")
    model, tokenizer = tiny_policy()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _cut_off(folder: Path) -> None:
    weights = folder / "model.safetensors"
    os.truncate(weights, weights.stat().st_size // 2)


def _pickled(folder: Path) -> None:
    import pickle

    (folder / "model.safetensors").unlink()
    with (folder / "pytorch_model.bin").open("wb") as handle:
        pickle.dump(
            print, handle
        )  # a pickle of a callable, not of tensors: torch's weights_only load refuses it


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_cut_off, "its .safetensors weights are damaged or cut off (Error while deserializing header"),
        (_pickled, "its pytorch_model.bin is a pickle of more than tensors, which torch does not load"),
    ],
)
def test_weights_that_cannot_be_loaded_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], saved_tiny: Path, damage: object, message: str
) -> None:
    import shutil

    model = tmp_path / "model"
    shutil.copytree(saved_tiny, model)
    damage(model)  # type: ignore[operator]
    out = tmp_path / "out.jsonl"
    assert main(["eval", str(model), ENV, "--num-problems", "1", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"name_or_path='{model}': {message}" in err and "Traceback" not in err, err


def test_a_read_only_output_dir_fails_before_the_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.cli import train as cli_train

    def refuse(path: object, mode: int) -> bool:  # a read-only folder, also where tests run as root
        return Path(str(path)) != tmp_path

    monkeypatch.setattr(os, "access", refuse)
    monkeypatch.setattr(cli_train, "load_training_model", lambda *a, **k: pytest.fail("the model loaded"))
    assert main([*TRAIN, "--output-dir", str(tmp_path / "runs")]) == 2
    assert (
        f"cannot create a run folder in '{tmp_path}/runs': '{tmp_path}' is read-only to this user; choose another "
        "--output-dir" in capsys.readouterr().err
    )
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--weight-decay", "1e18"], "weight_decay=1e+18 is not allowed; expected a float in [0, 1]"),
        (
            ["--lora.rank", str(10**21)],
            f"lora.rank={10**21} is not allowed; expected an integer in [0, 65536]",
        ),
        (
            ["--eval-problems", str(10**21)],
            f"eval_problems={10**21} is not allowed; expected an integer in [1, ",
        ),
        (["--lr", "nan"], "lr=nan is not allowed; expected a float in [0, 1]"),
    ],
)
def test_train_refuses_values_that_wreck_a_model(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run_main([*TRAIN, *args], capsys)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--overlong-penalty", "overlong_penalty=nan is not allowed; expected a float in [0, 1e+06]"),
        (
            "--zero-variance-tolerance",
            "zero_variance_tolerance=nan is not allowed; expected a float in [0, 1e+06]",
        ),
    ],
)
def test_dapo_refuses_nan(capsys: pytest.CaptureFixture[str], flag: str, message: str) -> None:
    argv = ["train", "dapo", "--env", ENV, "--model", "tiny", "--no-progress-bar", flag, "nan"]
    code, _, err = run_main(argv, capsys)
    assert code == 2 and message in err
