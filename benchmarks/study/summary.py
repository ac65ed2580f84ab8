"""The tables (accuracy with paired differences, diagnostics, wall seconds) and the plots."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from benchmarks.harness import report
from benchmarks.harness.stats import t_interval
from benchmarks.study.setting import (
    ARMS,
)


def summarize(records: list[dict], warm: dict[int, dict]) -> tuple[str, dict]:
    """The markdown table (DAPO's ablation layout: one row per arm) and its numbers."""
    by_arm: dict[str, dict[int, dict]] = {}
    for record in records:
        by_arm.setdefault(record["arm"], {})[record["seed"]] = record
    final = {
        arm: {seed: r["curve"][-1]["accuracy"] for seed, r in runs.items()} for arm, runs in by_arm.items()
    }
    lines = [
        "| arm | held-out pass@1 | vs. baseline (paired) | per seed | sampled tokens | CPU-s |",
        "| --- | ---: | ---: | --- | ---: | ---: |",
    ]
    warm_acc = [w["accuracy"] for w in warm.values()]
    mean, half = t_interval(warm_acc)
    lines.append(
        f"| warm start (SFT to a 40% probe) | {100 * mean:.1f} ± {100 * half:.1f} | | "
        f"{' / '.join(f'{100 * a:.1f}' for a in warm_acc)} | 0 | {statistics.mean(w['cpu_s'] for w in warm.values()):.0f} |"
    )
    numbers = {"warm_start": {"mean": mean, "ci95": half}}
    for name in ARMS:
        if name not in by_arm:
            continue
        seeds = sorted(final[name])
        mean, half = t_interval([final[name][s] for s in seeds])
        base_name = ARMS[name].baseline
        baseline = final.get(base_name, {}) if base_name else {s: warm[s]["accuracy"] for s in warm}
        paired = [final[name][s] - baseline[s] for s in seeds if s in baseline]
        diff, diff_half = t_interval(paired) if paired else (math.nan, math.nan)
        runs = by_arm[name].values()
        label = f"vs. {base_name or 'warm start'}"
        lines.append(
            f"| {name} | {100 * mean:.1f} ± {100 * half:.1f} | {100 * diff:+.1f} ± {100 * diff_half:.1f} ({label}) | "
            f"{' / '.join(f'{100 * final[name][s]:.1f}' for s in seeds)} | "
            f"{statistics.mean(r['tokens'] for r in runs):,.0f} | {statistics.mean(r['cpu_s'] for r in runs):.0f} |"
        )
        numbers[name] = {
            "mean": mean,
            "ci95": half,
            "paired_diff": diff,
            "paired_ci95": diff_half,
            "seeds": len(seeds),
        }
    return "\n".join(lines), numbers


def diagnostics_table(records: list[dict]) -> str:
    """The RL arms' training diagnostics, means over seeds: what the clip did, how far the ratio went, and how
    many groups carried no signal (records from before these were kept show ``-``)."""
    lines = [
        "| arm | clip low (tokens) | clip high (tokens) | largest ratio | zero-variance groups | advantage std |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in ARMS:
        runs = [r for r in records if r["arm"] == name and ARMS[name].kind == "rl"]
        if not runs:
            continue
        cells = []
        for key, form in (
            ("clip_low_frac", "{:.4f}"),
            ("clip_high_frac", "{:.4f}"),
            ("ratio_max", "{:.3f}"),
            ("zero_std_group_frac", "{:.2f}"),
            ("advantage_std", "{:.2f}"),
        ):
            values = [r[key] for r in runs if key in r]
            cells.append(form.format(statistics.mean(values)) if values else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(records: list[dict], warm: dict[int, dict], path: Path) -> None:
    """Held-out accuracy against sampled tokens, one line per arm: the mean over seeds with its 95% interval."""
    start = statistics.mean(w["accuracy"] for w in warm.values())
    lines = []
    for name in ARMS:
        curves = [r["curve"] for r in records if r["arm"] == name]
        if curves:
            style = "--" if ARMS[name].kind == "star" else (":" if ARMS[name].kind == "sft" else "-")
            lines.append(seed_mean_line(curves, start, name, {"linestyle": style}))
    report.plot(
        path,
        lines,
        xlabel="sampled completion tokens (SFT: gold tokens trained on)",
        ylabel="held-out greedy pass@1",
        size=(11, 6),
    )


def seed_mean_line(
    curves: list[list[dict]], start: float, label: str, style: dict[str, Any], x: str = "tokens"
) -> report.Line:
    """One arm's curves (one per seed) as a line from ``start``: the mean over seeds of ``x`` and of held-out
    accuracy, with the accuracy's 95% t-interval (the distillation study draws its arms so too)."""
    points = min(len(c) for c in curves)
    xs = [0.0] + [statistics.mean(c[i][x] for c in curves) for i in range(points)]
    means = [t_interval([c[i]["accuracy"] for c in curves]) for i in range(points)]
    errors = [0.0] + [0.0 if math.isnan(half) else half for _, half in means]
    return report.Line(xs, [start] + [mean for mean, _ in means], label, yerr=errors, style=style)


def wall_table(records: list[dict]) -> str:
    """The RL arms' time, means over seeds: wall seconds from the arm's start to its last step (with and
    without its evaluations), CPU-seconds of the trainer and of a sampler process, and the load around it."""
    lines = [
        "| arm | held-out pass@1 | wall-s (evaluations included) | wall-s training | trainer CPU-s | "
        "sampler CPU-s | sampled tokens | steps | load (1 min) at start / end |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name in ARMS:
        runs = [r for r in records if r["arm"] == name and "wall_s" in r]
        if not runs:
            continue
        mean, half = t_interval([r["curve"][-1]["accuracy"] for r in runs])
        loads = " ; ".join(f"{r['load_start'][0]:.2f} / {r['load_end'][0]:.2f}" for r in runs)
        lines.append(
            f"| {name} | {100 * mean:.1f} ± {100 * half:.1f} | {statistics.mean(r['wall_s'] for r in runs):.0f} | "
            f"{statistics.mean(r['train_wall_s'] for r in runs):.0f} | {statistics.mean(r['cpu_s'] for r in runs):.0f} | "
            f"{statistics.mean(r['sampler_cpu_s'] for r in runs):.0f} | {statistics.mean(r['tokens'] for r in runs):,.0f} | "
            f"{statistics.mean(r['steps'] for r in runs):.1f} | {loads} |"
        )
    return "\n".join(lines)


def plot_wall(records: list[dict], warm: dict[int, dict], path: Path) -> None:
    """Held-out accuracy against wall seconds since the arm's start (evaluations included), one line per arm
    that recorded them: the mean over seeds with its 95% interval, and the seeds' range of wall seconds."""
    start = statistics.mean(w["accuracy"] for w in warm.values())
    lines = []
    for name in ARMS:
        curves = [r["curve"] for r in records if r["arm"] == name and "wall_s" in r]
        if not curves:
            continue
        label = f"{name} (K = {ARMS[name].fields.get('max_staleness', 0)}, {len(curves)} seeds)"
        line = seed_mean_line(curves, start, label, {}, x="wall_s")
        walls = [[c[i]["wall_s"] for c in curves] for i in range(len(line.x) - 1)]
        line.xerr = [
            [0.0] + [x - min(w) for x, w in zip(line.x[1:], walls, strict=True)],
            [0.0] + [max(w) - x for x, w in zip(line.x[1:], walls, strict=True)],
        ]
        lines.append(line)
    report.plot(
        path,
        lines,
        xlabel="wall seconds since the arm's start (evaluations included)",
        ylabel="held-out greedy pass@1",
        title="tiny model, Arithmetic-v0 level 1: mean of seeds, 95% interval, range of wall seconds",
    )
