"""The life of one training run, the same for every trainer (SFT, STaR, GRPO, DAPO, and the demo through them).

A trainer says what a step is; `RunLife` does the rest of what a run needs around its steps:

- the folder: created or reopened, locked by rank 0 for the whole job before the model loads, given its
  ``run.json`` and tokenizer, and removed again when a start fails before anything is saved (`job_folder`,
  which the command line and the demo enter around their trainer; `RunLife.open` takes the same lock again);
- the record: ``config.json`` (every config of the run, by section) and the metrics and samples writers;
- checkpoints: which one to resume from (rank 0 picks it, every rank loads it, a finished run is refused) and
  saving one (rank 0 writes, every rank waits for it);
- interrupts: Ctrl-C and SIGTERM are held from the start of a step's update to the end of the step
  (`HeldSignals`), and `RunLife.interrupted` saves the last finished step and says where (issue 29);
- the plot of the run's curves, drawn when it closes.

Every write into a run folder during training happens here, on rank 0 only (`RunLife.writes`); a trainer that
writes a file of its own into the folder (STaR's kept rationales and base weights, the KL reference's record)
does it through `RunLife.write` or `RunLife.on_main`. Without a run folder (``run_dir=None``) nothing is
written and nothing is resumed.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

from reasongym import distributed
from reasongym.errors import ConfigError, TrainingInterrupted
from reasongym.policy.checkpoints import (
    checkpoint_step,
    ensure_steps_remaining,
    latest_checkpoint,
    save_checkpoint,
)
from reasongym.runs.folder import RunDir, SamplesWriter
from reasongym.runs.interrupts import HeldSignals, interrupted
from reasongym.runs.metrics import MetricsWriter
from reasongym.runs.plots import plot_metrics, plot_title

T = TypeVar("T")


class RunSettings(Protocol):
    """What a run's life reads of its `reasongym.agents.config.RunConfig` (the layer below agents cannot
    import it)."""

    @property
    def max_steps(self) -> int: ...
    @property
    def save_every(self) -> int: ...
    @property
    def keep_checkpoints(self) -> int: ...
    @property
    def samples_every(self) -> int: ...
    @property
    def tensorboard(self) -> bool | None: ...
    @property
    def wandb_project(self) -> str | None: ...


@dataclass(frozen=True)
class Plot:
    """The picture of a run's curves that `RunLife` draws into its folder."""

    file: str
    """File name inside the run folder, e.g. ``metrics.png``."""
    keys: Sequence[str]
    """Panels: each entry draws every metric key that starts with it."""
    title: str
    """What the title names (the algorithm), before the run and environment."""
    env: str | None = None
    """The environment id the title names, if any."""
    x_label: str = "step"
    """The x axis's label (STaR counts iterations)."""


@dataclass
class RunLife:
    """One run's folder, lock, writers, checkpoints, interrupts and plot; open it with `RunLife.open`."""

    folder: RunDir | None
    """The run folder, or None (no files, no resume)."""
    settings: RunSettings
    """Steps, checkpoint cadence and logging backends."""
    info: distributed.DistInfo
    """This process's place in the job; rank 0 alone writes."""
    plot: Plot | None = None
    """The picture drawn into the folder when the run closes (and by `draw`)."""
    writer: MetricsWriter | None = None
    """``metrics.jsonl`` and ``config.json``: rank 0's, once `open_writers` ran."""
    samples: SamplesWriter | None = None
    """``samples.jsonl``: rank 0's, once `open_writers` ran with samples."""
    signals: HeldSignals = field(default_factory=HeldSignals)
    """Holds Ctrl-C and SIGTERM from `hold` to `release`."""
    held: ExitStack = field(default_factory=ExitStack)
    """The folder's lock (rank 0), released by `close`."""

    @classmethod
    def open(
        cls,
        run_dir: RunDir | str | os.PathLike[str] | None,
        settings: RunSettings,
        *,
        plot: Plot | None = None,
        info: distributed.DistInfo | None = None,
    ) -> RunLife:
        """Open (or create) the run folder and, on rank 0, take its lock for the job: a second trainer on the
        same folder fails here. Re-entrant: the command line locks the folder before the trainer does."""
        folder = RunDir.open(run_dir, create=True) if isinstance(run_dir, str | os.PathLike) else run_dir
        life = cls(folder, settings, info or distributed.current(), plot)
        if folder is not None and life.info.is_main:
            life.held.enter_context(folder.lock())
        return life

    @property
    def path(self) -> Path | None:
        """The run folder's path, or None."""
        return None if self.folder is None else self.folder.path

    @property
    def writes(self) -> bool:
        """Whether this process writes the run folder: there is one, and this is rank 0."""
        return self.folder is not None and self.info.is_main

    def write(self, fn: Callable[[Path], T]) -> T | None:
        """``fn(folder)`` on rank 0 when there is a folder, for a file a trainer writes there itself; None
        elsewhere. Not a collective: rank 0 alone may call it."""
        return fn(self.folder.path) if self.folder is not None and self.info.is_main else None

    def on_main(self, fn: Callable[[Path], T]) -> T | None:
        """``fn(folder)`` on rank 0 with its result on every rank (`distributed.on_main`), for what one process
        reads or writes and every rank must learn; None without a folder. Every rank calls it."""
        folder = self.folder
        if folder is None:
            return None
        return distributed.on_main(lambda: fn(folder.path), self.info)

    # ------------------------------------------------------------------------------------------ resume

    def checkpoint_to_resume(
        self, refuse: Callable[[int, int], None] = ensure_steps_remaining
    ) -> Path | None:
        """The newest intact checkpoint of the folder, the one rank 0 finds, on every rank; None on a fresh
        start. ``refuse(step, max_steps)`` raises for a checkpoint with no steps left to train."""
        checkpoint = self.on_main(latest_checkpoint)
        if checkpoint is not None:
            step = checkpoint_step(checkpoint)
            refuse(step, self.settings.max_steps)
            if self.info.is_main:
                unit = self.plot.x_label if self.plot is not None else "step"
                print(f"reasongym: resuming from {unit} {step} ({checkpoint})", file=sys.stderr, flush=True)
        return checkpoint

    # ------------------------------------------------------------------------------------------ record

    def open_writers(
        self, config: Mapping[str, Any], resumed_from: int | None, *, samples: bool = False
    ) -> None:
        """Write ``config.json`` and open ``metrics.jsonl`` (and ``samples.jsonl``) on rank 0. On resume the
        lines after ``resumed_from`` are dropped (they are about to be logged again); on a fresh start an old
        file is set aside."""
        if not self.writes:
            return
        assert self.folder is not None
        if not self.folder.run_info_path.is_file():  # started from Python: no command wrote one
            self.folder.write_run_info(python_run_info(config, self.plot))
        settings = self.settings
        self.writer = MetricsWriter(
            self.folder.path,
            tensorboard=settings.tensorboard,
            wandb_project=settings.wandb_project,
            config=config,
            resume_from_step=resumed_from,
        )
        if samples:
            every = settings.samples_every
            self.samples = SamplesWriter(self.folder, every=every, resume_from_step=resumed_from)

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        """One line of ``metrics.jsonl`` (rank 0, with a folder)."""
        if self.writer is not None:
            self.writer.log(step, metrics)

    def write_samples(self, step: int, rows: Callable[[], Sequence[Mapping[str, Any]]]) -> None:
        """``rows()`` into ``samples.jsonl`` when ``step`` is due (rank 0, with a folder)."""
        if self.samples is not None and self.samples.due(step):
            self.samples.write(step, rows())

    # ------------------------------------------------------------------------------------------ checkpoints

    def save_due(self, step: int) -> bool:
        """Whether ``step`` is checkpointed: every ``save_every`` steps, and the last one."""
        every = self.settings.save_every
        return self.folder is not None and (
            bool(every and step % every == 0) or step == self.settings.max_steps
        )

    def save(self, step: int, *, model: Any, trainer_state: Mapping[str, Any], **states: Any) -> None:
        """Checkpoint ``step`` (rank 0; `save_checkpoint` takes ``states``: optimizer, scheduler, gathered
        model and optimizer states); every rank calls it and waits, so that none runs ahead of a checkpoint
        it might resume from."""
        if self.writes:
            keep = self.settings.keep_checkpoints
            save_checkpoint(
                self.folder, step, model=model, trainer_state=trainer_state, keep_last=keep, **states
            )
        distributed.barrier(self.info)

    # ------------------------------------------------------------------------------------------ interrupts

    def hold(self, what: str) -> None:
        """From now on Ctrl-C and SIGTERM wait for ``what`` (the step) to finish."""
        self.signals.hold(what)

    def release(self) -> None:
        """End of the held stretch: a signal that arrived during it stops the run now."""
        if self.signals.release():
            raise KeyboardInterrupt

    def interrupted(
        self, done: int, *, save: Callable[[], None] | None = None, why: str = ""
    ) -> TrainingInterrupted:
        """After Ctrl-C or SIGTERM: ``save()`` the last finished step ``done`` when the folder holds no
        checkpoint of it yet, and return the exception that says where. ``save=None``: the trainer checkpoints
        every finished step itself (STaR); ``why`` says what is redone on resume.

        Nothing is saved without a run folder, on a rank other than 0, across processes (a save gathers over
        ranks that may be gone), or when the signal stopped a step inside its held stretch (a second Ctrl-C:
        the weights are not those of a finished step).
        """
        mid_step = self.signals.holding
        self.signals.release()
        total, path = self.settings.max_steps, self.path
        if not self.writes:
            return interrupted(done, total, None, None)
        checkpoint = latest_checkpoint(self.folder)
        if save is None:
            return interrupted(done, total, path, checkpoint, why)
        if mid_step:
            return interrupted(done, total, path, checkpoint, f"; stopped inside step {done + 1}, unfinished")
        if self.info.world_size > 1:
            why = "; across processes a checkpoint is saved every save_every steps only"
            return interrupted(done, total, path, checkpoint, why)
        if done > (checkpoint_step(checkpoint) if checkpoint is not None else 0):
            save()
            checkpoint = latest_checkpoint(self.folder)
        return interrupted(done, total, path, checkpoint)

    # ------------------------------------------------------------------------------------------ end

    def draw(self) -> None:
        """Draw `plot` from ``metrics.jsonl`` (rank 0, with a folder that has logged lines). Plotting is a
        convenience: a failure is a warning, never the run's end."""
        if (
            self.plot is None
            or self.folder is None
            or not self.writes
            or not self.folder.metrics_path.exists()
        ):
            return
        plot, run = self.plot, self.folder
        try:
            title = plot_title(run.path, plot.title, plot.env)
            picture = run.path / plot.file
            plot_metrics(run.metrics_path, picture, keys=plot.keys, title=title, x_label=plot.x_label)
        except (ImportError, ConfigError) as error:
            warnings.warn(f"could not plot the metrics: {error}", RuntimeWarning, stacklevel=2)

    def close(self, *, plot: bool = True) -> None:
        """Close the writers, draw the plot (``plot``), release the signals and then the folder's lock."""
        self.signals.release()
        with self.held:  # the folder's lock goes last, whatever happens before
            for handle in (self.writer, self.samples):
                if handle is not None:
                    handle.close()
            if plot:
                self.draw()

    def __enter__(self) -> RunLife:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def python_run_info(config: Mapping[str, Any], plot: Plot | None) -> dict[str, Any]:
    """What ``run.json`` says of a run a trainer was called on from Python: its algorithm and environment; the
    model and preset are the caller's objects, which the run cannot name (``reasongym train`` and ``reasongym
    demo`` write the whole record, `job_folder`)."""
    return {
        "algo": config.get("algo"),
        "env": plot.env if plot is not None else None,
        "model": None,
        "preset": None,
        "started_by": "python",
    }


def discard_if_empty(folder: RunDir) -> bool:
    """Remove a run folder made by a start that failed before it saved a checkpoint or logged a step (and point
    ``latest`` back); returns whether it was removed. One that logged steps is kept: its metrics and samples
    are a record of what ran."""
    if latest_checkpoint(folder) is not None:
        return False
    if folder.metrics_path.is_file() and folder.metrics_path.stat().st_size > 0:
        return False
    folder.discard()
    return True


@dataclass(frozen=True)
class Job:
    """The run folder of one training job, as `job_folder` hands it to the command that trains in it."""

    folder: RunDir
    """The locked run folder (every rank knows it; rank 0 holds the lock)."""
    info: distributed.DistInfo
    """This process's place in the job."""

    @property
    def path(self) -> Path:
        """The run folder's path."""
        return self.folder.path

    def keep_tokenizer(self, tokenizer: Any) -> None:
        """Save the tokenizer beside the checkpoints (rank 0): `reasongym eval RUN_DIR` finds it there."""
        if self.info.is_main:
            tokenizer.save_pretrained(self.folder.path)


@contextmanager
def job_folder(
    parent: str | os.PathLike[str],
    *,
    resume: RunDir | None,
    name: tuple[str, str, int],
    run_info: Mapping[str, Any],
    info: distributed.DistInfo,
) -> Iterator[Job]:
    """The run folder of one training job, on every rank, for the job's whole length.

    Rank 0 creates it under ``parent`` (or reopens ``resume``), takes its lock before anything is loaded or
    written (a second trainer on it fails here, at once) and writes ``run.json`` (``run_info``). When the job
    fails or is interrupted, a folder made here that holds nothing yet (`discard_if_empty`) is removed after
    the lock is released, and a `TrainingInterrupted` says so.

    Args:
        parent: Where a new run folder is made.
        resume: The folder of a run being resumed (never removed), or None for a new one.
        name: ``(algo, env, seed)`` of a new folder's name.
        run_info: What ``run.json`` records (the algorithm, model, environment, preset, the command): every
            run folder says what it is, and a model loaded from it brings its preset (``reasongym train --model
            RUN`` reads it).
        info: This process's place in the job.
    """
    created: list[RunDir] = []
    held = ExitStack()

    def open_folder() -> RunDir:
        algo, env, seed = name
        folder = resume or RunDir.create(parent, algo=algo, env=env, seed=seed)
        created.extend([] if resume else [folder])
        held.enter_context(folder.lock())
        folder.write_run_info(run_info)
        return folder

    try:
        with held:
            yield Job(distributed.on_main(open_folder, info), info)
    except BaseException as failure:
        for folder in created:
            _after_failed_start(folder, failure)
        raise


def _after_failed_start(folder: RunDir, failure: BaseException) -> None:
    """Remove ``folder`` when it holds nothing to resume or read; say what happened in an interrupt's message."""
    if latest_checkpoint(folder) is not None:
        return
    if discard_if_empty(folder):
        if isinstance(failure, TrainingInterrupted):
            failure.args = (f"{failure}; the run folder held nothing to resume and was removed",)
    elif isinstance(failure, TrainingInterrupted):
        # Across processes an interrupt saves no checkpoint (the ranks need not stop at the same step).
        failure.args = (
            f"{failure}; no checkpoint to resume from (set --save-every to save one every few steps); "
            f"the metrics and samples so far are kept in {folder.path}",
        )
