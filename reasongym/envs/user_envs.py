"""Your own environments: registered from rows (``register_dataset``) or a generator (``register_generator``).

Register your own data in a few lines:

    >>> import reasongym
    >>> rows = [{"question": "What is 2 + 2?", "answer": "4"}, {"question": "What is 3 * 3?", "answer": "9"}]
    >>> reasongym.register_dataset("me/Tiny-v0", rows, override=True)
    >>> env = reasongym.make("me/Tiny-v0")
    >>> prompt, info = env.reset(seed=0, options={"index": 0})
    >>> prompt.splitlines()[0]
    'What is 2 + 2?'

or a generator:

    >>> def add(rng, difficulty):
    ...     a, b = (int(x) for x in rng.integers(1, 10 ** difficulty, size=2))
    ...     return {"question": f"What is {a} + {b}?", "answer": str(a + b)}
    >>> reasongym.register_generator("me/Add-v0", add, answer_type="integer", override=True)
    >>> env = reasongym.make("me/Add-v0")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reasongym.envs.registration import parse_id, register
from reasongym.envs.rows import Columns, problem_maker, split_tables, table_loader, table_size
from reasongym.envs.sources import DatasetSource, GeneratorSource
from reasongym.errors import ConfigError

__all__ = ["register_dataset", "register_generator"]


def register_generator(
    id: str,
    generate: Callable[..., Any],
    *,
    answer_type: str,
    difficulties: tuple[int, ...] = (1, 2, 3, 4, 5),
    description: str = "",
    override: bool = False,
) -> None:
    """Register a procedural environment from a function ``(rng, difficulty) -> Problem | dict``.

    A dict needs ``question`` and ``answer`` and may hold any other :class:`Problem` field. The function
    must draw randomness only from ``rng`` (a ``numpy.random.Generator``). ``make(id,
    source_kwargs={"seed": 3})`` picks another problem universe.

    Raises:
        ConfigError: ``generate`` is not callable, the id is malformed, or the answer type or
            difficulties are invalid. What it returns is checked when a problem is made: a question
            that is not a non-empty string or a missing or non-finite answer is an error naming it.

    Example:
        >>> def add(rng, difficulty):
        ...     a, b = (int(x) for x in rng.integers(1, 10 ** difficulty, size=2))
        ...     return {"question": f"What is {a} + {b}?", "answer": str(a + b)}
        >>> register_generator("me/Add-v0", add, answer_type="integer", override=True)
    """
    name = parse_id(id)[1]
    if not callable(generate):
        raise ConfigError(
            f"register_generator: generate must be a function (rng, difficulty) -> Problem | dict, "
            f"got {type(generate).__name__} {generate!r:.60}"
        )
    to_problem = problem_maker(name, answer_type)

    def generator_source(seed: int = 0) -> GeneratorSource:
        return GeneratorSource(
            name, lambda rng, level: to_problem(generate(rng, level)), answer_type, difficulties, seed=seed
        )

    generator_source()  # checks the answer type and difficulties now, without generating anything
    register(
        id,
        generator_source,
        description=description or f"user generator {name}",
        answer_type=answer_type,
        override=override,
    )


def register_dataset(
    id: str,
    data: Any,
    *,
    question: str = "question",
    answer: str = "answer",
    answer_type: str = "math",
    choices: str | None = None,
    solution: str | None = None,
    difficulty: str | None = None,
    id_column: str | None = None,
    split: str = "test",
    prompt_template: str | None = None,
    description: str = "",
    override: bool = False,
    unreadable_golds: str = "warn",
) -> None:
    """Register an environment over your own rows.

    Args:
        id: ``"namespace/Name-vN"``.
        data: A ``datasets.Dataset`` or ``DatasetDict``, a list of dicts, a path to a JSONL / JSON / CSV /
            Parquet file, or a mapping split name -> any of these.
        question: Column holding the question text.
        answer: Column holding the gold answer.
        answer_type: The verifier kind, one of ``ANSWER_TYPES``.
        choices: Column holding the options (list of texts, ``(label, text)`` pairs, a label->text dict or
            ``{"label": [...], "text": [...]}``), for multiple choice.
        solution: Column holding a reference solution.
        difficulty: Column holding an integer difficulty.
        id_column: Column holding a row id; otherwise ``"<Name>-<split>-<row>"``.
        split: The split name of ``data`` when it is a single table.
        prompt_template: A ``ReasoningEnvConfig.prompt_template`` for this environment.
        description: One line for ``list_envs``.
        override: Replace an id that is already registered.
        unreadable_golds: Rows whose gold the verifier cannot read: "warn" (keep them), "drop" or "error"
            (:mod:`~reasongym.envs.gold_check`); rows in memory are checked here, files when first read.

    Raises:
        ConfigError: Malformed id, unknown answer type, a missing column (listing those present), a path
            that does not exist, a split without rows, or a bad row (:mod:`~reasongym.envs.rows`): at
            registration for a list of rows, on first use for a file.

    Example:
        >>> rows = [{"q": "Is 7 prime?", "a": "yes"}]
        >>> register_dataset("me/Primes-v0", rows, question="q", answer="a", answer_type="yesno", override=True)
    """
    name = parse_id(id)[1]
    columns = Columns(question, answer, choices, solution, difficulty, id_column)
    tables = split_tables(data, split)
    sizes = ", ".join(f"{part} {table_size(table)}" for part, table in tables.items())
    register(
        id,
        _dataset_source(name, answer_type, tables, columns, unreadable_golds),
        description=description or f"user dataset {name}",
        answer_type=answer_type,
        size=sizes,
        env_kwargs={"prompt_template": prompt_template} if prompt_template else None,
        override=override,
    )


def _dataset_source(
    name: str, answer_type: str, tables: Mapping[str, Any], columns: Columns, unreadable_golds: str
) -> DatasetSource:
    """The source over a user's tables; rows given in memory are read now, so their golds are reported here."""
    loaders = {part: table_loader(name, part, table, answer_type, columns) for part, table in tables.items()}
    source = DatasetSource(name, answer_type, loaders, unreadable_golds=unreadable_golds)
    for part, table in tables.items():
        if isinstance(table, Sequence) and not isinstance(table, str):
            source.rows(part)
    return source
