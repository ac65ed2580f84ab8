"""Seconds per optimizer step: our GRPO and DAPO against TRL's GRPOTrainer, and against a floor, on CPU.

Same tiny Llama-style model (char tokenizer), same prompts (Arithmetic-v0 level 1), same group size,
completion length and sampling temperature, one torch thread, no KL (TRL's default ``beta=0``), one
optimizer step per generation, all three trainers in one process. DAPO runs without dynamic sampling
so that every trainer does the same work per step. The floor is what a step cannot avoid: sampling the
batch's completions with our sampler plus one forward+backward over the batch's tokens.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_grpo [--steps 12 --warmup 4 --prompts 8 --group 8 --tokens 32]

A step's time is CPU-seconds of this process (``time.process_time``, every thread of it): on a shared
machine wall time measures the other jobs as much as the trainer (three runs on 2 cores under a load of 5-8
gave TRL 0.66 to 4.4 s/step), while with one torch thread the CPU time of a step is what one free core
would take. Wall seconds are reported beside them (``*_wall``).

Prints per-trainer timings, one line per trainer with where our step's time goes (sample, score,
reference, forward-backward, optimizer, housekeeping: the next lost tenth of a second shows there), and
last one JSON object with ``ratio`` (our GRPO CPU-s/step over TRL's), ``ratio_dapo``, ``floor_ratio`` (our
GRPO over the floor), the same three from wall time, and GRPO's phases.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from typing import Any

import torch

from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.dapo import DAPOConfig, train_dapo
from reasongym.agents.grpo import GRPOConfig, train_grpo
from reasongym.agents.runtime.hooks import StepHook, StepView
from reasongym.policy.tiny import tiny_policy

ENV = "reasongym/Arithmetic-v0"


def _stamp() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def _durations(stamps: list[tuple[float, float]], skip: int) -> dict[str, float]:
    """Median CPU and wall seconds between consecutive stamps, after the first ``skip`` intervals."""
    cpu = [b[0] - a[0] for a, b in zip(stamps[:-1], stamps[1:], strict=True)][skip:]
    wall = [b[1] - a[1] for a, b in zip(stamps[:-1], stamps[1:], strict=True)][skip:]
    return {"step_s": statistics.median(cpu), "step_wall_s": statistics.median(wall)}


class StepClock(StepHook):
    """A step hook: stamps CPU and wall time at the start of each RL step and at the end of the last."""

    def __init__(self) -> None:
        self.stamps: list[tuple[float, float]] = []

    def before_sampling(self, view: StepView) -> bool:
        self.stamps.append(_stamp())
        return False

    def at_end(self, view: StepView) -> None:
        self.stamps.append(_stamp())


PHASES = {
    "sample": ("generate",),
    "score": ("verify", "old_logp"),
    "reference": ("reference",),
    "forward_backward": ("forward_backward",),
    "optimizer": ("optimizer",),
    "housekeeping": ("housekeeping",),
}
"""The phases of one of our steps, by the trainer's ``perf/<key>_s`` metrics they add up."""


def phase_line(name: str, result: dict[str, float]) -> str:
    """One line with where a step's wall time goes, so the next lost tenth of a second shows."""
    parts = " | ".join(f"{phase} {result[f'{phase}_s']:.3f}" for phase in PHASES)
    return f"{name} phases (wall s/step): {parts} | total {result['step_wall_s']:.3f}"


def ours(algo: str, args: argparse.Namespace) -> dict[str, float]:
    """Median seconds per step of our trainer (after ``--warmup`` steps) and its phase split."""
    model, tokenizer = tiny_policy(0)
    run = RunConfig(
        max_steps=args.warmup + args.steps, lr=1e-4, difficulty=1, progress_bar=False, samples_every=0
    )
    rollout = RolloutConfig(num_prompts=args.prompts, group_size=args.group, max_new_tokens=args.tokens)
    clock = StepClock()
    if algo == "grpo":
        config = GRPOConfig(kl="off", mu=1)
        history = train_grpo(config, model, tokenizer, ENV, run=run, rollout=rollout, hooks=[clock]).history
    else:
        cfg = DAPOConfig(dynamic_sampling=False, overlong_buffer=args.tokens // 4, mu=1)
        history = train_dapo(cfg, model, tokenizer, ENV, run=run, rollout=rollout, hooks=[clock]).history
    timed = history[args.warmup :]
    out = _durations(clock.stamps, args.warmup)
    for phase, keys in PHASES.items():  # wall seconds, from the trainer's own perf/ metrics
        out[f"{phase}_s"] = statistics.median(sum(h.get(f"perf/{key}_s", 0.0) for key in keys) for h in timed)
    out["completion_tokens"] = (
        statistics.mean(h["rollout/len_mean"] for h in timed) * args.prompts * args.group
    )
    return out


def trl_step_seconds(args: argparse.Namespace) -> dict[str, float]:
    """Median seconds per optimizer step of TRL's GRPOTrainer on the same model and prompts."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOTrainer

    import reasongym
    from reasongym.verifiers import verify

    model, tokenizer = tiny_policy(0)
    env = reasongym.make(ENV, difficulty=1).unwrapped
    problems = [env.problem_at(i, split="train") for i in range(args.prompts * (args.warmup + args.steps))]
    dataset = Dataset.from_dict(
        {"prompt": [env.prompt(p) for p in problems], "gold": [p.answer for p in problems]}
    )

    def correctness(completions: list[str], gold: list[str], **_: object) -> list[float]:
        return [float(bool(verify(c, g, "integer").correct)) for c, g in zip(completions, gold, strict=True)]

    stamps: list[tuple[float, float]] = []
    lengths: list[float] = []

    class Clock(TrainerCallback):
        def on_step_end(self, *a: object, **k: object) -> None:
            stamps.append(_stamp())

        def on_log(
            self, _args: object, _state: object, _control: object, logs: dict | None = None, **k: object
        ) -> None:
            if logs and "completions/mean_length" in logs:
                lengths.append(logs["completions/mean_length"])

    with tempfile.TemporaryDirectory() as out:
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=correctness,
            args=_trl_config(args, out),
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[Clock()],
        )
        stamps.append(_stamp())
        trainer.train()
    mean_len = statistics.mean(lengths[args.warmup :]) if len(lengths) > args.warmup else float("nan")
    return {**_durations(stamps, args.warmup), "completion_tokens": mean_len * args.prompts * args.group}


def _trl_config(args: argparse.Namespace, output_dir: str) -> Any:
    """TRL's GRPOConfig for the same batch as ours: no KL, one update per batch, CPU, nothing saved."""
    from trl import GRPOConfig as TRLConfig

    return TRLConfig(
        output_dir=output_dir,
        per_device_train_batch_size=args.prompts * args.group,
        num_generations=args.group,
        max_completion_length=args.tokens,
        gradient_accumulation_steps=1,
        steps_per_generation=1,
        max_steps=args.warmup + args.steps,
        learning_rate=1e-4,
        beta=0.0,
        loss_type="grpo",
        use_cpu=True,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        temperature=1.0,
        disable_tqdm=True,
        seed=0,
        dataloader_num_workers=0,
        bf16=False,
        fp16=False,
    )


def floor_seconds(args: argparse.Namespace) -> dict[str, float]:
    """Sampling the completions with our sampler + one forward+backward over the batch's tokens."""
    import reasongym
    from reasongym.agents.common import token_logprobs
    from reasongym.generation import HFGenerator, SamplingParams

    model, tokenizer = tiny_policy(0)
    env = reasongym.make(ENV, difficulty=1).unwrapped
    prompts = [env.prompt(env.problem_at(i, split="train")) for i in range(args.prompts)]
    generator = HFGenerator(model, tokenizer)
    stamps: list[list[tuple[float, float]]] = []
    for seed in range(args.warmup + args.steps):
        params = SamplingParams(max_new_tokens=args.tokens, temperature=1.0, n=args.group, seed=seed)
        started = _stamp()
        batch = generator.generate_batch(prompts, params)
        sampled = _stamp()
        logp, _ = token_logprobs(model, batch.input_ids, batch.attention_mask, batch.completion_start)
        (logp * batch.completion_mask).sum().backward()
        model.zero_grad(set_to_none=True)
        stamps.append([started, sampled, _stamp()])
    timed = stamps[args.warmup :]
    sample = statistics.median(s[1][0] - s[0][0] for s in timed)
    backward = statistics.median(s[2][0] - s[1][0] for s in timed)
    wall = statistics.median(s[1][1] - s[0][1] for s in timed) + statistics.median(
        s[2][1] - s[1][1] for s in timed
    )
    return {
        "step_s": sample + backward,
        "step_wall_s": wall,
        "sample_s": sample,
        "forward_backward_s": backward,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="timed steps per trainer")
    # The first steps of a run grow the heap until the trimmer settles (3 trims on this model): not the
    # steady state a step is measured in. Every trainer gets the same warmup.
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    params = sum(p.numel() for p in tiny_policy(0)[0].parameters())
    print(
        f"model: {params / 1e6:.2f}M params; batch {args.prompts} prompts x {args.group} samples x "
        f"{args.tokens} tokens; 1 thread"
    )
    results = {
        "floor": floor_seconds(args),
        "grpo": ours("grpo", args),
        "dapo": ours("dapo", args),
    }
    try:
        results["trl"] = trl_step_seconds(args)
    except ImportError as error:
        print(f"TRL not available ({error}); ratios vs TRL are null")
    for name, r in results.items():
        print(f"{name:>6}: " + ", ".join(f"{k} {v:.4f}" for k, v in r.items()))
    for name in ("grpo", "dapo"):
        print(phase_line(name, results[name]))
    summary: dict[str, float | None] = {}
    for clock, suffix in (("step_s", ""), ("step_wall_s", "_wall")):
        trl = results.get("trl", {}).get(clock)
        summary.update(
            {
                f"ratio{suffix}": results["grpo"][clock] / trl if trl else None,
                f"ratio_dapo{suffix}": results["dapo"][clock] / trl if trl else None,
                f"floor_ratio{suffix}": results["grpo"][clock] / results["floor"][clock],
                f"grpo_s_per_step{suffix}": results["grpo"][clock],
                f"dapo_s_per_step{suffix}": results["dapo"][clock],
                f"trl_s_per_step{suffix}": trl,
                f"floor_s{suffix}": results["floor"][clock],
            }
        )
    summary.update({f"grpo_{phase}_wall_s": results["grpo"][f"{phase}_s"] for phase in PHASES})
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
