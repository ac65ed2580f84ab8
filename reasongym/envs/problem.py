"""The problem record that every problem source produces and every environment consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reasongym.errors import ConfigError
from reasongym.verifiers.kinds import kind_names

ANSWER_TYPES = (*kind_names(), "task")
"""The built-in verifier kinds, and ``task``: graded by the environment's own scorer (reasoning-gym tasks).
:func:`answer_types` also lists the kinds registered after import."""


def answer_types() -> tuple[str, ...]:
    """Every answer type an environment may declare: the registered verifier kinds, and ``task``."""
    return (*kind_names(), "task")


@dataclass(frozen=True)
class Problem:
    """One reasoning problem, independent of how it is shown to a model.

    Attributes:
        question: The problem text alone, without answer-format instructions (the environment adds those).
        answer: The gold answer as the verifier of ``answer_type`` expects it (``"42"``, ``"\\frac{1}{2}"``,
            ``"B"``, ``"yes"``).
        answer_type: The verifier kind: one of ``ANSWER_TYPES``.
        id: Stable id, unique inside its source and split (dataset row id, or ``"<name>-<split>-<index>"``).
        choices: For multiple choice, ``(label, text)`` pairs in display order; else empty.
        solution: A reference step-by-step solution that ends with the final answer, or None.
        difficulty: An integer level where the source has one (MATH level 1-5, generator difficulty), else None.
        metadata: JSON-serialisable extras (subject, year, source index, generator parameters).
    """

    question: str
    answer: str
    answer_type: str = "math"
    id: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    solution: str | None = None
    difficulty: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse a question or gold answer that is not text: ``str(None)`` would grade as "None"."""
        for name in ("question", "answer"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ConfigError(f"Problem.{name} must be a str, got {type(value).__name__} {value!r:.60}")
