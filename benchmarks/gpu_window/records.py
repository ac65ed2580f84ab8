"""What the window runner keeps and returns: per-problem held-out records, the control's verdict pool across
commands, and the outputs written under ``$OUT`` (summary with intervals and the bar, curves, records,
metrics, the commands' timings)."""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import reasongym
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.rollouts.batch import collect_rollouts

REPS = 2000
"""Bootstrap resamples of every interval."""


def eval_steps(start: int, steps: int, every: int) -> list[int]:
    """The steps at which a run resumed from ``start`` evaluates: before training when fresh, every ``every``
    steps and at the last (`reasongym.agents.runtime.session.RLSession.finish_step`'s rule)."""
    later = [s for s in range(start + 1, steps + 1) if s % every == 0 or s == steps]
    return ([0] if start == 0 else []) + later


class HeldOutRecorder:
    """The trainer's evaluation hook (``eval_fn``): greedy held-out accuracy with a record per problem.

    The task's first ``eval_problems`` test problems (its instruction and level) and the first
    ``side_eval_problems`` of each other held-out environment (its own prompt), appended to
    ``folder/records.jsonl`` under the step the trainer is at (`eval_steps`); on a GPU with the bf16 sampler
    copy, sampled from a bfloat16 copy of the current weights, as the trainer samples.
    """

    def __init__(
        self, arm: str, setting: Any, folder: Path, start: int, steps: int, every: int, tokenizer: Any
    ) -> None:
        self.arm, self.setting, self.folder, self.tokenizer = arm, setting, folder, tokenizer
        self.pending = collections.deque(eval_steps(start, steps, every))
        self.copy: Any = None
        self.after: Callable[[], None] = lambda: None
        """Called after each evaluation (the runner saves the control's verdict pool there)."""
        self.term_at: int | None = None
        """Tests: send this process SIGTERM after the evaluation of this step, as ``timeout -s TERM`` would."""

    def _sampler(self, model: Any) -> Any:
        bf16 = self.setting.sampler_weights == "bf16" and next(model.parameters()).device.type == "cuda"
        if not bf16:
            return HFGenerator(model, self.tokenizer)
        from reasongym.generation.low_precision import LowPrecisionGenerator
        from reasongym.generation.vllm_engine import hf_weights

        if self.copy is None:
            self.copy = LowPrecisionGenerator(model, self.tokenizer)
        else:
            self.copy.load_weights(hf_weights(model))
        return self.copy

    def __call__(self, model: Any) -> dict[str, float]:
        step = self.pending.popleft() if self.pending else -1
        sampler, setting = self._sampler(model), self.setting
        params = SamplingParams(temperature=0.0, max_new_tokens=setting.max_new_tokens)
        metrics, rows = {}, []
        for position, env_id in enumerate(setting.eval_env_ids):
            first = position == 0
            env = _task_env(setting) if first else reasongym.make(env_id)
            count = setting.eval_problems if first else setting.side_eval_problems or setting.eval_problems
            batch = collect_rollouts(
                env,
                sampler,
                self.tokenizer,
                list(range(count)),
                params=params,
                split="test",
                difficulty=setting.difficulty if first else None,
            )
            name = env_id.split("/")[-1]
            correct = batch.correct.tolist()
            metrics[f"eval/heldout_{name}"] = float(np.mean(correct))
            for index, right in enumerate(correct):
                rows.append(
                    {
                        "arm": self.arm,
                        "step": step,
                        "env": name,
                        "index": index,
                        "correct": bool(right),
                        "extracted": batch.extracted[index],
                        "tokens": int(batch.lengths[index]),
                        "truncated": bool(batch.truncated[index]),
                    }
                )
        with (self.folder / "records.jsonl").open("a") as stream:
            stream.writelines(json.dumps(row) + "\n" for row in rows)
        self.after()
        if step == self.term_at:
            os.kill(os.getpid(), signal.SIGTERM)
        return metrics


def _task_env(setting: Any) -> Any:
    kwargs = {} if setting.instruction is None else {"instruction": setting.instruction}
    return reasongym.make(setting.env_id, **kwargs)


# ---------------------------------------------------------------------------------------------- the control


def pool_save(verdicts: Any, folder: Path) -> None:
    """The shuffled control's state (`controls.RunVerdicts.state`) into ``folder``."""
    (folder / "verdicts.json").write_text(json.dumps(verdicts.state()))


def pool_load(verdicts: Any, folder: Path) -> None:
    """Restore `pool_save`'s state, when ``folder`` has one (a resumed arm draws from the same pool)."""
    path = folder / "verdicts.json"
    if path.exists():
        verdicts.restore(json.loads(path.read_text()))


# ---------------------------------------------------------------------------------------------- outputs


def paired_interval(a: list[bool], b: list[bool], reps: int = REPS) -> dict[str, Any]:
    """Mean of ``a`` minus mean of ``b`` (the same problems) with a 95% bootstrap interval over problems."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(0)
    draws = [(x[i] - y[i]).mean() for i in (rng.integers(0, len(x), len(x)) for _ in range(reps))]
    low, high = np.percentile(draws, [2.5, 97.5])
    return {
        "difference": round(float(x.mean() - y.mean()), 4),
        "ci95": [round(float(low), 4), round(float(high), 4)],
    }


def _records(run_dir: Path, arms: list[str]) -> list[dict[str, Any]]:
    rows = []
    for arm in arms:
        path = run_dir / arm / "records.jsonl"
        if path.exists():
            rows.extend(json.loads(line) for line in path.read_text().splitlines() if line)
    return rows


def _by_step(rows: list[dict[str, Any]], arm: str, env: str) -> dict[int, list[bool]]:
    steps: dict[int, list[bool]] = collections.defaultdict(list)
    for row in sorted((r for r in rows if r["arm"] == arm and r["env"] == env), key=lambda r: r["index"]):
        steps[row["step"]].append(row["correct"])
    return dict(sorted(steps.items()))


def summarize(run_dir: Path, arms: list[str], setting: Any, window: Any, bar_points: float) -> dict[str, Any]:
    """Each arm's curves, its last evaluation with a 95% interval against the start, and the bar."""
    rows, task = _records(run_dir, arms), setting.eval_env_ids[0].split("/")[-1]
    envs = [env_id.split("/")[-1] for env_id in setting.eval_env_ids]
    summary: dict[str, Any] = {"task": task, "envs": envs, "window": dataclasses.asdict(window), "arms": {}}
    finals: dict[str, list[bool]] = {}
    for arm in arms:
        curves = {env: _by_step(rows, arm, env) for env in envs}
        if not curves[task]:
            continue
        steps = list(curves[task])
        start, last = curves[task][steps[0]], curves[task][steps[-1]]
        finals[arm] = last
        summary["arms"][arm] = {
            "done": (run_dir / arm / "done.json").exists(),
            "last_step": steps[-1],
            "curves": {
                env: {str(s): round(float(np.mean(v)), 4) for s, v in c.items()} for env, c in curves.items()
            },
            "vs_start": paired_interval(last, start) if steps[0] == 0 else None,
        }
    summary["bar"] = _bar(summary["arms"], finals, bar_points)
    return summary


def _bar(arms: dict[str, Any], finals: dict[str, list[bool]], points: float) -> dict[str, Any]:
    """Whether ``grpo`` beats its start by ``points`` (interval clear of zero) and its shuffled control."""
    done = all(arms.get(arm, {}).get("done") for arm in ("grpo", "grpo_shuffled"))
    if not done:
        return {"decided": False, "why": "both arms must finish (grpo, grpo_shuffled)"}
    vs_start = arms["grpo"]["vs_start"]
    vs_control = paired_interval(finals["grpo"], finals["grpo_shuffled"])
    holds = vs_start["difference"] >= points and vs_start["ci95"][0] > 0 and vs_control["difference"] > 0
    return {"decided": True, "holds": holds, "points": points, "vs_start": vs_start, "vs_control": vs_control}


def write_outputs(
    run_dir: Path,
    out: Path,
    arms: list[str],
    setting: Any,
    window: Any,
    command: dict[str, Any],
    points: float,
) -> dict[str, Any]:
    """``summary.json``, ``curves.png``, ``records.jsonl``, ``metrics.jsonl`` and ``command.json`` in ``out``."""
    with (run_dir / "commands.jsonl").open("a") as stream:
        stream.write(json.dumps(command) + "\n")
    summary = summarize(run_dir, arms, setting, window, points)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _records(run_dir, arms)))
    metrics = []
    for arm in arms:
        path = run_dir / arm / "metrics.jsonl"
        if path.exists():
            metrics.extend(
                json.dumps({"arm": arm, **json.loads(line)}) for line in path.read_text().splitlines()
            )
    (out / "metrics.jsonl").write_text("".join(line + "\n" for line in metrics))
    commands = [json.loads(line) for line in (run_dir / "commands.jsonl").read_text().splitlines()]
    (out / "command.json").write_text(json.dumps(commands, indent=1) + "\n")
    plot(summary, out / "curves.png")
    return summary


def plot(summary: dict[str, Any], path: Path) -> None:
    """Held-out greedy accuracy against GRPO steps: each arm's task curve (solid) and the others (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2))
    for number, (arm, record) in enumerate(summary["arms"].items()):
        for env, curve in record["curves"].items():
            style = "-" if env == summary["task"] else "--"
            steps = [int(s) for s in curve]
            axes.plot(
                steps, list(curve.values()), style, marker="o", color=f"C{number}", label=f"{arm}: {env}"
            )
    axes.set_xlabel("GRPO step")
    axes.set_ylabel("held-out greedy accuracy")
    axes.set_title(f"GPU window: {summary['task']} (solid) and beside it (dashed)", fontsize=9)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
