"""GRPO step throughput on CPU with 1 and 2 processes (gloo, DDP), the same global batch, in one run.

Three configurations train the ``tiny`` preset's GRPO (the 0.5M-parameter model, 16 prompts x 8 samples,
72 new tokens, sampled by `HFGenerator`) for ``--steps`` steps on Arithmetic-v0 level 1: one process with
one thread, one process with two threads, and two processes with one thread each under torchrun (each
samples and trains on half of every batch). The first step warms up; the mean of the rest is reported,
split into sampling (``perf/generate_s``) and the update (``perf/train_s``), from rank 0's metrics.
One process with two threads is the fair baseline for two processes on two cores: both use two cores.

Run: ``python -m benchmarks.bench_data_parallel`` (about 2 minutes on 2 cores). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIGS = {"1 process x 1 thread": (1, 1), "1 process x 2 threads": (1, 2), "2 processes x 1 thread": (2, 1)}


def worker(out: str, steps: int) -> None:
    """Train GRPO (under torchrun when launched so); rank 0 writes its metrics into ``out``."""
    import torch

    from reasongym import distributed
    from reasongym.agents.algorithms import preset_configs
    from reasongym.agents.grpo import train_grpo
    from reasongym.policy.tiny import tiny_policy

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    distributed.init_distributed()
    model, tokenizer = tiny_policy(0)
    configs = preset_configs(
        "tiny", "grpo", max_steps=steps, difficulty=1, progress_bar=False, samples_every=0
    )
    train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        "reasongym/Arithmetic-v0",
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=out,
    )
    distributed.cleanup()


def measure(processes: int, threads: int, steps: int) -> dict[str, float]:
    """Launch one configuration; the mean step, sampling and update seconds after the warm-up step."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, __file__, "--worker", folder, "--steps", str(steps)]
        if processes > 1:
            command = [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                f"--nproc-per-node={processes}",
                *command[1:],
            ]
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
        if done.returncode:
            raise RuntimeError(f"{processes} x {threads} failed:\n{done.stderr[-3000:]}")
        wall = time.perf_counter() - started
        lines = [json.loads(line) for line in (Path(folder) / "metrics.jsonl").read_text().splitlines()]
    timed = [line for line in lines if line["step"] > 1]
    step_s = statistics.mean(line["perf/step_s"] for line in timed)
    return {
        "step_s": round(step_s, 3),
        "generate_s": round(statistics.mean(line["perf/generate_s"] for line in timed), 3),
        "train_s": round(statistics.mean(line["perf/train_s"] for line in timed), 3),
        "samples_per_s": round(128 / step_s, 1),
        "wall_s": round(wall, 1),
    }


def main() -> None:
    """Measure each configuration in turn, print a table and one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="GRPO steps per configuration (first = warm-up)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.steps)
        return
    results = {name: measure(*shape, args.steps) for name, shape in CONFIGS.items()}
    for name, result in results.items():
        print(
            f"{name:<24} {result['step_s']:>7.3f} s/step  {result['samples_per_s']:>7.1f} samples/s  "
            f"(sampling {result['generate_s']:.3f} s, update {result['train_s']:.3f} s)"
        )
    one = results["1 process x 2 threads"]["step_s"]
    summary = {
        "configs": results,
        "speedup_2_processes_vs_1x1": round(
            results["1 process x 1 thread"]["step_s"] / results["2 processes x 1 thread"]["step_s"], 3
        ),
        "speedup_2_processes_vs_1x2": round(one / results["2 processes x 1 thread"]["step_s"], 3),
        "global_batch": "16 prompts x 8 samples",
        "steps": args.steps,
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
