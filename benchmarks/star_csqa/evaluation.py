"""The environment, its exemplars, and held-out greedy accuracy (zero-shot or few-shot)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import reasongym
from benchmarks.star_csqa.diagnostics import (
    letter_distribution,
    picked_letter,
)
from benchmarks.star_csqa.setting import (
    EXEMPLARS,
    Setting,
)
from reasongym.agents.rationales import STaRTask, generate_rationales
from reasongym.generation import HFGenerator, SamplingParams


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
