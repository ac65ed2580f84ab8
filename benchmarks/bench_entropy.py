"""DAPO's entropy claim at small scale: symmetric clipping vs clip-higher, same seeds, same generated tokens.

Both arms start from the same warm-started tiny policy (``reasongym.models.tiny_policy``, then
``reasongym.agents.warm_start``) and run the ``tiny`` preset's DAPO with dynamic sampling off (so both
generate exactly the same number of sequences per step) and ``mu`` inner epochs over each batch, so
that the importance ratio moves away from 1 and the clip binds.
The only difference: ``eps_high`` = ``eps_low`` = 0.2 (symmetric) versus ``eps_high`` = 0.28 (clip-higher).
Per step we record the policy's token entropy, the up-clipped and down-clipped token fractions, and the
rollout accuracy; curves go to ``--out``/entropy.jsonl and entropy.png.

    OMP_NUM_THREADS=1 python benchmarks/bench_entropy.py [--steps 40 --mu 4 --out bench_out]

Last line: one JSON object with the first/last-5 entropy and mean clip fractions of each arm.
Smoke run (about a minute; checks that it runs, measures nothing)::

    OMP_NUM_THREADS=1 python benchmarks/bench_entropy.py --steps 2 --prompts 2 --target 0.05 --sft-max-steps 40
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
from pathlib import Path

import torch

from reasongym.agents.dapo import train_dapo
from reasongym.agents.presets import preset_configs
from reasongym.agents.warm_start import warm_start
from reasongym.models import tiny_policy

ENV = "reasongym/Arithmetic-v0"
DIFFICULTY = 1

ARMS = {"symmetric": 0.2, "clip_higher": 0.28}
KEYS = ("train/entropy", "train/clip_high_frac", "train/clip_low_frac", "rollout/correct_rate")


def plot(curves: dict[str, list[dict[str, float]]], path: Path) -> None:
    """Entropy, up-clipped fraction and accuracy of both arms against the step."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(15, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, 3)
    for axes, key in zip(
        panels, ("train/entropy", "train/clip_high_frac", "rollout/correct_rate"), strict=True
    ):
        for arm, rows in curves.items():
            axes.plot([r["step"] for r in rows], [r[key] for r in rows], label=arm)
        axes.set_title(key)
        axes.set_xlabel("step")
        axes.legend()
    figure.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument(
        "--mu", type=int, default=4, help="inner epochs per batch (the clip binds from epoch 2)"
    )
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench_out")
    parser.add_argument("--warm-cache", default=None, help="save/load the warm-started weights here")
    parser.add_argument("--target", type=float, default=0.3, help="warm-start probe accuracy to stop SFT at")
    parser.add_argument(
        "--sft-max-steps", type=int, default=800, help="most warm-start SFT steps (the schedule's length)"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    model, tokenizer = tiny_policy(args.seed)
    if args.warm_cache and Path(args.warm_cache).exists():
        model.load_state_dict(torch.load(args.warm_cache))
    else:
        sft_run = preset_configs(
            "tiny", "sft", max_steps=args.sft_max_steps, seed=args.seed, difficulty=DIFFICULTY,
            progress_bar=False,
        )["run"]  # fmt: skip
        warm_start(model, tokenizer, ENV, target_accuracy=args.target, run=sft_run)
        if args.warm_cache:
            torch.save(model.state_dict(), args.warm_cache)
    curves: dict[str, list[dict[str, float]]] = {}
    for arm, eps_high in ARMS.items():
        configs = preset_configs(
            "tiny", "dapo", max_steps=args.steps, mu=args.mu, lr=args.lr, num_prompts=args.prompts,
            eps_high=eps_high, dynamic_sampling=False, seed=args.seed, difficulty=DIFFICULTY,
            progress_bar=False, samples_every=0,
        )  # fmt: skip
        run, rollout = configs["run"], configs["rollout"]
        history = train_dapo(
            configs["dapo"], copy.deepcopy(model), tokenizer, ENV, run=run, rollout=rollout
        ).history
        curves[arm] = [{"step": i + 1, **{k: h[k] for k in KEYS}} for i, h in enumerate(history)]
        print(f"{arm}: entropy {history[0]['train/entropy']:.4f} -> {history[-1]['train/entropy']:.4f}")
    with (out / "entropy.jsonl").open("w") as handle:
        for arm, rows in curves.items():
            for row in rows:
                handle.write(json.dumps({"arm": arm, **row}) + "\n")
    plot(curves, out / "entropy.png")
    summary = {}
    for arm, rows in curves.items():
        summary[f"{arm}_entropy_first"] = rows[0]["train/entropy"]
        summary[f"{arm}_entropy_last5"] = statistics.mean(r["train/entropy"] for r in rows[-5:])
        summary[f"{arm}_clip_high_mean"] = statistics.mean(r["train/clip_high_frac"] for r in rows)
        summary[f"{arm}_clip_low_mean"] = statistics.mean(r["train/clip_low_frac"] for r in rows)
        summary[f"{arm}_acc_last5"] = statistics.mean(r["rollout/correct_rate"] for r in rows[-5:])
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
