"""Training throughput with the sampler ahead of the trainer: GRPO on the tiny model at max_staleness K = 0
(the synchronous loop), 1 and 2, in one sitting (issue 38, item 5).

Each K trains the `bench_grpo` setting (the ``tiny`` preset: 16 prompts x 8 samples of up to 72 tokens, from
the same random-init tiny model) for ``--steps`` steps with one torch thread per process (the trainer's, and
the sampler's with K >= 1). Throughput counts the steps after the first (the sampler's start and the first
batch, which nothing overlaps, are left out): optimizer steps and sampled tokens per wall second, and each
phase's time: the trainer's waiting for the sampler (``async/trainer_wait_s``), the sampler's waiting for
weights (``async/sampler_wait_s``), and the update (``perf/train_s``). Last line: one JSON object.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_async.py`` (``--steps 6`` for a quick look).
TRL's GRPOTrainer is not run here (its asynchronous trainer needs a vLLM server).
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

from reasongym.agents.algorithms import preset_configs  # noqa: E402
from reasongym.agents.grpo import train_grpo  # noqa: E402
from reasongym.policy.tiny import tiny_policy  # noqa: E402

ENV = "reasongym/Arithmetic-v0"


def measure(staleness: int, steps: int) -> dict[str, float]:
    """Train ``steps`` GRPO steps at ``max_staleness`` = ``staleness``; throughput after the first step."""
    configs = preset_configs(
        "tiny", "grpo", max_steps=steps, eval_every=0, progress_bar=False, max_staleness=staleness
    )
    model, tokenizer = tiny_policy(0)
    started = time.perf_counter()
    history = train_grpo(
        configs["grpo"], model, tokenizer, ENV, run=configs["run"], rollout=configs["rollout"]
    ).history
    total_s = time.perf_counter() - started
    timed = history[1:]
    wall = sum(h["perf/step_s"] for h in timed)
    tokens = sum(h["perf/tokens_per_s"] * h["perf/step_s"] for h in timed)
    return {
        "steps_per_s": len(timed) / wall,
        "tokens_per_s": tokens / wall,
        "step_s": wall / len(timed),
        "train_s": sum(h["perf/train_s"] for h in timed) / len(timed),
        "trainer_wait_s": sum(h.get("async/trainer_wait_s", 0.0) for h in timed) / len(timed),
        "sampler_wait_s": sum(h.get("async/sampler_wait_s", 0.0) for h in timed) / len(timed),
        "generate_s": sum(h.get("perf/generate_s", 0.0) for h in timed) / len(timed),
        "staleness_mean": sum(h.get("async/staleness", 0.0) for h in timed) / len(timed),
        "whole_run_s": total_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = {}
    for staleness in (0, 1, 2):
        results[staleness] = measure(staleness, args.steps)
        row = results[staleness]
        print(
            f"K={staleness}: {row['steps_per_s']:.3f} steps/s, {row['tokens_per_s']:.0f} tokens/s, step "
            f"{row['step_s']:.2f} s (update {row['train_s']:.2f} s, trainer waits {row['trainer_wait_s']:.2f} s, "
            f"sampler waits {row['sampler_wait_s']:.2f} s)",
            flush=True,
        )
    summary = {
        "bench": "async",
        "steps": args.steps,
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "by_staleness": {str(k): {key: round(v, 4) for key, v in row.items()} for k, row in results.items()},
        "speedup_k1": round(results[1]["steps_per_s"] / results[0]["steps_per_s"], 3),
        "speedup_k2": round(results[2]["steps_per_s"] / results[0]["steps_per_s"], 3),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
