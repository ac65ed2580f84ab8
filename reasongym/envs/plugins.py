"""Environments from other packages: the ``reasongym.envs`` entry-point group.

A package declares a function that registers its environments::

    # the plugin's pyproject.toml
    [project.entry-points."reasongym.envs"]
    acme = "acme_envs:register_envs"

    # acme_envs/__init__.py
    import reasongym

    def register_envs() -> None:
        reasongym.register("acme/Sums-v0", "acme_envs.sums:source", description="...", answer_type="integer")

Plugins load lazily: ``import reasongym`` reads no entry point; the first lookup of the registry
(``reasongym.make``, ``spec``, ``list_envs``, ``reasongym list``) loads every installed plugin once. The
ids a plugin registers are listed with the package that provides them (``CatalogEntry.origin``). A plugin
that fails, on import or while registering, is a ``RuntimeWarning`` naming it and its package, and the
ids it had registered before failing are taken back: one broken package never breaks reasongym.
``gymnasium.make`` alone does not load plugins: call ``load_plugins()`` (or any lookup) first.
"""

from __future__ import annotations

import dataclasses
import warnings
from importlib import metadata
from typing import Any

from reasongym.envs.registration import LOOKUP_HOOKS, list_envs, register_entry, unregister

GROUP = "reasongym.envs"
"""The entry-point group a plugin package declares its registration function under."""

_RESULTS: dict[str, str] = {}  # entry-point name -> "ok: <n> ids" or "failed: <error>"
_STARTED: list[bool] = []  # set before the first plugin runs: a plugin that looks up the registry loads none


def provider(entry_point: Any) -> str:
    """``"<distribution> <version>"`` of the package that declares ``entry_point``."""
    dist = getattr(entry_point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown package"


def load_plugins() -> dict[str, str]:
    """Load every installed plugin once; later calls return what the first one did.

    Returns:
        Entry-point name -> ``"ok: <n> ids"`` or ``"failed: <error>"``.
    """
    if not _STARTED:
        _STARTED.append(True)
        for entry_point in metadata.entry_points(group=GROUP):
            _RESULTS[entry_point.name] = _load_one(entry_point)
    return dict(_RESULTS)


def _load_one(entry_point: metadata.EntryPoint) -> str:
    """Run one plugin's registration function; tag the ids it added with its package, or undo them."""
    before = {entry.id for entry in list_envs()}
    who = provider(entry_point)
    try:
        register_envs = entry_point.load()
        if not callable(register_envs):
            raise TypeError(
                f"{entry_point.value} is a {type(register_envs).__name__}, not a function that registers "
                "environments"
            )
        register_envs()
    # Any failure of third-party code (ImportError, SyntaxError, a bad registration) must stay a warning:
    # `import reasongym` and every other environment keep working.
    except Exception as exc:
        for entry in list_envs():
            if entry.id not in before:
                unregister(entry.id)
        message = f"{type(exc).__name__}: {exc}".splitlines()[0]
        warnings.warn(
            f"reasongym plugin {entry_point.name!r} from {who} failed to load and is skipped ({message})",
            RuntimeWarning,
            stacklevel=2,
        )
        return f"failed: {message}"
    added = [entry for entry in list_envs() if entry.id not in before]
    for entry in added:
        register_entry(dataclasses.replace(entry, origin=f"plugin {who}"), override=True)
    return f"ok: {len(added)} ids"


def install() -> None:
    """Make every registry lookup load the installed plugins first (done once, by ``reasongym.envs``)."""
    if load_plugins not in LOOKUP_HOOKS:
        LOOKUP_HOOKS.append(load_plugins)
