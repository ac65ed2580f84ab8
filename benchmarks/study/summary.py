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
    warm_acc = [w["accuracy"] for w in warm.values()]
    mean, half = t_interval(warm_acc)
    warm_cpu = statistics.mean(w["cpu_s"] for w in warm.values())
    rows = [
        ("warm start (SFT to a 40% probe)", _pct(mean, half), "", _per_seed(warm_acc), 0, f"{warm_cpu:.0f}")
    ]
    numbers = {"warm_start": {"mean": mean, "ci95": half}}
    for name in [arm for arm in ARMS if arm in by_arm]:
        seeds = sorted(final[name])
        mean, half = t_interval([final[name][s] for s in seeds])
        base_name = ARMS[name].baseline
        baseline = final.get(base_name, {}) if base_name else {s: warm[s]["accuracy"] for s in warm}
        paired = [final[name][s] - baseline[s] for s in seeds if s in baseline]
        diff, diff_half = t_interval(paired) if paired else (math.nan, math.nan)
        runs = by_arm[name].values()
        versus = f"{100 * diff:+.1f} ± {100 * diff_half:.1f} (vs. {base_name or 'warm start'})"
        tokens, cpu = statistics.mean(r["tokens"] for r in runs), statistics.mean(r["cpu_s"] for r in runs)
        per_seed = _per_seed([final[name][s] for s in seeds])
        rows.append((name, _pct(mean, half), versus, per_seed, f"{tokens:,.0f}", f"{cpu:.0f}"))
        numbers[name] = {"mean": mean, "ci95": half, "paired_diff": diff, "paired_ci95": diff_half}
        numbers[name]["seeds"] = len(seeds)
    header = ("arm", "held-out pass@1", "vs. baseline (paired)", "per seed", "sampled tokens", "CPU-s")
    return report.table(header, rows, right=(1, 2, 4, 5)), numbers


def _pct(mean: float, half: float) -> str:
    return f"{100 * mean:.1f} ± {100 * half:.1f}"


def _per_seed(values: list[float]) -> str:
    return " / ".join(f"{100 * value:.1f}" for value in values)


DIAGNOSTICS = (
    ("clip low (tokens)", "clip_low_frac", "{:.4f}"),
    ("clip high (tokens)", "clip_high_frac", "{:.4f}"),
    ("largest ratio", "ratio_max", "{:.3f}"),
    ("zero-variance groups", "zero_std_group_frac", "{:.2f}"),
    ("advantage std", "advantage_std", "{:.2f}"),
)
"""The diagnostics table's columns: heading, record key, format."""


def diagnostics_table(records: list[dict]) -> str:
    """The RL arms' training diagnostics, means over seeds: what the clip did, how far the ratio went, and how
    many groups carried no signal (records from before these were kept show ``-``)."""
    rows = []
    for name in ARMS:
        runs = [r for r in records if r["arm"] == name and ARMS[name].kind == "rl"]
        if runs:
            values = [[r[key] for r in runs if key in r] for _, key, _ in DIAGNOSTICS]
            cells = [
                form.format(statistics.mean(v)) if v else "-"
                for v, (_, _, form) in zip(values, DIAGNOSTICS, strict=True)
            ]
            rows.append((name, *cells))
    header = ("arm", *(heading for heading, _, _ in DIAGNOSTICS))
    return report.table(header, rows, right=range(1, len(header)))


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
    rows = []
    for name in ARMS:
        runs = [r for r in records if r["arm"] == name and "wall_s" in r]
        if not runs:
            continue
        mean, half = t_interval([r["curve"][-1]["accuracy"] for r in runs])
        loads = " ; ".join(f"{r['load_start'][0]:.2f} / {r['load_end'][0]:.2f}" for r in runs)
        means = {key: statistics.mean(r[key] for r in runs) for key in WALL_KEYS}
        cells = [f"{means[key]:{form}}" for key, form in WALL_KEYS.items()]
        rows.append((name, _pct(mean, half), *cells, loads))
    header = (
        "arm",
        "held-out pass@1",
        "wall-s (evaluations included)",
        "wall-s training",
        "trainer CPU-s",
        "sampler CPU-s",
        "sampled tokens",
        "steps",
        "load (1 min) at start / end",
    )
    return report.table(header, rows, right=range(1, 8))


WALL_KEYS = {
    "wall_s": ".0f",
    "train_wall_s": ".0f",
    "cpu_s": ".0f",
    "sampler_cpu_s": ".0f",
    "tokens": ",.0f",
    "steps": ".1f",
}
"""The wall table's numeric columns after the accuracy: record key -> format of its mean over seeds."""


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
