"""Bridges to Hugging Face training stacks: a prompt dataset and a TRL-style reward function.

``to_dataset`` writes the columns TRL's ``GRPOTrainer`` reads (``prompt`` in conversational form, or as plain
text for a model without a chat template) plus
the gold columns the reward function needs; TRL passes every extra dataset column to reward functions as
keyword lists, so ``reward_function(env)`` grades with the ``answer``, ``answer_type`` and ``choices``
columns and the environment's own reward shaping.

Example:
    >>> from reasongym.envs.export import reward_function, to_dataset
    >>> train = to_dataset("reasongym/Arithmetic-v0", 64)  # doctest: +SKIP
    >>> reward = reward_function("reasongym/Arithmetic-v0")  # doctest: +SKIP
    >>> # GRPOTrainer(model=..., reward_funcs=reward, train_dataset=train)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np

from reasongym.envs.core import ReasoningEnv
from reasongym.errors import ConfigError
from reasongym.verifiers import verify_many

if TYPE_CHECKING:
    import datasets

RewardFunction = Callable[..., list[float | None]]


def _as_env(env_or_id: gymnasium.Env | str) -> ReasoningEnv:
    if isinstance(env_or_id, str):
        from reasongym.envs.registration import make

        env_or_id = make(env_or_id)
    base = env_or_id.unwrapped
    if not isinstance(base, ReasoningEnv):
        raise ConfigError(f"expected a ReasoningEnv or its id, got {type(base).__name__}")
    return base


def _indices(size: int | None, n: int | None, rng: np.random.Generator) -> list[int]:
    """``n`` distinct problem indices drawn from ``rng`` (the whole split in seeded order when n is None)."""
    if size is None:
        if n is None:
            raise ConfigError(
                "to_dataset: n=None means 'the whole split', but this split is infinite; pass n"
            )
        chosen: dict[int, None] = {}
        while len(chosen) < n:
            chosen.update(dict.fromkeys(int(i) for i in rng.integers(0, 2**31, size=n - len(chosen))))
        return list(chosen)
    if n is not None and n > size:
        raise ConfigError(f"to_dataset: n={n} is more than the {size} problems in the split")
    return [int(i) for i in rng.permutation(size)[: size if n is None else n]]


def to_dataset(
    env_or_id: gymnasium.Env | str,
    n: int | None,
    *,
    split: str = "train",
    seed: int = 0,
    difficulty: int | None = None,
    hint: bool = False,
    chat: bool = True,
) -> datasets.Dataset:
    """A prompt dataset in the format TRL's GRPOTrainer expects.

    Args:
        env_or_id: A ReasoningEnv (wrapped or not) or a registered id.
        n: Number of distinct problems; None takes a whole finite split.
        split: The split to draw from.
        seed: Chooses which problems, and their order.
        difficulty: Restrict to one difficulty level.
        hint: Show the gold answer in each prompt (STaR rationalization data).
        chat: Prompts as chat messages (TRL applies the model's chat template); False: as plain text, the
            messages' contents joined by newlines (what reasongym gives a model without a chat template),
            for base models and the tiny model, which have no template.

    Returns:
        Columns ``prompt`` (chat messages, or text with ``chat=False``), ``answer``, ``answer_type``, ``choices`` (``[label, text]``
        pairs), ``problem_id``, ``solution`` ("" when none) and ``difficulty`` (-1 when none).

    Raises:
        ConfigError: ``n`` is larger than the split, or None for an infinite split.
    """
    import datasets

    env = _as_env(env_or_id)
    level = env.config.difficulty if difficulty is None else difficulty
    rng = np.random.default_rng(seed)
    rows: dict[str, list[Any]] = defaultdict(list)
    for index in _indices(env.source.size(split, level), n, rng):
        problem = env.source.problem(split, index, level)
        messages = env.messages(problem, hint=hint)
        rows["prompt"].append(messages if chat else "\n".join(m["content"] for m in messages))
        rows["answer"].append(problem.answer)
        rows["answer_type"].append(problem.answer_type)
        rows["choices"].append([[label, text] for label, text in problem.choices])
        rows["problem_id"].append(problem.id)
        rows["solution"].append(problem.solution or "")
        rows["difficulty"].append(-1 if problem.difficulty is None else int(problem.difficulty))
    message = {"role": datasets.Value("string"), "content": datasets.Value("string")}
    features = datasets.Features(
        {
            "prompt": datasets.List(message) if chat else datasets.Value("string"),
            "answer": datasets.Value("string"),
            "answer_type": datasets.Value("string"),
            "choices": datasets.List(datasets.List(datasets.Value("string"))),
            "problem_id": datasets.Value("string"),
            "solution": datasets.Value("string"),
            "difficulty": datasets.Value("int64"),
        }
    )
    return datasets.Dataset.from_dict(dict(rows), features=features)


def completion_text(completion: str | Sequence[dict[str, Any]]) -> str:
    """The text of a completion: a plain string, or the content of the last message of a chat list."""
    if isinstance(completion, str):
        return completion
    if not completion:
        return ""
    content = completion[-1].get("content", "")
    return content if isinstance(content, str) else str(content)


def reward_function(env_or_id: gymnasium.Env | str) -> RewardFunction:
    """A reward function with the signature TRL's GRPOTrainer calls.

    The function takes ``(prompts, completions, *, answer, answer_type=None, choices=None, **kwargs)``,
    where the keyword lists are dataset columns written by :func:`to_dataset`, and returns one reward per
    completion: the environment's reward for the graded completion, or None when the gold answer cannot
    be graded (TRL leaves such samples out instead of scoring them 0).

    Raises:
        ConfigError: (when called) the ``answer`` column is missing or lengths disagree.
    """
    env = _as_env(env_or_id)

    def reasongym_reward(
        prompts: Sequence[Any],
        completions: Sequence[str | Sequence[dict[str, Any]]],
        answer: Sequence[str] | None = None,
        answer_type: Sequence[str] | None = None,
        choices: Sequence[Sequence[Sequence[str]]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        if answer is None:
            raise ConfigError(
                "reward function: no 'answer' column; build the dataset with reasongym to_dataset"
            )
        texts = [completion_text(c) for c in completions]
        if len(answer) != len(texts):
            raise ConfigError(f"reward function: {len(texts)} completions but {len(answer)} answers")
        kinds = answer_type or [env.source.answer_type] * len(texts)
        options = choices or [[] for _ in texts]
        groups: dict[tuple[str, tuple[tuple[str, ...], ...]], list[int]] = defaultdict(list)
        for i, (kind, option) in enumerate(zip(kinds, options, strict=True)):
            groups[kind, tuple(tuple(pair) for pair in option)].append(i)
        rewards: list[float | None] = [None] * len(texts)
        for (kind, option), members in groups.items():
            verdicts = verify_many(
                [texts[i] for i in members],
                [answer[i] for i in members],
                kind,
                choices=option or None,
                last_number_fallback=env.config.last_number_fallback,
                timeout=env.config.verify_timeout,
            )
            for i, verdict in zip(members, verdicts, strict=True):
                rewards[i] = None if verdict.correct is None else env.compute_reward(verdict, texts[i])
        return rewards

    return reasongym_reward
