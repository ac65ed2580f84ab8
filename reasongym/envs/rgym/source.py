"""reasoning-gym's generators as a reasongym ProblemSource: seeded streams, disjoint splits, levels.

reasoning-gym builds item ``j`` of a dataset from ``Random(config.seed + j)``, so two datasets with
seeds ``s`` and ``s + 1`` share all but one item, and its datasets have no splits. Here problem ``i`` of
a split at a level is drawn as our generators draw theirs (:class:`~reasongym.envs.sources.GeneratorSource`):
a hash of ``(seed, split, level, i, draw)`` picks the item index ``j``, and the item is kept only when the
stable hash of its question text falls in that split's share (train 80%, validation 10%, test 10%), so
the three streams never share a question and problem ``i`` is a pure function of ``(seed, split,
level, i)``. A level is a curriculum level of the task (reasoning-gym's ``coaching`` curricula: every
attribute at that level, ranges inclusive of the easier ones, as reasoning-gym's default context
does); no level means the task's default configuration.

The item reasoning-gym scores with (``entry``, metadata included) is rebuilt from the problem's
metadata when it is graded (and kept in a small cache), so a :class:`Problem` stays small and
JSON-serialisable.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from reasongym.envs.problem import Problem
from reasongym.envs.rgym.references import reference_answer
from reasongym.envs.rgym.table import GRADERS, TASKS, levels_of
from reasongym.envs.sources import PROCEDURAL_SPLITS, split_of_question
from reasongym.errors import ConfigError
from reasongym.verifiers.countdown import format_countdown_gold

INSTALL_HINT = "pip install 'reasongym[reasoning-gym]'"
_INDEX_SPACE = 2**31 - 1
# Tasks that build (or index) a list of ``size`` items when made: a smaller universe of items.
_FINITE = {"acre": 1_000, "gsm_symbolic": 20_000, "list_functions": 20_000, "word_ladder": 5_000}
_MAX_DRAWS = 200
_CACHE = 256


def index_space(task: str) -> int:
    """How many item indices task ``task`` has here (its datasets are made with this ``size``)."""
    return _FINITE.get(task, _INDEX_SPACE)


def import_reasoning_gym() -> Any:
    """The ``reasoning_gym`` package, or a ConfigError that says how to install it."""
    try:
        import reasoning_gym
    except ImportError as exc:
        raise ConfigError(
            f"reasoning-gym environments need the reasoning-gym package: {INSTALL_HINT}"
        ) from exc
    return reasoning_gym


def check_task(task: str) -> str:
    """``task`` if it is a registered reasoning-gym task, else a ConfigError naming the nearest one."""
    if task not in TASKS:
        close = difflib.get_close_matches(str(task), list(TASKS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"task={task!r} is not a reasoning-gym task reasongym registers{hint}")
    return task


@dataclass(frozen=True)
class Draw:
    """Where one problem came from: enough to rebuild reasoning-gym's item."""

    level: int | None
    rg_index: int


class ReasoningGymSource:
    """Infinite seeded streams of one reasoning-gym task (see the module docstring).

    Args:
        task: The reasoning-gym dataset name, e.g. ``"basic_arithmetic"``.
        seed: Seed of the problem universe (reasoning-gym's ``config.seed``).

    Raises:
        ConfigError: Unknown task, a negative seed, or reasoning-gym is not installed.
    """

    default_split = "train"

    def __init__(self, task: str, seed: int = 0) -> None:
        """Check the task and seed; datasets are made on first use."""
        self.name = check_task(task)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"{task}: seed must be a non-negative int, got {seed!r}")
        self.reasoning_gym = import_reasoning_gym()
        self.seed = seed
        self.category, self.grader = TASKS[task][0], TASKS[task][1]
        if self.grader not in GRADERS:  # a table row naming a grader no code here implements
            raise ConfigError(f"{task}: grader {self.grader!r} is not one of {GRADERS}")
        self.answer_type = self.grader  # a problem's answer type names its grader
        self._levels = levels_of(task)
        self._datasets: dict[int | None, Any] = {}
        self._entries: OrderedDict[tuple[int | None, int], dict[str, Any]] = OrderedDict()

    def splits(self) -> tuple[str, ...]:
        return PROCEDURAL_SPLITS

    def size(self, split: str, difficulty: int | None = None) -> None:
        self._check_split(split)
        return None

    def difficulties(self) -> tuple[int, ...]:
        return self._levels

    def _check_split(self, split: str) -> None:
        if split not in PROCEDURAL_SPLITS:
            raise ConfigError(
                f"{self.name}: unknown split {split!r}; this source has splits {list(PROCEDURAL_SPLITS)}"
            )

    def dataset(self, level: int | None) -> Any:
        """reasoning-gym's dataset object at ``level`` (None: the task's default configuration)."""
        if level is not None and level not in self._levels:
            raise ConfigError(
                f"{self.name}: difficulty {level!r} is not one of {list(self._levels)}"
                + ("" if self._levels else " (this task has no curriculum: use difficulty None)")
            )
        if level not in self._datasets:
            self._datasets[level] = self._make_dataset(level)
        return self._datasets[level]

    def _make_dataset(self, level: int | None) -> Any:
        from reasoning_gym.factory import CURRICULA, DATASETS

        dataset_cls, config_cls = DATASETS[self.name]
        fields = {"seed": self.seed, "size": index_space(self.name)}
        if level is None:
            config = config_cls(**fields)
        else:
            curriculum = CURRICULA[self.name]()
            for attribute in curriculum.attributes.values():
                curriculum.set_attr_level(attribute.name, min(level - 1, len(attribute.levels) - 1))
            config = curriculum.generate_configuration(fields)
        if hasattr(config, "validate"):
            config.validate()
        return dataset_cls(config=config)

    def entry(self, draw: Draw) -> dict[str, Any]:
        """reasoning-gym's item for ``draw`` (question, answer, metadata), from a small cache."""
        key = (draw.level, draw.rg_index)
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        item = self.dataset(draw.level)[draw.rg_index]
        self._entries[key] = item
        if len(self._entries) > _CACHE:
            self._entries.popitem(last=False)
        return item

    def entry_of(self, problem: Problem) -> dict[str, Any]:
        """reasoning-gym's item of a problem this source made (rebuilt from its metadata)."""
        meta = problem.metadata
        return self.entry(Draw(meta.get("level"), int(meta["rg_index"])))

    def _draw_index(self, split: str, level: int | None, index: int, draw: int) -> int:
        key = f"{self.seed}/{split}/{level}/{index}/{draw}".encode()
        return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") % index_space(self.name)

    def problem(self, split: str, index: int, difficulty: int | None = None) -> Problem:
        self._check_split(split)
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ConfigError(f"{self.name}: index must be a non-negative int, got {index!r}")
        self.dataset(difficulty)  # checks the level before any draw
        failure = None
        for draw in range(_MAX_DRAWS):
            found = Draw(difficulty, self._draw_index(split, difficulty, index, draw))
            try:
                item = self.entry(found)
            except Exception as exc:  # noqa: BLE001 - their generator gave up on this item: draw again
                failure = f"{type(exc).__name__}: {exc}"
                continue
            if split_of_question(str(item["question"])) == split and _usable(self.grader, item):
                return self._to_problem(item, found, split, index)
        raise ConfigError(
            f"{self.name}: {_MAX_DRAWS} draws at difficulty {difficulty} gave no question for split "
            f"{split!r}" + (f" (reasoning-gym last raised {failure})" if failure else "")
        )

    def _to_problem(self, item: dict[str, Any], draw: Draw, split: str, index: int) -> Problem:
        answer, reference = self._gold(item)
        level = f"d{draw.level}" if draw.level is not None else "default"
        metadata = {
            "task": self.name,
            "category": self.category,
            "grader": self.grader,
            "level": draw.level,
            "rg_index": draw.rg_index,
            "rg_seed": self.seed,
            "rg_difficulty": _plain(item.get("metadata", {}).get("difficulty")),
        }
        if reference is not None:
            metadata["reference"] = reference
        return Problem(
            question=str(item["question"]),
            answer=answer,
            answer_type=self.answer_type,
            id=f"{self.name}-{split}-{level}-{index}",
            difficulty=draw.level,
            metadata=metadata,
        )

    def _gold(self, item: dict[str, Any]) -> tuple[str, str | None]:
        """The gold answer text, and for Countdown-graded tasks the reference expression."""
        meta = item.get("metadata", {})
        if self.grader == "countdown":
            numbers = [int(n) for n in meta["numbers"]]
            return format_countdown_gold(int(meta.get("target", 24)), numbers), str(item["answer"])
        if item.get("answer") is not None:
            return str(item["answer"]), None
        return reference_answer(self.name, item), None


def _usable(grader: str, item: dict[str, Any]) -> bool:
    """False for an item no grader can grade: an antiderivative gold that is an unevaluated ``Integral(...)``
    (``intermediate_integration`` gives one when sympy finds no closed form), which is drawn again."""
    return not (grader == "math" and "Integral(" in str(item.get("answer")))


def _plain(value: Any) -> Any:
    """A JSON-ready copy (tuples as lists, anything else as text)."""
    return json.loads(json.dumps(value, default=str))


def source(task: str, seed: int = 0) -> ReasoningGymSource:
    """The registered entry point: the source of reasoning-gym task ``task``."""
    return ReasoningGymSource(task, seed=seed)
