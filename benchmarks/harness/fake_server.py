"""A fault injector: a small OpenAI-shaped HTTP server in a thread that answers from a script.

It is not a stand-in for a real server (openai_server.py runs one); it makes the failures that a real
server produces only by chance: 5xx, 429, a dropped connection, a slow answer, a 401, a body that is not
JSON or not a completion (``raw``), an answer sent one byte at a time (``drip``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    body: Any = None
    """JSON body; None: a well-formed completion with as many choices as the request's ``n``."""
    delay: float = 0.0
    """Seconds to wait before answering."""
    drop: bool = False
    """Close the connection without answering."""
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """Send these bytes as the body instead of JSON (HTML, cut-off JSON, other encodings)."""
    drip: float = 0.0
    """Seconds between the bytes of the body (0: all at once)."""


def completion_body(texts: list[str], finish: str = "stop", **choice_fields: Any) -> dict[str, Any]:
    """A /v1/completions answer with one choice per text."""
    choices = [{"index": i, "text": t, "finish_reason": finish, **choice_fields} for i, t in enumerate(texts)]
    return {"id": "x", "object": "text_completion", "created": 0, "model": "m", "choices": choices}


def chat_body(texts: list[str], finish: str = "stop", **choice_fields: Any) -> dict[str, Any]:
    """A /v1/chat/completions answer with one choice per text."""
    choices = [
        {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": finish, **choice_fields}
        for i, t in enumerate(texts)
    ]
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": choices}


def echo_body(request: Mapping[str, Any], path: str) -> dict[str, Any]:
    """A well-formed answer with ``n`` choices whose text names the request's seed and the choice index."""
    texts = [f"seed={request.get('seed')} choice={i}" for i in range(int(request.get("n", 1)))]
    return chat_body(texts) if path.endswith("chat/completions") else completion_body(texts)


class FakeServer:
    """Serve ``script`` (one `Reply` per request, then well-formed answers, or ``answer(request)``'s bodies);
    record what was asked."""

    def __init__(
        self, script: list[Reply] | None = None, answer: Callable[[dict[str, Any]], Any] | None = None
    ) -> None:
        self.script, self.answer = list(script or []), answer
        self.in_flight = self.most_in_flight = 0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self._next, self._count))
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _count(self, change: int) -> None:
        """Requests being answered now (+1 when one arrives, -1 when its answer is sent), and the most at once."""
        with self.lock:
            self.in_flight += change
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def _next(self, path: str, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self.lock:
            self.requests.append(request)
            self.headers.append(headers)
            reply = self.script.pop(0) if self.script else Reply()
        if reply.body is None and reply.raw is None and reply.status == 200 and not reply.drop:
            body = self.answer(request) if self.answer is not None else echo_body(request, path)
            return Reply(body=body, delay=reply.delay, drip=reply.drip)
        return reply


def _handler(
    next_reply: Callable[[str, dict[str, Any], dict[str, str]], Reply], count: Callable[[int], None]
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive and no Nagle delay, as real servers do
        disable_nagle_algorithm = True

        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            count(+1)
            try:
                self._answer()
            finally:
                count(-1)

        def _answer(self) -> None:
            length = int(self.headers.get("content-length", 0))
            request = json.loads(self.rfile.read(length) or b"{}")
            reply = next_reply(self.path, request, {k.lower(): v for k, v in self.headers.items()})
            time.sleep(reply.delay)
            if reply.drop:
                self.close_connection = True
                return
            payload = (
                reply.raw
                if reply.raw is not None
                else json.dumps(reply.body if reply.body is not None else {}).encode()
            )
            try:
                self.send_response(reply.status)
                for key, value in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                if not reply.drip:
                    self.wfile.write(payload)
                for byte in payload if reply.drip else b"":
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(reply.drip)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout fired)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def fake_server(
    script: list[Reply] | None = None, answer: Callable[[dict[str, Any]], Any] | None = None
) -> Iterator[FakeServer]:
    """Run a `FakeServer` in a thread for the block."""
    server = FakeServer(script, answer)
    thread = threading.Thread(target=server.httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


if __name__ == "__main__":  # a server in its own process (the benchmark's overhead test): prints its URL
    standalone = FakeServer()
    print(standalone.base_url, flush=True)
    standalone.httpd.serve_forever()
