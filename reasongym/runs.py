"""Run folders, sample logs, and atomic checkpoints that a killed run resumes from exactly.

A run folder ``<root>/<algo>-<env>-s<seed>-<timestamp>/`` holds ``config.json``, ``metrics.jsonl``,
``samples.jsonl``, ``run.json`` (what a resume needs besides the config: algorithm, model, environment)
and ``checkpoints/step-000123/``. A checkpoint is written into a hidden temporary
folder next to its final place, every file is fsynced, and one ``os.replace`` publishes it; then the
``checkpoints/latest`` pointer is replaced the same way. A crash at any point leaves the previous
checkpoint and pointer intact, and half-written temporary folders are never read.

A checkpoint holds the model weights (safetensors), optimizer and scheduler state, every global RNG
state (Python, NumPy, torch CPU and CUDA), the step, and the trainer's own state as JSON, in which
``torch.Generator``, ``numpy.random.Generator`` and ``random.Random`` objects are stored by state and
come back as restored objects.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_model, save_model

from reasongym.errors import ConfigError
from reasongym.metrics import CONFIG_FILE, METRICS_FILE, dumps_strict, truncate_after_step, write_json_atomic

CHECKPOINTS_DIR = "checkpoints"
LATEST_POINTER = "latest"
MANIFEST_FILE = "checkpoint.json"
SAMPLES_FILE = "samples.jsonl"
RUN_INFO_FILE = "run.json"
_STEP_DIR = re.compile(r"^step-(\d+)$")


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
        Path(root).mkdir(parents=True, exist_ok=True)
        for attempt in range(1, 1000):
            path = Path(root) / (base if attempt == 1 else f"{base}-{attempt}")
            try:
                path.mkdir()  # atomic: two runs started in the same second get different folders
            except FileExistsError:
                continue
            return cls(path)
        raise ConfigError(f"root={str(root)!r} already holds 999 runs named {base!r}; choose another root")

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> RunDir:
        """Reopen an existing run folder (to resume it), or create it when ``create`` is set.

        Raises:
            ConfigError: The folder does not exist and ``create`` is False.
        """
        path = Path(path)
        if create:
            path.mkdir(parents=True, exist_ok=True)
        if not path.is_dir():
            raise ConfigError(
                f"run_dir={str(path)!r} does not exist; pass an existing run folder or create=True"
            )
        return cls(path)

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


def save_checkpoint(
    run_dir: RunDir | str | os.PathLike[str],
    step: int,
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any | None = None,
    trainer_state: Mapping[str, Any] | None = None,
    keep_last: int | None = 3,
) -> Path:
    """Write ``checkpoints/step-<step>/`` atomically, point ``latest`` at it, and prune old ones.

    Args:
        run_dir: The run (or its folder).
        step: Optimizer steps done so far.
        model: The model; a DDP wrapper is unwrapped. The config is saved too when the model has one,
            so the checkpoint folder also loads with ``from_pretrained``.
        optimizer: Its ``state_dict`` is saved.
        scheduler: A learning-rate scheduler; its ``state_dict`` is saved.
        trainer_state: JSON-serialisable trainer state (data cursor, data order); ``torch.Generator``,
            ``numpy.random.Generator`` and ``random.Random`` values are stored by state.
        keep_last: Keep this many newest checkpoints; None keeps all.

    Returns:
        The checkpoint folder.

    Raises:
        ConfigError: ``trainer_state`` holds a value JSON cannot store, or ``keep_last`` < 1.
    """
    if keep_last is not None and keep_last < 1:
        raise ConfigError(
            f"keep_last={keep_last} is not allowed; expected an integer >= 1 or None (keep all)"
        )
    run = run_dir if isinstance(run_dir, RunDir) else RunDir.open(run_dir, create=True)
    folder = run.checkpoints_path
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(folder)
    state_json = json.dumps(_encode_state(dict(trainer_state or {}), "trainer_state"), sort_keys=True)
    tmp = folder / f".tmp-step-{step:06d}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    _write_contents(tmp, step, model, optimizer, scheduler, state_json)
    final = folder / f"step-{step:06d}"
    if final.exists():  # a resumed run saving the same step again: move the old copy aside first
        shutil.rmtree(final.rename(folder / f".tmp-old-{uuid.uuid4().hex[:8]}"))
    os.replace(tmp, final)
    _fsync_dir(folder)
    _write_pointer(folder, final.name)
    _prune(folder, step, keep_last)
    return final


def _write_contents(
    tmp: Path, step: int, model: torch.nn.Module, optimizer: Any, scheduler: Any, state_json: str
) -> None:
    """Every file of a checkpoint, fsynced, with the manifest written last."""
    module = getattr(model, "module", model)  # DistributedDataParallel keeps the model in .module
    save_model(module, str(tmp / "model.safetensors"))
    if hasattr(module, "config") and hasattr(module.config, "save_pretrained"):
        module.config.save_pretrained(tmp)
    if optimizer is not None:
        torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    if scheduler is not None:
        torch.save(scheduler.state_dict(), tmp / "scheduler.pt")
    (tmp / "rng_state.json").write_text(json.dumps(_global_rng_state()), encoding="utf-8")
    (tmp / "trainer_state.json").write_text(state_json, encoding="utf-8")
    # The manifest goes last: a folder without it was never finished.
    (tmp / MANIFEST_FILE).write_text(json.dumps({"step": step, "time": time.time()}), encoding="utf-8")
    for file in tmp.iterdir():
        _fsync_file(file)
    _fsync_dir(tmp)


def latest_checkpoint(run_dir: RunDir | str | os.PathLike[str]) -> Path | None:
    """The checkpoint the ``latest`` pointer names, or else the highest complete one, or None.

    Temporary folders of interrupted writes and folders without a manifest are ignored.
    """
    run = run_dir if isinstance(run_dir, RunDir) else RunDir(Path(run_dir))
    folder = run.checkpoints_path
    pointer = folder / LATEST_POINTER
    if pointer.is_file():
        named = folder / pointer.read_text(encoding="utf-8").strip()
        if _STEP_DIR.match(named.name) and (named / MANIFEST_FILE).is_file():
            return named
    complete = _complete_checkpoints(folder)
    return complete[-1] if complete else None


def load_checkpoint(
    path: str | os.PathLike[str],
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any | None = None,
    restore_rng: bool = True,
) -> tuple[int, dict[str, Any]]:
    """Restore a checkpoint written by ``save_checkpoint`` into the given objects.

    Args:
        path: A ``step-NNNNNN`` folder (e.g. from ``latest_checkpoint``).
        model: Receives the weights (strictly: every key must match); a DDP wrapper is unwrapped.
        optimizer: Receives the optimizer state, if given.
        scheduler: Receives the scheduler state, if given.
        restore_rng: Also restore the global Python, NumPy and torch RNG states.

    Returns:
        ``(step, trainer_state)``, with RNG objects in ``trainer_state`` restored.

    Raises:
        ConfigError: ``path`` is not a complete checkpoint.
    """
    path = Path(path)
    step = checkpoint_step(path)
    module = getattr(model, "module", model)
    device = next(module.parameters()).device
    load_model(module, str(path / "model.safetensors"), strict=True, device=str(device))
    if optimizer is not None:
        optimizer.load_state_dict(torch.load(path / "optimizer.pt", map_location="cpu", weights_only=True))
    if scheduler is not None:
        scheduler.load_state_dict(torch.load(path / "scheduler.pt", map_location="cpu", weights_only=True))
    if restore_rng:
        _set_global_rng_state(json.loads((path / "rng_state.json").read_text(encoding="utf-8")))
    trainer_state = _decode_state(json.loads((path / "trainer_state.json").read_text(encoding="utf-8")))
    return step, trainer_state


def checkpoint_step(path: str | os.PathLike[str]) -> int:
    """The step recorded in a checkpoint's manifest, without loading anything else.

    Raises:
        ConfigError: ``path`` is not a complete checkpoint.
    """
    manifest = Path(path) / MANIFEST_FILE
    if not manifest.is_file():
        raise ConfigError(
            f"path={str(path)!r} is not a complete checkpoint (no {MANIFEST_FILE}); "
            "pass a checkpoints/step-NNNNNN folder, e.g. latest_checkpoint(run_dir)"
        )
    return int(json.loads(manifest.read_text(encoding="utf-8"))["step"])


def ensure_steps_remaining(trained_steps: int, total_steps: int, *, field: str = "max_steps") -> None:
    """Refuse a resume that would train zero (or negative) more steps.

    Raises:
        ConfigError: ``trained_steps >= total_steps``; the message says how to continue.
    """
    if trained_steps >= total_steps:
        raise ConfigError(
            f"already trained {trained_steps} of {total_steps} steps; raise total steps to continue "
            f"({field}={total_steps} must be greater than {trained_steps}, the step of the checkpoint resumed from)"
        )


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "run"


def _complete_checkpoints(folder: Path) -> list[Path]:
    """``step-NNNNNN`` folders that have a manifest, oldest first."""
    if not folder.is_dir():
        return []
    found = [
        (int(match.group(1)), child)
        for child in folder.iterdir()
        if (match := _STEP_DIR.match(child.name)) and (child / MANIFEST_FILE).is_file()
    ]
    return [child for _, child in sorted(found)]


def _prune(folder: Path, step: int, keep_last: int | None) -> None:
    """Drop checkpoints past ``step`` (an abandoned future of a resumed run) and all but the newest kept."""
    complete = _complete_checkpoints(folder)
    newer = [path for path in complete if int(path.name.split("-")[1]) > step]
    older = [path for path in complete if path not in newer]
    doomed = newer + (older[:-keep_last] if keep_last is not None else [])
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)


def _remove_stale_temporaries(folder: Path) -> None:
    # Only rank 0 of one run writes here, so any temporary folder is left over from a crash.
    for child in folder.iterdir():
        if child.name.startswith(".tmp-") and child.is_dir():
            shutil.rmtree(child, ignore_errors=True)


def _write_pointer(folder: Path, target: str) -> None:
    tmp = folder / f".{LATEST_POINTER}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.write_text(target + "\n", encoding="utf-8")
    _fsync_file(tmp)
    os.replace(tmp, folder / LATEST_POINTER)
    _fsync_dir(folder)


def _fsync_file(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _global_rng_state() -> dict[str, Any]:
    numpy_state = np.random.get_state()
    state: dict[str, Any] = {
        "python": _encode_state(random.getstate(), "python"),
        "numpy": [numpy_state[0], numpy_state[1].tolist(), *numpy_state[2:]],
        "torch": torch.get_rng_state().tolist(),
    }
    if torch.cuda.is_available():
        state["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return state


def _set_global_rng_state(state: Mapping[str, Any]) -> None:
    random.setstate(_decode_state(state["python"]))
    name, keys, *rest = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), *rest))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8) for s in state["cuda"]])


def _encode_state(value: Any, where: str) -> Any:
    """JSON-ready copy of ``value``; RNG objects become tagged dicts, tuples become tagged lists."""
    if isinstance(value, torch.Generator):
        return {"__rng__": "torch", "device": str(value.device), "state": value.get_state().tolist()}
    if isinstance(value, np.random.Generator):
        return {"__rng__": "numpy", "state": value.bit_generator.state}
    if isinstance(value, random.Random):
        return {"__rng__": "python", "state": _encode_state(value.getstate(), where)}
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise ConfigError(
                f"{where} has a non-string key among {list(value)!r}; JSON keys must be strings"
            )
        return {key: _encode_state(item, f"{where}[{key!r}]") for key, item in value.items()}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode_state(item, where) for item in value]}
    if isinstance(value, list):
        return [_encode_state(item, where) for item in value]
    if isinstance(value, np.integer | np.floating):
        return value.item()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ConfigError(
        f"{where} holds {type(value).__name__} {value!r:.80}, which a checkpoint cannot store; allowed: JSON "
        "values, tuples, torch.Generator, numpy.random.Generator, random.Random"
    )


def _decode_state(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode_state(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_decode_state(item) for item in value["__tuple__"])
    kind = value.get("__rng__")
    if kind == "torch":
        generator = torch.Generator(device=value["device"])
        generator.set_state(torch.tensor(value["state"], dtype=torch.uint8))
        return generator
    if kind == "numpy":
        bit_generator = getattr(np.random, value["state"]["bit_generator"])()
        bit_generator.state = value["state"]
        return np.random.Generator(bit_generator)
    if kind == "python":
        restored = random.Random()
        restored.setstate(_decode_state(value["state"]))
        return restored
    return {key: _decode_state(item) for key, item in value.items()}
