"""The command: the smoke pass, or every (arm, seed) not yet done from the (warm-started) model, then the
summary."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.harness import report, settings
from benchmarks.real_learning.arms import (
    rl_configs,
    run_arm,
)
from benchmarks.real_learning.evaluation import held_out, load, make_env
from benchmarks.real_learning.setting import (
    ARMS,
    ASYNC_ARMS,
    CHAIN_ARMS,
    GPU_ARMS,
    KIT_MODEL_ENV,
    PRESETS,
    Setting,
    dry,
    resolve_offline,
)
from benchmarks.real_learning.summary import (
    summarize,
)
from reasongym.agents import preset_configs
from reasongym.agents.grpo import train_grpo


def smoke(setting: Setting, steps: int) -> dict[str, Any]:
    """A few GRPO steps of ``setting`` with its engine: step time, tokens/s, the reward curve, and held-out
    accuracy before and after (what `gpu_check.py --learning` prints on a GPU)."""
    model, tokenizer = load(setting, 0)
    before = held_out(model, tokenizer, setting)
    configs = rl_configs(setting, "grpo", seed=0, max_steps=steps)
    started = time.perf_counter()
    result = train_grpo(
        configs["grpo"], model, tokenizer, make_env(setting), run=configs["run"], rollout=configs["rollout"]
    )
    wall = time.perf_counter() - started
    after = held_out(model, tokenizer, setting)
    steady = result.history[1:] or result.history  # the first step pays for warm-up (engine build, kernels)
    return {
        "steps": len(result.history),
        "wall_s": round(wall, 1),
        "step_s": round(float(np.mean([h["perf/step_s"] for h in steady])), 2),
        "tokens_per_s": round(float(np.mean([h["perf/tokens_per_s"] for h in steady])), 1),
        "reward_curve": [round(h["rollout/reward_mean"], 4) for h in result.history],
        "accuracy_before": before["accuracy"],
        "accuracy_after": after["accuracy"],
        **{f"after/{k}": v for k, v in after.items() if "/" in k},
    }


def warm_started(setting: Setting, folder: Path) -> Setting:
    """The setting with its model replaced by the warm-started one (trained once into ``folder``, then reused)."""
    if setting.warm_start is None:
        return setting
    if not (folder / "config.json").exists():
        from reasongym.agents.warm_start import warm_start
        from reasongym.policy.loading import save_policy

        model, tokenizer = load(setting, 0)
        configs = preset_configs(
            "default",
            "sft",
            max_steps=setting.warm_start_max_steps,
            lr=setting.lr,
            batch_size=8,
            eval_every=10,
            eval_problems=64,
            eval_split="validation",
            difficulty=setting.difficulty,
            eval_max_new_tokens=setting.max_new_tokens,
            progress_bar=False,
        )
        done = warm_start(
            model,
            tokenizer,
            setting.env_id,
            target_accuracy=setting.warm_start,
            run=configs["run"],
            sft=configs["sft"],
        )
        print(json.dumps({"warm_start": dataclasses.asdict(done)}), file=sys.stderr, flush=True)
        save_policy(model, tokenizer, folder)
    return dataclasses.replace(setting, model=str(folder))


def check_same_setting(out: Path, setting: Setting) -> None:
    """Record the setting in ``out`` on the first run; a rerun with another one would mix results: refuse it."""
    recorded = out / "setting.json"
    current = json.loads(json.dumps({**dataclasses.asdict(setting), "model": Path(setting.model).name}))
    if not recorded.exists():
        recorded.write_text(json.dumps(current, indent=1) + "\n")
        return
    changed = {
        k: (v, current.get(k)) for k, v in json.loads(recorded.read_text()).items() if current.get(k) != v
    }
    if changed:
        raise SystemExit(
            f"{out} holds runs of another setting (field: (recorded, now)): {changed}; "
            "use another --out-dir, or remove the folder to start over"
        )


def main(argv: list[str] | None = None) -> None:
    """Parse flags; run the smoke pass, or every (arm, seed) not yet done and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="cpu", choices=sorted(PRESETS))
    parser.add_argument("--gpu", action="store_true", help="the same as --preset gpu")
    parser.add_argument(
        "--arms",
        nargs="+",
        default=None,
        choices=ARMS + ASYNC_ARMS + CHAIN_ARMS,
        help="default: ARMS; --gpu: GPU_ARMS",
    )
    parser.add_argument(
        "--seeds", nargs="*", type=int, default=[0, 1, 2], help="none: only the warm start and the start"
    )
    parser.add_argument(
        "--smoke", type=int, default=0, metavar="STEPS", help="only a GRPO smoke run of STEPS"
    )
    parser.add_argument("--out-dir", default="benchmarks/real_learning/results/real_learning")
    parser.add_argument(
        "--work-dir", default="outputs/real_learning", help="where the warm-started model goes"
    )
    args, setting = settings.parse(
        parser, Setting, lambda a: PRESETS["gpu" if a.gpu else a.preset], dry, argv
    )
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    setting = resolve_offline(setting)
    arms = args.arms or list(GPU_ARMS if args.gpu or args.preset == "gpu" else ARMS)
    if not setting.model:
        raise SystemExit(
            f"--model is required with this preset (or ${KIT_MODEL_ENV}): a .gguf file, a model folder or a hub id"
        )
    if args.smoke:
        print(
            json.dumps(
                {"smoke": smoke(warm_started(setting, Path(args.work_dir) / "warm_start"), args.smoke)}
            )
        )
        return
    out = Path(args.out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    check_same_setting(out, setting)
    setting = warm_started(setting, Path(args.work_dir) / "warm_start")
    if not (out / "runs" / "start.json").exists():  # every arm starts from the same model: measured once
        model, tokenizer = load(setting, 0)
        report.write_record(out / "runs" / "start.json", held_out(model, tokenizer, setting))
    for seed in args.seeds:
        for arm in arms:
            path = out / "runs" / f"{arm}-s{seed}.json"
            if path.exists():
                continue
            record = report.write_record(path, run_arm(setting, arm, seed))
            print(json.dumps({k: v for k, v in record.items() if k != "correct"}), flush=True)
    print(json.dumps(summarize(out, setting)))
