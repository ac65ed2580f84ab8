"""The policy layer: the model a trainer trains and an evaluation samples from, and how it is kept.

One module per idea: `loading` (a model and tokenizer from a GGUF file, a folder, a hub id, a run folder or a
checkpoint; saving one; chat-template prompts), `tiny` (the random-init CPU model and its character
tokenizer), `lora` (peft adapters: add, save, load, merge), `base_model` (the model a run started from, as
recorded in its run folder) and `checkpoints` (a training step's weights, optimizer and RNG state, written
atomically and verified when read). Names load on first use, so naming this package imports no torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reasongym.policy.loading import end_of_turn_id, format_prompt, load_base, load_policy, save_policy
    from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model, tiny_policy

_LAZY = {
    "end_of_turn_id": "loading",
    "format_prompt": "loading",
    "load_base": "loading",
    "load_policy": "loading",
    "save_policy": "loading",
    "make_char_tokenizer": "tiny",
    "make_tiny_model": "tiny",
    "tiny_policy": "tiny",
}

__all__ = [
    "end_of_turn_id",
    "format_prompt",
    "load_base",
    "load_policy",
    "make_char_tokenizer",
    "make_tiny_model",
    "save_policy",
    "tiny_policy",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"reasongym.policy.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'reasongym.policy' has no attribute {name!r}")
