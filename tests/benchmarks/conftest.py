"""The benchmarks' tests: the script a test module names in its ``SCRIPT`` (``"benchmarks.bench_async"``),
imported as the module it is, and `run_script`, which runs one as a user does, from the repository root."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench(request: pytest.FixtureRequest) -> Any:
    """The module of the test module's ``SCRIPT``."""
    return importlib.import_module(request.module.SCRIPT)


def run_script(
    module: str, *args: str, timeout: float = 600, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` from the repository root with one torch thread, in ``env`` (default: this
    process's environment); its output captured as text (the caller checks the return code, to show stderr)."""
    environment = {**(os.environ if env is None else env), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=REPO,
    )
