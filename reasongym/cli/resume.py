"""What ``reasongym train ALGO --run-dir FOLDER`` may resume, and what the folder brings: its saved configs
(``config.json``) and run keys (``run.json``), the base the config file and flags are laid on.

A folder is refused when resuming it would not continue the run it holds: not a folder, not a run, a run
without its ``config.json`` (it would train on defaults), a run with trained steps but no checkpoint (its
steps would be logged twice), or a run of another algorithm.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from reasongym.cli.args import UsageError
from reasongym.errors import ConfigError


def resume_base(algo: str, folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The saved configs (by section) and ``run.json`` keys of the run folder being resumed."""
    run = check_resumable(folder)
    saved_job = run.read_run_info()
    if saved_job.get("algo") not in (None, algo):
        raise UsageError(
            f"--run-dir {str(folder)!r} is a {saved_job['algo']} run; resume it with "
            f"`reasongym train {saved_job['algo']} --run-dir ...`, not {algo}"
        )
    return saved_configs(run.config_path, algo), saved_job


def check_resumable(folder: Path) -> Any:
    """The run folder ``--run-dir`` names, if it can be resumed as it is.

    Raises:
        UsageError: Not a folder, not a run folder, a run without its ``config.json`` (resuming would train
            on defaults), or a run with trained steps but no checkpoint (a restart would log them twice).
    """
    from reasongym.policy.checkpoints import latest_checkpoint
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
    steps = [r.get("step", 0) for r in read_metrics(run.metrics_path)] if run.metrics_path.is_file() else []
    if latest_checkpoint(run) is None and max(steps, default=0) > 0:
        raise UsageError(
            f"--run-dir {str(folder)!r} has trained steps (metrics.jsonl up to step {max(steps)}) but no checkpoint "
            f"under checkpoints/ to resume from: restarting at step 0 would log those steps again; {new_run}, or "
            "move metrics.jsonl away to train this folder again from step 0"
        )
    return run


def saved_configs(path: Path, algo: str) -> dict[str, Any]:
    """The configs a run folder was trained with, by section; fields this version lacks are dropped."""
    from reasongym.agents.algorithms import config_class
    from reasongym.agents.presets import SECTIONS

    if not path.is_file():
        return {}
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    sections = {}
    for section in SECTIONS[algo]:
        values = saved.get(section) if isinstance(saved, dict) else None
        if not isinstance(values, dict):
            continue
        known = {item.name for item in dataclasses.fields(config_class(algo, section))}
        dropped = sorted(set(values) - known)
        if dropped:
            print(f"reasongym: warning: ignoring fields of {path} [{section}] that this version lacks: {dropped}",
                  file=sys.stderr)  # fmt: skip
        sections[section] = {key: value for key, value in values.items() if key in known}
    return sections
