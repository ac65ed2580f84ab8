"""What ``reasongym train`` says about a run: what a step will cost before it starts, at the end one line in
words (steps, why it stopped, held-out accuracy before and after, on which split) before the JSON summary, and
after a failure or an interrupt what became of the run folder.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CPU_STEP_TOKENS = 20_000
"""Tokens a step may sample before a CPU run of a real model is told what it costs and offered a smaller
setting."""
CPU_TOKENS_PER_S = 60
"""What a 135M model samples on a CPU, for the estimate: SmolLM2-135M, 16 rows, one core, measured 17 tokens a
second under load and 68 per CPU second (benchmarks/README.md, bench_real_model.py)."""
CPU_SIZED = {"num_prompts": 4, "group_size": 4, "max_new_tokens": 256}
"""A real model's RL step that takes minutes, not hours, on a CPU (4 x 4 x 256 = 4,096 tokens at most)."""


def result_summary(result: Any) -> dict[str, Any]:
    """Steps, the last step's numeric metrics (SFT, GRPO, DAPO; STaR: its last iteration's), and STaR's
    iterations and accuracies."""
    history = getattr(result, "history", ()) or ()
    iterations = getattr(result, "iterations", None)
    last = history[-1] if history else {}
    if iterations:  # STaR: one line of metrics per iteration
        from reasongym.agents.star import iteration_metrics

        last = iteration_metrics(iterations[-1])
    steps = getattr(result, "steps", None)
    summary: dict[str, Any] = {
        "steps": steps if steps is not None else len(iterations or ()),
        "last": {k: v for k, v in last.items() if isinstance(v, int | float)},
    }
    for name in ("initial_accuracy", "final_accuracy", "stopped_early"):  # STaR; SFT's early stop
        if isinstance(getattr(result, name, None), int | float):
            summary[name] = getattr(result, name)
    if iterations is not None:
        summary["iterations"] = len(iterations)
    return summary


def summary_line(algo: str, result: Any, run: Any, split: str, stop: float | None = None) -> str:
    """One line in words: steps done (and why it stopped early), held-out greedy pass@1 first and last, the
    loss or reward first and last."""
    steps = getattr(result, "steps", None)
    iterations = getattr(result, "iterations", None)
    unit = "iterations" if iterations is not None else "steps"
    done = steps if steps is not None else len(iterations or ())
    parts = [f"{algo}: {done} of {run.max_steps} {unit}"]
    accuracies = _held_out(result)
    if getattr(result, "stopped_early", False):
        reached = f" {accuracies[-1]:.2f}" if accuracies else ""
        parts[0] += f" (stopped early: held-out pass@1{reached} reached stop_at_accuracy {stop})"
    if len(accuracies) >= 2:
        parts.append(
            f"held-out pass@1 {accuracies[0]:.2f} -> {accuracies[-1]:.2f} (greedy, {run.eval_problems} "
            f"problems of the {split} split)"
        )
    elif accuracies:
        parts.append(f"held-out pass@1 {accuracies[-1]:.2f} (greedy, {split} split)")
    for key, name in (
        ("loss/sft", "loss"),
        ("distill/divergence", "divergence to the teacher"),
        ("rollout/reward_mean", "reward"),
    ):
        first, last = _first_last(getattr(result, "history", ()) or (), key)
        if first is not None and last is not None:
            parts.append(f"{name} {first:.3g} -> {last:.3g}")
    return "; ".join(parts)


def _held_out(result: Any) -> list[float]:
    """Held-out greedy pass@1 over the run: RL's evaluations, SFT's probes, STaR's iterations."""
    if getattr(result, "iterations", None) is not None:
        return [result.initial_accuracy] + [stats.accuracy_after for stats in result.iterations]
    evals = getattr(result, "evals", None)
    rows = evals if evals else getattr(result, "history", ()) or ()
    return [float(row["eval/pass@1"]) for row in rows if _finite(row.get("eval/pass@1"))]


def _first_last(history: Any, key: str) -> tuple[float | None, float | None]:
    values = [float(row[key]) for row in history if _finite(row.get(key))]
    return (values[0], values[-1]) if values else (None, None)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


SAMPLES_EACH_STEP = ("grpo", "dapo", "distill")
"""The algorithms whose every step samples ``num_prompts`` prompts (STaR samples once per iteration)."""


def step_cost(algo: str, configs: Mapping[str, Any], model_name: str, device: Any) -> str | None:
    """Before an RL or STaR run: what one step samples at most, and on a CPU with a real model past
    `CPU_STEP_TOKENS`, the flags of a CPU-sized step."""
    rollout = configs.get("rollout")
    if rollout is None:
        return None
    prompts = rollout.num_prompts if algo in SAMPLES_EACH_STEP else configs[algo].num_train_problems or 0
    if algo == "star" and not prompts:
        return None
    tokens = prompts * rollout.group_size * rollout.max_new_tokens
    sizes = " x ".join(
        _count(value, word)
        for value, word in (
            (prompts, "prompt"),
            (rollout.group_size, "sample"),
            (rollout.max_new_tokens, "token"),
        )
    )
    line = f"reasongym: each {'step' if algo != 'star' else 'iteration'} samples up to {sizes} = {tokens:,} tokens"
    if (
        algo in SAMPLES_EACH_STEP
        and model_name != "tiny"
        and str(device) == "cpu"
        and tokens > CPU_STEP_TOKENS
    ):
        flags = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in CPU_SIZED.items())
        minutes = tokens / CPU_TOKENS_PER_S / 60
        line += (
            f"; on a CPU a 135M model samples some tens of tokens a second, so a step may take about "
            f"{minutes:,.0f} minutes (more for a larger model): for a CPU-sized step pass {flags}"
        )
    return line


def _count(value: int, word: str) -> str:
    """``1 sample``, ``8 samples``."""
    return f"{value} {word}{'s' * (value != 1)}"


def with_resume_hint(algo: str, failure: Any) -> None:
    """Add to an interrupt's message how to resume, when its run folder holds a checkpoint to resume from."""
    from reasongym.policy.checkpoints import latest_checkpoint

    if failure.run_dir is not None and Path(failure.run_dir).is_dir() and latest_checkpoint(failure.run_dir):
        failure.args = (f"{failure}; resume with `reasongym train {algo} --run-dir {failure.run_dir}`",)


def eval_split(env_id: str, run_cfg: Any) -> str:
    """The split the run's held-out evaluations used."""
    from reasongym.agents.config import resolve_splits
    from reasongym.envs import make

    return resolve_splits(run_cfg, make(env_id))[1]


def stop_at(configs: Mapping[str, Any]) -> float | None:
    """SFT's ``stop_at_accuracy``, or None."""
    return getattr(configs.get("sft"), "stop_at_accuracy", None)
