"""What ``reasongym train ALGO --run-dir FOLDER`` may resume, and what the folder brings: its saved configs
(``config.json``) and run keys (``run.json``), the base the config file and flags are laid on.

A folder is refused when resuming it would not continue the run it holds: not a folder, not a run, a run
without its ``config.json`` (it would train on defaults), a ``config.json`` that is not a reasongym run
config (a model folder's: training would overwrite it and its tokenizer files), an empty one or one without
a section of the algorithm (the run would continue on preset values, unannounced), a run with trained steps
but no checkpoint (its steps would be logged twice), or a run of another algorithm. A section that lacks
fields (written by an older reasongym) is resumed, and every field that falls back is named.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from reasongym.cli.args import UsageError
from reasongym.errors import ConfigError


def resume_base(algo: str, folder: Path) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The saved configs (by section), the ``run.json`` keys of the run folder being resumed, and the
    ``section.field`` names its ``config.json`` lacks (they fall back to the preset, file and flags)."""
    run = check_resumable(folder)
    saved_job = run.read_run_info()
    if saved_job.get("algo") not in (None, algo):
        raise UsageError(
            f"--run-dir {str(folder)!r} is a {saved_job['algo']} run; resume it with "
            f"`reasongym train {saved_job['algo']} --run-dir ...`, not {algo}"
        )
    sections, missing = saved_configs(run.config_path, algo)
    return sections, saved_job, missing


def check_resumable(folder: Path) -> Any:
    """The run folder ``--run-dir`` names, if it can be resumed as it is.

    Raises:
        UsageError: Not a folder, not a run folder, a run without its ``config.json`` (resuming would train
            on defaults), or a run with trained steps but no checkpoint (a restart would log them twice).
    """
    from reasongym.policy.checkpoints import LATEST_RUN, latest_checkpoint
    from reasongym.runs.folder import RunDir
    from reasongym.runs.metrics import read_metrics

    new_run = "to start a new run use --output-dir (the parent folder of the new run folder)"
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"--run-dir {str(folder)!r} is a file, not a run folder; --run-dir resumes a run folder"
        )
    if not folder.is_dir():
        raise UsageError(
            f"--run-dir {str(folder)!r} is not an existing folder: {new_run}; --run-dir resumes an existing "
            "run folder"
        )
    run = RunDir(folder)
    newest = folder / LATEST_RUN
    if not run.is_run() and newest.is_dir() and RunDir(newest).is_run():
        raise UsageError(
            f"--run-dir {str(folder)!r} is a folder of runs, not a run folder; to resume its newest run: "
            f"--run-dir {str(newest.resolve())}"
        )
    if not run.is_run():
        raise UsageError(
            f"--run-dir {str(folder)!r} is not a run folder (it has no run.json, metrics.jsonl or "
            f"checkpoints/): {new_run}; --run-dir resumes a run folder"
        )
    if not run.config_path.is_file():
        raise UsageError(
            f"--run-dir {str(folder)!r} has no config.json, so resuming would train with default settings "
            f"instead of the run's own; restore its config.json, or {new_run}"
        )
    foreign = run.foreign_config()
    if foreign is not None:
        raise UsageError(
            f"--run-dir {str(folder)!r} is not a run folder: {foreign}; resuming would overwrite it and the "
            f"tokenizer files beside it; {new_run}"
        )
    steps = [r.get("step", 0) for r in read_metrics(run.metrics_path)] if run.metrics_path.is_file() else []
    if latest_checkpoint(run, warn=False) is None and max(steps, default=0) > 0:  # the trainer warns
        raise UsageError(
            f"--run-dir {str(folder)!r} has trained steps (metrics.jsonl up to step {max(steps)}) but no checkpoint "
            f"under checkpoints/ to resume from: restarting at step 0 would log those steps again; {new_run}, or "
            "move metrics.jsonl away to train this folder again from step 0"
        )
    return run


def saved_configs(path: Path, algo: str) -> tuple[dict[str, Any], list[str]]:
    """The configs a run folder was trained with, by section, and the ``section.field`` names it lacks;
    fields this version lacks are dropped (with a warning).

    Raises:
        UsageError: ``config.json`` is not a JSON object of the algorithm's sections: empty, a model's, or
            without one of the sections (the run would continue on preset values without a word).
    """
    from reasongym.agents.algorithms import config_class
    from reasongym.agents.presets import SECTIONS

    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    restore = "restore the run's config.json (or start a new run with --output-dir)"
    if saved == {}:
        raise UsageError(
            f"{path} is not a reasongym run config (an empty object): resuming would train on preset values "
            f"instead of the run's own; {restore}"
        )
    absent = [s for s in SECTIONS[algo] if not isinstance(saved, dict) or not isinstance(saved.get(s), dict)]
    if absent:
        names = ", ".join(f"[{section}]" for section in absent)
        raise UsageError(
            f"{path} has no {names} section{'s' * (len(absent) > 1)}: resuming would train with preset values "
            f"there instead of the run's own; {restore}"
        )
    sections: dict[str, Any] = {}
    missing: list[str] = []
    for section in SECTIONS[algo]:
        values = saved[section]
        known = [item.name for item in dataclasses.fields(config_class(algo, section))]
        dropped = sorted(set(values) - set(known))
        if dropped:
            print(
                f"reasongym: warning: ignoring fields of {path} [{section}] that this version lacks: {dropped}",
                file=sys.stderr,
            )
        missing.extend(f"{section}.{name}" for name in known if name not in values)
        sections[section] = {key: value for key, value in values.items() if key in known}
    return sections, missing
