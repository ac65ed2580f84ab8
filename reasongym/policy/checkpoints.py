"""Checkpoints that a killed run resumes from exactly, and finding the weights a path stands for.

A run folder keeps its checkpoints in ``checkpoints/step-000123/``. A checkpoint is written into a hidden
temporary folder next to its final place, every file is fsynced, and one ``os.replace`` publishes it; then
the ``checkpoints/latest`` pointer is replaced the same way. A crash at any point leaves the previous
checkpoint and pointer intact, and half-written temporary folders are never read.

A checkpoint holds the model weights (safetensors, with the model config so that the folder also loads
with ``from_pretrained``; a LoRA run's holds its adapters instead, in peft's files, and the run folder
records the base once, `reasongym.policy.base_model`), optimizer and scheduler state, every global RNG state (Python, NumPy, torch CPU
and CUDA), the step, and the trainer's own state as JSON, in which ``torch.Generator``,
``numpy.random.Generator`` and ``random.Random`` objects are stored by state and come back as restored
objects. The manifest, written last, records the size and SHA-256 of every other file; loading verifies
them (`verify_checkpoint`: a file cut short, or changed in place by a bad disk or a bad copy) and a run
resumes from the newest intact checkpoint, warning once about each damaged one it skips. `resolve_weights` is the one place that turns a run folder or checkpoint path into the folders
holding weights and tokenizer; training (resume) and evaluation (``reasongym eval RUN``) both use it.

Why this file is long: a checkpoint's format is written, verified and read here (the files, the manifest
with their sizes and hashes, the RNG and trainer-state encoding); a change to what a checkpoint holds is made in one
place, on both sides.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import pickle
import random
import re
import shutil
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_model, save_file, save_model

from reasongym.errors import CheckpointError, ConfigError
from reasongym.policy.lora import load_adapters, save_adapters

CHECKPOINTS_DIR = "checkpoints"
LATEST_POINTER = "latest"
MANIFEST_FILE = "checkpoint.json"
_STEP_DIR = re.compile(r"^step-(\d+)$")
_RUN_FILES = ("metrics.jsonl", "run.json")  # a run folder has one of these from its first step
LATEST_RUN = "latest"
"""The link in a folder of runs (``runs/grpo/latest``) to the newest run started there (`reasongym.runs.folder`)."""


def _folder(run_dir: Any) -> Path:
    """The folder of a ``RunDir`` or a path."""
    return Path(getattr(run_dir, "path", run_dir))


def save_checkpoint(
    run_dir: Any,
    step: int,
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any | None = None,
    trainer_state: Mapping[str, Any] | None = None,
    keep_last: int | None = 3,
    model_state: Mapping[str, torch.Tensor] | None = None,
    optimizer_state: Mapping[str, Any] | None = None,
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
        model_state: The weights to save instead of ``model``'s own (a sharded model's, gathered whole);
            ``model`` then still supplies the config.
        optimizer_state: The optimizer state to save instead of ``optimizer``'s own (likewise).

    Returns:
        The checkpoint folder.

    Raises:
        ConfigError: ``trainer_state`` holds a value JSON cannot store, or ``keep_last`` < 1.
    """
    if keep_last is not None and keep_last < 1:
        raise ConfigError(
            f"keep_last={keep_last} is not allowed; expected an integer >= 1 or None (keep all)"
        )
    folder = _folder(run_dir) / CHECKPOINTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(folder)
    state_json = json.dumps(_encode_state(dict(trainer_state or {}), "trainer_state"), sort_keys=True)
    tmp = folder / f".tmp-step-{step:06d}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    with _removed_on_failure(tmp, f"checkpoint step-{step:06d}"):
        _write_contents(tmp, step, model, optimizer, scheduler, state_json, model_state, optimizer_state)
    final = folder / f"step-{step:06d}"
    if final.exists():  # a resumed run saving the same step again: move the old copy aside first
        shutil.rmtree(final.rename(folder / f".tmp-old-{uuid.uuid4().hex[:8]}"))
    os.replace(tmp, final)
    _fsync_dir(folder)
    _write_pointer(folder, final.name)
    _prune(folder, step, keep_last)
    return final


@contextlib.contextmanager
def _removed_on_failure(tmp: Path, what: str) -> Iterator[None]:
    """Remove the half-written folder ``tmp`` if the block fails (Ctrl-C too); a full disk is said as such."""
    try:
        yield
    except BaseException as exc:
        full = disk_full(tmp.parent, exc)
        shutil.rmtree(tmp, ignore_errors=True)
        if full:
            raise CheckpointError(
                f"the disk is full: {what} could not be written in {str(tmp.parent)!r} (nothing of it is left "
                "there); free space on that disk, or keep fewer checkpoints (keep_checkpoints), then resume "
                "with --run-dir"
            ) from exc
        raise


def disk_full(where: Path, exc: BaseException) -> bool:
    """Whether ``exc``, raised while writing under ``where``, came from a full disk: ENOSPC, or a writer that
    words it its own way (torch's ``inline_container.cc ... unexpected pos``, safetensors' ``SafetensorError``)
    with under 1 MiB left there."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if not isinstance(exc, Exception):  # Ctrl-C
        return False
    try:
        return shutil.disk_usage(where).free < (1 << 20)
    except OSError:
        return False


def _write_contents(
    tmp: Path,
    step: int,
    model: torch.nn.Module,
    optimizer: Any,
    scheduler: Any,
    state_json: str,
    model_state: Mapping[str, torch.Tensor] | None = None,
    optimizer_state: Mapping[str, Any] | None = None,
) -> None:
    """Every file of a checkpoint, fsynced, with the manifest written last."""
    module = getattr(model, "module", model)  # DistributedDataParallel keeps the model in .module
    if _has_adapters(module):  # LoRA: the adapters alone; the base is recorded once in the run folder
        save_adapters(module, tmp)
    elif model_state is None:
        save_model(module, str(tmp / "model.safetensors"))
    else:
        save_file(
            {name: tensor.contiguous() for name, tensor in model_state.items()},
            str(tmp / "model.safetensors"),
        )
    if hasattr(module, "config") and hasattr(module.config, "save_pretrained"):
        module.config.save_pretrained(tmp)
    if optimizer_state is not None:
        torch.save(dict(optimizer_state), tmp / "optimizer.pt")
    elif optimizer is not None:
        torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    if scheduler is not None:
        torch.save(scheduler.state_dict(), tmp / "scheduler.pt")
    (tmp / "rng_state.json").write_text(json.dumps(_global_rng_state()), encoding="utf-8")
    (tmp / "trainer_state.json").write_text(state_json, encoding="utf-8")
    # The manifest goes last: a folder without it was never finished. Its sizes and hashes let a load tell a
    # file truncated or changed later (a full disk, a bad copy, a bad sector) from an intact one.
    files = sorted(tmp.iterdir())
    sizes = {file.name: file.stat().st_size for file in files}
    hashes = {file.name: file_sha256(file) for file in files}
    manifest = {"step": step, "time": time.time(), "files": sizes, "sha256": hashes}
    (tmp / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    for file in tmp.iterdir():
        _fsync_file(file)
    _fsync_dir(tmp)


def latest_checkpoint(run_dir: Any, *, warn: bool = True) -> Path | None:
    """The newest intact checkpoint: the one the ``latest`` pointer names, else the highest complete one.

    Temporary folders of interrupted writes and folders without a manifest are ignored. A damaged
    checkpoint (see `verify_checkpoint`) is skipped with a warning naming the damaged file (unless
    ``warn`` is False: a look ahead of the load that warns), and the next older one is tried.

    Returns:
        The checkpoint folder, or None when the run has no complete checkpoint.

    Raises:
        CheckpointError: Every complete checkpoint is damaged (the message names each damaged file).
    """
    folder = _folder(run_dir) / CHECKPOINTS_DIR
    candidates = _complete_checkpoints(folder)[::-1]
    pointer = folder / LATEST_POINTER
    if pointer.is_file():
        named = folder / pointer.read_text(encoding="utf-8", errors="replace").strip()
        if named in candidates:  # the pointer first: a resumed run may have left higher abandoned steps
            candidates.remove(named)
            candidates.insert(0, named)
    problems = []
    for checkpoint in candidates:
        try:
            verify_checkpoint(checkpoint)
        except CheckpointError as error:
            problems.append(str(error))
            continue
        for problem in problems if warn else ():
            warnings.warn(f"{problem}; resuming from {checkpoint.name} instead", RuntimeWarning, stacklevel=2)
        return checkpoint
    if problems:
        raise CheckpointError(f"no intact checkpoint in {str(folder)!r}: " + "; ".join(problems))
    return None


def verify_checkpoint(path: str | os.PathLike[str]) -> int:
    """Check a checkpoint without loading it into a model; returns its step.

    Checks: the manifest is JSON with a step; every file it lists has the recorded size and SHA-256 (older
    checkpoints record sizes only, or nothing); ``model.safetensors`` holds as many bytes as its header says;
    ``rng_state.json`` and ``trainer_state.json`` are JSON, and the RNG state has its keys.

    Raises:
        CheckpointError: Something is missing, truncated or unreadable; the message names the file.
    """
    path = Path(path)
    manifest = _read_json(path / MANIFEST_FILE)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("step"), int):
        raise CheckpointError(f"{path / MANIFEST_FILE} has no integer 'step'; the checkpoint is damaged")
    for name, size in (manifest.get("files") or {}).items():
        file = path / name
        if not file.is_file():
            raise CheckpointError(f"{file} is missing; the checkpoint is damaged")
        if file.stat().st_size != size:
            raise CheckpointError(
                f"{file} has {file.stat().st_size} bytes where the manifest recorded {size} (truncated or "
                "overwritten); the checkpoint is damaged"
            )
    for name, digest in (manifest.get("sha256") or {}).items():
        if not (path / name).is_file():
            raise CheckpointError(f"{path / name} is missing; the checkpoint is damaged")
        if file_sha256(path / name) != digest:
            raise CheckpointError(
                f"{path / name} does not match the sha256 the manifest recorded (changed in place: a bad "
                "disk, a bad copy); the checkpoint is damaged"
            )
    adapters = (path / "adapter_config.json").is_file()
    _check_safetensors(path / ("adapter_model.safetensors" if adapters else "model.safetensors"))
    missing = sorted({"python", "numpy", "torch"} - set(_read_json(path / "rng_state.json") or {}))
    if missing:
        raise CheckpointError(
            f"{path / 'rng_state.json'} lacks the keys {missing}; the checkpoint is damaged"
        )
    _read_json(path / "trainer_state.json")
    return manifest["step"]


def file_sha256(file: Path) -> str:
    """The SHA-256 of a file's bytes, as hex, read 1 MiB at a time."""
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{file} is missing; the checkpoint is damaged") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{file} is not valid JSON ({error}); the checkpoint is damaged") from error


def _check_safetensors(file: Path) -> None:
    """The file is as long as its header says: 8 bytes of header length, the header, then the tensors."""
    try:
        with file.open("rb") as handle:
            length = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(length)) if 0 < length < (100 << 20) else None
    except FileNotFoundError:
        raise CheckpointError(f"{file} is missing; the checkpoint is damaged") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        header = None
    if not isinstance(header, dict):
        raise CheckpointError(f"{file} has no readable safetensors header; the checkpoint is damaged")
    ends = [entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__"]
    expected = 8 + length + max(ends, default=0)
    if file.stat().st_size != expected:
        raise CheckpointError(
            f"{file} has {file.stat().st_size} bytes where its header needs {expected} (truncated); the "
            "checkpoint is damaged"
        )


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
        CheckpointError: A file of the checkpoint is missing, truncated or unreadable (named).
    """
    path = Path(path)
    checkpoint_step(path)  # a folder that never was a checkpoint: say so
    step = verify_checkpoint(path)
    module = getattr(model, "module", model)
    if _has_adapters(module) != (path / "adapter_config.json").is_file():
        raise ConfigError(
            f"checkpoint {str(path)!r} holds {'LoRA adapters' if not _has_adapters(module) else 'whole weights'}"
            f" but the model {'has' if _has_adapters(module) else 'has no'} adapters: resume with the run's "
            "own lora settings (lora.rank 0 is full fine-tuning)"
        )
    if _has_adapters(module):
        load_adapters(module, path)
    else:
        device = next(module.parameters()).device
        load_model(module, str(path / "model.safetensors"), strict=True, device=str(device))
    if optimizer is not None:
        optimizer.load_state_dict(_torch_load(path / "optimizer.pt"))
    if scheduler is not None:
        scheduler.load_state_dict(_torch_load(path / "scheduler.pt"))
    if restore_rng:
        _set_global_rng_state(_read_json(path / "rng_state.json"))
    trainer_state = _decode_state(_read_json(path / "trainer_state.json"))
    return step, trainer_state


def load_optimizer_states(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The optimizer and scheduler states a checkpoint holds, read to the CPU: for a trainer that loads the
    weights first (``load_checkpoint`` without an optimizer) and builds its optimizer after sharding them.

    Raises:
        ConfigError: ``path`` is not a complete checkpoint.
    """
    checkpoint_step(path)  # refuses an incomplete checkpoint
    path = Path(path)
    return _torch_load(path / "optimizer.pt"), _torch_load(path / "scheduler.pt")


def _has_adapters(module: Any) -> bool:
    return hasattr(module, "peft_config") and hasattr(module, "disable_adapter")


def _torch_load(file: Path) -> Any:
    try:
        return torch.load(file, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"{file} is missing; the checkpoint is damaged") from None
    except (RuntimeError, EOFError, pickle.UnpicklingError) as error:
        raise CheckpointError(f"{file} cannot be read ({error}); the checkpoint is damaged") from error


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
    step = _read_json(manifest)
    if not isinstance(step, dict) or not isinstance(step.get("step"), int):
        raise CheckpointError(f"{manifest} has no integer 'step'; the checkpoint is damaged")
    return step["step"]


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


def follow_latest(folder: Path) -> Path:
    """A folder of runs (not itself a run or a checkpoint) stands for its newest run, through its ``latest``
    link; any other path stands for itself."""
    is_run = (folder / CHECKPOINTS_DIR).is_dir() or any((folder / name).is_file() for name in _RUN_FILES)
    if is_run or (folder / MANIFEST_FILE).is_file() or not (folder / LATEST_RUN).is_dir():
        return folder
    return folder / LATEST_RUN


def resolve_weights(path: str | os.PathLike[str]) -> tuple[Path, Path] | None:
    """The folders holding the weights and the tokenizer that a run folder or checkpoint path stands for.

    A ``checkpoints/step-N`` folder stands for itself; a run folder for its latest complete checkpoint; a folder
    of runs for its newest run (`follow_latest`). The tokenizer is looked for in the checkpoint, then the run folder, then ``<run>/tokenizer``.

    Returns:
        ``(weights folder, tokenizer folder)``, or None for anything else (a plain model folder, a hub id).

    Raises:
        ConfigError: A run folder without a complete checkpoint, a checkpoint without ``config.json``, or no
            tokenizer found.
    """
    folder = follow_latest(Path(path).expanduser())
    if not folder.is_dir():
        return None
    if (folder / MANIFEST_FILE).is_file():
        checkpoint = folder
    elif (folder / CHECKPOINTS_DIR).is_dir() or any((folder / name).is_file() for name in _RUN_FILES):
        checkpoint = latest_checkpoint(folder)
        if checkpoint is None:
            raise ConfigError(
                f"run folder {str(folder)!r} has no complete checkpoint under {CHECKPOINTS_DIR}/ (it stopped "
                "before its first save?): there are no weights to load"
            )
    else:
        return None
    if not (checkpoint / "config.json").is_file():
        raise ConfigError(
            f"checkpoint {str(checkpoint)!r} has no config.json; it cannot be loaded as a model"
        )
    run_folder = checkpoint.parent.parent
    for candidate in (checkpoint, run_folder, run_folder / "tokenizer"):
        if (candidate / "tokenizer_config.json").is_file():
            return checkpoint, candidate
    raise ConfigError(
        f"no tokenizer found for checkpoint {str(checkpoint)!r} (looked in the checkpoint, its run folder and "
        "<run>/tokenizer); save it there with tokenizer.save_pretrained(run_dir)"
    )
