"""The generation interface: sampling parameters, completions, and the batched tensor view.

Text in, text out; nothing here knows about environments. This module imports no torch at run time,
so evaluation code can name `SamplingParams` and `Generator` without loading a model stack.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from reasongym.errors import ConfigError

if TYPE_CHECKING:
    from torch import Tensor

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample completions; shared by every generator backend."""

    max_new_tokens: int = 256
    """Most tokens generated per completion (the EOS or stop token included)."""
    temperature: float = 1.0
    """Softmax temperature; 0 means greedy decoding (argmax)."""
    top_p: float = 1.0
    """Nucleus sampling: keep the smallest set of tokens whose probability sums to at least this; 1 = off."""
    top_k: int = 0
    """Keep only the k most likely tokens; 0 = off."""
    n: int = 1
    """Completions sampled per prompt."""
    stop: tuple[str, ...] = ()
    """Stop strings; a completion's text ends with the first one it produces, the stop string included."""
    seed: int | None = None
    """Seed of the sampler's own RNG (the same seed gives the same completions); None draws a fresh one."""
    prompt_seeds: tuple[int, ...] | None = None
    """One seed per prompt of a call, overriding ``seed``: each prompt's completions come from an RNG of
    their own (a served model's sample j asks for seed ``prompt_seeds[i] + j``), so they do not depend on
    which other prompts share the call. Evaluation seeds each problem this way, so that a resumed
    evaluation, batched differently, samples what an uninterrupted one did."""
    tempered_logprobs: bool = False
    """Report each sampled token's log-prob under the tempered distribution, softmax(logits / temperature),
    instead of the raw one (temperature 1): what a trainer whose loss sees the sampling distribution compares
    with. Before top-k/top-p in `HFGenerator`; a vLLM engine reports its ``processed_logprobs``, which are
    also truncated by top-k/top-p (the same when both are off). Ignored for greedy decoding."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        if isinstance(self.stop, str):
            # A bare string would be iterated character by character: almost certainly a mistake.
            raise ConfigError(f"stop={self.stop!r} must be a tuple of strings, e.g. stop=({self.stop!r},)")
        checks = [
            ("max_new_tokens", self.max_new_tokens, self.max_new_tokens >= 1, "an integer >= 1"),
            ("temperature", self.temperature, self.temperature >= 0, "a float >= 0 (0 means greedy)"),
            ("top_p", self.top_p, 0 < self.top_p <= 1, "a float in (0, 1]"),
            ("top_k", self.top_k, self.top_k >= 0, "an integer >= 0 (0 means off)"),
            ("n", self.n, self.n >= 1, "an integer >= 1"),
        ]
        for name, value, ok, allowed in checks:
            if not ok:
                raise ConfigError(f"{name}={value!r} is not allowed; expected {allowed}")
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise ConfigError(f"stop={self.stop!r} is not allowed; expected non-empty strings")
        seeds = self.prompt_seeds
        if seeds is not None and (
            not isinstance(seeds, tuple) or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds)
        ):
            raise ConfigError(f"prompt_seeds={seeds!r} is not allowed; expected a tuple of integers or None")

    def seed_of(self, prompt: int) -> int | None:
        """The seed of prompt number ``prompt`` of a call: its own seed, else the call's (None: a fresh one)."""
        return self.seed if self.prompt_seeds is None else self.prompt_seeds[prompt]

    def check_prompt_seeds(self, prompts: int) -> None:
        """Raise ConfigError unless ``prompt_seeds`` is None or holds one seed per prompt of the call."""
        if self.prompt_seeds is not None and len(self.prompt_seeds) != prompts:
            raise ConfigError(
                f"prompt_seeds holds {len(self.prompt_seeds)} seeds for {prompts} prompts; give one per prompt"
            )

    @property
    def greedy(self) -> bool:
        """Whether decoding takes the argmax at each step."""
        return self.temperature == 0


@dataclass(frozen=True)
class Completion:
    """One sampled continuation of a prompt."""

    text: str
    """Decoded completion without special tokens; ends with the stop string when one was hit."""
    token_ids: tuple[int, ...] | None
    """Generated token ids, up to and including the EOS token or the token that completed a stop string;
    None for a text-only completion (a backend that does not report tokens, e.g. most served models)."""
    logprobs: tuple[float, ...] | None
    """Log-probability of each token in ``token_ids`` under the model's raw distribution (softmax at
    temperature 1, before top-k/top-p), whatever the sampling temperature was, or under the tempered one
    when `SamplingParams.tempered_logprobs` asked for it; None exactly when ``token_ids`` is None.
    A trainer must recompute them for a text-only completion, never assume 0."""
    finish_reason: FinishReason
    """``"stop"`` (EOS or a stop string) or ``"length"`` (reached ``max_new_tokens``)."""

    def __post_init__(self) -> None:
        """Raise ConfigError unless token ids and log-probs are both given (equally long) or both None."""
        ids, logprobs = self.token_ids, self.logprobs
        if (ids is None) != (logprobs is None) or (ids is not None and len(ids) != len(logprobs or ())):
            raise ConfigError(
                f"token_ids ({_length(ids)}) and logprobs ({_length(logprobs)}) must both be None "
                "(a text-only completion) or both be given with one log-prob per token"
            )

    @property
    def text_only(self) -> bool:
        """Whether the backend reported only text (no token ids and log-probs)."""
        return self.token_ids is None


def _length(values: tuple[object, ...] | None) -> str:
    return "None" if values is None else f"{len(values)} entries"


@dataclass(frozen=True)
class GenerationBatch:
    """Completions as padded tensors, the layout trainers consume.

    Rows come in GRPO group layout: the ``n`` samples of prompt 0 first, then those of prompt 1, and
    so on, so ``B = num_prompts * n`` and ``x.view(num_prompts, n, ...)`` gives the groups.
    Shapes use the legend of `reasongym.agents.common` (B sequences, P prompt tokens, T completion tokens).
    """

    prompt_ids: Tensor
    """[B, P] prompt tokens, left-padded with the pad id."""
    prompt_mask: Tensor
    """[B, P] 1 on real prompt tokens, 0 on padding."""
    completion_ids: Tensor
    """[B, T] generated tokens, right-padded with the pad id."""
    completion_mask: Tensor
    """[B, T] 1 on generated tokens up to and including EOS or the stop string's last token, else 0."""
    logprobs: Tensor
    """[B, T] float32 log-probabilities of the completion tokens (raw, temperature 1, unless
    `SamplingParams.tempered_logprobs`); 0 where masked."""
    texts: tuple[str, ...]
    """B decoded completion texts (see `Completion.text`)."""
    finish_reasons: tuple[FinishReason, ...]
    """B finish reasons (see `Completion.finish_reason`)."""

    @property
    def input_ids(self) -> Tensor:
        """[B, P + T] prompt and completion tokens in one sequence, for a scoring forward pass."""
        import torch

        return torch.cat([self.prompt_ids, self.completion_ids], dim=1)

    @property
    def attention_mask(self) -> Tensor:
        """[B, P + T] the prompt and completion masks side by side."""
        import torch

        return torch.cat([self.prompt_mask, self.completion_mask], dim=1)

    @property
    def completion_start(self) -> int:
        """Column of ``input_ids`` where completions start (``P``)."""
        return int(self.prompt_ids.shape[1])

    def completions(self, n: int) -> list[list[Completion]]:
        """Split the rows into per-prompt lists of ``n`` completions each.

        Args:
            n: Samples per prompt the batch was generated with.

        Returns:
            One list of ``n`` completions per prompt, in prompt order.
        """
        lengths = self.completion_mask.sum(dim=1).tolist()
        ids, logprobs = self.completion_ids.tolist(), self.logprobs.tolist()
        rows = [
            Completion(
                text=self.texts[row],
                token_ids=tuple(ids[row][:length]),
                logprobs=tuple(logprobs[row][:length]),
                finish_reason=self.finish_reasons[row],
            )
            for row, length in enumerate(int(x) for x in lengths)
        ]
        return [rows[start : start + n] for start in range(0, len(rows), n)]


Messages = Sequence[Mapping[str, str]]
"""A prompt as chat messages: ``[{"role": "system", "content": ...}, {"role": "user", "content": ...}]``."""


class Generator(Protocol):
    """The small interface every generation backend implements (in-process HF, a served model, ...).

    A backend that applies the model's chat template itself (a served chat endpoint) sets the attribute
    ``takes_messages = True``: callers that have chat messages then pass each prompt as `Messages`
    instead of template-formatted text. A backend that samples from token ids (`HFGenerator`) sets
    ``takes_token_ids = True``: a later turn of a multi-turn episode then continues from the ids sampled
    and observed so far, never from their text tokenized again. Without either attribute, prompts are text.
    """

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        """Sample ``params.n`` completions for each prompt.

        Args:
            prompts: Prompt texts, already formatted (see `reasongym.policy.loading.format_prompt`); `Messages`
                for a backend with ``takes_messages = True``.
            params: Sampling parameters.

        Returns:
            One list of ``params.n`` completions per prompt, in prompt order.
        """
        ...


class TimedGenerator:
    """Wraps a generator and adds up the seconds spent in it (a trainer splits a rollout's time this way)."""

    def __init__(self, inner: Any) -> None:
        """Wrap ``inner``; its ``generate_batch`` is timed too when it has one."""
        self.inner = inner
        self.seconds = 0.0
        """Seconds spent generating so far."""
        if hasattr(inner, "generate_batch"):
            self.generate_batch = self._timed(inner.generate_batch)
        self.takes_token_ids = bool(getattr(inner, "takes_token_ids", False))
        """Whether ``inner`` takes prompts as token ids."""

    def _timed(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        """``inner.generate``, timed."""
        return self._timed(self.inner.generate)(prompts, params)


def prompt_token_ids(tokenizer: Any, prompts: Sequence[str] | Sequence[Sequence[int]]) -> list[list[int]]:
    """Each prompt's token ids, as every in-process sampler makes them.

    Token ids are taken as they are (nothing re-tokenized); texts are tokenized, with BOS added unless every
    text already starts with it.

    Raises:
        ConfigError: ``prompts`` is a string or empty, or a prompt tokenizes to no tokens.
    """
    if isinstance(prompts, str) or len(prompts) == 0:
        raise ConfigError(f"prompts={prompts!r} is not allowed; expected a non-empty sequence of strings")
    if all(not isinstance(p, str) for p in prompts):
        encoded = [[int(token) for token in p] for p in prompts]
    else:
        bos = tokenizer.bos_token
        # A chat template usually writes BOS itself; adding another would shift the model off-distribution.
        add_special = not (bos and all(p.startswith(bos) for p in prompts))
        encoded = tokenizer(list(prompts), add_special_tokens=add_special)["input_ids"]
    for index, ids in enumerate(encoded):
        if not ids:
            raise ConfigError(
                f"prompts[{index}]={prompts[index]!r} tokenizes to no tokens; need at least one"
            )
    return [list(ids) for ids in encoded]
