"""The environment registry: ids, Gymnasium registration and ``make``.

Every id is registered twice, on purpose: with Gymnasium (so ``gymnasium.make`` and its wrappers work)
and in a metadata table here (description, answer type, size for ``reasongym list``). User data and
generator functions are kept in a table of source factories keyed by id, so Gymnasium's spec only ever
holds plain strings and small dicts (``gymnasium.make`` deep-copies its kwargs on every call).

Your own rows and generator functions are registered through :mod:`reasongym.envs.user_envs`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import gymnasium

from reasongym.envs.catalog import CatalogEntry
from reasongym.envs.problem import answer_types
from reasongym.envs.sources import ProblemSource
from reasongym.errors import ConfigError, UnknownEnvNameError, UnknownEnvVersionError

ID_PATTERN = re.compile(r"^(?P<namespace>[A-Za-z][\w.]*)/(?P<name>[A-Za-z0-9][\w.-]*?)-v(?P<version>\d+)$")
DEFAULT_ENTRY_POINT = "reasongym.envs.core:ReasoningEnv"
# Gymnasium spec kwargs for user-registered sources point here; the factory table below does the rest.
_USER_SOURCE = "reasongym.envs.registration:user_source"

_ENTRIES: dict[str, CatalogEntry] = {}
_USER_SOURCES: dict[str, Callable[..., ProblemSource]] = {}
# Run before every lookup (make, spec, list_envs): the plugin loader (reasongym.envs.plugins) puts itself here,
# so installed plugins register on first use rather than on `import reasongym`.
LOOKUP_HOOKS: list[Callable[[], None]] = []


def parse_id(env_id: str) -> tuple[str, str, int]:
    """Split ``"namespace/Name-vN"`` into its parts.

    Raises:
        ConfigError: The id does not follow the grammar.
    """
    match = ID_PATTERN.match(env_id) if isinstance(env_id, str) else None
    if match is None:
        raise ConfigError(
            f"malformed environment id {env_id!r}: ids look like 'namespace/Name-vN', e.g. 'reasongym/GSM8K-v0' "
            "(letters, digits, '_', '.', '-'; N is the version number)"
        )
    return match["namespace"], match["name"], int(match["version"])


def register(
    id: str,
    source: str | ProblemSource | Callable[..., ProblemSource],
    *,
    description: str,
    answer_type: str,
    size: str = "procedural",
    source_kwargs: Mapping[str, Any] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    entry_point: str = DEFAULT_ENTRY_POINT,
    override: bool = False,
) -> None:
    """Register an environment id with Gymnasium and in reasongym's table.

    Args:
        id: ``"namespace/Name-vN"``.
        source: ``"module:function"`` returning a ProblemSource (resolved only when the env is made), a
            ProblemSource, or a function returning one.
        description: One line for ``list_envs``.
        answer_type: The verifier kind of the problems, one of ``ANSWER_TYPES``.
        size: ``"procedural"`` or split sizes in words.
        source_kwargs: Keyword arguments for the source function.
        env_kwargs: Keyword arguments for the environment (``ReasoningEnvConfig`` fields).
        entry_point: The environment class, ``"module:Class"``.
        override: Replace an id that is already registered.

    Raises:
        ConfigError: Malformed id, unknown answer type, or the id exists and ``override`` is False.

    Example:
        >>> register("me/Arith-v0", "reasongym.envs.procedural.arithmetic:source",
        ...          description="two-number sums", answer_type="math", override=True)
    """
    parse_id(id)
    if answer_type not in answer_types():
        raise ConfigError(
            f"answer_type {answer_type!r} is not one of {list(answer_types())}{_suggest(answer_type, answer_types())}"
        )
    if not override and (id in _ENTRIES or id in gymnasium.registry):
        raise ConfigError(f"environment id {id!r} is already registered; pass override=True to replace it")
    if not isinstance(source, str):
        built = source
        _USER_SOURCES[id] = (
            source if callable(source) and not isinstance(source, ProblemSource) else lambda: built
        )
        source, source_kwargs = _USER_SOURCE, {"env_id": id, **dict(source_kwargs or {})}
    else:
        _USER_SOURCES.pop(id, None)
    entry = CatalogEntry(
        id=id,
        source=source,
        description=description,
        answer_type=answer_type,
        size=size,
        source_kwargs=dict(source_kwargs or {}),
        env_kwargs=dict(env_kwargs or {}),
        entry_point=entry_point,
        origin="user",
    )
    register_entry(entry, override=True)


def register_entry(entry: CatalogEntry, *, override: bool = False) -> None:
    """Register one :class:`CatalogEntry` (a row of the built-in table) with Gymnasium and here."""
    parse_id(entry.id)
    if not override and entry.id in _ENTRIES:
        raise ConfigError(
            f"environment id {entry.id!r} is already registered; pass override=True to replace it"
        )
    # Deleting first keeps Gymnasium from logging an "Overriding environment" warning on purpose-made overrides.
    gymnasium.registry.pop(entry.id, None)
    gymnasium.register(
        id=entry.id,
        entry_point=entry.entry_point,
        kwargs={"source": entry.source, "source_kwargs": dict(entry.source_kwargs), **entry.env_kwargs},
    )
    _ENTRIES[entry.id] = entry


def unregister(env_id: str) -> None:
    """Remove ``env_id`` from reasongym's table and Gymnasium's registry."""
    _ENTRIES.pop(env_id, None)
    _USER_SOURCES.pop(env_id, None)
    gymnasium.registry.pop(env_id, None)


class RegistrySnapshot(NamedTuple):
    """Copies of the three tables an id lives in: reasongym's entries, the user sources, Gymnasium's specs."""

    entries: dict[str, CatalogEntry]
    user_sources: dict[str, Callable[..., ProblemSource]]
    gymnasium_specs: dict[str, Any]


def registry_snapshot() -> RegistrySnapshot:
    """The registry as it is now (`restore_registry` puts it back; `reasongym.envs.plugins` does so)."""
    return RegistrySnapshot(dict(_ENTRIES), dict(_USER_SOURCES), dict(gymnasium.registry))


def changed_since(before: RegistrySnapshot) -> list[str]:
    """The ids of ``before`` that are gone now, or registered differently."""
    now = registry_snapshot()
    changed = {key for key, spec in before.gymnasium_specs.items() if now.gymnasium_specs.get(key) != spec}
    changed |= {key for key, entry in before.entries.items() if now.entries.get(key) != entry}
    changed |= {key for key, made in before.user_sources.items() if now.user_sources.get(key) is not made}
    return sorted(changed)


def restore_registry(snapshot: RegistrySnapshot) -> None:
    """Put the registry back as ``snapshot`` found it: ids added since removed, ids changed since as they were."""
    for table, saved in zip((_ENTRIES, _USER_SOURCES, gymnasium.registry), snapshot, strict=True):
        table.clear()
        table.update(saved)


def _run_lookup_hooks() -> None:
    for hook in LOOKUP_HOOKS:
        hook()


def user_source(env_id: str, **kwargs: Any) -> ProblemSource:
    """The ProblemSource of a user-registered id (what Gymnasium's spec for that id points at)."""
    if env_id not in _USER_SOURCES:
        raise UnknownEnvNameError(
            f"no user-registered source for {env_id!r}; register it again in this process"
        )
    return _USER_SOURCES[env_id](**kwargs)


def _suggest(word: str, candidates: Any) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _nearest_id(env_id: str) -> str | None:
    """The registered id whose name is nearest to ``env_id``'s, or None when no name is close.

    Names are compared without their namespace and version, ignoring case: every id ends in ``-vN`` and many
    share a namespace, and comparing whole ids made far names look close (``composite-v0`` -> ``lcm-v0``).
    """
    names: dict[str, str] = {}
    for known in sorted(_ENTRIES):
        names.setdefault(known.rpartition("-v")[0].partition("/")[2].lower(), known)
    asked = env_id.rpartition("-v")[0] if re.search(r"-v\d+$", env_id) else env_id
    close = difflib.get_close_matches(asked.rpartition("/")[2].lower(), list(names), n=1, cutoff=0.75)
    return names[close[0]] if close else None


def _resolve_id(env_id: str) -> str:
    """The registered id that ``env_id`` names, or an error that says what to use instead."""
    if not isinstance(env_id, str):
        raise UnknownEnvNameError(f"environment id must be a str, got {type(env_id).__name__}")
    _run_lookup_hooks()
    if env_id in _ENTRIES:
        return env_id
    stems: dict[str, list[int]] = {}
    for known in _ENTRIES:
        stem, _, version = known.rpartition("-v")
        stems.setdefault(stem, []).append(int(version))
    stem, _, version = env_id.rpartition("-v")
    if stem in stems and version.isdigit():
        listed = ", ".join(f"{stem}-v{v}" for v in sorted(stems[stem]))
        raise UnknownEnvVersionError(
            f"environment {stem!r} has no version v{version}; registered versions: {listed}"
        )
    if env_id in stems:  # an id without its version means the latest version
        return f"{env_id}-v{max(stems[env_id])}"
    nearest = _nearest_id(env_id)
    hint = f"; did you mean {nearest!r}?" if nearest else ""
    raise UnknownEnvNameError(
        f"no environment named {env_id!r}{hint} (`reasongym list` or reasongym.list_envs() lists the registered ids)"
    )


def make(id: str, **kwargs: Any) -> gymnasium.Env:
    """Make a registered environment through ``gymnasium.make`` (so its wrappers apply).

    Args:
        id: A registered id, e.g. ``"reasongym/GSM8K-v0"``; without ``-vN`` the latest version; or
            ``"openenv://HOST:PORT"``, an environment served over OpenEnv (``reasongym.envs.remote``).
        **kwargs: Environment options (``ReasoningEnvConfig`` fields, ``render_mode``), Gymnasium's
            ``make`` options, and ``source_kwargs``, which are merged into the registered ones.

    Returns:
        The wrapped environment; ``env.unwrapped`` is the :class:`~reasongym.envs.core.ReasoningEnv`.

    Raises:
        UnknownEnvNameError: No such id (the message suggests the nearest one).
        UnknownEnvVersionError: The name exists in other versions (the message lists them).

    Example:
        >>> env = make("reasongym/GSM8K-v0", split="test")  # doctest: +SKIP
        >>> remote = make("openenv://127.0.0.1:8000")  # a served environment  # doctest: +SKIP
    """
    if isinstance(id, str) and id.startswith("openenv://"):
        from reasongym.envs.remote import RemoteEnv

        return RemoteEnv(id, **kwargs)  # `RemoteEnv`'s options: action_field, timeout_s, ...
    env_id = _resolve_id(id)
    if "source_kwargs" in kwargs:
        kwargs["source_kwargs"] = {**_ENTRIES[env_id].source_kwargs, **dict(kwargs["source_kwargs"] or {})}
    return gymnasium.make(env_id, **kwargs)


def spec(id: str) -> CatalogEntry:
    """The registered row of ``id`` (description, answer type, size, source, kwargs).

    Raises:
        UnknownEnvNameError: No such id.
        UnknownEnvVersionError: The name exists in other versions.
    """
    return _ENTRIES[_resolve_id(id)]


def list_envs() -> list[CatalogEntry]:
    """Every registered environment, sorted by id (installed plugins' included)."""
    _run_lookup_hooks()
    return [_ENTRIES[key] for key in sorted(_ENTRIES)]
