"""Training throughput with the sampler ahead of the trainer: GRPO at max_staleness K = 0 (the synchronous
loop), 1 and 2 (and K = 1 on the sampler's own log-probs, ``stale_old_logp="sampler"``: run ``K=1s``), and
TRL's GRPOTrainer, in one sitting, on two models (issue 38, item 5).

- tiny: the `bench_grpo` setting as the ``tiny`` preset has it (16 prompts x 8 samples of up to 72 tokens,
  Arithmetic-v0 at its first level, no KL, lr 1e-4, the same random-init tiny model); TRL's step through
  `bench_grpo.trl_step_seconds` on the same batch.
- SmolLM2 (``--smollm2 PATH``, default ``$REASONGYM_SMOLLM2_GGUF``; skipped when absent or empty):
  SmolLM2-135M-Instruct with LoRA r16 in `real_grpo_step.py`'s setting (4 prompts x 4 samples of up to 64
  tokens, KL 0.04, lr 1e-6, float32, the whole batch in one pass), ours through its `train_ours` and TRL's
  (with the same peft config) through its `run_trl`.

One torch thread per process: the trainer's, and the sampler's with K >= 1 (so K >= 1 uses two cores).
The first step of each run is not timed (the sampler's start and the first batch, which nothing overlaps).
Throughput: optimizer steps per wall second from the start of step 2 to the end of the last, and sampled
tokens per wall second. Where our step goes, per K (means over the timed steps, the trainer's ``perf/`` and
``async/`` metrics): sampling in the trainer (``perf/generate_s``, K = 0 only), verification, rescoring a
batch drawn by another process (``perf/old_logp_s``), the reference pass (KL), the update (``perf/train_s``),
the trainer's wait for the sampler and the sampler's wait for weights (``async/trainer_wait_s``,
``async/sampler_wait_s``), housekeeping. The sampler's wait for the trainer's next request is not logged.
TRL's step is the median wall time of its steps after the first (its callbacks), as in `bench_grpo.py`.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_async`` (36 minutes on 2 cores under a load average
of 4-8 from other jobs; ``--smollm2 ''``: the tiny model alone, 4.5 minutes). Prints a table per model; last
line: one JSON object with, per model, each run's figures, ``speedup_k1`` and ``speedup_k2`` (steps per
second over K = 0's), ``ratio_to_trl_k*`` (our median step over TRL's), each row's 1-minute load, and ``machine``
(`benchmarks.harness.machine`: wall and CPU seconds, the load at the start and the end).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

from benchmarks.bench_grpo import StepClock, trl_step_seconds  # noqa: E402
from benchmarks.harness.machine import Snapshot  # noqa: E402
from reasongym.agents.algorithms import preset_configs  # noqa: E402
from reasongym.agents.grpo import train_grpo  # noqa: E402
from reasongym.agents.runtime.hooks import StepHook  # noqa: E402
from reasongym.policy.tiny import tiny_policy  # noqa: E402

ENV = "reasongym/Arithmetic-v0"
RUNS = {"K=0": (0, "rescore"), "K=1": (1, "rescore"), "K=2": (2, "rescore"), "K=1s": (1, "sampler")}
"""Each run of ours: its name -> (``max_staleness``, ``stale_old_logp``). ``K=1s`` trains on the sampler's
own log-probs (no rescoring pass)."""
KEYS = {"K=0": "k0", "K=1": "k1", "K=2": "k2", "K=1s": "k1_sampler_logp"}
"""A run's name in the JSON line's ratios."""
PHASES = {
    "generate": "perf/generate_s",
    "verify": "perf/verify_s",
    "rescore": "perf/old_logp_s",
    "reference": "perf/reference_s",
    "update": "perf/train_s",
    "trainer_wait": "async/trainer_wait_s",
    "sampler_wait": "async/sampler_wait_s",
    "housekeeping": "perf/housekeeping_s",
    "staleness": "async/staleness_mean",
    "dropped": "async/dropped",
}
"""Where a step goes: column name -> the per-step metric averaged over the timed steps (0 when absent)."""


def summarize(history: list[dict[str, float]], stamps: list[tuple[float, float]]) -> dict[str, float]:
    """Throughput and phases of one run from its per-step metrics and `StepClock`'s stamps (the start of
    each step and the end of the last): the steps after the first."""
    timed = history[1:]
    starts = [wall for _, wall in stamps[1:]]
    wall = starts[-1] - starts[0]
    tokens = sum(row["perf/tokens_per_s"] * row["perf/step_s"] for row in timed)  # sampled this step
    out = {
        "steps_per_s": len(timed) / wall,
        "tokens_per_s": tokens / wall,
        "step_s": wall / len(timed),
        "step_median_s": statistics.median(b - a for a, b in zip(starts, starts[1:], strict=False)),
    }
    out.update({name: statistics.mean(row.get(key, 0.0) for row in timed) for name, key in PHASES.items()})
    return out


def timed_run(train: Callable[[list[StepHook]], list[dict[str, float]]]) -> dict[str, float]:
    """``train(hooks)``'s throughput and phases (`summarize`), its whole time and the load when it ended."""
    started = time.perf_counter()
    clock = StepClock()
    history = train([clock])
    row = summarize(history, clock.stamps)
    row["whole_run_s"] = time.perf_counter() - started
    row["load_1min"] = os.getloadavg()[0]
    return row


def tiny_configs(steps: int, staleness: int, old_logp: str = "rescore") -> dict[str, Any]:
    """The ``tiny`` preset's GRPO configs for ``steps`` steps at ``max_staleness`` = ``staleness``."""
    return preset_configs(
        "tiny",
        "grpo",
        max_steps=steps,
        eval_every=0,
        progress_bar=False,
        max_staleness=staleness,
        stale_old_logp=old_logp,
    )


def tiny_ours(staleness: int, old_logp: str, steps: int) -> dict[str, float]:
    """GRPO on the tiny model at ``max_staleness`` = ``staleness``, ``stale_old_logp`` = ``old_logp``."""

    def train(hooks: list[StepHook]) -> list[dict[str, float]]:
        configs = tiny_configs(steps, staleness, old_logp)
        model, tokenizer = tiny_policy(0)
        return train_grpo(
            configs["grpo"],
            model,
            tokenizer,
            ENV,
            run=configs["run"],
            rollout=configs["rollout"],
            hooks=hooks,
        ).history

    return timed_run(train)


def tiny_trl(steps: int) -> dict[str, float]:
    """TRL's GRPOTrainer on the tiny preset's batch (`bench_grpo.trl_step_seconds`), its first step untimed."""
    rollout = tiny_configs(steps, 0)["rollout"]
    setting = argparse.Namespace(
        prompts=rollout.num_prompts,
        group=rollout.group_size,
        tokens=rollout.max_new_tokens,
        warmup=1,
        steps=steps - 1,
    )
    started = time.perf_counter()
    result = trl_step_seconds(setting)
    step = result["step_wall_s"]
    return {
        "steps_per_s": 1 / step,
        "tokens_per_s": result["completion_tokens"] / step,
        "step_s": step,
        "step_median_s": step,
        "whole_run_s": time.perf_counter() - started,
        "load_1min": os.getloadavg()[0],
    }


def smollm2_ours(path: str, staleness: int, old_logp: str, steps: int) -> dict[str, float]:
    """Our GRPO with LoRA on SmolLM2 at ``max_staleness`` = ``staleness`` (`real_grpo_step.train_ours`)."""
    from benchmarks.real_grpo_step import train_ours
    from reasongym.policy.loading import load_policy

    def train(hooks: list[StepHook]) -> list[dict[str, float]]:
        model, tokenizer = load_policy(path)
        return train_ours(
            model, tokenizer, "lora", steps, max_staleness=staleness, stale_old_logp=old_logp, hooks=hooks
        )

    return timed_run(train)


def smollm2_trl(path: str, steps: int) -> dict[str, float]:
    """TRL's GRPOTrainer with the same LoRA on SmolLM2 (`real_grpo_step.run_trl`), its first step untimed."""
    from benchmarks.real_grpo_step import run_trl
    from reasongym.policy.loading import load_policy

    started = time.perf_counter()
    model, tokenizer = load_policy(path)
    seconds = run_trl(model, tokenizer, "lora", steps)[1:]
    return {
        "steps_per_s": len(seconds) / sum(seconds),
        "step_s": sum(seconds) / len(seconds),
        "step_median_s": statistics.median(seconds),
        "whole_run_s": time.perf_counter() - started,
        "load_1min": os.getloadavg()[0],
    }


def print_table(title: str, rows: dict[str, dict[str, float]]) -> None:
    """One line per run: throughput, then where the step goes (seconds per step)."""
    print(f"\n{title}")
    names = ["steps/s", "tokens/s", "step", "median", *list(PHASES)[:-2], "stale", "load"]
    print(f"{'run':>6} " + " ".join(f"{name:>12}" for name in names))
    for run, row in rows.items():
        values = [row.get(key) for key in ("steps_per_s", "tokens_per_s", "step_s", "step_median_s")]
        values += [row.get(name) for name in PHASES if name != "dropped"] + [row.get("load_1min")]
        cells = ["-" if value is None else f"{value:.3f}" for value in values]
        print(f"{run:>6} " + " ".join(f"{cell:>12}" for cell in cells), flush=True)


def ratios(rows: dict[str, dict[str, float]]) -> dict[str, float | None]:
    """Steps per second of each run over K = 0's; each run's median step over TRL's (None without TRL)."""
    ours = [name for name in RUNS if name in rows]
    out: dict[str, float | None] = {
        f"speedup_{KEYS[name]}": round(rows[name]["steps_per_s"] / rows["K=0"]["steps_per_s"], 3)
        for name in ours
        if name != "K=0"
    }
    trl = rows.get("TRL", {}).get("step_median_s")
    for name in ours:
        out[f"ratio_to_trl_{KEYS[name]}"] = round(rows[name]["step_median_s"] / trl, 3) if trl else None
    return out


def measure_model(
    title: str, ours: Callable[[int, str], dict[str, float]], trl: Callable[[], dict[str, float]]
) -> dict[str, Any]:
    """Each of `RUNS` and TRL on one model, one after the other; prints its table, returns rows and ratios."""
    rows: dict[str, dict[str, float]] = {}
    for name, (staleness, old_logp) in RUNS.items():
        rows[name] = ours(staleness, old_logp)
        print(f"{title} {name}: {rows[name]['step_s']:.2f} s/step", flush=True)
        gc.collect()
    try:
        rows["TRL"] = trl()
    except ImportError as error:
        print(f"TRL not available ({error}); its ratios are null")
    gc.collect()
    print_table(title, rows)
    rounded = {run: {key: round(value, 4) for key, value in row.items()} for run, row in rows.items()}
    return {"runs": rounded, **ratios(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="steps per tiny-model run (the first untimed)")
    parser.add_argument(
        "--smollm2",
        default=os.environ.get("REASONGYM_SMOLLM2_GGUF", ""),
        help="SmolLM2-135M-Instruct (.gguf or folder); default $REASONGYM_SMOLLM2_GGUF; '' skips it",
    )
    parser.add_argument(
        "--smollm2-steps", type=int, default=4, help="steps per SmolLM2 run (the first untimed)"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    measured = Snapshot()
    summary: dict[str, Any] = {"bench": "async", "cpus": os.cpu_count(), "steps": args.steps}
    summary["tiny"] = measure_model(
        "tiny (16 x 8 x 72 tokens)",
        lambda k, old_logp: tiny_ours(k, old_logp, args.steps),
        lambda: tiny_trl(args.steps),
    )
    if args.smollm2 and Path(args.smollm2).exists():
        summary["smollm2_steps"] = args.smollm2_steps
        summary["smollm2_lora"] = measure_model(
            "SmolLM2-135M LoRA r16 (4 x 4 x 64 tokens)",
            lambda k, old_logp: smollm2_ours(args.smollm2, k, old_logp, args.smollm2_steps),
            lambda: smollm2_trl(args.smollm2, args.smollm2_steps),
        )
    else:
        print(f"\nSmolLM2 skipped: no model at {args.smollm2!r} (--smollm2 or $REASONGYM_SMOLLM2_GGUF)")
    summary["machine"] = measured.since()  # wall and CPU seconds, the load at the start and the end
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
