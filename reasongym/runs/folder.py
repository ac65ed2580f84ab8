"""Run folders and their sample logs.

A run folder ``<root>/<algo>-<env>-s<seed>-<timestamp>/`` holds ``config.json`` (every config of the run,
by section), ``metrics.jsonl``, ``samples.jsonl``, ``run.json`` (what a resume needs besides the config:
algorithm, model, environment, preset) and ``checkpoints/`` (see `reasongym.policy.checkpoints`). Training
writes run folders; ``reasongym eval`` and `reasongym.policy.loading.load_policy` read them. A trainer holds the
folder's lock (`RunDir.lock`) while it writes, so a second trainer on the same folder fails at once; a
folder with a ``config.json`` that is not a run's (a model folder) is refused rather than overwritten.

``<root>/latest`` links to the newest run started in ``<root>`` (`RunDir.create`), so ``runs/grpo/latest``
names the last GRPO run whatever its timestamp, and ``runs/grpo`` itself loads as that run
(`reasongym.policy.checkpoints.follow_latest`). A start that fails before anything is saved removes its
folder again (`RunDir.discard`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import warnings
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError
from reasongym.policy.checkpoints import CHECKPOINTS_DIR, LATEST_RUN, latest_checkpoint
from reasongym.runs.locks import RUN_LOCK_FILE, is_held, run_folder_lock
from reasongym.runs.metrics import (
    CONFIG_FILE,
    METRICS_FILE,
    dumps_strict,
    set_aside,
    truncate_after_step,
    write_json_atomic,
)

SAMPLES_FILE = "samples.jsonl"
RUN_INFO_FILE = "run.json"


def check_root(root: str | os.PathLike[str]) -> None:
    """Raise ConfigError unless run folders can be made in ``root`` (``--output-dir``): the folder, or the
    nearest one above it that exists (``root`` is created), must be a folder this process may write into.
    Cheap, so a command checks it before it loads a model."""
    path = Path(root).absolute()
    existing = next(folder for folder in (path, *path.parents) if folder.exists())
    if not existing.is_dir():
        raise ConfigError(f"cannot create a run folder in {str(root)!r}: {str(existing)!r} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(
            f"cannot create a run folder in {str(root)!r}: {str(existing)!r} is read-only to this user; "
            "choose another --output-dir"
        )


@dataclass(frozen=True)
class RunDir:
    """A run folder; create a new one with ``RunDir.create`` or reopen one with ``RunDir.open``."""

    path: Path
    """The folder itself."""

    @classmethod
    def create(
        cls, root: str | os.PathLike[str], *, algo: str, env: str, seed: int, timestamp: str | None = None
    ) -> RunDir:
        """Make a fresh folder ``<root>/<algo>-<env>-s<seed>-<timestamp>`` (``-2``, ``-3`` on a clash).

        Args:
            root: Parent folder of all runs; created if missing.
            algo: Algorithm name, e.g. ``"grpo"``.
            env: Environment id; characters other than letters, digits, ``.``, ``_`` and ``-`` become ``_``.
            seed: The run's seed.
            timestamp: Defaults to the local time as ``YYYYmmdd-HHMMSS``.

        Returns:
            The new, empty run folder.
        """
        stamp = timestamp or time.strftime("%Y%m%d-%H%M%S")
        base = "-".join((_safe_name(algo), _safe_name(env), f"s{seed}", stamp))
        check_root(root)
        for attempt in range(1, 1000):
            path = Path(root) / (base if attempt == 1 else f"{base}-{attempt}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.mkdir()  # atomic: two runs started in the same second get different folders
            except FileExistsError:
                continue
            except OSError as exc:  # a read-only file system, /proc, /sys: what the check cannot foresee
                raise ConfigError(f"cannot create a run folder in {str(root)!r}: {exc.strerror}") from exc
            point_latest(Path(root), path)
            return cls(path)
        raise ConfigError(f"root={str(root)!r} already holds 999 runs named {base!r}; choose another root")

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> RunDir:
        """Reopen an existing run folder (to resume it), or create it when ``create`` is set.

        Raises:
            ConfigError: The folder does not exist and ``create`` is False; ``path`` is a file; or the folder
                holds a ``config.json`` but none of a run's files (training would overwrite it).
        """
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise ConfigError(f"run_dir={str(path)!r} is a file, not a run folder; pass a folder")
        if create:
            path.mkdir(parents=True, exist_ok=True)
        if not path.is_dir():
            raise ConfigError(
                f"run_dir={str(path)!r} does not exist; pass an existing run folder or create=True"
            )
        run = cls(path)
        if run.config_path.is_file() and not run.is_run():  # e.g. a model folder: its config.json is not ours
            raise ConfigError(
                f"run_dir={str(path)!r} is not a run folder: it holds a config.json but none of a run's files "
                f"({METRICS_FILE}, {RUN_INFO_FILE}, {CHECKPOINTS_DIR}/), and training would overwrite that "
                "config.json; pass a new or empty folder to start a run there, or a run folder to resume"
            )
        foreign = run.foreign_config()
        if foreign is not None:  # a model folder that also holds a metrics.jsonl or a checkpoints/ folder
            raise ConfigError(
                f"run_dir={str(path)!r}: {foreign}, and training would overwrite it; pass a new or empty "
                "folder to start a run there, or a run folder to resume"
            )
        return run

    def discard(self) -> None:
        """Remove this run folder, made by a start that failed before anything was saved, and point the
        ``latest`` link of its parent back at the newest run left there (or remove the link)."""
        shutil.rmtree(self.path, ignore_errors=True)
        root = self.path.parent
        link = root / LATEST_RUN
        if link.is_symlink() and Path(os.readlink(link)).name == self.path.name:
            runs = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and RunDir(p).is_run()]
            point_latest(root, max(runs, key=lambda p: p.stat().st_mtime) if runs else None)

    def foreign_config(self) -> str | None:
        """Why ``config.json`` is not a reasongym run config (a model's, say), or None when it is one or is
        absent. A run config is a JSON object with the trainer's ``"algo"`` name or a ``"run"`` section (or
        an empty object, which holds nothing to lose)."""
        if not self.config_path.is_file():
            return None
        try:
            saved = json.loads(self.config_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            return f"{self.config_path} is not a reasongym run config (not valid JSON: {exc})"
        if not isinstance(saved, dict):
            return f"{self.config_path} is not a reasongym run config (a JSON {type(saved).__name__}, not an object)"
        if not saved or isinstance(saved.get("algo"), str) or isinstance(saved.get("run"), dict):
            return None
        keys = ", ".join(repr(key) for key in list(saved)[:5]) + (", ..." if len(saved) > 5 else "")
        return f"{self.config_path} is not a reasongym run config (its keys: {keys}: a model's config.json?)"

    def is_run(self) -> bool:
        """Whether the folder holds a run's files (``metrics.jsonl``, ``run.json`` or ``checkpoints/``)."""
        return self.metrics_path.is_file() or self.run_info_path.is_file() or self.checkpoints_path.is_dir()

    def lock(self) -> AbstractContextManager[None]:
        """Hold the run folder's lock (re-entrant in one process); a second process gets ResourceBusyError."""
        return run_folder_lock(self.path)

    def locked_here(self) -> bool:
        """Whether this process holds the run folder's lock."""
        return is_held(self.path / RUN_LOCK_FILE)

    @property
    def config_path(self) -> Path:
        """``config.json``, written by ``MetricsWriter``."""
        return self.path / CONFIG_FILE

    @property
    def run_info_path(self) -> Path:
        """``run.json``: the algorithm, model and environment the run was started with."""
        return self.path / RUN_INFO_FILE

    def write_run_info(self, info: Mapping[str, Any]) -> None:
        """Write ``run.json`` atomically (strict JSON; a value JSON cannot hold is stored as its string)."""
        write_json_atomic(self.run_info_path, dict(info))

    def write_json(self, name: str, payload: Mapping[str, Any]) -> Path:
        """Write ``payload`` as the JSON file ``name`` inside the folder, atomically (a run's own summary, such
        as the demo's ``demo.json``); its path."""
        path = self.path / name
        write_json_atomic(path, dict(payload))
        return path

    def read_run_info(self) -> dict[str, Any]:
        """The contents of ``run.json``, or ``{}`` for a run written before it existed.

        Raises:
            ConfigError: ``run.json`` is not a JSON object.
        """
        if not self.run_info_path.is_file():
            return {}
        try:
            info = json.loads(self.run_info_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{self.run_info_path} is not valid JSON: {exc}") from exc
        if not isinstance(info, dict):
            raise ConfigError(f"{self.run_info_path} must hold a JSON object, not {type(info).__name__}")
        return info

    @property
    def metrics_path(self) -> Path:
        """``metrics.jsonl``, written by ``MetricsWriter``."""
        return self.path / METRICS_FILE

    @property
    def samples_path(self) -> Path:
        """``samples.jsonl``, written by ``SamplesWriter``."""
        return self.path / SAMPLES_FILE

    @property
    def checkpoints_path(self) -> Path:
        """Folder of the ``step-NNNNNN`` checkpoints and the ``latest`` pointer."""
        return self.path / CHECKPOINTS_DIR

    def latest_checkpoint(self) -> Path | None:
        """The newest complete checkpoint of this run, or None; see ``latest_checkpoint``."""
        return latest_checkpoint(self)


class SamplesWriter:
    """Appends sampled completions to ``samples.jsonl`` every ``every`` steps, one flushed line each."""

    def __init__(self, run_dir: RunDir, *, every: int, resume_from_step: int | None = None) -> None:
        """Open the samples file of ``run_dir`` for appending.

        Args:
            run_dir: The run.
            every: Log samples on steps that are multiples of this; 0 turns logging off.
            resume_from_step: Drop lines of later steps (they are about to be logged again).
        """
        if every < 0:
            raise ConfigError(f"every={every} is not allowed; expected an integer >= 0 (0 turns samples off)")
        self.every = every
        self.path = run_dir.samples_path
        if resume_from_step is not None:
            truncate_after_step(self.path, resume_from_step)
        else:  # a fresh start: samples of an earlier attempt would repeat its steps
            set_aside(self.path)
        self._file = self.path.open("a", encoding="utf-8")

    def due(self, step: int) -> bool:
        """Whether samples should be written at ``step``."""
        return self.every > 0 and step % self.every == 0

    def write(self, step: int, samples: Sequence[Mapping[str, Any]]) -> None:
        """Write one line per sample: ``{"step": step, **sample}`` (prompt, completion, reward, ...)."""
        for sample in samples:
            self._file.write(dumps_strict({"step": step, **sample}, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def point_latest(root: Path, run: Path | None) -> None:
    """Point ``root/latest`` at the run folder ``run`` (a relative link, replaced atomically); None removes it.

    A ``latest`` that is not a link (a file or folder of the user's: reasongym only ever writes a link) is left
    alone with a warning naming it, since it then does not name the newest run (``eval ROOT`` would not find
    it); a file system without links is left alone silently.
    """
    link = root / LATEST_RUN
    if link.exists() and not link.is_symlink():
        if run is not None:
            kind = "folder" if link.is_dir() else "file"
            warnings.warn(
                f"{str(link)!r} is a {kind}, not the link reasongym keeps to the newest run, so it is left as it "
                f"is and does not name {str(run)!r}; remove it to have the next run point it there",
                RuntimeWarning,
                stacklevel=2,
            )
        return
    if run is None:
        link.unlink(missing_ok=True)
        return
    tmp = root / f".{LATEST_RUN}.tmp-{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(run.name, target_is_directory=True)
        os.replace(tmp, link)
    except OSError:
        tmp.unlink(missing_ok=True)


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "run"
