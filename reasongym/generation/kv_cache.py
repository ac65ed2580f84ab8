"""The KV caches of `HFGenerator`'s decode loop, and a chunk's forward passes over them.

A dynamic one that writes into preallocated buffers, and a static one (fixed shapes, for CUDA graphs). The dynamic cache (`dynamic_cache`) is transformers' `DynamicCache` whose full-attention layers copy each
step's keys and values into buffers sized for the whole completion (`PreallocatedLayer`); rows can leave it
(`select_rows`) and a group's prompt can be run once and repeated. The static cache (`static_cache`) is
transformers' `StaticCache`: every buffer has its final shape from the start and attention runs over all of
it under a mask, so the decode step has the same shapes at every step, which CUDA graphs need; rows cannot
leave it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from transformers import DynamicCache

# Older transformers has no per-layer cache objects; dynamic_cache then uses DynamicCache as it is.
try:
    from transformers.cache_utils import DynamicLayer
except ImportError:
    DynamicLayer = None

__all__ = [
    "DynamicPasses",
    "PreallocatedLayer",
    "StaticPasses",
    "dynamic_cache",
    "select_rows",
    "static_cache",
]

Forward = Callable[..., torch.Tensor]
"""A cached forward pass: (input ids, attention mask, position ids, cache[, cache positions]) -> [b, V] logits."""


def dynamic_cache(model: torch.nn.Module, capacity: int) -> Any:
    """A DynamicCache whose full-attention layers write into buffers of ``capacity`` positions."""
    if DynamicLayer is None:
        return DynamicCache()
    try:
        cache = DynamicCache(config=model.config)
    except TypeError:  # transformers < 4.56 builds it without a config
        return DynamicCache()
    layers = getattr(cache, "layers", [])
    for index, layer in enumerate(layers):
        if type(layer) is DynamicLayer:  # sliding-window and other layer kinds keep their own logic
            layers[index] = PreallocatedLayer(capacity)
    return cache


def static_cache(model: torch.nn.Module, capacity: int) -> Any:
    """A transformers `StaticCache` of ``capacity`` positions for ``model``.

    Its buffers take their batch size, dtype and device from the first keys written.
    """
    from transformers import StaticCache

    return StaticCache(config=model.config, max_cache_len=capacity)


def select_rows(cache: Any, keep: torch.Tensor) -> None:
    """Keep only the ``keep`` rows of a dynamic KV cache (every layer), in place."""
    layers = getattr(cache, "layers", None)
    if layers is None:  # transformers < 4.56: one DynamicCache holding per-layer tensor lists
        cache.batch_select_indices(keep)
        return
    for layer in layers:
        layer.batch_select_indices(keep)


class PreallocatedLayer(DynamicLayer or object):  # only instantiated when DynamicLayer exists
    """A DynamicLayer that copies new keys/values into a preallocated buffer instead of concatenating.

    DynamicLayer re-allocates and copies the whole cache every step (``torch.cat``), about an eighth
    of the decode time of a small model; here each step writes only the new position and attention
    sees a view of the filled prefix, so the results are the same.
    """

    def __init__(self, capacity: int) -> None:
        """An empty layer whose buffers will hold ``capacity`` positions."""
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


class DynamicPasses:
    """The forward passes of a chunk on the dynamic cache.

    Finished rows can leave it, and a group's prompt runs once for its rows: with ``share`` > 1 the rows come
    in runs of ``share`` equal prompts (a group of samples), the prompt is run through the model once per run
    and its cache copied to the run's rows. The prompt is most of the work of a short completion (an 81-token
    prompt and 32 new tokens for 64 rows is 46% of the sampling time on a CPU), and the rows diverge only
    once they sample.
    """

    can_leave = True

    def __init__(
        self, forward: Forward, model: torch.nn.Module, prompt_mask: torch.Tensor, steps: int, share: int = 1
    ) -> None:
        """Passes of ``forward`` over a cache of ``model`` for the [b, P] ``prompt_mask``'s rows.

        ``steps``: the new tokens at most; ``share``: rows per prompt.
        """
        self.forward, self.width, self.share = forward, prompt_mask.shape[1], share
        self._masks(prompt_mask, steps)
        self.cache = dynamic_cache(model, self.width + steps)

    def _masks(self, prompt_mask: torch.Tensor, steps: int) -> None:
        """The [b, P + steps] attention mask, the prompts' positions and the new tokens' [b, steps] positions."""
        rows, width = prompt_mask.shape
        device = prompt_mask.device
        # Preallocated so each step only slices: no per-step concatenation of masks or outputs.
        self.attention_mask = torch.ones((rows, width + steps), dtype=prompt_mask.dtype, device=device)
        self.attention_mask[:, :width] = prompt_mask
        self.positions = (prompt_mask.cumsum(dim=1) - 1).clamp_(min=0)  # left padding: real tokens only
        self.next_positions = self.positions[:, -1:] + 1 + torch.arange(steps, device=device)  # [b, steps]

    def prefill(self, prompt_ids: torch.Tensor) -> torch.Tensor:
        """Run the prompts into the cache; [b, V] logits of each row's next token."""
        mask, forward = self.attention_mask[:, : self.width], self.forward
        if self.share > 1 and hasattr(self.cache, "batch_repeat_interleave"):
            run = slice(None, None, self.share)
            logits = forward(prompt_ids[run], mask[run], self.positions[run], self.cache)  # [b / share, V]
            self.cache.batch_repeat_interleave(self.share)
            return logits.repeat_interleave(self.share, dim=0)  # [b, V]
        return forward(prompt_ids, mask, self.positions, self.cache)  # [b, V]

    def step(self, token: torch.Tensor, live: torch.Tensor, step: int) -> torch.Tensor:
        """[a, V] logits after feeding the ``live`` rows' [a] tokens of decoding step ``step``."""
        end = self.width + step + 1
        mask, positions = self.attention_mask[live, :end], self.next_positions[live, step : step + 1]
        return self.forward(token[:, None], mask, positions, self.cache)

    def leave(self, keep: torch.Tensor) -> None:
        """Only the live rows ``keep`` stay in the cache."""
        select_rows(self.cache, keep)


class StaticPasses(DynamicPasses):
    """The forward passes of a chunk on a static cache.

    Every row stays, and every decoding step has the same shapes (the whole attention mask, one cache
    position), replayed as a CUDA graph on a GPU.
    """

    can_leave = False

    def __init__(
        self,
        forward: Forward,
        cache: Any,
        prompt_mask: torch.Tensor,
        steps: int,
        graphed: Forward | None = None,
    ) -> None:
        """As `DynamicPasses`, without shared prompts, on ``cache`` (`static_cache`, empty, of ``P + steps``).

        ``graphed``: ``forward`` compiled into CUDA graphs, for the decoding steps (None: ``forward``).
        """
        self.forward, self.width, self.share = forward, prompt_mask.shape[1], 1
        self._masks(prompt_mask, steps)
        self.cache = cache
        self.cache_positions = torch.arange(self.width + steps, device=prompt_mask.device)
        self.decode = graphed or forward

    def prefill(self, prompt_ids: torch.Tensor) -> torch.Tensor:
        """Run the prompts into the cache (the whole mask: attention is causal); [b, V] logits."""
        cache_position = self.cache_positions[: self.width]
        return self.forward(prompt_ids, self.attention_mask, self.positions, self.cache, cache_position)

    def step(self, token: torch.Tensor, live: torch.Tensor, step: int) -> torch.Tensor:
        """[b, V] logits after feeding every row's [b] token of decoding step ``step``."""
        at = self.width + step
        positions = self.next_positions[:, step : step + 1]
        cache_position = self.cache_positions[at : at + 1]
        return self.decode(token[:, None], self.attention_mask, positions, self.cache, cache_position)
