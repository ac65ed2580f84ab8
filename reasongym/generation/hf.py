"""`HFGenerator`: batched sampling from a transformers causal LM with our own KV-cached decode loop.

Why not ``model.generate``: trainers need per-token log-probs and padded tensors in the GRPO group
layout, and a lean loop does less Python work per step (see ``benchmarks/bench_generation.py``).
Each step runs one forward pass on the newest token of every row, samples, and records the token's
log-prob under the raw (temperature 1) softmax. Finished rows get the pad token; once they make up
a quarter of the rows still decoded, they leave the batch (and the KV cache), so a batch whose rows
end at very different lengths does not pay for the finished ones until the last row is done.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch
from transformers import DynamicCache, PreTrainedTokenizerBase

# Older transformers has no per-layer cache objects; _new_cache then uses DynamicCache as it is.
try:
    from transformers.cache_utils import DynamicLayer
except ImportError:
    DynamicLayer = None

from reasongym.errors import ConfigError
from reasongym.generation.base import (
    Completion,
    FinishReason,
    GenerationBatch,
    SamplingParams,
    prompt_token_ids,
)
from reasongym.generation.sampling import RowRNG, sample_tokens

_LEAVE_FRACTION = 0.25
"""Finished rows leave the batch once they are this share of the rows still decoded."""


class HFGenerator:
    """Sample completions from a transformers causal LM (implements `Generator`).

    Args:
        model: Any causal LM that takes ``attention_mask``, ``position_ids`` and a KV cache.
        tokenizer: Its tokenizer; needs an EOS token (the pad token defaults to it).
        batch_size: Most rows (prompts times ``n``) decoded together; ``None`` decodes all at once.
    """

    def __init__(
        self, model: torch.nn.Module, tokenizer: PreTrainedTokenizerBase, *, batch_size: int | None = None
    ) -> None:
        """Check the settings; collect the EOS ids of the tokenizer and the model's generation config."""
        if batch_size is not None and batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} is not allowed; expected an integer >= 1 or None")
        if tokenizer.eos_token_id is None:
            raise ConfigError("tokenizer.eos_token_id is None; generation needs an EOS token to stop on")
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        eos_ids = {tokenizer.eos_token_id}
        config_eos = getattr(model.generation_config, "eos_token_id", None)
        if config_eos is not None:  # some checkpoints stop on several ids (e.g. end-of-turn and end-of-text)
            eos_ids.update(config_eos if isinstance(config_eos, list) else [config_eos])
        self.eos_ids = sorted(eos_ids)
        forward_params = inspect.signature(model.forward).parameters
        # transformers 5.x renamed past_key_values to cache; the old name still works but warns.
        self._cache_kwarg = "cache" if "cache" in forward_params else "past_key_values"
        self._has_logits_to_keep = "logits_to_keep" in forward_params
        self.progress: Callable[[int], None] | None = None  # called each decode step with the rows decoded

    takes_token_ids = True
    """Prompts may be token id lists (a multi-turn episode's context), taken as they are."""
    engine_name = "hf"
    """The engine's name in run folders and records (`reasongym.generation.engines.engine_identity`)."""

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        """Sample ``params.n`` completions for each prompt.

        Args:
            prompts: Prompt texts, already formatted (see `reasongym.policy.loading.format_prompt`).
            params: Sampling parameters.

        Returns:
            One list of ``params.n`` completions per prompt, in prompt order.
        """
        return self.generate_batch(prompts, params).completions(params.n)

    def generate_batch(
        self, prompts: Sequence[str] | Sequence[Sequence[int]], params: SamplingParams
    ) -> GenerationBatch:
        """Sample completions and return them as padded tensors in GRPO group layout.

        Args:
            prompts: Prompt texts, already formatted; or token id lists, used as they are.
            params: Sampling parameters.

        Returns:
            A `GenerationBatch` with ``B = len(prompts) * params.n`` rows on the model's device.

        Raises:
            ConfigError: No prompts, or a prompt that tokenizes to nothing.
        """
        prompt_ids, prompt_mask = self._encode(prompts)
        params.check_prompt_seeds(len(prompts))
        prompt_ids = prompt_ids.repeat_interleave(params.n, dim=0)  # [B, P]
        prompt_mask = prompt_mask.repeat_interleave(params.n, dim=0)  # [B, P]
        seeds = [params.seed] if params.prompt_seeds is None else list(params.prompt_seeds)
        generators = [torch.Generator(device=self.model.device) for _ in seeds]
        for generator, seed in zip(generators, seeds, strict=True):
            generator.seed() if seed is None else generator.manual_seed(seed)
        rows = prompt_ids.shape[0]
        chunk = self.batch_size or rows
        # Chunks that hold whole groups compute each prompt's cache once for its n rows.
        share = params.n if chunk % params.n == 0 else 1
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                chunks = [
                    (prompt_ids[i : i + chunk], prompt_mask[i : i + chunk]) for i in range(0, rows, chunk)
                ]
                parts = [
                    self._decode(ids, mask, params, RowRNG(generators, params.n, start), share)
                    for start, (ids, mask) in zip(range(0, rows, chunk), chunks, strict=True)
                ]
        finally:
            self.model.train(was_training)
        return self._assemble(prompt_ids, prompt_mask, parts, params)

    def _encode(self, prompts: Sequence[str] | Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Tokenize and left-pad: ([N, P] ids, [N, P] mask) on the model's device."""
        encoded = prompt_token_ids(self.tokenizer, prompts)
        width = max(len(ids) for ids in encoded)
        prompt_ids = torch.full((len(encoded), width), self.pad_id, dtype=torch.long)
        prompt_mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, ids in enumerate(encoded):
            prompt_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            prompt_mask[row, width - len(ids) :] = 1
        return prompt_ids.to(self.model.device), prompt_mask.to(self.model.device)

    def _forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor, cache: object
    ) -> torch.Tensor:
        """One cached forward pass; returns the float32 logits of the last position, [b, V]."""
        kwargs = {self._cache_kwarg: cache, "use_cache": True}
        if self._has_logits_to_keep:
            kwargs["logits_to_keep"] = 1  # the lm_head only on the position we sample from
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, **kwargs
        )
        return out.logits[:, -1, :].float()

    def _new_cache(self, capacity: int) -> object:
        """A DynamicCache whose full-attention layers write into buffers of ``capacity`` positions."""
        if DynamicLayer is None:
            return DynamicCache()
        try:
            cache = DynamicCache(config=self.model.config)
        except TypeError:  # transformers < 4.56 builds it without a config
            return DynamicCache()
        layers = getattr(cache, "layers", [])
        for index, layer in enumerate(layers):
            if type(layer) is DynamicLayer:  # sliding-window and other layer kinds keep their own logic
                layers[index] = _PreallocatedLayer(capacity)
        return cache

    def _decode(
        self,
        prompt_ids: torch.Tensor,
        prompt_mask: torch.Tensor,
        params: SamplingParams,
        generator: RowRNG,
        share: int = 1,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Decode one chunk: ([b, t] tokens, [b, t] logprobs, [b] lengths, [b] finished).

        With ``share`` > 1 the chunk's rows come in runs of ``share`` equal prompts (see `_prefill`).
        """
        first_real = int(prompt_mask.any(dim=0).nonzero()[0])  # drop columns that are padding in every row
        prompt_ids, prompt_mask = prompt_ids[:, first_real:], prompt_mask[:, first_real:]
        rows, width = prompt_ids.shape
        steps = params.max_new_tokens
        device = prompt_ids.device
        # Preallocated so each step only slices: no per-step concatenation of masks or outputs.
        attention_mask = torch.ones((rows, width + steps), dtype=prompt_mask.dtype, device=device)
        attention_mask[:, :width] = prompt_mask
        positions = (prompt_mask.cumsum(dim=1) - 1).clamp_(min=0)  # left padding: count real tokens only
        next_positions = positions[:, -1:] + 1 + torch.arange(steps, device=device)  # [b, steps]
        tokens = torch.full((rows, steps), self.pad_id, dtype=torch.long, device=device)
        logprobs = torch.zeros((rows, steps), dtype=torch.float32, device=device)
        lengths = torch.full((rows,), steps, dtype=torch.long, device=device)
        finished = torch.zeros(rows, dtype=torch.bool, device=device)
        eos_ids = torch.tensor(self.eos_ids, device=device)
        stop_checker = _StopStringChecker(self.tokenizer, params.stop) if params.stop else None
        cache = self._new_cache(width + steps)
        logits = self._prefill(prompt_ids, prompt_mask, positions, cache, share)  # [b, V]
        live = torch.arange(rows, device=device)  # [a] the rows still in the forward pass
        for step in range(steps):
            if self.progress is not None:
                self.progress(len(live))
            token, token_logprob = sample_tokens(logits, params, generator, live, ~finished[live])  # [a]
            token = token.masked_fill(finished[live], self.pad_id)  # finished rows keep padding
            tokens[live, step] = token
            logprobs[live, step] = token_logprob.masked_fill(finished[live], 0.0)
            just_finished = torch.zeros_like(finished)
            just_finished[live] = ~finished[live] & torch.isin(token, eos_ids)
            if stop_checker is not None:
                just_finished |= stop_checker.hits(tokens, step, finished | just_finished)
            lengths.masked_fill_(just_finished, step + 1)
            finished |= just_finished
            if step + 1 == steps or bool(finished.all()):
                break
            done = finished[live]  # [a]
            if int(done.sum()) >= _LEAVE_FRACTION * len(live):
                # Finished rows leave together (copying the cache costs about one step), not one by one.
                keep = (~done).nonzero().squeeze(1)  # [a']
                _select_rows(cache, keep)
                live, token = live[keep], token[keep]
            logits = self._forward(
                token[:, None],
                attention_mask[live, : width + step + 1],
                next_positions[live, step : step + 1],
                cache,
            )
        return tokens[:, : step + 1], logprobs[:, : step + 1], lengths, finished

    def _prefill(
        self,
        prompt_ids: torch.Tensor,
        prompt_mask: torch.Tensor,
        positions: torch.Tensor,
        cache: Any,
        share: int,
    ) -> torch.Tensor:
        """Run the prompts into ``cache``; [b, V] logits of each row's next token.

        With ``share`` > 1 the rows come in runs of ``share`` equal prompts (a group of samples): the prompt
        is run through the model once per run and its cache copied to the run's rows. The prompt is most of
        the work of a short completion (an 81-token prompt and 32 new tokens for 64 rows is 46% of the
        sampling time on a CPU), and the rows diverge only once they sample.
        """
        if share > 1 and hasattr(cache, "batch_repeat_interleave"):
            run = slice(None, None, share)
            logits = self._forward(prompt_ids[run], prompt_mask[run], positions[run], cache)  # [b / share, V]
            cache.batch_repeat_interleave(share)
            return logits.repeat_interleave(share, dim=0)  # [b, V]
        return self._forward(prompt_ids, prompt_mask, positions, cache)  # [b, V]

    def _assemble(
        self,
        prompt_ids: torch.Tensor,
        prompt_mask: torch.Tensor,
        parts: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]],
        params: SamplingParams,
    ) -> GenerationBatch:
        """Right-pad the chunks to one width and decode the texts."""
        width = max(part[0].shape[1] for part in parts)
        tokens = torch.cat([_pad_right(part[0], width, self.pad_id) for part in parts])  # [B, T]
        logprobs = torch.cat([_pad_right(part[1], width, 0.0) for part in parts])  # [B, T]
        lengths = torch.cat([part[2] for part in parts])  # [B]
        finished = torch.cat([part[3] for part in parts]).tolist()  # B
        columns = torch.arange(width, device=tokens.device)
        completion_mask = (columns[None, :] < lengths[:, None]).to(prompt_mask.dtype)  # [B, T]
        tokens = tokens.masked_fill(completion_mask == 0, self.pad_id)
        logprobs = logprobs.masked_fill(completion_mask == 0, 0.0)
        ids = [row[:length] for row, length in zip(tokens.tolist(), lengths.tolist(), strict=True)]
        texts = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
        if params.stop:
            texts = [
                _cut_after_stop(text, params.stop) if done else text
                for text, done in zip(texts, finished, strict=True)
            ]
        reasons: tuple[FinishReason, ...] = tuple("stop" if done else "length" for done in finished)
        return GenerationBatch(
            prompt_ids=prompt_ids,
            prompt_mask=prompt_mask,
            completion_ids=tokens,
            completion_mask=completion_mask,
            logprobs=logprobs,
            texts=tuple(texts),
            finish_reasons=reasons,
        )


def _select_rows(cache: Any, keep: torch.Tensor) -> None:
    """Keep only the ``keep`` rows of a KV cache (every layer), in place."""
    layers = getattr(cache, "layers", None)
    if layers is None:  # transformers < 4.56: one DynamicCache holding per-layer tensor lists
        cache.batch_select_indices(keep)
        return
    for layer in layers:
        layer.batch_select_indices(keep)


def _pad_right(x: torch.Tensor, width: int, value: float) -> torch.Tensor:
    return torch.nn.functional.pad(x, (0, width - x.shape[1]), value=value)


def _cut_after_stop(text: str, stops: tuple[str, ...]) -> str:
    """Cut ``text`` right after the earliest-ending stop string, if any."""
    ends = [text.find(stop) + len(stop) for stop in stops if stop in text]
    return text[: min(ends)] if ends else text


class _StopStringChecker:
    """Finds rows whose newest token completed a stop string, decoding only a short tail per row."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, stops: tuple[str, ...]) -> None:
        self.tokenizer = tokenizer
        self.stops = stops
        # A non-special token decodes to at least one character, so this many tokens always cover the
        # longest stop string; the margin absorbs byte-level tokens that only form a character together.
        self.window = max(len(stop) for stop in stops) + 4

    def hits(self, tokens: torch.Tensor, step: int, finished: torch.Tensor) -> torch.Tensor:
        """[b] bool: unfinished rows whose decoded tail now contains a stop string."""
        hit = torch.zeros_like(finished)
        rows = (~finished).nonzero().flatten().tolist()
        if not rows:
            return hit
        start = max(0, step + 1 - self.window)
        tails = self.tokenizer.batch_decode(tokens[rows, start : step + 1].tolist(), skip_special_tokens=True)
        matched = [row for row, tail in zip(rows, tails, strict=True) if any(s in tail for s in self.stops)]
        if matched:
            hit[matched] = True
        return hit


class _PreallocatedLayer(DynamicLayer or object):  # only instantiated when DynamicLayer exists
    """A DynamicLayer that copies new keys/values into a preallocated buffer instead of concatenating.

    DynamicLayer re-allocates and copies the whole cache every step (``torch.cat``), about an eighth
    of the decode time of a small model; here each step writes only the new position and attention
    sees a view of the filled prefix, so the results are the same.
    """

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self.filled = 0

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: object, **kwargs: object
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append [b, heads, s, head_dim] keys/values; return all cached ones so far."""
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
            shape = (*key_states.shape[:2], self.capacity, key_states.shape[-1])
            self.key_buffer = key_states.new_empty(shape)
            self.value_buffer = value_states.new_empty((*shape[:3], value_states.shape[-1]))
        end = self.filled + key_states.shape[-2]
        self.key_buffer[:, :, self.filled : end] = key_states
        self.value_buffer[:, :, self.filled : end] = value_states
        self.filled = end
        self.keys = self.key_buffer[:, :, :end]
        self.values = self.value_buffer[:, :, :end]
        return self.keys, self.values

    def batch_repeat_interleave(self, repeats: int) -> None:
        """Repeat every row ``repeats`` times (the buffers, so later steps keep writing in place)."""
        if self.filled:
            self.key_buffer = self.key_buffer.repeat_interleave(repeats, dim=0)
            self.value_buffer = self.value_buffer.repeat_interleave(repeats, dim=0)
            self.keys = self.key_buffer[:, :, : self.filled]
            self.values = self.value_buffer[:, :, : self.filled]

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep only the rows ``indices`` (when finished rows leave the batch)."""
        if not self.is_initialized:
            return
        self.key_buffer = self.key_buffer[indices]
        self.value_buffer = self.value_buffer[indices]
        self.keys = self.key_buffer[:, :, : self.filled]
        self.values = self.value_buffer[:, :, : self.filled]
