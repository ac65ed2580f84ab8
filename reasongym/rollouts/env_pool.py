"""Many copies of one environment, stepped in parallel: what `reasongym.rollouts.episodes` plays on.

Each episode gets its own copy of the environment, wrappers included, sharing only the read-only problem
source, so stepping the copies from several threads shares no state. The expensive part of a step is the
verifier: its sympy work runs in worker processes (`reasongym.verifiers.timeout`, up to
``min(4, cpu_count)`` of them), which the calling thread waits on with the GIL released; a threaded batch
therefore keeps every worker busy, and a comparison that runs into its time limit (graded ``timeout``,
reward 0) blocks only its own thread.

The pool widens only when it has something to overlap: the calling thread steps the rows in order, and
once a single step has run past `SLOW_STEP_S` the remaining rows go to a thread pool. Cheap batches (64
integer answers: about 6 ms of stepping) so pay for no thread at all; handing even those to one worker
thread while the caller watched cost 1.5 ms of CPU and, on a loaded 2-core machine, 10-15 ms of waiting. The copies are made by pickling
the env once and unpickling it per row (a deep copy per row was 13 of the 28 ms that 64 single-turn
Arithmetic rows spent outside the generator); a trainer keeps its copies from batch to batch in an `EnvPool`.

Measured before keeping the pool (2 cores, 128 completions: 16 MATH-500 problems x 8 answers that are
right or wrong in symbolic ways, about 27 sympy calls per batch, fresh answers on every run): 1 thread
0.25 s, 2 threads 0.13-0.15 s, 4 threads 0.14-0.17 s per batch. The pool is kept: it halves the grading
time here and turns a 1 s sympy timeout from a stall of the batch into a stall of one thread.
"""

from __future__ import annotations

import collections
import copy
import io
import os
import pickle
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium

from reasongym.errors import ConfigError

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]
"""What ``env.step`` returns: ``(observation, reward, terminated, truncated, info)``."""

DEFAULT_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads used by `step_all`: as many as the verifier has worker processes, no more."""
SLOW_STEP_S = 0.005
"""A step running longer than this makes `step_all` spread the remaining rows over its threads.

Grading an integer-like answer takes about 0.1 ms; one that needs sympy goes to a worker process
and takes milliseconds, so a step this slow means there is waiting worth overlapping."""


def step_all(
    envs: Sequence[gymnasium.Env], actions: Sequence[str], *, threads: int | None = None
) -> list[StepResult]:
    """Call ``envs[i].step(actions[i])`` for every ``i``, widening to a thread pool once a step is slow.

    The calling thread steps the rows in order; once a single step has taken longer than `SLOW_STEP_S`
    (a sympy comparison, a time limit), the remaining rows are spread over ``threads`` threads. A batch
    of cheap steps (integer answers) thus pays for no thread, and after the first slow step a slow one
    holds up only its own thread.

    Args:
        envs: Distinct environment instances, each with an open episode (never the same one twice:
            an environment is not safe to step from two threads).
        actions: One action (the model's text) per environment.
        threads: Most steps running at once; ``None`` means `DEFAULT_THREADS`, 1 steps in order.

    Returns:
        One step result per environment, in order.

    Raises:
        ConfigError: ``envs`` and ``actions`` differ in length, or the same environment appears twice.
        Exception: Whatever a step raises is re-raised here.
    """
    if len(envs) != len(actions):
        raise ConfigError(f"got {len(envs)} envs but {len(actions)} actions; give one action per env")
    if len({id(env) for env in envs}) != len(envs):
        raise ConfigError("the same environment instance appears twice; each episode needs its own env")
    workers = min(threads or DEFAULT_THREADS, len(envs))
    results: list[StepResult] = []
    for env, action in zip(envs, actions, strict=True):
        started = time.perf_counter()
        results.append(env.step(action))
        rest = len(envs) - len(results)
        if workers > 1 and rest and time.perf_counter() - started > SLOW_STEP_S:
            queue = _StepQueue(envs[len(results) :], actions[len(results) :])
            width = min(workers, rest)
            with ThreadPoolExecutor(max_workers=width, thread_name_prefix="reasongym-step") as pool:
                for future in [pool.submit(queue.drain) for _ in range(width)]:
                    future.result()  # re-raises a step's exception
            return results + queue.results
    return results


class _StepQueue:
    """Rows waiting to be stepped, taken in order by however many threads drain it."""

    def __init__(self, envs: Sequence[gymnasium.Env], actions: Sequence[str]) -> None:
        self.pending = collections.deque(enumerate(zip(envs, actions, strict=True)))
        self.results: list[Any] = [None] * len(envs)

    def drain(self) -> None:
        """Step rows until none are left (deque pops are atomic, so threads never share a row)."""
        while True:
            try:
                row, (env, action) = self.pending.popleft()
            except IndexError:
                return
            self.results[row] = env.step(action)


def env_attr(env: gymnasium.Env, name: str, default: Any) -> Any:
    """An attribute of the outermost wrapper that has it, else of the base env, else ``default``."""
    try:
        return env.get_wrapper_attr(name)
    except AttributeError:
        return default


def episode_envs(env: gymnasium.Env, count: int) -> list[gymnasium.Env]:
    """``count`` independent copies of ``env`` (wrappers included) sharing its read-only problem source.

    The env is pickled once and unpickled per copy, which yields what a deep copy does (a fresh
    memo per copy, the source shared) at a quarter of the cost; an env that pickle cannot handle
    (a local function, a lambda) is deep-copied instead.
    """
    source = getattr(env.unwrapped, "source", None)
    try:
        blob = _pickle_sharing(env, source)
    except (pickle.PicklingError, TypeError, AttributeError):
        blob = None
    if blob is not None:
        return [_unpickle_sharing(blob, source) for _ in range(count)]
    shared = {id(source): source} if source is not None else {}
    try:
        # A fresh memo per copy: a shared one would hand every copy the same objects.
        return [copy.deepcopy(env, dict(shared)) for _ in range(count)]
    except (TypeError, copy.Error) as exc:  # holds something uncopyable, e.g. a lock or a socket
        if env.spec is None:
            raise ConfigError(
                f"env {env} cannot be copied ({exc}) and has no spec to re-make it from; pass an env id "
                "instead, or make the env deep-copyable"
            ) from exc
        return [gymnasium.make(env.spec) for _ in range(count)]


class EnvPool:
    """Copies of one environment kept from batch to batch, as a vector environment keeps its sub-environments.

    A batch takes as many copies as it has rows (`take`) and resets each one; copies are made (`episode_envs`)
    only when the pool is first that wide. Each copy's episodes follow one another and never overlap, so the
    rows of a batch still share no state. What reuse saves is per-copy work: unpickling a copy, and the checks
    Gymnasium's ``PassiveEnvChecker`` wrapper runs on the first reset and the first step of every new copy
    (about 0.25 ms each on a 2-core machine, a third of a 64-row batch's time outside the sampler before this
    pool). A trainer keeps one pool for its run and closes it at the end.
    """

    def __init__(self, env: gymnasium.Env) -> None:
        """A pool of copies of ``env`` (which is never stepped itself)."""
        self.env = env
        self.copies: list[gymnasium.Env] = []

    def take(self, count: int) -> list[gymnasium.Env]:
        """``count`` distinct copies, for one batch; valid until the next ``take``."""
        if count > len(self.copies):
            self.copies += episode_envs(self.env, count - len(self.copies))
        return self.copies[:count]

    def close(self) -> None:
        """Close every copy (the pool can be used again; it then makes new ones)."""
        for copy_ in self.copies:
            copy_.close()
        self.copies = []


_SHARED_SOURCE = "reasongym-shared-source"
"""Pickle's stand-in for the problem source, which every copy shares instead of copying."""


class _SharingPickler(pickle.Pickler):
    """Pickles everything but ``shared``, which it writes as a reference."""

    def __init__(self, buffer: io.BytesIO, shared: Any) -> None:
        super().__init__(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj: Any) -> str | None:
        return _SHARED_SOURCE if self.shared is not None and obj is self.shared else None


class _SharingUnpickler(pickle.Unpickler):
    """Reads `_SharingPickler` bytes, resolving the reference to ``shared``."""

    def __init__(self, blob: bytes, shared: Any) -> None:
        super().__init__(io.BytesIO(blob))
        self.shared = shared

    def persistent_load(self, pid: Any) -> Any:
        if pid != _SHARED_SOURCE:
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        return self.shared


def _pickle_sharing(env: gymnasium.Env, source: Any) -> bytes:
    """``env`` pickled with ``source`` (if not None) left out as a reference."""
    buffer = io.BytesIO()
    _SharingPickler(buffer, source).dump(env)
    return buffer.getvalue()


def _unpickle_sharing(blob: bytes, source: Any) -> gymnasium.Env:
    """A fresh env from `_pickle_sharing`'s bytes, its source reference pointing at ``source``."""
    return _SharingUnpickler(blob, source).load()
