"""Does RL from a verifier alone raise held-out accuracy? Warm start, then GRPO, DAPO and a shuffled-reward control.

One run: build the tiny policy, SFT it on reference solutions of Arithmetic-v0 level 1 until a validation
probe reaches ``--target`` (about a third), measure greedy pass@1 on ``--eval-problems`` test problems,
then train three copies of that model from rewards: GRPO, DAPO, and GRPO with the rewards of each batch
randomly permuted (a negative control: the same updates, no information about correctness). Each arm
is evaluated again on the same test problems. Prints a table and, last, one JSON object.

    OMP_NUM_THREADS=1 python benchmarks/bench_learning.py            # about 10 minutes on one core
    OMP_NUM_THREADS=1 python benchmarks/bench_learning.py --steps 10 --eval-problems 50   # quick look
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import time

import torch
from reasongym.agents.recipes import (
    DEMO_DIFFICULTY,
    DEMO_ENV,
    DEMO_MAX_NEW_TOKENS,
    demo_dapo_config,
    demo_grpo_config,
    tiny_policy,
    warm_start,
)

from reasongym.agents.dapo import train_dapo
from reasongym.agents.grpo import train_grpo
from reasongym.agents.runtime import session as rl_loop
from reasongym.agents.runtime.session import greedy_pass_at_1


def evaluate(model: torch.nn.Module, tokenizer: object, problems: int) -> float:
    """Greedy pass@1 on the first ``problems`` test problems of the demo env."""
    return greedy_pass_at_1(
        model, tokenizer, DEMO_ENV, range(problems), split="test", difficulty=DEMO_DIFFICULTY,
        max_new_tokens=DEMO_MAX_NEW_TOKENS,
    )  # fmt: skip


class ShuffledRewards:
    """Context manager: while active, every rollout batch's rewards are randomly permuted (the control)."""

    def __init__(self, seed: int) -> None:
        self.generator = torch.Generator().manual_seed(seed)
        self.original = rl_loop.RLSession.rollouts

    def __enter__(self) -> ShuffledRewards:
        original, generator = self.original, self.generator

        def shuffled(session: rl_loop.RLSession, num_prompts: int) -> object:
            batch = original(session, num_prompts)
            order = torch.randperm(len(batch.rewards), generator=generator).to(batch.rewards.device)
            return dataclasses.replace(batch, rewards=batch.rewards[order])

        rl_loop.RLSession.rollouts = shuffled
        return self

    def __exit__(self, *exc: object) -> None:
        rl_loop.RLSession.rollouts = self.original


def run_arm(
    name: str, model: torch.nn.Module, tokenizer: object, args: argparse.Namespace
) -> dict[str, float]:
    """Train one copy of the warm-started model and evaluate it."""
    started, cpu_started = time.perf_counter(), time.process_time()
    overrides = {"max_steps": args.steps, "lr": args.lr, "seed": args.seed, "progress_bar": False}
    if name == "dapo":
        result = train_dapo(demo_dapo_config(**overrides), model, tokenizer, DEMO_ENV)
    elif name == "shuffled_control":
        with ShuffledRewards(args.seed):
            result = train_grpo(demo_grpo_config(**overrides), model, tokenizer, DEMO_ENV)
    else:
        result = train_grpo(demo_grpo_config(**overrides), model, tokenizer, DEMO_ENV)
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
    parser.add_argument("--eval-problems", type=int, default=200)
    parser.add_argument("--arms", default="grpo,dapo,shuffled_control")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)

    model, tokenizer = tiny_policy(args.seed)
    started = time.perf_counter()
    warm = warm_start(model, tokenizer, target_accuracy=args.target, seed=args.seed)
    sft_seconds = time.perf_counter() - started
    before = evaluate(model, tokenizer, args.eval_problems)
    print(f"warm start: {warm.steps} SFT steps in {sft_seconds:.0f}s, probe {warm.probe_accuracy:.3f}, "
          f"test pass@1 {before:.3f} on {args.eval_problems} problems")  # fmt: skip
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
