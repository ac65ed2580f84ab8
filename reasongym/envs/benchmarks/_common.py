"""Finding, reading and converting benchmark data: the machinery every benchmark loader shares.

Each split of a benchmark is looked for lazily, on first use, along three routes in this order:

1. ``data_dir`` given to the source function: a folder holding ``<split>.jsonl`` (or ``.json``,
   ``.csv``, ``.parquet``), one file (it serves the default split), or a mapping split -> file. Data given
   this way must exist: a typo never silently falls through to other data. Splits it does not cover
   (all but the default split, for a single file) go on to the next routes.
2. The environment variable ``REASONGYM_DATA_DIR``: a data root in the layout of the project's shared
   data folder (``<root>/gsm8k/test.jsonl``, ...).
3. ``datasets.load_dataset(hub_id, config, split=...)`` from the Hugging Face hub (or its local cache).
   The hub's host is tried first (`hub_unreachable`: a connection within 3 s): when it cannot be reached
   the route is skipped at once, instead of after the ``datasets`` client's retries (about 30 s). With
   ``HF_HUB_OFFLINE=1`` the hub route only reads the local ``datasets`` cache, or is skipped when
   ``datasets`` was imported before the variable was set.

When every route fails, :class:`~reasongym.errors.DatasetNotFoundError` says what was tried and how to
provide the data.
"""

from __future__ import annotations

import difflib
import os
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from reasongym.envs.problem import Problem
from reasongym.envs.rows import MISSING_GOLD_TEXTS, read_rows
from reasongym.envs.sources import DatasetSource
from reasongym.errors import ConfigError, DatasetNotFoundError

DATA_DIR_ENV = "REASONGYM_DATA_DIR"
FILE_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
_OFFLINE_ENVS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
_TRUE_VALUES = {"1", "ON", "YES", "TRUE"}
_MISSING_GOLDS = MISSING_GOLD_TEXTS | {""}  # one rule with register_dataset and stored completions

Row = dict[str, Any]
Converter = Callable[[list[Row], str], list[Problem]]
DataDir = str | os.PathLike | Mapping[str, "str | os.PathLike"] | None


@dataclass(frozen=True)
class HubPart:
    """One ``datasets.load_dataset`` call; a split may concatenate several (MATH's subject configs)."""

    repo: str
    """Hub dataset id, e.g. ``"openai/gsm8k"``."""
    config: str | None
    """Config (subset) name, or None for the default one."""
    split: str
    """The hub's split name, which may differ from ours (``"validation"`` vs ``"dev"``)."""


@dataclass(frozen=True)
class SplitRoute:
    """Where one split of a benchmark can be found."""

    shared_file: str
    """Path of the split's file relative to ``REASONGYM_DATA_DIR``, e.g. ``"gsm8k/test.jsonl"``."""
    hub_parts: tuple[HubPart, ...] = ()
    """Hub loads concatenated in order to form the split; empty when no hub copy is known."""
    file_stems: tuple[str, ...] = ()
    """Extra file names (without suffix) tried in a ``data_dir`` folder besides the split's own name."""


class BenchmarkSource(DatasetSource):
    """A :class:`DatasetSource` that also accepts alias split names (``"dev"`` for ``"validation"``), and
    knows where each split is looked for (``routes``) and how rows become problems (``convert``)."""

    def __init__(
        self,
        *args: Any,
        split_aliases: Mapping[str, str] | None = None,
        routes: Mapping[str, SplitRoute] | None = None,
        convert: Converter | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.split_aliases = dict(split_aliases or {})
        self.routes = dict(routes or {})
        self.convert = convert

    def _resolve_split(self, split: str) -> str:
        return self.split_aliases.get(split, split)

    def rows(self, split: str) -> Sequence[Problem]:
        return super().rows(self._resolve_split(split))

    def size(self, split: str, difficulty: int | None = None) -> int:
        return super().size(self._resolve_split(split), difficulty)

    def problem(self, split: str, index: int, difficulty: int | None = None) -> Problem:
        return super().problem(self._resolve_split(split), index, difficulty)


def canonical_number(value: Any) -> str:
    """A numeric answer as the verifiers expect it: ``27.0`` -> ``"27"``, ``"025"`` -> ``"25"``,
    ``"1,080"`` -> ``"1080"``, ``"0.50"`` -> ``"0.5"``. Text that is not a plain number is returned stripped.
    """
    text = str(value).strip()
    try:
        number = Decimal(text.replace(",", "") if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", text) else text)
    except InvalidOperation:
        return text
    if not number.is_finite():
        return text
    if number == number.to_integral_value():
        return str(int(number))
    return format(number.normalize(), "f")


def _candidate_files(data_dir: DataDir, split: str, route: SplitRoute, default_split: str) -> list[Path]:
    """The files an explicit ``data_dir`` offers for ``split``; empty when it does not cover the split."""
    if data_dir is None:
        return []
    if isinstance(data_dir, Mapping):
        return [Path(data_dir[split])] if split in data_dir else []
    path = Path(data_dir)
    if path.is_file() or (not path.exists() and path.suffix.lower() in FILE_SUFFIXES):
        return [path] if split == default_split else []
    stems = (split, *route.file_stems)
    return [path / f"{stem}{suffix}" for stem in stems for suffix in FILE_SUFFIXES]


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE`` asks for no network access."""
    return any(os.environ.get(name, "").upper() in _TRUE_VALUES for name in _OFFLINE_ENVS)


def hub_unreachable(timeout: float = 3.0) -> str | None:
    """Why the hub cannot be reached (no name resolution, no connection to its host within ``timeout``
    seconds), or None when it can, or when a proxy is set (the proxy decides; ``datasets`` finds out)."""
    if any(os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return None
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    match = re.match(r"^(https?)://([^/:]+)(?::(\d+))?", endpoint)
    if match is None:
        return None
    host, port = match.group(2), int(match.group(3) or (443 if match.group(1) == "https" else 80))
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as error:
        return f"{host}:{port} cannot be reached ({error.strerror or type(error).__name__})"
    return None


def load_from_hub(parts: Sequence[HubPart]) -> list[Row]:
    import datasets

    rows: list[Row] = []
    for part in parts:
        rows.extend(datasets.load_dataset(part.repo, part.config, split=part.split).to_list())
    return rows


def _hub_call(part: HubPart) -> str:
    config = f", {part.config!r}" if part.config else ""
    return f"datasets.load_dataset({part.repo!r}{config}, split={part.split!r})"


def _try_hub(parts: Sequence[HubPart], tried: list[str]) -> list[Row] | None:
    if not parts:
        tried.append("hub: no hub copy configured (hub_id=None)")
        return None
    calls = " + ".join(_hub_call(part) for part in parts)
    if hub_offline():
        import datasets

        # datasets reads HF_HUB_OFFLINE once, at import; if it missed it, a call would retry for ~20 s.
        if not datasets.config.HF_HUB_OFFLINE:
            tried.append(f"hub: {calls} skipped (HF_HUB_OFFLINE set after datasets was imported)")
            return None
    else:
        unreachable = hub_unreachable()
        if unreachable:
            cache = "a copy in the datasets cache is read with HF_HUB_OFFLINE=1"
            tried.append(f"hub: {calls} skipped at once: {unreachable} ({cache})")
            return None
    try:
        return load_from_hub(parts)
    except (OSError, ValueError, ImportError) as error:  # ConnectionError, FileNotFoundError, bad split
        message = str(error).splitlines()[0][:200] if str(error) else ""
        tried.append(f"hub: {calls} failed: {type(error).__name__}: {message}")
        return None


def find_rows(
    name: str, split: str, route: SplitRoute, data_dir: DataDir, default_split: str
) -> tuple[list[Row], str]:
    """The raw rows of ``split`` and where they came from, trying the routes in order.

    Raises:
        DatasetNotFoundError: No route had the split; the message lists every attempt.
    """
    tried: list[str] = []
    explicit = _candidate_files(data_dir, split, route, default_split)
    for path in explicit:
        if path.is_file():
            return read_rows(path), str(path)
    if explicit:
        shown = explicit if len(explicit) <= 2 else [*explicit[:2], "..."]
        tried.append(f"data_dir: none of {', '.join(map(str, shown))} exists")
        raise _not_found(name, split, route, tried)
    tried.append("data_dir: not given" if data_dir is None else f"data_dir: {data_dir} has no file for it")
    root = os.environ.get(DATA_DIR_ENV)
    if root:
        shared = Path(root) / route.shared_file
        if shared.is_file():
            return read_rows(shared), str(shared)
        tried.append(f"{DATA_DIR_ENV}: {shared} does not exist")
    else:
        tried.append(f"{DATA_DIR_ENV}: not set")
    rows = _try_hub(route.hub_parts, tried)
    if rows is None:
        raise _not_found(name, split, route, tried)
    return rows, " + ".join(_hub_call(part) for part in route.hub_parts)


def _not_found(name: str, split: str, route: SplitRoute, tried: list[str]) -> DatasetNotFoundError:
    attempts = "".join(f"\n  - {line}" for line in tried)
    return DatasetNotFoundError(
        f"{name}: split {split!r} was not found. Tried:{attempts}\n"
        f"Provide it in one of these ways: `reasongym data` (downloads where the hub is reachable, or converts "
        f"a file you have) writes a data root; set {DATA_DIR_ENV} to a data root holding {route.shared_file}; "
        f"pass data_dir=<folder with {split}.jsonl, or a file> to the source function; or "
        f'make(env_id, source_kwargs={{"data_dir": ...}}).'
    )


def benchmark_source(
    name: str,
    answer_type: str,
    routes: Mapping[str, SplitRoute],
    convert: Converter,
    data_dir: DataDir,
    default_split: str,
    split_aliases: Mapping[str, str] | None = None,
) -> BenchmarkSource:
    """A lazily loaded source: each split is found, read and converted on first use only."""
    aliases = dict(split_aliases or {})
    if isinstance(data_dir, Mapping):
        data_dir = {aliases.get(split, split): path for split, path in data_dir.items()}
        unknown = sorted(set(data_dir) - set(routes))
        if unknown:
            near = difflib.get_close_matches(unknown[0], [*routes, *aliases], n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ConfigError(
                f"{name}: data_dir names unknown split(s) {unknown}; splits are {list(routes)}{hint}"
            )

    def loader(split: str) -> Callable[[], list[Problem]]:
        def load() -> list[Problem]:
            rows, origin = find_rows(name, split, routes[split], data_dir, default_split)
            try:
                problems = convert(rows, split)
            except (AttributeError, KeyError, TypeError, ValueError) as error:
                if isinstance(error, ConfigError):
                    raise
                raise ConfigError(f"{name}: cannot read split {split!r} from {origin}: {error!r}") from error
            check_golds(name, split, origin, problems)
            return problems

        return load

    return BenchmarkSource(
        name,
        answer_type,
        {split: loader(split) for split in routes},
        default_split=default_split,
        split_aliases=split_aliases,
        routes=routes,
        convert=convert,
    )


def check_golds(name: str, split: str, origin: str, problems: Sequence[Problem]) -> None:
    """Refuse a problem whose gold reads as a missing value: ``str(None)`` or a NaN turned into text.

    A benchmark's golds are numbers, option labels or yes/no, never these words, and a gold "None"
    would pay full reward for ``\\boxed{None}``.

    Raises:
        ConfigError: Naming the problem, its position, the split and the file it came from.
    """
    for position, problem in enumerate(problems):
        if problem.answer.strip().casefold() in _MISSING_GOLDS:
            raise ConfigError(
                f"{name}: problem {problem.id!r} (position {position} of split {split!r}, from {origin}) "
                f"has no gold answer: it reads {problem.answer!r}, a missing or non-finite value"
            )


def hub_parts(repo: str | None, config: str | None, *splits: str) -> tuple[HubPart, ...]:
    """Hub parts for one repo (none when ``repo`` is None, which switches the hub route off)."""
    return () if repo is None else tuple(HubPart(repo, config, split) for split in splits)


def first_present(row: Row, *keys: str) -> Any:
    """The value of the first key of ``keys`` that ``row`` has with a value other than None/""."""
    for key in keys:
        value = row.get(key)
        if value is not None and value != "":
            return value
    return None


def clean_text(text: str) -> str:
    """Outer whitespace removed and Windows line ends (kept inside quoted CSV fields) made ``"\\n"``."""
    return text.replace("\r\n", "\n").strip()


def row_id(row: Row, prefix: str, split: str, index: int, *keys: str) -> str:
    """The row's own id (first of ``keys`` present), else ``"<prefix>-<split>-<index>"``."""
    found = first_present(row, *keys)
    return str(found) if found is not None else f"{prefix}-{split}-{index}"


def check_columns(name: str, rows: list[Row], layouts: Mapping[str, Sequence[str]]) -> str:
    """The name of the first layout whose required columns the rows have.

    Raises:
        ConfigError: No layout matches; the message lists the columns found and the layouts accepted.
    """
    if not rows:
        raise ConfigError(f"{name}: the data has no rows")
    columns = set(rows[0])
    for layout, required in layouts.items():
        if columns.issuperset(required):
            return layout
    accepted = "; ".join(f"{layout}: {', '.join(required)}" for layout, required in layouts.items())
    raise ConfigError(
        f"{name}: rows have columns {sorted(columns)}, which match no known layout ({accepted})"
    )
