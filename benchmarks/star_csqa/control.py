"""The random-filter control: STaR keeping as many rationales as the verifier would, chosen without it."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from benchmarks.controls import RecordedVerdicts, RunVerdicts
from benchmarks.star_csqa.diagnostics import (
    picked_letter,
)
from reasongym.generation import Completion


class RandomFilter(RecordedVerdicts):
    """STaR's filter without the verifier: after each sampling call, as many problems keep a rationale as the
    verifier would have kept, drawn at random among the problems with a finished rationale whose letter is
    readable, each keeping one such rationale drawn at random; `score` accepts exactly those.

    The verifier is asked only to count (how many problems it would keep) and to read the letter, never to
    choose. Problems outside ``training`` (STaR's own held-out check) are graded for real.
    """

    def __init__(self, env: Any, verdicts: RunVerdicts, training: dict[str, Any], seed: int) -> None:
        super().__init__(env, verdicts, shuffle=False)
        self.training = training
        """Prompt key (`prompt_key`) -> training problem."""
        self.training_ids = {problem.id for problem in training.values()}
        self.accepted: set[tuple[str, str]] = set()
        self.rng = random.Random(seed)
        self.log: list[dict[str, int]] = []
        """Per sampling call: ``verifier_kept`` problems, ``random_kept``, and how many of those were right."""

    def plan(self, prompts: Any, groups: list[list[Completion]]) -> None:
        """Choose this call's accepted rationales (called by `RationaleBudget` after each sampling call)."""
        real_kept, readable = 0, {}
        for prompt, group in zip(prompts, groups, strict=True):
            problem = self.training[prompt_key(prompt)]
            finished = list(dict.fromkeys(c.text for c in group if c.finish_reason == "stop"))
            verdicts = [self.env.unwrapped.score(problem, text) for text in finished]
            real_kept += any(v.correct for v in verdicts)
            options = [(t, v) for t, v in zip(finished, verdicts, strict=True) if picked_letter(v)]
            if options:
                readable[problem.id] = options
        chosen = self.rng.sample(sorted(readable), min(real_kept, len(readable)))
        picks = [self.rng.choice(readable[problem_id]) for problem_id in chosen]
        self.accepted = {(problem_id, text) for problem_id, (text, _) in zip(chosen, picks, strict=True)}
        right = sum(bool(verdict.correct) for _, verdict in picks)
        self.log.append({"verifier_kept": real_kept, "random_kept": len(chosen), "random_kept_right": right})

    def score_many(self, problem: Any, completions: Any) -> list[Any]:
        return [self.score(problem, completion) for completion in completions]

    def score(self, problem: Any, completion: str) -> Any:
        verdict = self.env.unwrapped.score(problem, completion)
        if problem.id not in self.training_ids or verdict.correct is None:
            return verdict
        self.verdicts.record(bool(verdict.correct))
        accepted = (problem.id, completion) in self.accepted
        reason = f"random filter (graded {verdict.outcome.value}): {verdict.reason}"
        return dataclasses.replace(verdict, correct=accepted, reason=reason)


def prompt_key(prompt: Any) -> str:
    """A prompt as a dictionary key: its text, or its chat messages as JSON (a sampler that takes messages)."""
    return prompt if isinstance(prompt, str) else json.dumps(list(prompt), sort_keys=True)
