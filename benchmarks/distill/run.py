"""How many sampled tokens each method needs to reach its teacher: on-policy distillation, GRPO from the
verifier alone, and SFT on the teacher's greedy outputs, compute-matched, several seeds (issue 40, item 4).

The setting is `study`'s: the tiny model on Arithmetic-v0 level 1 (2-digit addition, column by column),
each seed's student the study's warm start (SFT on reference solutions until a held-out probe reaches 40%).
The teacher is made here, once: a tiny model of its own seed (100) trained by SFT on the same reference
solutions past the probe, to high held-out accuracy; it shares the student's character tokenizer, so it
can score the student's tokens. From each student, every arm runs until it has SAMPLED ``--budget-tokens``
completion tokens, and held-out greedy pass@1 on the first ``--eval-problems`` test problems is measured at
a quarter, half, three quarters and all of the budget:

- ``distill``: `train_distill`, reverse KL over the vocabulary at every position of the student's own samples
  (one sample per prompt, 32 prompts a step), the teacher alone (no verifier);
- ``distill_sampled``: the same with the sampled-token estimate (what a served teacher would allow);
- ``grpo``: `study`'s GRPO arm (16 prompts x 8 samples), the verifier alone;
- ``sft_teacher``: SFT on the teacher's greedy completions of new training problems, every one kept (no
  verifier); the teacher's sampled tokens are the budget, and SFT trains on them once.

The question answered: the fewest sampled tokens at which each arm's held-out accuracy reaches the teacher's
(``tokens_to_teacher``: the first point of the curve at or above the teacher's accuracy; None if none does).

    OMP_NUM_THREADS=1 python -m benchmarks.distill --out distill_out                  # 2 seeds, ~40 CPU-min
    OMP_NUM_THREADS=1 python -m benchmarks.distill --out distill_out --seeds 0-2      # 3 seeds

Resumable per arm and seed (``results.jsonl``; warm starts and the teacher are cached). Writes ``table.md``
and ``accuracy_vs_tokens.png`` and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads

import torch  # noqa: E402

import reasongym  # noqa: E402
from benchmarks import study  # noqa: E402
from benchmarks.harness import report, settings  # noqa: E402
from benchmarks.harness.stats import t_interval  # noqa: E402
from reasongym.agents.algorithms import preset_configs  # noqa: E402
from reasongym.agents.distill import train_distill  # noqa: E402
from reasongym.agents.sft import sft_pairs_from_env, train_sft  # noqa: E402
from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.loading import format_prompt  # noqa: E402
from reasongym.policy.tiny import make_char_tokenizer, tiny_policy  # noqa: E402

ENV, DIFFICULTY = study.ENV, study.DIFFICULTY
TEACHER_SEED = 100
TEACHER_SFT_STEPS = 500
"""SFT steps of the teacher on reference solutions (the tiny preset's rate: 88% held-out after about 300)."""
TEACHER_PROMPTS_START = 30_000
"""First training problem the teacher completes for ``sft_teacher`` (past those the others train on)."""
ARMS = ("distill", "distill_sampled", "grpo", "sft_teacher")


def make_teacher(
    out: Path, meter: study.Meter, steps: int = TEACHER_SFT_STEPS
) -> tuple[torch.nn.Module, dict]:
    """The teacher (cached in ``out/teacher``), trained ``steps`` SFT steps, and its record with its held-out
    accuracy."""
    from safetensors.torch import load_file, save_file

    model, tokenizer = tiny_policy(TEACHER_SEED)
    weights, record_path = out / "teacher" / "model.safetensors", out / "teacher" / "record.json"
    if weights.exists() and record_path.exists():
        model.load_state_dict(load_file(str(weights)))
        return model, {**json.loads(record_path.read_text()), "accuracy": meter.evaluate(model)}
    started = time.process_time()
    configs = preset_configs(
        "tiny",
        "sft",
        seed=TEACHER_SEED,
        difficulty=DIFFICULTY,
        progress_bar=False,
        stop_at_accuracy=None,
        max_steps=steps,
        eval_every=100,
    )
    env = reasongym.make(ENV, difficulty=DIFFICULTY)
    pairs = sft_pairs_from_env(env, study.WARM_PAIRS * 4, split="train", tokenizer=tokenizer)
    train_sft(configs["sft"], model, tokenizer, pairs, run=configs["run"], env=env)
    record = {"sft_steps": steps, "cpu_s": time.process_time() - started}
    weights.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(weights))
    record_path.write_text(json.dumps(record))
    return model, {**record, "accuracy": meter.evaluate(model)}


def run_distill(
    student: torch.nn.Module,
    teacher: torch.nn.Module,
    seed: int,
    divergence: str,
    setting: study.StudySetting,
) -> dict:
    """`train_distill` from the student until ``budget`` sampled tokens; held-out accuracy along the way."""
    configs = preset_configs(
        "tiny",
        "distill",
        max_steps=1_000_000,
        seed=seed,
        difficulty=DIFFICULTY,
        progress_bar=False,
        samples_every=0,
        divergence=divergence,
    )
    tokenizer = make_char_tokenizer()
    meter = study.Meter(tokenizer, setting.eval_problems)
    started = time.process_time()
    budget = study.TokenBudget(setting.budget_tokens, meter)
    history = train_distill(
        configs["distill"],
        student,
        tokenizer,
        ENV,
        teacher=teacher,
        run=configs["run"],
        rollout=configs["rollout"],
        hooks=[budget],
    ).history
    return {
        "curve": meter.curve,
        "tokens": budget.tokens,
        "steps": budget.steps,
        "cpu_s": time.process_time() - started - meter.eval_cpu_s,
        "eval_cpu_s": meter.eval_cpu_s,
        "divergence_first": history[0]["distill/divergence"],
        "divergence_last": history[-1]["distill/divergence"],
        "teacher_s": sum(h["perf/teacher_s"] for h in history),
    }


def teacher_pairs(teacher: torch.nn.Module, budget: int) -> tuple[list[tuple[str, str]], int]:
    """The teacher's greedy completions of new training problems until ``budget`` completion tokens: SFT
    pairs (prompt, completion) and the tokens sampled."""
    tokenizer = make_char_tokenizer()
    env = reasongym.make(ENV, difficulty=DIFFICULTY).unwrapped
    generator = HFGenerator(teacher, tokenizer)
    params = SamplingParams(max_new_tokens=study.MAX_NEW_TOKENS, temperature=0.0, n=1)
    pairs: list[tuple[str, str]] = []
    tokens, index = 0, TEACHER_PROMPTS_START
    while tokens < budget:
        problems = [env.problem_at(i, split="train") for i in range(index, index + 64)]
        prompts = [format_prompt(tokenizer, env.messages(p)) for p in problems]
        for prompt, group in zip(prompts, generator.generate(prompts, params), strict=True):
            pairs.append((prompt, group[0].text))
            tokens += len(group[0].token_ids or ())
        index += 64
    return pairs, tokens


def run_sft_teacher(
    student: torch.nn.Module, teacher: torch.nn.Module, seed: int, setting: study.StudySetting
) -> dict:
    """SFT on the teacher's greedy completions (``budget`` sampled tokens), one pass over them."""
    tokenizer = make_char_tokenizer()
    started = time.process_time()
    pairs, sampled = teacher_pairs(teacher, setting.budget_tokens)
    configs = preset_configs(
        "tiny",
        "sft",
        seed=seed,
        difficulty=DIFFICULTY,
        progress_bar=False,
        stop_at_accuracy=None,
        max_steps=1,
    )
    steps = math.ceil(len(pairs) / configs["sft"].batch_size)
    every = max(1, steps // len(study.CURVE))
    run = dataclasses.replace(configs["run"], max_steps=steps, eval_every=every)
    meter = study.Meter(tokenizer, setting.eval_problems)
    result = train_sft(
        configs["sft"], student, tokenizer, pairs, run=run, eval_fn=lambda m: {"accuracy": meter.evaluate(m)}
    )
    per_step = sampled / steps  # the teacher's tokens behind each step's share of the pairs
    meter.curve = [
        {"tokens": per_step * step, "accuracy": metrics["eval/accuracy"]}
        for step, metrics in enumerate(result.history, start=1)
        if "eval/accuracy" in metrics
    ]
    if result.steps % every:
        meter.point(student, sampled)
    return {
        "curve": meter.curve,
        "tokens": sampled,
        "steps": result.steps,
        "cpu_s": time.process_time() - started - meter.eval_cpu_s,
        "eval_cpu_s": meter.eval_cpu_s,
    }


def tokens_to_teacher(curve: list[dict], target: float) -> float | None:
    """Sampled tokens at the first point of ``curve`` at or above ``target``; None if none is."""
    return next((point["tokens"] for point in curve if point["accuracy"] >= target), None)


def _tokens_text(tokens: list[float | None]) -> str:
    return " / ".join("not reached" if t is None else f"{t:,.0f}" for t in tokens)


def summarize(records: list[dict], warm: dict[int, dict], teacher: dict) -> tuple[str, dict]:
    """The markdown table (after a line on the teacher) and its numbers."""
    warm_acc = [w["accuracy"] for w in warm.values()]
    mean, half = t_interval(warm_acc)
    rows = [("student: warm start", f"{100 * mean:.1f} ± {100 * half:.1f}", _per_seed(warm_acc), "", "", "")]
    numbers: dict[str, Any] = {"warm_start": {"mean": mean, "ci95": half}, "teacher": teacher["accuracy"]}
    for arm in ARMS:
        runs = sorted((r for r in records if r["arm"] == arm), key=lambda r: r["seed"])
        if not runs:
            continue
        finals = [r["curve"][-1]["accuracy"] for r in runs]
        reached = [tokens_to_teacher(r["curve"], teacher["accuracy"]) for r in runs]
        near = [tokens_to_teacher(r["curve"], 0.9 * teacher["accuracy"]) for r in runs]
        mean, half = t_interval(finals)
        cpu = statistics.mean(r["cpu_s"] for r in runs)
        rows.append(
            (arm, f"{100 * mean:.1f} ± {100 * half:.1f}", _per_seed(finals), _tokens_text(reached))
            + (_tokens_text(near), f"{cpu:.0f}")
        )
        numbers[arm] = {"mean": mean, "ci95": half, "tokens_to_teacher": reached}
        numbers[arm] |= {"tokens_to_90pct_teacher": near, "seeds": len(runs)}
    header = (
        "arm",
        "held-out pass@1",
        "per seed",
        "sampled tokens to the teacher's accuracy (per seed)",
        "to 90% of it",
        "CPU-s",
    )
    teacher_line = (
        f"Teacher: held-out pass@1 {100 * teacher['accuracy']:.1f}% ({teacher['sft_steps']} SFT steps)."
    )
    return f"{teacher_line}\n\n{report.table(header, rows, right=(1, 5))}", numbers


def _per_seed(values: list[float]) -> str:
    return " / ".join(f"{100 * value:.1f}" for value in values)


def plot(records: list[dict], warm: dict[int, dict], teacher: dict, path: Path) -> None:
    """Held-out accuracy against sampled tokens per arm (mean over seeds, 95% interval), the teacher's line."""
    start = statistics.mean(w["accuracy"] for w in warm.values())
    lines = [
        study.seed_mean_line([r["curve"] for r in records if r["arm"] == arm], start, arm, {})
        for arm in ARMS
        if any(r["arm"] == arm for r in records)
    ]
    report.plot(
        path,
        lines,
        xlabel="sampled completion tokens (sft_teacher: the teacher's)",
        ylabel="held-out greedy pass@1",
        title="Reaching the teacher: distillation, GRPO and SFT on the teacher's outputs",
        levels=[(teacher["accuracy"], "teacher", {"color": "black", "linestyle": "--"})],
        size=(10, 6),
        ylim=(0, 1.05),  # a t-interval of two or three seeds reaches past [0, 1]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="distill_out")
    parser.add_argument("--seeds", default="0,1", help="e.g. 0,1 or 0-2")
    parser.add_argument("--arms", default=",".join(ARMS))
    args, setting = settings.parse(
        parser, study.StudySetting, lambda _: study.StudySetting(), study.dry, argv
    )
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kept = setting.record()
    results = out / "results.jsonl"
    records = study.load_records(results, kept)
    done = {(r["arm"], r["seed"]) for r in records}
    meter = study.Meter(make_char_tokenizer(), setting.eval_problems)
    teacher, teacher_record = make_teacher(out, meter, setting.warm_max_steps or TEACHER_SFT_STEPS)
    print(f"teacher: held-out {teacher_record['accuracy']:.3f}", flush=True)
    warm: dict[int, dict] = {}
    for seed in study.seeds_from(args.seeds):
        base, _, warm[seed] = study.warm_model(seed, meter, out / "warm", setting.warm_max_steps)
        print(f"seed {seed}: warm start held-out {warm[seed]['accuracy']:.3f}", flush=True)
        state = {k: v.clone() for k, v in base.state_dict().items()}
        for arm in args.arms.split(","):
            if (arm, seed) in done:
                continue
            base.load_state_dict(state)
            record = run(arm, base, teacher, seed, setting)
            record.update({"arm": arm, "seed": seed, "settings": kept})
            records.append(report.write_record(results, record, append=True))
            print(
                f"  {arm:>16}: pass@1 {record['curve'][-1]['accuracy']:.3f} after {record['tokens']:,.0f} "
                f"tokens, {record['cpu_s']:.0f} CPU-s",
                flush=True,
            )
    table, numbers = summarize(records, warm, teacher_record)
    (out / "table.md").write_text(table + "\n")
    plot(records, warm, teacher_record, out / "accuracy_vs_tokens.png")
    print(table)
    print(json.dumps({"bench": "distill_study", "arms": numbers, "settings": kept, "seeds": sorted(warm)}))


def run(arm: str, student: torch.nn.Module, teacher: torch.nn.Module, seed: int, setting: Any) -> dict:
    """One arm from the seed's warm start."""
    if arm == "grpo":
        return study.run_rl(study.ARMS["grpo"], student, make_char_tokenizer(), seed, setting)
    if arm == "sft_teacher":
        return run_sft_teacher(student, teacher, seed, setting)
    divergence = "sampled_reverse_kl" if arm == "distill_sampled" else "reverse_kl"
    return run_distill(student, teacher, seed, divergence, setting)


if __name__ == "__main__":
    main()
