"""Issue 51, items 1, 7 and 8: what a hostile client can do to ``reasongym serve-env``. Real server processes on
free loopback ports (stopped by pid), real HTTP and WebSocket clients, real slow sockets."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

pytest.importorskip("openenv.core", reason="the openenv extra is not installed")

from websockets.sync.client import connect  # noqa: E402

import reasongym  # noqa: E402
from tests.envs.openenv_server import serve_env  # noqa: E402

ENV_ID = "reasongym/Arithmetic-v0"


def _post(url: str, payload: object) -> tuple[int, dict]:
    data = json.dumps(payload).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _ws_reset(url: str, data: dict) -> dict:
    with connect(url.replace("http://", "ws://") + "/ws", open_timeout=30) as ws:
        ws.send(json.dumps({"type": "reset", "data": data}))
        return json.loads(ws.recv(timeout=30))


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A server started as a user starts it: no flags."""
    with serve_env(ENV_ID) as (url, _):
        yield url


def _gold(index: int) -> str:
    env = reasongym.make(ENV_ID).unwrapped
    return env.problem_at(index, split=env.source.default_split).answer


# ---------------------------------------------------------------------------------------------- item 1


@pytest.mark.parametrize("option", ["include_answer", "hint"])
def test_a_client_cannot_ask_for_the_gold_answer(server: str, option: str) -> None:
    status, body = _post(f"{server}/reset", {"seed": 0, "options": {"index": 3, option: True}})
    assert status == 400, body
    assert f"reset option {option!r} shows the gold answer" in body["detail"]
    assert "--reveal-answers" in body["detail"] and "\n" not in body["detail"]
    reply = _ws_reset(server, {"seed": 0, "options": {"index": 3, option: "false"}})  # "false" is truthy
    assert (
        reply["type"] == "error"
        and f"reset option {option!r} shows the gold answer" in reply["data"]["message"]
    )
    action = {"completion": "x", "seed": 0, "options": {"index": 3, option: 1}}
    status, body = _post(f"{server}/step", {"action": action})
    assert status == 400 and "shows the gold answer" in body["detail"]


def test_nothing_a_client_is_sent_names_the_gold_answer(server: str) -> None:
    """Reset info carries no problem metadata (a solution equation, the roots, the count), and a step's info
    no verifier reason ("1 is not 74.", which named the gold for the next reset of the same problem)."""
    gold = _gold(3)
    status, body = _post(f"{server}/reset", {"seed": 0, "options": {"index": 3}})
    assert status == 200 and "metadata" not in body["observation"]["info"]
    status, body = _post(
        f"{server}/step", {"action": {"completion": "\\boxed{1}", "seed": 0, "options": {"index": 3}}}
    )
    info = body["observation"]["info"]
    assert status == 200 and info["outcome"] == "wrong" and "reason" not in info
    assert gold not in json.dumps(body)


def test_the_server_may_be_told_to_reveal_answers() -> None:
    with serve_env(ENV_ID, "--reveal-answers") as (url, _):
        status, body = _post(f"{url}/reset", {"seed": 0, "options": {"index": 3, "include_answer": True}})
        assert status == 200 and body["observation"]["info"]["answer"] == _gold(3)
        assert "metadata" in body["observation"]["info"]


# ---------------------------------------------------------------------------------------------- item 7


def test_reset_options_that_are_not_an_object_are_a_one_line_400_without_a_traceback() -> None:
    with serve_env(ENV_ID) as (url, process):
        for options in ([1, 2], "abc", 7):
            status, body = _post(f"{url}/reset", {"seed": 0, "options": options})
            assert status == 400, (options, body)
            assert body["detail"] == (
                f"reset field 'options' must be a JSON object (index, split, difficulty), got {options!r}"
            )
            reply = _ws_reset(url, {"options": options})
            assert reply["type"] == "error" and "must be a JSON object" in reply["data"]["message"]
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        log = process.stdout.read()  # type: ignore[union-attr]
    assert "Traceback" not in log, log[-3000:]


# ---------------------------------------------------------------------------------------------- item 8


@contextlib.contextmanager
def _raw(url: str) -> Iterator[socket.socket]:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    try:
        yield sock
    finally:
        sock.close()


def _answer_of(sock: socket.socket, trickle: bytes = b"", every: float = 0.25, within: float = 30.0) -> bytes:
    """Send ``trickle`` a byte at a time while reading; what the server sent until it closed the connection."""
    sock.settimeout(every)
    received, deadline = b"", time.monotonic() + within
    for byte in [trickle[i : i + 1] for i in range(len(trickle))] + [b""] * 10_000:
        if time.monotonic() > deadline:
            raise AssertionError(f"the server kept a slow connection open {within} s (sent {received!r})")
        with contextlib.suppress(OSError):
            if byte:
                sock.sendall(byte)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk
    return received


@pytest.fixture(scope="module")
def impatient() -> Iterator[str]:
    with serve_env(ENV_ID, "--header-timeout", "1", "--body-timeout", "1") as (url, _):
        yield url


def test_headers_that_never_end_are_timed_out(impatient: str) -> None:
    with _raw(impatient) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: a\r\n")  # the blank line never comes
        assert _answer_of(sock).startswith(b"HTTP/1.1 408 ")
    with _raw(
        impatient
    ) as sock:  # one header byte every 0.25 s: the limit is on the whole header, not a pause
        trickle = b"GET /health HTTP/1.1\r\nHost: a\r\nX-Slow: " + b"a" * 400
        assert _answer_of(sock, trickle).startswith(b"HTTP/1.1 408 ")


def test_a_body_that_never_ends_is_timed_out(impatient: str) -> None:
    head = (
        b"POST /reset HTTP/1.1\r\nHost: a\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n"
    )
    with _raw(impatient) as sock:
        sock.sendall(head + b'{"seed": 0')  # 10 of the 1,000 bytes promised
        answer = _answer_of(sock)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"request body" in answer
    with _raw(impatient) as sock:
        answer = _answer_of(sock, head + b" " * 900)  # a byte every 0.25 s
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_quick_client_is_still_served(impatient: str) -> None:
    status, body = _post(f"{impatient}/reset", {"seed": 0})
    assert status == 200 and body["observation"]["text"]


@pytest.fixture(scope="module")
def bounded() -> Iterator[str]:
    """At most 3 connections; the timeouts long, so only the bound can free a connection here."""
    flags = (
        "--max-connections",
        "3",
        "--max-sessions",
        "3",
        "--header-timeout",
        "300",
        "--body-timeout",
        "300",
    )
    with serve_env(ENV_ID, *flags) as (url, _):
        yield url


def _health(url: str) -> int:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_open_connections_are_bounded_and_a_stalled_one_makes_room(bounded: str) -> None:
    with _raw(bounded) as oldest, _raw(bounded) as second, _raw(bounded) as third:
        for sock in (oldest, second, third):
            sock.sendall(b"GET /health HTTP/1.1\r\n")  # stalled in their headers
        time.sleep(0.5)  # the server has accepted all three
        assert _health(bounded) == 200  # a fourth connection: the oldest stalled one was closed for it
        assert _answer_of(oldest, within=10).startswith(b"HTTP/1.1 503 ")


def test_past_the_bound_with_nothing_stalled_a_connection_is_refused_503(bounded: str) -> None:
    with contextlib.ExitStack() as stack:
        for _ in range(3):  # three live sessions: busy, not stalled
            ws = stack.enter_context(connect(bounded.replace("http://", "ws://") + "/ws", open_timeout=30))
            ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        assert _health(bounded) == 503
    deadline = time.monotonic() + 30
    while _health(bounded) != 200:  # the server frees the slots when it sees the closes
        assert time.monotonic() < deadline
        time.sleep(0.2)


# ---------------------------------------------------------------------------------------------- probe


@pytest.mark.slow  # a server of its own, stopped
def test_a_client_that_never_finishes_its_body_does_not_keep_the_server_from_stopping() -> None:
    """Before: SIGTERM waited on the half-sent body for ever (uvicorn waits for every open request), and a
    WebSocket client that answers nothing left two tracebacks in the log."""
    with serve_env(ENV_ID, "--body-timeout", "600") as (url, process), _raw(url) as sock, _raw(url) as ws:
        sock.sendall(b"POST /reset HTTP/1.1\r\nHost: a\r\ncontent-length: 1000\r\n\r\n{")
        ws.sendall(
            b"GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        assert ws.recv(12) == b"HTTP/1.1 101"  # a session, whose client will never answer again
        time.sleep(0.5)
        started = time.monotonic()
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert time.monotonic() - started < 30
        assert _answer_of(sock, within=10).startswith(b"HTTP/1.1 503 ")
        log = process.stdout.read()  # type: ignore[union-attr]
    assert "Traceback" not in log, log[-3000:]


def test_a_request_echoing_a_lone_surrogate_is_a_422_not_a_500(server: str) -> None:
    """Probe: FastAPI's own 422 echoed the input, which JSON could not encode (a 500 and a traceback)."""
    body = b'{"action": {"completion": "\\ud800", "seed": 0, "options": {"index": 3}}}'
    request = urllib.request.Request(
        f"{server}/step", data=body, headers={"content-type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=30)
    assert caught.value.code == 422 and "string_unicode" in caught.value.read().decode()
    status, answer = _post(f"{server}/step", {"action": {"completion": "7" * 100_001}})
    assert status == 422 and len(json.dumps(answer)) < 2000  # the 100,001 characters are not echoed back


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"difficulty": True}, "reset option 'difficulty' must be an integer or null, got True"),
        ({"split": 5}, "reset option 'split' must be a string or null, got 5"),
    ],
)
def test_reset_option_types_are_checked(server: str, options: dict, message: str) -> None:
    """Probe: difficulty True was taken as level 1 under a problem id reading 'dTrue'."""
    status, body = _post(f"{server}/reset", {"seed": 0, "options": options})
    assert (status, body["detail"]) == (400, message)
