r"""Multi-turn environments: a tool environment and a retry environment, over any problem source.

Both subclass :class:`~reasongym.envs.core.ReasoningEnv`, so they take the same sources, options
(``split``, ``difficulty``, ``format_reward``, ...) and reset options, and they show the same prompt
(the tool environment adds its tool instructions). An observation after the first is the text to
append to the conversation before the model's next turn.

:class:`ToolReasoningEnv`: each step is one model turn. A turn holding a complete tool call
(``<calc>...</calc>`` or ``<sympy>...</sympy>``, see :mod:`reasongym.envs.tools`) is answered: the
observation is ``"\n<result>...</result>\n"`` and the reward 0. Only the *first* call of a turn runs,
since whatever the model wrote after it was written without the result. A turn without a tool call is
the final answer, graded as in the single-turn environment (terminated=True). A tool call on the last
allowed turn ends the episode unanswered: truncated=True, reward 0, outcome ``unparseable``.
``stop_strings`` lists the closing tags at which generation should stop.

:class:`RetryReasoningEnv`: each step is one attempt, graded at once. A correct attempt ends the
episode (terminated=True); a wrong one earns 0 and the observation tells the model its answer was
wrong and how many attempts are left; after ``max_attempts`` wrong attempts the episode ends
(terminated=True: the last answer was graded, nothing was cut short). Attempt ``a`` (0-based) earns
``discount ** a * r``, where ``r`` is what the single-turn environment would pay for that completion
(correctness plus any configured format and length terms), so a first-try solution earns 1 and a
second-try one ``discount``.

Example:
    >>> env = make_tool_env("reasongym/Arithmetic-v0", difficulty=5)  # doctest: +SKIP
    >>> prompt, info = env.reset(seed=0)  # doctest: +SKIP
    >>> env.step("First, <calc>(12 + 7) * 3</calc>")[0]  # doctest: +SKIP
    '\n<result>57</result>\n'
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

import gymnasium

from reasongym.envs.core import ReasoningEnv, ReasoningEnvConfig
from reasongym.envs.problem import Problem
from reasongym.envs.registration import spec
from reasongym.envs.sources import ProblemSource
from reasongym.envs.tools import (
    RESULT_FORMAT,
    TOOL_INSTRUCTION,
    TOOLS,
    find_tool_call,
    run_tool,
    stop_strings,
)
from reasongym.errors import ConfigError
from reasongym.verifiers.api import MAX_COMPLETION_CHARS
from reasongym.verifiers.base import VERIFY_TIMEOUT_S, check_timeout

DEFAULT_FEEDBACK = (
    "\n\n{judgement} You have {attempts_left} more attempt{plural}. Check your reasoning, then give a "
    "corrected final answer in the format asked for above.\n\n"
)
EnvT = TypeVar("EnvT", bound=ReasoningEnv)
_FEEDBACK_FIELDS = frozenset({"judgement", "attempts_left", "plural"})


def _positive_int(owner: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{owner}.{name} must be an int >= 1, got {value!r}")


@dataclass(frozen=True)
class ToolEnvConfig:
    """How a :class:`ToolReasoningEnv` runs tools and bounds an episode."""

    max_turns: int = 4
    """Model turns per episode, the final answer included."""
    tools: tuple[str, ...] = TOOLS
    """Tools the model may call, a subset of ``reasongym.envs.tools.TOOLS``."""
    tool_timeout: float = VERIFY_TIMEOUT_S
    """Seconds one sympy call may take before it answers ``error: ... took longer``."""
    max_result_chars: int = 500
    """Longest tool result shown to the model; longer ones are cut."""
    tool_instruction: str | None = None
    """Tool part of the prompt (may use ``{max_turns}``); None means ``tools.TOOL_INSTRUCTION``."""

    def __post_init__(self) -> None:
        """Validate every field; raise ConfigError naming the field, the value and what is allowed."""
        _positive_int("ToolEnvConfig", "max_turns", self.max_turns)
        _positive_int("ToolEnvConfig", "max_result_chars", self.max_result_chars)
        tools = tuple(self.tools) if isinstance(self.tools, (list, tuple)) else None
        if not tools or any(tool not in TOOLS for tool in tools):
            raise ConfigError(
                f"ToolEnvConfig.tools must be a non-empty subset of {list(TOOLS)}, got {self.tools!r}"
            )
        object.__setattr__(self, "tools", tools)
        check_timeout("ToolEnvConfig.tool_timeout", self.tool_timeout)


@dataclass(frozen=True)
class RetryEnvConfig:
    """How many attempts a :class:`RetryReasoningEnv` allows and how it discounts later ones."""

    max_attempts: int = 3
    """Attempts per episode, the first included."""
    discount: float = 0.5
    """Factor applied to the reward once per extra attempt (gamma): attempt a earns gamma**a * reward."""
    feedback: str = DEFAULT_FEEDBACK
    """Text after a wrong attempt, with the fields ``{judgement}``, ``{attempts_left}`` and ``{plural}``."""
    show_extracted: bool = True
    """Whether the feedback quotes the final answer that was read from the wrong attempt."""

    def __post_init__(self) -> None:
        """Validate every field; raise ConfigError naming the field, the value and what is allowed."""
        _positive_int("RetryEnvConfig", "max_attempts", self.max_attempts)
        gamma = self.discount
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 <= gamma <= 1:
            raise ConfigError(f"RetryEnvConfig.discount must be a number in [0, 1], got {gamma!r}")
        try:
            used = {name for _, name, _, _ in string.Formatter().parse(self.feedback) if name is not None}
        except ValueError as exc:
            raise ConfigError(f"RetryEnvConfig.feedback is not a valid format string: {exc}") from exc
        if used - _FEEDBACK_FIELDS:
            raise ConfigError(
                f"RetryEnvConfig.feedback may use only {sorted(_FEEDBACK_FIELDS)}, it uses {sorted(used)}"
            )


def _own_config(config_type: type, given: Any, options: dict[str, Any]) -> Any:
    """``given`` (or the defaults) with the options that are fields of ``config_type`` applied.

    Those options are removed from ``options``, so the rest can go to :class:`ReasoningEnvConfig`;
    an option of neither config is an error that lists the allowed names.
    """
    names = [f.name for f in fields(config_type)]
    allowed = names + [f.name for f in fields(ReasoningEnvConfig)]
    for key in options:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"unknown {config_type.__name__[:-6]} option {key!r}{hint}; allowed: {allowed}")
    own = {name: options.pop(name) for name in list(options) if name in names}
    return replace(given if given is not None else config_type(), **own)


def _check_step(env: ReasoningEnv, action: Any) -> Problem:
    """The problem of the open episode, or the errors of the single-turn contract."""
    if not isinstance(action, str):
        raise TypeError(f"action must be a str (the model's turn), got {type(action).__name__}")
    if not env._episode_open or env._problem is None:
        raise gymnasium.error.ResetNeeded("the episode is over or has not started: call env.reset() first")
    return env._problem


class ToolReasoningEnv(ReasoningEnv):
    """A multi-turn environment where the model may call a calculator or sympy before answering.

    Args:
        source: As for :class:`ReasoningEnv`.
        source_kwargs: As for :class:`ReasoningEnv`.
        config: A ready :class:`ReasoningEnvConfig`.
        tool_config: A ready :class:`ToolEnvConfig`; ``options`` naming its fields override it.
        render_mode: None or ``"ansi"``.
        **options: Fields of :class:`ReasoningEnvConfig` and of :class:`ToolEnvConfig` (``max_turns``, ...).
    """

    def __init__(
        self,
        source: ProblemSource | str | Callable[..., ProblemSource],
        source_kwargs: Mapping[str, Any] | None = None,
        *,
        config: ReasoningEnvConfig | None = None,
        tool_config: ToolEnvConfig | None = None,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        """Build the environment; see the class docstring for the arguments."""
        self.tool_config: ToolEnvConfig = _own_config(ToolEnvConfig, tool_config, options)
        super().__init__(source, source_kwargs, config=config, render_mode=render_mode, **options)
        self._turn = 0
        self._tool_calls = 0
        self.history: list[tuple[str, str]] = []
        """The (model turn, observation) pairs of the current episode."""

    @property
    def stop_strings(self) -> tuple[str, ...]:
        """Closing tags of the enabled tools: stop generating a turn at any of them."""
        return stop_strings(self.tool_config.tools)

    def prompt(self, problem: Problem, *, hint: bool = False) -> str:
        """The single-turn prompt followed by the tool instructions."""
        instruction = self.tool_config.tool_instruction or TOOL_INSTRUCTION
        return f"{super().prompt(problem, hint=hint)}\n\n{instruction.format(max_turns=self.tool_config.max_turns)}"

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode, as :meth:`ReasoningEnv.reset`; info also holds ``max_turns``."""
        prompt, info = super().reset(seed=seed, options=options)
        self._turn, self._tool_calls, self.history = 0, 0, []
        info["max_turns"] = self.tool_config.max_turns
        return prompt, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Answer the turn's first tool call, or grade the turn as the final answer.

        Returns:
            After a tool call: ``(result, 0.0, False, False, info)`` with info keys problem_id, turn,
            tool, tool_input, tool_output, tool_ok, tool_calls. After a final answer: the single-turn
            result plus turn and tool_calls. A tool call on the last turn: ``("", 0.0, False, True, info)``.

        Raises:
            TypeError: ``action`` is not a string.
            gymnasium.error.ResetNeeded: No episode is open.
        """
        problem = _check_step(self, action)
        self._turn += 1
        # An oversized turn is graded (and refused) as a final answer without being searched for calls.
        too_long = len(action) > MAX_COMPLETION_CHARS
        call = None if too_long else find_tool_call(action, self.tool_config.tools)
        if call is None:
            observation, reward, terminated, truncated, info = super().step(action)
            info.update(turn=self._turn, tool_calls=self._tool_calls)
            self.history.append((action, observation))
            return observation, reward, terminated, truncated, info
        self._tool_calls += 1
        if self._turn >= self.tool_config.max_turns:
            self._episode_open = False
            info = {
                "problem_id": problem.id,
                "outcome": "unparseable",
                "extracted": None,
                "correct": False,
                "reason": f"ran out of turns ({self.tool_config.max_turns}) while still calling tools",
                "turn": self._turn,
                "tool_calls": self._tool_calls,
            }
            self._last_info = dict(info)
            self.history.append((action, ""))
            return "", 0.0, False, True, info
        result, ok = run_tool(
            call, timeout=self.tool_config.tool_timeout, max_chars=self.tool_config.max_result_chars
        )
        observation = RESULT_FORMAT.format(result=result)
        self.history.append((action, observation))
        info = {
            "problem_id": problem.id,
            "turn": self._turn,
            "tool": call.tool,
            "tool_input": call.argument,
            "tool_output": result,
            "tool_ok": ok,
            "tool_calls": self._tool_calls,
        }
        return observation, 0.0, False, False, info

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the prompt and every turn and observation so far."""
        if self.render_mode != "ansi":
            return None
        turns = "".join(f"\n[model] {action}{observation}" for action, observation in self.history)
        return self._prompt + turns


class RetryReasoningEnv(ReasoningEnv):
    """A multi-turn environment that says when an answer is wrong and allows another attempt.

    Args:
        source: As for :class:`ReasoningEnv`.
        source_kwargs: As for :class:`ReasoningEnv`.
        config: A ready :class:`ReasoningEnvConfig`.
        retry_config: A ready :class:`RetryEnvConfig`; ``options`` naming its fields override it.
        render_mode: None or ``"ansi"``.
        **options: Fields of :class:`ReasoningEnvConfig` and of :class:`RetryEnvConfig` (``max_attempts``, ...).
    """

    def __init__(
        self,
        source: ProblemSource | str | Callable[..., ProblemSource],
        source_kwargs: Mapping[str, Any] | None = None,
        *,
        config: ReasoningEnvConfig | None = None,
        retry_config: RetryEnvConfig | None = None,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        """Build the environment; see the class docstring for the arguments."""
        self.retry_config: RetryEnvConfig = _own_config(RetryEnvConfig, retry_config, options)
        super().__init__(source, source_kwargs, config=config, render_mode=render_mode, **options)
        self._attempt = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode, as :meth:`ReasoningEnv.reset`; info also holds ``max_attempts``."""
        prompt, info = super().reset(seed=seed, options=options)
        self._attempt = 0
        info["max_attempts"] = self.retry_config.max_attempts
        return prompt, info

    def feedback(self, extracted: str | None, attempts_left: int) -> str:
        """The observation after a wrong attempt."""
        if extracted is None:
            judgement = "No final answer could be read from your reply."
        elif self.retry_config.show_extracted:
            judgement = f"Your final answer, {extracted}, is not correct."
        else:
            judgement = "Your final answer is not correct."
        return self.retry_config.feedback.format(
            judgement=judgement, attempts_left=attempts_left, plural="" if attempts_left == 1 else "s"
        )

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Grade one attempt; end the episode when it is correct or no attempt is left.

        Returns:
            ``(feedback or "", discounted reward, done, False, info)``; info keys problem_id, outcome,
            extracted, correct, reason, attempt (1-based), attempts_left.

        Raises:
            TypeError: ``action`` is not a string.
            gymnasium.error.ResetNeeded: No episode is open.
        """
        problem = _check_step(self, action)
        verdict = self.score(problem, action)
        reward = self.retry_config.discount**self._attempt * self.compute_reward(verdict, action)
        self._attempt += 1
        attempts_left = self.retry_config.max_attempts - self._attempt
        done = verdict.correct is True or attempts_left == 0
        info = {
            "problem_id": problem.id,
            "outcome": verdict.outcome.value,
            "extracted": verdict.extracted,
            "correct": verdict.correct,
            "reason": verdict.reason,
            "attempt": self._attempt,
            "attempts_left": attempts_left,
        }
        self._last_info = dict(info)
        if done:
            self._episode_open = False
            return "", float(reward), True, False, info
        return self.feedback(verdict.extracted, attempts_left), float(reward), False, False, info


def _from_registered(env_class: type[EnvT], env_id: str, kwargs: dict[str, Any]) -> EnvT:
    entry = spec(env_id)
    source_kwargs = {**entry.source_kwargs, **dict(kwargs.pop("source_kwargs", None) or {})}
    return env_class(entry.source, source_kwargs, **{**entry.env_kwargs, **kwargs})


def make_tool_env(env_id: str, **kwargs: Any) -> ToolReasoningEnv:
    """A tool environment over the problems of any registered id.

    Args:
        env_id: A registered id, e.g. ``"reasongym/GSM8K-v0"``.
        **kwargs: ``source_kwargs`` (merged into the registered ones), fields of
            :class:`ReasoningEnvConfig` and of :class:`ToolEnvConfig`.

    Returns:
        The environment, not wrapped by Gymnasium.

    Example:
        >>> env = make_tool_env("reasongym/LinearEquation-v0", max_turns=3)
        >>> env.stop_strings
        ('</calc>', '</sympy>')
    """
    return _from_registered(ToolReasoningEnv, env_id, kwargs)


def make_retry_env(env_id: str, **kwargs: Any) -> RetryReasoningEnv:
    """A retry environment over the problems of any registered id.

    Args:
        env_id: A registered id, e.g. ``"reasongym/GSM8K-v0"``.
        **kwargs: ``source_kwargs`` (merged into the registered ones), fields of
            :class:`ReasoningEnvConfig` and of :class:`RetryEnvConfig`.

    Returns:
        The environment, not wrapped by Gymnasium.

    Example:
        >>> env = make_retry_env("reasongym/Arithmetic-v0", max_attempts=2, discount=0.5)
        >>> env.retry_config.max_attempts
        2
    """
    return _from_registered(RetryReasoningEnv, env_id, kwargs)
