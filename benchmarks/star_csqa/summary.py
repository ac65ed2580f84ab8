"""The summary: per-arm accuracy with its interval, the comparisons, the table, the rationales as written,
the plot."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import report
from benchmarks.real_learning import (
    accuracy_interval,
    interval,
)
from benchmarks.star_csqa.evaluation import make_env
from benchmarks.star_csqa.setting import (
    ARMS,
    COMPARISONS,
    EVAL_ARMS,
    Setting,
)


def arm_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One arm over its seeds: held-out accuracy and interval, cost, kept shares, diagnostics, letters."""
    summary = {
        "seeds": len(records),
        "accuracy": round(float(np.mean([r["accuracy"] for r in records])), 4),
        "accuracy_ci95": accuracy_interval(records)["ci95"],
        "accuracy_by_seed": [r["accuracy"] for r in records],
        "extracted_rate": round(float(np.mean([r["extracted_rate"] for r in records])), 4),
        "letters": {
            k: round(float(np.mean([r["letters"][k] for r in records])), 4) for k in records[0]["letters"]
        },
        "sampled_tokens": int(np.mean([r["sampled_tokens"] for r in records])),
    }
    if "train_cpu_seconds" in records[0]:
        summary["train_cpu_seconds"] = round(float(np.mean([r["train_cpu_seconds"] for r in records])), 1)
    if "iterations" in records[0]:  # STaR: per iteration, the mean over seeds that reached it
        depth = max(len(r["iterations"]) for r in records)
        summary["iterations"] = [
            mean_rows([r["iterations"][i] for r in records if len(r["iterations"]) > i]) for i in range(depth)
        ]
    return summary


def mean_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The mean of each numeric field over ``rows`` (fields that are None in some row: over the others)."""
    out: dict[str, Any] = {"seeds": len(rows), "iteration": rows[0].get("iteration")}
    for key in [key for key in rows[0] if key != "iteration"]:
        values = [row[key] for row in rows if row.get(key) is not None]
        out[key] = round(float(np.mean(values)), 4) if values else None
    return out


def load_runs(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Every finished record in ``out/runs``, by arm."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((out / "runs").glob("*.json")):
        record = json.loads(path.read_text())
        runs.setdefault(record["arm"], []).append(record)
    return runs


def summarize(out: Path, setting: Setting) -> dict[str, Any]:
    """Every finished run: per-arm summaries, the comparisons, the table, the rationales, the plot."""
    runs = load_runs(out)
    arms = {arm: arm_summary(records) for arm, records in runs.items()}
    comparisons = {
        f"{arm} - {baseline}": interval(runs, arm, baseline)
        for arm, baseline in COMPARISONS
        if arm in runs and baseline in runs
    }
    summary = {
        "setting": {**dataclasses.asdict(setting), "model": Path(setting.model).name},
        "arms": arms,
        "comparisons": comparisons,
        "one_letter_accuracy": one_letter_accuracy(setting),
    }
    report.write_record(out / "summary.json", summary)
    (out / "table.md").write_text(table(arms, comparisons) + one_letter_line(summary["one_letter_accuracy"]))
    (out / "rationales.md").write_text(rationales(runs))
    plot(runs, out / "accuracy.png", f"{Path(setting.model).name}, CommonsenseQA validation")
    return summary


def one_letter_accuracy(setting: Setting) -> dict[str, float]:
    """The held-out accuracy of always answering one letter: what an arm that collapsed onto a letter scores
    (the gold letters are not uniform: E is the most common)."""
    env = make_env(setting).unwrapped
    gold = [env.problem_at(i, split="validation").answer for i in range(setting.eval_problems)]
    return {letter: round(gold.count(letter) / len(gold), 4) for letter in "ABCDE"}


def one_letter_line(accuracy: dict[str, float]) -> str:
    """`one_letter_accuracy` as a line under the table."""
    each = ", ".join(f"{letter} {value:.3f}" for letter, value in accuracy.items())
    return f"\nAlways answering one letter scores: {each}.\n"


def table(arms: dict[str, Any], comparisons: dict[str, Any]) -> str:
    """The markdown table of the arms (in `ARMS` order) and of the comparisons."""
    header = (
        "arm",
        "seeds",
        "held-out accuracy",
        "95% interval",
        "letter read",
        "sampled tokens",
        "train CPU s",
        "kept share per iteration",
        "kept naming another option (last named)",
        "letters A/B/C/D/E/none",
    )
    rows = [_arm_row(arm, arms[arm]) for arm in ARMS if arm in arms]
    differences = [
        (name, f"{c['difference']:+.3f}", f"[{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}]")
        for name, c in comparisons.items()
    ]
    arms_table = report.table(header, rows, right=(1, 2, 4, 5, 6))
    comparisons_table = report.table(("comparison", "difference", "95% interval"), differences, right=(1,))
    return f"{arms_table}\n\n{comparisons_table}\n"


def _arm_row(arm: str, s: dict[str, Any]) -> tuple[Any, ...]:
    """One arm's cells: accuracy and interval, letters read, cost, kept shares, lucky guesses, letters."""
    iterations = s.get("iterations", [])
    kept = " / ".join(f"{it['kept_share']:.2f}" for it in iterations) or "-"
    lucky = " / ".join(
        f"{it['kept_names_other']:.2f} ({it['kept_last_named_other']:.2f})"
        for it in iterations
        if it["kept_names_other"] is not None
    )
    letters = "/".join(f"{100 * s['letters'][k]:.0f}" for k in ("A", "B", "C", "D", "E", "none"))
    low, high = s["accuracy_ci95"]
    return (
        arm,
        s["seeds"],
        f"{s['accuracy']:.3f}",
        f"[{low:.3f}, {high:.3f}]",
        f"{s['extracted_rate']:.2f}",
        f"{s['sampled_tokens']:,}",
        s.get("train_cpu_seconds", "-"),
        kept,
        lucky or "-",
        letters,
    )


def rationales(runs: dict[str, list[dict[str, Any]]]) -> str:
    """10 held-out answers before training (``zero_shot_cot``) and after (each trained arm's first seed), and
    10 rationales STaR kept in its last iteration: as the model wrote them."""
    parts = ["# Rationales on CommonsenseQA, as the model wrote them\n"]
    for arm in [a for a in ARMS if a in runs]:
        record = min(runs[arm], key=lambda r: r["seed"] or 0)
        title = "before training" if arm == "zero_shot_cot" else f"after, seed {record['seed']}"
        parts.append(f"## {arm} ({title}): held-out answers\n")
        for answer in record["answers"]:
            parts.append(
                f"**Q:** {answer['question']} (gold {answer['gold']}, picked {answer['picked']})\n\n"
                f"```\n{answer['text']}\n```\n"
            )
        if record.get("kept_sample"):
            parts.append(f"## {arm}: rationales kept in its last iteration (seed {record['seed']})\n")
            parts += [
                f"```\n[{k['source']}, train {k['index']}] {k['text']}\n```\n" for k in record["kept_sample"]
            ]
    return "\n".join(parts)


def plot(runs: dict[str, list[dict[str, Any]]], path: Path, title: str) -> None:
    """Held-out accuracy against sampled tokens: each trained arm's mean over seeds and their range, from the
    starting model (``zero_shot_cot``); evaluation-only arms and ``direct_sft`` (samples nothing) as lines."""
    start = runs["zero_shot_cot"][0]["accuracy"] if "zero_shot_cot" in runs else None
    lines, levels = [], [(0.2, "chance (1 in 5)", {"linewidth": 0.8})]
    for position, arm in enumerate(ARMS):
        if arm not in runs:
            continue
        records, style = runs[arm], {"color": f"C{position}"}
        if arm in EVAL_ARMS or arm == "direct_sft":
            mean = float(np.mean([r["accuracy"] for r in records]))
            levels.append((mean, f"{arm} ({len(records)} runs)", {**style, "linestyle": ":"}))
            continue
        points = min(len(r["curve"]) for r in records)
        tokens = [float(np.mean([r["curve"][i]["tokens"] for r in records])) for i in range(points)]
        values = np.array([[r["curve"][i]["accuracy"] for i in range(points)] for r in records])
        if start is not None:
            tokens, values = [0.0, *tokens], np.hstack([np.full((len(records), 1), start), values])
        band = (values.min(axis=0), values.max(axis=0))
        label = f"{arm} ({len(records)} seeds)"
        lines.append(report.Line(tokens, values.mean(axis=0), label, band=band, style=style))
    report.plot(
        path,
        lines,
        xlabel="sampled completion tokens",
        ylabel="held-out greedy accuracy",
        title=f"{title}: mean of seeds and their range",
        levels=levels,
        size=(7, 4.5),
    )
