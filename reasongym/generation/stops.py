"""Stop strings in our decode loop: which rows just completed one, and where a finished text is cut."""

from __future__ import annotations

import torch
from transformers import PreTrainedTokenizerBase

__all__ = ["StopStringChecker", "cut_after_stop"]


def cut_after_stop(text: str, stops: tuple[str, ...]) -> str:
    """Cut ``text`` right after the earliest-ending stop string, if any."""
    ends = [text.find(stop) + len(stop) for stop in stops if stop in text]
    return text[: min(ends)] if ends else text


class StopStringChecker:
    """Finds rows whose newest token completed a stop string, decoding only a short tail per row."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, stops: tuple[str, ...]) -> None:
        """Look for ``stops`` in the tail each row decodes to with ``tokenizer``."""
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
