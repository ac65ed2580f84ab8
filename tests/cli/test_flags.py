"""tyro prints a parse error as a box and exits; `reasongym.cli.flags.one_line` reads the box back as one line.

tyro (1.0) has no API that returns the error as data, so these tests pin the reading: the exact lines a user
sees for each kind of mistake, in a wide and a narrow terminal and where the output is not UTF-8 (tyro then
draws its rules in ASCII). A tyro release that draws the box differently fails here, not in a user's terminal.

Then the flags themselves: TRL's names are other names of ours (as flags and in config files), and a mistyped
flag gets the command's usage and the nearest flag.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from reasongym.agents.config import RunConfig
from reasongym.cli import main
from reasongym.cli.args import UsageError
from reasongym.cli.flags import flat_section, parse

HELP = " (`reasongym train grpo --help` lists every flag)"
CASES = {
    ("--max-stepz", "3"): "Unrecognized options: --max-stepz, 3; did you mean --max-steps?",
    ("--seed", "1", "--sed", "2"): "Unrecognized options: --sed, 2; did you mean --seed?",
    ("--max-steps", "x"): "--max-steps: invalid literal for int() with base 10: 'x'",
    ("--lr",): "Missing value for argument '--lr'. Expected 1 values.",
}


@dataclass(frozen=True)
class _Command:
    run: flat_section(RunConfig, "the run")  # type: ignore[valid-type]


def _message(argv: tuple[str, ...]) -> str:
    with pytest.raises(UsageError) as caught:
        parse(_Command, argv, default=_Command(RunConfig()), prog="reasongym train grpo", description="train")
    return str(caught.value)


@pytest.mark.parametrize(("argv", "expected"), list(CASES.items()))
def test_a_mistake_reads_as_one_line_with_the_flag_it_meant(argv: tuple[str, ...], expected: str) -> None:
    assert _message(argv) == expected + HELP


def test_the_same_lines_in_a_narrow_terminal_without_utf8() -> None:
    script = (
        "import json, sys; from tests.cli.test_flags import CASES, _message; "
        "print(json.dumps([_message(argv) for argv in CASES]))"
    )
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "COLUMNS": "40", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [line + HELP for line in CASES.values()]


ENV = "reasongym/Arithmetic-v0"


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
