"""A process a run depends on died (the sampler that draws its rollouts ahead): say which, how, what is saved
and how to go on, instead of the transport's message (gloo's ``pair.cc:553 Connection closed by peer``).

:func:`helper_died` is the whole logic; a trainer wraps its waits on the helper in it::

    with helper_died("sampler", sampler.process, algo="grpo", run_dir=run_dir):
        batch = sampler.next(step)

as the sampler process's source does (`reasongym.agents.runtime.async_rollouts.AsyncRollouts`, told the
`ResumableRun` at its start).

A failure inside the block while the helper process has ended (reaped within a few seconds) becomes one
:class:`~reasongym.errors.TrainingFailed` line: ``the sampler process (pid 123) was killed by signal 9
(SIGKILL); the run's checkpoints are intact (the latest, step-000002, verified); resume with `reasongym train
grpo --run-dir RUN```. A failure while the helper still runs is not about its death and passes unchanged.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reasongym.errors import CheckpointError, TrainingFailed
from reasongym.policy.checkpoints import latest_checkpoint


@dataclass(frozen=True)
class ResumableRun:
    """The run a dead helper leaves behind, as its error names it."""

    algo: str
    """The trainer's name, as ``reasongym train ALGO`` spells it (the resume command's)."""
    run_dir: Path | None
    """The run folder (None: the run saves nothing, so it starts again)."""


REAP_WAIT_S = 5.0
"""How long the trainer waits for a helper whose connection broke to be seen dead (its exit is reaped after
the socket closes)."""


def describe_exit(process: Any, wait_s: float = REAP_WAIT_S) -> str | None:
    """``"(pid N) was killed by signal 9 (SIGKILL)"`` or ``"(pid N) exited with code 3"`` for a
    ``multiprocessing`` process that has ended (waiting up to ``wait_s`` for it to); None while it runs."""
    process.join(timeout=wait_s)
    code = process.exitcode
    if code is None:
        return None
    if code >= 0:
        return f"(pid {process.pid}) exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = "an unknown signal"
    return f"(pid {process.pid}) was killed by signal {-code} ({name})"


def what_is_saved(algo: str, run_dir: Path | None) -> str:
    """Where the run stands on disk and how to go on: its newest checkpoint, verified, and the resume command."""
    if run_dir is None:
        return "the run has no run folder, so nothing was saved: start it again"
    command = f"`reasongym train {algo} --run-dir {run_dir}` (from Python: the same call with that run_dir)"
    try:
        latest = latest_checkpoint(run_dir, warn=False)
    except CheckpointError as exc:
        return (
            f"the run's checkpoints are damaged ({str(exc).splitlines()[0][:200]}): {command} starts it over"
        )
    if latest is None:
        return f"the run folder {run_dir} holds no checkpoint yet: {command} starts it from step 0"
    return f"the run's checkpoints are intact (the latest, {latest.name}, verified); resume with {command}"


@contextlib.contextmanager
def helper_died(role: str, process: Any | None, *, algo: str, run_dir: Path | None) -> Iterator[None]:
    """Turn a failure in the block into a `TrainingFailed` that names the dead ``role`` process (pid, signal
    or exit code), what the run has saved and the resume command, when ``process`` has ended (None: no
    helper process, the failure passes unchanged)."""
    try:
        yield
    except (RuntimeError, OSError, EOFError) as exc:
        ended = describe_exit(process) if process is not None else None
        if ended is None:
            raise
        raise TrainingFailed(f"the {role} process {ended}; {what_is_saved(algo, run_dir)}") from exc
