"""A curriculum: move an environment's difficulty with the success rate measured over recent episodes.

:class:`CurriculumWrapper` keeps one current level. Every ``reset`` asks for it through
``options["difficulty"]``; every finished episode (terminated or truncated) counts as a success when
its last ``info["correct"]`` is True. Once ``min_episodes`` episodes were played at the current level,
the success rate over the last ``window`` of them decides: at or above ``promote_at`` the level goes
one up, at or below ``demote_at`` one down, and the count starts again at the new level. The state
(level, rate, episodes at the level, the last move and how many moves so far) is in ``info["curriculum"]`` of every reset and
every step. An explicit ``options["difficulty"]`` wins for that episode, which then does not count.

Example:
    >>> import reasongym
    >>> env = CurriculumWrapper(reasongym.make("reasongym/Arithmetic-v0"), window=8, min_episodes=4)
    >>> prompt, info = env.reset(seed=0)
    >>> info["curriculum"]["level"]
    1
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import gymnasium

from reasongym.errors import ConfigError


@dataclass(frozen=True)
class CurriculumConfig:
    """When a :class:`CurriculumWrapper` moves the difficulty."""

    levels: tuple[int, ...] | None = None
    """Difficulty levels, easiest first; None means the source's own ``difficulties()``."""
    start_level: int | None = None
    """Level of the first episode; None means the easiest."""
    window: int = 32
    """How many recent episodes at the current level the success rate is measured over."""
    min_episodes: int = 16
    """Episodes at a level before any move (at most ``window``)."""
    promote_at: float = 0.8
    """Success rate at or above which the level goes up."""
    demote_at: float = 0.2
    """Success rate at or below which the level goes down."""

    def __post_init__(self) -> None:
        """Validate every field; raise ConfigError naming the field, the value and what is allowed."""
        for name in ("window", "min_episodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"CurriculumConfig.{name} must be an int >= 1, got {value!r}")
        if self.min_episodes > self.window:
            raise ConfigError(
                f"CurriculumConfig.min_episodes ({self.min_episodes}) must be <= window ({self.window})"
            )
        for name in ("promote_at", "demote_at"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"CurriculumConfig.{name} must be a number in [0, 1], got {value!r}")
        if self.demote_at >= self.promote_at:
            raise ConfigError(
                f"CurriculumConfig.demote_at ({self.demote_at}) must be below promote_at ({self.promote_at})"
            )
        if self.levels is not None:
            levels = tuple(self.levels)
            if not levels or any(isinstance(v, bool) or not isinstance(v, int) for v in levels):
                raise ConfigError(
                    f"CurriculumConfig.levels must be a non-empty tuple of ints, got {self.levels!r}"
                )
            object.__setattr__(self, "levels", levels)


class CurriculumWrapper(gymnasium.Wrapper):
    """Moves the difficulty of a reasoning environment with its measured success rate.

    Args:
        env: An environment whose ``reset`` accepts ``options["difficulty"]`` (any reasongym env with
            difficulty levels), wrapped or not.
        config: A ready :class:`CurriculumConfig`; keyword arguments override its fields.
        **overrides: Fields of :class:`CurriculumConfig`.

    Raises:
        ConfigError: A field is invalid, the source has no difficulty levels, or ``start_level`` is
            not one of the levels.
    """

    def __init__(self, env: gymnasium.Env, config: CurriculumConfig | None = None, **overrides: Any) -> None:
        """Wrap ``env``; see the class docstring for the arguments."""
        super().__init__(env)
        base = config if config is not None else CurriculumConfig()
        self.config = CurriculumConfig(**{**base.__dict__, **overrides})
        levels = self.config.levels
        if levels is None:
            source = getattr(env.unwrapped, "source", None)
            levels = tuple(source.difficulties()) if source is not None else ()
        if not levels:
            raise ConfigError(
                "CurriculumWrapper: the environment has no difficulty levels; pass levels=(...)"
            )
        self.levels: tuple[int, ...] = tuple(levels)
        start = self.levels[0] if self.config.start_level is None else self.config.start_level
        if start not in self.levels:
            raise ConfigError(
                f"CurriculumConfig.start_level {start!r} is not one of the levels {list(self.levels)}"
            )
        self._position = self.levels.index(start)
        self._results: deque[bool] = deque(maxlen=self.config.window)
        self._counted = False
        self._last_move: str | None = None
        self.moves = 0
        """How many times the level has changed."""

    @property
    def level(self) -> int:
        """The current difficulty level."""
        return self.levels[self._position]

    @property
    def success_rate(self) -> float | None:
        """Success rate over the recent episodes at the current level, or None before the first."""
        return sum(self._results) / len(self._results) if self._results else None

    def state(self) -> dict[str, Any]:
        """The curriculum state as a JSON-serialisable dict (also in ``info["curriculum"]``)."""
        return {
            "level": self.level,
            "success_rate": self.success_rate,
            "episodes_at_level": len(self._results),
            "last_move": self._last_move,
            "moves": self.moves,
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset at the current level (unless ``options["difficulty"]`` names one)."""
        options = dict(options or {})
        self._counted = "difficulty" not in options
        options.setdefault("difficulty", self.level)
        observation, info = self.env.reset(seed=seed, options=options)
        return observation, {**info, "curriculum": self.state()}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step; when the episode ends, record its result and move the level if the rate says so."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        if (terminated or truncated) and self._counted:
            self._counted = False
            self._record(info.get("correct") is True)
        return observation, reward, terminated, truncated, {**info, "curriculum": self.state()}

    def _record(self, success: bool) -> None:
        self._results.append(success)
        if len(self._results) < self.config.min_episodes:
            return
        rate = sum(self._results) / len(self._results)
        step = 1 if rate >= self.config.promote_at else -1 if rate <= self.config.demote_at else 0
        position = min(max(self._position + step, 0), len(self.levels) - 1)
        if position != self._position:
            self._last_move = "up" if step > 0 else "down"
            self._position = position
            self.moves += 1
            self._results.clear()
