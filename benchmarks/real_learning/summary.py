"""The summary of every finished run: per-arm means, the bar's comparisons with their bootstrap intervals,
and the plots against sampled tokens and against wall seconds."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import report, stats
from benchmarks.real_learning.setting import (
    ASYNC_ARMS,
    BAR_CPU_SECONDS,
    BAR_POINTS,
    VERIFIER_ARMS,
    Setting,
)


def interval(runs: dict[str, list[dict[str, Any]]], arm: str, baseline: str) -> dict[str, Any]:
    """Mean held-out accuracy of ``arm`` minus ``baseline`` over seeds, with a 95% bootstrap interval (seeds
    and problems resampled, paired: `stats.bootstrap_difference`)."""
    return stats.bootstrap_difference(
        [r["correct"] for r in runs[arm]], [r["correct"] for r in runs[baseline]]
    )


def accuracy_interval(records: list[dict[str, Any]]) -> dict[str, Any]:
    """An arm's final accuracy with its 95% interval (`stats.accuracy_interval`)."""
    return stats.accuracy_interval([r["correct"] for r in records])


def summarize(out: Path, setting: Setting) -> dict[str, Any]:
    """Every finished run in ``out/runs``: per-arm means, the bar's comparisons, the plot."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((out / "runs").glob("*-s*.json")):
        record = json.loads(path.read_text())
        runs.setdefault(record["arm"], []).append(record)
    start = json.loads((out / "runs" / "start.json").read_text())
    runs["start"] = [start]
    arms = {
        arm: {
            "seeds": len(records),
            "accuracy": round(float(np.mean([r["accuracy"] for r in records])), 4),
            "accuracy_ci95": accuracy_interval(records)["ci95"],
            "accuracy_by_seed": [r["accuracy"] for r in records],
            "sampled_tokens": int(np.mean([r["sampled_tokens"] for r in records])),
            "train_cpu_seconds": round(float(np.mean([r["train_cpu_seconds"] for r in records])), 1),
            **wall_record(records),
        }
        for arm, records in runs.items()
        if arm != "start"
    }
    bar: dict[str, Any] = {}
    for arm in VERIFIER_ARMS:
        if arm in runs and f"{arm}_shuffled" in runs:
            vs_control, vs_start = interval(runs, arm, f"{arm}_shuffled"), interval(runs, arm, "start")
            beats = all(c["clear_of_zero"] and c["difference"] >= BAR_POINTS for c in (vs_control, vs_start))
            in_time = max(r["train_cpu_seconds"] for r in runs[arm]) <= BAR_CPU_SECONDS
            bar[arm] = {
                "vs_control": vs_control,
                "vs_start": vs_start,
                "within_cpu_budget": in_time,
                "holds": beats and in_time,
            }
    summary = {
        "setting": {**dataclasses.asdict(setting), "model": Path(setting.model).name},
        "start_accuracy": start["accuracy"],
        "arms": arms,
        "bar": bar,
        "bar_holds": any(result["holds"] for result in bar.values()),
    }
    if "sft_more" in runs:  # issue 39, item 2: RL after the warm start against more SFT, same compute
        summary["rl_vs_more_sft"] = {
            arm: interval(runs, arm, "sft_more") for arm in ("grpo", "dapo") if arm in runs
        }
    if "grpo" in runs and "grpo_async" in runs:  # issue 38: the sampler one version ahead against K = 0
        summary["async_vs_sync"] = interval(runs, "grpo_async", "grpo")
    report.write_record(out / "summary.json", summary)
    level = "" if setting.difficulty is None else f" level {setting.difficulty}"
    title = f"{Path(setting.model).name}, {setting.env_id}{level}"
    plot(runs, start, out / "accuracy.png", title)
    timed = {arm: records for arm, records in runs.items() if all("wall_seconds" in r for r in records)}
    if timed:
        plot_wall(timed, start, out / "accuracy_vs_wall.png", title)
    return summary


def wall_record(records: list[dict[str, Any]]) -> dict[str, Any]:
    """An arm's wall seconds to the end of training (evaluations included, and without them), the CPU of its
    sampler processes, and the load averages (1 min) at each seed's start and end: means over seeds;
    nothing for records from before these were kept."""
    if not all("wall_seconds" in r for r in records):
        return {}
    return {
        "wall_seconds": round(float(np.mean([r["wall_seconds"] for r in records])), 1),
        "wall_seconds_by_seed": [r["wall_seconds"] for r in records],
        "train_wall_seconds": round(float(np.mean([r["train_wall_seconds"] for r in records])), 1),
        "sampler_cpu_seconds": round(float(np.mean([r["sampler_cpu_seconds"] for r in records])), 1),
        "load_start_end": [[r["load_start"][0], r["load_end"][0]] for r in records],
    }


def plot(runs: dict[str, list[dict[str, Any]]], start: dict[str, Any], path: Path, title: str) -> None:
    """Held-out accuracy against sampled tokens: each arm's mean over seeds, the band its seeds' range, and at
    the end the 95% bootstrap interval of its accuracy (seeds and problems resampled, as in `interval`)."""
    lines = []
    for arm, records in sorted(runs.items()):
        if arm in ("start", *SFT_LINES):
            continue
        points = min(len(r["curve"]) for r in records)
        tokens = [0.0] + [float(np.mean([r["curve"][i]["tokens"] for r in records])) for i in range(points)]
        values = np.array(
            [[start["accuracy"]] + [r["curve"][i]["accuracy"] for i in range(points)] for r in records]
        )
        style = {"color": _colour(arm), "linestyle": "--" if arm.endswith("_shuffled") else "-"}
        band = (values.min(axis=0), values.max(axis=0))
        lines.append(
            report.Line(tokens, values.mean(axis=0), f"{arm} ({len(records)} seeds)", band=band, style=style)
        )
        lines.append(_final_interval(records, tokens[-1], _colour(arm)))
    levels = [
        (float(np.mean([r["accuracy"] for r in runs[arm]])), label, {"linestyle": style})
        for arm, (label, style) in SFT_LINES.items()
        if arm in runs
    ]
    report.plot(
        path,
        lines,
        xlabel="sampled completion tokens",
        ylabel="held-out greedy accuracy",
        title=f"{title}: mean of seeds, their range, 95% interval at the end",
        levels=levels,
        size=(7, 4.5),
    )


def _final_interval(records: list[dict[str, Any]], x: float, colour: str) -> report.Line:
    """An arm's final accuracy as a point with its 95% bootstrap interval (no label: its arm's line has one)."""
    final = accuracy_interval(records)
    low, high = final["ci95"]
    below, above = final["difference"] - low, high - final["difference"]
    return report.Line([x], [final["difference"]], "", yerr=[[below], [above]], style={"color": colour})


SFT_LINES = {
    "sft": ("SFT on gold answers (reference)", ":"),
    "sft_more": ("more SFT on worked solutions (one RL arm's compute)", "-."),
}
"""The arms that sample nothing, drawn as horizontal lines: their label and line style."""


def _colour(arm: str) -> str:
    """An arm and its control share a colour; the sampler-ahead arm has its own."""
    return "C3" if arm in ASYNC_ARMS else f"C{VERIFIER_ARMS.index(arm.removesuffix('_shuffled'))}"


def plot_wall(runs: dict[str, list[dict[str, Any]]], start: dict[str, Any], path: Path, title: str) -> None:
    """Held-out accuracy against wall seconds since the arm's start (evaluations included): each arm's mean
    over seeds (its range of wall seconds as horizontal bars) and at the end the 95% bootstrap interval."""
    lines = []
    for arm, records in sorted(runs.items()):
        if arm in ("start", *SFT_LINES):
            continue
        points = min(len(r["curve"]) for r in records)
        walls = np.array([[0.0] + [r["curve"][i]["wall_s"] for i in range(points)] for r in records])
        values = np.array(
            [[start["accuracy"]] + [r["curve"][i]["accuracy"] for i in range(points)] for r in records]
        )
        x = walls.mean(axis=0)
        spread = [x - walls.min(axis=0), walls.max(axis=0) - x]
        label = f"{arm} ({len(records)} seeds)"
        lines.append(report.Line(x, values.mean(axis=0), label, xerr=spread, style={"color": _colour(arm)}))
        lines.append(_final_interval(records, x[-1], _colour(arm)))
    report.plot(
        path,
        lines,
        xlabel="wall seconds since the arm's start (evaluations included)",
        ylabel="held-out greedy accuracy",
        title=f"{title}\nmean of seeds, range of their wall seconds, 95% interval at the end",
        size=(7, 4.5),
    )
