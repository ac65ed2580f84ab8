"""An environment's reward as named, weighted terms, exported to TRL as one reward function per term.

``ReasoningEnv.compute_reward`` adds up to three terms: correctness (weight ``correct_reward``), a format term
that pays whenever a final answer could be read, right or wrong (weight ``format_reward``), and a length
term, the fraction of the length penalty a completion earns (weight ``-length_penalty``). :func:`rubric`
names them; :func:`trl_reward_functions` gives one TRL reward function per term, each grading with the
environment's own ``env.score``, and the weights to pass as ``GRPOConfig(reward_weights=...)``: TRL's
weighted sum of the terms is then exactly the environment's reward, and TRL logs each term under its name
(``rewards/correctness/mean``, ``rewards/format/mean``, ...).

A format term that pays without correctness is the classic reward-hacking trap: a policy can learn to
write a boxed answer and never a right one. Watch ``rewards/correctness`` rise, not just the total.

Example:
    >>> from reasongym.envs.rubric import trl_reward_functions
    >>> funcs, weights = trl_reward_functions("reasongym/Arithmetic-v0")  # doctest: +SKIP
    >>> # GRPOTrainer(..., reward_funcs=funcs, args=GRPOConfig(reward_weights=weights, ...))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium

from reasongym.envs.core import ReasoningEnv
from reasongym.envs.export import completion_text
from reasongym.envs.problem import Problem
from reasongym.envs.registration import make
from reasongym.verifiers import Outcome, Verdict

TermFunction = Callable[[Verdict, str], float]
"""A term's value for a graded completion: ``(verdict, completion) -> float``."""


@dataclass(frozen=True)
class RewardTerm:
    """One named term of an environment's reward."""

    name: str
    """The name TRL logs it under (``rewards/<name>/mean``) and the reward function's ``__name__``."""
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


def rubric(env: ReasoningEnv) -> list[RewardTerm]:
    """The terms of ``env``'s reward with their weights, as ``compute_reward`` adds them."""
    cfg = env.config
    terms = [RewardTerm("correctness", float(cfg.correct_reward), correctness)]
    if cfg.format_reward:
        terms.append(RewardTerm("format", float(cfg.format_reward), answer_format))
    if cfg.length_budget is not None and cfg.length_penalty:
        terms.append(
            RewardTerm(
                "length", -float(cfg.length_penalty), over_length(cfg.length_budget, cfg.length_buffer)
            )
        )
    return terms


def term_metrics(env: gymnasium.Env, outcomes: Sequence[str], texts: Sequence[str]) -> dict[str, float]:
    """``reward/<name>``: the mean unweighted value of each term of ``env``'s reward over graded completions.

    ``outcomes`` are the verdicts' outcome values (``"correct"``, ``"wrong"``, ...) and ``texts`` the
    completions, row by row, as a rollout batch keeps them; what the trainers log each step. Empty for an
    environment whose reward is not the sum of its terms: a multi-turn one (a retry discounts its attempts)
    or one that is not a ReasoningEnv (an ``openenv://`` environment).
    """
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, ReasoningEnv) or type(base).step is not ReasoningEnv.step or not texts:
        return {}
    known = {outcome.value: outcome for outcome in Outcome}
    verdicts = [
        Verdict(outcome == "correct", known.get(outcome, Outcome.UNPARSEABLE), None, "")
        for outcome in outcomes
    ]
    return {
        f"reward/{term.name}": sum(term.value(v, t) for v, t in zip(verdicts, texts, strict=True))
        / len(texts)
        for term in rubric(base)
    }


def trl_reward_functions(
    env_or_id: gymnasium.Env | str,
) -> tuple[list[Callable[..., list[float | None]]], list[float]]:
    """One TRL reward function per term of the environment's reward, and their weights.

    Each function takes TRL's ``(prompts, completions, *, answer, answer_type, choices, **kwargs)`` with the
    columns :func:`~reasongym.envs.export.to_dataset` writes, grades with ``env.score`` and returns the
    term's unweighted value, or None for an ungradable gold answer (TRL leaves it out).
    """
    env = (make(env_or_id) if isinstance(env_or_id, str) else env_or_id).unwrapped
    terms = rubric(env)
    return [_term_function(env, term) for term in terms], [term.weight for term in terms]


def _term_function(env: ReasoningEnv, term: RewardTerm) -> Callable[..., list[float | None]]:
    def reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        answer: Sequence[str],
        answer_type: Sequence[str] | None = None,
        choices: Sequence[Sequence[Sequence[str]]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        values: list[float | None] = []
        for i, completion in enumerate(completions):
            text = completion_text(completion)
            problem = Problem(
                completion_text(prompts[i]) or "?",
                answer[i],
                answer_type[i] if answer_type else env.source.answer_type,
                choices=tuple((label, option) for label, option in (choices[i] if choices else [])),
            )
            verdict = env.score(problem, text)
            values.append(None if verdict.correct is None else term.value(verdict, text))
        return values

    reward.__name__ = term.name
    return reward
