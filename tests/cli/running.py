"""How the command-line tests run ``reasongym``: in a subprocess (`cli`, whose environment is `cli_env`) or
in-process (`run_main`).

A subprocess runs ``python -m reasongym`` with one torch thread, offline, and this checkout first on the path,
so that it runs the code under test rather than another installed copy. In-process calls go through
``main(argv)``, the function the console script runs, so exit codes and messages are the same; they only save
the interpreter's start-up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasongym.cli import main

REPO = Path(__file__).resolve().parents[2]


def cli_env(**extra: str) -> dict[str, str]:
    """The test's environment with one thread, no hub and this checkout on the path; ``extra`` sets variables,
    and a value of ``""`` removes one."""
    path = os.pathsep.join(part for part in (str(REPO), os.environ.get("PYTHONPATH", "")) if part)
    offline = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": path}
    env = {**os.environ, **offline, **extra}
    return {key: value for key, value in env.items() if value != ""}


def cli(
    *args: str, cwd: Path | None = None, stdin: str | None = None, timeout: float = 600, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``python -m reasongym ARGS`` in a subprocess, in ``cwd``, with `cli_env` (``extra``) and ``stdin``."""
    command = [sys.executable, "-m", "reasongym", *args]
    return subprocess.run(
        command, capture_output=True, text=True, input=stdin, env=cli_env(**extra), cwd=cwd, timeout=timeout
    )


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``main(argv)`` in this process, as ``(exit code, stdout, stderr)``."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err
