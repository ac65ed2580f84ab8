"""The result type every verifier returns."""

from __future__ import annotations

import enum
from dataclasses import dataclass

MAX_TIMEOUT_S = 86_400.0
"""Longest time limit a verifier accepts, one day: the worker waits on a socket with a limit in
milliseconds that must fit in 32 bits (about 2.1e6 s), and no comparison deserves more."""


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
