"""Serve any registered environment over OpenEnv's protocol (HTTP and WebSocket), built on ``openenv-core``.

``reasongym serve-env ENV_ID`` runs this. Endpoints are openenv-core's own: ``/ws`` (one environment per
WebSocket session; sessions run concurrently, each on its own thread), ``/reset``, ``/step``, ``/state``,
``/schema``, ``/metadata`` and ``/health``. The action is ``{"completion": str}``; the observation holds
``text`` (the prompt on reset, the next message of a multi-turn episode on step), ``info`` (the
environment's info dict) and ``truncated``, with OpenEnv's ``reward`` and ``done`` beside it. Reset takes
``seed`` and ``options`` as ``env.reset`` does.

What a client may see and set: the server is the grader, so nothing it sends names the gold answer. A client
may set the reset options :data:`CLIENT_OPTIONS` (``index``, ``split``, ``difficulty``); the options that show
the gold (:data:`REVEALING_OPTIONS`: ``hint``, ``include_answer``) are refused with a one-line 400, and the
info the server sends leaves out :data:`HIDDEN_INFO` (the problem's ``metadata``, which for some
environments holds a solution, the roots or the count; a step's verifier ``reason``, which names the gold:
"1 is not 74."). ``ServeConfig(reveal_answers=True)`` (``--reveal-answers``) lifts both, for a server whose
clients may see the answers (a teacher's rationalizations, debugging).

OpenEnv's HTTP ``/step`` is stateless (a fresh environment per request); to grade over HTTP, send the
reset's ``seed`` and ``options`` inside the action and the step plays that problem. Every request body
(and WebSocket message) is bounded by ``max_body_bytes``; a bad action is refused with the field and the
rule (HTTP 422, or a ``VALIDATION_ERROR`` message on the WebSocket); a reasongym error (an unknown reset
option, options that are not an object, a step before reset) is HTTP 400 with its one-line message. A slow
client is bounded by the header and body timeouts and the connection bound of
:mod:`reasongym.envs.serving_limits`.

Example:
    >>> from reasongym.envs.serving import ServeConfig, serve
    >>> serve(ServeConfig("reasongym/Arithmetic-v0", port=8000))  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import (
    Action,
    ConcurrencyConfig,
    EnvironmentMetadata,
    Observation,
    State,
)
from pydantic import Field

from reasongym.envs.core import RESET_OPTIONS
from reasongym.envs.registration import make, spec
from reasongym.envs.serving_limits import BodyLimit, ConnectionLimits, QuietDisconnect, guarded_protocol
from reasongym.errors import ConfigError, ReasonGymError

MAX_COMPLETION_CHARS = 100_000
"""The longest completion an action may carry: the action space of every reasongym environment."""
REVEALING_OPTIONS = ("hint", "include_answer")
"""Reset options that show the gold answer (in the prompt, in the info): refused unless ``reveal_answers``."""
CLIENT_OPTIONS = tuple(option for option in RESET_OPTIONS if option not in REVEALING_OPTIONS)
"""The reset options any client may set."""
SHUTDOWN_GRACE_S = 10
"""Seconds a stopping server (Ctrl-C, SIGTERM) waits for open requests and sessions before it cancels them: a
client that never finishes cannot keep it from stopping."""
HIDDEN_INFO = ("metadata", "reason", "answer")
"""Info keys the server does not send unless ``reveal_answers``: they can name the gold answer."""


@dataclass(frozen=True)
class ServeConfig:
    """What ``serve`` serves, where, and its limits."""

    env_id: str
    """A registered environment id; every session makes its own environment from it."""
    host: str = "127.0.0.1"
    """Address to listen on; the loopback default keeps the server off the network."""
    port: int = 8000
    """TCP port to listen on (1-65535)."""
    max_sessions: int = 64
    """Most WebSocket sessions (environments) open at once; one more is refused with CAPACITY_REACHED."""
    max_body_bytes: int = 1 << 20
    """Largest HTTP request body or WebSocket message, in bytes: a 100,000-character completion in UTF-8 fits."""
    session_timeout_s: float | None = 600.0
    """A WebSocket session idle this long is closed and its environment freed; None keeps it forever."""
    max_connections: int = 256
    """Most connections (HTTP and WebSocket) open at once; past it a stalled one is closed for the new one, or
    the new one is answered 503 (each connection may buffer up to ``max_body_bytes``)."""
    header_timeout_s: float = 10.0
    """Seconds a request's headers may take to arrive (the whole header, not a pause between bytes); past it, 408."""
    body_timeout_s: float = 30.0
    """Seconds a request's body may take to arrive after its headers; past it, 408."""
    reveal_answers: bool = False
    """Let clients see the gold answer: the ``hint`` and ``include_answer`` reset options, the problem's
    metadata and the verifier's reasons. False: refused and left out (module docstring)."""
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Options for ``reasongym.make`` (``ReasoningEnvConfig`` fields, ``source_kwargs``)."""

    def __post_init__(self) -> None:
        """Refuse a port, count, size or timeout out of range, naming the field and the value."""
        checks = {
            "port": (self.port, 1, 65535),
            "max_sessions": (self.max_sessions, 1, 100_000),
            "max_body_bytes": (self.max_body_bytes, 1024, 1 << 30),
            "max_connections": (self.max_connections, 1, 100_000),
        }
        for name, (value, low, high) in checks.items():
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(f"ServeConfig.{name} must be an int from {low} to {high}, got {value!r}")
        for name in ("session_timeout_s", "header_timeout_s", "body_timeout_s"):
            timeout = getattr(self, name)
            allowed = " or None" if name == "session_timeout_s" else ""
            if (timeout is not None or not allowed) and (
                isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
            ):
                raise ConfigError(f"ServeConfig.{name} must be seconds > 0{allowed}, got {timeout!r}")
        if not isinstance(self.reveal_answers, bool):
            raise ConfigError(
                f"ServeConfig.reveal_answers must be True or False, got {self.reveal_answers!r}"
            )

    @property
    def limits(self) -> ConnectionLimits:
        """What a client's connection may hold (`reasongym.envs.serving_limits`)."""
        return ConnectionLimits(self.header_timeout_s, self.body_timeout_s, self.max_connections)


class CompletionAction(Action):
    """One action: the model's completion (the whole answer, or one turn of a multi-turn episode)."""

    completion: str = Field(..., max_length=MAX_COMPLETION_CHARS, description="The model's text")
    seed: int | None = Field(default=None, ge=0, description="HTTP /step only: reset with this seed first")
    options: dict[str, Any] | None = Field(
        default=None, description="HTTP /step only: reset with these options (index, split, ...) first"
    )


class TextObservation(Observation):
    """What the environment shows: text, the info dict, and whether the episode was cut short."""

    text: str = Field(default="", description="The prompt on reset; the next message on a multi-turn step")
    info: dict[str, Any] = Field(default_factory=dict, description="The environment's info dict")
    truncated: bool = Field(default=False, description="The episode ended by a limit, not by an answer")


def _jsonable(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` as JSON would carry it (tuples as lists; anything unknown as its text)."""
    return json.loads(json.dumps(dict(info), default=str))


def _shown_value(value: Any) -> str:
    """``repr(value)``, cut to 60 characters: an error names what the client sent, not all of it."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class ServedEnvironment(Environment[CompletionAction, TextObservation, State]):
    """One session's environment: a ``reasongym.make(env_id)`` behind OpenEnv's Environment interface."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session makes its own env; the problem source is read-only

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any], reveal_answers: bool = False) -> None:
        """Make the environment (an unknown id or option fails here, naming it)."""
        super().__init__()
        self.env_id, self.reveal_answers = env_id, reveal_answers
        self.env: gymnasium.Env = make(env_id, **dict(env_kwargs))
        self._state = State(episode_id=None, step_count=0)
        self._open = False

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> TextObservation:
        """Start an episode as ``env.reset(seed=seed, options=options)``; other keys are refused."""
        if kwargs:
            raise ConfigError(
                f"unknown reset field(s) {sorted(kwargs)}; allowed: seed, episode_id, options "
                f"(options holds {', '.join(CLIENT_OPTIONS)})"
            )
        self._check_request(seed, episode_id, options)
        text, info = self.env.reset(seed=seed, options=options)
        self._state = State(episode_id=episode_id or uuid.uuid4().hex, step_count=0)
        self._open = True
        return TextObservation(text=text, info=self._shown(info), done=False, reward=None)

    def _check_request(self, seed: Any, episode_id: Any, options: Any) -> None:
        """Refuse what JSON can carry but a reset cannot take (the WebSocket passes it unchecked), and the
        options that show the gold answer unless this server reveals answers."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ConfigError(f"reset field 'seed' must be an integer >= 0, got {_shown_value(seed)}")
        if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > 255):
            raise ConfigError(
                "reset field 'episode_id' must be a string of at most 255 characters, got "
                f"{_shown_value(episode_id)}"
            )
        if options is not None and not isinstance(options, dict):
            raise ConfigError(
                f"reset field 'options' must be a JSON object ({', '.join(CLIENT_OPTIONS)}), got "
                f"{_shown_value(options)}"
            )
        for name, kind, what in (("split", str, "a string"), ("difficulty", int, "an integer")):
            value = (options or {}).get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
                raise ConfigError(f"reset option {name!r} must be {what} or null, got {_shown_value(value)}")
        for option in REVEALING_OPTIONS:
            if not self.reveal_answers and options and options.get(option):
                raise ConfigError(
                    f"reset option {option!r} shows the gold answer, which this server does not reveal to "
                    f"clients (start it with --reveal-answers, ServeConfig.reveal_answers, to allow it); a "
                    f"client may set: {', '.join(CLIENT_OPTIONS)}"
                )

    def _shown(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """``info`` as JSON carries it, without what names the gold answer unless this server reveals answers."""
        kept = info if self.reveal_answers else {k: v for k, v in info.items() if k not in HIDDEN_INFO}
        return _jsonable(kept)

    def step(
        self, action: CompletionAction, timeout_s: float | None = None, **kwargs: Any
    ) -> TextObservation:  # type: ignore[override]
        """Play ``action.completion``; with no open episode, reset with the action's seed and options first."""
        if not self._open:
            if action.seed is None and action.options is None:
                raise gymnasium.error.ResetNeeded(
                    "no open episode: reset first, or send seed and options with the action (HTTP /step "
                    "is stateless: each request gets a fresh environment)"
                )
            self.reset(seed=action.seed, options=action.options)
        text, reward, terminated, truncated, info = self.env.step(action.completion)
        self._state.step_count += 1
        self._open = not (terminated or truncated)
        return TextObservation(
            text=text,
            info=self._shown(info),
            done=bool(terminated or truncated),
            truncated=bool(truncated),
            reward=float(reward),
        )

    @property
    def state(self) -> State:
        """The episode id and how many steps it has taken."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """The id and one-line description of the served environment."""
        from reasongym.version import __version__

        return EnvironmentMetadata(
            name=self.env_id, description=spec(self.env_id).description, version=f"reasongym {__version__}"
        )

    def close(self) -> None:
        """Close the environment."""
        self.env.close()


def _trimmed(value: Any) -> Any:
    """``value`` with every string cut to 200 characters: an error does not echo a client's 100,000 back."""
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:197] + "..."
    if isinstance(value, dict):
        return {key: _trimmed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_trimmed(item) for item in value]
    return value


def error_answer(status: int, detail: Any) -> Any:
    """An error response whose JSON is ASCII (a client's lone surrogate in the echoed input made FastAPI's
    own 422 answer fail to encode, a 500 with a traceback) and echoes at most 200 characters of any string."""
    from fastapi.responses import Response

    body = json.dumps({"detail": _trimmed(detail)}, ensure_ascii=True, default=str)
    return Response(body, status_code=status, media_type="application/json")


def build_app(cfg: ServeConfig) -> Any:
    """The FastAPI application serving ``cfg.env_id`` (made once here, so a bad id or option fails now)."""
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    ServedEnvironment(cfg.env_id, cfg.env_kwargs).close()
    factory = functools.partial(ServedEnvironment, cfg.env_id, dict(cfg.env_kwargs), cfg.reveal_answers)
    concurrency = ConcurrencyConfig(
        max_concurrent_envs=cfg.max_sessions, session_timeout=cfg.session_timeout_s
    )
    app = create_fastapi_app(factory, CompletionAction, TextObservation, concurrency_config=concurrency)

    async def one_line(request: Any, exc: Exception) -> Any:
        return error_answer(400, str(exc))

    async def refused(request: Any, exc: Any) -> Any:
        if isinstance(exc, RequestValidationError):
            return error_answer(422, exc.errors())
        return error_answer(exc.status_code, exc.detail)

    for kind in (ReasonGymError, gymnasium.error.Error):
        app.add_exception_handler(kind, one_line)
    for kind in (HTTPException, RequestValidationError):
        app.add_exception_handler(kind, refused)
    app.add_middleware(BodyLimit, limit=cfg.max_body_bytes)
    app.add_middleware(QuietDisconnect)
    return app


def serve(cfg: ServeConfig) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    import uvicorn

    app = build_app(cfg)
    print(f"serving {cfg.env_id} on http://{cfg.host}:{cfg.port} (WebSocket /ws); Ctrl-C stops", flush=True)
    uvicorn.run(
        app,
        host=cfg.host,
        port=cfg.port,
        http=guarded_protocol(cfg.limits),
        ws_max_size=cfg.max_body_bytes,
        log_level="warning",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
