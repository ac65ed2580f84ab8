"""Loading policies, formatting prompts, and the tiny CPU model and character tokenizer.

Tests, the demo and the benchmarks cannot download weights, so they build a random-init causal LM
from a transformers config (`make_tiny_model`) over a character tokenizer built in code
(`make_char_tokenizer`). Both save and load like any hub checkpoint, so `load_policy(folder)` is the
one way every caller gets a model.
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
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


def load_policy(
    name_or_path: str,
    *,
    dtype: str | torch.dtype | None = None,
    device: str | torch.device | None = None,
    trust_remote_code: bool = False,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a causal LM and its tokenizer from a hub id or a local folder, ready for generation.

    The tokenizer pads on the left (what batched decoding needs) and gets its EOS token as pad token
    when it has none.

    Args:
        name_or_path: A local folder written by ``save_pretrained``, a run folder of a reasongym trainer
            (its latest checkpoint) or one of its ``checkpoints/step-N`` folders, or a hub id such as
            ``"Qwen/Qwen2.5-0.5B-Instruct"``.
        dtype: Weight dtype, e.g. ``torch.bfloat16`` or ``"auto"``; ``None`` keeps the transformers
            default (float32).
        device: Where to put the model, e.g. ``"cuda"``; ``None`` leaves it on the CPU.
        trust_remote_code: Passed to transformers; allows model code shipped with the checkpoint.

    Returns:
        ``(model, tokenizer)``.

    Raises:
        ConfigError: The path does not exist locally and could not be loaded from the hub.
    """
    from reasongym.checkpoints import resolve_weights

    looks_local = name_or_path.startswith((".", "/", "~")) or Path(name_or_path).exists()
    if looks_local and not Path(name_or_path).expanduser().is_dir():
        raise ConfigError(_not_found_message(name_or_path, "not an existing local folder"))
    source = str(Path(name_or_path).expanduser()) if looks_local else name_or_path
    tokenizer_source = source
    resolved = resolve_weights(source) if looks_local else None
    if resolved is not None:  # a run folder or one of its checkpoints
        source, tokenizer_source = str(resolved[0]), str(resolved[1])
    elif looks_local and not (Path(source) / "config.json").is_file():
        raise ConfigError(
            f"name_or_path={name_or_path!r} is a folder that holds no model: no config.json (a model saved with "
            "save_pretrained), checkpoint.json (a checkpoint) or checkpoints/ (a run folder)"
        )
    kwargs: dict[str, object] = {"trust_remote_code": trust_remote_code}
    if dtype is not None:
        kwargs["dtype"] = dtype
    try:
        # The model first: when the hub is unreachable, only one loader sits through the retries.
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_source, trust_remote_code=trust_remote_code)
    except OSError as exc:  # transformers reports both "not on the hub" and "hub unreachable" as OSError
        raise ConfigError(_not_found_message(name_or_path, str(exc).splitlines()[0])) from exc
    except ValueError as exc:  # e.g. a config.json without model_type: not a transformers model
        raise ConfigError(
            f"name_or_path={name_or_path!r} is not a model transformers can load: its config.json names no "
            f"known model type ({str(exc).splitlines()[0]})"
        ) from exc
    if device is not None:
        model = model.to(device)
    _prepare_for_generation(model, tokenizer)
    return model, tokenizer


def _not_found_message(name_or_path: str, reason: str) -> str:
    return (
        f"name_or_path={name_or_path!r} could not be loaded ({reason}). Allowed: a local folder written by "
        "save_pretrained (config.json, weights, tokenizer files), or a hub id when the hub is reachable. "
        "Without network, download the model elsewhere (e.g. `huggingface-cli download <id> --local-dir "
        "DIR`), copy DIR here and pass its path; set HF_HUB_OFFLINE=1 to skip the hub's connection retries."
    )


def _prepare_for_generation(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """Left padding, a pad token, and matching special ids on the model config."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id


def format_prompt(tokenizer: PreTrainedTokenizerBase, prompt: str | Sequence[Mapping[str, str]]) -> str:
    """Turn a prompt into the text the model should continue.

    With a chat template, a plain string becomes one user message and the template is applied with
    the assistant turn opened. Without one, the message contents are joined by newlines.

    Args:
        tokenizer: The policy's tokenizer.
        prompt: Plain text, or chat messages as ``[{"role": ..., "content": ...}, ...]``.

    Returns:
        The prompt text, not tokenized.
    """
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "\n".join(str(message["content"]) for message in messages)


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
    if arch not in _ARCHITECTURES:
        nearest = difflib.get_close_matches(arch, _ARCHITECTURES, n=1)
        hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
        raise ConfigError(f"arch={arch!r} is not supported; allowed: {sorted(_ARCHITECTURES)}{hint}")
    sizes = {
        "hidden_size": hidden_size,
        "num_layers": num_layers,
        "num_heads": num_heads,
        "intermediate_size": intermediate_size,
        "max_position_embeddings": max_position_embeddings,
    }
    for name, value in sizes.items():
        if value < 1:
            raise ConfigError(f"{name}={value} must be a positive integer")
    if hidden_size % num_heads:
        raise ConfigError(
            f"hidden_size={hidden_size} must be divisible by num_heads={num_heads} (each head gets "
            "hidden_size / num_heads dimensions)"
        )
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
        tokenizer, hidden_size=hidden_size, num_layers=num_layers, num_heads=4,
        intermediate_size=4 * hidden_size, seed=seed,
    )  # fmt: skip
    return model, tokenizer
