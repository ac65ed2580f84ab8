"""run_with_timeout: limits, worker replacement, threads, forks, daemonic pools, and no leaks.

Most calls use stdlib functions (time.sleep, operator.add, os.getppid) so the worker needs to import
nothing from the tests; os.getppid run in the worker returns the pid of the process that owns it.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import operator
import os
import pickle
import re
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reasongym.errors import ConfigError, VerifierOutOfMemory, VerifierTimeout
from reasongym.verifiers.timeout import WORKER_MEMORY_BYTES, run_with_timeout, shutdown_workers

SLACK_S = 1.0  # generous for a loaded 2-core CI box; a kill normally lands within milliseconds
PROC = Path("/proc")


class TwoArgError(Exception):
    """Pickles but cannot unpickle: __reduce__ passes one arg to an __init__ that needs two."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"{first} {second}")


def raise_two_arg_error() -> None:
    raise TwoArgError("custom", "failure")


def worker_pid() -> int:
    """Pid of the worker that serves the calling thread right now."""
    return run_with_timeout(os.getpid, (), seconds=10)


def worker_children() -> list[int]:
    """Live or zombie children of this process that run the worker bootstrap (Linux /proc)."""
    me = str(os.getpid())
    found = []
    for entry in PROC.glob("[0-9]*"):
        try:
            ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # the process exited while we looked
            continue
        if ppid == me and b"reasongym.verifiers.timeout" in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("seconds", [0, -1.0, math.nan, math.inf, -math.inf, True, "1"])
def test_bad_limit_is_a_config_error_naming_the_value(seconds: object) -> None:
    with pytest.raises(
        ConfigError, match=rf"seconds={re.escape(repr(seconds))}: must be a finite number of seconds > 0"
    ) as info:
        run_with_timeout(operator.add, (1, 2), seconds=seconds)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


def test_limit_past_a_day_is_a_config_error() -> None:
    # Waiting on the socket takes milliseconds in 32 bits: 3e6 s raised OverflowError in the worker call.
    message = (
        r"seconds=3000000.0: must be a finite number of seconds > 0 and at most 86400 \(for example 1.0\)"
    )
    with pytest.raises(ConfigError, match=message):
        run_with_timeout(operator.add, (1, 2), seconds=3e6)
    assert run_with_timeout(operator.add, (1, 2), seconds=86_400) == 3


def test_importing_the_functions_module_is_not_charged_to_the_call() -> None:
    # No warm-up on purpose: the worker imports slow_import (1 s) while loading the call, and only
    # running ready() counts against the 0.2 s limit.
    import slow_import

    assert run_with_timeout(slow_import.ready, (), seconds=0.2) == "ready"


def test_memory_past_the_worker_limit_is_refused_and_the_worker_replaced() -> None:
    import resource

    assert run_with_timeout(resource.getrlimit, (resource.RLIMIT_AS,), seconds=10)[0] == WORKER_MEMORY_BYTES
    before = worker_pid()
    message = (
        r"builtins.bytearray needed more than the worker's memory limit of 1024 MiB; "
        r"the worker process will be replaced"
    )
    with pytest.raises(VerifierOutOfMemory, match=message) as caught:
        run_with_timeout(bytearray, (2 * WORKER_MEMORY_BYTES,), seconds=30)
    assert isinstance(caught.value, MemoryError)
    assert worker_pid() != before
    assert run_with_timeout(operator.add, (2, 3), seconds=5) == 5


@pytest.mark.parametrize(
    ("fn", "args", "expected"),
    [
        (operator.add, (2, 3), 5),
        (sorted, ([3, 1, 2],), [1, 2, 3]),
        (math.factorial, (20,), 2432902008176640000),
        (str.upper, ("abc",), "ABC"),
    ],
)
def test_returns_the_result(fn: object, args: tuple, expected: object) -> None:
    assert run_with_timeout(fn, args, seconds=5) == expected  # type: ignore[arg-type]


def test_one_persistent_worker_serves_consecutive_calls() -> None:
    first = worker_pid()
    assert {worker_pid() for _ in range(20)} == {first}
    assert first != os.getpid()


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (time.sleep, (30,)),  # sleeping: releases the GIL
        (sum, (range(10**13),)),  # a C loop that holds the GIL and ignores signals but SIGKILL
    ],
)
def test_overrun_times_out_kills_and_replaces_the_worker(fn: object, args: tuple) -> None:
    old = worker_pid()
    started = time.monotonic()
    with pytest.raises(VerifierTimeout, match=r"ran past its limit of 0\.3 s"):
        run_with_timeout(fn, args, seconds=0.3)  # type: ignore[arg-type]
    elapsed = time.monotonic() - started
    assert 0.3 <= elapsed < 0.3 + SLACK_S
    assert not (PROC / str(old)).exists(), "the killed worker must be reaped, not left a zombie"
    assert run_with_timeout(operator.mul, (6, 7), seconds=5) == 42
    assert worker_pid() != old


def test_timeout_is_not_an_exception_so_broad_handlers_do_not_swallow_it() -> None:
    with pytest.raises(VerifierTimeout):
        try:
            run_with_timeout(time.sleep, (30,), seconds=0.2)
        except Exception:  # noqa: BLE001 - exactly the handler the BaseException protects against
            pytest.fail("VerifierTimeout was caught by `except Exception`")


@pytest.mark.parametrize(
    ("fn", "args", "error", "message"),
    [
        (int, ("x",), ValueError, "invalid literal"),
        (operator.truediv, (1, 0), ZeroDivisionError, "division by zero"),
        (operator.getitem, ({}, "missing"), KeyError, "missing"),
    ],
)
def test_exceptions_propagate_with_their_type_and_keep_the_worker(
    fn: object, args: tuple, error: type[Exception], message: str
) -> None:
    before = worker_pid()
    with pytest.raises(error, match=message):
        run_with_timeout(fn, args, seconds=5)  # type: ignore[arg-type]
    assert worker_pid() == before


def test_exception_that_cannot_unpickle_becomes_runtime_error_naming_it() -> None:
    with pytest.raises(RuntimeError, match=r"TwoArgError raised in the verifier worker: custom failure"):
        run_with_timeout(raise_two_arg_error, (), seconds=5)


def test_result_that_cannot_pickle_raises_and_keeps_the_worker() -> None:
    before = worker_pid()
    with pytest.raises(TypeError, match="cannot pickle"):
        run_with_timeout(threading.Lock, (), seconds=5)
    assert worker_pid() == before


def test_function_from_main_is_refused_with_a_clear_message() -> None:
    def local() -> None:
        return None

    local.__module__ = "__main__"
    with pytest.raises(ConfigError, match=r"defined in __main__"):
        run_with_timeout(local, (), seconds=1)


def test_unpicklable_function_fails_in_the_caller() -> None:
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        run_with_timeout(lambda: 1, (), seconds=1)
    assert run_with_timeout(operator.add, (1, 1), seconds=5) == 2


def test_worker_runs_without_writing_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutdown_workers()  # the next worker starts in the empty directory
    assert run_with_timeout(os.getenv, ("PYTHONDONTWRITEBYTECODE",), seconds=5) == "1"
    assert run_with_timeout(os.getcwd, (), seconds=5) == str(tmp_path)
    shutdown_workers()
    assert list(tmp_path.iterdir()) == []


def test_works_off_the_main_thread() -> None:
    results: list[object] = []
    thread = threading.Thread(target=lambda: results.append(run_with_timeout(operator.add, (40, 2), 5)))
    thread.start()
    thread.join(30)
    assert results == [42]


def test_concurrent_threads_get_their_own_results() -> None:
    inputs = list(range(40))
    with ThreadPoolExecutor(max_workers=4) as pool:
        outputs = list(pool.map(lambda n: run_with_timeout(operator.mul, (n, n), seconds=10), inputs))
    assert outputs == [n * n for n in inputs]


def test_concurrent_timeout_does_not_disturb_other_threads() -> None:
    with ThreadPoolExecutor(max_workers=3) as pool:
        slow = pool.submit(run_with_timeout, time.sleep, (30,), 0.3)
        fast = [pool.submit(run_with_timeout, operator.add, (n, 1), 10) for n in range(20)]
        assert [future.result(30) for future in fast] == [n + 1 for n in range(20)]
        with pytest.raises(VerifierTimeout):
            slow.result(30)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_starts_its_own_worker() -> None:
    parent_worker = worker_pid()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 1
        try:
            own = run_with_timeout(os.getppid, (), seconds=10) == os.getpid()
            code = 0 if own else 3
            shutdown_workers()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert worker_pid() == parent_worker, "the parent's worker must survive the child"


def test_works_inside_a_daemonic_pool_worker() -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        pool_pid = pool.apply(os.getpid)
        owner = pool.apply(run_with_timeout, (os.getppid, (), 10))
    assert owner == pool_pid


@pytest.mark.skipif(not PROC.exists(), reason="needs Linux /proc")
def test_shutdown_leaves_no_processes_or_threads() -> None:
    threads_before = threading.active_count()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda n: run_with_timeout(time.sleep, (0.2,), 5), range(2)))
    assert worker_children(), "expected live workers before shutdown"
    shutdown_workers()
    assert worker_children() == []
    assert multiprocessing.active_children() == []
    assert threading.active_count() == threads_before
    assert run_with_timeout(operator.add, (1, 2), seconds=5) == 3  # usable again after shutdown
    shutdown_workers()


def test_a_stopped_worker_costs_the_next_call_its_own_limit_not_a_minute() -> None:
    # Issue 28, item 12: a worker stopped (SIGSTOP, a debugger, a frozen container) made the next call wait
    # the 60 s allowed for loading a module the worker had loaded long before.
    pid = worker_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(VerifierTimeout, match="ran past its limit of 0.5 s"):
            run_with_timeout(os.getpid, (), seconds=0.5)
        assert time.monotonic() - started < 0.5 + SLACK_S
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    assert worker_pid() != pid  # replaced
