"""Start and stop a real ``reasongym serve-env`` process on a free loopback port (shared by the OpenEnv tests)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen[str], timeout: float = 90.0) -> None:
    """Poll ``url``/health until it answers; fail with the server's output if it exits or never answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {process.stdout.read()}")  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        time.sleep(0.2)
    raise RuntimeError(f"server at {url} did not answer /health within {timeout} s")


@contextlib.contextmanager
def serve_env(env_id: str, *flags: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``reasongym serve-env env_id`` on a free port; yields (base URL, process) and stops it by pid."""
    port = free_port()
    command = [sys.executable, "-m", "reasongym", "serve-env", env_id, "--port", str(port), *flags]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process)
        yield url, process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
