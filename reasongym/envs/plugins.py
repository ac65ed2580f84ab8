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
ids a plugin registers are listed with the package that provides them (``CatalogEntry.origin``).
``gymnasium.make`` alone does not load plugins: call ``load_plugins()`` (or any lookup) first.

A plugin adds ids; it does not change the ones it found. One that replaces or removes an id that was there
before it ran (a built-in, another plugin's, the user's), or adds one in a built-in namespace
(``reasongym/``, ``reasoning_gym/``), is refused unless the user names it in the environment variable
:data:`OVERRIDES` (``REASONGYM_PLUGIN_OVERRIDES=acme_envs``, entry-point names separated by commas; a variable
because plugins load before any command line or code of the user's could say so). A plugin that fails in
any way (an exception on import or while registering, ``SystemExit`` from an ``argparse`` or ``sys.exit`` in
it, a refused replacement; only ``KeyboardInterrupt`` passes) is a ``RuntimeWarning`` naming it and its
package, and the registry is put back exactly as the plugin found it. What a plugin prints while it loads
goes to stderr, so that ``reasongym list --json`` stays JSON. One broken package never breaks reasongym;
these rules keep a plugin's mistakes from changing other ids, they are no sandbox for a package one installs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import warnings
from importlib import metadata
from typing import Any

from reasongym.envs.registration import (
    LOOKUP_HOOKS,
    RegistrySnapshot,
    changed_since,
    list_envs,
    parse_id,
    register_entry,
    registry_snapshot,
    restore_registry,
)

GROUP = "reasongym.envs"
"""The entry-point group a plugin package declares its registration function under."""
OVERRIDES = "REASONGYM_PLUGIN_OVERRIDES"
"""The environment variable naming the plugins (entry-point names, comma-separated) that may replace ids."""

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
    """Run one plugin's registration function; tag the ids it added or (allowed) replaced with its package,
    or put the registry back as it was."""
    before = registry_snapshot()
    who = provider(entry_point)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # `reasongym list --json` stays JSON
            register_envs = entry_point.load()
            if not callable(register_envs):
                raise TypeError(
                    f"{entry_point.value} is a {type(register_envs).__name__}, not a function that registers "
                    "environments"
                )
            register_envs()
        replaced = _check_changes(entry_point.name, before)
    except KeyboardInterrupt:
        raise
    # Any failure of third-party code (ImportError, SyntaxError, argparse's SystemExit, a bad or refused
    # registration) must stay a warning: `import reasongym` and every other environment keep working.
    except BaseException as exc:  # noqa: BLE001 - see above
        restore_registry(before)
        message = _one_line(exc)
        warnings.warn(
            f"reasongym plugin {entry_point.name!r} from {who} failed to load and is skipped ({message})",
            RuntimeWarning,
            stacklevel=2,
        )
        return f"failed: {message}"
    added = [entry for entry in list_envs() if entry.id not in before.entries]
    for entry in added + [entry for entry in list_envs() if entry.id in replaced]:
        register_entry(dataclasses.replace(entry, origin=f"plugin {who}"), override=True)
    return f"ok: {len(added)} ids" + (f", replaced {', '.join(replaced)}" if replaced else "")


def _one_line(exc: BaseException) -> str:
    """The exception's type and the first line of its message that has text, cut to 300 characters."""
    detail = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    if isinstance(exc, PluginRefused):
        return detail
    return (f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)[:300]


class PluginRefused(Exception):
    """A plugin changed ids it did not add, without the user's leave."""


def _check_changes(name: str, before: RegistrySnapshot) -> list[str]:
    """The ids the plugin ``name`` replaced (allowed by :data:`OVERRIDES`); raise PluginRefused if it replaced,
    removed or took a built-in namespace without leave."""
    changed = changed_since(before)
    builtin = {
        parse_id(e.id)[0] for e in before.entries.values() if e.origin.split(" ")[0] not in ("user", "plugin")
    }
    claimed = [
        key
        for key in registry_snapshot().entries
        if key not in before.entries and parse_id(key)[0] in builtin
    ]
    if name in {word.strip() for word in os.environ.get(OVERRIDES, "").split(",")}:
        return changed
    if changed:
        raise PluginRefused(
            f"it replaced {', '.join(changed)}, an id it did not add (set {OVERRIDES}={name} to allow it)"
        )
    if claimed:
        raise PluginRefused(
            f"it added {', '.join(claimed)}, in a built-in namespace (set {OVERRIDES}={name} to allow it)"
        )
    return changed


def install() -> None:
    """Make every registry lookup load the installed plugins first (done once, by ``reasongym.envs``)."""
    if load_plugins not in LOOKUP_HOOKS:
        LOOKUP_HOOKS.append(load_plugins)
