"""The record that describes one built-in environment in the registration table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CatalogEntry:
    """One row of the built-in environment table.

    Attributes:
        id: The Gymnasium id, ``"reasongym/<Name>-v<N>"``.
        source: ``"module:function"`` that returns the environment's ProblemSource when called with
            ``source_kwargs``; resolved only when the environment is made.
        description: One line for ``reasongym list``.
        answer_type: The verifier kind of the environment's problems.
        size: ``"procedural"`` or the split sizes in words, e.g. ``"train 7473, test 1319"``.
        source_kwargs: Keyword arguments for the source function.
        env_kwargs: Keyword arguments for the environment (prompt template, rewards, ...).
        entry_point: The environment class, ``"module:Class"``.
        origin: Where the problems come from: ``"reasongym"``, ``"reasoning-gym 0.1.25"``, ``"user"``.
    """

    id: str
    source: str
    description: str
    answer_type: str
    size: str
    source_kwargs: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    entry_point: str = "reasongym.envs.core:ReasoningEnv"
    origin: str = "reasongym"
