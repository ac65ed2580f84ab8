"""Batches of text environments: Gymnasium vector envs, and groups of copies of one problem for GRPO.

Text observations need two settings that Gymnasium's defaults get wrong for us:

- ``AsyncVectorEnv`` copies observations through shared memory by default, which stores a ``Text``
  space as one int32 per character of ``max_length`` (4 MB per environment for our 1,000,000-character
  prompts) and maps each character through the space's sampling charset, so any character outside it
  (``×``, ``≤``, letters with accents) is garbled. :func:`make_vector` always passes
  ``shared_memory=False``: observations come back through the pipes as Python strings.
- The default autoreset mode, ``NEXT_STEP``, spends every other ``step`` call on a reset when every
  episode lasts one step. :func:`make_vector` defaults to ``SAME_STEP``: a step that ends an episode
  returns the *next* prompt as the observation, and the finished episode's last observation and info
  under ``info["final_obs"]`` and ``info["final_info"]``.

Batched observations are tuples of strings (Gymnasium batches a ``Text`` space as a ``Tuple``);
actions are any sequence of strings, one per environment.

Group sampling: problem choice is a pure function of the reset seed, so environments reset with the
same seed show the same problem. :func:`group_seeds` gives a vector env of ``num_groups * group_size``
environments seeds where each block of ``group_size`` consecutive environments shares one seed; for
single-turn environments the groups stay aligned across autoresets too (every copy's generator
advances the same way). :func:`make_group` and :func:`reset_group` do the same with separate
environment instances, as a multi-turn rollout needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv, VectorEnv

from reasongym.envs.registration import make
from reasongym.errors import ConfigError

AUTORESET_MODES = {
    "same_step": AutoresetMode.SAME_STEP,
    "next_step": AutoresetMode.NEXT_STEP,
    "disabled": AutoresetMode.DISABLED,
}
"""Names accepted by :func:`make_vector` for Gymnasium's autoreset modes."""


def _check_count(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be an int >= 1, got {value!r}")


def check_actions(actions: Any, num_envs: int) -> None:
    """Raise ConfigError unless ``actions`` is a batch of ``num_envs`` completions (strings).

    A bare string is refused: Gymnasium would iterate it as one character per environment.
    """
    if isinstance(actions, str | bytes) or not isinstance(actions, Sequence | np.ndarray):
        raise ConfigError(
            f"step takes a sequence of {num_envs} completions (one string per environment), not "
            f"{actions!r:.60} (of type {type(actions).__name__}); a string would be split into characters"
        )
    if len(actions) != num_envs:
        raise ConfigError(f"step takes {num_envs} completions, one per environment; got {len(actions)}")
    wrong = next((i for i, action in enumerate(actions) if not isinstance(action, str)), None)
    if wrong is not None:
        raise ConfigError(f"action {wrong} is {actions[wrong]!r:.60}; every action is a completion string")


class TextSyncVectorEnv(SyncVectorEnv):
    """Gymnasium's ``SyncVectorEnv`` whose ``step`` checks that it gets one completion per environment."""

    def step(self, actions: Any) -> Any:
        """``SyncVectorEnv.step`` after `check_actions`."""
        check_actions(actions, self.num_envs)
        return super().step(actions)


class TextAsyncVectorEnv(AsyncVectorEnv):
    """Gymnasium's ``AsyncVectorEnv`` whose ``step`` checks that it gets one completion per environment."""

    def step(self, actions: Any) -> Any:
        """``AsyncVectorEnv.step`` after `check_actions`."""
        check_actions(actions, self.num_envs)
        return super().step(actions)


def _env_factory(
    env_id: str, wrappers: Sequence[Callable[[gymnasium.Env], gymnasium.Env]], kwargs: dict[str, Any]
) -> Callable[[], gymnasium.Env]:
    def build() -> gymnasium.Env:
        env = make(env_id, **kwargs)
        for wrap in wrappers:
            env = wrap(env)
        return env

    return build


def make_vector(
    env_id: str,
    num_envs: int,
    *,
    asynchronous: bool = False,
    autoreset_mode: str = "same_step",
    wrappers: Sequence[Callable[[gymnasium.Env], gymnasium.Env]] = (),
    context: str | None = None,
    **kwargs: Any,
) -> VectorEnv:
    """A Gymnasium vector env of ``num_envs`` copies of a registered text environment.

    Args:
        env_id: A registered id, e.g. ``"reasongym/Arithmetic-v0"``.
        num_envs: How many environments.
        asynchronous: One subprocess per environment (``AsyncVectorEnv``, shared memory off) instead of
            stepping them in this process (``SyncVectorEnv``). Worth it only when grading is slow (sympy).
        autoreset_mode: ``"same_step"`` (default), ``"next_step"`` or ``"disabled"``.
        wrappers: Applied to each environment in order, e.g. a curriculum.
        context: ``multiprocessing`` start method for the async workers (default: the platform's).
            Ids registered by your code at run time exist in a worker only with ``"fork"``.
        **kwargs: Passed to :func:`reasongym.make` for every environment.

    Returns:
        The vector environment; ``reset`` and ``step`` return tuples of strings as observations.

    Raises:
        ConfigError: ``num_envs`` is not a positive int, or ``autoreset_mode`` is unknown; from ``step``,
            actions that are not one completion string per environment (a bare string, say).

    Example:
        >>> envs = make_vector("reasongym/Arithmetic-v0", 2)
        >>> prompts, infos = envs.reset(seed=[7, 7])
        >>> prompts[0] == prompts[1]
        True
        >>> envs.close()
    """
    _check_count("num_envs", num_envs)
    if autoreset_mode not in AUTORESET_MODES:
        raise ConfigError(f"autoreset_mode {autoreset_mode!r} is not one of {sorted(AUTORESET_MODES)}")
    factories = [_env_factory(env_id, tuple(wrappers), dict(kwargs)) for _ in range(num_envs)]
    mode = AUTORESET_MODES[autoreset_mode]
    if asynchronous:
        return TextAsyncVectorEnv(factories, shared_memory=False, context=context, autoreset_mode=mode)
    return TextSyncVectorEnv(factories, autoreset_mode=mode)


def group_seeds(seed: int, num_groups: int, group_size: int) -> list[int]:
    """Reset seeds for ``num_groups`` groups of ``group_size`` environments: one seed per group.

    Example:
        >>> group_seeds(10, num_groups=2, group_size=3)
        [10, 10, 10, 11, 11, 11]
    """
    _check_count("num_groups", num_groups)
    _check_count("group_size", group_size)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be a non-negative int, got {seed!r}")
    return [seed + group for group in range(num_groups) for _ in range(group_size)]


def make_group(env_id: str, group_size: int, **kwargs: Any) -> list[gymnasium.Env]:
    """``group_size`` separate environments of ``env_id`` (made with ``kwargs``), for one group."""
    _check_count("group_size", group_size)
    return [make(env_id, **kwargs) for _ in range(group_size)]


def reset_group(
    envs: Sequence[gymnasium.Env], *, seed: int | None = None, options: dict[str, Any] | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """Reset every environment of a group to the same problem.

    The first environment picks the problem (from ``seed``, or from its own generator when None); the
    others are reset with the same seed and with that problem's index and split.

    Returns:
        The prompts and infos, one per environment (the prompts are all equal).

    Raises:
        ConfigError: ``envs`` is empty.
    """
    if not envs:
        raise ConfigError("reset_group needs at least one environment")
    prompt, info = envs[0].reset(seed=seed, options=options)
    same = {**(options or {}), "index": info["index"], "split": info["split"]}
    rest = [env.reset(seed=seed, options=same) for env in envs[1:]]
    return [prompt, *(p for p, _ in rest)], [info, *(i for _, i in rest)]
