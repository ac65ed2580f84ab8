"""Serve any registered environment over OpenEnv's protocol (HTTP and WebSocket), built on ``openenv-core``.

``reasongym serve-env ENV_ID`` runs this. Endpoints are openenv-core's own: ``/ws`` (one environment per
WebSocket session; sessions run concurrently, each on its own thread), ``/reset``, ``/step``, ``/state``,
``/schema``, ``/metadata`` and ``/health``. The action is ``{"completion": str}``; the observation holds
``text`` (the prompt on reset, the next message of a multi-turn episode on step), ``info`` (the
environment's info dict) and ``truncated``, with OpenEnv's ``reward`` and ``done`` beside it. Reset takes
``seed`` and ``options`` (``index``, ``split``, ...) as ``env.reset`` does.

OpenEnv's HTTP ``/step`` is stateless (a fresh environment per request); to grade over HTTP, send the
reset's ``seed`` and ``options`` inside the action and the step plays that problem. Every request body
(and WebSocket message) is bounded by ``max_body_bytes``; a bad action is refused with the field and the
rule (HTTP 422, or a ``VALIDATION_ERROR`` message on the WebSocket); a reasongym error (an unknown reset
option, a step before reset) is HTTP 400 with its one-line message.

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

from reasongym.envs.registration import make, spec
from reasongym.errors import ConfigError, ReasonGymError

MAX_COMPLETION_CHARS = 100_000
"""The longest completion an action may carry: the action space of every reasongym environment."""


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
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Options for ``reasongym.make`` (``ReasoningEnvConfig`` fields, ``source_kwargs``)."""

    def __post_init__(self) -> None:
        """Refuse a port, session count, size or timeout out of range, naming the field and the value."""
        checks = {
            "port": (self.port, 1, 65535),
            "max_sessions": (self.max_sessions, 1, 100_000),
            "max_body_bytes": (self.max_body_bytes, 1024, 1 << 30),
        }
        for name, (value, low, high) in checks.items():
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(f"ServeConfig.{name} must be an int from {low} to {high}, got {value!r}")
        timeout = self.session_timeout_s
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            raise ConfigError(f"ServeConfig.session_timeout_s must be > 0 or None, got {timeout!r}")


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


class ServedEnvironment(Environment[CompletionAction, TextObservation, State]):
    """One session's environment: a ``reasongym.make(env_id)`` behind OpenEnv's Environment interface."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session makes its own env; the problem source is read-only

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any]) -> None:
        """Make the environment (an unknown id or option fails here, naming it)."""
        super().__init__()
        self.env_id = env_id
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
                "(options holds index, split, difficulty, ...)"
            )
        text, info = self.env.reset(seed=seed, options=options)
        self._state = State(episode_id=episode_id or uuid.uuid4().hex, step_count=0)
        self._open = True
        return TextObservation(text=text, info=_jsonable(info), done=False, reward=None)

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
            info=_jsonable(info),
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
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._refuse(send)
                return
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
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


def build_app(cfg: ServeConfig) -> Any:
    """The FastAPI application serving ``cfg.env_id`` (made once here, so a bad id or option fails now)."""
    from fastapi.responses import JSONResponse

    ServedEnvironment(cfg.env_id, cfg.env_kwargs).close()
    factory = functools.partial(ServedEnvironment, cfg.env_id, dict(cfg.env_kwargs))
    concurrency = ConcurrencyConfig(
        max_concurrent_envs=cfg.max_sessions, session_timeout=cfg.session_timeout_s
    )
    app = create_fastapi_app(factory, CompletionAction, TextObservation, concurrency_config=concurrency)

    async def one_line(request: Any, exc: Exception) -> Any:
        return JSONResponse(status_code=400, content={"detail": str(exc)})

    for kind in (ReasonGymError, gymnasium.error.Error):
        app.add_exception_handler(kind, one_line)
    app.add_middleware(BodyLimit, limit=cfg.max_body_bytes)
    return app


def serve(cfg: ServeConfig) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    import uvicorn

    app = build_app(cfg)
    print(f"serving {cfg.env_id} on http://{cfg.host}:{cfg.port} (WebSocket /ws); Ctrl-C stops", flush=True)
    uvicorn.run(app, host=cfg.host, port=cfg.port, ws_max_size=cfg.max_body_bytes, log_level="warning")
