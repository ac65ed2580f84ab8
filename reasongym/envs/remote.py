"""Play an environment that another process serves over OpenEnv's protocol, as a ``gymnasium.Env``.

``reasongym.make("openenv://HOST:PORT")`` returns a :class:`RemoteEnv` on the server's WebSocket session (one
environment per connection, opened on the first reset). It plays ``reasongym serve-env`` servers and other
OpenEnv environments alike: the action string is sent as ``{action_field: text}`` (``"completion"`` for
reasongym's servers; OpenEnv's echo example takes ``"message"``), and the observation text is the
observation's ``observation_field`` (``"text"``; the whole observation as JSON when it has no such field).

Failures are one-line :class:`~reasongym.errors.ServerError`\\ s, never a hang: a server that cannot be
reached fails within ``connect_timeout_s``, one that does not answer within ``timeout_s``, and one that
closes the connection or refuses a message says so, with the server's own message.

Not supported: reasongym's evaluator and trainers read problems by index from the environment
(``problem_at``, the source's splits) to record and regrade them, which a remote environment does not
expose; play a ``RemoteEnv`` with your own loop (or Gymnasium tools), or serve the id and evaluate locally.

Example:
    >>> env = reasongym.make("openenv://127.0.0.1:8000")  # doctest: +SKIP
    >>> prompt, info = env.reset(seed=0, options={"index": 3})  # doctest: +SKIP
    >>> _, reward, terminated, truncated, info = env.step(r"\\boxed{42}")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import gymnasium

from reasongym.envs.spaces import TextSpace
from reasongym.errors import ConfigError, ServerError

SCHEME = "openenv://"
"""The id prefix that ``reasongym.make`` hands to :class:`RemoteEnv`."""


def server_url(address: str) -> str:
    """``"openenv://host:port"`` (or an http:// or ws:// URL) as the http:// base URL OpenEnv's client takes."""
    if not isinstance(address, str) or not address.strip():
        raise ConfigError(f"OpenEnv address must be 'openenv://HOST:PORT', got {address!r}")
    rest = address.strip()
    for prefix, scheme in ((SCHEME, "http://"), ("ws://", "http://"), ("wss://", "https://")):
        if rest.startswith(prefix):
            rest = scheme + rest[len(prefix) :]
    host = rest.split("://", 1)[-1].split("/", 1)[0]
    if not rest.startswith(("http://", "https://")) or not host or host.endswith(":"):
        raise ConfigError(
            f"OpenEnv address {address!r} is not 'openenv://HOST:PORT' (or http://, ws:// with a host)"
        )
    return rest.rstrip("/")


class RemoteEnv(gymnasium.Env[str, str]):
    """A served OpenEnv environment, played as a text ``gymnasium.Env``.

    Args:
        address: ``"openenv://HOST:PORT"``, or the server's http:// or ws:// URL.
        action_field: The action's field that carries the action string.
        observation_field: The observation's field shown as the observation text.
        connect_timeout_s: Seconds to wait for the connection.
        timeout_s: Seconds to wait for the answer to one reset or step.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        address: str,
        *,
        action_field: str = "completion",
        observation_field: str = "text",
        connect_timeout_s: float = 10.0,
        timeout_s: float = 60.0,
    ) -> None:
        """Check the address and limits; nothing connects until the first reset."""
        for name, value in (("connect_timeout_s", connect_timeout_s), ("timeout_s", timeout_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"RemoteEnv.{name} must be a number of seconds > 0, got {value!r}")
        self.url = server_url(address)
        self.action_field, self.observation_field = action_field, observation_field
        self.connect_timeout_s, self.timeout_s = float(connect_timeout_s), float(timeout_s)
        self.observation_space = TextSpace(1_000_000)
        self.action_space = TextSpace(100_000)
        self._client: Any = None

    def _connected(self) -> Any:
        if self._client is None:
            try:
                from openenv.core.generic_client import GenericEnvClient
            except ImportError as exc:
                raise ConfigError(
                    "playing an OpenEnv server needs openenv-core: pip install 'reasongym[openenv]'"
                ) from exc
            client = GenericEnvClient(
                base_url=self.url, connect_timeout_s=self.connect_timeout_s, message_timeout_s=self.timeout_s
            )
            self._client = client.sync()
        return self._client

    def _call(self, what: str, request: Callable[[Any], Any]) -> Any:
        """Run one request; every way it can fail becomes a one-line ServerError (the connection is dropped)."""
        try:
            return request(self._connected())
        except ConfigError:
            raise
        except TimeoutError as exc:
            problem = f"did not answer {what} within {self.timeout_s:g} s"
            self._drop()
            raise ServerError(f"OpenEnv server {self.url} {problem}") from exc
        except ConnectionError as exc:
            self._drop()
            raise ServerError(
                f"OpenEnv server {self.url} cannot be reached (is it running?): {_first_line(exc)}"
            ) from exc
        except RuntimeError as exc:  # the server's error message (OpenEnv's client raises RuntimeError)
            raise ServerError(f"OpenEnv server {self.url} refused {what}: {_first_line(exc)}") from exc
        except Exception as exc:  # websockets' ConnectionClosed and kin: the server went away mid-session
            self._drop()
            raise ServerError(
                f"OpenEnv server {self.url} closed the connection during {what}: {_first_line(exc)}"
            ) from exc

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on the server, passing ``seed`` and ``options`` through."""
        super().reset(seed=seed)
        kwargs: dict[str, Any] = {}
        if seed is not None:
            kwargs["seed"] = seed
        if options is not None:
            kwargs["options"] = dict(options)
        result = self._call("reset", lambda client: client.reset(**kwargs))
        return self._text(result.observation), self._info(result.observation)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send ``action`` as ``{action_field: action}``; ``truncated`` is the observation's field of that name."""
        if not isinstance(action, str):
            raise TypeError(f"action must be a str, got {type(action).__name__}")
        result = self._call("step", lambda client: client.step({self.action_field: action}))
        observation = result.observation
        truncated = bool(observation.get("truncated", False))
        terminated = bool(result.done) and not truncated
        reward = 0.0 if result.reward is None else float(result.reward)
        return self._text(observation), reward, terminated, truncated, self._info(observation)

    def _text(self, observation: dict[str, Any]) -> str:
        value = observation.get(self.observation_field)
        return value if isinstance(value, str) else json.dumps(observation, sort_keys=True, default=str)

    def _info(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The server's info dict (reasongym's servers), else every observation field but the text."""
        if isinstance(observation.get("info"), dict):
            return dict(observation["info"])
        return {key: value for key, value in observation.items() if key != self.observation_field}

    def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # closing a dead connection can fail in many ways; it is gone either way
                pass

    def close(self) -> None:
        """Close the session on the server."""
        self._drop()


def openenv_dataset(address: str, n: int, *, seed: int = 0, options: dict[str, Any] | None = None) -> Any:
    """A TRL prompt dataset drawn from a reasongym server: row ``i`` is the prompt of ``reset(seed=seed + i)``.

    Columns: ``prompt`` (text), ``index`` and ``split`` (which problem, for :func:`openenv_reward`) and
    ``problem_id``. The server must be ``reasongym serve-env`` (its info names the problem's index and split).
    """
    import datasets

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"openenv_dataset: n must be an int >= 1, got {n!r}")
    env, rows = RemoteEnv(address), []
    try:
        for i in range(n):
            prompt, info = env.reset(seed=seed + i, options=options)
            if "index" not in info or "split" not in info:
                raise ConfigError(
                    f"{env.url} is not a reasongym server: its reset info has no index and split"
                )
            rows.append(
                {
                    "prompt": prompt,
                    "index": int(info["index"]),
                    "split": str(info["split"]),
                    "problem_id": str(info.get("problem_id", "")),
                }
            )
    finally:
        env.close()
    return datasets.Dataset.from_list(rows)


def openenv_reward(address: str, **env_options: Any) -> Callable[..., list[float]]:
    """A reward function with the signature TRL's GRPOTrainer calls, graded by the served environment itself.

    Each completion is played on the server: ``reset(options={"index": index, "split": split})``, then
    ``step(completion)``; the reward is the server's. ``index`` and ``split`` are dataset columns
    (:func:`openenv_dataset` writes them). One WebSocket session serves every call.
    """
    env = RemoteEnv(address, **env_options)

    def openenv_reward_fn(
        prompts: Any,
        completions: list[Any],
        index: list[int] | None = None,
        split: list[str] | None = None,
        **_: Any,
    ) -> list[float]:
        if index is None or split is None:
            raise ConfigError(
                "openenv reward: the dataset needs 'index' and 'split' columns (openenv_dataset)"
            )
        rewards = []
        for completion, problem, name in zip(completions, index, split, strict=True):
            text = completion if isinstance(completion, str) else completion[-1]["content"]
            env.reset(options={"index": int(problem), "split": name})
            rewards.append(env.step(text)[1])
        return rewards

    return openenv_reward_fn


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
