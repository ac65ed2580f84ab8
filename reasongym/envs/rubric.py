"""An environment's reward exported to TRL, one reward function per term of it.

The terms themselves are defined once, in `reasongym.envs.reward` (``ReasoningEnv.compute_reward`` is their
weighted sum). :func:`rubric` names an environment's terms; :func:`trl_reward_functions` gives one TRL reward
function per term, each grading with the environment's own ``env.score``, and the weights to pass as
``GRPOConfig(reward_weights=...)``: TRL's weighted sum of the terms is then exactly the environment's reward,
and TRL logs each term under its name (``rewards/correctness/mean``, ``rewards/format/mean``, ...).

Example:
    >>> from reasongym.envs.rubric import trl_reward_functions
    >>> funcs, weights = trl_reward_functions("reasongym/Arithmetic-v0")  # doctest: +SKIP
    >>> # GRPOTrainer(..., reward_funcs=funcs, args=GRPOConfig(reward_weights=weights, ...))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium

from reasongym.envs.core import ReasoningEnv
from reasongym.envs.export import completion_text
from reasongym.envs.problem import Problem
from reasongym.envs.registration import make
from reasongym.envs.reward import RewardTerm, terms_of


def rubric(env: ReasoningEnv) -> list[RewardTerm]:
    """The terms of ``env``'s reward with their weights, as ``compute_reward`` adds them (`terms_of`)."""
    return terms_of(env.config)


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
