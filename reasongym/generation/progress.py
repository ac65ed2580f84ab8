"""Progress while a sampler works.

A real model on a CPU can sample for minutes before a trainer's step or an evaluation's batch ends and its
progress bar moves; `TokenCount` shows the tokens sampled meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class TokenCount:
    """A sampler's progress hook (`HFGenerator.progress`): tokens decoded since the bar last moved.

    They are written into the bar about twice a second, so a slow step or batch shows that it works, and how fast.
    """

    def __init__(self, bar: Callable[[], Any]) -> None:
        """``bar()`` gives the bar to write into (None: none yet); its count tells one step from the next."""
        self.bar, self.tokens, self.shown, self.step = bar, 0, 0.0, -1

    def __call__(self, rows: int) -> None:
        """``rows`` more tokens were decoded."""
        bar = self.bar()
        if bar is None:
            return
        if bar.n != self.step:  # the bar moved (a new step or batch): count from 0
            self.step, self.tokens = bar.n, 0
        self.tokens += rows
        now = time.perf_counter()
        if now - self.shown > 0.5:
            self.shown = now
            bar.set_postfix_str(f"sampling: {self.tokens:,} tokens")
