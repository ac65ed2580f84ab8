"""One metrics writer for every trainer: config first, then one JSON line per logged step.

Keys are namespaced (``rollout/reward_mean``, ``loss/policy``, ``eval/pass@1``, ``perf/tokens_per_s``)
so that plots and dashboards group them the same way in every run. ``metrics.jsonl`` is strict JSON
(non-finite values are written as ``null``) and is flushed after every line, so a crash loses at most
the line being written. TensorBoard and Weights & Biases are optional mirrors, imported only when used.
This module imports neither torch nor matplotlib; the plots are `reasongym.runs.plots`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import errno
import importlib.util
import json
import math
import os
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from reasongym.errors import ConfigError

NAMESPACES: tuple[str, ...] = (
    "rollout",
    "loss",
    "eval",
    "perf",
    "train",
    "sampler",
    "star",
    "grpo",
    "dapo",
    "sft",
    "distill",
    "reward",
    "async",
)
"""The allowed first parts of a metric key (``<namespace>/<name>``)."""

RESERVED_KEYS: tuple[str, ...] = ("step", "time")
"""Keys the writer fills itself on every line."""

CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.jsonl"


class MetricsWriter:
    """Writes ``config.json`` once, then appends namespaced metrics to ``metrics.jsonl``.

    Example:
        >>> with MetricsWriter(run_dir, tensorboard=False, config={"lr": 1e-5}) as writer:
        ...     writer.log(1, {"loss/sft": 2.3, "train/lr": 1e-5})
    """

    def __init__(
        self,
        run_dir: str | os.PathLike[str],
        *,
        tensorboard: bool | None = None,
        wandb_project: str | None = None,
        config: Mapping[str, Any] | Any | None = None,
        resume_from_step: int | None = None,
        extra_namespaces: Sequence[str] = (),
    ) -> None:
        """Create the run folder, write the config, and open the metrics file for appending.

        Args:
            run_dir: Folder of the run; created if missing.
            tensorboard: Mirror metrics to TensorBoard event files in ``run_dir/tensorboard``. ``None``
                means: when ``torch.utils.tensorboard`` or ``tensorboardX`` is installed.
            wandb_project: Mirror metrics to this Weights & Biases project; ``None`` disables W&B.
            config: The resolved run config (a mapping or a dataclass); written to ``config.json``
                before any metric.
            resume_from_step: When resuming from a checkpoint at this step, drop the lines of later
                steps (logged after that checkpoint and about to be logged again). None (a fresh start):
                an existing ``metrics.jsonl`` is moved aside (`set_aside`), never appended to.
            extra_namespaces: Namespaces allowed on top of ``NAMESPACES``.

        Raises:
            ConfigError: ``tensorboard=True`` or a W&B project without the package installed, or a
                config that cannot be written as JSON.
        """
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.namespaces = (*NAMESPACES, *extra_namespaces)
        write_json_atomic(self.run_dir / CONFIG_FILE, _config_to_dict(config))
        self.path = self.run_dir / METRICS_FILE
        if resume_from_step is not None:
            truncate_after_step(self.path, resume_from_step)
        else:  # a fresh start: lines of an earlier attempt would repeat its steps
            set_aside(self.path)
        self._file = self.path.open("a", encoding="utf-8")
        self._tensorboard = _open_tensorboard(self.run_dir, tensorboard)
        self._wandb = _open_wandb(wandb_project, self.run_dir, config) if wandb_project else None

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Append one line ``{"step": step, "time": ..., **metrics}`` and mirror it to the backends.

        Args:
            step: The optimizer step (or iteration) the metrics belong to; an integer >= 0.
            metrics: ``namespace/name`` keys to numbers (Python, NumPy or 0-d torch scalars).

        Raises:
            ConfigError: A key without a known namespace, a reserved key, a non-numeric value, or a
                negative step.
        """
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ConfigError(f"step={step!r} is not allowed; expected an integer >= 0")
        values = {key: self._checked_value(key, value) for key, value in metrics.items()}
        record = {"step": step, "time": time.time(), **values}
        self._file.write(dumps_strict(record) + "\n")
        self._file.flush()
        if self._tensorboard is not None:
            for key, value in values.items():
                if value is not None:
                    self._tensorboard.add_scalar(key, value, step)
        if self._wandb is not None:
            self._wandb.log(values, step=step)

    def _checked_value(self, key: str, value: Any) -> float | int | None:
        namespace, sep, name = key.partition("/")
        if sep and namespace in self.namespaces and not name:
            raise ConfigError(f"metric key {key!r} has an empty name; keys look like '{namespace}/name'")
        if not sep or namespace not in self.namespaces:
            nearest = difflib.get_close_matches(namespace, self.namespaces, n=1)
            hint = f"; did you mean '{nearest[0]}/{name or key}'?" if nearest else ""
            raise ConfigError(
                f"metric key {key!r} has no known namespace; keys look like 'namespace/name' with "
                f"namespace one of {list(self.namespaces)}{hint}"
            )
        if hasattr(value, "item"):  # NumPy and torch scalars
            value = value.item()
        if isinstance(value, bool):
            return int(value)
        if not isinstance(value, int | float):
            raise ConfigError(
                f"metric {key!r} has value {value!r} of type {type(value).__name__}; expected a number"
            )
        return value if isinstance(value, int) or math.isfinite(value) else None

    def close(self) -> None:
        """Flush and close the file and any backend. Safe to call twice."""
        if not self._file.closed:
            self._file.close()
        if self._tensorboard is not None:
            self._tensorboard.close()
            self._tensorboard = None
        if self._wandb is not None:
            self._wandb.finish()
            self._wandb = None

    def __enter__(self) -> MetricsWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def read_metrics(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a ``metrics.jsonl`` (or a run folder holding one) into a list of dicts, in file order.

    A final line cut off by a crash (no trailing newline, not valid JSON) is skipped.

    Args:
        path: The JSONL file, or the run folder that contains ``metrics.jsonl``.

    Returns:
        One dict per logged line.

    Raises:
        FileNotFoundError: No such file.
        ValueError: A line other than the last one is not valid JSON.
    """
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_FILE
    lines = path.read_text(encoding="utf-8").split("\n")
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):  # the unterminated last line of a crashed writer
                break
            raise ValueError(f"{path}:{number} is not valid JSON: {exc}") from exc
    return records


def truncate_after_step(path: str | os.PathLike[str], step: int) -> None:
    """Rewrite a JSONL file keeping only lines whose ``step`` is at most ``step`` (atomically).

    Used on resume: lines logged after the checkpoint are logged again by the resumed run.

    Args:
        path: A JSONL file of objects with a ``step`` field; nothing happens if it does not exist.
        step: The last step to keep.
    """
    path = Path(path)
    if not path.exists():
        return
    kept = [record for record in read_metrics(path) if record.get("step", 0) <= step]
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with _removed_on_failure(tmp, path), tmp.open("w", encoding="utf-8") as handle:
        # An older file may hold bare NaN, which json.loads accepts; it is rewritten as null.
        handle.writelines(dumps_strict(record) + "\n" for record in kept)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def set_aside(path: str | os.PathLike[str]) -> Path | None:
    """Rename a non-empty ``path`` to ``<stem>.before-<time><suffix>`` with a warning; returns the new path.

    A run that starts again from step 0 in a folder that already has lines (its checkpoints were deleted, or
    it crashed before the first one) keeps them there instead of logging the same steps twice in one file.
    """
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.stem}.before-{stamp}{path.suffix}")
    for attempt in range(2, 1000):
        if not target.exists():
            break
        target = path.with_name(f"{path.stem}.before-{stamp}-{attempt}{path.suffix}")
    os.replace(path, target)
    warnings.warn(
        f"{path} held lines of an earlier attempt and training starts from step 0 (no checkpoint to resume "
        f"from); they were moved to {target.name}",
        RuntimeWarning,
        stacklevel=3,
    )
    return target


@contextlib.contextmanager
def _removed_on_failure(tmp: Path, path: Path) -> Iterator[None]:
    """Remove the temporary file ``tmp`` (written to replace ``path``) if the block fails; a full disk is
    said as such, naming ``path``."""
    try:
        yield
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            full = OSError(
                f"the disk is full: cannot write {str(path)!r} (nothing of it is left half-written)"
            )
            full.errno = exc.errno
            raise full from exc
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file and ``os.replace``, fsynced."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with _removed_on_failure(tmp, path), tmp.open("w", encoding="utf-8") as handle:
        handle.write(dumps_strict(data, indent=2, sort_keys=True, default=_json_fallback))
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def to_strict_json(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, inf) inside mappings, lists and tuples made ``None``.

    Undefined metrics (a mean over no correct completions) are NaN; strict JSON has no NaN, so they are
    written as ``null``. Mappings become dicts and tuples become lists; other values are returned as they are.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: to_strict_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_strict_json(item) for item in value]
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # NumPy and 0-d torch scalars
        return to_strict_json(value.item())
    return value


def dumps_strict(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of ``to_strict_json(value)`` with ``allow_nan=False``: the output is always strict JSON.

    Args:
        value: Any JSON-serialisable value; non-finite floats become ``null``.
        **kwargs: Passed on to ``json.dumps`` (``indent``, ``sort_keys``, ``default``).

    Raises:
        ValueError: A non-finite float got past the conversion (for example from ``default``).
    """
    return json.dumps(to_strict_json(value), allow_nan=False, **kwargs)


def _config_to_dict(config: Mapping[str, Any] | Any | None) -> dict[str, Any]:
    if config is None:
        return {}
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    if isinstance(config, Mapping):
        # A run's configs by section ({"run": RunConfig(...), "grpo": GRPOConfig(...)}) become nested tables.
        return {
            key: dataclasses.asdict(value)
            if dataclasses.is_dataclass(value) and not isinstance(value, type)
            else value
            for key, value in config.items()
        }
    raise ConfigError(f"config={config!r} is not allowed; expected a mapping, a dataclass instance or None")


def _json_fallback(value: Any) -> Any:
    """Paths, enums and other simple objects become strings in config.json rather than failing."""
    return str(value)


def _open_tensorboard(run_dir: Path, enabled: bool | None) -> Any:
    if enabled is False:
        return None
    # torch.utils.tensorboard needs the tensorboard package; tensorboardX is self-contained.
    if importlib.util.find_spec("tensorboard") is not None and importlib.util.find_spec("torch") is not None:
        from torch.utils.tensorboard import SummaryWriter
    elif importlib.util.find_spec("tensorboardX") is not None:
        from tensorboardX import SummaryWriter
    elif enabled is None:
        return None
    else:
        raise ConfigError(
            "tensorboard=True but neither `tensorboard` nor `tensorboardX` is installed; "
            "`pip install tensorboard`, or pass tensorboard=None to use it only when installed"
        )
    return SummaryWriter(log_dir=str(run_dir / "tensorboard"))


def _open_wandb(project: str, run_dir: Path, config: Any) -> Any:
    if importlib.util.find_spec("wandb") is None:
        raise ConfigError(
            f"wandb_project={project!r} but the `wandb` package is not installed; "
            "`pip install wandb`, or pass wandb_project=None"
        )
    import wandb

    return wandb.init(project=project, name=run_dir.name, dir=str(run_dir), config=_config_to_dict(config))
