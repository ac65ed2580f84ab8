"""reasoning-gym through reasongym: adapter overhead, grader disagreements on real completions, GRPO steps.

Three parts, each optional:

- ``overhead`` (always): for every registered reasoning-gym task, problems per second through the adapter
  (``source.problem(split, i)``: the seeded draw, the split-hash rejection, the item, the Problem) and
  directly (``dataset[i]`` on the same dataset object), on the train and the test split, for
  ``--seconds`` each. The ratio direct / adapter is the overhead factor (the test split keeps one draw
  in ten, so its factor is about 10 by design).
- ``graders`` (``--graders``): SmolLM2-135M-Instruct (``$REASONGYM_SMOLLM2_GGUF``) samples completions
  on every task graded by reasongym's math or Countdown verifier; each completion is graded by the
  environment and by the task's own ``score_answer`` on the same extracted answer, and the
  disagreements are counted per task, with examples. Completions are kept in ``--completions`` so a
  rerun grades without sampling. Their scorer is not run on an answer it would ``eval`` as code.
- ``grpo`` (``--grpo``): a few GRPO steps of the tiny random-init model on ``reasoning_gym/basic_arithmetic-v0``.

Last line: one JSON object. Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_reasoning_gym.py [--graders] [--grpo]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import reasongym  # noqa: E402
from reasongym.envs.rgym.source import index_space  # noqa: E402
from reasongym.envs.rgym.table import TASKS  # noqa: E402
from reasongym.verifiers.tagged import extract_tagged_answer  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
_MATHLIKE = re.compile(r"[\w\s.+\-*/^(),=]*")  # what their sympy-based scorers may read: no quotes, no __


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="time budget per task and split")
    parser.add_argument("--graders", action="store_true", help="grade SmolLM2 completions both ways")
    parser.add_argument("--problems", type=int, default=8, help="problems per task for --graders")
    parser.add_argument("--samples", type=int, default=4, help="completions per problem for --graders")
    parser.add_argument("--completions", default=str(RESULTS / "rg_smollm2_completions.jsonl"))
    parser.add_argument("--tasks", nargs="*", help="only these tasks (default: every registered one)")
    parser.add_argument("--grpo", action="store_true", help="a few GRPO steps of the tiny model")
    parser.add_argument("--steps", type=int, default=3, help="GRPO steps")
    return parser.parse_args()


def _rate(body: Any, seconds: float) -> float:
    start, count = time.perf_counter(), 0
    while count < 3 or time.perf_counter() - start < seconds:
        body(count)
        count += 1
    return count / (time.perf_counter() - start)


def measure_overhead(seconds: float, tasks: list[str] | None = None) -> dict[str, Any]:
    """Problems/s through the adapter and directly, per task, on the train and test splits."""
    rows = {}
    for name in tasks or TASKS:
        env = reasongym.make(f"reasoning_gym/{name}-v0").unwrapped
        source, dataset = env.source, env.source.dataset(None)
        source.problem("train", 0)  # untimed: makes the dataset, warms caches
        space = index_space(name)
        row = {"direct_per_s": _rate(lambda i, d=dataset, n=space: d[(777 + i) % n], seconds)}
        for split in ("train", "test"):
            row[f"{split}_per_s"] = _rate(lambda i, s=source, sp=split: s.problem(sp, 1000 + i), seconds)
            row[f"{split}_overhead"] = row["direct_per_s"] / row[f"{split}_per_s"]
        rows[name] = row
    train = [row["train_overhead"] for row in rows.values()]
    test = [row["test_overhead"] for row in rows.values()]
    print(f"{'task':28s} {'direct/s':>10s} {'train/s':>10s} {'x':>6s} {'test/s':>10s} {'x':>6s}")
    for name, row in rows.items():
        print(f"{name:28s} {row['direct_per_s']:10.0f} {row['train_per_s']:10.0f} {row['train_overhead']:6.2f} "
              f"{row['test_per_s']:10.0f} {row['test_overhead']:6.2f}")  # fmt: skip
    summary = {
        "tasks": len(rows),
        "train_overhead_median": statistics.median(train),
        "train_overhead_p90": sorted(train)[int(0.9 * len(train))],
        "test_overhead_median": statistics.median(test),
    }
    print(json.dumps(summary))
    return {"per_task": rows, **summary}


def _sample(path: Path, problems: int, samples: int) -> list[dict[str, Any]]:
    """SmolLM2 completions on every math- or Countdown-graded task, sampled once and kept in ``path``."""
    if path.exists():
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    gguf = os.environ.get("REASONGYM_SMOLLM2_GGUF")
    if not gguf or not Path(gguf).is_file():
        raise SystemExit(
            "--graders needs $REASONGYM_SMOLLM2_GGUF (the SmolLM2 GGUF file) or a kept --completions"
        )
    from reasongym.evaluation import evaluate, load_records
    from reasongym.policy.loading import load_policy

    model, tokenizer = load_policy(gguf, device="cpu")
    path.parent.mkdir(parents=True, exist_ok=True)
    for name, (_, grader, _, _) in TASKS.items():
        if grader not in ("math", "countdown"):
            continue
        part = path.with_suffix(f".{name}.jsonl")
        evaluate(model, f"reasoning_gym/{name}-v0", tokenizer=tokenizer, n=samples, num_problems=problems,
                 temperature=0.8, max_new_tokens=256, out_path=part, batch_size=problems, progress=False,
                 verbose=False)  # fmt: skip
        with path.open("a", encoding="utf-8") as out:
            for record in load_records(part):
                out.write(json.dumps({"task": name, **record}) + "\n")
        part.unlink()
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _theirs(env: Any, problem: Any, completion: str) -> bool | None:
    """Their scorer on our extracted answer: True at 1; None when the answer would be eval'd as code."""
    answer = extract_tagged_answer(completion).answer
    if answer is None:
        answer = reasongym.verifiers.extract_math_answer(completion, last_number_fallback=False).answer
    if answer is None:
        return False
    if not _MATHLIKE.fullmatch(answer) or "__" in answer:
        return None
    try:
        return (
            env.source.dataset(problem.metadata.get("level")).score_answer(
                answer, env.source.entry_of(problem)
            )
            >= 1
        )
    except Exception:  # noqa: BLE001 - a scorer failing on a model answer counts as 0
        return False


def compare_graders(args: argparse.Namespace) -> dict[str, Any]:
    """Disagreements between our grading and the task's own scorer, per task, on real completions."""
    records = _sample(Path(args.completions), args.problems, args.samples)
    per_task: dict[str, dict[str, Any]] = {}
    for record in records:
        env = reasongym.make(f"reasoning_gym/{record['task']}-v0").unwrapped
        problem = env.problem_at(record["index"], split=record["split"])
        row = per_task.setdefault(record["task"], {"completions": 0, "ours_correct": 0, "theirs_correct": 0,
                                                   "ours_only": 0, "theirs_only": 0, "skipped": 0, "examples": []})  # fmt: skip
        for completion, verdict in zip(record["completions"], env.score_many(problem, record["completions"]),
                                       strict=True):  # fmt: skip
            theirs = _theirs(env, problem, completion)
            row["completions"] += 1
            if theirs is None:
                row["skipped"] += 1
                continue
            ours = bool(verdict.correct)
            row["ours_correct"] += ours
            row["theirs_correct"] += theirs
            if ours != theirs:
                row["ours_only" if ours else "theirs_only"] += 1
                if len(row["examples"]) < 3:
                    row["examples"].append({"gold": problem.answer, "extracted": verdict.extracted,
                                            "ours": ours, "theirs": theirs})  # fmt: skip
    for name, row in sorted(per_task.items()):
        print(f"{name:28s} n={row['completions']:3d} ours {row['ours_correct']:3d} theirs {row['theirs_correct']:3d} "
              f"ours-only {row['ours_only']:2d} theirs-only {row['theirs_only']:2d} skipped {row['skipped']}")  # fmt: skip
        for example in row["examples"]:
            print(f"    {example}")
    total = {key: sum(row[key] for row in per_task.values())
             for key in ("completions", "ours_correct", "theirs_correct", "ours_only", "theirs_only", "skipped")}  # fmt: skip
    return {"per_task": per_task, **total}


def run_grpo(steps: int) -> dict[str, Any]:
    """A few GRPO steps of the tiny model on one reasoning-gym task: it runs, and how fast."""
    from reasongym.agents import preset_configs, train_grpo
    from reasongym.policy.tiny import tiny_policy

    model, tokenizer = tiny_policy(seed=0)
    configs = preset_configs("tiny", "grpo", max_steps=steps, num_prompts=4, progress_bar=False)
    start = time.perf_counter()
    result = train_grpo(configs["grpo"], model, tokenizer, "reasoning_gym/basic_arithmetic-v0",
                        run=configs["run"], rollout=configs["rollout"])  # fmt: skip
    seconds = time.perf_counter() - start
    history = [{k: v for k, v in row.items() if k.startswith(("rollout/reward_mean", "loss/policy"))}
               for row in result.history]  # fmt: skip
    print(f"GRPO: {steps} steps in {seconds:.1f} s; {history}")
    return {"steps": steps, "seconds": seconds, "history": history}


def main() -> None:
    args = _parse_args()
    out: dict[str, Any] = {
        "reasoning_gym": __import__("importlib.metadata").metadata.version("reasoning-gym")
    }
    overhead = measure_overhead(args.seconds, args.tasks)
    out.update({k: v for k, v in overhead.items() if k != "per_task"})
    if args.graders:
        graders = compare_graders(args)
        out["graders"] = {k: v for k, v in graders.items() if k != "per_task"}
        out["graders_per_task"] = {k: {x: y for x, y in v.items() if x != "examples"}
                                   for k, v in graders["per_task"].items()}  # fmt: skip
    if args.grpo:
        out["grpo"] = run_grpo(args.steps)
    sys.stdout.flush()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
