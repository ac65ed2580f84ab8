"""SFT data: tokenize (prompt, completion) pairs, pad or pack them into micro-batches, stream epochs.

Labels are the token ids on completion tokens (and the EOS after them) and ``IGNORE_INDEX`` on prompt
and padding, so the loss sees completions only. Packed rows restart ``position_ids`` at every example;
transformers (>= 4.54, run without a KV cache) turns that into attention that stays inside each example.

Shape letters: B = sequences (rows) in a micro-batch, L = tokens per row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from reasongym.envs.core import format_final_answer, gold_answer_text
from reasongym.errors import ConfigError
from reasongym.policy.loading import format_prompt

IGNORE_INDEX = -100
"""Label of positions that carry no loss (prompt, padding)."""


@dataclass(frozen=True)
class SFTExample:
    """One tokenized pair."""

    input_ids: tuple[int, ...]
    """Prompt tokens, then completion tokens and EOS."""
    completion_start: int
    """Index of the first completion token (= number of prompt tokens, >= 1)."""


@dataclass(frozen=True)
class SFTBatch:
    """A micro-batch ready for the model; ``labels`` is ``IGNORE_INDEX`` off the completions."""

    input_ids: torch.Tensor
    """[B, L] token ids, right-padded."""
    attention_mask: torch.Tensor | None
    """[B, L] 1 on real tokens; None for packed rows (``position_ids`` then mark the examples)."""
    position_ids: torch.Tensor
    """[B, L] positions, restarting at 0 for each packed example."""
    labels: torch.Tensor
    """[B, L] the token id where it is a completion token, else ``IGNORE_INDEX``."""

    @property
    def num_tokens(self) -> int:
        """Completion tokens that carry loss (the first position never does: nothing predicts it)."""
        return int((self.labels[:, 1:] != IGNORE_INDEX).sum())

    def to(self, device: torch.device) -> SFTBatch:
        """The batch on ``device``."""
        mask = None if self.attention_mask is None else self.attention_mask.to(device)
        return SFTBatch(self.input_ids.to(device), mask, self.position_ids.to(device), self.labels.to(device))


def tokenize_pairs(
    tokenizer: PreTrainedTokenizerBase, pairs: Sequence[tuple[str, str]], max_length: int
) -> list[SFTExample]:
    """Tokenize prompt and completion separately (as at sampling time), append EOS, cut to ``max_length``.

    The prompt gets the tokenizer's special tokens (BOS) unless it already starts with BOS, matching
    ``HFGenerator``; the completion gets none.

    Raises:
        ConfigError: A prompt with no tokens, or one that leaves no room for a completion token.
    """
    if tokenizer.eos_token_id is None:
        raise ConfigError("the tokenizer has no eos_token; SFT teaches the model to stop with it")
    examples = []
    for index, (prompt, completion) in enumerate(pairs):
        add_special = not (tokenizer.bos_token and prompt.startswith(tokenizer.bos_token))
        prompt_ids = tokenizer(prompt, add_special_tokens=add_special)["input_ids"]
        completion_ids = [
            *tokenizer(completion, add_special_tokens=False)["input_ids"],
            tokenizer.eos_token_id,
        ]
        if not 1 <= len(prompt_ids) < max_length:
            raise ConfigError(
                f"pairs[{index}] has a prompt of {len(prompt_ids)} tokens; with max_length={max_length} a prompt "
                f"needs 1 to {max_length - 1} tokens (raise max_length or shorten the prompt)"
            )
        ids = (*prompt_ids, *completion_ids)[:max_length]
        examples.append(SFTExample(input_ids=ids, completion_start=len(prompt_ids)))
    return examples


def collate(
    examples: Sequence[SFTExample],
    *,
    batch_size: int,
    pad_id: int,
    packing: bool = False,
    max_length: int = 0,
) -> list[SFTBatch]:
    """Group examples, in the given order, into micro-batches of ``batch_size`` rows.

    Args:
        examples: Tokenized pairs, each at most ``max_length`` tokens when packing.
        batch_size: Rows per micro-batch.
        pad_id: Token id of right padding.
        packing: Concatenate examples into rows of up to ``max_length`` tokens instead of one per row.
        max_length: Row length when packing.

    Returns:
        The micro-batches.
    """
    rows = _pack_rows(examples, max_length) if packing else [[example] for example in examples]
    return [_make_batch(rows[i : i + batch_size], pad_id) for i in range(0, len(rows), batch_size)]


def _pack_rows(examples: Sequence[SFTExample], max_length: int) -> list[list[SFTExample]]:
    """Fill rows in order; an example that does not fit in the current row starts the next one."""
    rows: list[list[SFTExample]] = []
    used = max_length
    for example in examples:
        if used + len(example.input_ids) > max_length:
            rows.append([])
            used = 0
        rows[-1].append(example)
        used += len(example.input_ids)
    return rows


def _make_batch(rows: Sequence[Sequence[SFTExample]], pad_id: int) -> SFTBatch:
    width = max(sum(len(example.input_ids) for example in row) for row in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)  # [B, L]
    labels = torch.full((len(rows), width), IGNORE_INDEX, dtype=torch.long)  # [B, L]
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)  # [B, L]
    position_ids = torch.zeros((len(rows), width), dtype=torch.long)  # [B, L]
    for r, row in enumerate(rows):
        offset = 0
        for example in row:
            ids = torch.tensor(example.input_ids, dtype=torch.long)
            end = offset + len(ids)
            input_ids[r, offset:end] = ids
            labels[r, offset + example.completion_start : end] = ids[example.completion_start :]
            attention_mask[r, offset:end] = 1
            position_ids[r, offset:end] = torch.arange(len(ids))
            offset = end
        position_ids[r, offset:] = torch.arange(width - offset)  # padding forms its own block
    packed = any(len(row) > 1 for row in rows)
    return SFTBatch(input_ids, None if packed else attention_mask, position_ids, labels)


def pad_token_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The tokenizer's pad id, or its EOS id when it has no pad token."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id


class EpochStream:
    """Endless micro-batches: epoch ``e`` is the examples shuffled by ``(seed, e)``; ``cursor`` resumes it."""

    def __init__(
        self,
        examples: list[SFTExample],
        *,
        seed: int,
        cursor: Mapping[str, int] | None = None,
        **collate_kwargs: Any,
    ) -> None:
        """Start at ``cursor`` (``{"epoch": e, "index": i}``, default the beginning); see ``collate``."""
        self.examples, self.seed, self.collate_kwargs = examples, seed, collate_kwargs
        cursor = cursor or {}
        self.epoch, self.index = int(cursor.get("epoch", 0)), int(cursor.get("index", 0))
        self._batches = self._epoch_batches(self.epoch)

    def _epoch_batches(self, epoch: int) -> list[SFTBatch]:
        order = np.random.default_rng([self.seed, epoch]).permutation(len(self.examples))
        return collate([self.examples[i] for i in order], **self.collate_kwargs)

    def take(self, count: int) -> list[SFTBatch]:
        """The next ``count`` micro-batches, moving into the next epoch when one runs out."""
        taken = []
        for _ in range(count):
            if self.index >= len(self._batches):
                self.epoch, self.index = self.epoch + 1, 0
                self._batches = self._epoch_batches(self.epoch)
            taken.append(self._batches[self.index])
            self.index += 1
        return taken

    def cursor(self) -> dict[str, int]:
        """Where the stream stands, JSON-ready for a checkpoint."""
        return {"epoch": self.epoch, "index": self.index}


def sft_pairs_from_env(
    env: Any,
    n: int,
    *,
    split: str = "train",
    tokenizer: PreTrainedTokenizerBase | None = None,
    start: int = 0,
) -> list[tuple[str, str]]:
    """Reference solutions of problems ``start .. start + n - 1`` of ``split`` as (prompt, completion) pairs.

    The prompt is the env's own prompt (with the tokenizer's chat template when ``tokenizer`` is
    given, so it matches what the policy sees when sampling). The completion is the problem's
    reference solution, followed by the final answer in the format the prompt asks for unless the
    solution already scores correct; a problem without a solution gets the final-answer line alone.
    Problems whose completion still does not score correct are skipped, so every pair is verified.

    Args:
        env: A ``ReasoningEnv`` (wrappers from ``gymnasium.make`` are looked through).
        n: Problems to take.
        split: The split to read.
        tokenizer: Apply its chat template to the env's messages; None uses the plain prompt.
        start: Index of the first problem.

    Returns:
        Up to ``n`` verified pairs.
    """

    if n < 1:
        raise ConfigError(f"n={n} is not allowed; expected an integer >= 1")
    base = getattr(env, "unwrapped", env)
    pairs = []
    for index in range(start, start + n):
        problem = base.problem_at(index, split=split)
        prompt = (
            base.prompt(problem) if tokenizer is None else format_prompt(tokenizer, base.messages(problem))
        )
        final = f"The final answer is {format_final_answer(problem.answer_type, gold_answer_text(problem))}."
        completion = (problem.solution or "").strip()
        if not completion or not base.score(problem, completion).correct:
            completion = f"{completion}\n{final}" if completion else final
        if base.score(problem, completion).correct:
            pairs.append((prompt, completion))
    return pairs


def build_sft_batches(
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[tuple[str, str]],
    cfg: Any,
    rng: np.random.Generator | None = None,
) -> list[SFTBatch]:
    """Tokenize ``pairs`` and collate them into micro-batches, shuffled by ``rng`` (None keeps the order).

    Args:
        tokenizer: The policy's tokenizer (needs an EOS token).
        pairs: ``(prompt, completion)`` texts; the prompt is already formatted (chat template applied).
        cfg: An ``SFTConfig``: supplies ``batch_size``, ``max_length`` and ``packing``.
        rng: Shuffles the examples before batching.

    Returns:
        One epoch of micro-batches.
    """
    examples = tokenize_pairs(tokenizer, pairs, cfg.max_length)
    order = rng.permutation(len(examples)) if rng is not None else np.arange(len(examples))
    return collate(
        [examples[i] for i in order],
        batch_size=cfg.batch_size,
        pad_id=pad_token_id(tokenizer),
        packing=cfg.packing,
        max_length=cfg.max_length,
    )
