"""Hostile OpenEnv servers for the ``openenv://`` client: real WebSocket servers on a free loopback port that
answer with what a broken or hostile server sends (a fault injector; `openenv_server.py` runs the real one).

``scripted_server(answer)``: a `websockets` server whose every reply is ``answer(message)``, the raw text (or
bytes) of the frame to send back, or None to say nothing. ``ping_only_server()``: a server written on a bare
socket that completes the WebSocket handshake and then only answers pings: it never replies to a message and
never answers the closing handshake.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

Answer = Callable[[dict[str, Any]], "str | bytes | list[str] | None"]

GOOD_RESET = json.dumps(
    {
        "type": "observation",
        "data": {
            "observation": {
                "text": "What is 1 + 1?",
                "info": {"index": 0, "split": "test"},
                "truncated": False,
            },
            "reward": None,
            "done": False,
        },
    }
)
"""A well-formed reply to a reset, as reasongym's server sends it."""


def step_reply(**data: Any) -> str:
    """A step reply whose data holds ``data`` over a well-formed observation, reward and done."""
    body = {
        "observation": {"text": "", "info": {"correct": True}, "truncated": False},
        "reward": 1.0,
        "done": True,
    }
    return json.dumps({"type": "observation", "data": {**body, **data}})


@contextlib.contextmanager
def scripted_server(answer: Answer) -> Iterator[str]:
    """Serve ``answer`` on a free loopback port; yields the ``openenv://`` address."""

    def handler(connection: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):  # the client under test drops what it refuses
            _serve(connection)

    def _serve(connection: ServerConnection) -> None:
        for raw in connection:
            message = json.loads(raw)
            if message.get("type") == "close":
                return
            replies = answer(message)
            for reply in replies if isinstance(replies, list) else [replies]:
                if reply is not None:
                    connection.send(reply)

    with serve(handler, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"openenv://127.0.0.1:{server.socket.getsockname()[1]}"
        finally:
            server.shutdown()
            thread.join(timeout=10)


@contextlib.contextmanager
def ping_only_server() -> Iterator[str]:
    """A server that shakes hands, then answers pings and nothing else (not even a close); yields the address."""
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[socket.socket] = []

    def serve_one(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                request += chunk
            key = next(
                line.split(b":", 1)[1].strip()
                for line in request.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key:")
            )
            accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            conn.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
            )
            while True:
                opcode, payload = _read_frame(conn)
                if opcode == 0x9:  # ping: the only thing this server answers
                    conn.sendall(bytes([0x8A, len(payload)]) + payload)

    def accept_loop() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                connections.append(conn)
                threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    try:
        yield f"openenv://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for conn in connections:
            conn.close()


def _read_frame(conn: socket.socket) -> tuple[int, bytes]:
    """One client frame (masked, as clients send them): its opcode and payload."""
    head = _exactly(conn, 2)
    length = head[1] & 0x7F
    if length == 126:
        length = struct.unpack(">H", _exactly(conn, 2))[0]
    elif length == 127:
        length = struct.unpack(">Q", _exactly(conn, 8))[0]
    mask = _exactly(conn, 4)
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(_exactly(conn, length)))
    return head[0] & 0x0F, payload


def _exactly(conn: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data
