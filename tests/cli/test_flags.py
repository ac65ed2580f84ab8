"""tyro prints a parse error as a box and exits; `reasongym.cli.flags.one_line` reads the box back as one line.

tyro (1.0) has no API that returns the error as data, so these tests pin the reading: the exact lines a user
sees for each kind of mistake, in a wide and a narrow terminal and where the output is not UTF-8 (tyro then
draws its rules in ASCII). A tyro release that draws the box differently fails here, not in a user's terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from reasongym.agents.config import RunConfig
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
        "import json, sys; from tests.test_cli_flags import CASES, _message; "
        "print(json.dumps([_message(argv) for argv in CASES]))"
    )
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "COLUMNS": "40", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [line + HELP for line in CASES.values()]
