"""Bridges to Hugging Face training stacks: a prompt dataset and a TRL-style reward function.

``to_dataset`` writes the columns TRL's ``GRPOTrainer`` reads (``prompt`` in conversational form, or as plain
text for a model without a chat template) plus
the gold columns the reward function needs; TRL passes every extra dataset column to reward functions as
keyword lists, so ``reward_function(env)`` finds each row's problem by its ``split`` and ``index`` columns and
grades it with the environment's own scoring and reward shaping, as training and evaluation do.

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
from reasongym.envs.problem import Problem
from reasongym.errors import ConfigError

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


def distinct_indices(
    size: int | None, n: int | None, rng: np.random.Generator, *, name: str = "to_dataset: n"
) -> list[int]:
    """``n`` distinct problem indices drawn from ``rng`` (the whole split in seeded order when n is None);
    ``name`` is how an error names the count."""
    if size is None:
        if n is None:
            raise ConfigError(
                f"{name}=None means 'the whole split', but this split is infinite; pass a number"
            )
        chosen: dict[int, None] = {}
        while len(chosen) < n:
            chosen.update(dict.fromkeys(int(i) for i in rng.integers(0, 2**31, size=n - len(chosen))))
        return list(chosen)
    if n is not None and n > size:
        raise ConfigError(f"{name}={n} is more than the {size} problems in the split")
    return [int(i) for i in rng.permutation(size)[: size if n is None else n]]


def to_dataset(
    env_or_id: gymnasium.Env | str,
    n: int | None,
    *,
    split: str | None = None,
    seed: int = 0,
    difficulty: int | None = None,
    hint: bool = False,
    chat: bool = True,
) -> datasets.Dataset:
    """A prompt dataset in the format TRL's GRPOTrainer expects.

    Args:
        env_or_id: A ReasoningEnv (wrapped or not) or a registered id.
        n: Number of distinct problems; None takes a whole finite split.
        split: The split to draw from; None: ``train`` where the environment has one, else the split it serves
            by default (a dataset registered with one split serves that split).
        seed: Chooses which problems, and their order.
        difficulty: Restrict to one difficulty level.
        hint: Show the gold answer in each prompt (STaR rationalization data).
        chat: Prompts as chat messages (TRL applies the model's chat template); False: as plain text, the
            messages' contents joined by newlines (what reasongym gives a model without a chat template),
            for base models and the tiny model, which have no template.

    Returns:
        Columns ``prompt`` (chat messages, or text with ``chat=False``), ``answer``, ``answer_type``, ``choices`` (``[label, text]``
        pairs), ``problem_id``, ``solution`` ("" when none), ``difficulty`` (-1 when none), and ``split`` and
        ``index``, which name the problem for the reward function.

    Raises:
        ConfigError: ``n`` is larger than the split, or None for an infinite split.
    """
    import datasets

    env = _as_env(env_or_id)
    if split is None:
        split = "train" if "train" in env.source.splits() else env.source.default_split
    level = env.config.difficulty if difficulty is None else difficulty
    rng = np.random.default_rng(seed)
    rows: dict[str, list[Any]] = defaultdict(list)
    for index in distinct_indices(env.source.size(split, level), n, rng):
        problem = env.source.problem(split, index, level)
        messages = env.messages(problem, hint=hint)
        rows["prompt"].append(messages if chat else "\n".join(m["content"] for m in messages))
        rows["answer"].append(problem.answer)
        rows["answer_type"].append(problem.answer_type)
        rows["choices"].append([[label, text] for label, text in problem.choices])
        rows["problem_id"].append(problem.id)
        rows["solution"].append(problem.solution or "")
        rows["difficulty"].append(-1 if problem.difficulty is None else int(problem.difficulty))
        rows["split"].append(split)
        rows["index"].append(index)
    return datasets.Dataset.from_dict(dict(rows), features=_features(chat))


def _features(chat: bool) -> datasets.Features:
    """The columns of `to_dataset` and their types."""
    import datasets

    message = {"role": datasets.Value("string"), "content": datasets.Value("string")}
    return datasets.Features(
        {
            "prompt": datasets.List(message) if chat else datasets.Value("string"),
            "answer": datasets.Value("string"),
            "answer_type": datasets.Value("string"),
            "choices": datasets.List(datasets.List(datasets.Value("string"))),
            "problem_id": datasets.Value("string"),
            "solution": datasets.Value("string"),
            "difficulty": datasets.Value("int64"),
            "split": datasets.Value("string"),
            "index": datasets.Value("int64"),
        }
    )


def completion_text(completion: str | Sequence[dict[str, Any]]) -> str:
    """The text of a completion: a plain string, or the content of the last message of a chat list (a message
    without text, such as a tool call's, is "").

    Raises:
        ConfigError: Anything else (a number, a dict): TRL passes strings or message lists.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, (list, tuple)) and all(isinstance(message, dict) for message in completion):
        content = completion[-1].get("content") if completion else ""
        if content is None or isinstance(content, str):
            return content or ""
    shown = repr(completion)
    raise ConfigError(
        "reward function: a completion must be a string or a list of chat messages whose last content is text, "
        f"got {shown if len(shown) <= 60 else shown[:57] + '...'}"
    )


def reward_function(env_or_id: gymnasium.Env | str) -> RewardFunction:
    """A reward function with the signature TRL's GRPOTrainer calls, grading through the environment's own
    scoring (``env.score_many`` and ``env.compute_reward``), as training and evaluation do.

    The function takes ``(prompts, completions, *, answer, answer_type=None, choices=None, split=None,
    index=None, difficulty=None, **kwargs)``, where the keyword lists are dataset columns written by
    :func:`to_dataset`, and returns one reward per completion: the environment's reward for the graded
    completion, or None when it cannot be graded (TRL leaves such samples out instead of scoring them 0). With
    the ``split`` and ``index`` columns each row is graded against the environment's own problem, so every
    grader works (a judge, reasoning-gym's task scorers); without them (a dataset made elsewhere) a problem
    is made from the ``answer``, ``answer_type`` and ``choices`` columns, with the prompt as its question.

    Raises:
        ConfigError: (when called) neither the ``answer`` nor the ``split`` and ``index`` columns are given,
            lengths disagree, or a row's problem has another gold answer than its ``answer`` column.
    """
    env = _as_env(env_or_id)

    def reasongym_reward(
        prompts: Sequence[Any],
        completions: Sequence[str | Sequence[dict[str, Any]]],
        answer: Sequence[str] | None = None,
        answer_type: Sequence[str] | None = None,
        choices: Sequence[Sequence[Sequence[str]]] | None = None,
        split: Sequence[str] | None = None,
        index: Sequence[int] | None = None,
        difficulty: Sequence[int] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        texts = [completion_text(c) for c in completions]
        columns: dict[str, Sequence[Any] | None] = {"answer": answer, "answer_type": answer_type}
        columns |= {"choices": choices, "split": split, "index": index, "difficulty": difficulty}
        rows = _rows(env, prompts, len(texts), columns)
        members: dict[int, list[int]] = defaultdict(list)
        for i, problem in enumerate(rows):
            members[id(problem)].append(i)
        rewards: list[float | None] = [None] * len(texts)
        for group in members.values():
            verdicts = _graded(
                env, rows[group[0]], [texts[i] for i in group], own=split is not None and index is not None
            )
            for i, verdict in zip(group, verdicts, strict=True):
                rewards[i] = None if verdict.correct is None else env.compute_reward(verdict, texts[i])
        return rewards

    return reasongym_reward


def _check_cell(row: int, column: str, value: Any, *, minimum: int) -> None:
    """Refuse a cell that is not an integer >= ``minimum`` (1.5 was read as problem 1, None was a TypeError)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(
            f"reward function: row {row}'s {column!r} must be an integer >= {minimum}, got {value!r} "
            "(to_dataset writes the columns)"
        )


def _needs_problem_columns(env: ReasoningEnv, given: str) -> ConfigError:
    """The error of a dataset without the ``split`` and ``index`` columns, for an environment whose grading
    needs its own problem (the answer columns cannot rebuild it)."""
    return ConfigError(
        f"reward function: {env.source.name!r} grades with its own problem (a task's scorer reads the task's "
        f"item), so the dataset needs its 'split' and 'index' columns, which reasongym's to_dataset writes; "
        f"this one gave {given}"
    )


def _graded(env: ReasoningEnv, problem: Problem, texts: list[str], *, own: bool) -> list[Any]:
    """``env.score_many``; a problem made from the answer columns that the environment's grading cannot read
    (it looks up what only its own problems carry) is the missing-columns error, not a KeyError."""
    if own:
        return env.score_many(problem, texts)
    try:
        return env.score_many(problem, texts)
    except KeyError as exc:
        raise _needs_problem_columns(env, "only the answer columns") from exc


def _rows(
    env: ReasoningEnv, prompts: Sequence[Any], count: int, columns: dict[str, Sequence[Any] | None]
) -> list[Problem]:
    """The problem of each row, one object per distinct problem: the environment's own when the ``split`` and
    ``index`` columns name it, else made from the gold columns."""
    answer, split, index = columns["answer"], columns["split"], columns["index"]
    if answer is None and (split is None or index is None):
        raise ConfigError(
            "reward function: no 'answer' column (nor 'split' and 'index'); build the dataset with reasongym "
            "to_dataset"
        )
    for name, values in columns.items():
        if values is not None and len(values) != count:
            raise ConfigError(f"reward function: {count} completions but {len(values)} {name!r} values")
    kinds = set(columns["answer_type"] or [env.source.answer_type])
    if (split is None or index is None) and "task" in kinds:  # graded by the task's scorer, on its item
        given = sorted(name for name, values in columns.items() if values is not None)
        raise _needs_problem_columns(env, f"the columns {given}")
    known: dict[tuple[Any, ...], Problem] = {}
    rows = []
    for i in range(count):
        if split is not None and index is not None:
            level = columns["difficulty"][i] if columns["difficulty"] is not None else -1
            _check_cell(i, "index", index[i], minimum=0)
            _check_cell(i, "difficulty", level, minimum=-1)
            key: tuple[Any, ...] = (split[i], int(index[i]), None if level == -1 else int(level))
            if key not in known:
                known[key] = env.source.problem(*key)
            if answer is not None and known[key].answer != answer[i]:
                raise ConfigError(
                    f"reward function: row {i} names problem {key} of {env.source.name!r}, whose gold answer "
                    f"{known[key].answer!r} is not the row's answer {answer[i]!r}; was the dataset made from "
                    "another environment?"
                )
        else:
            assert answer is not None
            kind = columns["answer_type"][i] if columns["answer_type"] is not None else env.source.answer_type
            pairs = tuple(tuple(pair) for pair in (columns["choices"][i] if columns["choices"] else ()))
            key = (completion_text(prompts[i]), answer[i], kind, pairs)
            if key not in known:
                known[key] = Problem(key[0], answer[i], kind, choices=pairs)  # type: ignore[arg-type]
        rows.append(known[key])
    return rows
