"""The result type every verifier returns."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from reasongym.errors import ConfigError

MAX_TIMEOUT_S = 86_400.0
"""Longest time limit a verifier accepts, one day: the worker waits on a socket with a limit in
milliseconds that must fit in 32 bits (about 2.1e6 s), and no comparison deserves more."""
VERIFY_TIMEOUT_S = 1.0
"""The default time budget of one verdict's symbolic work (every ``timeout`` and ``verify_timeout``
default is this one value). The rule, everywhere: a comparison that runs out of it is TIMEOUT with
``correct=None``, ungradable, never a wrong answer; environments give it no correctness reward (reward 0,
``info["correct"]`` None) and trainers and evaluations may leave it out."""


def check_timeout(name: str, value: object) -> float:
    """``value`` as seconds when it is a time budget a verifier accepts; else a ConfigError naming ``name``.

    Example:
        >>> check_timeout("timeout", 2)
        2.0
    """
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not number or not 0 < value <= MAX_TIMEOUT_S:  # type: ignore[operator]
        raise ConfigError(
            f"{name}={value!r}: must be a finite number of seconds > 0 and at most {MAX_TIMEOUT_S:g} "
            f"(for example {VERIFY_TIMEOUT_S!r})"
        )
    return float(value)  # type: ignore[arg-type]


class Outcome(str, enum.Enum):
    """What happened when a completion was graded."""

    CORRECT = "correct"
    WRONG = "wrong"
    UNPARSEABLE = "unparseable"
    TIMEOUT = "timeout"
    REFUSED = "refused"


@dataclass(frozen=True)
class Verdict:
    """The graded result of one completion against one gold answer.

    Attributes:
        correct: True or False; None when the gold answer itself cannot be graded
            (trainers skip such items instead of scoring them 0).
        outcome: What happened (correct, wrong, unparseable, timeout, refused).
        extracted: The answer found in the completion, normalised; None when none was found.
        reason: One sentence in words, for people reading rollouts.
    """

    correct: bool | None
    outcome: Outcome
    extracted: str | None
    reason: str

    @property
    def score(self) -> float:
        """1.0 when correct, else 0.0 (ungradable counts as 0.0 here; check ``correct is None``)."""
        return 1.0 if self.correct else 0.0
