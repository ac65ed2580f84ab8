"""Does RL from a verifier alone raise held-out accuracy? Warm start, then GRPO, DAPO and a shuffled-reward control.

One run: build the tiny policy, SFT it (the ``tiny`` preset's SFT) on reference solutions of
Arithmetic-v0 level 1 until a validation probe reaches ``--target`` (about a third), measure greedy
pass@1 on ``--eval-problems`` test problems, then train three copies of that model from rewards (the
``tiny`` preset's GRPO and DAPO): GRPO, DAPO, and GRPO with each reward replaced by one drawn from the run's earlier rewards
(a negative control, ``benchmarks/controls.py``: the same updates and reward rate, no information about
correctness). Each arm is evaluated again
on the same test problems. Prints a table and, last, one JSON object.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_learning            # about 10 minutes on one core
    OMP_NUM_THREADS=1 python -m benchmarks.bench_learning --steps 10 --eval-problems 50   # quick look

Smoke run (about a minute; checks that it runs, measures nothing)::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_learning --steps 2 --eval-problems 8 --target 0.05 --sft-max-steps 40
"""

from __future__ import annotations

import argparse
import copy
import json
import time

import torch

import reasongym
from benchmarks.controls import RecordedVerdicts, RunVerdicts  # noqa: E402
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.dapo import train_dapo
from reasongym.agents.grpo import train_grpo
from reasongym.agents.warm_start import warm_start
from reasongym.evaluation.runner import greedy_pass_at_1
from reasongym.generation import HFGenerator
from reasongym.policy.tiny import tiny_policy

ENV = "reasongym/Arithmetic-v0"
DIFFICULTY = 1
"""Level 1: 2-digit addition with a column-by-column solution."""
MAX_NEW_TOKENS = 72
"""Longest completion (the ``tiny`` preset's; level-1 solutions take 40-56 characters plus EOS)."""


def evaluate(model: torch.nn.Module, tokenizer: object, problems: int) -> float:
    """Greedy pass@1 on the first ``problems`` test problems of the environment."""
    return greedy_pass_at_1(
        HFGenerator(model, tokenizer),
        ENV,
        tokenizer=tokenizer,
        split="test",
        num_problems=problems,
        difficulty=DIFFICULTY,
        max_new_tokens=MAX_NEW_TOKENS,
    )


def run_arm(
    name: str, model: torch.nn.Module, tokenizer: object, args: argparse.Namespace
) -> dict[str, float]:
    """Train one copy of the warm-started model and evaluate it."""
    started, cpu_started = time.perf_counter(), time.process_time()
    algo = "dapo" if name == "dapo" else "grpo"
    configs = preset_configs(
        "tiny",
        algo,
        max_steps=args.steps,
        lr=args.lr,
        seed=args.seed,
        difficulty=DIFFICULTY,
        progress_bar=False,
    )
    train = train_dapo if algo == "dapo" else train_grpo
    # Every arm through the same wrapper; the control's verdicts are drawn from earlier ones (controls.py).
    env = RecordedVerdicts(reasongym.make(ENV), RunVerdicts(args.seed), shuffle=name == "shuffled_control")
    result = train(configs[algo], model, tokenizer, env, run=configs["run"], rollout=configs["rollout"])
    rl_seconds, rl_cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    history = result.history
    return {
        "rl_seconds": rl_seconds,
        "rl_cpu_seconds": rl_cpu_seconds,
        "after": evaluate(model, tokenizer, args.eval_problems),
        "train_acc_first": history[0]["rollout/correct_rate"],
        "train_acc_last5": sum(h["rollout/correct_rate"] for h in history[-5:]) / min(5, len(history)),
        "entropy_last": history[-1].get("train/entropy", float("nan")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--steps", type=int, default=60, help="RL steps per arm (16 prompts x 8 samples each)"
    )
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--target", type=float, default=0.3, help="warm-start probe accuracy to stop SFT at")
    parser.add_argument(
        "--sft-max-steps", type=int, default=800, help="most warm-start SFT steps (the schedule's length)"
    )
    parser.add_argument("--eval-problems", type=int, default=200)
    parser.add_argument("--arms", default="grpo,dapo,shuffled_control")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)

    model, tokenizer = tiny_policy(args.seed)
    started = time.perf_counter()
    sft_run = preset_configs(
        "tiny", "sft", max_steps=args.sft_max_steps, seed=args.seed, difficulty=DIFFICULTY, progress_bar=False
    )["run"]
    warm = warm_start(model, tokenizer, ENV, target_accuracy=args.target, run=sft_run)
    sft_seconds = time.perf_counter() - started
    before = evaluate(model, tokenizer, args.eval_problems)
    print(
        f"warm start: {warm.steps} SFT steps in {sft_seconds:.0f}s, probe {warm.probe_accuracy:.3f}, "
        f"test pass@1 {before:.3f} on {args.eval_problems} problems"
    )
    results: dict[str, dict[str, float]] = {}
    for arm in args.arms.split(","):
        results[arm] = run_arm(arm, copy.deepcopy(model), tokenizer, args)
        r = results[arm]
        print(
            f"{arm:>17}: test pass@1 {before:.3f} -> {r['after']:.3f} ({100 * (r['after'] - before):+.1f} pts) "
            f"in {r['rl_seconds']:.0f}s of RL ({r['rl_cpu_seconds']:.0f}s CPU); train acc {r['train_acc_first']:.3f} -> {r['train_acc_last5']:.3f}"
        )
    summary = {
        "before": before,
        "sft_steps": warm.steps,
        **{f"{arm}_after": r["after"] for arm, r in results.items()},
        **{f"{arm}_gain_pts": 100 * (r["after"] - before) for arm, r in results.items()},
        **{f"{arm}_rl_seconds": r["rl_seconds"] for arm, r in results.items()},
        **{f"{arm}_rl_cpu_seconds": r["rl_cpu_seconds"] for arm, r in results.items()},
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
