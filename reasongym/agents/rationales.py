"""Verified rationales from an environment: STaR's data-generating steps (Zelikman et al., 2022).

`generate_rationales` samples completions for training problems (hinted or not), `filter_correct` keeps the
finished ones whose final answer the environment's verifier accepts, and `rationalize` retries missed
problems with the gold answer shown as a hint and keeps what then verifies, stored under the prompt
*without* the hint. `stands_alone` is the faithfulness check of a rationalized example: shown its rationale
without the hint and without its final answer, the policy must reach a correct answer itself (an answer-only
check keeps hinted rationales that copy the gold over wrong steps). `STaRTask` holds what every step
needs: the environment, the policy's prompt format and the few-shot examples. `reasongym.agents.star` runs these steps in its loop.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import PreTrainedTokenizerBase

from reasongym.agents.config import RunConfig, resolve_splits
from reasongym.agents.sft import sft_pairs_from_env
from reasongym.generation import Generator, SamplingParams
from reasongym.policy.loading import format_prompt
from reasongym.verifiers.extract import ANSWER_PHRASE

__all__ = [
    "KeptExample",
    "STaRTask",
    "filter_correct",
    "generate_rationales",
    "rationale_without_answer",
    "rationalize",
    "stands_alone",
]


@dataclass(frozen=True)
class KeptExample:
    """One verified rationale, as written to ``kept.jsonl`` and fine-tuned on."""

    problem_id: str
    """The problem's id."""
    index: int
    """The problem's index in the training split."""
    prompt: str
    """The zero-shot prompt without any hint, formatted for the policy (chat template applied)."""
    completion: str
    """The model's rationale and final answer."""
    source: str
    """``"direct"`` (the policy's own success) or ``"rationalized"`` (found with the hint shown)."""


@dataclass(frozen=True)
class STaRTask:
    """The environment and the policy's prompt format: what every step needs to build prompts and grade."""

    env: Any
    """The unwrapped single-turn ``ReasoningEnv``."""
    tokenizer: PreTrainedTokenizerBase
    """The policy's tokenizer (its chat template formats the prompts)."""
    split: str = "train"
    """The split the training problems come from."""
    eval_split: str = "test"
    """The held-out split."""
    difficulty: int | None = None
    """Difficulty of training and held-out problems; None: the env's default."""
    shots: tuple[tuple[Any, str], ...] = ()
    """Few-shot examples: (problem, verified reference completion)."""

    @classmethod
    def from_env(
        cls,
        env: Any,
        tokenizer: PreTrainedTokenizerBase,
        run: RunConfig,
        *,
        few_shot_examples: int = 0,
        train_start: int = 0,
    ) -> STaRTask:
        """Resolve the run's splits; take ``few_shot_examples`` verified reference solutions from the problems
        before ``train_start``."""
        env = getattr(env, "unwrapped", env)
        split, eval_split = resolve_splits(run, env)
        shots: list[tuple[Any, str]] = []
        for index in range(train_start):
            if len(shots) == few_shot_examples:
                break
            pair = sft_pairs_from_env(env, 1, split=split, start=index)
            if pair:
                problem = env.problem_at(index, split=split, difficulty=run.difficulty)
                shots.append((problem, pair[0][1]))
        return cls(env, tokenizer, split, eval_split, run.difficulty, tuple(shots))

    def messages(self, problem: Any, *, hint: bool = False, few_shot: bool = False) -> list[dict[str, str]]:
        """The chat messages of the prompt; few-shot examples are hinted too when ``hint`` is set."""
        messages = self.env.messages(problem, hint=hint)
        turns = []
        for example, completion in self.shots if few_shot else ():
            turns += [
                {"role": "user", "content": self.env.prompt(example, hint=hint)},
                {"role": "assistant", "content": completion},
            ]
        return [*messages[:-1], *turns, messages[-1]]

    def prompt(self, problem: Any, *, hint: bool = False, few_shot: bool = False) -> str:
        """The prompt formatted for the policy (its chat template applied)."""
        return format_prompt(self.tokenizer, self.messages(problem, hint=hint, few_shot=few_shot))


def generate_rationales(
    task: STaRTask,
    generator: Generator,
    problems: Sequence[Any],
    params: SamplingParams,
    *,
    hint: bool = False,
) -> list[list[Any]]:
    """Sample ``params.n`` completions per problem (``Completion`` objects), hinted or not.

    A generator that applies the chat template itself (``takes_messages``, e.g. a served model) gets the
    messages; the in-process sampler gets them formatted with the policy's template.
    """
    chat = getattr(generator, "takes_messages", False)
    prompts = [
        task.messages(problem, hint=hint, few_shot=True)
        if chat
        else task.prompt(problem, hint=hint, few_shot=True)
        for problem in problems
    ]
    return generator.generate(prompts, params)


def filter_correct(
    task: STaRTask,
    problems: Sequence[Any],
    indices: Sequence[int],
    completions: Sequence[Sequence[Any]],
    *,
    source: str,
    max_per_problem: int,
    drop_hint_mentions: bool = False,
) -> list[KeptExample]:
    """Keep finished completions whose final answer the environment's verifier accepts.

    Each kept example carries the zero-shot prompt without a hint, whatever prompt produced it.
    """
    kept = []
    for problem, index, samples in zip(problems, indices, completions, strict=True):
        texts: list[str] = []
        for sample in samples:
            if sample.finish_reason != "stop" or sample.text in texts:
                continue
            if drop_hint_mentions and "hint" in sample.text.lower():
                continue
            if task.env.score(problem, sample.text).correct and len(texts) < max_per_problem:
                texts.append(sample.text)
        prompt = task.prompt(problem) if texts else ""
        kept += [KeptExample(problem.id, index, prompt, text, source) for text in texts]
    return kept


def rationalize(
    task: STaRTask,
    generator: Generator,
    problems: Sequence[Any],
    indices: Sequence[int],
    params: SamplingParams,
    *,
    max_per_problem: int = 1,
    drop_hint_mentions: bool = True,
) -> list[KeptExample]:
    """Retry ``problems`` with the gold answer as a hint; keep verified rationales, stored without it."""
    if not problems:
        return []
    completions = generate_rationales(task, generator, problems, params, hint=True)
    return filter_correct(
        task,
        problems,
        indices,
        completions,
        source="rationalized",
        max_per_problem=max_per_problem,
        drop_hint_mentions=drop_hint_mentions,
    )


# ---------------------------------------------------------------------------------------------- faithfulness


def rationale_without_answer(completion: str) -> str | None:
    r"""The completion cut just before its final answer: before the last ``\boxed{``, else before the last
    answer phrase ("The answer is", "Final answer:", "####"); None when it has neither."""
    box = completion.rfind("\\boxed{")
    if box >= 0:
        return completion[:box]
    phrases = list(ANSWER_PHRASE.finditer(completion))
    return completion[: phrases[-1].start()] if phrases else None


def stands_alone(
    task: STaRTask,
    generator: Generator,
    problems: Sequence[Any],
    kept: Sequence[KeptExample],
    *,
    max_new_tokens: int,
) -> list[bool]:
    """Whether each kept rationale leads ``generator`` to a correct answer without the hint (faithfulness).

    The generator continues, greedily, the example's stored prompt (no hint) followed by its rationale cut
    before the final answer (`rationale_without_answer`); the rationale plus that continuation must grade
    correct. Reasoning that supports its answer passes; a hinted rationale that reached the gold only by
    copying it (on the tiny model: column sums that do not add up, then the hinted total) leads the model to
    the answer its steps imply instead. A rationale with no separable final answer cannot be checked and fails.

    Args:
        task: The environment (grading) and prompt format.
        generator: The policy that will learn from the examples (an in-process sampler: it continues text).
        problems: The problem of each example, in order.
        kept: Examples to check (``prompt`` without the hint).
        max_new_tokens: Longest continuation.

    Returns:
        One flag per example, True to keep it.
    """
    prefixes = [rationale_without_answer(example.completion) for example in kept]
    todo = [i for i, prefix in enumerate(prefixes) if prefix is not None]
    passed = [False] * len(kept)
    if not todo:
        return passed
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0, n=1)
    prompts = [kept[i].prompt + str(prefixes[i]) for i in todo]
    for i, (continuation, *_) in zip(todo, generator.generate(prompts, params), strict=True):
        text = str(prefixes[i]) + continuation.text
        passed[i] = continuation.finish_reason == "stop" and task.env.score(problems[i], text).correct is True
    return passed


def by_index(example: KeptExample) -> int:
    """The problem index of a kept example: the order every rank's kept examples are gathered in."""
    return example.index


def write_kept(root: Path, iteration: int, kept: Sequence[KeptExample]) -> Path:
    """Write ``iteration-NNN/kept.jsonl`` (replacing a copy left by a crashed attempt); returns the folder."""
    folder = root / f"iteration-{iteration:03d}"
    folder.mkdir(exist_ok=True)
    for stale in ("metrics.jsonl", "config.json"):
        (folder / stale).unlink(missing_ok=True)
    lines = [{"iteration": iteration, **dataclasses.asdict(example)} for example in kept]
    tmp = folder / ".kept.jsonl.tmp"
    tmp.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    tmp.replace(folder / "kept.jsonl")
    return folder
