"""Play a batch of episodes a turn at a time: one env copy per episode, steps in a thread pool.

`play_episodes` is where a sampler meets an environment, for evaluation (`reasongym.evaluation.evaluate`)
and for training (`reasongym.agents.runtime.rollout.collect_rollouts` turns the episodes into tensors).
Every episode goes through the plain Gymnasium loop, ``reset(options={"index", "split", "difficulty",
"hint"})`` then ``step(text)`` until it terminates or is truncated, so wrappers, reward shaping and
multi-turn environments (tool calls, retries) behave exactly as for a user stepping the env by hand.
Each episode gets its own deep copy of the environment, wrappers included, sharing only the read-only
problem source, so stepping the copies from several threads shares no state. The expensive part of
a step is the verifier: its sympy work runs in worker processes (`reasongym.verifiers.timeout`, up to
``min(4, cpu_count)`` of them), which the calling thread waits on with the GIL released; a threaded
batch therefore keeps every worker busy, and a comparison that runs into its time limit (graded
``timeout``, reward 0) blocks only its own thread.

The pool widens only when it has something to overlap: one thread steps the rows in order, and the
rest of the threads join once a single step runs past `SLOW_STEP_S`. Cheap batches (64 integer
answers: about 3 ms of stepping) so skip the thread handoffs, which cost as much again. The copies
are made by pickling the env once and unpickling it per row (a deep copy per row was 13 of the
28 ms that 64 single-turn Arithmetic rows spent outside the generator).

Measured before keeping the pool (2 cores, 128 completions: 16 MATH-500 problems x 8 answers that
are right or wrong in symbolic ways, about 27 sympy calls per batch, fresh answers on every run):
1 thread 0.25 s, 2 threads 0.13-0.15 s, 4 threads 0.14-0.17 s per batch. The pool is kept: it
halves the grading time here and turns a 1 s sympy timeout from a stall of the batch into a stall
of one thread.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import io
import math
import os
import pickle
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import torch
from transformers import PreTrainedTokenizerBase

from reasongym.errors import ConfigError
from reasongym.generation.base import Completion, Generator, SamplingParams
from reasongym.models import format_prompt

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]
"""What ``env.step`` returns: ``(observation, reward, terminated, truncated, info)``."""

DEFAULT_MAX_TURNS = 32
"""Safety cap on model turns per episode when ``max_turns`` is None (environments set their own limits)."""

DEFAULT_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads used by `step_all`: as many as the verifier has worker processes, no more."""
SLOW_STEP_S = 0.005
"""A step running longer than this makes `step_all` spread the remaining rows over its threads.

Grading an integer-like answer takes about 0.05 ms; one that needs sympy goes to a worker process
and takes milliseconds, so a step this slow means there is waiting worth overlapping."""
STALL_POLL_S = 0.002
"""How often `step_all` checks whether the step in progress has become slow."""


def step_all(
    envs: Sequence[gymnasium.Env], actions: Sequence[str], *, threads: int | None = None
) -> list[StepResult]:
    """Call ``envs[i].step(actions[i])`` for every ``i``, widening to a thread pool once a step is slow.

    One thread steps the rows in order while the caller watches it; as soon as a single step has
    run longer than `SLOW_STEP_S` (a sympy comparison, a time limit), the remaining rows go to
    ``threads - 1`` more threads. A batch of cheap steps (integer answers) thus pays for no thread
    handoffs, and a slow step still holds up only its own thread.

    Args:
        envs: Distinct environment instances, each with an open episode (never the same one twice:
            an environment is not safe to step from two threads).
        actions: One action (the model's text) per environment.
        threads: Most steps running at once; ``None`` means `DEFAULT_THREADS`, 1 steps in order.

    Returns:
        One step result per environment, in order.

    Raises:
        ConfigError: ``envs`` and ``actions`` differ in length, or the same environment appears twice.
        Exception: Whatever a step raises is re-raised here.
    """
    if len(envs) != len(actions):
        raise ConfigError(f"got {len(envs)} envs but {len(actions)} actions; give one action per env")
    if len({id(env) for env in envs}) != len(envs):
        raise ConfigError("the same environment instance appears twice; each episode needs its own env")
    workers = min(threads or DEFAULT_THREADS, len(envs))
    if workers <= 1:
        return [env.step(action) for env, action in zip(envs, actions, strict=True)]
    queue = _StepQueue(envs, actions)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reasongym-step") as pool:
        futures = [pool.submit(queue.drain)]
        while not wait(futures, timeout=STALL_POLL_S).done:
            if time.perf_counter() - queue.step_started > SLOW_STEP_S:
                futures += [pool.submit(queue.drain) for _ in range(workers - 1)]
                break
        for future in futures:
            future.result()  # re-raises a step's exception
    return queue.results


class _StepQueue:
    """Rows waiting to be stepped, taken in order by however many threads drain it."""

    def __init__(self, envs: Sequence[gymnasium.Env], actions: Sequence[str]) -> None:
        self.pending = collections.deque(enumerate(zip(envs, actions, strict=True)))
        self.results: list[Any] = [None] * len(envs)
        self.step_started = math.inf
        """When the latest step began (``perf_counter``); inf before the first one."""

    def drain(self) -> None:
        """Step rows until none are left (deque pops are atomic, so threads never share a row)."""
        while True:
            try:
                row, (env, action) = self.pending.popleft()
            except IndexError:
                return
            self.step_started = time.perf_counter()
            self.results[row] = env.step(action)


@dataclass
class Episode:
    """One row of the batch while it is being played: its env and the tokens so far."""

    env: gymnasium.Env
    """This episode's own copy of the environment."""
    prompt_text: str
    """The formatted prompt of the first turn."""
    problem_id: str
    """The problem's id (from the env's reset info)."""
    messages: list[dict[str, str]] = field(default_factory=list)
    """The chat messages of the prompt (what a chat endpoint is sent)."""
    prompt_ids: list[int] = field(default_factory=list)
    """Prompt tokens as the generator tokenized them on the first turn."""
    token_ids: list[int] = field(default_factory=list)
    """Completion tokens so far: model turns and observations in order."""
    logprobs: list[float] = field(default_factory=list)
    """Sampler log-prob per entry of ``token_ids``; 0 on observation tokens (and, until a trainer recomputes
    them, on the tokens of a generator that returned text only: see ``logprobs_known``)."""
    logprobs_known: bool = True
    """False once a model turn came from a generator that returned no log-probs (a server that sends text
    only): the trainer must then recompute the old log-probs with a forward pass, never use these zeros."""
    model_mask: list[int] = field(default_factory=list)
    """1 per model token, 0 per observation token of ``token_ids``."""
    pieces: list[str] = field(default_factory=list)
    """Texts of the model turns and observations, in order."""
    reward: float = 0.0
    """Sum of the step rewards so far."""
    turns: int = 0
    done: bool = False
    truncated: bool = False
    """The last turn hit ``max_new_tokens``, or the env truncated the episode."""
    cut_off: bool = False
    """The caller's turn cap ended the episode before the env did."""
    info: dict[str, Any] = field(default_factory=dict)
    """The info of the last step."""

    def context(self, tokenizer: PreTrainedTokenizerBase | None) -> str:
        """The text the next turn continues: the prompt and every token so far, special ones kept."""
        if tokenizer is None:  # a generator that works on text alone: the texts so far
            return self.prompt_text + "".join(self.pieces)
        tail = tokenizer.decode(self.token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return self.prompt_text + tail

    def add_turn(self, completion: Completion, token_ids: list[int], logprobs: list[float] | None) -> None:
        """Append the model's tokens (mask 1) and remember whether they ran out of room; ``logprobs`` None:
        the generator returned none (placeholders of 0 are stored and ``logprobs_known`` turns False).
        """
        self.token_ids += token_ids
        self.logprobs += logprobs if logprobs is not None else [0.0] * len(token_ids)
        self.logprobs_known = self.logprobs_known and logprobs is not None
        self.model_mask += [1] * len(token_ids)
        self.pieces.append(completion.text)
        self.turns += 1
        self.truncated = completion.finish_reason == "length"

    def add_step(self, result: tuple[Any, float, bool, bool, dict[str, Any]], tokenizer: Any) -> None:
        """Record a step; a non-terminal step's observation joins the sequence with mask 0."""
        observation, reward, terminated, truncated, info = result
        self.reward += float(reward)
        self.info = dict(info)
        if terminated or truncated:
            self.done = True
            self.truncated = self.truncated or bool(truncated)
            return
        text = str(observation)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"] if text and tokenizer is not None else []
        self.token_ids += ids
        self.logprobs += [0.0] * len(ids)
        self.model_mask += [0] * len(ids)
        self.pieces.append(text)


def env_attr(env: gymnasium.Env, name: str, default: Any) -> Any:
    """An attribute of the outermost wrapper that has it, else of the base env, else ``default``."""
    try:
        return env.get_wrapper_attr(name)
    except AttributeError:
        return default


def _episode_envs(env: gymnasium.Env, count: int) -> list[gymnasium.Env]:
    """``count`` independent copies of ``env`` (wrappers included) sharing its read-only problem source.

    The env is pickled once and unpickled per copy, which yields what a deep copy does (a fresh
    memo per copy, the source shared) at a quarter of the cost; an env that pickle cannot handle
    (a local function, a lambda) is deep-copied instead.
    """
    source = getattr(env.unwrapped, "source", None)
    try:
        blob = _pickle_sharing(env, source)
    except (pickle.PicklingError, TypeError, AttributeError):
        blob = None
    if blob is not None:
        return [_unpickle_sharing(blob, source) for _ in range(count)]
    shared = {id(source): source} if source is not None else {}
    try:
        # A fresh memo per copy: a shared one would hand every copy the same objects.
        return [copy.deepcopy(env, dict(shared)) for _ in range(count)]
    except (TypeError, copy.Error) as exc:  # holds something uncopyable, e.g. a lock or a socket
        if env.spec is None:
            raise ConfigError(
                f"env {env} cannot be copied ({exc}) and has no spec to re-make it from; pass an env id "
                "instead, or make the env deep-copyable"
            ) from exc
        return [gymnasium.make(env.spec) for _ in range(count)]


_SHARED_SOURCE = "reasongym-shared-source"
"""Pickle's stand-in for the problem source, which every copy shares instead of copying."""


class _SharingPickler(pickle.Pickler):
    """Pickles everything but ``shared``, which it writes as a reference."""

    def __init__(self, buffer: io.BytesIO, shared: Any) -> None:
        super().__init__(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj: Any) -> str | None:
        return _SHARED_SOURCE if self.shared is not None and obj is self.shared else None


class _SharingUnpickler(pickle.Unpickler):
    """Reads `_SharingPickler` bytes, resolving the reference to ``shared``."""

    def __init__(self, blob: bytes, shared: Any) -> None:
        super().__init__(io.BytesIO(blob))
        self.shared = shared

    def persistent_load(self, pid: Any) -> Any:
        if pid != _SHARED_SOURCE:
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        return self.shared


def _pickle_sharing(env: gymnasium.Env, source: Any) -> bytes:
    """``env`` pickled with ``source`` (if not None) left out as a reference."""
    buffer = io.BytesIO()
    _SharingPickler(buffer, source).dump(env)
    return buffer.getvalue()


def _unpickle_sharing(blob: bytes, source: Any) -> gymnasium.Env:
    """A fresh env from `_pickle_sharing`'s bytes, its source reference pointing at ``source``."""
    return _SharingUnpickler(blob, source).load()


def start_episodes(
    env: gymnasium.Env,
    tokenizer: PreTrainedTokenizerBase | None,
    indices: Sequence[int],
    group_size: int,
    split: str | None,
    difficulty: int | None,
    hint: bool,
) -> list[Episode]:
    """Reset one env copy per row (index-major, G copies per index) and format each prompt."""
    rows = [int(index) for index in indices for _ in range(group_size)]
    episodes = []
    for row_env, index in zip(_episode_envs(env, len(rows)), rows, strict=True):
        options: dict[str, Any] = {"index": index}
        if split is not None:
            options["split"] = split
        if difficulty is not None:
            options["difficulty"] = difficulty
        if hint:
            options["hint"] = True
        observation, info = row_env.reset(options=options)
        messages = _prompt_messages(str(observation), info)
        text = format_prompt(tokenizer, messages) if tokenizer is not None else str(observation)
        episodes.append(Episode(row_env, text, str(info.get("problem_id", index)), messages))
    return episodes


def play_episodes(
    env: gymnasium.Env,
    generator: Generator,
    tokenizer: PreTrainedTokenizerBase | None,
    indices: Sequence[int],
    *,
    group_size: int,
    params: SamplingParams,
    split: str | None,
    difficulty: int | None = None,
    hint: bool = False,
    max_turns: int | None = None,
) -> tuple[list[Episode], torch.device | None]:
    """Play ``group_size`` episodes of each problem to the end; returns them (index-major) and the device.

    Args:
        env: The environment (wrappers included); copied once per episode and never stepped itself.
        generator: Any `Generator`; one with ``generate_batch`` (`HFGenerator`) is used through it.
        tokenizer: Formats prompts with its chat template and tokenizes observations; None sends the env's
            plain prompt text (a generator that formats prompts itself).
        indices: Problem indices in ``split``.
        group_size: G, episodes per problem.
        params: Sampling parameters of every turn; ``n`` is ignored (the G samples of a problem share its
            first prompt), the env's ``stop_strings`` are added to ``stop``, and turn k uses ``seed + k``.
        split: Split of the problems; None means the env's default.
        difficulty: Difficulty level; None means the env's default.
        hint: Show the gold answer in the prompt (STaR rationalization).
        max_turns: Most model turns per episode; None: the env decides, capped at `DEFAULT_MAX_TURNS`. An
            episode cut off here is marked ``cut_off`` (and truncated).

    Returns:
        ``(episodes, device)``: the finished episodes, and the device of the generator's tensors (None for
        a generator without ``generate_batch``).
    """
    stops = tuple(dict.fromkeys((*params.stop, *env_attr(env, "stop_strings", ()))))
    device = None
    episodes: list[Episode] = []
    try:
        episodes = start_episodes(env, tokenizer, indices, group_size, split, difficulty, hint)
        for turn in range(max_turns or DEFAULT_MAX_TURNS):
            live = [episode for episode in episodes if not episode.done]
            if not live:
                break
            seed = None if params.seed is None else params.seed + turn
            turn_params = dataclasses.replace(params, n=1, stop=stops, seed=seed)
            device = (
                play_turn(live, generator, tokenizer, turn_params, group_size, first_turn=turn == 0) or device
            )
        for episode in episodes:
            if not episode.done:
                episode.done = episode.truncated = episode.cut_off = True
    finally:
        for episode in episodes:
            episode.env.close()
    return episodes, device


def _prompt_messages(observation: str, info: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages of the prompt: the env's ``info["messages"]``, ending in what it showed.

    A wrapper may change the observation without updating ``info["messages"]``; the observation is
    what the env shows, so it replaces the last user message (a system message is kept).
    """
    messages = [dict(m) for m in info.get("messages") or [] if isinstance(m, dict)]
    if messages and messages[-1].get("role") == "user":
        messages[-1]["content"] = observation
        return messages
    return [*messages, {"role": "user", "content": observation}]


def play_turn(
    live: list[Episode],
    generator: Generator,
    tokenizer: PreTrainedTokenizerBase,
    params: SamplingParams,
    group_size: int,
    *,
    first_turn: bool,
) -> torch.device | None:
    """Generate one turn for every live episode (batched), then step every env in parallel.

    On the first turn the G rows of a problem share one prompt and are sampled with ``n = G`` (all
    rows are live then, in group layout); later turns have one context per row. Returns the device
    of the generator's tensors (None for a generator without ``generate_batch``).
    """
    contexts = [episode.prompt_text if first_turn else episode.context(tokenizer) for episode in live]
    grouped = (
        first_turn
        and group_size > 1
        and all(text == contexts[i - i % group_size] for i, text in enumerate(contexts))
    )
    if grouped:
        contexts, params = contexts[::group_size], dataclasses.replace(params, n=group_size)
    prompt_ids, completions, device = _generate(generator, tokenizer, contexts, params, first_turn)
    for row, (episode, completion) in enumerate(zip(live, completions, strict=True)):
        if first_turn:
            episode.prompt_ids = prompt_ids[row]
        episode.add_turn(completion, *_completion_tokens(completion, tokenizer, params.stop))
    results = step_all([episode.env for episode in live], [completion.text for completion in completions])
    for episode, result in zip(live, results, strict=True):
        episode.add_step(result, tokenizer)
    return device


def _generate(
    generator: Generator,
    tokenizer: PreTrainedTokenizerBase,
    contexts: list[str],
    params: SamplingParams,
    with_prompt_ids: bool,
) -> tuple[list[list[int]], list[Completion], torch.device | None]:
    """Completions for every context (``n`` each, in group layout), the prompt tokens if asked, the device."""
    if hasattr(generator, "generate_batch"):
        batch = generator.generate_batch(contexts, params)
        prompt_ids: list[list[int]] = []
        if with_prompt_ids:
            ids, mask = batch.prompt_ids.cpu(), batch.prompt_mask.cpu().bool()  # [B, P]
            prompt_ids = [row[keep].tolist() for row, keep in zip(ids, mask, strict=True)]
        completions = [c for group in batch.completions(params.n) for c in group]
        return prompt_ids, completions, batch.completion_ids.device
    groups = generator.generate(contexts, params)
    if len(groups) != len(contexts) or any(len(group) != params.n for group in groups):
        raise ConfigError(
            f"the generator returned {[len(g) for g in groups]} completions for {len(contexts)} prompts; "
            f"expected {params.n} per prompt"
        )
    encoded = _encode_prompts(tokenizer, contexts) if with_prompt_ids and tokenizer is not None else []
    prompt_ids = [ids for ids in encoded for _ in range(params.n)] or [
        [] for _ in range(len(contexts) * params.n)
    ]
    return prompt_ids, [c for group in groups for c in group], None


def _encode_prompts(tokenizer: PreTrainedTokenizerBase, prompts: list[str]) -> list[list[int]]:
    """Prompt tokens as `HFGenerator` makes them: special tokens added unless the text has BOS already."""
    bos = tokenizer.bos_token
    add_special = not (bos and all(prompt.startswith(bos) for prompt in prompts))
    return tokenizer(prompts, add_special_tokens=add_special)["input_ids"]


def _completion_tokens(
    completion: Completion, tokenizer: Any, stops: Sequence[str] = ()
) -> tuple[list[int], list[float] | None]:
    """A completion's token ids and log-probs; None for the log-probs of a text-only completion.

    A text-only completion is tokenized (nothing else is possible without the ids the server sampled); one
    that finished with ``stop`` without ending in a stop string ended on the model's EOS, which the text
    leaves out, so the EOS id is appended: the trainer then scores the sequence the model produced.
    """
    token_ids = list(completion.token_ids)
    logprobs = list(completion.logprobs)
    if token_ids and len(logprobs) == len(token_ids):
        return token_ids, logprobs
    if not token_ids and completion.text and tokenizer is not None:
        token_ids = tokenizer(completion.text, add_special_tokens=False)["input_ids"]
        ended_on_eos = completion.finish_reason == "stop" and not completion.text.endswith(tuple(stops))
        if ended_on_eos and getattr(tokenizer, "eos_token_id", None) is not None:
            token_ids.append(tokenizer.eos_token_id)
    return token_ids, None
