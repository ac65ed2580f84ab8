"""reasongym: Gymnasium text reasoning environments, safe answer verifiers, and STaR/GRPO/DAPO agents.

``import reasongym`` registers the built-in environment ids with Gymnasium (no data is read, and torch,
transformers, sympy and datasets are not imported); the verifier names load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reasongym.envs import list_envs, make, register, register_dataset, register_generator, spec
from reasongym.envs.problem import Problem

if TYPE_CHECKING:
    from reasongym.evaluation.estimators import pass_at_k
    from reasongym.verifiers import Outcome, Verdict, verify, verify_many

__version__ = "0.1.0"

_LAZY = {
    "Verdict": "reasongym.verifiers",
    "Outcome": "reasongym.verifiers",
    "verify": "reasongym.verifiers",
    "verify_many": "reasongym.verifiers",
    "pass_at_k": "reasongym.evaluation.estimators",
}

__all__ = [
    "Outcome",
    "Problem",
    "Verdict",
    "__version__",
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
