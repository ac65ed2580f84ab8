"""An environment's reward as named, weighted terms: the one definition of the reward a `ReasoningEnv` pays.

A graded completion earns up to three terms: correctness (weight ``correct_reward``), a format term that pays
whenever a final answer could be read, right or wrong (weight ``format_reward``), and a length term, the
fraction of the length penalty a completion earns (weight ``-length_penalty``). `terms_of` lists them for an
environment's config; ``ReasoningEnv.reward_terms`` computes their values once per step, ``step`` reports them
in ``info["reward_terms"]``, and ``compute_reward`` is their weighted sum (`weighted_sum`). What reads a reward
term reads it there: the trainers' ``reward/<name>`` metrics (through the rollout batch), TRL's reward
functions (`reasongym.envs.rubric`), a verifiers environment's rubric.

A format term that pays without correctness is the classic reward-hacking trap: a policy can learn to
write a boxed answer and never a right one. Watch ``reward/correctness`` rise, not just the total.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reasongym.verifiers import Outcome, Verdict

TermFunction = Callable[[Verdict, str], float]
"""A term's value for a graded completion: ``(verdict, completion) -> float``."""


@dataclass(frozen=True)
class RewardTerm:
    """One named term of an environment's reward."""

    name: str
    """The name it is reported under (``info["reward_terms"]``, ``reward/<name>``, TRL's ``rewards/<name>``)."""
    weight: float
    """Its weight in the total (TRL's ``reward_weights``)."""
    value: TermFunction
    """Its unweighted value for a graded completion."""


def correctness(verdict: Verdict, completion: str) -> float:
    """1.0 for a correct final answer, else 0.0 (the verifier's verdict)."""
    return 1.0 if verdict.correct else 0.0


def answer_format(verdict: Verdict, completion: str) -> float:
    """1.0 whenever a final answer could be read and graded, right or wrong."""
    return 1.0 if verdict.outcome in (Outcome.CORRECT, Outcome.WRONG) else 0.0


def over_length(budget: int, buffer: int) -> TermFunction:
    """The fraction of the length penalty a completion earns: 0 within ``budget`` characters, growing to 1."""

    def length(verdict: Verdict, completion: str) -> float:
        over = len(completion) - budget
        if over <= 0:
            return 0.0
        return min(1.0, over / buffer) if buffer else 1.0

    return length


def terms_of(config: Any) -> list[RewardTerm]:
    """The terms of the reward a `ReasoningEnvConfig` ``config`` describes, with their weights."""
    terms = [RewardTerm("correctness", float(config.correct_reward), correctness)]
    if config.format_reward:
        terms.append(RewardTerm("format", float(config.format_reward), answer_format))
    if config.length_budget is not None and config.length_penalty:
        length = over_length(config.length_budget, config.length_buffer)
        terms.append(RewardTerm("length", -float(config.length_penalty), length))
    return terms


def weighted_sum(terms: Sequence[RewardTerm], values: Mapping[str, float]) -> float:
    """The reward: each term's value (``values``, by name) times its weight, summed."""
    return float(sum(term.weight * values[term.name] for term in terms))
