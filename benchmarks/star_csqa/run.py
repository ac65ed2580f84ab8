"""The command: every (arm, seed) not yet done, then the summary."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch

from benchmarks.harness import report, settings
from benchmarks.real_learning import (
    KIT_MODEL_ENV,
    check_same_setting,
    resolve_offline,
)
from benchmarks.star_csqa.arms import (
    evaluation_arm,
    run_arm,
)
from benchmarks.star_csqa.setting import (
    ARMS,
    EVAL_ARMS,
    PRESETS,
    TRAINED_ARMS,
    Setting,
    dry,
)
from benchmarks.star_csqa.summary import (
    summarize,
)


def run_all(out: Path, setting: Setting, arms: list[str], seeds: list[int]) -> None:
    """Every (arm, seed) not yet in ``out/runs`` (an evaluation-only arm once), each written when done."""
    for arm in [a for a in arms if a in EVAL_ARMS]:
        path = out / "runs" / f"{arm}.json"
        if not path.exists():
            report.write_record(path, evaluation_arm(setting, arm))
    for seed in seeds:
        for arm in [a for a in arms if a in TRAINED_ARMS]:
            path = out / "runs" / f"{arm}-s{seed}.json"
            if path.exists():
                continue
            record = report.write_record(path, run_arm(setting, arm, seed))
            print(
                json.dumps({k: v for k, v in record.items() if k not in ("correct", "answers")}), flush=True
            )


def main(argv: list[str] | None = None) -> None:
    """Parse flags; run every (arm, seed) not yet done, then the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="cpu", choices=sorted(PRESETS), help="the sizes (see PRESETS)")
    parser.add_argument(
        "--gpu", action="store_true", help="--preset gpu: one GPU window, offline (the kit's model)"
    )
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--out-dir", default="benchmarks/star_csqa/results/star_csqa")
    args, setting = settings.parse(
        parser, Setting, lambda a: PRESETS["gpu" if a.gpu else a.preset], dry, argv
    )
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    setting = resolve_offline(setting)
    if not setting.model:
        raise SystemExit(
            f"--model is required with this preset (or ${KIT_MODEL_ENV}): a .gguf file, a model folder or a hub id"
        )
    out = Path(args.out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    check_same_setting(out, setting)
    run_all(out, setting, args.arms, args.seeds)
    print(json.dumps(summarize(out, setting)))
