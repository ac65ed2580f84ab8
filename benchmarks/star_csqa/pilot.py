"""What `star_csqa`'s arms cost on this machine, measured small, and the full study's CPU hours from it.

Measures, with the CPU preset's setting (any of its fields is a flag): loading the model; a greedy held-out evaluation of
``--eval-problems`` validation problems zero-shot and few-shot (accuracy, readable letters, tokens, CPU-seconds);
one STaR iteration (with rationalization) on ``--star-problems`` training problems, each named step timed;
``--grpo-steps`` GRPO steps; ``--sft-steps`` steps of direct fine-tuning. Then `estimate` scales them to the
full study (every arm, ``budget_tokens`` each, two held-out evaluations of ``eval_problems`` per trained arm)
for 2 and 3 seeds. CPU-seconds are the process's own (``time.process_time``), so another job's load slows the
wall clock, not them; the load average is recorded beside them.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.star_csqa.pilot --model $REASONGYM_SMOLLM2_GGUF

Writes ``--out`` (default ``benchmarks/star_csqa/results/star_csqa/pilot.json``); last line: the same JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch  # noqa: E402

from benchmarks import star_csqa  # noqa: E402  (sets OMP_NUM_THREADS and the offline hub first)
from benchmarks.controls import RunVerdicts  # noqa: E402
from benchmarks.harness import settings  # noqa: E402
from benchmarks.real_learning import ArmRun, load  # noqa: E402
from reasongym.agents.star import train_star  # noqa: E402
from reasongym.generation import HFGenerator  # noqa: E402


def timed_evaluation(
    setting: star_csqa.Setting, model: Any, tokenizer: Any, few_shot: bool
) -> dict[str, Any]:
    """`star_csqa.held_out` on the pilot's problems, without the per-problem lists."""
    result = star_csqa.held_out(model, tokenizer, setting, few_shot=few_shot)
    tokens = result["mean_tokens"] * setting.eval_problems
    keep = ("accuracy", "extracted_rate", "finished_rate", "mean_tokens", "letters", "eval_cpu_seconds")
    return {
        **{k: result[k] for k in keep},
        "eval_wall_seconds": result["eval_wall_seconds"],
        "cpu_seconds_per_1k_tokens": round(1000 * result["eval_cpu_seconds"] / max(1.0, tokens), 2),
        "answers": [a["text"] for a in result["answers"][:3]],
    }


def timed_star_iteration(
    setting: star_csqa.Setting, model: Any, tokenizer: Any, problems: int
) -> dict[str, Any]:
    """One STaR iteration with rationalization on ``problems`` training problems: CPU-seconds per named step,
    tokens sampled (direct and hinted), rationales kept."""
    configs = star_csqa.star_configs(setting, "star", seed=0)
    configs["star"] = dataclasses.replace(configs["star"], num_train_problems=problems)
    configs["run"] = dataclasses.replace(configs["run"], max_steps=1)
    sampler = star_csqa.RationaleBudget(
        HFGenerator(model, tokenizer, batch_size=setting.generation_batch), 10**9, setting.budget_chunk
    )
    marks: list[tuple[str, float, int]] = []

    def mark(iteration: int, step: str, _model: Any) -> None:
        marks.append((step, time.process_time(), sampler.tokens))

    with tempfile.TemporaryDirectory(prefix="star-csqa-pilot-") as folder:
        train_star(
            configs["star"],
            model,
            tokenizer,
            star_csqa.make_env(setting),
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=folder,
            rationale_generator=sampler,
            on_step=mark,
        )
        marks.append(("end", time.process_time(), sampler.tokens))
        record = star_csqa.star_record(Path(folder), star_csqa.make_env(setting).unwrapped, problems)
    steps = {a[0]: round(b[1] - a[1], 1) for a, b in zip(marks, marks[1:], strict=False)}
    tokens = {a[0]: b[2] - a[2] for a, b in zip(marks, marks[1:], strict=False)}
    sampling = steps["generate"] + steps["rationalize"]
    return {
        "problems": problems,
        "cpu_seconds": steps,
        "tokens": {"direct": tokens["generate"], "hinted": tokens["rationalize"]},
        "sampling_cpu_seconds_per_1k_tokens": round(1000 * sampling / max(1, sampler.tokens), 2),
        "sft_steps": record["iterations"][0]["sft_steps"],
        "sft_cpu_seconds_per_step": round(
            steps["fine_tune"] / max(1, record["iterations"][0]["sft_steps"]), 2
        ),
        "iteration": record["iterations"][0],
        "kept_sample": record["kept_sample"][:3],
    }


def timed_grpo(setting: star_csqa.Setting, tokens: int) -> dict[str, Any]:
    """GRPO (`star_csqa.grpo_arm`) for about ``tokens`` sampled tokens: CPU-seconds per 1,000."""
    model, tokenizer = load(setting, 0)
    setting = dataclasses.replace(setting, budget_tokens=tokens)
    run = ArmRun(setting, "grpo_cot", model, tokenizer, 0, lambda _: None, RunVerdicts(0))
    started = time.process_time()
    sampled = star_csqa.grpo_arm(run)["sampled_tokens"]
    cpu = time.process_time() - started
    return {
        "tokens": sampled,
        "cpu_seconds": round(cpu, 1),
        "cpu_seconds_per_1k_tokens": round(1000 * cpu / max(1, sampled), 2),
        "train_correct": round(sum(run.verdicts.correct) / max(1, len(run.verdicts.correct)), 4),
    }


def timed_direct_sft(setting: star_csqa.Setting, steps: int) -> dict[str, Any]:
    """``steps`` steps of `star_csqa.direct_sft_arm` (batch 8 of gold letters): CPU-seconds per step."""
    model, tokenizer = load(setting, 0)
    setting = dataclasses.replace(setting, star_iterations=1, star_sft_steps=steps)
    run = ArmRun(setting, "direct_sft", model, tokenizer, 0, lambda _: None, RunVerdicts(0))
    started = time.process_time()
    star_csqa.direct_sft_arm(run)
    return {"steps": steps, "cpu_seconds_per_step": round((time.process_time() - started) / steps, 2)}


def estimate(pilot: dict[str, Any], setting: star_csqa.Setting) -> dict[str, Any]:
    """CPU hours of the full study from the pilot's rates: per arm and seed, and in all for 2 and 3 seeds."""
    per_problem = pilot["zero_shot_cot"]["eval_cpu_seconds"] / pilot["eval_problems"]
    few_per_problem = pilot["few_shot_cot"]["eval_cpu_seconds"] / pilot["eval_problems"]
    evaluations = 2 * per_problem * setting.eval_problems  # half-way and final
    load = pilot["load_cpu_seconds"]
    budget_k = setting.budget_tokens / 1000
    star = pilot["star_iteration"]
    sft_steps = star_csqa.star_total_sft_steps(setting)
    star_own_checks = (setting.star_iterations + 1) * min(8, setting.eval_problems) * per_problem
    star_seconds = (
        load
        + budget_k * star["sampling_cpu_seconds_per_1k_tokens"]
        + sft_steps * star["sft_cpu_seconds_per_step"]
        + star_own_checks
        + evaluations
    )
    per_seed = {
        "direct_sft": load + sft_steps * pilot["direct_sft"]["cpu_seconds_per_step"] + evaluations,
        "star_no_rationalization": star_seconds,
        "star": star_seconds,
        "star_random_filter": star_seconds,
        "grpo_cot": load + budget_k * pilot["grpo"]["cpu_seconds_per_1k_tokens"] + evaluations,
    }
    once = 2 * load + (per_problem + few_per_problem) * setting.eval_problems
    return {
        "budget_tokens": setting.budget_tokens,
        "eval_problems": setting.eval_problems,
        "star_problems_per_iteration": star_csqa.star_problems(setting),
        "sft_steps_per_arm": sft_steps,
        "cpu_hours_per_seed": {arm: round(seconds / 3600, 2) for arm, seconds in per_seed.items()},
        "cpu_hours_evaluation_arms": round(once / 3600, 2),
        "cpu_hours_2_seeds": round((once + 2 * sum(per_seed.values())) / 3600, 1),
        "cpu_hours_3_seeds": round((once + 3 * sum(per_seed.values())) / 3600, 1),
    }


def measure(setting: star_csqa.Setting, args: argparse.Namespace) -> dict[str, Any]:
    """Every measure of the pilot, in order, and the estimate from them."""
    small = dataclasses.replace(setting, eval_problems=args.eval_problems)
    pilot: dict[str, Any] = {"load_average_start": os.getloadavg(), "eval_problems": args.eval_problems}
    started = time.process_time()
    model, tokenizer = load(setting, 0)
    pilot["load_cpu_seconds"] = round(time.process_time() - started, 1)
    for arm, few_shot in (("zero_shot_cot", False), ("few_shot_cot", True)):
        pilot[arm] = timed_evaluation(small, model, tokenizer, few_shot)
        print(json.dumps({arm: pilot[arm]}), file=sys.stderr, flush=True)
    pilot["star_iteration"] = timed_star_iteration(small, model, tokenizer, args.star_problems)
    print(json.dumps({"star_iteration": pilot["star_iteration"]}), file=sys.stderr, flush=True)
    pilot["grpo"] = timed_grpo(setting, args.grpo_tokens)
    pilot["direct_sft"] = timed_direct_sft(setting, args.sft_steps)
    pilot["load_average_end"] = os.getloadavg()
    pilot["estimate"] = estimate(pilot, setting)
    pilot["setting"] = {**dataclasses.asdict(setting), "model": Path(setting.model).name}
    return pilot


def main() -> None:
    """Measure, estimate, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-problems", type=int, default=40)
    parser.add_argument("--star-problems", type=int, default=32)
    parser.add_argument("--grpo-tokens", type=int, default=3000)
    parser.add_argument("--sft-steps", type=int, default=8)
    parser.add_argument("--out", default="benchmarks/star_csqa/results/star_csqa/pilot.json")
    parser.add_argument(
        "--estimate-only", action="store_true", help="measure nothing: redo the estimate of --out's figures"
    )
    args, setting = settings.parse(
        parser, star_csqa.Setting, lambda _: star_csqa.PRESETS["cpu"], star_csqa.dry
    )
    if not setting.model:
        raise SystemExit("--model is required: a .gguf file, a model folder, or 'tiny'")
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    if args.estimate_only:  # the study's setting changed since the measures (its budget, its sizes)
        pilot = json.loads(Path(args.out).read_text())
        pilot["estimate"] = estimate(pilot, setting)
        pilot["setting"] = {**dataclasses.asdict(setting), "model": Path(setting.model).name}
        Path(args.out).write_text(json.dumps(pilot, indent=1) + "\n")
        print(json.dumps(pilot["estimate"]))
        return
    pilot = measure(setting, args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(pilot, indent=1) + "\n")
    print(json.dumps(pilot))


if __name__ == "__main__":
    main()
