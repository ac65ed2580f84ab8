"""`HFGenerator`: batched sampling from a transformers causal LM with our own KV-cached decode loop.

Why not ``model.generate``: trainers need per-token log-probs and padded tensors in the GRPO group
layout, and a lean loop does less Python work per step (see ``benchmarks/bench_generation.py``).
Each step runs one forward pass on the newest token of every row, samples, and records the token's
log-prob under the raw (temperature 1) softmax. Finished rows get the pad token; once they make up
a quarter of the rows still decoded, they leave the batch (and the KV cache), so a batch whose rows
end at very different lengths does not pay for the finished ones until the last row is done.

On a GPU the loop does not wait for the device at every token: it looks at the finished rows every
`SYNC_EVERY_ON_ACCELERATORS` steps (``sync_every``), and then the random numbers a row draws do not depend on
which rows are still in the batch (`reasongym.generation.sampling`), so every cadence k > 1 samples the same
tokens (a look at every step, the CPU's default, keeps the stream of earlier versions). With ``static_cache`` the cache has its final shape from the start and, on CUDA, each
decoding step is replayed as a CUDA graph (at 135M parameters a step is bound by kernel launches).
Stop strings are matched on the host at every step.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

from reasongym.errors import ConfigError
from reasongym.generation.base import (
    Completion,
    FinishReason,
    GenerationBatch,
    SamplingParams,
    prompt_token_ids,
)
from reasongym.generation.kv_cache import DynamicPasses, StaticPasses, static_cache
from reasongym.generation.sampling import RowRNG, sample_tokens
from reasongym.generation.stops import StopStringChecker, cut_after_stop

_LEAVE_FRACTION = 0.25
"""Finished rows leave the batch once they are this share of the rows still decoded."""
SYNC_EVERY_ON_ACCELERATORS = 8
"""On a GPU, decoding steps between the loop's looks at which rows finished (each look waits for the GPU to
catch up, which at 135M parameters is most of a step): up to 7 steps of padding for nothing at the end."""
_STATIC_WIDTH_MULTIPLE = 64
"""With a static cache the prompts are left-padded to a multiple of this, so batches of similar prompts
have the same shapes and reuse one captured graph."""


class HFGenerator:
    """Sample completions from a transformers causal LM (implements `Generator`).

    Args:
        model: Any causal LM that takes ``attention_mask``, ``position_ids`` and a KV cache.
        tokenizer: Its tokenizer; needs an EOS token (the pad token defaults to it).
        batch_size: Most rows (prompts times ``n``) decoded together; ``None`` decodes all at once.
        sync_every: Decoding steps between the host's looks at which rows finished (to stop, or to let
            them leave the batch); ``None``: every step on a CPU, `SYNC_EVERY_ON_ACCELERATORS` on a GPU.
            Every value above 1 samples the same tokens (1 keeps the stream of earlier versions).
        static_cache: Decode on a static KV cache (fixed shapes; finished rows stay in the batch), and on
            CUDA run each decoding step as a captured CUDA graph (torch.compile's ``reduce-overhead``;
            the first batch of each shape pays for the capture).
    """

    def __init__(
        self,
        model: torch.nn.Module,
        tokenizer: PreTrainedTokenizerBase,
        *,
        batch_size: int | None = None,
        sync_every: int | None = None,
        static_cache: bool = False,
    ) -> None:
        """Check the settings; collect the EOS ids of the tokenizer and the model's generation config."""
        if batch_size is not None and batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} is not allowed; expected an integer >= 1 or None")
        if sync_every is not None and (isinstance(sync_every, bool) or sync_every < 1):
            raise ConfigError(f"sync_every={sync_every!r} is not allowed; expected an integer >= 1 or None")
        if tokenizer.eos_token_id is None:
            raise ConfigError("tokenizer.eos_token_id is None; generation needs an EOS token to stop on")
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.sync_every = sync_every
        self.static_cache = static_cache
        self._graphed: Callable[..., torch.Tensor] | None = None
        self._static: tuple[tuple[int, int], Any] | None = None  # (rows, positions), the static cache
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

        # Rows that finished can linger in the batch (looks every k > 1 steps, or a static cache): one draw per
        # chunk row and step, so the stream does not depend on them. A look at every step on the dynamic cache
        # is the loop as it always was: torch.multinomial over the live rows, the same samples as before.
        lingering = self.static_cache or (not params.stop and self.look_every(self.model.device) > 1)

        def rng(first_row: int, chunk_rows: int) -> RowRNG:
            per_prompt = params.prompt_seeds is not None
            drawn = chunk_rows if lingering else None
            return RowRNG(generators, params.n, first_row, drawn, per_prompt=per_prompt)

        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                chunks = [
                    (prompt_ids[i : i + chunk], prompt_mask[i : i + chunk]) for i in range(0, rows, chunk)
                ]
                parts = [
                    self._decode(ids, mask, params, rng(start, len(ids)), share)
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
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        position_ids: torch.Tensor,
        cache: object,
        cache_position: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """One cached forward pass; returns the float32 logits of the last position, [b, V]."""
        kwargs: dict[str, Any] = {self._cache_kwarg: cache, "use_cache": True}
        if self._has_logits_to_keep:
            kwargs["logits_to_keep"] = 1  # the lm_head only on the position we sample from
        if cache_position is not None:  # a static cache is written at these positions
            kwargs["cache_position"] = cache_position
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, **kwargs
        )
        return out.logits[:, -1, :].float()

    def _compiled_forward(self) -> Callable[..., torch.Tensor]:
        """`_forward` compiled once with CUDA graphs (torch.compile's ``reduce-overhead``).

        A decode step on a static cache is then one graph launch instead of hundreds of kernel launches.
        """
        if self._graphed is None:
            self._graphed = torch.compile(self._forward, mode="reduce-overhead", dynamic=False)
        return self._graphed

    def _decode(
        self,
        prompt_ids: torch.Tensor,
        prompt_mask: torch.Tensor,
        params: SamplingParams,
        generator: RowRNG,
        share: int = 1,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Decode one chunk: ([b, t] tokens, [b, t] logprobs, [b] lengths, [b] finished).

        With ``share`` > 1 the chunk's rows come in runs of ``share`` equal prompts (see `DynamicPasses`).
        The host looks at which rows finished only every `look_every` steps (each look waits for the
        device); rows that finish in between decode padding until then, which changes nothing they return.
        """
        first_real = int(prompt_mask.any(dim=0).nonzero()[0])  # drop columns that are padding in every row
        prompt_ids, prompt_mask = prompt_ids[:, first_real:], prompt_mask[:, first_real:]
        if self.static_cache:  # a width rounded up: batches of similar prompts share one captured graph
            extra = -prompt_ids.shape[1] % _STATIC_WIDTH_MULTIPLE
            prompt_ids = torch.nn.functional.pad(prompt_ids, (extra, 0), value=self.pad_id)
            prompt_mask = torch.nn.functional.pad(prompt_mask, (extra, 0), value=0)
        rows, steps, device = prompt_ids.shape[0], params.max_new_tokens, prompt_ids.device
        out = _Decoded.empty(rows, steps, self.pad_id, device)
        stop_checker = StopStringChecker(self.tokenizer, params.stop) if params.stop else None
        look = 1 if stop_checker is not None else self.look_every(device)
        if self.static_cache:
            graphed = self._compiled_forward() if device.type == "cuda" else None
            cache = self._reused_static_cache(rows, prompt_ids.shape[1] + steps)
            passes: DynamicPasses = StaticPasses(self._forward, cache, prompt_mask, steps, graphed)
        else:
            passes = DynamicPasses(self._forward, self.model, prompt_mask, steps, share)
        logits = passes.prefill(prompt_ids)  # [b, V]
        live = torch.arange(rows, device=device)  # [a] the rows still in the forward pass
        eos_ids = torch.tensor(self.eos_ids, device=device)
        for step in range(steps):
            if self.progress is not None:
                self.progress(len(live))
            token = out.record(step, logits, params, generator, live, eos_ids)  # [a]
            if stop_checker is not None:
                just = stop_checker.hits(out.tokens, step, out.finished)
                out.lengths.masked_fill_(just, step + 1)
                out.finished |= just
            if step + 1 == steps:
                break
            if (step + 1) % look == 0:
                if bool(out.finished.all()):
                    break
                done = out.finished[live]  # [a]
                if passes.can_leave and int(done.sum()) >= _LEAVE_FRACTION * len(live):
                    # Finished rows leave together (copying the cache costs about one step), not one by one.
                    keep = (~done).nonzero().squeeze(1)  # [a']
                    passes.leave(keep)
                    live, token = live[keep], token[keep]
            logits = passes.step(token, live, step)
        return out.trimmed()

    def _reused_static_cache(self, rows: int, capacity: int) -> Any:
        """The static cache of the last call, emptied, when it has these rows and positions; else a new one.

        Reused as ``model.generate`` reuses its own: the captured graphs read its buffers at fixed addresses,
        and a new cache for every batch would mean a new capture for every batch.
        """
        if self._static is None or self._static[0] != (rows, capacity):
            self._static = ((rows, capacity), static_cache(self.model, capacity))
        else:
            self._static[1].reset()
        return self._static[1]

    def look_every(self, device: torch.device) -> int:
        """Decoding steps between the host's looks at the finished rows.

        ``sync_every``, or 1 on a CPU (where a look costs nothing) and `SYNC_EVERY_ON_ACCELERATORS` elsewhere.
        """
        if self.sync_every is not None:
            return self.sync_every
        return 1 if device.type == "cpu" else SYNC_EVERY_ON_ACCELERATORS

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
                cut_after_stop(text, params.stop) if done else text
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


def _pad_right(x: torch.Tensor, width: int, value: float) -> torch.Tensor:
    return torch.nn.functional.pad(x, (0, width - x.shape[1]), value=value)


@dataclass
class _Decoded:
    """A chunk's outputs as the loop fills them: [b, steps] tokens and log-probs, [b] lengths and finished."""

    tokens: torch.Tensor
    logprobs: torch.Tensor
    lengths: torch.Tensor
    finished: torch.Tensor
    pad_id: int

    @classmethod
    def empty(cls, rows: int, steps: int, pad_id: int, device: torch.device) -> _Decoded:
        """Padding everywhere, every row unfinished at the longest length."""
        return cls(
            torch.full((rows, steps), pad_id, dtype=torch.long, device=device),
            torch.zeros((rows, steps), dtype=torch.float32, device=device),
            torch.full((rows,), steps, dtype=torch.long, device=device),
            torch.zeros(rows, dtype=torch.bool, device=device),
            pad_id,
        )

    def record(
        self,
        step: int,
        logits: torch.Tensor,
        params: SamplingParams,
        generator: RowRNG,
        live: torch.Tensor,
        eos_ids: torch.Tensor,
    ) -> torch.Tensor:
        """Sample the ``live`` rows' tokens from [a, V] ``logits``, record them and return them ([a]).

        All on the device; finished rows keep padding and log-prob 0.
        """
        was_finished = self.finished[live]  # [a]
        token, token_logprob = sample_tokens(logits, params, generator, live, ~was_finished)  # [a]
        token = token.masked_fill(was_finished, self.pad_id)
        self.tokens[live, step] = token
        self.logprobs[live, step] = token_logprob.masked_fill(was_finished, 0.0)
        just = torch.zeros_like(self.finished)  # [b]
        just[live] = ~was_finished & torch.isin(token, eos_ids)
        self.lengths.masked_fill_(just, step + 1)
        self.finished |= just
        return token

    def trimmed(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The outputs cut after the longest row (the steps decoded after every row finished are padding)."""
        width = int(self.lengths.max())
        return self.tokens[:, :width], self.logprobs[:, :width], self.lengths, self.finished
