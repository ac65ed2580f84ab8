"""Rollouts: sample G completions per problem, play them through the environment, return tensors.

`collect_rollouts` plays episodes with `reasongym.rollouts.episodes.play_episodes` (the same engine
as evaluation: the plain Gymnasium loop, one env copy per episode, wrappers and reward shaping as for a
user; a multi-turn environment's observations are tokenized, appended and masked out of the loss) and
pads them into one `RolloutBatch`.

Why this file is long: the batch, its row operations and the padding are one idea (a batch that keeps
its rows aligned); it passed 400 lines when rows gained their replay records (issue 26).

Rows come in group layout (the G samples of problem 0 first, then problem 1, ...); the sequence
layout is the one `reasongym.agents.common.token_logprobs` scores::

    input_ids  = [pad .. pad | prompt] [turn 1 | observation 1 | turn 2 | ... | pad .. pad]
                  <------- P -------->  <----------------------- T ----------------------->

``attention_mask`` is 1 on every real token (prompt, model and observation tokens);
``completion_mask`` is 1 on model tokens only. With `HFGenerator` (``takes_token_ids``) turn k > 1 is
sampled from the token ids of everything before it (prompt ids, sampled ids, each observation tokenized
once), so the trainer scores exactly the tokens that were sampled, conditioned on exactly what the sampler
saw, with any BPE tokenizer. A generator that takes text only (a served model) gets the text of that
context instead; a tokenizer may then split it differently, and ``old_logp`` of later turns can differ
from a recomputation.

Shape legend: see `reasongym.agents.common` (B sequences, G group size, P prompt, T completion tokens).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import torch
from torch import Tensor
from transformers import PreTrainedTokenizerBase

from reasongym.envs import make  # registers the built-in ids
from reasongym.errors import ConfigError
from reasongym.generation.base import Generator, SamplingParams
from reasongym.rollouts.env_pool import EnvPool
from reasongym.rollouts.episodes import Episode, play_episodes

TURN_CAP_OUTCOME = "max_turns"
"""``outcomes`` entry of an episode that `collect_rollouts` cut off at the turn cap."""

ROW_TENSORS = (
    "rewards",
    "correct",
    "gradable",
    "truncated",
    "lengths",
    "turns",
    "timed_out",
    "policy_version",
)
_ROW_LISTS = ("texts", "prompts", "problem_ids", "outcomes", "extracted", "replays")


def _joined(lists: list[Any]) -> Any:
    return None if any(rows is None for rows in lists) else [row for rows in lists for row in rows]


def joined_tensor(parts: list[Tensor | None]) -> Tensor | None:
    present = [part for part in parts if part is not None]
    return torch.cat(present) if len(present) == len(parts) else None


def _picked(rows: Any, picked: Sequence[int]) -> Any:
    return None if rows is None else [rows[row] for row in picked]


@dataclass(eq=False)
class RolloutBatch:
    """B = num_problems * G sequences in group layout, all tensors on the generator's device."""

    input_ids: Tensor
    """[B, P+T] prompt (left-padded) then completion (right-padded)."""
    attention_mask: Tensor
    """[B, P+T] 1 on every real token: prompt, model and observation tokens."""
    completion_start: int
    """P: completion tokens are ``input_ids[:, P:]``."""
    completion_ids: Tensor
    """[B, T] completion tokens (model turns and observations in order), right-padded."""
    completion_mask: Tensor
    """[B, T] 1 on model-generated tokens only (not padding, not observation tokens)."""
    old_logp: Tensor
    """[B, T] float32 sampler log-probs (raw, temperature 1) of completion tokens; 0 where the mask is 0.
    Only meaningful when ``old_logp_known``: see `recompute_old_logp`."""
    rewards: Tensor
    """[B] float32 episode return: the sum of the env's step rewards (shaping included)."""
    correct: Tensor
    """[B] bool, the final answer was graded correct."""
    gradable: Tensor
    """[B] bool, False where the gold was ungradable (the verdict's ``correct`` was None)."""
    truncated: Tensor
    """[B] bool: the last turn hit ``max_new_tokens``, the env truncated, or the turn cap cut it off."""
    lengths: Tensor
    """[B] int64 model tokens per sequence (``completion_mask.sum(1)``)."""
    group_size: int
    """G, samples per problem."""
    texts: list[str]
    """B completion texts (model turns and observations joined)."""
    prompts: list[str]
    """B formatted prompt texts (what the model was given for its first turn)."""
    problem_ids: list[str]
    """B problem ids (from the env's reset info)."""
    outcomes: list[str]
    """B verifier outcomes of the last step (correct, wrong, unparseable, timeout, refused, max_turns)."""
    extracted: list[str | None]
    """B final answers the verifier extracted, None where none was found."""
    pad_token_id: int = 0
    """Token id used for padding ``input_ids`` and ``completion_ids``."""
    turns: Tensor | None = None
    """[B] int64 model turns per episode (1 for single-turn envs); None if unknown."""
    timed_out: Tensor | None = None
    """[B] bool: grading ran out of time (outcome ``timeout``; such a row is ungradable too); None if unknown."""
    policy_version: Tensor | None = None
    """[B] int64 the policy version (optimizer steps taken) that drew each row, when it may be older than the
    trainer's (a sampler ahead, ``max_staleness`` >= 1); None: the trainer's current policy drew it."""
    replays: list[dict[str, Any]] | None = None
    """B step-info replay records and verifier versions (``samples.jsonl`` keeps them for ``regrade``)."""
    old_logp_known: bool = True
    """False when some row came from a generator that returned text only: ``old_logp`` then holds
    placeholders, and a trainer must call `recompute_old_logp` before any loss, or have its one update per
    batch take them from its own forward pass (the sessions do one or the other)."""
    sampler_logp: Tensor | None = None
    """[B, T] the log-probs another engine (vLLM, a served model) reported for the completion tokens, kept
    when the trainer computes ``old_logp`` with its own forward pass: the off-policy correction weighs
    their difference (`reasongym.agents.offpolicy`). None when the sampler is the trained module itself."""
    reward_terms: dict[str, Tensor] | None = None
    """Each term of the environment's reward (``info["reward_terms"]``: correctness, format, length), [B]
    float32 unweighted values by name; None when an episode's environment does not report them (a
    multi-turn retry, whose reward discounts its attempts; a custom environment)."""

    def __len__(self) -> int:
        """B, the number of sequences."""
        return int(self.input_ids.shape[0])

    @property
    def num_groups(self) -> int:
        """B // G, the number of problems."""
        return len(self) // self.group_size

    @property
    def graded_mask(self) -> Tensor:
        """[B, T] ``completion_mask`` with the rows of ungradable samples zeroed: a sample whose verdict could
        not be made (a grading timeout) has no reward, so the trainers leave it out of the loss."""
        return self.completion_mask * self.gradable.to(self.completion_mask.dtype)[:, None]  # [B, T]

    def select_groups(self, keep: Tensor | Sequence[bool]) -> RolloutBatch:
        """Keep whole groups (DAPO dynamic sampling), then drop padding columns nobody needs.

        Args:
            keep: [B // G] bool, one flag per group.

        Returns:
            A new batch holding the kept groups in order.

        Raises:
            ConfigError: ``keep`` is not B // G booleans.
        """
        keep = torch.as_tensor(keep, device=self.input_ids.device)
        if keep.dtype != torch.bool or keep.shape != (self.num_groups,):
            raise ConfigError(
                f"keep has dtype {keep.dtype} and shape {tuple(keep.shape)}; expected a bool tensor "
                f"of shape ({self.num_groups},), one flag per group of {self.group_size}"
            )
        rows = keep.repeat_interleave(self.group_size).nonzero().flatten()  # [B']
        return self._take_rows(rows)._trimmed()

    @staticmethod
    def concat(batches: Sequence[RolloutBatch]) -> RolloutBatch:
        """Stack batches row-wise, re-padding prompts on the left and completions on the right.

        Args:
            batches: Batches with the same group size and pad token, on one device.

        Returns:
            One batch with the rows of every input in order.

        Raises:
            ConfigError: No batches, or group sizes / pad tokens that differ.
        """
        if not batches:
            raise ConfigError("batches is empty; concat needs at least one RolloutBatch")
        first = batches[0]
        for name in ("group_size", "pad_token_id"):
            values = sorted({getattr(batch, name) for batch in batches})
            if len(values) > 1:
                raise ConfigError(f"batches have different {name} values {values}; concat needs one")
        width_p = max(batch.completion_start for batch in batches)
        width_t = max(batch.completion_ids.shape[1] for batch in batches)
        parts = [batch._padded(width_p, width_t) for batch in batches]
        tensors = {name: torch.cat([getattr(p, name) for p in parts]) for name in _SEQUENCE_TENSORS}
        tensors["sampler_logp"] = joined_tensor([p.sampler_logp for p in parts])
        for name in ROW_TENSORS:
            tensors[name] = joined_tensor([getattr(batch, name) for batch in batches])
        lists = {name: _joined([getattr(batch, name) for batch in batches]) for name in _ROW_LISTS}
        terms = joined_terms([batch.reward_terms for batch in batches])
        return dataclasses.replace(
            first, completion_start=width_p, reward_terms=terms, **tensors, **lists
        )._trimmed()

    def to(self, device: str | torch.device) -> RolloutBatch:
        """A copy with every tensor on ``device``."""
        moved = {
            f.name: getattr(self, f.name).to(device)
            for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), Tensor)
        }
        terms = None if self.reward_terms is None else {k: v.to(device) for k, v in self.reward_terms.items()}
        return dataclasses.replace(self, reward_terms=terms, **moved)

    def _take_rows(self, rows: Tensor) -> RolloutBatch:
        """A batch of the given rows (same widths)."""
        picked = rows.tolist()
        tensors = {name: getattr(self, name)[rows] for name in _SEQUENCE_TENSORS}
        tensors["sampler_logp"] = None if self.sampler_logp is None else self.sampler_logp[rows]
        for name in ROW_TENSORS:
            value = getattr(self, name)
            tensors[name] = None if value is None else value[rows]
        lists = {name: _picked(getattr(self, name), picked) for name in _ROW_LISTS}
        terms = None if self.reward_terms is None else {k: v[rows] for k, v in self.reward_terms.items()}
        return dataclasses.replace(self, reward_terms=terms, **tensors, **lists)

    def _padded(self, width_p: int, width_t: int) -> RolloutBatch:
        """The sequence tensors padded to P = ``width_p`` (left) and T = ``width_t`` (right)."""
        grow_p, grow_t = width_p - self.completion_start, width_t - self.completion_ids.shape[1]

        def pad(x: Tensor, value: float, prompt_part: bool) -> Tensor:
            return torch.nn.functional.pad(x, (grow_p if prompt_part else 0, grow_t), value=value)

        return dataclasses.replace(
            self,
            input_ids=pad(self.input_ids, self.pad_token_id, True),
            attention_mask=pad(self.attention_mask, 0, True),
            completion_ids=pad(self.completion_ids, self.pad_token_id, False),
            completion_mask=pad(self.completion_mask, 0, False),
            old_logp=pad(self.old_logp, 0.0, False),
            sampler_logp=None if self.sampler_logp is None else pad(self.sampler_logp, 0.0, False),
            completion_start=width_p,
        )

    def _trimmed(self) -> RolloutBatch:
        """Drop prompt columns that are padding in every row, and completion columns likewise."""
        start = self.completion_start
        prompt_used = self.attention_mask[:, :start].any(dim=0).nonzero()  # [P', 1]
        completion_used = self.attention_mask[:, start:].any(dim=0).nonzero()  # [T', 1]
        first = int(prompt_used[0]) if len(prompt_used) else start
        width_t = int(completion_used[-1]) + 1 if len(completion_used) else 0
        return dataclasses.replace(
            self,
            input_ids=self.input_ids[:, first : start + width_t],
            attention_mask=self.attention_mask[:, first : start + width_t],
            completion_ids=self.completion_ids[:, :width_t],
            completion_mask=self.completion_mask[:, :width_t],
            old_logp=self.old_logp[:, :width_t],
            sampler_logp=None if self.sampler_logp is None else self.sampler_logp[:, :width_t],
            completion_start=start - first,
        )


_SEQUENCE_TENSORS = ("input_ids", "attention_mask", "completion_ids", "completion_mask", "old_logp")


def joined_terms(parts: Sequence[Mapping[str, Tensor] | None]) -> dict[str, Tensor] | None:
    """Reward terms of several row sets, concatenated by name; None unless every part has the same names."""
    if not parts or any(part is None for part in parts) or len({tuple(p) for p in parts if p}) != 1:  # type: ignore[union-attr]
        return None
    names = list(parts[0] or {})
    return {name: torch.cat([part[name].cpu() for part in parts if part is not None]) for name in names}


def collect_rollouts(
    env_id_or_env: str | gymnasium.Env,
    generator: Generator,
    tokenizer: PreTrainedTokenizerBase,
    indices: Sequence[int],
    *,
    params: SamplingParams,
    split: str | None = "train",
    difficulty: int | None = None,
    hint: bool = False,
    max_turns: int | None = None,
    pool: EnvPool | None = None,
) -> RolloutBatch:
    """Sample ``params.n`` episodes of each problem and return them as one padded batch.

    Args:
        env_id_or_env: A registered id (``"reasongym/Arithmetic-v0"``) or an environment (wrappers
            included); it is copied once per episode and never stepped itself.
        generator: Any `Generator`; one with ``generate_batch`` (`HFGenerator`) is used through it.
            A completion without token ids has its text tokenized and gets log-probs of 0.
        tokenizer: The policy's tokenizer (prompt formatting, observations, later-turn contexts).
        indices: Problem indices in ``split``; the batch has ``len(indices) * params.n`` rows.
        params: Sampling parameters of every turn: ``n`` is G, the episodes per problem; the env's
            ``stop_strings`` are added to ``stop``, and turn k uses ``seed + k``.
        split: Split of the problems; None means the env's default.
        difficulty: Difficulty level; None means the env's default.
        hint: Show the gold answer in the prompt (STaR rationalization).
        max_turns: Most model turns per episode; None means the env decides (capped at
            `DEFAULT_MAX_TURNS`). An episode cut off here is truncated, not correct, and has
            outcome `TURN_CAP_OUTCOME`.
        pool: A trainer's `EnvPool` of ``env_id_or_env``, reused across batches; None: fresh copies.

    Returns:
        The `RolloutBatch`, on the device of the generator's ``generate_batch`` tensors, else on
        ``generator.model.device`` when there is one, else on the CPU.

    Raises:
        ConfigError: An argument out of range, or an env that can be neither copied nor re-made.
    """
    _check_arguments(indices, params, max_turns)
    env = _resolve_env(env_id_or_env)
    try:
        episodes, device = play_episodes(
            env,
            generator,
            tokenizer,
            indices,
            params=params,
            split=split,
            difficulty=difficulty,
            hint=hint,
            max_turns=max_turns,
            pool=pool,
        )
    finally:
        if env is not env_id_or_env:
            env.close()
    device = device or getattr(getattr(generator, "model", None), "device", None)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    return _assemble(episodes, params.n, pad_id or 0, device)


def _check_arguments(indices: Sequence[int], params: SamplingParams, max_turns: int | None) -> None:
    checks = [
        (
            "indices",
            indices,
            not isinstance(indices, str) and len(indices) > 0,
            "a non-empty sequence of ints",
        ),
        (
            "max_turns",
            max_turns,
            max_turns is None or (isinstance(max_turns, int) and max_turns >= 1),
            "None or an integer >= 1",
        ),
        ("params", params, isinstance(params, SamplingParams), "a SamplingParams"),
    ]
    for name, value, ok, allowed in checks:
        if not ok:
            raise ConfigError(f"{name}={value!r} is not allowed; expected {allowed}")


def _resolve_env(env_id_or_env: str | gymnasium.Env) -> gymnasium.Env:
    if isinstance(env_id_or_env, str):
        return make(env_id_or_env)
    if not isinstance(env_id_or_env, gymnasium.Env):
        raise ConfigError(
            f"env_id_or_env={env_id_or_env!r} is not allowed; expected an env id string or a gymnasium.Env"
        )
    return env_id_or_env


def _assemble(
    episodes: list[Episode], group_size: int, pad_id: int, device: torch.device | None
) -> RolloutBatch:
    """Pad every episode into the batch layout (prompts left, completions right), one tensor call each."""
    width_p = max(len(episode.prompt_ids) for episode in episodes)
    width_t = max(len(episode.token_ids) for episode in episodes)
    ids, attention, model_mask, logprobs = [], [], [], []
    for episode in episodes:
        left, right = width_p - len(episode.prompt_ids), width_t - len(episode.token_ids)
        ids.append([pad_id] * left + episode.prompt_ids + episode.token_ids + [pad_id] * right)
        attention.append([0] * left + [1] * (width_p - left + len(episode.token_ids)) + [0] * right)
        model_mask.append(episode.model_mask + [0] * right)
        logprobs.append(episode.logprobs + [0.0] * right)
    input_ids = torch.tensor(ids, dtype=torch.long).view(len(episodes), width_p + width_t)  # [B, P+T]
    attention_mask = torch.tensor(attention, dtype=torch.long).view_as(input_ids)  # [B, P+T]
    completion_mask = torch.tensor(model_mask, dtype=torch.long).view(len(episodes), width_t)  # [B, T]
    old_logp = torch.tensor(logprobs, dtype=torch.float32).view_as(completion_mask)  # [B, T]
    batch = RolloutBatch(
        input_ids=input_ids,
        attention_mask=attention_mask,
        completion_start=width_p,
        completion_ids=input_ids[:, width_p:].clone(),
        completion_mask=completion_mask,
        old_logp=old_logp,
        rewards=torch.tensor([episode.reward for episode in episodes], dtype=torch.float32),
        correct=torch.tensor([bool(e.info.get("correct")) and not e.cut_off for e in episodes]),
        gradable=torch.tensor([e.cut_off or e.info.get("correct", False) is not None for e in episodes]),
        truncated=torch.tensor([episode.truncated for episode in episodes]),
        lengths=completion_mask.sum(dim=1),
        group_size=group_size,
        texts=["".join(episode.pieces) for episode in episodes],
        prompts=[episode.prompt_text for episode in episodes],
        problem_ids=[episode.problem_id for episode in episodes],
        outcomes=[TURN_CAP_OUTCOME if e.cut_off else str(e.info.get("outcome", "")) for e in episodes],
        extracted=[None if e.cut_off else e.info.get("extracted") for e in episodes],
        replays=[{**e.info.get("replay", {}), "verifier": e.info.get("verifier")} for e in episodes],
        pad_token_id=pad_id,
        turns=torch.tensor([episode.turns for episode in episodes], dtype=torch.long),
        timed_out=torch.tensor([not e.cut_off and e.info.get("outcome") == "timeout" for e in episodes]),
        old_logp_known=all(episode.logprobs_known for episode in episodes),
        reward_terms=_episode_terms(episodes),
    )
    return batch.to(device) if device is not None else batch


def _episode_terms(episodes: list[Episode]) -> dict[str, Tensor] | None:
    """[B] each reward term of the episodes' last steps (``info["reward_terms"]``); an episode the turn cap
    cut off earned none of them (0). None unless every other episode reports the same terms."""
    reported = [e.info.get("reward_terms") for e in episodes if not e.cut_off]
    if not reported or any(not isinstance(terms, dict) for terms in reported):
        return None
    names = list(reported[0])
    if any(list(terms) != names for terms in reported):
        return None
    values = [
        [0.0] * len(names) if e.cut_off else [float(e.info["reward_terms"][n]) for n in names]
        for e in episodes
    ]
    table = torch.tensor(values, dtype=torch.float32).view(len(episodes), len(names))  # [B, terms]
    return {name: table[:, i] for i, name in enumerate(names)}


def sample_rows(batch: Any, group_size: int, groups: int = 2) -> list[dict[str, Any]]:
    """The first ``groups`` groups of ``batch`` as JSON-ready rows for ``samples.jsonl`` (replayable)."""
    rows = min(len(batch.texts), groups * group_size)
    replays = batch.replays or [{}] * rows
    return [
        {
            "prompt": batch.prompts[i],
            "completion": batch.texts[i],
            "reward": float(batch.rewards[i]),
            "correct": bool(batch.correct[i]) if bool(batch.gradable[i]) else None,
            "outcome": batch.outcomes[i],
            "extracted": batch.extracted[i],
            **({} if batch.policy_version is None else {"policy_version": int(batch.policy_version[i])}),
            **replays[i],  # env_id, split, index, difficulty, seed, problem_id, verifier: for regrading
        }
        for i in range(rows)
    ]
