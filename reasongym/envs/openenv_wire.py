"""OpenEnv's WebSocket protocol, the client's side: one session, each request bounded as a whole, every answer
read as untrusted input.

The protocol (openenv-core's ``/ws``): the client sends ``{"type": "reset", "data": {...}}`` or ``{"type":
"step", "data": action}`` and reads one answer, ``{"type": "observation", "data": {...}}`` or ``{"type":
"error", "data": {"message": ..., "code": ...}}``; ``{"type": "close"}`` ends the session. This is our own
small client for it (on the ``websockets`` package, which openenv-core is built on) rather than openenv-core's
``GenericEnvClient``, whose calls could take four times their timeout on a server that stops answering (its
close waits for a closing handshake the server never sends) and which passes on what any server sends.

Here a request never takes longer than its deadline: connecting, sending and waiting all count, a watchdog
shuts the socket when the deadline passes (a send blocked on a server that does not read), and a connection
that failed is dropped at once, without a closing handshake. An answer must be one JSON object of a known
type, and no answer may arrive unasked (a server that answers twice would have its second answer read as the
next request's). Every failure is a one-line :class:`~reasongym.errors.ServerError` naming the server.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import threading
import time
from typing import Any

from reasongym.errors import ConfigError, ServerError

MAX_MESSAGE_BYTES = 16 << 20
"""The largest answer read, in bytes (an observation of 1,000,000 characters fits); larger ones are refused."""
_CLOSE_TIMEOUT_S = 2.0


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error names what a server sent, not all of it."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str, limit: int = 300) -> str:
    """The first line of ``text`` (or its type's name when empty), cut to ``limit`` characters."""
    lines = str(text).strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


class WireSession:
    """One WebSocket session with an OpenEnv server at ``url`` (its http:// or https:// base URL).

    Args:
        url: The server's base URL.
        connect_timeout_s: Seconds the connection may take (within a request's deadline).
        timeout_s: Seconds a whole request may take, connecting included.
    """

    def __init__(self, url: str, *, connect_timeout_s: float, timeout_s: float) -> None:
        """Nothing connects until the first request."""
        self.url, self.connect_timeout_s, self.timeout_s = url, connect_timeout_s, timeout_s
        self.ws_url = "ws" + url.removeprefix("http") + "/ws"
        self._ws: Any = None
        self._stack: contextlib.ExitStack | None = None

    def request(self, what: str, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` and return the ``data`` object of the server's observation answer.

        Raises:
            ServerError: The server cannot be reached, does not answer in time, goes away, refuses (its error
                message, one line), or answers with something that is not an observation.
        """
        deadline = time.monotonic() + self.timeout_s
        expired = threading.Event()
        watchdog = threading.Timer(self.timeout_s, self._expire, args=(expired,))
        watchdog.daemon = True
        watchdog.start()
        try:
            ws = self._connected(deadline)
            if self._closed_meanwhile(ws, what):  # an idle session the server ended: nothing was sent yet
                self.drop()
                ws = self._connected(deadline)
            ws.send(json.dumps(message))
            raw = ws.recv(timeout=max(0.0, deadline - time.monotonic()))
        except ServerError:
            self.drop()
            raise
        except Exception as exc:  # websockets' errors, OSError, TimeoutError: each one a dead request
            self.drop()
            if expired.is_set() or isinstance(exc, TimeoutError):
                raise self.error(f"did not answer {what} within {self.timeout_s:g} s") from None
            raise self.error(
                f"closed the connection during {what}: {one_line(str(exc)) or type(exc).__name__}"
            ) from None
        finally:
            watchdog.cancel()
        return self._observation(what, raw)

    def error(self, problem: str) -> ServerError:
        """A one-line ServerError about this server."""
        return ServerError(f"OpenEnv server {self.url} {problem}")

    def _connected(self, deadline: float) -> Any:
        if self._ws is not None:
            return self._ws
        try:
            from websockets.sync.client import connect
        except ImportError as exc:
            raise ConfigError(
                "playing an OpenEnv server needs the websockets package: pip install 'reasongym[openenv]'"
            ) from exc
        host = self.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[0].strip("[]")
        stack = contextlib.ExitStack()
        try:
            self._ws = stack.enter_context(
                connect(
                    self.ws_url,
                    open_timeout=max(0.01, min(self.connect_timeout_s, deadline - time.monotonic())),
                    close_timeout=_CLOSE_TIMEOUT_S,
                    max_size=MAX_MESSAGE_BYTES,
                    proxy=None if _loopback(host) else True,
                )
            )
        except Exception as exc:  # refused, unresolvable, the handshake timed out or was refused
            raise self.error(
                f"cannot be reached (is it running?): {one_line(str(exc)) or type(exc).__name__}"
            ) from None
        self._stack = stack  # its close is the closing handshake (`close`); `drop` skips it
        return self._ws

    def _closed_meanwhile(self, ws: Any, what: str) -> bool:
        """Whether the server closed the connection since the last answer (True: connect again). A message
        waiting here was never asked for: read later as this request's answer, it would pair every answer with
        the wrong request, so it is a ServerError."""
        from websockets.exceptions import ConnectionClosed

        try:
            extra = ws.recv(timeout=0)
        except TimeoutError:
            return False
        except ConnectionClosed:
            return True
        raise self.error(
            f"sent a message nobody asked for before {what} ({shown(extra)}); connection dropped"
        )

    def _observation(self, what: str, raw: Any) -> dict[str, Any]:
        """The ``data`` of an observation answer; the server's own error message, or what is wrong, as a
        ServerError."""
        if not isinstance(raw, str):
            self.drop()
            raise self.error(f"answered {what} with a binary message, not JSON text")
        try:
            answer = json.loads(raw)
        except (ValueError, RecursionError):
            self.drop()
            raise self.error(f"answered {what} with a message that is not JSON: {shown(raw)}") from None
        kind = answer.get("type") if isinstance(answer, dict) else None
        data = answer.get("data") if isinstance(answer, dict) else None
        if kind == "error":
            details = data if isinstance(data, dict) else {}
            code = details.get("code")
            suffix = f" (code {one_line(str(code), 40)})" if code is not None else ""
            raise self.error(f"refused {what}: {one_line(str(details.get('message', shown(data))))}{suffix}")
        if kind != "observation" or not isinstance(data, dict):
            self.drop()
            raise self.error(
                f"answered {what} with {shown(answer)}, not an observation message "
                '({"type": "observation", "data": {...}})'
            )
        return data

    def _expire(self, expired: threading.Event) -> None:
        """The deadline passed: shut the socket, so that a send or receive blocked on it returns now."""
        expired.set()
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(OSError):
                ws.socket.shutdown(socket.SHUT_RDWR)

    def drop(self) -> None:
        """Forget the connection without a closing handshake (it failed: the server may never answer one)."""
        ws, self._ws, self._stack = self._ws, None, None
        if ws is not None:
            with contextlib.suppress(OSError):
                ws.socket.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                ws.socket.close()

    def close(self) -> None:
        """End the session: a close message and the closing handshake, each bounded; then drop it."""
        ws, stack = self._ws, self._stack
        if ws is None or stack is None:
            return
        with contextlib.suppress(Exception):  # a server gone already: the session is over either way
            ws.send(json.dumps({"type": "close"}))
            stack.close()  # the closing handshake, at most close_timeout
        self.drop()


def _loopback(host: str) -> bool:
    """Whether ``host`` names this machine (a proxy from the environment must not be used for it)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
