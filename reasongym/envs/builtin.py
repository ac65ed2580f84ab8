"""The one table of built-in environments: benchmark rows, procedural rows, then reasoning-gym's tasks.

Both packages hold only plain :class:`~reasongym.envs.catalog.CatalogEntry` tuples, so importing this
module reads no data and imports no heavy library; each source is resolved when its id is made.
"""

from __future__ import annotations

from reasongym.envs.benchmarks import BENCHMARK_ENVS
from reasongym.envs.catalog import CatalogEntry
from reasongym.envs.multiturn_table import MULTITURN_ENVS, RETRY_ENVS
from reasongym.envs.procedural import PROCEDURAL_ENVS
from reasongym.envs.registration import list_envs, register_entry
from reasongym.envs.rgym import REASONING_GYM_ENVS

BUILTIN: tuple[CatalogEntry, ...] = (
    *BENCHMARK_ENVS,
    *PROCEDURAL_ENVS,
    *MULTITURN_ENVS,
    *RETRY_ENVS,
    *REASONING_GYM_ENVS,
)


def register_builtins() -> None:
    """Register every built-in id; ids already registered with the same row are left as they are."""
    current = {entry.id: entry for entry in list_envs()}
    for entry in BUILTIN:
        if current.get(entry.id) != entry:
            register_entry(entry, override=True)
