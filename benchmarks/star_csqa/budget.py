"""STaR's rationale sampler under a budget of sampled tokens, checked before each chunk of prompts."""

from __future__ import annotations

import dataclasses
from typing import Any

from reasongym.generation import Completion, SamplingParams


def empty_completion() -> Completion:
    """What a prompt gets once the budget is spent: nothing, unfinished (every filter drops it)."""
    return Completion(text="", token_ids=(), logprobs=(), finish_reason="length")


class RationaleBudget:
    """STaR's rationale sampler, counting sampled tokens against a budget in calls of ``chunk`` prompts.

    Before each call it checks the budget; once spent, the rest of the iteration's prompts get empty
    completions, so the iteration fine-tunes on what it kept, and `stop_when_spent` (STaR's ``on_step``
    hook) stops the next iteration before it samples. ``on_sampled`` sees each call's prompts and
    completions (`RandomFilter`'s plan). Anything else is the wrapped sampler's (``takes_messages``).
    """

    def __init__(self, inner: Any, budget: int, chunk: int) -> None:
        self.inner, self.budget, self.chunk = inner, budget, chunk
        self.tokens = 0
        self.on_sampled: Any = None

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copying)
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def spent(self) -> bool:
        """Whether the budget is spent."""
        return self.tokens >= self.budget

    def generate(self, prompts: Any, params: SamplingParams) -> list[list[Completion]]:
        groups: list[list[Completion]] = []
        for call, start in enumerate(range(0, len(prompts), self.chunk)):
            part = prompts[start : start + self.chunk]
            if self.spent:
                groups += [[empty_completion() for _ in range(params.n)] for _ in part]
                continue
            seeded = params if params.seed is None else dataclasses.replace(params, seed=params.seed + call)
            sampled = self.inner.generate(part, seeded)
            self.tokens += sum(len(c.token_ids or ()) for group in sampled for c in group)
            groups += sampled
        if self.on_sampled is not None:
            self.on_sampled(prompts, groups)
        return groups
