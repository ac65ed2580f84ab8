"""reasoning-gym's tasks as reasongym environments: ``reasoning_gym/<task>-v0``, one per task.

The catalog rows are built from :mod:`reasongym.envs.rgym.table` alone, so listing them imports
neither reasoning-gym nor any of its tasks; making one imports reasoning-gym (``pip install
'reasongym[reasoning-gym]'``). Problems come from :mod:`~reasongym.envs.rgym.source` (seeded, with
disjoint train / validation / test streams and curriculum levels) and are graded as
:mod:`~reasongym.envs.rgym.grading` says, by the task's own scorer or by reasongym's verifiers.
"""

from __future__ import annotations

from reasongym.envs.catalog import CatalogEntry
from reasongym.envs.rgym.table import REASONING_GYM_VERSION, TASKS

NAMESPACE = "reasoning_gym"

REASONING_GYM_ENVS: tuple[CatalogEntry, ...] = tuple(
    CatalogEntry(
        id=f"{NAMESPACE}/{name}-v0",
        source="reasongym.envs.rgym.source:source",
        description=f"{description} ({category}; graded by {'its own scorer' if grader == 'task' else grader}).",
        answer_type=grader,  # a problem's answer type names its grader (`GRADERS`)
        size="procedural",
        source_kwargs={"task": name},
        entry_point="reasongym.envs.rgym.grading:ReasoningGymEnv",
        origin=f"reasoning-gym {REASONING_GYM_VERSION}",
    )
    for name, (category, grader, _levels, description) in TASKS.items()
)
