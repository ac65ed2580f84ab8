"""Reasoning environments: the registry, the environment class, the checker and dataset export.

Importing this package registers the built-in ids with Gymnasium (no data is read). The environment
class, the checker and the export helpers are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reasongym.envs import plugins
from reasongym.envs.builtin import BUILTIN, register_builtins
from reasongym.envs.problem import ANSWER_TYPES, Problem
from reasongym.envs.registration import list_envs, make, register, spec
from reasongym.envs.user_envs import register_dataset, register_generator

if TYPE_CHECKING:
    from reasongym.envs.checker import ConformanceError, check_reasoning_env
    from reasongym.envs.core import ReasoningEnv, ReasoningEnvConfig, TextSpace
    from reasongym.envs.export import reward_function, to_dataset

_LAZY = {
    "ReasoningEnv": "reasongym.envs.core",
    "ReasoningEnvConfig": "reasongym.envs.core",
    "TextSpace": "reasongym.envs.core",
    "check_reasoning_env": "reasongym.envs.checker",
    "ConformanceError": "reasongym.envs.checker",
    "to_dataset": "reasongym.envs.export",
    "reward_function": "reasongym.envs.export",
}

__all__ = [
    "ANSWER_TYPES",
    "BUILTIN",
    "ConformanceError",
    "Problem",
    "ReasoningEnv",
    "ReasoningEnvConfig",
    "TextSpace",
    "check_reasoning_env",
    "list_envs",
    "make",
    "register",
    "register_builtins",
    "register_dataset",
    "register_generator",
    "reward_function",
    "spec",
    "to_dataset",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reasongym.envs' has no attribute {name!r}")


register_builtins()
# After the built-ins: from here on the first registry lookup loads installed plugins (reasongym.envs.plugins).
plugins.install()
