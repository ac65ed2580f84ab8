"""STaR on CommonsenseQA with rationales (issue 39): do a small model's own chains of thought teach it?

The setting: SmolLM2-135M-Instruct answers ``reasongym/CommonsenseQA-v0`` (five options A-E) through its chat
template, told to reason step by step and end with "The answer is (X)". Training problems come from the train
split (from index ``TRAIN_START``: the few-shot exemplars sit before it); the held-out set is the first
``eval_problems`` problems of the validation split (400: a 95% interval of about +-5 points), answered greedily.

Arms (``ARMS``), the trained ones given the same number of sampled completion tokens (``budget_tokens``):

- ``zero_shot_cot``, ``few_shot_cot``: evaluation only, zero-shot and with Wei et al.'s (2022) seven
  CommonsenseQA exemplars (`EXEMPLARS`), seed-independent (greedy): run once;
- ``direct_sft``: fine-tuning on the gold letters ("The answer is (X)."), for as many optimizer steps as STaR's
  fine-tunes take in all (`star_total_sft_steps`), on that many distinct training problems; samples nothing;
- ``star_no_rationalization``, ``star``: STaR (`reasongym.agents.star`), without and with rationalization;
- ``star_random_filter``: the control of ``star_no_rationalization``: each sampling call keeps as many
  rationales as the verifier would have kept, chosen at random among those with a readable letter
  (`RandomFilter`), so the filter's count and the format are kept and the verifier's choice is not;
- ``grpo_cot``: GRPO with a chain of thought on the same environment (`real_learning.rl_arm`).

Compute matching: STaR's rationale sampler is wrapped in `RationaleBudget`, which samples in calls of at most
``budget_chunk`` prompts, checks the budget before each, and once it is spent hands empty (unfinished)
completions to the rest of the iteration, which then fine-tunes on what it kept; the next iteration stops
before sampling (its ``on_step`` hook returns True). So no STaR arm passes its budget by more than one chunk (issue 27's STaR
checked per iteration and overran by 1.5x). GRPO checks before each step's sampling call (`real_learning.Budget`).

Held-out accuracy is measured before training (the ``zero_shot_cot`` arm), half-way through the budget and at its
end. Each (arm, seed) writes ``OUT/runs/ARM-sSEED.json`` when done (evaluation-only arms ``OUT/runs/ARM.json``);
a rerun skips it, and a rerun with another setting is refused. The summary (``OUT/summary.json``, ``OUT/table.md``,
``OUT/rationales.md``, ``OUT/accuracy.png``) gives per arm the held-out accuracy with a 95% bootstrap interval
(seeds and problems resampled, paired: `real_learning.interval`), the share of training problems kept per
iteration, the lucky-guess diagnostics of the kept rationales (`lucky_guess`), the answer-letter distribution
before and after, and 10 held-out rationales before and after, as they are.

`star_csqa_pilot.py` measures what the arms cost; ``--gpu`` swaps in Qwen2.5-0.5B-Instruct
with the vLLM engine (``--model`` names a local folder where no hub is reachable); ``--dry`` shrinks any of it to
seconds on the tiny random model. One file past the usual size, on purpose: the arms, the control and the
diagnostics of one experiment, in run order.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.star_csqa --model $REASONGYM_SMOLLM2_GGUF --seeds 0 1

Last line: one JSON object (the summary).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import reasongym  # noqa: E402
from benchmarks.controls import RecordedVerdicts, RunVerdicts  # noqa: E402
from benchmarks.harness import report, settings  # noqa: E402
from benchmarks.harness.machine import Snapshot  # noqa: E402
from benchmarks.real_learning import (  # noqa: E402
    KIT_MODEL_ENV,
    ArmRun,
    accuracy_interval,
    check_same_setting,
    interval,
    load,
    resolve_offline,
    rl_arm,
)
from reasongym import distributed  # noqa: E402
from reasongym.agents import preset_configs  # noqa: E402
from reasongym.agents.rationales import STaRTask, generate_rationales, rationale_without_answer  # noqa: E402
from reasongym.agents.runtime.engine import following_engine  # noqa: E402
from reasongym.agents.sft import train_sft  # noqa: E402
from reasongym.agents.star import sft_steps_for_iteration, train_star  # noqa: E402
from reasongym.generation import Completion, HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.loading import format_prompt  # noqa: E402

EVAL_ARMS = ("zero_shot_cot", "few_shot_cot")
TRAINED_ARMS = ("direct_sft", "star_no_rationalization", "star", "star_random_filter", "grpo_cot")
ARMS = EVAL_ARMS + TRAINED_ARMS
COMPARISONS = (
    ("star", "direct_sft"),
    ("star", "star_no_rationalization"),
    ("star_no_rationalization", "star_random_filter"),
    ("star", "zero_shot_cot"),
    ("grpo_cot", "zero_shot_cot"),
    ("direct_sft", "zero_shot_cot"),
)
"""The questions the table answers (arm minus baseline): the paper's claims and their controls."""
ENV_ID = "reasongym/CommonsenseQA-v0"
TRAIN_START = 12
"""Training problems start here: the few-shot exemplars (`EXEMPLARS`) are train problems 1-11."""
EXEMPLARS = {
    8: "The answer must be an item that can absorb ink. Of the above choices, only blotters are used to absorb ink.",
    5: "The answer must require cable. Of the above choices, only television requires cable.",
    4: "The answer must be something in the forest. Of the above choices, only natural habitat is in the forest.",
    1: "The answer must be a place with a lot of people. Of the above choices, only populated areas have a lot "
    "of people.",
    10: "The answer should be the place where grocery items are placed before checking out. Of the above "
    "choices, grocery cart makes the most sense for holding grocery items.",
    3: "The answer must be something that used to do what Google Maps and GPS services do, which is to give "
    "directions. Of the above choices, only atlases are used to give directions.",
    11: "The answer should be the feeling of someone getting divorced who was doing all the work. Of the above "
    "choices, the closest feeling is bitterness.",
}
"""The CommonsenseQA exemplars of Wei et al. (2022, chain-of-thought prompting, appendix), in their order: train
index -> rationale; the final sentence is added in the environment's format, with the letter of this copy's option
order (their copies list the options in another order, some with four options)."""


@dataclass(frozen=True)
class Setting:
    """One study's model and sizes; `PRESETS` names the CPU one and the GPU one."""

    model: str
    """A .gguf file, a model folder or a hub id."""
    budget_tokens: int
    """Sampled completion tokens per trained arm."""
    eval_problems: int = 400
    """Held-out problems: the first ones of the validation split."""
    max_new_tokens: int = 160
    """Longest completion (rationale and answer), in training and evaluation."""
    temperature: float = 0.7
    """Sampling temperature of GRPO's rollouts (evaluation is greedy)."""
    star_temperature: float = 0.0
    """Temperature of STaR's rationales (paper, Sec. 3: greedy; hotter gave more right answers from wrong reasoning)."""
    star_samples: int = 1
    """Rationales sampled per training problem and STaR iteration (paper: one)."""
    star_iterations: int = 4
    """STaR iterations the budget is sized for (each covers ``budget_tokens / star_iterations`` tokens of
    problems), and the most a STaR arm runs: once SmolLM2's fine-tuned rationales shrink to a bare letter an
    iteration samples about a fifth of its share, and without this cap an arm would run on for ever more, ever
    longer fine-tunes of the same kept set (seen: the same 16 kept from iteration 3 to 7)."""
    star_sft_steps: int = 40
    """Fine-tuning steps of STaR's first iteration (paper: 40 of batch 8, growing 20% an iteration)."""
    mean_completion_tokens: int = 50
    """Expected tokens of one rationale, to size STaR's training problems per iteration (pilot: 47 for SmolLM2's
    own greedy rationales, 124 for its hinted ones)."""
    budget_chunk: int = 8
    """Prompts per sampling call of STaR: the budget is checked before each, so the most an arm overruns."""
    num_prompts: int = 8
    """Prompts per GRPO step."""
    group_size: int = 8
    """Samples per prompt of GRPO."""
    lr: float = 1e-5
    """Learning rate of every trained arm (full fine-tuning)."""
    generation_batch: int = 16
    """Rows decoded together by the in-process sampler (held-out and training)."""
    autocast: str = "off"
    """Mixed precision of the updates (``bf16`` on a GPU)."""
    engine: str = "hf"
    """Sampler of STaR's rationales and GRPO's rollouts: ``hf``, ``vllm`` or ``auto`` (decided before any run:
    `real_learning.resolve_offline`)."""
    sampler_weights: str = "policy"
    """What our sampler decodes GRPO's rollouts with (`RolloutConfig.sampler_weights`): ``bf16`` on a GPU."""
    env_id: str = ENV_ID
    """The environment (what `real_learning.rl_arm` reads, with the next three fields)."""
    instruction: str | None = None
    """Answer-format instruction (None: the environment's own, which asks for a chain of thought)."""
    difficulty: int | None = None
    """Unused by CommonsenseQA (no levels)."""
    tempered_logprobs: bool = True
    """GRPO's log-probs at the sampling temperature."""
    halfway_eval: bool = True
    """Also evaluate each trained arm halfway through its budget (a middle point on the plot's curves; on the
    CPU a held-out pass costs about as much as 20 fine-tuning steps)."""


PRESETS = {
    "cpu": Setting(model="", budget_tokens=60_000),
    # What one 3-hour session on 2 cores can run: a third of the budget, 300 held-out problems (about +-5
    # points below accuracy 0.3), half of STaR's fine-tuning steps, no halfway evaluation (~3 CPU-hours a seed).
    "cpu-small": Setting(
        model="", budget_tokens=20_000, eval_problems=300, star_sft_steps=20, halfway_eval=False
    ),
    # One GPU window, offline (README "Running a GPU window"): SmolLM2-135M-Instruct from the device kit (--model,
    # or $REASONGYM_KIT_MODEL), 256 new tokens, lr 1e-5 (the CPU preset's), our sampler unless vLLM is there
    # (decided before any evaluation), the bf16 sampler copy; a budget of about 3 GPU-minutes an arm.
    "gpu": Setting(
        model="",
        budget_tokens=200_000,
        max_new_tokens=256,
        mean_completion_tokens=60,
        star_iterations=3,
        budget_chunk=64,
        num_prompts=16,
        lr=1e-5,
        generation_batch=128,
        autocast="bf16",
        engine="auto",
        sampler_weights="bf16",
    ),
}


def dry(setting: Setting) -> Setting:
    """``setting`` shrunk to seconds on a CPU: the tiny random model, a few short samples, our sampler."""
    return settings.dry(
        setting,
        dict(
            model="tiny",
            budget_tokens=48,
            eval_problems=4,
            max_new_tokens=8,
            mean_completion_tokens=4,
            star_iterations=2,
            star_sft_steps=2,
            budget_chunk=2,
            num_prompts=2,
            group_size=2,
            autocast="off",
            engine="hf",
            sampler_weights="policy",
        ),
    )


# ---------------------------------------------------------------------------------------------- budget


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


# ---------------------------------------------------------------------------------------------- control


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


# ---------------------------------------------------------------------------------------------- diagnostics


def named_options(text: str, choices: Any) -> list[tuple[int, str]]:
    """Where ``text`` names an option: ``(position, letter)`` of each "(X)", "option X", "choice X" and each
    option text (whole words, any case), in order."""
    found = []
    for label, option in choices:
        letter = rf"\({label}\)|\b(?:option|choice|answer) \(?{label}\b"
        for match in re.finditer(letter, text):
            found.append((match.start(), label))
        for match in re.finditer(rf"\b{re.escape(option.strip(' .'))}\b", text, flags=re.IGNORECASE):
            found.append((match.start(), label))
    return sorted(found)


def lucky_guess(text: str, problem: Any, final: str | None) -> dict[str, bool]:
    """Whether a rationale's reasoning disagrees with its final letter ``final``.

    The rationale is the text before its final answer (`rationale_without_answer`). ``names_other``: it names
    an option other than ``final`` anywhere (dismissing one counts too); ``last_named_other``: the last option
    it names is not ``final`` (the reasoning points elsewhere, then the answer changes: a lucky guess when the
    answer is right); ``names_none``: it names no option at all (nothing ties the reasoning to the letter).
    """
    rationale = rationale_without_answer(text) or ""
    named = named_options(rationale, problem.choices)
    return {
        "names_other": any(letter != final for _, letter in named),
        "last_named_other": bool(named) and named[-1][1] != final,
        "names_none": not named,
    }


def picked_letter(verdict: Any) -> str | None:
    """The option letter a verdict says was picked; None when the answer names no single option: unreadable, or
    contradictory (a label with another option's text: "(C) listen to each other" where D is that text)."""
    match = re.match(r"Picked option ([A-E])\b", verdict.reason)
    return match.group(1) if match else None


def letter_distribution(letters: list[str | None]) -> dict[str, float]:
    """Share of each answer letter (A-E; ``none``: no single letter, `picked_letter`) among ``letters``."""
    counts = Counter(letter or "none" for letter in letters)
    return {key: round(counts[key] / max(1, len(letters)), 4) for key in ("A", "B", "C", "D", "E", "none")}


def kept_diagnostics(env: Any, kept: list[dict[str, Any]]) -> dict[str, Any]:
    """One STaR iteration's kept rationales: how many, and the lucky-guess shares (`lucky_guess`)."""
    flags = []
    for example in kept:
        problem = env.problem_at(example["index"], split="train")
        final = picked_letter(env.score(problem, example["completion"]))
        flags.append(lucky_guess(example["completion"], problem, final))
    record: dict[str, Any] = {"kept": len(kept)}
    for key in ("names_other", "last_named_other", "names_none"):
        record[f"kept_{key}"] = round(float(np.mean([f[key] for f in flags])), 4) if flags else None
    return record


# ---------------------------------------------------------------------------------------------- held-out


def make_env(setting: Setting) -> Any:
    kwargs = {} if setting.instruction is None else {"instruction": setting.instruction}
    return reasongym.make(setting.env_id, **kwargs)


def exemplars(env: Any) -> tuple[tuple[Any, str], ...]:
    """The few-shot exemplars as (problem, completion in the environment's answer format)."""
    shots = []
    for index, rationale in EXEMPLARS.items():
        problem = env.unwrapped.problem_at(index, split="train")
        shots.append((problem, f"{rationale} The answer is ({problem.answer})."))
    return tuple(shots)


def held_out(model: Any, tokenizer: Any, setting: Setting, *, few_shot: bool = False) -> dict[str, Any]:
    """Greedy answers to the first ``eval_problems`` validation problems: accuracy, per-problem results (for
    paired intervals), readable-letter rate, letter distribution, cost, and the first 10 answers as they are."""
    env = make_env(setting).unwrapped
    shots = exemplars(env) if few_shot else ()
    task = STaRTask(env, tokenizer, split="train", eval_split="validation", shots=shots)
    problems = [env.problem_at(i, split="validation") for i in range(setting.eval_problems)]
    params = SamplingParams(temperature=0.0, max_new_tokens=setting.max_new_tokens)
    was_training, cpu, wall = model.training, time.process_time(), time.perf_counter()
    model.eval()
    sampler = HFGenerator(model, tokenizer, batch_size=setting.generation_batch)
    answers = [group[0] for group in generate_rationales(task, sampler, problems, params)]
    model.train(was_training)
    verdicts = [env.score(problem, answer.text) for problem, answer in zip(problems, answers, strict=True)]
    letters = [picked_letter(verdict) for verdict in verdicts]
    return {
        "accuracy": round(float(np.mean([bool(v.correct) for v in verdicts])), 4),
        "correct": [int(bool(v.correct)) for v in verdicts],
        "extracted_rate": round(sum(letter is not None for letter in letters) / len(letters), 4),
        "finished_rate": round(sum(a.finish_reason == "stop" for a in answers) / len(answers), 4),
        "mean_tokens": round(float(np.mean([len(a.token_ids or ()) for a in answers])), 1),
        "letters": letter_distribution(letters),
        "eval_cpu_seconds": round(time.process_time() - cpu, 1),
        "eval_wall_seconds": round(time.perf_counter() - wall, 1),
        "answers": [
            {"question": p.question, "gold": p.answer, "picked": letter, "text": a.text}
            for p, a, letter in list(zip(problems, answers, letters, strict=True))[:10]
        ],
    }


# ---------------------------------------------------------------------------------------------- arms


def star_problems(setting: Setting) -> int:
    """Training problems per STaR iteration: as many as ``budget_tokens / star_iterations`` tokens sample."""
    per_problem = setting.star_samples * setting.mean_completion_tokens
    return max(2, setting.budget_tokens // (setting.star_iterations * per_problem))


def star_total_sft_steps(setting: Setting) -> int:
    """Optimizer steps of STaR's fine-tunes over ``star_iterations`` iterations (`direct_sft` takes as many)."""
    cfg = preset_configs("default", "star", sft_steps=setting.star_sft_steps)["star"]
    return sum(sft_steps_for_iteration(cfg, i) for i in range(1, setting.star_iterations + 1))


def star_configs(setting: Setting, arm: str, seed: int) -> dict[str, Any]:
    """STaR's configs for ``arm``: the training problems of `star_problems` from `TRAIN_START`, our sizes."""
    return preset_configs(
        "default",
        "star",
        max_steps=1_000,  # the budget ends the run
        group_size=setting.star_samples,
        temperature=setting.star_temperature,
        max_new_tokens=setting.max_new_tokens,
        generation_batch_size=setting.generation_batch,
        engine=setting.engine,
        lr=setting.lr,
        seed=seed,
        autocast=setting.autocast,
        split="train",
        eval_split="validation",
        eval_problems=min(8, setting.eval_problems),  # STaR's own check; the study's is `held_out`
        keep_checkpoints=1,
        progress_bar=False,
        rationalize=arm == "star",
        num_train_problems=star_problems(setting),
        train_start=TRAIN_START,
        sft_steps=setting.star_sft_steps,
    )


def star_arm(run: ArmRun) -> dict[str, Any]:
    """STaR (``star``, ``star_no_rationalization``) or its control (``star_random_filter``) until the budget is
    spent or ``star_iterations`` iterations ran; the tokens sampled, the per-iteration kept shares and their
    diagnostics, 10 kept rationales."""
    setting, seed = run.setting, run.seed
    configs = star_configs(setting, run.arm, seed)
    base_env = make_env(setting)
    engine = following_engine(run.model, run.tokenizer, configs["rollout"], seed, distributed.current())
    inner = engine or HFGenerator(run.model, run.tokenizer, batch_size=setting.generation_batch)
    sampler = RationaleBudget(inner, setting.budget_tokens, setting.budget_chunk)
    env: Any = base_env  # STaR's train accuracy is its iterations' direct share (`star_record`)
    if run.arm == "star_random_filter":
        env = random_filter(base_env, run, configs, getattr(inner, "takes_messages", False))
        sampler.on_sampled = env.plan
    halfway: list[int] = []

    def stop_when_spent(iteration: int, step: str, model: Any) -> bool:
        if step != "generate" or iteration == 1:
            return False
        if sampler.tokens >= setting.budget_tokens // 2 and not halfway:
            halfway.append(sampler.tokens)  # once, between iterations: the half-way evaluation
            run.on_half(sampler.tokens)
        return sampler.spent or iteration > setting.star_iterations  # True: the run ends before it

    with tempfile.TemporaryDirectory(prefix="star-csqa-") as folder:
        train_star(
            configs["star"],
            run.model,
            run.tokenizer,
            env,
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=folder,
            rationale_generator=sampler,
            on_step=stop_when_spent,
        )
        record = star_record(Path(folder), base_env.unwrapped, configs["star"].num_train_problems)
    if isinstance(env, RandomFilter):
        record["random_filter"] = env.log
    return {"sampled_tokens": sampler.tokens, **record}


def random_filter(base_env: Any, run: ArmRun, configs: dict[str, Any], messages: bool) -> RandomFilter:
    """`RandomFilter` over the arm's training problems, keyed by the prompts STaR will sample them with."""
    env = base_env.unwrapped
    cfg = configs["star"]
    task = STaRTask(env, run.tokenizer)
    training = {}
    for index in range(cfg.train_start, cfg.train_start + cfg.num_train_problems):
        problem = env.problem_at(index, split="train")
        prompt = task.messages(problem) if messages else task.prompt(problem)
        training[prompt_key(prompt)] = problem
    return RandomFilter(base_env, run.verdicts, training, seed=run.seed)


def star_record(folder: Path, env: Any, problems: int) -> dict[str, Any]:
    """From a STaR run folder: per completed iteration the share of training problems kept (direct, with the
    hint, in all) and the kept rationales' diagnostics (`kept_diagnostics`); 10 rationales of the last one."""
    rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    iterations = []
    last_kept: list[dict[str, Any]] = []
    previous: set[tuple[int, str]] | None = None
    for row in rows:
        if "star/kept_total" not in row:
            continue
        kept_file = folder / f"iteration-{row['step']:03d}" / "kept.jsonl"
        kept = [json.loads(line) for line in kept_file.read_text().splitlines()] if kept_file.exists() else []
        last_kept = kept or last_kept
        kept_set = {(k["index"], k["completion"]) for k in kept}
        iterations.append(
            {
                "iteration": row["step"],
                # a fixed point: the model rewrote exactly what it was fine-tuned on
                "same_kept_as_previous": previous is not None and kept_set == previous,
                "kept_share": round(row["star/kept_total"] / problems, 4),
                "direct_share": round(row["star/kept_direct"] / problems, 4),
                "rationalized_share": round(row["star/kept_rationalized"] / problems, 4),
                "sft_steps": row["star/sft_steps"],
                **kept_diagnostics(env, kept),
            }
        )
        previous = kept_set
    sample = [{"index": k["index"], "source": k["source"], "text": k["completion"]} for k in last_kept[:10]]
    return {"problems_per_iteration": problems, "iterations": iterations, "kept_sample": sample}


def direct_sft_arm(run: ArmRun) -> dict[str, Any]:
    """Fine-tuning on the gold letters ("The answer is (X)."), one epoch over as many distinct training problems
    as STaR's fine-tunes take optimizer steps of batch 8 in all; samples nothing."""
    setting, tokenizer = run.setting, run.tokenizer
    env = make_env(setting).unwrapped
    steps = star_total_sft_steps(setting)
    pairs = []
    for index in range(TRAIN_START, TRAIN_START + 8 * steps):
        problem = env.problem_at(index, split="train")
        pairs.append((format_prompt(tokenizer, env.messages(problem)), f"The answer is ({problem.answer})."))
    configs = preset_configs(
        "default",
        "sft",
        max_steps=steps,
        lr=setting.lr,
        seed=run.seed,
        batch_size=8,
        autocast=setting.autocast,
        progress_bar=False,
    )

    def halfway(step: int) -> bool:
        if step == steps // 2:
            run.on_half(0)
        return False

    train_sft(configs["sft"], run.model, tokenizer, pairs, run=configs["run"], stop_when=halfway)
    return {"sampled_tokens": 0, "sft_steps": steps, "sft_examples": len(pairs)}


def grpo_arm(run: ArmRun) -> dict[str, Any]:
    """GRPO with a chain of thought: `real_learning.rl_arm` on this environment with this setting's sizes."""
    return {"sampled_tokens": rl_arm(dataclasses.replace(run, arm="grpo"))}


TRAINERS = {
    "direct_sft": direct_sft_arm,
    "star_no_rationalization": star_arm,
    "star": star_arm,
    "star_random_filter": star_arm,
    "grpo_cot": grpo_arm,
}


def run_arm(setting: Setting, arm: str, seed: int) -> dict[str, Any]:
    """Train one arm from the starting model; its held-out curve, final answers, sampled tokens, CPU-seconds."""
    torch.manual_seed(seed)
    model, tokenizer = load(setting, seed)
    curve: list[dict[str, Any]] = []
    started = Snapshot()

    def evaluate_at(tokens: int) -> None:
        result = held_out(model, tokenizer, setting)
        curve.append({"tokens": tokens, **{k: result[k] for k in CURVE_KEYS}})
        print(json.dumps({"arm": arm, "seed": seed, **curve[-1]}), file=sys.stderr, flush=True)

    on_half = evaluate_at if setting.halfway_eval else lambda tokens: None
    run = ArmRun(setting, arm, model, tokenizer, seed, on_half=on_half, verdicts=RunVerdicts(seed))
    trained = TRAINERS[arm](run)
    train_cpu = time.process_time() - started.cpu - sum(point["eval_cpu_seconds"] for point in curve)
    final = held_out(model, tokenizer, setting)
    curve.append({"tokens": trained["sampled_tokens"], **{k: final[k] for k in CURVE_KEYS}})
    return {
        "machine": started.since(),
        "arm": arm,
        "seed": seed,
        "train_cpu_seconds": round(train_cpu, 1),
        "train_episodes": len(run.verdicts.correct),
        "train_correct": round(float(np.mean(run.verdicts.correct)), 4) if run.verdicts.correct else None,
        **trained,
        **{k: v for k, v in final.items() if k not in ("eval_cpu_seconds", "eval_wall_seconds")},
        "curve": curve,
    }


CURVE_KEYS = ("accuracy", "extracted_rate", "eval_cpu_seconds")


def evaluation_arm(setting: Setting, arm: str) -> dict[str, Any]:
    """An evaluation-only arm: the starting model's held-out answers, zero-shot or few-shot."""
    model, tokenizer = load(setting, 0)
    result = held_out(model, tokenizer, setting, few_shot=arm == "few_shot_cot")
    return {"arm": arm, "seed": None, "sampled_tokens": 0, **result}


def smoke(setting: Setting) -> dict[str, Any]:
    """A short STaR run of ``setting`` with its engine (`gpu_check.py --learning`): held-out accuracy before and
    after, the tokens sampled, the kept share of each iteration, the wall time."""
    started = time.perf_counter()
    before = evaluation_arm(setting, "zero_shot_cot")
    after = run_arm(setting, "star", seed=0)
    return {
        "wall_s": round(time.perf_counter() - started, 1),
        "accuracy_before": before["accuracy"],
        "extracted_rate_before": before["extracted_rate"],
        "accuracy_after": after["accuracy"],
        "extracted_rate_after": after["extracted_rate"],
        "sampled_tokens": after["sampled_tokens"],
        "budget_tokens": setting.budget_tokens,
        "kept_share": [iteration["kept_share"] for iteration in after["iterations"]],
    }


# ---------------------------------------------------------------------------------------------- summary


def arm_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One arm over its seeds: held-out accuracy and interval, cost, kept shares, diagnostics, letters."""
    summary = {
        "seeds": len(records),
        "accuracy": round(float(np.mean([r["accuracy"] for r in records])), 4),
        "accuracy_ci95": accuracy_interval(records)["ci95"],
        "accuracy_by_seed": [r["accuracy"] for r in records],
        "extracted_rate": round(float(np.mean([r["extracted_rate"] for r in records])), 4),
        "letters": {
            k: round(float(np.mean([r["letters"][k] for r in records])), 4) for k in records[0]["letters"]
        },
        "sampled_tokens": int(np.mean([r["sampled_tokens"] for r in records])),
    }
    if "train_cpu_seconds" in records[0]:
        summary["train_cpu_seconds"] = round(float(np.mean([r["train_cpu_seconds"] for r in records])), 1)
    if "iterations" in records[0]:  # STaR: per iteration, the mean over seeds that reached it
        depth = max(len(r["iterations"]) for r in records)
        summary["iterations"] = [
            mean_rows([r["iterations"][i] for r in records if len(r["iterations"]) > i]) for i in range(depth)
        ]
    return summary


def mean_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The mean of each numeric field over ``rows`` (fields that are None in some row: over the others)."""
    out: dict[str, Any] = {"seeds": len(rows), "iteration": rows[0].get("iteration")}
    for key in [key for key in rows[0] if key != "iteration"]:
        values = [row[key] for row in rows if row.get(key) is not None]
        out[key] = round(float(np.mean(values)), 4) if values else None
    return out


def load_runs(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Every finished record in ``out/runs``, by arm."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((out / "runs").glob("*.json")):
        record = json.loads(path.read_text())
        runs.setdefault(record["arm"], []).append(record)
    return runs


def summarize(out: Path, setting: Setting) -> dict[str, Any]:
    """Every finished run: per-arm summaries, the comparisons, the table, the rationales, the plot."""
    runs = load_runs(out)
    arms = {arm: arm_summary(records) for arm, records in runs.items()}
    comparisons = {
        f"{arm} - {baseline}": interval(runs, arm, baseline)
        for arm, baseline in COMPARISONS
        if arm in runs and baseline in runs
    }
    summary = {
        "setting": {**dataclasses.asdict(setting), "model": Path(setting.model).name},
        "arms": arms,
        "comparisons": comparisons,
        "one_letter_accuracy": one_letter_accuracy(setting),
    }
    report.write_record(out / "summary.json", summary)
    (out / "table.md").write_text(table(arms, comparisons) + one_letter_line(summary["one_letter_accuracy"]))
    (out / "rationales.md").write_text(rationales(runs))
    plot(runs, out / "accuracy.png", f"{Path(setting.model).name}, CommonsenseQA validation")
    return summary


def one_letter_accuracy(setting: Setting) -> dict[str, float]:
    """The held-out accuracy of always answering one letter: what an arm that collapsed onto a letter scores
    (the gold letters are not uniform: E is the most common)."""
    env = make_env(setting).unwrapped
    gold = [env.problem_at(i, split="validation").answer for i in range(setting.eval_problems)]
    return {letter: round(gold.count(letter) / len(gold), 4) for letter in "ABCDE"}


def one_letter_line(accuracy: dict[str, float]) -> str:
    """`one_letter_accuracy` as a line under the table."""
    each = ", ".join(f"{letter} {value:.3f}" for letter, value in accuracy.items())
    return f"\nAlways answering one letter scores: {each}.\n"


def table(arms: dict[str, Any], comparisons: dict[str, Any]) -> str:
    """The markdown table of the arms (in `ARMS` order) and of the comparisons."""
    header = (
        "arm",
        "seeds",
        "held-out accuracy",
        "95% interval",
        "letter read",
        "sampled tokens",
        "train CPU s",
        "kept share per iteration",
        "kept naming another option (last named)",
        "letters A/B/C/D/E/none",
    )
    rows = [_arm_row(arm, arms[arm]) for arm in ARMS if arm in arms]
    differences = [
        (name, f"{c['difference']:+.3f}", f"[{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}]")
        for name, c in comparisons.items()
    ]
    arms_table = report.table(header, rows, right=(1, 2, 4, 5, 6))
    comparisons_table = report.table(("comparison", "difference", "95% interval"), differences, right=(1,))
    return f"{arms_table}\n\n{comparisons_table}\n"


def _arm_row(arm: str, s: dict[str, Any]) -> tuple[Any, ...]:
    """One arm's cells: accuracy and interval, letters read, cost, kept shares, lucky guesses, letters."""
    iterations = s.get("iterations", [])
    kept = " / ".join(f"{it['kept_share']:.2f}" for it in iterations) or "-"
    lucky = " / ".join(
        f"{it['kept_names_other']:.2f} ({it['kept_last_named_other']:.2f})"
        for it in iterations
        if it["kept_names_other"] is not None
    )
    letters = "/".join(f"{100 * s['letters'][k]:.0f}" for k in ("A", "B", "C", "D", "E", "none"))
    low, high = s["accuracy_ci95"]
    return (
        arm,
        s["seeds"],
        f"{s['accuracy']:.3f}",
        f"[{low:.3f}, {high:.3f}]",
        f"{s['extracted_rate']:.2f}",
        f"{s['sampled_tokens']:,}",
        s.get("train_cpu_seconds", "-"),
        kept,
        lucky or "-",
        letters,
    )


def rationales(runs: dict[str, list[dict[str, Any]]]) -> str:
    """10 held-out answers before training (``zero_shot_cot``) and after (each trained arm's first seed), and
    10 rationales STaR kept in its last iteration: as the model wrote them."""
    parts = ["# Rationales on CommonsenseQA, as the model wrote them\n"]
    for arm in [a for a in ARMS if a in runs]:
        record = min(runs[arm], key=lambda r: r["seed"] or 0)
        title = "before training" if arm == "zero_shot_cot" else f"after, seed {record['seed']}"
        parts.append(f"## {arm} ({title}): held-out answers\n")
        for answer in record["answers"]:
            parts.append(
                f"**Q:** {answer['question']} (gold {answer['gold']}, picked {answer['picked']})\n\n"
                f"```\n{answer['text']}\n```\n"
            )
        if record.get("kept_sample"):
            parts.append(f"## {arm}: rationales kept in its last iteration (seed {record['seed']})\n")
            parts += [
                f"```\n[{k['source']}, train {k['index']}] {k['text']}\n```\n" for k in record["kept_sample"]
            ]
    return "\n".join(parts)


def plot(runs: dict[str, list[dict[str, Any]]], path: Path, title: str) -> None:
    """Held-out accuracy against sampled tokens: each trained arm's mean over seeds and their range, from the
    starting model (``zero_shot_cot``); evaluation-only arms and ``direct_sft`` (samples nothing) as lines."""
    start = runs["zero_shot_cot"][0]["accuracy"] if "zero_shot_cot" in runs else None
    lines, levels = [], [(0.2, "chance (1 in 5)", {"linewidth": 0.8})]
    for position, arm in enumerate(ARMS):
        if arm not in runs:
            continue
        records, style = runs[arm], {"color": f"C{position}"}
        if arm in EVAL_ARMS or arm == "direct_sft":
            mean = float(np.mean([r["accuracy"] for r in records]))
            levels.append((mean, f"{arm} ({len(records)} runs)", {**style, "linestyle": ":"}))
            continue
        points = min(len(r["curve"]) for r in records)
        tokens = [float(np.mean([r["curve"][i]["tokens"] for r in records])) for i in range(points)]
        values = np.array([[r["curve"][i]["accuracy"] for i in range(points)] for r in records])
        if start is not None:
            tokens, values = [0.0, *tokens], np.hstack([np.full((len(records), 1), start), values])
        band = (values.min(axis=0), values.max(axis=0))
        label = f"{arm} ({len(records)} seeds)"
        lines.append(report.Line(tokens, values.mean(axis=0), label, band=band, style=style))
    report.plot(
        path,
        lines,
        xlabel="sampled completion tokens",
        ylabel="held-out greedy accuracy",
        title=f"{title}: mean of seeds and their range",
        levels=levels,
        size=(7, 4.5),
    )


# ---------------------------------------------------------------------------------------------- main


def run_all(out: Path, setting: Setting, arms: list[str], seeds: list[int]) -> None:
    """Every (arm, seed) not yet in ``out/runs`` (an evaluation-only arm once), each written when done."""
    for arm in [a for a in arms if a in EVAL_ARMS]:
        path = out / "runs" / f"{arm}.json"
        if not path.exists():
            report.write_record(path, evaluation_arm(setting, arm))
    for seed in seeds:
        for arm in [a for a in arms if a in TRAINED_ARMS]:
            path = out / "runs" / f"{arm}-s{seed}.json"
            if path.exists():
                continue
            record = report.write_record(path, run_arm(setting, arm, seed))
            print(
                json.dumps({k: v for k, v in record.items() if k not in ("correct", "answers")}), flush=True
            )


def main(argv: list[str] | None = None) -> None:
    """Parse flags; run every (arm, seed) not yet done, then the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="cpu", choices=sorted(PRESETS), help="the sizes (see PRESETS)")
    parser.add_argument(
        "--gpu", action="store_true", help="--preset gpu: one GPU window, offline (the kit's model)"
    )
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--out-dir", default="benchmarks/results/star_csqa")
    args, setting = settings.parse(
        parser, Setting, lambda a: PRESETS["gpu" if a.gpu else a.preset], dry, argv
    )
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    setting = resolve_offline(setting)
    if not setting.model:
        raise SystemExit(
            f"--model is required with this preset (or ${KIT_MODEL_ENV}): a .gguf file, a model folder or a hub id"
        )
    out = Path(args.out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    check_same_setting(out, setting)
    run_all(out, setting, args.arms, args.seeds)
    print(json.dumps(summarize(out, setting)))


if __name__ == "__main__":
    main()
