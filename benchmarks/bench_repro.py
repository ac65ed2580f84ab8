"""Why one seed gave two warm starts on two machines: a fixed-step stop amplifies rounding differences.

The old ``bench_star.py`` warm start ran the first 300 steps of a 1,000-step SFT schedule. Two machines of
the same kind gave seed 0 a base of 0.133 and 0.258 (issue 15). This script replays that warm start from
the same seed several times, once as is and otherwise with every weight multiplied by ``1 + e`` where
``e`` is drawn at float32 rounding scale (about one unit in the last place): a stand-in for a CPU whose
matrix kernels (AVX2 or AVX-512 code paths, another summation order) round differently. Every 10 steps a
greedy probe on 64 validation problems runs; per replay the script reports

- the held-out accuracy (128 test problems) at step 300, the old fixed stop, and
- the step at which the probe first reaches ``--target`` and the held-out accuracy there, the new stop
  (``SFTConfig.stop_at_accuracy``, what ``bench_star.py`` and ``study`` use).

If the fixed stop falls in the middle of the jump from a few percent to most problems, rounding-scale
differences move when the jump happens by a few steps and the step-300 accuracy by many points, while the
probe stop lands at the same accuracy by construction. ``--threads`` runs the unperturbed replay again
with that many torch threads (another reduction order on the same machine).

    OMP_NUM_THREADS=1 python -m benchmarks.bench_repro                  # seed 0, 4 replays, ~3 CPU-minutes
    OMP_NUM_THREADS=1 python -m benchmarks.bench_repro --seeds 0,1 --replays 3
    OMP_NUM_THREADS=1 python -m benchmarks.bench_repro --fixed-stop 20 --replays 2 --target 0   # smoke run

Last line: one JSON object, per seed the replays' step-300 accuracies, probe-stop steps and accuracies,
and their ranges.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads

import torch  # noqa: E402

import reasongym  # noqa: E402
from reasongym.agents.config import RunConfig  # noqa: E402
from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft  # noqa: E402
from reasongym.evaluation.runner import greedy_pass_at_1  # noqa: E402
from reasongym.generation import HFGenerator  # noqa: E402
from reasongym.policy.loading import format_prompt  # noqa: E402
from reasongym.policy.tiny import (
    make_char_tokenizer,
    make_tiny_model,  # noqa: E402
)

LAST_STEP = 600
"""A replay whose probe has not reached the target by then stops anyway (reported without a probe stop)."""


def _pairs(env: object, tokenizer: object) -> list[tuple[str, str]]:
    """The old bench_star warm start's data: 1,000 reference solutions plus 250 of them with the hint."""
    base = env.unwrapped
    pairs = sft_pairs_from_env(env, 1000, tokenizer=tokenizer, start=10_000)
    hinted = [base.problem_at(10_000 + i, split="train") for i in range(len(pairs) // 4)]
    return pairs + [
        (format_prompt(tokenizer, base.messages(p, hint=True)), pairs[i][1]) for i, p in enumerate(hinted)
    ]


def replay(seed: int, perturbation: int, args: argparse.Namespace, env: object, tokenizer: object) -> dict:
    """One warm start from ``seed``; ``perturbation`` > 0 scales the weights by 1 + rounding-scale noise."""
    model = make_tiny_model(tokenizer, seed=seed)
    if perturbation:
        noise = torch.Generator().manual_seed(perturbation)
        with torch.no_grad():
            for weight in model.parameters():
                weight.mul_(1 + 2.0**-23 * torch.randn(weight.shape, generator=noise))

    def held_out(m: torch.nn.Module, split: str, n: int) -> float:
        generator = HFGenerator(m, tokenizer)
        return greedy_pass_at_1(
            generator, env, tokenizer=tokenizer, split=split, num_problems=n, max_new_tokens=64
        )

    seen: dict[str, float] = {}

    def probe(m: torch.nn.Module) -> dict[str, float]:
        step = int(seen.get("evals", 0) + 1) * 10
        seen["evals"] = step / 10
        accuracy = held_out(m, "validation", 64)
        if accuracy >= args.target and "probe_step" not in seen:
            seen.update(probe_step=step, probe_accuracy=held_out(m, "test", 128))
        if step == args.fixed_stop:
            seen["fixed_accuracy"] = held_out(m, "test", 128)
        return {"probe": accuracy}

    run = RunConfig(
        max_steps=1000,
        lr=3e-3,
        lr_schedule="cosine",
        warmup_steps=10,
        seed=seed,
        progress_bar=False,
        eval_every=10,
    )
    train_sft(
        SFTConfig(batch_size=16),
        model,
        tokenizer,
        _pairs(env, tokenizer),
        run=run,
        eval_fn=probe,
        stop_when=lambda step: step >= LAST_STEP or (step >= args.fixed_stop and "probe_step" in seen),
    )
    return {k: v for k, v in seen.items() if k != "evals"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0")
    parser.add_argument(
        "--replays", type=int, default=4, help="the unperturbed run plus replays - 1 perturbed"
    )
    parser.add_argument("--target", type=float, default=0.25, help="the probe accuracy of the new stop")
    parser.add_argument("--fixed-stop", type=int, default=300, help="the old stop (a multiple of 10)")
    parser.add_argument(
        "--threads", type=int, default=0, help="also replay unperturbed with this many threads"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    started = time.process_time()
    tokenizer = make_char_tokenizer()
    env = reasongym.make("reasongym/Arithmetic-v0", difficulty=1, prompt_template="{question}")
    summary: dict[str, object] = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        rows = []
        for perturbation in range(args.replays):
            rows.append({"perturbation": perturbation, **replay(seed, perturbation, args, env, tokenizer)})
            print(f"seed {seed} {rows[-1]}", flush=True)
        if args.threads:
            torch.set_num_threads(args.threads)
            rows.append({"threads": args.threads, **replay(seed, 0, args, env, tokenizer)})
            torch.set_num_threads(1)
            print(f"seed {seed} {rows[-1]}", flush=True)
        fixed = [r["fixed_accuracy"] for r in rows if "fixed_accuracy" in r]
        probed = [r["probe_accuracy"] for r in rows if "probe_accuracy" in r]
        summary[str(seed)] = {
            "replays": rows,
            "fixed_stop_range": [min(fixed), max(fixed)] if fixed else None,
            "probe_stop_range": [min(probed), max(probed)] if probed else None,
        }
    print(json.dumps({**summary, "cpu_s": round(time.process_time() - started, 1)}))


if __name__ == "__main__":
    main()
