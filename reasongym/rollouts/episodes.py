"""Play a batch of episodes a turn at a time: one env copy per episode, steps in a thread pool.

`play_episodes` is where a sampler meets an environment, for evaluation (`reasongym.evaluation.evaluate`)
and for training (`reasongym.rollouts.batch.collect_rollouts` turns the episodes into tensors).
Every episode goes through the plain Gymnasium loop, ``reset(options={"index", "split", "difficulty",
"hint"})`` then ``step(text)`` until it terminates or is truncated, so wrappers, reward shaping and
multi-turn environments (tool calls, retries) behave exactly as for a user stepping the env by hand.
The copies and their parallel stepping are `reasongym.rollouts.env_pool`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import torch
from transformers import PreTrainedTokenizerBase

from reasongym.errors import ConfigError
from reasongym.generation.base import Completion, Generator, SamplingParams
from reasongym.policy.loading import format_prompt
from reasongym.rollouts.env_pool import EnvPool, env_attr, episode_envs, step_all

DEFAULT_MAX_TURNS = 32
"""Safety cap on model turns per episode when ``max_turns`` is None (environments set their own limits)."""


SAMPLE_SEED_STRIDE = 7919
"""Seed offset between the samples of one problem once they continue apart: turn k of sample j of a problem
seeded s draws from seed ``s + SAMPLE_SEED_STRIDE * j + k`` (the first turn, shared, from ``s``)."""


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
    seed: int | None = None
    """The episode's own sampling seed (its problem's, `play_episodes` ``problem_seeds``); None: the call's."""
    sample: int = 0
    """Which of its problem's ``n`` samples this episode is."""

    def context(self, tokenizer: PreTrainedTokenizerBase | None) -> str:
        """The text the next turn continues: the prompt and every token so far, special ones kept."""
        if tokenizer is None:  # a generator that works on text alone: the texts so far
            return self.prompt_text + "".join(self.pieces)
        tail = tokenizer.decode(self.token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return self.prompt_text + tail

    def chat_messages(self) -> list[dict[str, str]]:
        """The conversation so far as chat messages (what a chat endpoint continues).

        The prompt's messages, then each model turn as the assistant's and each observation as the user's.
        """
        roles = ("assistant", "user")
        turns = [{"role": roles[i % 2], "content": piece} for i, piece in enumerate(self.pieces)]
        return [*self.messages, *turns]

    def add_turn(self, completion: Completion, token_ids: list[int], logprobs: list[float] | None) -> None:
        """Append the model's tokens (mask 1) and remember whether they ran out of room.

        ``logprobs`` None: the generator returned none (placeholders of 0 are stored and ``logprobs_known``
        turns False).
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


def start_episodes(
    envs: Sequence[gymnasium.Env],
    tokenizer: PreTrainedTokenizerBase | None,
    indices: Sequence[int],
    group_size: int,
    split: str | None,
    difficulty: int | None,
    hint: bool,
    problem_seeds: Sequence[int] | None = None,
) -> list[Episode]:
    """Reset one env copy per row (``envs``, index-major, ``group_size`` copies per index) and format each
    prompt; each episode gets its sample number and its problem's seed (``problem_seeds``, parallel to
    ``indices``), if given.

    The G rows of a problem usually show the same messages; each distinct prompt is formatted once (a chat
    template costs a fraction of a millisecond per call).
    """
    rows = [int(index) for index in indices for _ in range(group_size)]
    episodes: list[Episode] = []
    formatted: dict[str, str] = {}
    for row_env, index in zip(envs, rows, strict=True):
        options: dict[str, Any] = {"index": index}
        if split is not None:
            options["split"] = split
        if difficulty is not None:
            options["difficulty"] = difficulty
        if hint:
            options["hint"] = True
        observation, info = row_env.reset(options=options)
        messages = _prompt_messages(str(observation), info)
        key = repr(messages)
        if key not in formatted:
            formatted[key] = format_prompt(tokenizer, messages) if tokenizer is not None else str(observation)
        text = formatted[key]
        episode = Episode(
            row_env, text, str(info.get("problem_id", index)), messages, sample=len(episodes) % group_size
        )
        if problem_seeds is not None:
            episode.seed = int(problem_seeds[len(episodes) // group_size])
        episodes.append(episode)
    return episodes


def play_episodes(
    env: gymnasium.Env,
    generator: Generator,
    tokenizer: PreTrainedTokenizerBase | None,
    indices: Sequence[int],
    *,
    params: SamplingParams,
    split: str | None,
    difficulty: int | None = None,
    hint: bool = False,
    max_turns: int | None = None,
    pool: EnvPool | None = None,
    problem_seeds: Sequence[int] | None = None,
) -> tuple[list[Episode], torch.device | None]:
    """Play ``params.n`` episodes of each problem to the end; returns them (index-major) and the device.

    Args:
        env: The environment (wrappers included); copied once per episode and never stepped itself.
        generator: Any `Generator`; one with ``generate_batch`` (`HFGenerator`) is used through it.
        tokenizer: Formats prompts with its chat template and tokenizes observations; None sends the env's
            plain prompt text (a generator that formats prompts itself).
        indices: Problem indices in ``split``.
        params: Sampling parameters of every turn: ``n`` is G, the episodes per problem (sampled together
            from the prompt they share on the first turn); the env's ``stop_strings`` are added to ``stop``,
            and turn k uses ``seed + k``.
        split: Split of the problems; None means the env's default.
        difficulty: Difficulty level; None means the env's default.
        hint: Show the gold answer in the prompt (STaR rationalization).
        max_turns: Most model turns per episode; None: the env decides, capped at `DEFAULT_MAX_TURNS`. An
            episode cut off here is marked ``cut_off`` (and truncated).
        pool: Copies of ``env`` kept between calls (a trainer's); None: fresh copies, closed at the end.
        problem_seeds: One seed per problem of ``indices``, overriding ``params.seed``: each problem's samples
            come from an RNG of their own (`SamplingParams.prompt_seeds`), whatever the other problems.

    Returns:
        ``(episodes, device)``: the finished episodes, and the device of the generator's tensors (None for
        a generator without ``generate_batch``).
    """
    stops = tuple(dict.fromkeys((*params.stop, *env_attr(env, "stop_strings", ()))))
    device = None
    episodes: list[Episode] = []
    rows = len(indices) * params.n
    envs = pool.take(rows) if pool is not None else episode_envs(env, rows)
    try:
        episodes = start_episodes(envs, tokenizer, indices, params.n, split, difficulty, hint, problem_seeds)
        for turn in range(max_turns or DEFAULT_MAX_TURNS):
            live = [episode for episode in episodes if not episode.done]
            if not live:
                break
            seed = None if params.seed is None else params.seed + turn
            turn_params = dataclasses.replace(params, stop=stops, seed=seed)
            device = play_turn(live, generator, tokenizer, turn_params, first_turn=turn == 0) or device
        for episode in episodes:
            if not episode.done:
                episode.done = episode.truncated = episode.cut_off = True
    finally:
        if pool is None:
            for row_env in envs:
                row_env.close()
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
    *,
    first_turn: bool,
) -> torch.device | None:
    """Generate one turn for every live episode (batched), then step every env in parallel.

    On the first turn the ``params.n`` rows of a problem share one prompt and are its ``n`` samples (all
    rows are live then, in group layout). A later turn, or a first turn whose rows show different prompts
    (a wrapper that varies them), continues each row from its own context: one sample of each. Returns the
    device of the generator's tensors (None for a generator without ``generate_batch``).
    """
    chat = bool(getattr(generator, "takes_messages", False))
    if chat:  # a backend that applies the chat template itself gets the conversation so far
        contexts: list[Any] = [episode.chat_messages() for episode in live]
    elif not first_turn and tokenizer is not None and getattr(generator, "takes_token_ids", False):
        # The ids sampled and observed so far, as they are: what the trainer scores is what was sampled from.
        contexts = [episode.prompt_ids + episode.token_ids for episode in live]
    else:
        contexts = [episode.prompt_text if first_turn else episode.context(tokenizer) for episode in live]
    group_size = params.n
    grouped = first_turn and all(text == contexts[i - i % group_size] for i, text in enumerate(contexts))
    if grouped:
        contexts = contexts[::group_size]
    else:
        params = dataclasses.replace(params, n=1)  # one continuation of each row's own context
    prompt_texts = [episode.prompt_text for episode in live[:: group_size if grouped else 1]]
    if all(episode.seed is not None for episode in live):  # each problem's own seeds
        shown = live[::group_size] if grouped else live
        seeds = [e.seed + SAMPLE_SEED_STRIDE * e.sample * (not grouped) + e.turns for e in shown]  # type: ignore[operator]
        params = dataclasses.replace(params, prompt_seeds=tuple(seeds))
    prompt_ids, completions, device = _generate(
        generator, tokenizer, contexts, params, first_turn, prompt_texts
    )
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
    contexts: list[Any],
    params: SamplingParams,
    with_prompt_ids: bool,
    prompt_texts: list[str],
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
    encoded = _encode_prompts(tokenizer, prompt_texts) if with_prompt_ids and tokenizer is not None else []
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
    token_ids = list(completion.token_ids or ())
    logprobs = list(completion.logprobs or ())
    if token_ids and len(logprobs) == len(token_ids):
        return token_ids, logprobs
    if not token_ids and completion.text and tokenizer is not None:
        token_ids = tokenizer(completion.text, add_special_tokens=False)["input_ids"]
        ended_on_eos = completion.finish_reason == "stop" and not completion.text.endswith(tuple(stops))
        if ended_on_eos and getattr(tokenizer, "eos_token_id", None) is not None:
            token_ids.append(tokenizer.eos_token_id)
    return token_ids, None
