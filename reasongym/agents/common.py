"""Tensor primitives shared by the trainers. No algorithm logic lives here.

Shape legend, used in a comment on every tensor line of the agents:

- ``B``: sequences in a batch (``num_prompts * G`` in group layout: a prompt's ``G`` samples are adjacent)
- ``G``: group size, the samples drawn per prompt
- ``T``: completion tokens (right-padded)
- ``P``: prompt tokens (left-padded)
- ``V``: vocabulary size

Masks are 1 on real tokens and 0 on padding; they may be int, bool or float tensors.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.checkpoint import checkpoint
from transformers import PreTrainedModel

from reasongym.errors import ConfigError


def token_logprobs(
    model: torch.nn.Module,
    input_ids: Tensor,
    attention_mask: Tensor,
    completion_start: int | Sequence[int] | Tensor,
    *,
    micro_batch_size: int | None = None,
    with_entropy: bool = False,
    temperature: float = 1.0,
) -> tuple[Tensor, Tensor | None]:
    """Log-probabilities of the completion tokens under ``model``, from one forward pass per micro-batch.

    Only the completion positions go through the LM head (`LOGIT_CHUNK_TOKENS` at a time for Llama-like
    models), each log-prob is ``logit[token] - logsumexp(logits)`` (no full ``log_softmax``), and position
    ids come from the attention mask, so left-padded rows score as they would alone. Gradients flow when
    enabled; the train/eval mode is left as it is. Under autograd every micro-batch's graph is kept until
    ``backward``: a trainer bounding its memory calls this once per micro-batch and backpropagates each.

    Args:
        model: A causal LM that accepts ``position_ids`` and ``logits_to_keep``.
        input_ids: [B, L] prompt and completion tokens.
        attention_mask: [B, L] 1 on real tokens.
        completion_start: Index of each row's first completion token: one int for all rows (e.g.
            ``GenerationBatch.completion_start``) or B ints. Must be at least 1.
        micro_batch_size: Rows per forward pass; ``None`` runs all B rows at once.
        with_entropy: Also return the entropy of the model's next-token distribution at each position.
        temperature: Divide the logits by this first (match the sampling temperature if the loss
            should see the sampling distribution); 1 gives the raw model distribution.

    Returns:
        ``(logp, entropy)``: [B, T] each, with ``T = L - min(completion_start)`` and column ``j`` of
        row ``b`` describing token ``completion_start[b] + j``; 0 where that token is padding or past
        the end. ``entropy`` is ``None`` unless ``with_entropy``, and carries no gradient (a metric).

    Raises:
        ConfigError: ``completion_start`` out of range, a bad ``micro_batch_size`` or ``temperature``.
    """
    rows = input_ids.shape[0]
    starts = _checked_starts(completion_start, input_ids, micro_batch_size, temperature)  # [B]
    first, last = (int(starts.min()), int(starts.max())) if starts.numel() else (0, 0)
    step = micro_batch_size or rows
    pieces = [
        _completion_logprobs(
            model, input_ids[i : i + step], attention_mask[i : i + step], first, with_entropy, temperature
        )
        for i in range(0, rows, step)
    ]
    logp = torch.cat([piece[0] for piece in pieces])  # [B, T]
    entropy = torch.cat([piece[1] for piece in pieces]) if with_entropy else None  # [B, T]
    target_mask = attention_mask[:, first:] != 0  # [B, T]
    if last != first:  # ragged starts: shift each row left so column 0 is its first completion token
        logp, entropy, target_mask = (
            _shift_left(x, starts - first) if x is not None else None for x in (logp, entropy, target_mask)
        )
    logp = logp.masked_fill(~target_mask, 0.0)
    entropy = entropy.masked_fill(~target_mask, 0.0) if entropy is not None else None
    return logp, entropy


def _checked_starts(
    completion_start: int | Sequence[int] | Tensor,
    input_ids: Tensor,
    micro_batch_size: int | None,
    temperature: float,
) -> Tensor:
    """[B] each row's completion start; ConfigError for one out of range, or a bad micro-batch or temperature."""
    rows, length = input_ids.shape
    starts = torch.as_tensor(completion_start, dtype=torch.long, device=input_ids.device)
    if starts.ndim == 0:
        starts = starts.expand(rows)  # [B]
    first, last = (int(starts.min()), int(starts.max())) if starts.numel() else (0, 0)
    if starts.shape != (rows,) or first < 1 or last > length:
        raise ConfigError(
            f"completion_start={completion_start!r} is not allowed; expected one int or {rows} ints, each "
            f"in [1, {length}] (a completion needs at least one token before it to be predicted from)"
        )
    if micro_batch_size is not None and micro_batch_size < 1:
        raise ConfigError(
            f"micro_batch_size={micro_batch_size!r} is not allowed; expected an integer >= 1 or None"
        )
    if temperature <= 0:
        raise ConfigError(f"temperature={temperature!r} is not allowed; expected a float > 0")
    return starts


LOGIT_CHUNK_TOKENS = 512
"""Tokens whose float32 logits exist at once when `token_logprobs` runs the LM head itself (512 x a 49k
vocabulary: 100 MB, instead of every row and token of a micro-batch at once)."""
CHUNKED_HEAD_MODEL_TYPES = frozenset({"llama", "qwen2", "qwen3", "mistral"})
"""Model types whose logits are exactly ``lm_head(decoder(...))`` (no soft-capping or scaling), so that the LM
head can run in chunks outside the model's forward."""


def _completion_logprobs(
    model: PreTrainedModel,
    input_ids: Tensor,
    attention_mask: Tensor,
    first: int,
    with_entropy: bool,
    temperature: float,
) -> tuple[Tensor, Tensor | None]:
    """Log-probs (and entropies) of tokens ``first..L-1`` for one micro-batch: [b, T] each.

    For the model types of `CHUNKED_HEAD_MODEL_TYPES` in one process, the decoder runs alone and the LM head
    runs over `LOGIT_CHUNK_TOKENS` tokens at a time; under autograd each chunk's logits are recomputed in
    the backward pass rather than kept. Any other model returns its logits from its own forward.
    """
    position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)  # [b, L]
    num_targets = input_ids.shape[1] - first
    targets = input_ids[:, first:]  # [b, T]
    if not _head_runs_apart(model):
        out = model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            logits_to_keep=num_targets + 1,  # positions first-1 .. L-1; the last predicts past the end
            use_cache=False,
        )
        return _head_logprobs(out.logits[:, :-1, :], targets, temperature, with_entropy)  # [b, T] each
    hidden = model.get_decoder()(
        input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False
    ).last_hidden_state[:, first - 1 : -1]  # [b, T, H]
    flat_hidden, flat_targets = hidden.reshape(-1, hidden.shape[-1]), targets.reshape(-1)  # [b*T, H], [b*T]
    head = model.get_output_embeddings()
    entropies: dict[int, Tensor] = {}  # by chunk start; filled by each chunk's first run, not its recompute
    pieces = [
        _head_chunk(head, flat_hidden, flat_targets, start, temperature, entropies if with_entropy else None)
        for start in range(0, flat_targets.shape[0], LOGIT_CHUNK_TOKENS)
    ]
    logp = torch.cat(pieces).reshape(targets.shape)  # [b, T]
    if not with_entropy:
        return logp, None
    return logp, torch.cat([entropies[start] for start in sorted(entropies)]).reshape(targets.shape)


def _head_runs_apart(model: torch.nn.Module) -> bool:
    """Whether `_completion_logprobs` may run ``model``'s decoder and LM head separately (see there)."""
    distributed = torch.distributed.is_available() and torch.distributed.is_initialized()
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    return (
        not distributed
        and model_type in CHUNKED_HEAD_MODEL_TYPES
        and hasattr(model, "get_decoder")
        and hasattr(model, "get_output_embeddings")
    )


def _head_chunk(
    head: torch.nn.Module,
    hidden: Tensor,
    targets: Tensor,
    start: int,
    temperature: float,
    entropies: dict[int, Tensor] | None,
) -> Tensor:
    """[n] log-probs of ``targets[start : start + n]`` from the final hidden states [N, H], n at most
    `LOGIT_CHUNK_TOKENS`; the chunk's entropies go into ``entropies[start]`` if given. Under autograd the
    chunk's logits are recomputed in the backward pass; the recompute skips the entropy, already there."""

    def run(hidden: Tensor, targets: Tensor) -> Tensor:
        with_entropy = entropies is not None and start not in entropies
        logp, entropy = _head_logprobs(head(hidden), targets, temperature, with_entropy)
        if entropy is not None and entropies is not None:
            entropies[start] = entropy
        return logp

    inputs = hidden[start : start + LOGIT_CHUNK_TOKENS], targets[start : start + LOGIT_CHUNK_TOKENS]
    if not torch.is_grad_enabled():
        return run(*inputs)
    weight = getattr(head, "weight", None)
    if getattr(head, "bias", None) is None and weight is not None and not weight.requires_grad:
        logp, entropy = _FrozenHeadLogprobs.apply(*inputs, weight, temperature, entropies is not None)
        if entropies is not None:
            entropies[start] = entropy
        return logp
    return checkpoint(run, *inputs, use_reentrant=False)


class _FrozenHeadLogprobs(torch.autograd.Function):
    """Log-probs of the targets through a frozen bias-free LM head (LoRA's case), whose backward needs no
    logits: since ``logp_t = h_t . W[y_t] / T - logsumexp(W h_t / T)`` depends on the hidden state ``h_t``
    alone, its gradient is the vector ``(W[y_t] - p_t W) / T`` (``p_t`` the softmax), computed here while
    the logits exist and kept ([n, H], not [n, V]). The head then costs two matmuls instead of three (the
    forward, its recompute and the backward); the gradient is the same."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, hidden: Tensor, targets: Tensor, weight: Tensor, temperature: float, with_entropy: bool
    ) -> tuple[Tensor, Tensor | None]:
        logits = (hidden @ weight.T).float() / temperature  # [n, V]
        log_normalizer = logits.logsumexp(dim=-1)  # [n]
        logp = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - log_normalizer  # [n]
        probs = logits.softmax(dim=-1)  # [n, V] (normalised by its own sum: exp(logits - lse) drifts)
        entropy = log_normalizer - (probs * logits).sum(dim=-1) if with_entropy else None  # [n]
        del logits
        gradient = (weight[targets].float() - probs @ weight.float()) / temperature  # [n, H]
        ctx.save_for_backward(gradient.to(hidden.dtype))
        ctx.mark_non_differentiable(*([entropy] if entropy is not None else []))
        return logp, entropy

    @staticmethod
    def backward(ctx: Any, grad_logp: Tensor, _grad_entropy: Any) -> tuple[Tensor | None, ...]:
        (gradient,) = ctx.saved_tensors
        return grad_logp.unsqueeze(-1).to(gradient.dtype) * gradient, None, None, None, None


def _head_logprobs(
    logits: Tensor, targets: Tensor, temperature: float, with_entropy: bool
) -> tuple[Tensor, Tensor | None]:
    """Each target's log-prob under ``logits`` [..., V] divided by ``temperature``, and (if asked) the entropy
    of that distribution, without a gradient: it is a metric, and a gradient through it would run the
    softmax's backward over the whole vocabulary for nothing."""
    logits = logits.float()  # [..., V]
    if temperature != 1.0:
        logits = logits / temperature
    log_normalizer = logits.logsumexp(dim=-1)  # [...]
    logp = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - log_normalizer  # [...]
    if not with_entropy:
        return logp, None
    with torch.no_grad():
        expected_logit = (logits.softmax(dim=-1) * logits).sum(dim=-1)  # [...]
        return logp, log_normalizer.detach() - expected_logit


def enable_checkpointing(model: torch.nn.Module) -> None:
    """Recompute each decoder layer's activations in the backward pass instead of keeping them (transformers'
    activation checkpointing, non-reentrant so that frozen inputs, as under LoRA, still pass gradients).

    Raises:
        ConfigError: ``model`` is not a transformers model.
    """
    kwargs = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):  # the name since transformers 5
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    elif hasattr(model, "gradient_checkpointing_enable"):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    else:
        raise ConfigError(
            f"gradient_checkpointing=True is not allowed for this model ({type(model).__name__}): it is not a "
            "transformers model; use gradient_checkpointing=False"
        )


def _shift_left(x: Tensor, offsets: Tensor) -> Tensor:
    """Row ``b`` of [B, T] ``x`` moved left by ``offsets[b]``; vacated columns hold zeros (False)."""
    columns = torch.arange(x.shape[1], device=x.device)[None, :] + offsets[:, None]  # [B, T]
    inside = columns < x.shape[1]  # [B, T]
    shifted = x.gather(1, columns.clamp(max=x.shape[1] - 1))  # [B, T]
    return shifted.masked_fill(~inside, 0)


def masked_sum(x: Tensor, mask: Tensor, dim: int | None = None) -> Tensor:
    """Sum of ``x * mask``; positions where ``mask`` is 0 count as 0 even if ``x`` is inf or nan there.

    Args:
        x: Values, e.g. [B, T].
        mask: Same shape as ``x``; 0/1 or float weights.
        dim: Dimension to reduce; ``None`` reduces everything.

    Returns:
        The masked sum, reduced over ``dim``.
    """
    weighted = x.masked_fill(mask == 0, 0) * mask
    return weighted.sum() if dim is None else weighted.sum(dim=dim)


def masked_mean(x: Tensor, mask: Tensor, dim: int | None = None) -> Tensor:
    """Mean of ``x`` over the positions where ``mask`` is nonzero (weighted by ``mask``).

    Args:
        x: Values, e.g. [B, T].
        mask: Same shape as ``x``; 0/1 or float weights.
        dim: Dimension to reduce; ``None`` reduces everything.

    Returns:
        The masked mean, reduced over ``dim``; 0 where the mask is empty (rather than nan).
    """
    total = masked_sum(x, mask, dim)
    count = mask.sum() if dim is None else mask.sum(dim=dim)
    count = count.to(total.dtype)
    return torch.where(count > 0, total / count.clamp(min=torch.finfo(total.dtype).tiny), 0.0)


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global RNGs (CPU and every GPU). For trainers, once, at start.

    Args:
        seed: The seed.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


def disable_dropout(model: torch.nn.Module) -> None:
    """Turn every dropout of ``model`` off in place: ``nn.Dropout`` modules and functional attention dropout.

    Llama and Qwen2 apply attention dropout functionally from a float ``attention_dropout`` attribute of
    each attention module, which no ``nn.Dropout`` covers, so that attribute is zeroed too.
    """
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0
        if isinstance(getattr(module, "attention_dropout", None), float):
            module.attention_dropout = 0.0
