"""What a slow or greedy client may hold of a ``serve-env`` server: time to send a request, bytes, connections.

Three limits, on top of uvicorn's keep-alive timeout and openenv-core's session limit:

- **Header timeout**: a request's headers must all arrive within ``header_timeout_s`` of the connection opening
  (or of the previous answer on a kept-alive connection); a byte a minute does not extend it. Past it the
  client is answered 408 and the connection closed.
- **Body timeout**: the body must all arrive within ``body_timeout_s`` of the headers; past it, 408.
- **Connection bound**: at most ``max_connections`` connections (HTTP and WebSocket) are open. The one over the
  bound makes room by closing the connection that has waited longest for a request it has not finished
  sending (answered 503); when every open connection is busy (a live WebSocket session, a request being
  answered) the newcomer is answered 503 and closed. A slow client therefore holds a connection for at most a
  timeout, and a flood of them cannot keep a quick client out.

Every refusal is one JSON line (``{"detail": ...}``) with ``connection: close``; the server then reads and
drops what the client still sends for a moment before closing, so the client reads the answer instead of a
reset. Built on uvicorn's HTTP/1.1 protocol (h11): `GuardedH11` overrides its connection and data hooks.
:class:`BodyLimit` bounds the size of a body (413) at the application; :class:`QuietDisconnect` keeps a
client that closes its WebSocket from putting a traceback in the server's log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

LINGER_S = 2.0
"""How long a refused connection is read (and what it sends dropped) before it is closed."""


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits of `GuardedH11` (checked by ``ServeConfig``)."""

    header_timeout_s: float
    """Seconds a request's headers may take to arrive."""
    body_timeout_s: float
    """Seconds a request's body may take to arrive after its headers."""
    max_connections: int
    """Most connections open at once."""


def refusal(status: int, reason: str, detail: str) -> bytes:
    """A whole HTTP/1.1 answer: ``status``, a one-line JSON ``detail``, and ``connection: close``."""
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


class GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the header and body timeouts and the connection bound (module docstring).

    ``limits`` is set on a subclass made for one server (`guarded_protocol`).
    """

    limits: ClassVar[ConnectionLimits]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """uvicorn's protocol, with no deadline armed yet."""
        super().__init__(*args, **kwargs)
        self.deadline: Any = None
        self.deadline_kind: str | None = None
        self.waiting_since = 0.0
        self.ending = False

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        """Count the connection; over the bound, close a stalled one for it, or refuse it (503)."""
        super().connection_made(transport)
        self._wait_for_headers()
        if len(self.connections) > self.limits.max_connections and not self._make_room():
            self.end(
                503,
                "Service Unavailable",
                f"the server has {self.limits.max_connections} connections open (its max_connections), all "
                "busy; try again shortly",
            )

    def data_received(self, data: bytes) -> None:
        """Read as uvicorn does (nothing once the connection is being refused), then follow the request's phase."""
        if self.ending:
            return
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        """A kept-alive connection waits for its next request's headers under the same limit, from now."""
        super().on_response_complete()
        self._follow(new_wait=True)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        """A WebSocket session is openenv-core's from here on (its session limits, pings and timeouts)."""
        self._disarm()
        super().handle_websocket_upgrade(event)

    def shutdown(self) -> None:
        """The server stops: a connection still sending its request is answered 503 and closed now (its
        request would never end), the others as uvicorn closes them."""
        if self.stalled():
            self.end(503, "Service Unavailable", "the server is shutting down")
            return
        super().shutdown()

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the deadline with the connection."""
        self._disarm()
        super().connection_lost(exc)

    # ------------------------------------------------------------------------------------------ deadlines

    def _follow(self, new_wait: bool = False) -> None:
        """The deadline of the request's phase: its headers, its body, or none once it has all arrived."""
        if self.ending or self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.IDLE and (new_wait or self.deadline_kind != "headers"):
            self._wait_for_headers()
        elif state is h11.SEND_BODY and self.deadline_kind != "body":
            self._arm("body", self.limits.body_timeout_s)
        elif state is not h11.IDLE and state is not h11.SEND_BODY:
            self._disarm()  # the whole request is here: the application's time is not the client's

    def _wait_for_headers(self) -> None:
        self.waiting_since = self.loop.time()
        self._arm("headers", self.limits.header_timeout_s)

    def _arm(self, kind: str, seconds: float) -> None:
        self._disarm()
        self.deadline_kind = kind
        self.deadline = self.loop.call_later(seconds, self._expired, kind, seconds)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline, self.deadline_kind = None, None

    def _expired(self, kind: str, seconds: float) -> None:
        self.deadline, self.deadline_kind = None, None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        what = "request headers" if kind == "headers" else "request body"
        self.end(408, "Request Timeout", f"the {what} did not arrive within {seconds:g} s")

    # ------------------------------------------------------------------------------------------ the bound

    def stalled(self) -> bool:
        """Whether this connection waits on its client: headers or body unfinished, nothing being answered."""
        if self.ending or self.transport is None or self.transport.is_closing():
            return False
        return self.deadline_kind is not None

    def _make_room(self) -> bool:
        """Close the connection that has waited longest on its client; False when none is stalled."""
        others = [c for c in self.connections if c is not self and isinstance(c, GuardedH11) and c.stalled()]
        if not others:
            return False
        oldest = min(others, key=lambda connection: connection.waiting_since)
        oldest.end(
            503,
            "Service Unavailable",
            f"the server is at its {self.limits.max_connections} connections (max_connections) and this one "
            "had not sent its request; closed for another",
        )
        return True

    def end(self, status: int, reason: str, detail: str) -> None:
        """Answer ``status`` with ``detail`` and close: read and drop what still comes for `LINGER_S` first."""
        self._disarm()
        self._unset_keepalive_if_required()
        self.ending = True
        self.connections.discard(self)  # no longer counts toward the bound
        self.transport.write(refusal(status, reason, detail))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11]:
    """`GuardedH11` with ``limits``: what ``uvicorn.run(http=...)`` takes."""
    return type("GuardedH11", (GuardedH11,), {"limits": limits})


class BodyLimit:
    """ASGI middleware: an HTTP request whose body passes ``limit`` bytes is answered 413, unread by the app."""

    def __init__(self, app: Any, limit: int) -> None:
        """Wrap ``app``."""
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Buffer the body up to the limit (declared length first), then hand it to the app."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        messages, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":  # the client left (or was timed out) mid-body
                return
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._refuse(send)
                return
            messages.append(message)
            if not message.get("more_body"):
                break
        pending = iter(messages)

        async def replay() -> dict[str, Any]:
            return next(pending, None) or await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps(
            {"detail": f"request body is over {self.limit} bytes (the server's max_body_bytes)"}
        )
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})


class QuietDisconnect:
    """ASGI middleware: a WebSocket client that left is not an error of the server.

    openenv-core's session loop closes the socket after the client's close; when the client's close came
    first, that close raises Starlette's ``WebSocketDisconnect``, which uvicorn logs as a traceback
    ("Exception in ASGI application") on every such client. Here it ends the session quietly.
    """

    def __init__(self, app: Any) -> None:
        """Wrap ``app``."""
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Run the app; for a WebSocket, a disconnect that escapes it ends the connection silently."""
        from starlette.websockets import WebSocketDisconnect

        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise
