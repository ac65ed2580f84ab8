"""``reasongym.make("openenv://HOST:PORT")``: a gymnasium.Env over a served environment, ours and OpenEnv's own."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import gymnasium
import pytest

pytest.importorskip("openenv.core", reason="the openenv extra is not installed")

import reasongym  # noqa: E402
from reasongym.envs.remote import RemoteEnv, server_url  # noqa: E402
from reasongym.errors import ConfigError, ServerError  # noqa: E402
from tests.envs.openenv_server import free_port, serve_env, wait_healthy  # noqa: E402

ENV_ID = "reasongym/Arithmetic-v0"


def test_a_served_env_plays_like_the_local_one() -> None:
    local = reasongym.make(ENV_ID)
    with serve_env(ENV_ID, "--reveal-answers") as (url, _):  # the test reads the gold from the server
        remote = reasongym.make(f"openenv://{url.removeprefix('http://')}")
        assert isinstance(remote, gymnasium.Env)
        for seed in (0, 1):
            prompt, info = remote.reset(seed=seed, options={"include_answer": True})
            local_prompt, local_info = local.reset(seed=seed)
            assert (prompt, info["problem_id"]) == (local_prompt, local_info["problem_id"])
            right = remote.step(f"The final answer is \\boxed{{{info['answer']}}}.")
            assert right[1:4] == (1.0, True, False)
            assert right[4]["correct"] is True
        remote.reset(seed=0)
        assert remote.step("no idea")[1:3] == (0.0, True)
        with pytest.raises(ServerError, match=r"refused step: .*no open episode"):
            remote.step("again")  # the episode ended: the server says so in one line
        remote.close()


def test_a_dead_server_is_a_one_line_error_not_a_hang() -> None:
    port = free_port()  # nothing listens there
    env = RemoteEnv(f"openenv://127.0.0.1:{port}", connect_timeout_s=2)
    start = time.monotonic()
    with pytest.raises(
        ServerError, match=rf"OpenEnv server http://127.0.0.1:{port} cannot be reached"
    ) as err:
        env.reset(seed=0)
    assert "\n" not in str(err.value)
    assert time.monotonic() - start < 10


def test_a_server_that_never_answers_times_out() -> None:
    """A socket that accepts and then says nothing: the WebSocket handshake runs past its limit."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
    thread.start()
    env = RemoteEnv(f"openenv://127.0.0.1:{listener.getsockname()[1]}", connect_timeout_s=1, timeout_s=1)
    start = time.monotonic()
    try:
        with pytest.raises(ServerError, match="cannot be reached") as err:
            env.reset()
        assert "\n" not in str(err.value)
        assert time.monotonic() - start < 10
    finally:
        for conn in accepted:
            conn.close()
        listener.close()


@pytest.mark.slow  # a server of its own, killed
def test_a_server_that_dies_mid_session_is_a_one_line_error() -> None:
    with serve_env(ENV_ID) as (url, process):
        env = RemoteEnv(url, timeout_s=5)
        env.reset(seed=0)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        with pytest.raises(
            ServerError, match=r"OpenEnv server .* (closed the connection|cannot be reached)"
        ) as err:
            env.step("4")
        assert "\n" not in str(err.value)


@pytest.mark.slow  # `openenv init`, then a server of its own
def test_openenvs_own_echo_example(tmp_path: Path) -> None:
    """OpenEnv's example environment, made by its own `openenv init` and served by uvicorn."""
    openenv = shutil.which("openenv", path=str(Path(sys.executable).parent))
    if openenv is None:
        pytest.skip("the openenv command is not installed beside this Python")
    subprocess.run([openenv, "init", "echo_env"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "server.app:app",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(
        command, cwd=tmp_path / "echo_env", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
        env = reasongym.make(
            f"openenv://127.0.0.1:{port}", action_field="message", observation_field="echoed_message"
        )
        assert env.reset()[0] == "Echo Env environment ready!"
        text, reward, terminated, truncated, info = env.step("hello")
        assert (text, reward, terminated, truncated, info["message_length"]) == (
            "hello",
            0.5,
            False,
            False,
            5,
        )
        env.close()
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        process.stdout.close()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("address", "url"),
    [
        ("openenv://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("ws://host:1/", "http://host:1"),
        ("https://env.example/", "https://env.example"),
    ],
)
def test_addresses(address: str, url: str) -> None:
    assert server_url(address) == url


@pytest.mark.parametrize("address", ["", "openenv://", "127.0.0.1:8000", "openenv://:"])
def test_a_bad_address_is_refused(address: str) -> None:
    with pytest.raises(ConfigError, match="OpenEnv address"):
        server_url(address)
