"""``import reasongym``: library users get OpenMP's sleeping threads too, as the command line's users do."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


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
