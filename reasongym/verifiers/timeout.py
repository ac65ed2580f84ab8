"""Run a function under a hard wall-clock limit in a persistent worker process.

Verifiers hand their sympy work to :func:`run_with_timeout`. The work runs in a separate Python
process that stays alive between calls, so a call costs one round trip over a socket rather than a
process start. When a call runs past its limit the worker is killed (``SIGKILL`` cannot be ignored
by a hung C loop) and reaped, and the next call starts a fresh one.

Why a process and not ``SIGALRM``: an alarm works only on the main thread of the main interpreter,
so it fails in data-loader threads, thread pools and async servers, and it cannot stop a C loop.

Design notes:

- The worker is a fresh interpreter (``subprocess`` with ``fork``/``exec``), which is what the
  ``spawn`` start method of :mod:`multiprocessing` does too, but it also works inside daemonic
  processes (``multiprocessing.Pool`` and DataLoader workers may not start ``multiprocessing``
  children) and does not re-import the caller's ``__main__``.
- Forking a process that runs torch threads is unsafe, so nothing here forks without ``exec``.
- A forked child (``os.fork`` or the ``fork`` start method) never reuses its parent's workers; it
  detects the new pid and starts its own.
- Each worker serves one thread at a time; up to ``min(4, cpu_count)`` workers serve concurrent
  threads, and further threads wait for a free one.
- The clock starts only once the worker has unpickled the call, so importing ``fn``'s module (for
  example sympy, the first time) is not charged to the call's budget.
- The worker writes no files: it runs with ``PYTHONDONTWRITEBYTECODE=1`` and never touches disk.
- Memory is bounded too: the worker's address space is limited to :data:`WORKER_MEMORY_BYTES`
  (``resource.setrlimit``), so a call that needs more fails with ``VerifierOutOfMemory`` and the
  worker is replaced, instead of the machine swapping until the time limit.
- The worker prints integers of up to :data:`WORKER_INT_DIGITS` digits. Python's default of 4,300
  guards against parsing hostile text, which never reaches the worker (it gets syntax trees whose
  values the cost check bounded at 10,000 digits).
- ``seconds`` is at most ``MAX_TIMEOUT_S`` (one day): waiting on a socket takes a limit in
  milliseconds that must fit in 32 bits (about 2.1e6 s).

Why this file is long: both sides of the worker protocol (the caller's pool, the worker's loop) live here,
so that a change to the messages they exchange is made in one place.
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from reasongym.errors import ConfigError, VerifierOutOfMemory, VerifierTimeout
from reasongym.verifiers.base import VERIFY_TIMEOUT_S, check_timeout

T = TypeVar("T")

WORKER_MEMORY_BYTES = 1 << 30
"""Address space a worker may use (1 GiB); a fresh worker with sympy loaded uses about 230 MB."""
WORKER_INT_DIGITS = 100_000
"""Longest integer a worker converts to or from text."""

_MAX_WORKERS = max(1, min(4, os.cpu_count() or 1))
_START_LIMIT_S = 60.0  # interpreter start + package imports on a loaded machine
_LOAD_LIMIT_S = 60.0  # unpickling a call imports fn's module the first time
_REAP_LIMIT_S = 5.0
_STARTED = b"S"
_READY = b"R"
_BOOTSTRAP = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from reasongym.verifiers.timeout import _serve; _serve(int(sys.argv[2]))"
)


def run_with_timeout(fn: Callable[..., T], args: Sequence[Any] = (), seconds: float = VERIFY_TIMEOUT_S) -> T:
    """Call ``fn(*args)`` in a persistent worker process and return its result.

    Safe to call from any thread, from forked children and from daemonic pool workers.

    Args:
        fn: A picklable module-level function (pickled by reference, so the worker imports its
            module; functions defined in ``__main__``, lambdas and closures are not allowed).
        args: Positional arguments for ``fn``; they and the result must be picklable.
        seconds: The wall-clock limit for running ``fn``, a finite number > 0. Starting the worker
            and importing ``fn``'s module are not counted.

    Returns:
        Whatever ``fn(*args)`` returns.

    Raises:
        ConfigError: ``seconds`` is not a number in (0, MAX_TIMEOUT_S], or ``fn`` lives in ``__main__``.
        VerifierTimeout: ``fn`` ran past ``seconds``; the worker was killed and will be replaced.
        VerifierOutOfMemory: ``fn`` needed more than ``WORKER_MEMORY_BYTES``; the worker will be replaced.
        RuntimeError: The worker died (for example it was killed by the OS), or ``fn`` raised an
            exception that cannot be pickled back (the message names its type).
        Exception: Any exception ``fn`` raises is re-raised here with its own type.

    Example:
        >>> import operator
        >>> run_with_timeout(operator.add, (2, 3), seconds=5.0)
        5
    """
    check_timeout("seconds", seconds)  # the one range check of every verifier time budget
    payload = _pack_call(fn, args)
    pool = _current_pool()
    worker = pool.checkout()
    healthy = False
    try:
        reply = worker.call(payload, seconds, _describe(fn))
        healthy = not _out_of_memory(reply)  # its heap may stay fragmented and large: replace it
    finally:
        pool.checkin(worker, healthy)
    if _out_of_memory(reply):
        raise VerifierOutOfMemory(
            f"{_describe(fn)} needed more than the worker's memory limit of "
            f"{WORKER_MEMORY_BYTES // 2**20} MiB; the worker process will be replaced"
        )
    return _unpack_reply(reply)


def shutdown_workers() -> None:
    """Kill and reap every worker this process started; the next call starts a fresh one.

    Registered with :mod:`atexit`. Calls still running in other threads fail with ``RuntimeError``.
    """
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None and pool.pid == os.getpid():
        pool.close()


def _out_of_memory(reply: tuple[Any, ...]) -> bool:
    return reply[0] == "error" and reply[2] == "builtins.MemoryError"


def _describe(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of ``fn`` for messages."""
    module = getattr(fn, "__module__", None) or "?"
    return f"{module}.{getattr(fn, '__qualname__', repr(fn))}"


def _pack_call(fn: Callable[..., Any], args: Sequence[Any]) -> bytes:
    """Pickle the call in the caller, so an unpicklable fn or arg fails here, not in the worker."""
    if getattr(fn, "__module__", None) == "__main__":
        raise ConfigError(
            f"fn={_describe(fn)} is defined in __main__, which the worker process cannot import; "
            "move it into an importable module"
        )
    return pickle.dumps((fn, tuple(args)), protocol=pickle.HIGHEST_PROTOCOL)


def _unpack_reply(reply: tuple[Any, ...]) -> Any:
    """Return the result of an ``ok`` reply or raise the exception of an ``error`` reply."""
    if reply[0] == "ok":
        return reply[1]
    _, blob, type_name, message, remote_traceback = reply
    exc: object = None
    if blob is not None:
        try:
            exc = pickle.loads(blob)
        except Exception:  # the class may not unpickle here (e.g. a custom __init__); fall back below
            exc = None
    if not isinstance(exc, BaseException):
        exc = RuntimeError(f"{type_name} raised in the verifier worker: {message}")
    if hasattr(exc, "add_note"):  # Python >= 3.11
        exc.add_note(f"Traceback in the verifier worker:\n{remote_traceback}")
    raise exc


class _Worker:
    """One worker process and the socket to it; used by one thread at a time."""

    def __init__(self) -> None:
        parent_end, child_end = socket.socketpair()
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        argv = [
            sys.executable,
            "-c",
            _BOOTSTRAP,
            json.dumps([str(entry) for entry in sys.path]),
            str(child_end.fileno()),
        ]
        try:
            self.process = subprocess.Popen(argv, pass_fds=(child_end.fileno(),), env=env)
        finally:
            child_end.close()
        self.conn = Connection(parent_end.detach())
        self.loaded: set[str] = set()  # functions this worker has unpickled (their modules are imported)
        try:
            self._expect_ready()
        except BaseException:
            self.kill()
            raise

    def _expect_ready(self) -> None:
        """Wait until the worker has imported its modules and is listening."""
        if not self.conn.poll(_START_LIMIT_S):
            raise RuntimeError(f"the verifier worker did not start within {_START_LIMIT_S:.0f} s")
        if self.conn.recv_bytes() != _READY:
            raise RuntimeError("the verifier worker sent an unexpected start message")

    def call(self, payload: bytes, seconds: float, name: str) -> tuple[Any, ...]:
        """Send one call and return the decoded reply; kill this worker on anything abnormal.

        Loading ``name`` the first time (importing its module) may take up to ``_LOAD_LIMIT_S`` besides
        ``seconds``; once loaded, unpickling it is instant, so the whole call must fit in ``seconds`` (a
        stopped or wedged worker then costs the call its own limit, not the load allowance).
        """
        deadline = time.monotonic() + seconds
        known = name in self.loaded
        try:
            self.conn.send_bytes(payload)
            first = self._receive(seconds if known else _LOAD_LIMIT_S, name if known else f"loading {name}")
            if first != _STARTED:  # the worker could not unpickle the call and replied at once
                return pickle.loads(first)
            self.loaded.add(name)
            left = max(deadline - time.monotonic(), 0.0) if known else seconds
            return pickle.loads(self._receive(left, name, limit=seconds))
        except BaseException:
            # The reply may still arrive later and would be read by the next call: never reuse.
            self.kill()
            raise

    def _receive(self, seconds: float, name: str, *, limit: float | None = None) -> bytes:
        """Next message within ``seconds``: VerifierTimeout past it, RuntimeError if the worker died.

        ``limit`` is the call's whole limit, for the message (``seconds`` may be what is left of it).
        """
        deadline = time.monotonic() + seconds
        if not self.conn.poll(seconds):
            self.kill()
            overrun = time.monotonic() - deadline
            raise VerifierTimeout(
                f"{name} ran past its limit of {limit or seconds:g} s (killed {overrun * 1000:.0f} ms after it); "
                "the worker process will be replaced"
            )
        try:
            return self.conn.recv_bytes()
        except (EOFError, OSError) as exc:
            self.kill()
            raise RuntimeError(
                f"the verifier worker died while running {name} (exit code {self.process.returncode})"
            ) from exc

    def kill(self) -> None:
        """Kill and reap the process (no zombie), then close the socket. Idempotent."""
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(_REAP_LIMIT_S)
        except subprocess.TimeoutExpired:  # SIGKILL lost only if the kernel is wedged; don't hang
            pass
        self.conn.close()

    def forget(self) -> None:
        """Drop this handle in a forked child without touching the parent's process."""
        self.conn.close()


class _Pool:
    """Idle workers of one process, handed out to one thread at a time."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.free = threading.Condition(threading.Lock())
        self.idle: list[_Worker] = []
        self.live: set[_Worker] = set()
        self.starting = 0
        self.closed = False

    def checkout(self) -> _Worker:
        """An idle worker, or a new one when fewer than the maximum exist; else wait for one."""
        with self.free:
            while not self.idle and len(self.live) + self.starting >= _MAX_WORKERS:
                self.free.wait()
            if self.idle:
                return self.idle.pop()
            self.starting += 1
        worker: _Worker | None = None
        try:
            worker = _Worker()  # slow, so outside the lock
        finally:
            with self.free:
                self.starting -= 1
                if worker is not None:
                    self.live.add(worker)
                self.free.notify()
        return worker

    def checkin(self, worker: _Worker, healthy: bool) -> None:
        """Return a worker after a call; a killed or unhealthy one is dropped."""
        with self.free:
            if healthy and not self.closed:
                self.idle.append(worker)
            else:
                self.live.discard(worker)
                worker.kill()
            self.free.notify()

    def close(self) -> None:
        """Kill every worker of this pool, busy ones included."""
        with self.free:
            self.closed = True
            workers = list(self.live)
            self.idle.clear()
            self.live.clear()
            self.free.notify_all()
        for worker in workers:
            worker.kill()

    def forget(self) -> None:
        """In a forked child: release the inherited sockets, leave the parent's workers alone."""
        for worker in list(self.live):
            worker.forget()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def _current_pool() -> _Pool:
    """This process's pool; a forked child gets a fresh one instead of its parent's."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.pid != os.getpid():
            _POOL = _Pool()
        return _POOL


def _reset_after_fork() -> None:
    """Runs in a forked child: the locks may be held by parent threads that do not exist here."""
    global _POOL, _POOL_LOCK
    inherited, _POOL = _POOL, None
    _POOL_LOCK = threading.Lock()
    if inherited is not None:
        inherited.forget()


atexit.register(shutdown_workers)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _serve(fd: int) -> None:
    """The worker's loop: receive a pickled call, run it, send back the pickled reply."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle, not ours
    _limit_memory(WORKER_MEMORY_BYTES)
    if hasattr(sys, "set_int_max_str_digits"):  # Pythons without it have no such limit
        sys.set_int_max_str_digits(WORKER_INT_DIGITS)
    _exit_with_parent()
    conn = Connection(fd)
    conn.send_bytes(_READY)
    while True:
        try:
            payload = conn.recv_bytes()
        except (EOFError, OSError):  # the caller closed the socket or exited
            return
        try:
            fn, args = pickle.loads(payload)
        except BaseException as exc:  # keep serving; the caller gets the error
            conn.send_bytes(_error_reply(exc))
            continue
        conn.send_bytes(_STARTED)
        try:
            reply = pickle.dumps(("ok", fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # fn's errors, and results that cannot be pickled
            reply = _error_reply(exc)
        conn.send_bytes(reply)


def _limit_memory(limit: int) -> None:
    """Cap this process's address space at ``limit`` bytes (never raising a lower cap)."""
    try:
        import resource
    except ImportError:  # not a Unix: the time limit is the only bound
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    for cap in (soft, hard):
        if cap != resource.RLIM_INFINITY:
            limit = min(limit, cap)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _error_reply(exc: BaseException) -> bytes:
    """Pickle an exception with enough text to rebuild it as a RuntimeError if it won't unpickle."""
    try:
        blob: bytes | None = pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # e.g. an exception holding a lock or a generator
        blob = None
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    return pickle.dumps(("error", blob, name, str(exc), traceback.format_exc()))


def _exit_with_parent() -> None:
    """Exit if the caller dies mid-call (its socket end closes only when fn returns)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="reasongym-parent-watch", daemon=True).start()
