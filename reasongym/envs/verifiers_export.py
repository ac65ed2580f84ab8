"""Environments for the ``verifiers`` library (Prime Intellect's environments hub, prime-rl), verifiers 0.4's v1 API.

verifiers 0.4 builds an environment from three plugins found by import name: a *taskset* (the rows), a
*harness* (the program that talks to the model) and an *env* (how one task becomes one episode). This
module writes all three for any registered reasongym environment:

- :class:`ReasongymTaskset` yields one task per problem of ``env_id`` (its config: which environment and
  options, the split, how many problems, the seed), each task holding the problem's split and index.
- :class:`ReasongymHarness` is a chat loop that runs in-process (no sandbox, no ``uv``): one chat
  completion per segment, sent through verifiers' interception server, which records the trace.
- :class:`ReasongymEnv` plays a single-turn environment as verifiers' own single-agent env does (one
  agent run) and a multi-turn one (the tool and retry environments) by relaying turns: each reply is
  ``env.step``'s action and each observation is the next user message, until the episode ends.

The rubric is the environment's own scoring. A single-turn trace gets one reward per term of
:func:`reasongym.envs.rubric.rubric` (``correctness``, and ``format`` and ``length`` where configured) with
the term's weight, so verifiers' weighted sum is ``env.step``'s reward; a multi-turn trace gets
``episode_return``, the sum of the rewards of replaying its replies through a fresh environment.

verifiers finds plugins by top-level module name, so the classes are exported by a small package,
``examples/verifiers_env`` (module ``reasongym_verifiers``); :func:`to_verifiers` loads them through it.

Example:
    >>> from reasongym.envs.verifiers_export import to_verifiers
    >>> env = to_verifiers("reasongym/Arithmetic-v0", num_tasks=8)  # doctest: +SKIP
    >>> # vf-eval reasongym_verifiers --env.taskset.task.env-id reasongym/ToolArithmetic-v0 ...
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Sequence
from typing import Any

import gymnasium
import httpx
import numpy as np
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.errors import MODEL_TRANSPORT_ERROR_EXIT_CODE
from verifiers.v1.runtimes import SubprocessConfig

from reasongym.envs.core import ReasoningEnv
from reasongym.envs.export import distinct_indices
from reasongym.envs.registration import make
from reasongym.envs.rubric import rubric
from reasongym.errors import ConfigError

TASKSET_ID = "reasongym_verifiers"
"""The import name of the package that exports the classes to verifiers (``examples/verifiers_env``)."""


class ReasongymTaskConfig(vf.TaskConfig):
    """Which reasongym environment grades a task (``--env.taskset.task.*``)."""

    env_id: str = "reasongym/Arithmetic-v0"
    """A registered id; the tool and retry ids (``reasongym/ToolArithmetic-v0``, ...) play multi-turn."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Options for ``reasongym.make(env_id, **options)`` (``difficulty``, ``format_reward``, ...)."""


class ProblemData(vf.TaskData):
    """One problem, named by its split and index so that the environment can make it again."""

    answer: str = ""
    """The gold answer (for reading traces; grading makes the problem from ``split`` and ``index``)."""
    split: str = ""
    """The split the problem comes from."""
    index: int = 0
    """The problem's index in its split."""
    difficulty: int | None = None
    """The difficulty level it was drawn at, or None for the environment's own."""


def make_env(config: ReasongymTaskConfig) -> ReasoningEnv:
    """A fresh environment for ``config`` (one per episode: a reasongym environment holds one episode)."""
    base = make(config.env_id, **config.options).unwrapped
    if not isinstance(base, ReasoningEnv):
        raise ConfigError(f"to_verifiers: {config.env_id!r} is not a ReasoningEnv ({type(base).__name__})")
    return base


def is_multi_turn(env: ReasoningEnv) -> bool:
    """Whether ``env.step`` may continue the episode (the tool and retry environments, any other override)."""
    return type(env).step is not ReasoningEnv.step


def open_episode(env: ReasoningEnv, data: ProblemData) -> str:
    """Reset ``env`` onto the task's problem; return its prompt."""
    options: dict[str, Any] = {"split": data.split, "index": data.index}
    if data.difficulty is not None:
        options["difficulty"] = data.difficulty
    prompt, _ = env.reset(options=options)
    return prompt


def replies(trace: vf.Trace) -> list[str]:
    """The model's replies in order, as sampled (unstripped: the length term counts characters)."""
    return [message.content or "" for message in trace.assistant_messages]


def grade(
    config: ReasongymTaskConfig, data: ProblemData, texts: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """The rewards of a trace's replies as ``{name: (value, weight)}``.

    A single-turn environment: each rubric term of the first reply, so that the weighted sum is
    ``env.step``'s reward. A multi-turn one: ``episode_return``, the sum of ``env.step``'s rewards when the
    replies are replayed in order (tool results and feedback are deterministic, so the replay sees what
    the model saw), weight 1.
    """
    env = make_env(config)
    open_episode(env, data)
    if not is_multi_turn(env):
        text = texts[0] if texts else ""
        verdict = env.score(env._problem, text)
        return {term.name: (term.value(verdict, text), term.weight) for term in rubric(env)}
    total = 0.0
    for text in texts:
        _, reward, terminated, truncated, _ = env.step(text)
        total += reward
        if terminated or truncated:
            break
    return {"episode_return": (total, 1.0)}


class ProblemTask(vf.Task[ProblemData, vf.State, ReasongymTaskConfig]):
    """A reasongym problem; its rewards are the environment's own grading of the trace (see :func:`grade`)."""

    async def score(self, trace: vf.Trace, runtime: vf.Runtime | None = None) -> None:
        """Record verifiers' own signals (judges, plugged rewards), then the environment's rewards."""
        await super().score(trace, runtime)
        if self.scoring_deferred:
            return
        rewards = await asyncio.to_thread(grade, self.config, self.data, replies(trace))
        for name, (value, weight) in rewards.items():
            trace.record_reward(name, value, weight)


class ReasongymTasksetConfig(vf.TasksetConfig):
    """Which problems (``--env.taskset.*``); the environment itself is ``task.env_id`` and ``task.options``."""

    task: ReasongymTaskConfig = ReasongymTaskConfig()
    """The environment that makes and grades the problems."""
    num_tasks: int | None = Field(64, ge=1)
    """Distinct problems; None takes a whole finite split."""
    split: str | None = None
    """The split; None: ``train`` where the environment has one, else its default split."""
    seed: int = 0
    """Chooses which problems, and their order."""


class ReasongymTaskset(vf.Taskset[ProblemTask, ReasongymTasksetConfig]):
    """The problems of a reasongym environment as verifiers tasks, the prompt as the environment shows it."""

    def load(self) -> list[ProblemTask]:
        """One task per chosen problem, in the seeded order."""
        env = make_env(self.config.task)
        source = env.source
        split = self.config.split or ("train" if "train" in source.splits() else source.default_split)
        level = env.config.difficulty
        rng = np.random.default_rng(self.config.seed)
        size = source.size(split, level)
        chosen = distinct_indices(size, self.config.num_tasks, rng, name="--env.taskset.num-tasks")
        tasks = []
        for index in chosen:
            problem = source.problem(split, index, level)
            data = ProblemData(
                id=problem.id,
                prompt=env.messages(problem),
                answer=problem.answer,
                split=split,
                index=index,
                difficulty=level,
            )
            tasks.append(ProblemTask(data, self.config.task))
        return tasks


class ReasongymHarnessConfig(vf.HarnessConfig):
    """How the in-process chat loop calls the model (``--env.agent.harness.*``)."""

    request_timeout_s: float = Field(600.0, gt=0)
    """Seconds one chat completion may take."""


class ReasongymHarness(vf.Harness[ReasongymHarnessConfig]):
    """One chat completion per segment, in this process, through the interception endpoint.

    verifiers' own chat loops (``null``, ``bash``) run a ``uv`` script in a runtime; this one needs neither.
    A resumed segment (the next turn of a multi-turn episode) is the same call on the whole conversation.
    """

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
    ) -> vf.ProgramResult:
        """Ask the model once; the interception server applies the run's sampling and records the turn."""
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages.extend(message_to_wire(message) for message in prompt or [])
        body = {"model": ctx.model, "messages": messages}
        try:
            async with httpx.AsyncClient(timeout=self.config.request_timeout_s) as client:
                answer = await client.post(
                    f"{endpoint.rstrip('/')}/chat/completions",
                    json=body,
                    headers={"Authorization": f"Bearer {secret}"},
                )
        except httpx.TransportError as exc:
            return vf.ProgramResult(MODEL_TRANSPORT_ERROR_EXIT_CODE, "", f"{type(exc).__name__}: {exc}")
        ok = answer.status_code == 200
        return vf.ProgramResult(0 if ok else 1, "", "" if ok else f"HTTP {answer.status_code}: {answer.text}")


class ReasongymEnvConfig(vf.EnvConfig):
    """The one seat; its runtime defaults to a local subprocess, since the harness executes nothing."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=SubprocessConfig())
    """The policy under evaluation or training (``--env.agent.*``)."""


class ReasongymEnv(vf.Env[ReasongymEnvConfig]):
    """One agent run for a single-turn environment; a turn relay through ``env.step`` for a multi-turn one."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        """Play one episode of ``task``."""
        env = make_env(task.config)
        if not is_multi_turn(env):
            await agents.agent.run(task)
            return
        await asyncio.to_thread(open_episode, env, task.data)
        async with agents.agent.interaction(task) as conversation:
            segment = await conversation.turn()
            while not segment.terminated:
                text = next(
                    (m.content or "" for m in reversed(segment.messages) if m.role == "assistant"), ""
                )
                observation, _, terminated, truncated, _ = await asyncio.to_thread(env.step, text)
                if terminated or truncated:
                    break
                segment = await conversation.turn(observation)


def to_verifiers(
    env_or_id: gymnasium.Env | str,
    *,
    num_tasks: int | None = 64,
    split: str | None = None,
    seed: int = 0,
    taskset_id: str = TASKSET_ID,
    **options: Any,
) -> vf.Env:
    """A verifiers environment (:class:`ReasongymEnv`) over the problems of a reasongym environment.

    Args:
        env_or_id: A registered id, or an environment made by ``reasongym.make`` (its id and options are
            read from ``env.spec``: verifiers rebuilds environments from their config, in any process).
        num_tasks: Distinct problems; None takes a whole finite split.
        split: The split; None: ``train`` where there is one, else the default split.
        seed: Chooses which problems, and their order.
        taskset_id: The import name of the package that exports the classes (``examples/verifiers_env``).
        **options: Options for ``reasongym.make`` (``difficulty``, ``format_reward``, ...).

    Returns:
        The environment, as ``vf.load_environment`` builds it for ``vf-eval`` and prime-rl.

    Raises:
        ConfigError: An environment without a registered id, or the exporting package is not installed.
    """
    if not isinstance(env_or_id, str):
        if env_or_id.spec is None:
            raise ConfigError(
                "to_verifiers: the environment has no registered id (env.spec is None); make it with "
                "reasongym.make, or pass its id and options"
            )
        registered = gymnasium.spec(env_or_id.spec.id).kwargs
        made = {key: value for key, value in env_or_id.spec.kwargs.items() if registered.get(key) != value}
        options = {**made, **options}
        env_or_id = env_or_id.spec.id
    if importlib.util.find_spec(taskset_id) is None:
        raise ConfigError(
            f"to_verifiers: no module {taskset_id!r}; install the package that exports reasongym's classes to "
            "verifiers: pip install -e examples/verifiers_env"
        )
    task = ReasongymTaskConfig(env_id=env_or_id, options=options)
    make_env(task)  # an unknown id or option fails here, in reasongym's words
    taskset = {"id": taskset_id, "task": task, "num_tasks": num_tasks, "split": split, "seed": seed}
    return vf.load_environment(ReasongymEnvConfig(taskset=taskset))
