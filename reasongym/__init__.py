"""reasongym: Gymnasium text reasoning environments, safe answer verifiers, and STaR/GRPO/DAPO agents.

``import reasongym`` registers the built-in environment ids with Gymnasium (no data is read, and torch,
transformers, sympy and datasets are not imported); the verifier names load on first use.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any


def _quiet_threads() -> None:
    """Let torch's idle CPU threads sleep instead of spinning, unless the user chose a thread setting.

    OpenMP's default wait policy keeps each idle thread busy-waiting for the next parallel region; on a small
    machine shared with one other busy process that made training 5-7x slower (the tiny model's GRPO step, 2
    cores; a README snippet 396 s against 54 s). OpenMP reads the policy when torch loads, so it is set here,
    on ``import reasongym``, when torch is not loaded yet. ``OMP_WAIT_POLICY`` or ``OMP_NUM_THREADS`` set by the
    user is left as it is (``OMP_WAIT_POLICY=ACTIVE`` keeps spinning threads); torch imported first keeps its.
    """
    if (
        "torch" not in sys.modules
        and "OMP_NUM_THREADS" not in os.environ
        and "OMP_WAIT_POLICY" not in os.environ
    ):
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


from reasongym.envs import list_envs, make, register, register_dataset, register_generator, spec  # noqa: E402
from reasongym.envs.problem import Problem  # noqa: E402

_quiet_threads()  # the imports above load no torch (tests/test_init.py checks it)

if TYPE_CHECKING:
    from reasongym.evaluation.estimators import pass_at_k
    from reasongym.evaluation.runner import evaluate
    from reasongym.verifiers import Outcome, Verdict, verify, verify_many

from reasongym.version import __version__  # noqa: E402

_LAZY = {
    "Verdict": "reasongym.verifiers",
    "Outcome": "reasongym.verifiers",
    "verify": "reasongym.verifiers",
    "verify_many": "reasongym.verifiers",
    "pass_at_k": "reasongym.evaluation.estimators",
    "evaluate": "reasongym.evaluation.runner",
}

__all__ = [
    "Outcome",
    "Problem",
    "Verdict",
    "__version__",
    "evaluate",
    "list_envs",
    "make",
    "pass_at_k",
    "register",
    "register_dataset",
    "register_generator",
    "spec",
    "verify",
    "verify_many",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reasongym' has no attribute {name!r}")
