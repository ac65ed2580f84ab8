"""Can RL move a real model here? GRPO with LoRA on SmolLM2-135M-Instruct, against a shuffled-reward control.

Setup (one, fixed before running): Arithmetic-v0 level 1, where SmolLM2 starts above zero; completions of at
most ``--max-new-tokens`` (128: SmolLM2 writes its answer last, and 64 tokens cut most answers off); the
reward is 1 for a correct answer plus ``--format-bonus`` (0.2) for any boxed answer, so that a group where
no answer is right still tells formatted completions from the rest. GRPO with LoRA r16 (alpha 32) on the
attention and MLP projections, lr 5e-5, 2 prompts x 8 samples per step, KL 0.04 to the base (the model
with its adapters off), ``--steps`` steps. The control trains the same way, but each episode's reward is
drawn from the rewards of earlier episodes (the same distribution, no relation to the completion).

Before and after, greedy pass@1 and answer-format rate (a boxed answer was found) on the first
``--eval-problems`` problems of the test split at level 1. Each phase prints a JSON line as it ends, so a
run cut short still reports what it measured; the last line is one JSON object with everything.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python benchmarks/rl_real_model.py --model outputs/smollm2/model --steps 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import deque

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gymnasium  # noqa: E402
import torch  # noqa: E402

import reasongym  # noqa: E402
from reasongym.agents import preset_configs, train_grpo  # noqa: E402
from reasongym.agents.runtime.rollout import collect_rollouts  # noqa: E402
from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.lora import merge  # noqa: E402
from reasongym.models import load_policy  # noqa: E402

ENV = "reasongym/Arithmetic-v0"


class FormatBonus(gymnasium.Wrapper):
    """Adds ``bonus`` to the reward of a final step whose answer the verifier could extract."""

    def __init__(self, env: gymnasium.Env, bonus: float) -> None:
        super().__init__(env)
        self.bonus = bonus

    def step(self, action: str) -> tuple:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if (terminated or truncated) and info.get("extracted") is not None:
            reward += self.bonus
        return observation, reward, terminated, truncated, info


class ShuffledReward(gymnasium.Wrapper):
    """Replaces each final reward by one drawn from the rewards of earlier episodes (seeded)."""

    def __init__(self, env: gymnasium.Env, seed: int = 0) -> None:
        super().__init__(env)
        self.seen: deque[float] = deque(maxlen=256)
        self.rng = random.Random(seed)

    def step(self, action: str) -> tuple:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self.seen.append(float(reward))
            reward = self.rng.choice(self.seen)
        return observation, reward, terminated, truncated, info


def evaluate(model, tokenizer, problems: int, max_new_tokens: int) -> dict[str, float]:
    """Greedy pass@1 and answer-format rate on the first ``problems`` test problems of level 1."""
    params = SamplingParams(temperature=0.0, max_new_tokens=max_new_tokens)
    batch = collect_rollouts(
        ENV, HFGenerator(model, tokenizer), tokenizer, list(range(problems)), group_size=1, params=params,
        split="test", difficulty=1,
    )  # fmt: skip
    return {
        "accuracy": round(float(batch.correct.float().mean()), 4),
        "format_rate": round(sum(e is not None for e in batch.extracted) / problems, 4),
        "mean_length": round(float(batch.lengths.float().mean()), 1),
    }


def train(model, tokenizer, args: argparse.Namespace, shuffled: bool) -> dict[str, object]:
    """GRPO with LoRA for ``args.steps`` steps; the reward curve's start and end, and the seconds taken."""
    env = FormatBonus(reasongym.make(ENV), args.format_bonus)
    env = ShuffledReward(env, seed=args.seed) if shuffled else env
    configs = preset_configs(
        "default", "grpo", max_steps=args.steps, num_prompts=2, group_size=8, max_new_tokens=args.max_new_tokens,
        difficulty=1, lr=5e-5, kl="k3_loss", kl_coef=0.04, mu=1, progress_bar=False, samples_every=0,
        seed=args.seed, lora={"rank": 16, "alpha": 32.0},
    )  # fmt: skip
    started = time.perf_counter()
    result = train_grpo(
        configs["grpo"], model, tokenizer, env, run=configs["run"], rollout=configs["rollout"]
    )
    correct = [row["rollout/correct_rate"] for row in result.history]
    quarter = max(1, len(correct) // 4)
    return {
        "steps": result.steps,
        "seconds": round(time.perf_counter() - started, 1),
        "train_correct_first_quarter": round(sum(correct[:quarter]) / quarter, 4),
        "train_correct_last_quarter": round(sum(correct[-quarter:]) / quarter, 4),
    }


def main() -> None:
    """Evaluate, train (RL, then the control from the same start), evaluate each; print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a .gguf file or a model folder")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--format-bonus", type=float, default=0.2)
    parser.add_argument("--eval-problems", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    results: dict[str, object] = {"settings": vars(args)}
    model, tokenizer = load_policy(args.model)
    results["before"] = evaluate(model, tokenizer, args.eval_problems, args.max_new_tokens)
    print(json.dumps({"before": results["before"]}), file=sys.stderr, flush=True)
    for name, shuffled in (("rl", False), ("shuffled_control", True)):
        model, tokenizer = load_policy(args.model)
        run = train(model, tokenizer, args, shuffled)
        run["after"] = evaluate(merge(model), tokenizer, args.eval_problems, args.max_new_tokens)
        results[name] = run
        print(json.dumps({name: run}), file=sys.stderr, flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
