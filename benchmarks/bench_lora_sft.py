"""SFT on SmolLM2-135M-Instruct with LoRA (rank 16) against full fine-tuning: seconds per step and peak memory.

Each mode runs in its own process (``--mode full|lora``), so that its peak RSS is its own; without ``--mode``
this script runs both, one after the other, and compares them. The batch: 8 chat-formatted Arithmetic-v0
level-1 problems with their reference solutions (about 60 tokens a row, cut at 128), one micro-batch, AdamW
at lr 1e-5 (full) or 1e-4 (LoRA: rank 16, alpha 32, dropout 0 on the seven attention and MLP projections),
float32, no gradient checkpointing, one thread. ``--steps`` steps run (default 4); the first warms caches up
and the median of the others is reported. Peak RSS is reported after loading (the GGUF is dequantized to
float32, which is itself a peak) and after training. ``--memory-savers`` turns on what the ``default`` preset
gives GRPO: gradient checkpointing and micro-batches of 2 rows (the same 8 rows a step).

``--learning`` asks what each mode learns per CPU-second rather than what a step costs: issue 39's chain
warm start (`real_learning --preset chain`: Arithmetic-v0 level 2, the generator's column-by-column worked
solutions, batch 8, a constant learning rate) for ``--steps`` steps (default 100) with no early
stop, and a greedy probe of 64 validation problems (64 new tokens) every 10 steps. Each probe is reported
against the process's own training CPU-seconds so far (probes excluded), so the two modes run side by side,
one process each.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_lora_sft --model $REASONGYM_SMOLLM2_GGUF [--learning]

Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ENV = "reasongym/Arithmetic-v0"
BATCH, MAX_LENGTH, RANK, ALPHA = 8, 128, 16, 32.0
LEARNING_RATES = {"full": 1e-5, "lora": 1e-4}


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default=os.environ.get("REASONGYM_SMOLLM2_GGUF"), help="a .gguf file or folder"
    )
    parser.add_argument("--mode", choices=["full", "lora"], help="one mode in this process; omitted: both")
    parser.add_argument("--steps", type=int, help="default: 4, or 100 with --learning")
    parser.add_argument(
        "--learning", action="store_true", help="probe accuracy against CPU-seconds on the chain warm start"
    )
    parser.add_argument(
        "--memory-savers", action="store_true", help="gradient checkpointing, micro-batches of 2"
    )
    parser.add_argument(
        "--plot",
        default="benchmarks/results/lora_sft_learning.png",
        help="--learning: where the curves' plot goes (its JSON goes beside it)",
    )
    parser.add_argument(
        "--replot",
        action="store_true",
        help="--learning: redraw the plot from the JSON beside it, train nothing",
    )
    return parser.parse_args()


def _peak_rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def run_mode(model_path: str, mode: str, steps: int, memory_savers: bool) -> dict[str, Any]:
    """Train ``steps`` SFT steps in ``mode`` in this process; its timings, weights trained and peak RSS."""
    import torch

    import reasongym
    from reasongym.agents.config import LoRAConfig, RunConfig
    from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft
    from reasongym.policy.loading import load_policy

    torch.set_num_threads(1)
    model, tokenizer = load_policy(model_path)
    loaded_rss = _peak_rss_mb()
    pairs = sft_pairs_from_env(reasongym.make(ENV, difficulty=1), BATCH * steps, tokenizer=tokenizer)
    run = RunConfig(
        max_steps=steps,
        lr=LEARNING_RATES[mode],
        lr_schedule="constant",
        lora=LoRAConfig(rank=RANK if mode == "lora" else 0, alpha=ALPHA),
        gradient_checkpointing=memory_savers,
        micro_batch_size=2 if memory_savers else None,
        progress_bar=False,
        tensorboard=False,
    )
    started = time.perf_counter()
    result = train_sft(SFTConfig(batch_size=BATCH, max_length=MAX_LENGTH), model, tokenizer, pairs, run=run)
    wall = time.perf_counter() - started
    step_s = [metrics["perf/step_time_s"] for metrics in result.history]
    return {
        "mode": mode,
        "memory_savers": memory_savers,
        "steps": result.steps,
        "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "completion_tokens_per_step": statistics.mean(metrics["train/tokens"] for metrics in result.history),
        "first_step_s": round(step_s[0], 2),
        "median_step_s": round(statistics.median(step_s[1:] or step_s), 2),
        "train_wall_s": round(wall, 1),
        "losses": [round(metrics["loss/sft"], 4) for metrics in result.history],
        "peak_rss_after_load_mb": loaded_rss,
        "peak_rss_mb": _peak_rss_mb(),
    }


LEARNING_DIFFICULTY, PROBE_EVERY, PROBE_PROBLEMS, PROBE_TOKENS = 2, 10, 64, 64


def run_learning(model_path: str, mode: str, steps: int) -> dict[str, Any]:
    """`learning_curve` of the model at ``model_path``, loaded in this process."""
    import torch

    from reasongym.policy.loading import load_policy

    torch.set_num_threads(1)
    model, tokenizer = load_policy(model_path)
    return learning_curve(model, tokenizer, mode, steps)


def _learning_configs(mode: str, steps: int, probe_every: int) -> dict[str, Any]:
    """The warm start's SFT configs in ``mode``: its learning rate, a constant schedule, LoRA r16 or none."""
    import dataclasses

    from reasongym.agents.algorithms import preset_configs
    from reasongym.agents.config import LoRAConfig

    configs = preset_configs(
        "default",
        "sft",
        max_steps=steps,
        lr=LEARNING_RATES[mode],
        lr_schedule="constant",  # a schedule that decays over ``steps`` would make the curve depend on ``steps``
        batch_size=BATCH,
        eval_every=probe_every,
        progress_bar=False,
        tensorboard=False,
    )
    lora = LoRAConfig(rank=RANK if mode == "lora" else 0, alpha=ALPHA)
    return {**configs, "run": dataclasses.replace(configs["run"], lora=lora)}


def learning_curve(
    model: Any,
    tokenizer: Any,
    mode: str,
    steps: int,
    probe_every: int = PROBE_EVERY,
    probe_problems: int = PROBE_PROBLEMS,
    clock: Callable[[], float] = time.process_time,
) -> dict[str, Any]:
    """The chain warm start for ``steps`` steps in ``mode``: each probe's accuracy and the CPU-seconds before it
    (``clock``: this process's CPU-seconds; a test passes its own, so that what is counted does not depend on
    how fast the machine is)."""
    import reasongym
    from reasongym.agents.sft import sft_pairs_from_env, train_sft
    from reasongym.evaluation.runner import greedy_pass_at_1
    from reasongym.generation import HFGenerator

    env = reasongym.make(ENV, difficulty=LEARNING_DIFFICULTY)
    pairs = sft_pairs_from_env(env, BATCH * steps, split="train", tokenizer=tokenizer)
    configs = _learning_configs(mode, steps, probe_every)
    started, probe_cpu, probes = clock(), 0.0, []

    def probe(trained: Any) -> dict[str, float]:
        nonlocal probe_cpu
        before = clock()
        accuracy = greedy_pass_at_1(
            HFGenerator(trained, tokenizer),
            env,
            tokenizer=tokenizer,
            split="validation",
            num_problems=probe_problems,
            difficulty=LEARNING_DIFFICULTY,
            max_new_tokens=PROBE_TOKENS,
        )
        train_cpu = before - started - probe_cpu
        probes.append(
            {
                "step": (len(probes) + 1) * probe_every,
                "train_cpu_s": round(train_cpu, 1),
                "accuracy": accuracy,
            }
        )
        probe_cpu += clock() - before
        return {"eval/probe": accuracy}

    result = train_sft(configs["sft"], model, tokenizer, pairs, run=configs["run"], eval_fn=probe)
    return {
        "mode": mode,
        "lr": LEARNING_RATES[mode],
        "steps": result.steps,
        "train_cpu_s": round(clock() - started - probe_cpu, 1),
        "probe_cpu_s": round(probe_cpu, 1),
        "probes": probes,
        "loss_at_each_probe": [
            round(m["loss/sft"], 3) for m in result.history[probe_every - 1 :: probe_every]
        ],
    }


def first_reaching(probes: list[dict[str, Any]], accuracy: float) -> dict[str, Any] | None:
    """The first probe at or above ``accuracy``, or None."""
    return next((probe for probe in probes if probe["accuracy"] >= accuracy), None)


def plot_learning(results: dict[str, Any], path: Path) -> None:
    """Each mode's probe accuracy against its training CPU-seconds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2))
    for mode in ("full", "lora"):
        probes = results[mode]["probes"]
        label = f"{mode} (lr {results[mode]['lr']:g})"
        axes.plot(
            [p["train_cpu_s"] for p in probes], [p["accuracy"] for p in probes], marker="o", label=label
        )
    axes.set_xlabel("training CPU-seconds (one thread; the probes left out)")
    axes.set_ylabel(f"greedy accuracy, {PROBE_PROBLEMS} validation problems")
    axes.set_title(
        f"SmolLM2-135M, SFT on worked 3-digit sums: full fine-tuning against LoRA r{RANK}", fontsize=10
    )
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> None:
    """One mode here, or each mode in its own process and a comparison."""
    args = _args()
    plot, record = Path(args.plot), Path(args.plot).with_suffix(".json")
    if args.replot:
        if not record.is_file():
            sys.exit(
                f"--replot: no {record} to redraw from; run --learning first, or pass --plot beside its JSON"
            )
        plot_learning(json.loads(record.read_text()), plot)
        print(json.dumps({"plot": str(plot), "from": str(record)}))
        return
    if not args.model:
        sys.exit("no model: pass --model or set REASONGYM_SMOLLM2_GGUF")
    steps = (100 if args.learning else 4) if args.steps is None else args.steps
    if args.learning and steps < PROBE_EVERY:
        sys.exit(
            f"--steps {steps}: --learning needs at least {PROBE_EVERY} (it probes every {PROBE_EVERY} steps)"
        )
    if steps < 1:
        sys.exit(f"--steps {steps}: at least 1 allowed")
    if args.mode:
        if args.learning:
            print(json.dumps(run_learning(args.model, args.mode, steps)))
        else:
            print(json.dumps(run_mode(args.model, args.mode, steps, args.memory_savers)))
        return
    results = _each_mode(args, steps)
    if args.learning:
        print(json.dumps(_learning_comparison(results, plot, record)))
        return
    full, lora = results["full"], results["lora"]
    results["lora_over_full_step_s"] = round(lora["median_step_s"] / full["median_step_s"], 2)
    results["lora_over_full_peak_rss"] = round(lora["peak_rss_mb"] / full["peak_rss_mb"], 2)
    print(json.dumps(results))


def _each_mode(args: argparse.Namespace, steps: int) -> dict[str, Any]:
    """Each mode's record, from its own process (``python -m benchmarks.bench_lora_sft --mode MODE``)."""
    flags = [*(["--memory-savers"] if args.memory_savers else []), *(["--learning"] if args.learning else [])]
    commands = {
        mode: [sys.executable, "-m", "benchmarks.bench_lora_sft", "--model", args.model, "--mode", mode]
        + ["--steps", str(steps), *flags]
        for mode in ("full", "lora")
    }
    # --learning compares each process's own CPU-seconds, so its two modes run side by side; a step's time and
    # peak RSS are only clean with the machine to one mode, so those run one after the other
    results = {}
    if args.learning:
        running = {
            mode: subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            for mode, command in commands.items()
        }
        for mode, process in running.items():
            stdout, _ = process.communicate()
            if process.returncode:
                sys.exit(f"--mode {mode} --learning failed with exit status {process.returncode}")
            results[mode] = json.loads(stdout.splitlines()[-1])
            print(
                f"{mode:4s}: "
                + ", ".join(f"{p['train_cpu_s']:.0f} s {p['accuracy']:.3f}" for p in results[mode]["probes"])
            )
        return results
    for mode, command in commands.items():
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        results[mode] = json.loads(done.stdout.splitlines()[-1])
        print(
            f"{mode:4s}: {results[mode]['median_step_s']:.2f} s/step, peak RSS {results[mode]['peak_rss_mb']} MB"
        )
    return results


def _learning_comparison(results: dict[str, Any], plot: Path, record: Path) -> dict[str, Any]:
    """The CPU-seconds each mode took to reach 0.2 and 0.3, the final accuracies; the record and the plot."""
    for target in (0.2, 0.3):
        reached = {mode: first_reaching(results[mode]["probes"], target) for mode in ("full", "lora")}
        results[f"train_cpu_s_to_{target}"] = {mode: p and p["train_cpu_s"] for mode, p in reached.items()}
    results["final_accuracy"] = {mode: results[mode]["probes"][-1]["accuracy"] for mode in ("full", "lora")}
    plot.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(results) + "\n")
    plot_learning(results, plot)
    return results


if __name__ == "__main__":
    main()
