"""The window runner: one learning experiment run across 10-minute device commands, resumed in each.

The experiment is `real_learning`'s GPU preset (``--gpu``: SmolLM2-135M-Instruct from the device kit,
2-digit additions answered with the number only, 256 new tokens at most, lr 1e-5, the bf16 sampler copy):
``grpo`` and its shuffled-reward control ``grpo_shuffled``, ``--steps`` GRPO steps each, one after the other.

What makes it fit windows:

- the run folder (``--run-dir``, default ``/tmp/reasongym-window``) is outside the checkout, so the next
  command finds it as long as the machine stays warm; each arm trains in ``RUN/ARM`` with a checkpoint every
  ``--eval-every`` steps, and SIGTERM (``timeout -s TERM`` shortly before the command's limit) checkpoints the
  last finished step and stops (exit 75: run the same command again);
- held-out greedy accuracy every ``--eval-every`` steps through the trainer's evaluation hook (``eval_fn``),
  with a record per problem (``RUN/ARM/records.jsonl``: step, index, correct, extracted answer, tokens), on
  the first ``eval_problems`` test problems of the task and the first ``side_eval_problems`` of GSM8K;
- after every command, arm or interruption, what the window learned is written to ``--out`` (``$OUT``, what
  comes back from the device): ``summary.json`` (curves, final accuracies with 95% intervals, the bar),
  ``curves.png``, ``records.jsonl`` (every per-problem record), ``metrics.jsonl`` (training metrics) and
  ``command.json`` (this command's timings).

The bar, written before any run (issue 56): ``grpo``'s final held-out accuracy at least `BAR_POINTS` above its
start with the paired 95% bootstrap interval clear of zero, and above ``grpo_shuffled``'s final accuracy.

``--dry`` runs the whole program on the CPU with the tiny random model in seconds (CI does). Run::

    source /tmp/reasongym-kit/env.sh && timeout -s TERM 540 python3 -m benchmarks.gpu_window.window --out $OUT
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks import real_learning  # noqa: E402
from benchmarks.controls import RecordedVerdicts, RunVerdicts  # noqa: E402
from benchmarks.gpu_window.records import HeldOutRecorder, pool_load, pool_save, write_outputs  # noqa: E402
from reasongym.agents.grpo import train_grpo  # noqa: E402
from reasongym.cli.signals import sigterm_as_interrupt  # noqa: E402
from reasongym.errors import TrainingInterrupted  # noqa: E402
from reasongym.policy.checkpoints import checkpoint_step, latest_checkpoint  # noqa: E402

ARMS = real_learning.GPU_ARMS
BAR_POINTS = 0.08
"""The bar: ``grpo`` ends at least this far above its start (held-out greedy accuracy), interval clear of zero."""
EXIT_RESUME = 75
"""Exit status of a command stopped before the experiment's end (EX_TEMPFAIL): run the same command again."""


@dataclasses.dataclass(frozen=True)
class Window:
    """The experiment's length and cadence (the task and model are `real_learning.PRESETS`'s ``gpu``)."""

    steps: int = 40
    """GRPO steps per arm (16 prompts x 8 samples each)."""
    eval_every: int = 10
    """Held-out evaluation and checkpoint every this many steps (and before the first, and at the end)."""
    seed: int = 0
    """The seed of both arms."""


DRY = Window(steps=4, eval_every=2)


def _start_step(folder: Path) -> int:
    """The step the arm's run folder resumes from (0: a fresh run)."""
    checkpoint = latest_checkpoint(folder, warn=False) if (folder / "checkpoints").exists() else None
    return checkpoint_step(checkpoint) if checkpoint is not None else 0


def run_arm(
    arm: str, setting: Any, window: Window, run_dir: Path, term_at: int | None = None
) -> dict[str, Any]:
    """Train ``arm`` in ``run_dir/arm`` until ``window.steps`` (resuming its checkpoint); its done record."""
    folder = run_dir / arm
    done_file = folder / "done.json"
    if done_file.exists():
        return json.loads(done_file.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    if _start_step(folder) >= window.steps:  # stopped between its last checkpoint and this record
        record = {"arm": arm, "steps": _start_step(folder), "resumed_from": _start_step(folder)}
        done_file.write_text(json.dumps(record) + "\n")
        return record
    model, tokenizer = real_learning.load(setting, window.seed)
    verdicts = RunVerdicts(window.seed)
    pool_load(verdicts, folder)
    env = RecordedVerdicts(real_learning.make_env(setting), verdicts, shuffle=arm.endswith("_shuffled"))
    start = _start_step(folder)
    recorder = HeldOutRecorder(arm, setting, folder, start, window.steps, window.eval_every, tokenizer)
    recorder.after = lambda: pool_save(verdicts, folder)
    recorder.term_at = term_at
    configs = real_learning.rl_configs(
        setting,
        "grpo",
        window.seed,
        max_steps=window.steps,
        eval_every=window.eval_every,
        eval_problems=1,  # the built-in pass@1 (one problem); the recorder is the held-out measure
        save_every=window.eval_every,
        keep_checkpoints=1,
    )
    started = time.perf_counter()
    try:
        result = train_grpo(
            configs["grpo"],
            model,
            tokenizer,
            env,
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=folder,
            eval_fn=recorder,
        )
    finally:
        pool_save(verdicts, folder)
    record = {"arm": arm, "steps": result.steps, "resumed_from": result.resumed_from}
    record["last_command_wall_s"] = round(time.perf_counter() - started, 1)
    done_file.write_text(json.dumps(record) + "\n")
    return record


def main() -> int:
    """Run (or resume) every arm not done; write the outputs; 0 when all are done, `EXIT_RESUME` if stopped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="/tmp/reasongym-window", help="outside the checkout")
    parser.add_argument("--out", default=os.environ.get("OUT"), help="where the results go (default: $OUT)")
    parser.add_argument("--model", default=None, help="default: $REASONGYM_KIT_MODEL (the kit's install)")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    parser.add_argument("--steps", type=int, default=None, help=f"per arm (default {Window.steps})")
    parser.add_argument("--eval-every", type=int, default=None, help=f"(default {Window.eval_every})")
    parser.add_argument("--dry", action="store_true", help="the tiny random model on the CPU, for seconds")
    parser.add_argument("--term-at-step", type=int, default=None, help=argparse.SUPPRESS)  # tests: a SIGTERM
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    setting = real_learning.PRESETS["gpu"]
    setting = real_learning.dry(setting) if args.dry else setting
    setting = dataclasses.replace(setting, model=args.model) if args.model else setting
    setting = real_learning.resolve_offline(setting)  # the engine decided before any evaluation
    if not setting.model:
        raise SystemExit(f"--model is required (or ${real_learning.KIT_MODEL_ENV}, set by the kit's env.sh)")
    window = DRY if args.dry else Window()
    sizes = {"steps": args.steps, "eval_every": args.eval_every}
    window = dataclasses.replace(window, **{k: v for k, v in sizes.items() if v is not None})
    run_dir, out = Path(args.run_dir), Path(args.out or Path(args.run_dir) / "out")
    run_dir.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    command = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "arms": {}}
    began, status = time.perf_counter(), "done"
    try:
        with sigterm_as_interrupt():
            for arm in args.arms:
                arm_began = time.perf_counter()
                command["arms"][arm] = {"from_step": _start_step(run_dir / arm)}
                run_arm(arm, setting, window, run_dir, args.term_at_step)
                command["arms"][arm]["wall_s"] = round(time.perf_counter() - arm_began, 1)
    except (KeyboardInterrupt, TrainingInterrupted) as stop:
        status = f"stopped: {stop}" if str(stop) else "stopped"
    command.update(status=status, wall_s=round(time.perf_counter() - began, 1), engine=setting.engine)
    summary = write_outputs(run_dir, out, args.arms, setting, window, command, BAR_POINTS)
    print(json.dumps({"status": status, "bar": summary.get("bar"), "arms": summary.get("arms")}))
    return 0 if status == "done" else EXIT_RESUME


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
