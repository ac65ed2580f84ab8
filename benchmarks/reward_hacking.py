"""The reward-hacking trap in numbers: a reward that pays for a readable answer, right or wrong, rises; accuracy does not.

GRPO (the ``tiny`` preset) trains the tiny model from its random initialization on Arithmetic-v0 level 1 with the
environment's reward set to its format term alone (``correct_reward=0``, ``format_reward=1``: 1 whenever a final
answer can be read, right or wrong). Correctness is still graded and logged every step (``reward/correctness``,
the fraction of sampled completions that are right), beside ``reward/format``, so the trap shows where a user
would look for it: the reward climbs, correctness stays at zero. Greedy pass@1 on held-out test problems is
measured before and after.

    OMP_NUM_THREADS=1 python -m benchmarks.reward_hacking                 # the README's figures
    OMP_NUM_THREADS=1 python -m benchmarks.reward_hacking --steps 4 --eval-problems 8   # smoke run

Prints one line per logged step, then one JSON object: the means of the first and last ``--window`` steps.
"""

from __future__ import annotations

import argparse
import json
import time

import reasongym
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.grpo import train_grpo
from reasongym.evaluation.runner import greedy_pass_at_1
from reasongym.generation import HFGenerator
from reasongym.generation.base import SamplingParams
from reasongym.policy.loading import format_prompt
from reasongym.policy.tiny import tiny_policy

ENV = "reasongym/Arithmetic-v0"
DIFFICULTY = 1
"""Level 1: 2-digit addition."""
FORMAT_ONLY = {"difficulty": DIFFICULTY, "correct_reward": 0.0, "format_reward": 1.0}
"""The trap: the environment pays for a readable final answer and nothing for a right one."""


def held_out_accuracy(model: object, tokenizer: object, problems: int, max_new_tokens: int) -> float:
    """Greedy pass@1 on the first ``problems`` test problems."""
    return greedy_pass_at_1(
        HFGenerator(model, tokenizer),
        ENV,
        tokenizer=tokenizer,
        split="test",
        num_problems=problems,
        difficulty=DIFFICULTY,
        max_new_tokens=max_new_tokens,
    )


def what_it_writes(model: object, tokenizer: object, max_new_tokens: int) -> list[tuple[str, str]]:
    """Greedy completions of three test problems and their verdicts: what the reward taught."""
    env = reasongym.make(ENV, **FORMAT_ONLY).unwrapped
    problems = [env.source.problem("test", index, DIFFICULTY) for index in range(3)]
    prompts = [format_prompt(tokenizer, env.messages(problem)) for problem in problems]
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0)
    texts = [group[0].text for group in HFGenerator(model, tokenizer).generate(prompts, params)]
    return [(text, env.score(p, text).outcome.value) for p, text in zip(problems, texts, strict=True)]


def window_means(history: list[dict[str, float]], rows: slice) -> dict[str, float]:
    """The mean of each watched metric over ``history[rows]``."""
    chosen = history[rows]
    keys = ("rollout/reward_mean", "reward/format", "reward/correctness")
    return {key: round(sum(row[key] for row in chosen) / len(chosen), 3) for key in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--window", type=int, default=5, help="steps averaged at the start and at the end")
    parser.add_argument("--eval-problems", type=int, default=100)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model, tokenizer = tiny_policy(args.seed)
    before = held_out_accuracy(model, tokenizer, args.eval_problems, args.max_new_tokens)
    configs = preset_configs(
        "tiny",
        "grpo",
        max_steps=args.steps,
        lr=args.lr,
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
        eval_every=0,
        progress_bar=False,
    )
    started = time.perf_counter()
    result = train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        reasongym.make(ENV, **FORMAT_ONLY),
        run=configs["run"],
        rollout=configs["rollout"],
    )
    seconds = time.perf_counter() - started
    after = held_out_accuracy(model, tokenizer, args.eval_problems, args.max_new_tokens)
    history = list(result.history)
    for step, row in enumerate(history, 1):
        print(
            f"step {step:3d}  reward {row['rollout/reward_mean']:.3f}  format {row['reward/format']:.3f}  "
            f"correctness {row['reward/correctness']:.3f}"
        )
    for text, outcome in what_it_writes(model, tokenizer, args.max_new_tokens):
        print(f"greedy  {text!r}  graded {outcome}")
    window = min(args.window, len(history))
    summary = {
        "env": ENV,
        "options": FORMAT_ONLY,
        "steps": len(history),
        "first_steps": window_means(history, slice(0, window)),
        "last_steps": window_means(history, slice(-window, None)),
        "held_out_pass@1_before": before,
        "held_out_pass@1_after": after,
        "eval_problems": args.eval_problems,
        "train_seconds": round(seconds, 1),
        "seed": args.seed,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
