"""The tiny CPU model and its character tokenizer, built in code: what tests, the demo and the benchmarks
train when they need no real model.

`make_tiny_model` is a random-init causal LM from a transformers config (Llama or Qwen2 architecture) and
`make_char_tokenizer` a character-level tokenizer; both save and load like any hub checkpoint, so
`reasongym.policy.loading.load_policy(folder)` loads them like every other model (`reasongym.policy` re-exports
them).
"""

from __future__ import annotations

import difflib
import string

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import (
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForCausalLM,
)

from reasongym.errors import ConfigError

SPECIAL_TOKENS: tuple[str, ...] = ("<pad>", "<bos>", "<eos>", "<unk>")
"""Special tokens of the character tokenizer; their ids are 0, 1, 2, 3 in this order."""

# Vertical tab and form feed are printable in Python's sense but never appear in prompts.
_ASCII_CHARS = [c for c in string.printable if c not in "\x0b\x0c"]
_MATH_CHARS = list("×÷−±≤≥≠≈√π∞·°²³")

_ARCHITECTURES: dict[str, tuple[type, type]] = {
    "llama": (LlamaConfig, LlamaForCausalLM),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM),
}


def make_char_tokenizer() -> PreTrainedTokenizerFast:
    """Build a character-level tokenizer in code: one token per character, exact decoding.

    The vocabulary is ``SPECIAL_TOKENS`` followed by printable ASCII and a few math symbols; any
    other character maps to ``<unk>``. No BOS/EOS is added when encoding. ``save_pretrained`` and
    ``AutoTokenizer.from_pretrained`` round-trip it.

    Returns:
        The tokenizer, padding on the left.
    """
    vocab = {token: index for index, token in enumerate([*SPECIAL_TOKENS, *_ASCII_CHARS, *_MATH_CHARS])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    # Splitting on the empty pattern isolates every character, whitespace included.
    backend.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    backend.decoder = decoders.Fuse()  # join tokens without separators so decode(encode(s)) == s
    pad, bos, eos, unk = SPECIAL_TOKENS
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token=pad, bos_token=bos, eos_token=eos, unk_token=unk
    )
    tokenizer.padding_side = "left"
    return tokenizer


def make_tiny_model(
    tokenizer: PreTrainedTokenizerBase,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int = 256,
    max_position_embeddings: int = 512,
    seed: int = 0,
    arch: str = "llama",
) -> PreTrainedModel:
    """Build a small random-init causal LM over ``tokenizer``'s vocabulary.

    Initialisation runs on a forked RNG seeded with ``seed``: the same arguments give the same
    weights, and the caller's global torch RNG is left as it was.

    Args:
        tokenizer: Supplies the vocabulary size and the pad/bos/eos ids.
        hidden_size: Width of the residual stream; must be divisible by ``num_heads``.
        num_layers: Number of decoder blocks.
        num_heads: Attention heads (as many key/value heads, i.e. no grouped-query attention).
        intermediate_size: Width of the MLP.
        max_position_embeddings: Longest sequence the rotary embedding is configured for.
        seed: Seed of the weight initialisation.
        arch: ``"llama"`` or ``"qwen2"``.

    Returns:
        The model in float32 on the CPU.

    Raises:
        ConfigError: Unknown ``arch``, or a size that is not positive or not divisible.
    """
    _check_shape(arch, hidden_size, num_layers, num_heads, intermediate_size, max_position_embeddings)
    config_class, model_class = _ARCHITECTURES[arch]
    config = config_class(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = model_class(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    return model


def _check_shape(
    arch: str, hidden_size: int, num_layers: int, num_heads: int, intermediate_size: int, max_positions: int
) -> None:
    """Raise ConfigError for an unknown architecture, a size below 1, or heads that do not divide the width."""
    if arch not in _ARCHITECTURES:
        nearest = difflib.get_close_matches(arch, _ARCHITECTURES, n=1)
        hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
        raise ConfigError(f"arch={arch!r} is not supported; allowed: {sorted(_ARCHITECTURES)}{hint}")
    sizes = {
        "hidden_size": hidden_size,
        "num_layers": num_layers,
        "num_heads": num_heads,
        "intermediate_size": intermediate_size,
        "max_position_embeddings": max_positions,
    }
    for name, value in sizes.items():
        if value < 1:
            raise ConfigError(f"{name}={value} must be a positive integer")
    if hidden_size % num_heads:
        raise ConfigError(
            f"hidden_size={hidden_size} must be divisible by num_heads={num_heads} (each head gets "
            "hidden_size / num_heads dimensions)"
        )


def tiny_policy(
    seed: int = 0, *, hidden_size: int = 128, num_layers: int = 2
) -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """The character tokenizer and a random-init Llama-style model of about 0.5M parameters (at the defaults).

    The policy of the demo, the ``tiny`` preset and the CPU benchmarks.

    Args:
        seed: Seed of the weight initialisation.
        hidden_size: Width of the model (intermediate size is 4x).
        num_layers: Decoder blocks.

    Returns:
        ``(model, tokenizer)``.
    """
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(
        tokenizer,
        hidden_size=hidden_size,
        num_layers=num_layers,
        num_heads=4,
        intermediate_size=4 * hidden_size,
        seed=seed,
    )
    return model, tokenizer
