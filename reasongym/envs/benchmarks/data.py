"""Benchmark data on disk: which splits a data root holds (``reasongym list``), and writing a benchmark into
that layout (``reasongym data``), from the hub or from a file a user has.

A data root holds one folder per dataset and one JSONL file per split (``<root>/gsm8k/test.jsonl``, the paths
of each benchmark's ``SplitRoute.shared_file``). Each line is one problem: ``id``, ``question``, ``answer``
(the final answer as text), ``solution`` (or null), and where the benchmark has them ``choices`` (a list of
``{"label", "text"}``), ``level`` and the benchmark's own fields (``subject``, ``year``, ``contest``,
``problem_number``, ...). Every benchmark reads this layout back as the problems it was written from
(tested on each one), so a folder written here serves as ``REASONGYM_DATA_DIR``.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

from reasongym.envs.benchmarks import BENCHMARK_ENVS
from reasongym.envs.benchmarks._common import (
    DATA_DIR_ENV,
    BenchmarkSource,
    check_golds,
    hub_offline,
    hub_unreachable,
    load_from_hub,
)
from reasongym.envs.catalog import CatalogEntry
from reasongym.envs.gold_check import checked_golds
from reasongym.envs.problem import Problem
from reasongym.envs.rows import read_rows
from reasongym.errors import ConfigError, DatasetNotFoundError

RENAMED = {"number": "problem_number"}
"""Problem metadata written under the column name the benchmarks read (AIME's ``number``)."""


def benchmark_entry(env_id: str) -> CatalogEntry | None:
    """The catalog row of a benchmark environment id (with or without the ``reasongym/`` namespace)."""
    wanted = env_id if "/" in env_id else f"reasongym/{env_id}"
    return next((entry for entry in BENCHMARK_ENVS if entry.id == wanted), None)


def entry_source(entry: CatalogEntry, **overrides: Any) -> BenchmarkSource:
    """The lazily loaded source of a benchmark row (nothing is read until a split is used)."""
    module, function = entry.source.split(":")
    source = getattr(importlib.import_module(module), function)(**{**entry.source_kwargs, **overrides})
    assert isinstance(source, BenchmarkSource)  # every benchmark row builds one
    return source


def local_splits(entry: CatalogEntry) -> dict[str, Path | None]:
    """Split -> the file of it under ``REASONGYM_DATA_DIR``, or None where the data root has none."""
    root = os.environ.get(DATA_DIR_ENV)
    routes = entry_source(entry).routes
    return {
        split: (
            Path(root) / route.shared_file if root and (Path(root) / route.shared_file).is_file() else None
        )
        for split, route in routes.items()
    }


def availability(entry: CatalogEntry) -> str:
    """Where a catalog row's problems come from here: ``generated``, ``local``, ``local: test`` (the splits the
    data root has; the rest from the hub), or ``hub`` (no local copy)."""
    if not entry.source.startswith("reasongym.envs.benchmarks."):
        return "generated" if entry.size == "procedural" else "local"  # a generator, or rows held here
    found = local_splits(entry)
    here = [split for split, path in found.items() if path is not None]
    if len(here) == len(found):
        return "local"
    return f"local: {', '.join(here)}" if here else "hub"


def problem_row(problem: Problem) -> dict[str, Any]:
    """A problem as one line of the data-root layout."""
    row: dict[str, Any] = {
        "id": problem.id,
        "question": problem.question,
        "answer": problem.answer,
        "solution": problem.solution,
    }
    if problem.choices:
        row["choices"] = [{"label": label, "text": text} for label, text in problem.choices]
    if problem.difficulty is not None:
        row["level"] = problem.difficulty
    for key, value in problem.metadata.items():
        row.setdefault(RENAMED.get(key, key), value)
    return row


def write_split(
    env_id: str, split: str, root: str | os.PathLike[str], *, from_file: str | os.PathLike[str] | None = None
) -> tuple[Path, int]:
    """Write one split of a benchmark into the data root ``root``: from ``from_file`` (any layout the benchmark
    reads: its hub columns, its original release, the shared layout) or, without it, from the hub.

    Returns:
        The file written and its number of problems. Golds its verifier cannot read are written too, and
        warned about (:class:`~reasongym.envs.gold_check.UnreadableGoldWarning`, count and examples).

    Raises:
        ConfigError: Not a benchmark id, an unknown split, a file the benchmark cannot read.
        DatasetNotFoundError: The hub cannot be reached (at once, without retries) or has no such split.
    """
    entry = benchmark_entry(env_id)
    if entry is None:
        names = [e.id for e in BENCHMARK_ENVS]
        raise ConfigError(
            f"{env_id!r} is not a benchmark with data files (generated environments need none); benchmarks: {names}"
        )
    source = entry_source(entry)
    split = source.split_aliases.get(split, split)
    if split not in source.routes:
        raise ConfigError(f"{entry.id} has no split {split!r}; splits: {list(source.routes)}")
    route = source.routes[split]
    rows, origin = (
        (read_rows(Path(from_file)), str(from_file))
        if from_file is not None
        else (_from_hub(entry, split, route), "the hub")
    )
    assert source.convert is not None  # every benchmark source has its converter
    try:
        problems = source.convert(rows, split)
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        if isinstance(error, ConfigError):
            raise
        raise ConfigError(f"{entry.id}: cannot read split {split!r} from {origin}: {error!r}") from error
    check_golds(source.name, split, origin, problems)
    checked_golds(source.name, split, problems, "warn")  # the file keeps them; the warning says which
    target = Path(root) / route.shared_file
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(
        "".join(json.dumps(problem_row(p), ensure_ascii=False) + "\n" for p in problems), encoding="utf-8"
    )
    tmp.replace(target)
    return target, len(problems)


def _from_hub(entry: CatalogEntry, split: str, route: Any) -> list[dict[str, Any]]:
    """The split's rows from the hub, or DatasetNotFoundError at once when the hub cannot be reached."""
    if not route.hub_parts:
        raise DatasetNotFoundError(
            f"{entry.id}: split {split!r} has no hub copy; convert a file you have (--from)"
        )
    why = "HF_HUB_OFFLINE is set" if hub_offline() else hub_unreachable()
    if why:
        raise DatasetNotFoundError(
            f"{entry.id}: the hub cannot be reached ({why}), so split {split!r} cannot be downloaded here; "
            f"download it where the hub is reachable (`reasongym data {entry.id} --out DIR` there, then copy "
            "DIR), or convert a copy you have: `reasongym data ENV_ID --split SPLIT --from FILE --out DIR`"
        )
    return load_from_hub(route.hub_parts)
