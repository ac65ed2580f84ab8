"""Play an environment that another process serves over OpenEnv's protocol, as a ``gymnasium.Env``.

``reasongym.make("openenv://HOST:PORT")`` returns a :class:`RemoteEnv` on the server's WebSocket session (one
environment per connection, opened on the first reset). It plays ``reasongym serve-env`` servers and other
OpenEnv environments alike: the action string is sent as ``{action_field: text}`` (``"completion"`` for
reasongym's servers; OpenEnv's echo example takes ``"message"``), and the observation text is the
observation's ``observation_field`` (``"text"``; the whole observation as JSON when it has no such field).

Failures are one-line :class:`~reasongym.errors.ServerError`\\ s, never a hang: ``timeout_s`` bounds each
reset or step as a whole (connecting included; ``connect_timeout_s`` bounds the connection alone), and a
server that closes the connection or refuses a message says so, with its own message
(:mod:`reasongym.envs.openenv_wire` speaks the protocol). Every field of an answer is checked, since a
server's answer is untrusted input that becomes a reward: ``reward`` must be a finite number or null,
``done`` and ``truncated`` true or false, the observation and its ``info`` JSON objects, its text field a
string; anything else is a ServerError naming the field and the value, never a reward.

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
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium

from reasongym.envs.openenv_wire import WireSession, shown
from reasongym.envs.spaces import TextSpace
from reasongym.errors import ConfigError, ServerError

SCHEME = "openenv://"
"""The id prefix that ``reasongym.make`` hands to :class:`RemoteEnv`."""
MAX_OBSERVATION_CHARS = 1_000_000
"""The longest observation text a server may send: the bound of ``RemoteEnv.observation_space``."""


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
        connect_timeout_s: Seconds the connection may take.
        timeout_s: Seconds one reset or step may take in all, connecting included.
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
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ConfigError(f"RemoteEnv.{name} must be a number of seconds > 0, got {value!r}")
        self.url = server_url(address)
        self.action_field, self.observation_field = action_field, observation_field
        self.connect_timeout_s, self.timeout_s = float(connect_timeout_s), float(timeout_s)
        self.observation_space = TextSpace(MAX_OBSERVATION_CHARS)
        self.action_space = TextSpace(100_000)
        self._session = WireSession(
            self.url, connect_timeout_s=self.connect_timeout_s, timeout_s=self.timeout_s
        )

    def _answer(self, what: str, message: dict[str, Any]) -> Answer:
        """One request's answer, every field checked (module docstring)."""
        data = self._session.request(what, message)
        return checked_answer(self._session, what, data, self.observation_field)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on the server, passing ``seed`` and ``options`` through."""
        super().reset(seed=seed)
        data: dict[str, Any] = {}
        if seed is not None:
            data["seed"] = seed
        if options is not None:
            data["options"] = dict(options)
        answer = self._answer("reset", {"type": "reset", "data": data})
        return self._text(answer.observation), self._info(answer.observation)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send ``action`` as ``{action_field: action}``; ``truncated`` is the observation's field of that name."""
        if not isinstance(action, str):
            raise TypeError(f"action must be a str, got {type(action).__name__}")
        answer = self._answer("step", {"type": "step", "data": {self.action_field: action}})
        observation = answer.observation
        truncated = observation.get("truncated", False)
        terminated = answer.done and not truncated
        reward = 0.0 if answer.reward is None else answer.reward
        return self._text(observation), reward, terminated, truncated, self._info(observation)

    def _text(self, observation: dict[str, Any]) -> str:
        value = observation.get(self.observation_field)
        return value if isinstance(value, str) else json.dumps(observation, sort_keys=True, default=str)

    def _info(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The server's info dict (reasongym's servers), else every observation field but the text."""
        if "info" in observation:
            return dict(observation["info"])
        return {key: value for key, value in observation.items() if key != self.observation_field}

    def close(self) -> None:
        """Close the session on the server (a later reset opens a new one)."""
        self._session.close()


class Answer(NamedTuple):
    """A server's answer to a reset or step, its fields checked."""

    observation: dict[str, Any]
    reward: float | None
    done: bool


def checked_answer(session: WireSession, what: str, data: dict[str, Any], text_field: str) -> Answer:
    """The answer in ``data`` (an observation message's data), or a ServerError naming the field and value
    that cannot be what it claims: a reward that is not a finite number, a done that is not a bool, an
    observation, info or text of another type."""

    def refuse(field: str, rule: str, value: Any) -> ServerError:
        return session.error(f"answered {what}: {field} must be {rule}, got {shown(value)}")

    observation, reward, done = data.get("observation"), data.get("reward"), data.get("done", False)
    if not isinstance(observation, dict):
        raise refuse("observation", "a JSON object", observation)
    if reward is not None:
        if isinstance(reward, bool) or not isinstance(reward, (int, float)):
            raise refuse("reward", "a finite number or null", reward)
        try:
            reward = float(reward)
        except OverflowError:  # an integer past float's range, 10**400
            raise refuse("reward", "a finite number or null", reward) from None
        if not math.isfinite(reward):
            raise refuse("reward", "a finite number or null", reward)
    if not isinstance(done, bool):
        raise refuse("done", "true or false", done)
    if not isinstance(observation.get("truncated", False), bool):
        raise refuse("observation.truncated", "true or false", observation["truncated"])
    if text_field in observation and not isinstance(observation[text_field], str):
        raise refuse(f"observation.{text_field}", "a string", observation[text_field])
    if len(observation.get(text_field) or "") > MAX_OBSERVATION_CHARS:
        text = observation[text_field]
        raise refuse(
            f"observation.{text_field}",
            f"at most {MAX_OBSERVATION_CHARS} characters",
            f"{len(text)} characters",
        )
    if "info" in observation and not isinstance(observation["info"], dict):
        raise refuse("observation.info", "a JSON object", observation["info"])
    return Answer(observation, reward, done)


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
            index, split = info["index"], info["split"]
            if (
                isinstance(index, bool)
                or not isinstance(index, int)
                or index < 0
                or not isinstance(split, str)
            ):
                raise ServerError(
                    f"OpenEnv server {env.url} answered reset: info.index must be an integer >= 0 and info.split "
                    f"a string, got {shown(index)} and {shown(split)}"
                )
            rows.append(
                {
                    "prompt": prompt,
                    "index": index,
                    "split": split,
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
