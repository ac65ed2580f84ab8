"""DAPO's entropy claim at small scale: symmetric clipping vs clip-higher, same seeds, same generated tokens.

Both arms start from the same warm-started tiny policy per seed (``reasongym.policy.loading.tiny_policy``, then
``reasongym.agents.warm_start``) and run the ``tiny`` preset's DAPO with dynamic sampling off (so both
generate exactly the same number of sequences per step) and ``mu`` inner epochs over each batch, so
that the importance ratio moves away from 1 and the clip binds.
The only difference: ``eps_high`` = ``eps_low`` = 0.2 (symmetric) versus ``eps_high`` = 0.28 (clip-higher).
Per step we record the policy's token entropy, the up-clipped and down-clipped token fractions, and the
rollout accuracy; curves go to ``--out``/entropy.jsonl and entropy.png. A run counts as collapsed when its
entropy over the last 5 steps is below ``--collapse`` (0.1) times its first step's, the trainers' own
warning threshold (`RunConfig.entropy_collapse_ratio`).

    OMP_NUM_THREADS=1 python -m benchmarks.bench_entropy [--steps 40 --mu 4 --seeds 0,1,2 --out bench_out]
    OMP_NUM_THREADS=1 python -m benchmarks.bench_entropy --temperature 0.6 --lr 3e-4   # the settings searched

Last line: one JSON object with, per arm, the mean and 95% interval over seeds of the last-5/first entropy
ratio, the collapsed seeds, the mean clip fractions and the last-5 accuracy.
Smoke run (about a minute; checks that it runs, measures nothing)::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_entropy --steps 2 --prompts 2 --target 0.05 --sft-max-steps 40 --seeds 0
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
from pathlib import Path

import torch

from benchmarks.harness.stats import t_interval
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.dapo import train_dapo
from reasongym.agents.warm_start import warm_start
from reasongym.policy.tiny import tiny_policy

ENV = "reasongym/Arithmetic-v0"

ARMS = {"symmetric": 0.2, "clip_higher": 0.28}
KEYS = ("train/entropy", "train/clip_high_frac", "train/clip_low_frac", "rollout/correct_rate")


def plot(curves: dict[tuple[str, int], list[dict[str, float]]], path: Path) -> None:
    """Entropy, up-clipped fraction and accuracy of every arm and seed against the step."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(15, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, 3)
    colors = {"symmetric": "tab:blue", "clip_higher": "tab:orange"}
    for axes, key in zip(
        panels, ("train/entropy", "train/clip_high_frac", "rollout/correct_rate"), strict=True
    ):
        for (arm, seed), rows in curves.items():
            label = arm if seed == min(s for _, s in curves) else None
            axes.plot(
                [r["step"] for r in rows], [r[key] for r in rows], color=colors[arm], label=label, alpha=0.7
            )
        axes.set_title(key)
        axes.set_xlabel("step")
        axes.legend()
    figure.savefig(path, dpi=100)


def warm_model(seed: int, args: argparse.Namespace, out: Path) -> tuple[torch.nn.Module, object]:
    """The warm-started policy of ``seed``, cached in ``out`` (per seed, target and difficulty)."""
    from safetensors.torch import load_file, save_file

    model, tokenizer = tiny_policy(seed)
    cache = (
        out
        / f"warm-seed{seed}-target{args.target}-level{args.difficulty}-sft{args.sft_max_steps}.safetensors"
    )
    if cache.exists():
        model.load_state_dict(load_file(str(cache)))
        return model, tokenizer
    sft_run = preset_configs(
        "tiny", "sft", max_steps=args.sft_max_steps, seed=seed, difficulty=args.difficulty, progress_bar=False
    )["run"]
    warm_start(model, tokenizer, ENV, target_accuracy=args.target, run=sft_run)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(cache))
    return model, tokenizer


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument(
        "--mu", type=int, default=4, help="inner epochs per batch (the clip binds from epoch 2)"
    )
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--group", type=int, default=8, help="samples per prompt")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature of the rollouts")
    parser.add_argument("--difficulty", type=int, default=1)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--collapse", type=float, default=0.1, help="last-5 / first entropy below this")
    parser.add_argument("--out", default="bench_out")
    parser.add_argument("--target", type=float, default=0.3, help="warm-start probe accuracy to stop SFT at")
    parser.add_argument(
        "--sft-max-steps", type=int, default=800, help="most warm-start SFT steps (the schedule's length)"
    )
    return parser.parse_args()


def train_arm(
    arm: str, seed: int, model: torch.nn.Module, tokenizer: object, args: argparse.Namespace
) -> list[dict[str, float]]:
    """DAPO with the arm's ``eps_high`` on a copy of the warm start; the logged `KEYS` of every step."""
    configs = preset_configs(
        "tiny",
        "dapo",
        max_steps=args.steps,
        mu=args.mu,
        lr=args.lr,
        num_prompts=args.prompts,
        group_size=args.group,
        temperature=args.temperature,
        eps_high=ARMS[arm],
        dynamic_sampling=False,
        seed=seed,
        difficulty=args.difficulty,
        progress_bar=False,
        samples_every=0,
    )
    run, rollout = configs["run"], configs["rollout"]
    history = train_dapo(
        configs["dapo"], copy.deepcopy(model), tokenizer, ENV, run=run, rollout=rollout
    ).history
    first, last = history[0]["train/entropy"], statistics.mean(h["train/entropy"] for h in history[-5:])
    print(f"seed {seed} {arm}: entropy {first:.4f} -> {last:.4f} (last 5)", flush=True)
    return [{"step": i + 1, **{k: h[k] for k in KEYS}} for i, h in enumerate(history)]


def summarize(
    curves: dict[tuple[str, int], list[dict[str, float]]], arms: list[str], args: argparse.Namespace
) -> dict[str, object]:
    """Per arm: the entropy ratio (last 5 steps over the first) with its interval over seeds, and the clips."""
    summary: dict[str, object] = {"settings": {k: v for k, v in vars(args).items() if k != "out"}}
    for arm in arms:
        runs = [rows for (name, _), rows in curves.items() if name == arm]
        ratios = [
            statistics.mean(r["train/entropy"] for r in rows[-5:]) / rows[0]["train/entropy"] for rows in runs
        ]
        mean, half = t_interval(ratios)
        summary[arm] = {
            "entropy_first": statistics.mean(rows[0]["train/entropy"] for rows in runs),
            "entropy_ratio_last5": mean,
            "entropy_ratio_ci95": half,
            "per_seed_ratio": ratios,
            "collapsed_seeds": sum(ratio < args.collapse for ratio in ratios),
            "clip_high_mean": statistics.mean(r["train/clip_high_frac"] for rows in runs for r in rows),
            "clip_low_mean": statistics.mean(r["train/clip_low_frac"] for rows in runs for r in rows),
            "acc_last5": statistics.mean(r["rollout/correct_rate"] for rows in runs for r in rows[-5:]),
        }
    return summary


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    arms = args.arms.split(",")
    curves: dict[tuple[str, int], list[dict[str, float]]] = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        model, tokenizer = warm_model(seed, args, out)
        for arm in arms:
            curves[arm, seed] = train_arm(arm, seed, model, tokenizer, args)
    with (out / "entropy.jsonl").open("w") as handle:
        for (arm, seed), rows in curves.items():
            for row in rows:
                handle.write(json.dumps({"arm": arm, "seed": seed, **row}) + "\n")
    plot(curves, out / "entropy.png")
    print(json.dumps(summarize(curves, arms, args)))


if __name__ == "__main__":
    main()
