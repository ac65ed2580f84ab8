"""reasongym's environments for verifiers: the taskset, harness and env that ``vf-eval`` loads by this module name.

verifiers 0.4 imports a taskset package by name and takes the one ``Taskset``, ``Harness`` and ``Env``
subclass each that ``__all__`` names; ``load_environment`` is the older entry-point convention, kept as a
function that returns the same environment.
"""

from __future__ import annotations

from typing import Any

from reasongym.envs.verifiers_export import (
    ReasongymEnv,
    ReasongymHarness,
    ReasongymTaskset,
    to_verifiers,
)

__all__ = ["ReasongymEnv", "ReasongymHarness", "ReasongymTaskset", "load_environment"]


def load_environment(env_id: str = "reasongym/Arithmetic-v0", **kwargs: Any) -> Any:
    """The verifiers environment over ``env_id``'s problems (``to_verifiers``'s arguments)."""
    return to_verifiers(env_id, taskset_id=__name__, **kwargs)
