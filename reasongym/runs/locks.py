"""One writer at a time: an exclusive lock on a run folder or an evaluation file, held by one process.

Two trainers on one run folder, or two evaluations on one ``--out``, would interleave their writes and
both exit 0 with a file that matches neither. `exclusive_lock` takes an ``fcntl.flock`` lock on a file
(the evaluation file itself, or ``<run>/.lock``); the second process fails at once with
`ResourceBusyError`, naming the holder's pid where ``/proc/locks`` shows it. The kernel drops the lock
when its holder exits, however it exits (SIGKILL included), so a lock is never stale.

Locks are re-entrant within one process: the command line locks a run folder before writing ``run.json``,
and the trainer it calls locks the same folder again. Where ``fcntl`` does not exist (Windows), nothing is
locked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO

from reasongym.errors import ResourceBusyError

RUN_LOCK_FILE = ".lock"
"""The lock file inside a run folder."""

_HELD: dict[str, tuple[IO[str], int]] = {}
"""Locks this process holds: resolved path -> (open file, nesting depth)."""


@contextmanager
def exclusive_lock(path: str | os.PathLike[str], *, what: str, hint: str) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing; never truncated) for the ``with`` block.

    Args:
        path: The file to lock.
        what: What the lock protects, for the message (``"run folder 'runs/x'"``).
        hint: What the user can do instead, for the message (``"use another --out"``).

    Raises:
        ResourceBusyError: Another process holds the lock; the message names it, its pid and ``hint``.
        ConfigError: ``path`` cannot be opened for writing (the message names it).
    """
    key = str(Path(path).resolve())
    if key in _HELD:
        handle, depth = _HELD[key]
        _HELD[key] = (handle, depth + 1)
        try:
            yield
        finally:
            _release(key)
        return
    handle = _acquire(Path(path), what, hint)
    _HELD[key] = (handle, 1)
    try:
        yield
    finally:
        _release(key)


def check_free(path: str | os.PathLike[str], *, what: str, hint: str) -> None:
    """Raise ResourceBusyError now if another process holds the lock on ``path``, so that a command that will
    take it fails before minutes of imports and model loading, not after; the lock itself is taken later.
    A missing file is free (a writer creates the file it locks)."""
    if Path(path).is_file():
        with exclusive_lock(path, what=what, hint=hint):
            pass


def is_held(path: str | os.PathLike[str]) -> bool:
    """Whether this process holds the lock on ``path``."""
    return str(Path(path).resolve()) in _HELD


def _acquire(path: Path, what: str, hint: str) -> IO[str]:
    try:
        import fcntl
    except ModuleNotFoundError:  # pragma: no cover - Windows: no advisory locks here
        return open(os.devnull, "a", encoding="utf-8")  # noqa: SIM115
    from reasongym.errors import ConfigError

    try:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release
    except OSError as exc:
        raise ConfigError(f"cannot open {str(path)!r} for writing ({what}): {exc.strerror}") from exc
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(path)
        handle.close()
        raise ResourceBusyError(
            f"{what} is in use by another process{holder}: two writers would mix their records; wait for it "
            f"to finish, or {hint}"
        ) from None
    return handle


def _holder(path: Path) -> str:
    """`` (pid N)`` when Linux's ``/proc/locks`` names the holder of ``path``'s lock, else ``""``."""
    try:
        inode = os.stat(path).st_ino
        lines = Path("/proc/locks").read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    for line in lines:  # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
        parts = line.split()
        if len(parts) > 5 and parts[1] == "FLOCK" and parts[5].rsplit(":", 1)[-1] == str(inode):
            return f" (pid {parts[4]})"
    return ""


def _release(key: str) -> None:
    handle, depth = _HELD[key]
    if depth > 1:
        _HELD[key] = (handle, depth - 1)
        return
    del _HELD[key]
    handle.close()  # closing the descriptor drops the flock


def run_folder_lock(folder: str | os.PathLike[str]) -> AbstractContextManager[None]:
    """`exclusive_lock` on ``<folder>/.lock``, with the message of a run folder."""
    return exclusive_lock(
        Path(folder) / RUN_LOCK_FILE,
        what=f"run folder {str(folder)!r}",
        hint="start a new run (--output-dir) instead of resuming this one",
    )
