"""Problem sources: where an environment's problems come from.

A source maps ``(split, index, difficulty)`` to a :class:`Problem` and nothing else: it knows nothing
about prompts, rewards or models. Two kinds exist:

- :class:`DatasetSource` holds finite splits of rows (benchmark data, a user's file), loaded lazily on
  first use so that registering an environment never reads its data.
- :class:`GeneratorSource` wraps a generator function ``(rng, difficulty) -> Problem`` into infinite,
  seeded streams. Problem ``i`` of a split is a pure function of ``(seed, split, difficulty, i)``, and the
  train, validation and test streams never share a question (see :func:`split_of_question`).
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from reasongym.envs.gold_check import check_gold_policy, checked_golds
from reasongym.envs.problem import Problem, answer_types
from reasongym.errors import ConfigError

GeneratorFn = Callable[[np.random.Generator, int], Problem]

PROCEDURAL_SPLITS = ("train", "validation", "test")
# Share of the question space that each procedural split owns, in percent of a hash of the question text.
_SPLIT_BUCKETS = {"test": range(0, 10), "validation": range(10, 20), "train": range(20, 100)}
# A split owns >= 10% of the question space, so 200 draws miss it with probability 0.9**200 (~7e-10).
_MAX_DRAWS = 200


@runtime_checkable
class ProblemSource(Protocol):
    """What an environment needs from a source of problems."""

    name: str
    answer_type: str
    default_split: str

    def splits(self) -> tuple[str, ...]:
        """The split names this source serves."""
        ...

    def size(self, split: str, difficulty: int | None = None) -> int | None:
        """Number of problems in ``split`` (at ``difficulty``), or None when the stream is infinite."""
        ...

    def problem(self, split: str, index: int, difficulty: int | None = None) -> Problem:
        """Problem number ``index`` of ``split`` (at ``difficulty``)."""
        ...

    def difficulties(self) -> tuple[int, ...]:
        """The difficulty levels this source can filter or generate by; empty when it has none."""
        ...


def _check_split(name: str, split: str, splits: Sequence[str]) -> None:
    if split not in splits:
        raise ConfigError(f"{name}: unknown split {split!r}; this source has splits {list(splits)}")


def _check_answer_type(name: str, answer_type: str) -> None:
    if answer_type not in answer_types():
        raise ConfigError(f"{name}: answer_type {answer_type!r} is not one of {list(answer_types())}")


def check_unique_ids(name: str, split: str, rows: Sequence[Problem]) -> None:
    """Refuse two rows with one id: results are matched to problems by id (``eval --completions``).

    Raises:
        ConfigError: Naming both rows and the id.
    """
    first: dict[str, int] = {}
    for position, problem in enumerate(rows):
        if problem.id in first:
            raise ConfigError(
                f"{name}: split {split!r} rows {first[problem.id]} and {position} share the id {problem.id!r}; "
                "ids must be unique within a split (results are matched to problems by id)"
            )
        first[problem.id] = position


class DatasetSource:
    """Finite splits of problems, each loaded on first use.

    Args:
        name: Short name used in error messages and problem ids.
        answer_type: The verifier kind of every problem.
        loaders: Split name -> zero-argument function returning that split's problems.
        default_split: The split ``reset`` uses when no split is asked for.
        unreadable_golds: What to do with rows whose gold the verifier cannot read, found when a split
            loads: "warn" (keep them), "drop" (leave them out, warning) or "error"
            (:mod:`reasongym.envs.gold_check`).
    """

    def __init__(
        self,
        name: str,
        answer_type: str,
        loaders: Mapping[str, Callable[[], Sequence[Problem]]],
        default_split: str | None = None,
        unreadable_golds: str = "warn",
    ) -> None:
        _check_answer_type(name, answer_type)
        self.unreadable_golds = check_gold_policy(name, unreadable_golds)
        if not loaders:
            raise ConfigError(f"{name}: a dataset source needs at least one split")
        self.name = name
        self.answer_type = answer_type
        self._loaders = dict(loaders)
        self.default_split = default_split or next(iter(self._loaders))
        _check_split(name, self.default_split, tuple(self._loaders))
        self._rows: dict[str, Sequence[Problem]] = {}
        self._by_difficulty: dict[tuple[str, int], list[int]] = {}

    @classmethod
    def from_problems(
        cls,
        name: str,
        answer_type: str,
        splits: Mapping[str, Sequence[Problem]],
        default_split: str | None = None,
    ) -> DatasetSource:
        """A source over problems already in memory."""
        return cls(
            name, answer_type, {s: (lambda rows=rows: rows) for s, rows in splits.items()}, default_split
        )

    def splits(self) -> tuple[str, ...]:
        return tuple(self._loaders)

    def rows(self, split: str) -> Sequence[Problem]:
        """All problems of ``split``, loading them on first use."""
        _check_split(self.name, split, self.splits())
        if split not in self._rows:
            rows = checked_golds(self.name, split, self._loaders[split](), self.unreadable_golds)
            if len(rows) == 0:
                raise ConfigError(f"{self.name}: split {split!r} is empty")
            check_unique_ids(self.name, split, rows)
            self._rows[split] = rows
        return self._rows[split]

    def _indices_at(self, split: str, difficulty: int) -> list[int]:
        key = (split, difficulty)
        if key not in self._by_difficulty:
            found = [i for i, p in enumerate(self.rows(split)) if p.difficulty == difficulty]
            if not found:
                raise ConfigError(
                    f"{self.name}: no problem of difficulty {difficulty!r} in split {split!r}; "
                    f"difficulties present: {sorted({p.difficulty for p in self.rows(split)} - {None})}"
                )
            self._by_difficulty[key] = found
        return self._by_difficulty[key]

    def size(self, split: str, difficulty: int | None = None) -> int:
        if difficulty is None:
            return len(self.rows(split))
        return len(self._indices_at(split, difficulty))

    def problem(self, split: str, index: int, difficulty: int | None = None) -> Problem:
        size = self.size(split, difficulty)
        if not 0 <= index < size:
            raise ConfigError(f"{self.name}: index {index} is out of range for split {split!r} (size {size})")
        if difficulty is not None:
            index = self._indices_at(split, difficulty)[index]
        return self.rows(split)[index]

    def difficulties(self) -> tuple[int, ...]:
        return tuple(
            sorted({p.difficulty for p in self.rows(self.default_split) if p.difficulty is not None})
        )


def split_of_question(question: str) -> str:
    """The procedural split that owns ``question``: a stable hash of its text decides.

    This is what keeps splits disjoint even when a small difficulty level has few distinct questions:
    a question can only ever be served by the one split its hash falls in.
    """
    bucket = int.from_bytes(hashlib.blake2b(question.encode("utf-8"), digest_size=8).digest(), "big") % 100
    for split, owned in _SPLIT_BUCKETS.items():
        if bucket in owned:
            return split
    raise AssertionError("split buckets must cover 0-99")


class GeneratorSource:
    """Infinite seeded streams from a generator function ``(rng, difficulty) -> Problem``.

    Args:
        name: Short name used in error messages and problem ids.
        generate: Builds one problem from a ``numpy.random.Generator`` and an integer difficulty. It must
            use only that rng for randomness.
        answer_type: The verifier kind of every problem.
        difficulties: The levels the generator accepts, easiest first.
        default_difficulty: The level used when none is asked for; defaults to the easiest.
        seed: Seed of the whole problem universe; problem ``i`` depends only on it, the split, the
            difficulty and ``i``.
    """

    default_split = "train"

    def __init__(
        self,
        name: str,
        generate: GeneratorFn,
        answer_type: str,
        difficulties: Sequence[int] = (1, 2, 3, 4, 5),
        default_difficulty: int | None = None,
        seed: int = 0,
    ) -> None:
        _check_answer_type(name, answer_type)
        if not callable(generate):
            raise ConfigError(
                f"{name}: generate must be a function (rng, difficulty) -> Problem, got {generate!r:.60}"
            )
        if (
            isinstance(difficulties, (str, bytes))
            or not difficulties
            or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in difficulties)
        ):
            raise ConfigError(
                f"{name}: difficulties must list at least one integer level, got {difficulties!r:.60}"
            )
        self.name = name
        self.answer_type = answer_type
        self._generate = generate
        self._difficulties = tuple(int(d) for d in difficulties)
        self.default_difficulty = self._difficulties[0] if default_difficulty is None else default_difficulty
        self._check_difficulty(self.default_difficulty)
        if not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"{name}: seed must be a non-negative int, got {seed!r}")
        self.seed = seed

    def _check_difficulty(self, difficulty: int) -> None:
        if difficulty not in self._difficulties:
            raise ConfigError(
                f"{self.name}: difficulty {difficulty!r} is not one of {list(self._difficulties)}"
            )

    def splits(self) -> tuple[str, ...]:
        return PROCEDURAL_SPLITS

    def size(self, split: str, difficulty: int | None = None) -> None:
        _check_split(self.name, split, PROCEDURAL_SPLITS)
        return None

    def difficulties(self) -> tuple[int, ...]:
        return self._difficulties

    def problem(self, split: str, index: int, difficulty: int | None = None) -> Problem:
        _check_split(self.name, split, PROCEDURAL_SPLITS)
        level = self.default_difficulty if difficulty is None else difficulty
        self._check_difficulty(level)
        if not isinstance(index, (int, np.integer)) or index < 0:
            raise ConfigError(f"{self.name}: index must be a non-negative int, got {index!r}")
        split_key = PROCEDURAL_SPLITS.index(split)
        for draw in range(_MAX_DRAWS):
            sequence = np.random.SeedSequence(self.seed, spawn_key=(split_key, level, int(index), draw))
            candidate = self._generate(np.random.default_rng(sequence), level)
            if not isinstance(candidate, Problem):
                raise ConfigError(
                    f"{self.name}: the generator returned a {type(candidate).__name__}, not a Problem"
                )
            if split_of_question(candidate.question) == split:
                if candidate.answer_type != self.answer_type:
                    raise ConfigError(
                        f"{self.name}: the generator returned answer_type {candidate.answer_type!r}, "
                        f"but the source was declared with {self.answer_type!r}"
                    )
                return replace(candidate, id=f"{self.name}-{split}-d{level}-{index}", difficulty=level)
        raise ConfigError(
            f"{self.name}: {_MAX_DRAWS} draws at difficulty {level} gave no question for split {split!r}; "
            "the generator's question space at this level is too small to split"
        )


def resolve_source(
    source: ProblemSource | str | Callable[..., ProblemSource], **kwargs: Any
) -> ProblemSource:
    """Turn a source reference into a :class:`ProblemSource`.

    Args:
        source: A ProblemSource, a ``"module:function"`` string naming a function that returns one, or
            such a function itself.
        **kwargs: Keyword arguments for the function (not allowed with a ready ProblemSource).

    Returns:
        The problem source.

    Raises:
        ConfigError: The reference is malformed, cannot be imported, or does not give a ProblemSource.
    """
    if isinstance(source, str):
        module_name, sep, attr = source.partition(":")
        if not sep or not module_name or not attr:
            raise ConfigError(f"source must look like 'package.module:function', got {source!r}")
        try:
            source = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"source {source!r} could not be imported: {exc}") from exc
    if isinstance(source, ProblemSource):
        if kwargs:
            raise ConfigError(f"source_kwargs {sorted(kwargs)} given, but the source is already built")
        return source
    if not callable(source):
        raise ConfigError(f"source must be a ProblemSource, a callable or 'module:function', got {source!r}")
    built = source(**kwargs)
    if not isinstance(built, ProblemSource):
        raise ConfigError(f"source function {source!r} returned {type(built).__name__}, not a ProblemSource")
    return built
