"""The teacher of on-policy distillation (`reasongym.agents.distill`): a frozen causal LM that scores the
student's samples in inference mode, its cost counted, and the check that it shares the student's tokenizer.

Shapes use the legend of `reasongym.agents.common` (B sequences, T completion tokens, V the vocabulary).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from reasongym.agents.common import token_logprobs
from reasongym.errors import ConfigError, ServerError

ROUNDING = 1e-4
"""How far above 0 a served log-prob may be and still be read as 0 (a log-softmax rounded in low precision)."""
LOWEST = -1e4
"""The lowest served log-prob taken: vLLM writes an impossible token's -inf as -9999.0; far below that no
softmax of a model's logits reaches (-1e30 was taken and trained on, a per-token cost of 1e30)."""


def completion_log_probs(
    model: torch.nn.Module,
    input_ids: Tensor,
    attention_mask: Tensor,
    start: int,
    temperature: float,
    vocab_size: int | None = None,
) -> Tensor:
    """[b, T, V] log-probs over the vocabulary at each completion position ``start..L-1`` (one forward pass;
    only those positions go through the LM head). Position ids come from the attention mask, as in
    `reasongym.agents.common.token_logprobs`, so left-padded rows score as they would alone. ``vocab_size``:
    the distribution over the first ``vocab_size`` entries only (one softmax, over them); None: all."""
    position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)  # [b, L]
    logits = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids,
        logits_to_keep=input_ids.shape[1] - start + 1,  # positions start-1 .. L-1
        use_cache=False,
    ).logits[:, :-1, :]  # [b, T, V]
    return torch.log_softmax(logits[..., :vocab_size].float() / temperature, dim=-1)  # [b, T, V]


@dataclass
class Teacher:
    """A frozen causal LM that scores the student's samples, in inference mode, with its cost counted.

    Its tokenizer must be the student's (`check_same_tokenizer`). When the two models' output widths
    differ (embedding matrices padded to different sizes), both distributions are taken over the shared
    first ``vocab_size`` entries (the tokenizer's ids) and renormalised there.
    """

    model: torch.nn.Module
    """The teacher (eval mode, no grad; on the student's device)."""
    vocab_size: int
    """Entries of the vocabulary both distributions are taken over."""
    seconds: float = 0.0
    """Time spent in the teacher's forward passes since the last `take_cost`."""
    peak_bytes: int = 0
    """Largest teacher output held at once since the last `take_cost` (on a GPU: the allocator's peak)."""

    @torch.no_grad()
    def full(self, input_ids: Tensor, attention_mask: Tensor, start: int, temperature: float) -> Tensor:
        """[b, T, V] the teacher's log-probs at each completion position of these rows."""
        started = time.perf_counter()
        log_probs = completion_log_probs(
            self.model, input_ids, attention_mask, start, temperature, self.vocab_size
        )  # [b, T, V]
        self._count(started, log_probs)
        return log_probs

    @torch.no_grad()
    def sampled(self, batch: Any, micro_batch_size: int | None, temperature: float) -> Tensor:
        """[B, T] the teacher's log-probs of the sampled tokens of the whole batch, in micro-batches."""
        started = time.perf_counter()
        logp, _ = token_logprobs(
            self.model,
            batch.input_ids,
            batch.attention_mask,
            batch.completion_start,
            micro_batch_size=micro_batch_size,
            temperature=temperature,
        )  # [B, T]
        logp = logp * batch.completion_mask
        self._count(started, logp)
        return logp

    def _count(self, started: float, output: Tensor) -> None:
        self.seconds += time.perf_counter() - started
        self.peak_bytes = max(self.peak_bytes, output.numel() * output.element_size())

    def take_cost(self, device: torch.device) -> dict[str, float]:
        """The teacher's ``perf/teacher_s`` and ``perf/teacher_memory_mb`` since the last call; reset."""
        peak = self.peak_bytes
        if device.type == "cuda":
            peak = max(peak, torch.cuda.max_memory_allocated(device))
        cost = {"perf/teacher_s": self.seconds, "perf/teacher_memory_mb": peak / 2**20}
        self.seconds, self.peak_bytes = 0.0, 0
        return cost


def check_same_tokenizer(student: Any, teacher: Any) -> None:
    """Raise ConfigError unless the two tokenizers map the same strings to the same ids: the divergence
    compares the two models' distributions id by id."""
    ours, theirs = student.get_vocab(), teacher.get_vocab()
    if ours == theirs:
        return
    differing = sorted(set(ours.items()) ^ set(theirs.items()), key=lambda item: item[1])[:3]
    raise ConfigError(
        f"the teacher's tokenizer is not the student's ({len(theirs)} tokens against {len(ours)}; first "
        f"differences: {differing}); on-policy distillation compares the two next-token distributions id by "
        "id, so it needs a teacher of the same tokenizer family (for another tokenizer, distill off-policy: "
        "SFT on the teacher's completions)"
    )


def as_teacher(model: torch.nn.Module, student: torch.nn.Module, tokenizer: Any) -> Teacher:
    """``model`` frozen, in eval mode, on the student's device, as a `Teacher` over the shared vocabulary."""
    device = next(student.parameters()).device
    model.to(device).eval().requires_grad_(False)
    widths = [m.get_output_embeddings().weight.shape[0] for m in (model, student)]
    return Teacher(model, min(len(tokenizer), *widths))


@dataclass
class ServedTeacher:
    """A teacher behind an OpenAI-compatible server that reports prompt log-probs (vLLM's): it scores the
    student's sampled tokens only, so it serves ``divergence='sampled_reverse_kl'``.

    Requests go out at most ``generator.settings.max_concurrency`` at a time, with the served client's retries;
    a server that fails or answers without log-probs stops the step with a one-line `ServerError`, never a
    zero, and so does one whose log-probs cannot be log-probs (`checked_log_probs`: NaN, infinite, positive,
    or not one per token), which would otherwise be trained on or skip every step unseen. The server's
    log-probs are the raw model's (temperature 1), so the loss must be at temperature 1.
    """

    generator: Any
    """The `reasongym.generation.served.OpenAIGenerator` of the teacher's server (completions endpoint)."""
    seconds: float = 0.0
    """Time spent waiting for the server since the last `take_cost`."""
    peak_bytes: int = 0
    """Largest teacher output held at once since the last `take_cost`."""

    def sampled(self, batch: Any, micro_batch_size: int | None, temperature: float) -> Tensor:
        """[B, T] the server's log-probs of the sampled tokens of the whole batch (0 past each completion)."""
        if temperature != 1.0:
            raise ConfigError(
                f"a served teacher reports raw log-probs (temperature 1), but the loss is at temperature "
                f"{temperature:g}; sample at temperature 1 or pass --no-tempered-logprobs"
            )
        started = time.perf_counter()
        start, lengths = batch.completion_start, batch.completion_mask.sum(dim=1).long().tolist()
        sequences, starts = [], []
        for row, length in enumerate(lengths):
            real = batch.attention_mask[row, :start].bool()
            prompt = batch.input_ids[row, :start][real].tolist()  # the left padding dropped
            sequences.append(prompt + batch.input_ids[row, start : start + length].tolist())
            starts.append(len(prompt))
        scored = self.generator.score(sequences, starts)
        logp = torch.zeros(batch.completion_mask.shape, dtype=torch.float32)  # [B, T]
        for row, values in enumerate(checked_log_probs(scored, lengths, self.generator.base_url)):
            logp[row, : len(values)] = torch.tensor(values, dtype=torch.float32)
        logp = logp.to(batch.input_ids.device)
        self.seconds += time.perf_counter() - started
        self.peak_bytes = max(self.peak_bytes, logp.numel() * logp.element_size())
        return logp

    def take_cost(self, device: torch.device) -> dict[str, float]:
        """The teacher's ``perf/teacher_s`` and ``perf/teacher_memory_mb`` since the last call; reset."""
        cost = {"perf/teacher_s": self.seconds, "perf/teacher_memory_mb": self.peak_bytes / 2**20}
        self.seconds, self.peak_bytes = 0.0, 0
        return cost


def checked_log_probs(scored: Any, lengths: list[int], where: str) -> list[list[float]]:
    """``scored`` (one list of log-probs per sequence, from the server at ``where``) if each holds one log-prob
    from `LOWEST` to 0 per completion token (up to `ROUNDING` above 0 read as 0), else a one-line ServerError
    naming the sequence, the token and the value: a NaN skips the step, a +50 is trained on."""
    if len(scored) != len(lengths):
        raise ServerError(f"the served teacher at {where} scored {len(scored)} sequences, not {len(lengths)}")
    checked = []
    for row, (values, length) in enumerate(zip(scored, lengths, strict=True)):
        if len(values) != length:
            raise ServerError(
                f"the served teacher at {where} gave {len(values)} log-probs for the {length} completion tokens of "
                f"sequence {row}"
            )
        for token, value in enumerate(values):
            if not (isinstance(value, (int, float)) and LOWEST <= value <= ROUNDING):
                raise ServerError(
                    f"the served teacher at {where} gave log-prob {value!r} for completion token {token} of "
                    f"sequence {row}; a log-prob is finite and <= 0 (and >= {LOWEST:g}), so its scores cannot "
                    "be trusted"
                )
        checked.append([min(float(value), 0.0) for value in values])
    return checked
