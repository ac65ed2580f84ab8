"""Can RL move a real model here? GRPO with LoRA on SmolLM2-135M-Instruct, against a shuffled-reward control.

Setup (one, fixed before running): Arithmetic-v0 level 1, where SmolLM2 starts above zero; completions of at
most ``--max-new-tokens`` (128: SmolLM2 writes its answer last, and 64 tokens cut most answers off); the
reward is 1 for a correct answer plus ``--format-bonus`` (0.2) for a ``\\boxed{}`` answer (the format the
prompt asks for, and which SmolLM2 rarely uses), so that a group where no answer is right still tells
formatted completions from the rest. GRPO with LoRA r16 (alpha 32) on the
attention and MLP projections, lr 5e-5, 2 prompts x 8 samples per step, KL 0.04 to the base (the model
with its adapters off), until ``--budget`` CPU seconds of the process are spent (checked before each
rollout batch, so the last step finishes). The control trains the same way, but each episode's reward is
drawn from the rewards of earlier episodes (``benchmarks/controls.py``: the same distribution, no relation
to the completion).

Before and after, greedy pass@1, boxed-answer rate and extracted-answer rate (the verifier falls back to the
last number) on the first
``--eval-problems`` problems of the test split at level 1. Each phase prints a JSON line as it ends, so a
run cut short still reports what it measured; the last line is one JSON object with everything.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.real_learning.first_attempt --model outputs/smollm2/model --budget 1200
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gymnasium  # noqa: E402
import torch  # noqa: E402

import reasongym  # noqa: E402
from benchmarks.controls import RecordedVerdicts, RunVerdicts  # noqa: E402
from reasongym.agents import preset_configs, train_grpo  # noqa: E402
from reasongym.agents.runtime.hooks import StepHook, StepView  # noqa: E402
from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.loading import load_policy  # noqa: E402
from reasongym.policy.lora import merge  # noqa: E402
from reasongym.rollouts.batch import collect_rollouts  # noqa: E402

ENV = "reasongym/Arithmetic-v0"
EPISODES: list[tuple[bool, bool]] = []
"""(correct, boxed) of every finished training episode, in order: module state, because the trainer steps
pickled copies of the environment (`EnvPool`), so an attribute of the wrapper it was given stays empty."""


class CpuBudget(StepHook):
    """A step hook: before each step, stops training once ``seconds`` of process CPU are spent (the last step
    finishes)."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.started = seconds, time.process_time()

    def before_sampling(self, view: StepView) -> bool:
        return time.process_time() - self.started >= self.seconds


class FormatBonus(gymnasium.Wrapper):
    """Adds ``bonus`` to a final reward whose completion holds a ``\\boxed{}`` answer; records each episode."""

    def __init__(self, env: gymnasium.Env, bonus: float) -> None:
        super().__init__(env)
        self.bonus = bonus

    def step(self, action: str) -> tuple:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            boxed = "\\boxed{" in action
            reward += self.bonus * boxed
            EPISODES.append((bool(info.get("correct")), boxed))
        return observation, reward, terminated, truncated, info


def evaluate(model, tokenizer, problems: int, max_new_tokens: int) -> dict[str, float]:
    """Greedy pass@1 and answer-format rates on the first ``problems`` test problems of level 1."""
    params = SamplingParams(temperature=0.0, max_new_tokens=max_new_tokens)
    started = time.process_time()
    batch = collect_rollouts(
        ENV,
        HFGenerator(model, tokenizer),
        tokenizer,
        list(range(problems)),
        params=params,
        split="test",
        difficulty=1,
    )
    return {
        "accuracy": round(float(batch.correct.float().mean()), 4),
        "boxed_rate": round(sum("\\boxed{" in text for text in batch.texts) / problems, 4),
        "extracted_rate": round(sum(e is not None for e in batch.extracted) / problems, 4),
        "truncated_rate": round(float(batch.truncated.float().mean()), 4),
        "mean_length": round(float(batch.lengths.float().mean()), 1),
        "cpu_seconds": round(time.process_time() - started, 1),
    }


def train(model, tokenizer, args: argparse.Namespace, shuffled: bool) -> dict[str, object]:
    """GRPO with LoRA until ``args.budget`` CPU seconds are spent; the reward curve's start and end."""
    EPISODES.clear()
    env = FormatBonus(reasongym.make(ENV), args.format_bonus)
    # Both arms through the same wrapper; the control's rewards (bonus included) are drawn from earlier ones.
    wrapped = RecordedVerdicts(env, RunVerdicts(args.seed), shuffle=shuffled)
    configs = preset_configs(
        "default",
        "grpo",
        max_steps=100_000,
        num_prompts=2,
        group_size=8,
        max_new_tokens=args.max_new_tokens,
        difficulty=1,
        lr=5e-5,
        kl="k3_loss",
        kl_coef=0.04,
        mu=1,
        progress_bar=False,
        samples_every=0,
        seed=args.seed,
        lora={"rank": 16, "alpha": 32.0},
        gradient_checkpointing=False,
        micro_batch_size=None,  # memory is not the limit here; CPU time is
    )
    budget = CpuBudget(args.budget)
    started = time.perf_counter()
    train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        wrapped,
        run=configs["run"],
        rollout=configs["rollout"],
        hooks=[budget],
    )
    per_step = [EPISODES[i : i + 16] for i in range(0, len(EPISODES), 16)]
    per_step = [rows for rows in per_step if len(rows) == 16]  # steps whose update ran
    quarter = max(1, len(per_step) // 4)

    def rate(steps: list, column: int) -> float:
        rows = [row for step in steps for row in step]
        return round(sum(row[column] for row in rows) / max(1, len(rows)), 4)

    return {
        "steps": len(per_step),
        "cpu_seconds": round(time.process_time() - budget.started, 1),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "train_correct_first_quarter": rate(per_step[:quarter], 0),
        "train_correct_last_quarter": rate(per_step[-quarter:], 0),
        "train_boxed_first_quarter": rate(per_step[:quarter], 1),
        "train_boxed_last_quarter": rate(per_step[-quarter:], 1),
        "train_correct_per_step": [rate([step], 0) for step in per_step],
        "train_boxed_per_step": [rate([step], 1) for step in per_step],
    }


def main() -> None:
    """Evaluate, train (RL, then the control from the same start), evaluate each; print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a .gguf file or a model folder")
    parser.add_argument("--budget", type=float, default=1200.0, help="CPU seconds of training per arm")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--format-bonus", type=float, default=0.2)
    parser.add_argument("--eval-problems", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arms", nargs="+", default=["rl", "shuffled_control"], help="which arms to run")
    parser.add_argument("--skip-before", action="store_true", help="no evaluation before training")
    args = parser.parse_args()
    torch.set_num_threads(1)
    # the model by its file or folder name: results are kept in the repository, machine paths are not
    results: dict[str, object] = {"settings": {**vars(args), "model": Path(args.model).name}}
    model, tokenizer = load_policy(args.model)
    if not args.skip_before:
        results["before"] = evaluate(model, tokenizer, args.eval_problems, args.max_new_tokens)
        print(json.dumps({"before": results["before"]}), file=sys.stderr, flush=True)
    for name in args.arms:
        shuffled = name == "shuffled_control"
        model, tokenizer = load_policy(args.model)
        run = train(model, tokenizer, args, shuffled)
        run["after"] = evaluate(merge(model), tokenizer, args.eval_problems, args.max_new_tokens)
        results[name] = run
        print(json.dumps({name: run}), file=sys.stderr, flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
