"""Ctrl-C (SIGINT) and SIGTERM during training: the step in progress finishes, a checkpoint is saved, the run
stops, and ``--run-dir`` resumes it.

A trainer marks the stretch of a step that changes its state (the update, the step's logging and checkpoint)
with `HeldSignals`: a signal that arrives there is held until the stretch ends, so weights, optimizer and
schedule are never saved half-updated; a second signal stops at once. Outside it (sampling, which is most of a
real model's step) a signal stops at once and the trainer saves the state of its last finished step. Either
way the trainer raises `TrainingInterrupted` naming the checkpoint (`reasongym.runs.lifecycle.RunLife.interrupted`),
which the command line prints.

Signal handlers can only be set from the main thread; elsewhere (a trainer in a worker thread) `HeldSignals`
holds nothing back (and no signal reaches that thread).
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

from reasongym.errors import TrainingInterrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a run and save it."""


class HeldSignals:
    """SIGINT and SIGTERM held back between `hold` and `release` (main thread only; elsewhere nothing is held)."""

    def __init__(self) -> None:
        """Nothing held yet."""
        self.previous: dict[int, Any] = {}
        self.held: list[int] = []

    def hold(self, what: str) -> None:
        """From now on a signal is remembered (and one line printed), a second one stops at once."""
        if self.previous or threading.current_thread() is not threading.main_thread():
            return

        def remember(signum: int, frame: FrameType | None) -> None:
            if self.held:  # the second Ctrl-C: stop now, without the checkpoint
                raise KeyboardInterrupt
            self.held.append(signum)
            print(
                f"reasongym: {signal.Signals(signum).name}: finishing {what}, then saving a checkpoint "
                "(Ctrl-C again stops at once, without it)",
                file=sys.stderr,
                flush=True,
            )

        self.previous = {signum: signal.signal(signum, remember) for signum in SIGNALS}

    @property
    def holding(self) -> bool:
        """Whether signals are held now: a KeyboardInterrupt raised meanwhile (a second Ctrl-C) left the step
        unfinished, and its state must not be saved."""
        return bool(self.previous)

    def release(self) -> bool:
        """Put the previous handlers back; returns whether a signal arrived meanwhile."""
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        arrived = bool(self.held)
        self.previous, self.held = {}, []
        return arrived


def interrupted(step: int, total: int, run_dir: Any, checkpoint: Any, why: str = "") -> TrainingInterrupted:
    """The exception a trainer raises once it has saved what it could (``checkpoint``: the newest one, or None)."""
    where = f"in {str(run_dir)!r}" if run_dir is not None else "(no run folder)"
    name = getattr(checkpoint, "name", checkpoint)
    saved = "no checkpoint" if checkpoint is None else f"checkpoint {name}"
    message = f"interrupted after step {step} of {total}{why}: {saved} {where}"
    return TrainingInterrupted(message, run_dir=run_dir, step=step)
