"""The command line's start (`reasongym.cli.main`): idle torch threads sleep unless the user chose, and help,
usage errors and unknown ids answer without loading torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.running import cli_env


@pytest.mark.slow  # starts the command line in subprocesses
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
    env = cli_env(**{"OMP_WAIT_POLICY": "", **variables})
    done = subprocess.run(
        [sys.executable, "-c", "import json; " + code], capture_output=True, text=True, env=env, timeout=120
    )
    # torch reads the policy when it loads: the command line sets it before anything imports torch
    assert json.loads(done.stdout.splitlines()[-1]) == [False, policy], done.stderr


ROOT = Path(__file__).resolve().parents[2]


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


def test_an_unknown_id_is_refused_before_torch_loads() -> None:
    code = (
        "import sys\nfrom reasongym.cli.main import main\n"
        "for args in (['eval', 'tiny', 'me/Primes-v0'], ['train', 'grpo', '--env', 'me/Primes-v0']):\n"
        "    assert main(args) == 2\n"
        "print('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr
