"""reasoning-gym through reasongym: adapter overhead, grader disagreements on real completions, GRPO steps.

Three parts, each optional:

- ``overhead`` (always): for every registered reasoning-gym task, problems per second through the adapter
  (``source.problem(split, i)``: the seeded draw, the split-hash rejection, the item, the Problem) and
  directly (``dataset[i]`` on the same dataset object), on the train and the test split, for
  ``--seconds`` each. The ratio direct / adapter is the overhead factor (the test split keeps one draw
  in ten, so its factor is about 10 by design).
- ``graders`` (``--graders``): SmolLM2-135M-Instruct (``$REASONGYM_SMOLLM2_GGUF``) samples ``--samples``
  completions of ``--max-new-tokens`` tokens for ``--problems`` test problems of each task in ``--tasks``
  graded by our math or Countdown verifier (default :data:`GRADER_TASKS`); with ``--hinted`` the prompt
  shows the gold (STaR's rationalization prompt), so that the model writes correct answers in its own
  forms. Each completion is graded by the environment and by the task's own ``score_answer`` on the answer
  the environment graded (correct at 1), and by reasoning-gym's whole pipeline
  (``reasoning_gym.utils.extract_answer``, the ``<answer>`` tag only, then the scorer); the disagreements are
  counted per task, printed and written to ``--disagreements``. Completions are kept in ``--completions``
  (tasks already there are not sampled again). Their scorer is not run on an answer it would ``eval`` as
  code (``skip``).
- ``grpo`` (``--grpo``): a few GRPO steps of the tiny random-init model on ``reasoning_gym/basic_arithmetic-v0``.

Last line: one JSON object. Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_reasoning_gym [--graders [--hinted]] [--grpo]``.
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
    parser.add_argument("--samples", type=int, default=2, help="completions per problem for --graders")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="tokens per completion for --graders")
    parser.add_argument(
        "--hinted",
        action="store_true",
        help="--graders samples with the hint prompt (the gold shown, STaR's rationalization)",
    )
    parser.add_argument(
        "--disagreements",
        default=str(RESULTS / "rg_grader_disagreements.jsonl"),
        help="where --graders writes every disagreement (empty: nowhere)",
    )
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
        print(
            f"{name:28s} {row['direct_per_s']:10.0f} {row['train_per_s']:10.0f} {row['train_overhead']:6.2f} "
            f"{row['test_per_s']:10.0f} {row['test_overhead']:6.2f}"
        )
    summary = {
        "tasks": len(rows),
        "train_overhead_median": statistics.median(train),
        "train_overhead_p90": sorted(train)[int(0.9 * len(train))],
        "test_overhead_median": statistics.median(test),
    }
    print(json.dumps(summary))
    return {"per_task": rows, **summary}


GRADER_TASKS = (
    "basic_arithmetic",
    "chain_sum",
    "decimal_chain_sum",
    "products",
    "gcd",
    "leg_counting",
    "gsm_symbolic",
    "simple_equations",
    "polynomial_equations",
    "simple_integration",
)
"""Ten of the 27 tasks graded by our math verifier: integers, decimals, word problems, equations, roots
and antiderivatives (the forms where their string comparison, first-number, distance or sympy scorers differ)."""


def _load_policy() -> tuple[Any, Any]:
    gguf = os.environ.get("REASONGYM_SMOLLM2_GGUF")
    if not gguf or not Path(gguf).is_file():
        raise SystemExit(
            "--graders needs $REASONGYM_SMOLLM2_GGUF (the SmolLM2 GGUF file) or a kept --completions"
        )
    from reasongym.policy.loading import load_policy

    return load_policy(gguf, device="cpu")


def _sample_task(
    model: Any, tokenizer: Any, name: str, args: argparse.Namespace, part: Path
) -> list[dict[str, Any]]:
    """One task's records: the environment's prompt through ``evaluate``, or with ``--hinted`` its hint prompt
    (the gold shown, as STaR's rationalization asks), sampled directly."""
    from reasongym.evaluation import evaluate, load_records
    from reasongym.generation import SamplingParams
    from reasongym.generation.hf import HFGenerator
    from reasongym.policy.loading import format_prompt

    if not args.hinted:
        evaluate(
            model,
            f"reasoning_gym/{name}-v0",
            tokenizer=tokenizer,
            n=args.samples,
            num_problems=args.problems,
            temperature=0.8,
            max_new_tokens=args.max_new_tokens,
            out_path=part,
            batch_size=args.problems,
            progress=False,
            verbose=False,
        )
        records = load_records(part)
        part.unlink()
        return records
    env = reasongym.make(f"reasoning_gym/{name}-v0").unwrapped
    problems = [env.problem_at(i, split="test") for i in range(args.problems)]
    prompts = [format_prompt(tokenizer, env.messages(problem, hint=True)) for problem in problems]
    params = SamplingParams(n=args.samples, max_new_tokens=args.max_new_tokens, temperature=0.8, seed=0)
    samples = HFGenerator(model, tokenizer).generate(prompts, params)
    return [
        {
            "index": i,
            "split": "test",
            "difficulty": None,
            "hinted": True,
            "completions": [c.text for c in completions],
        }
        for i, completions in enumerate(samples)
    ]


def _sample(path: Path, tasks: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    """SmolLM2 completions on ``tasks``, sampled once and kept in ``path`` (tasks already there are kept)."""
    kept = (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )
    todo = [name for name in tasks if name not in {record["task"] for record in kept}]
    if todo:
        model, tokenizer = _load_policy()
        path.parent.mkdir(parents=True, exist_ok=True)
        for name in todo:
            start = time.process_time()
            records = _sample_task(model, tokenizer, name, args, path.with_suffix(f".{name}.jsonl"))
            with path.open("a", encoding="utf-8") as out:
                out.writelines(json.dumps({"task": name, **record}) + "\n" for record in records)
            print(f"sampled {name}: {time.process_time() - start:.0f} CPU-s", flush=True)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [record for record in records if record["task"] in tasks]


def _their_score(env: Any, problem: Any, answer: str | None) -> float | None:
    """Their ``score_answer`` on ``answer``; None when it would ``eval`` code (their sympy scorers)."""
    if answer is None:
        return 0.0
    if not _MATHLIKE.fullmatch(answer) or "__" in answer:
        return None
    dataset = env.source.dataset(problem.metadata.get("level"))
    try:
        return float(dataset.score_answer(answer, env.source.entry_of(problem)))
    except Exception:  # noqa: BLE001 - a scorer failing on a model answer counts as 0
        return 0.0


def _our_answer(completion: str) -> str | None:
    """The answer text the environment graded: the tagged answer, else the math extraction's (no fallback)."""
    found = extract_tagged_answer(completion)
    if found.method == "tag" or found.answer is None:
        return found.answer
    return reasongym.verifiers.extract_math_answer(completion, last_number_fallback=False).answer


def _grade_both(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Each completion of ``record`` graded by the environment and by their scorer (same answer), and by their
    whole pipeline (``reasoning_gym.utils.extract_answer``, the ``<answer>`` tag only, then the scorer)."""
    from reasoning_gym.utils import extract_answer

    env = reasongym.make(f"reasoning_gym/{record['task']}-v0").unwrapped
    problem = env.problem_at(record["index"], split=record["split"], difficulty=record.get("difficulty"))
    rows = []
    for completion, verdict in zip(
        record["completions"], env.score_many(problem, record["completions"]), strict=True
    ):
        answer = _our_answer(completion)
        score, pipeline = (
            _their_score(env, problem, answer),
            _their_score(env, problem, extract_answer(completion)),
        )
        rows.append(
            {
                "task": record["task"],
                "index": record["index"],
                "gold": problem.answer,
                "answer": answer,
                "ours": bool(verdict.correct),
                "outcome": verdict.outcome.value,
                "reason": verdict.reason,
                "their_score": score,
                "theirs": None if score is None else score >= 1,
                "their_pipeline": None if pipeline is None else pipeline >= 1,
                "completion": completion,
            }
        )
    return rows


def compare_graders(args: argparse.Namespace) -> dict[str, Any]:
    """Disagreements between our grading and the task's own scorer, per task, on real completions."""
    tasks = [name for name in (args.tasks or GRADER_TASKS) if TASKS[name][1] in ("math", "countdown")]
    rows = [row for record in _sample(Path(args.completions), tasks, args) for row in _grade_both(record)]
    keys = (
        "completions",
        "ours_correct",
        "theirs_correct",
        "pipeline_correct",
        "ours_only",
        "theirs_only",
        "skipped",
    )
    per_task: dict[str, dict[str, int]] = {name: dict.fromkeys(keys, 0) for name in tasks}
    for row in rows:
        count = per_task[row["task"]]
        count["completions"] += 1
        count["pipeline_correct"] += bool(row["their_pipeline"])
        if row["theirs"] is None:
            count["skipped"] += 1
            continue
        count["ours_correct"] += row["ours"]
        count["theirs_correct"] += row["theirs"]
        if row["ours"] != row["theirs"]:
            count["ours_only" if row["ours"] else "theirs_only"] += 1
    print(
        f"{'task':24s} {'n':>4s} {'ours':>5s} {'theirs':>7s} {'pipeline':>9s} {'ours-only':>10s} {'theirs-only':>12s} {'skip':>5s}"
    )
    for name, c in per_task.items():
        print(
            f"{name:24s} {c['completions']:4d} {c['ours_correct']:5d} {c['theirs_correct']:7d} "
            f"{c['pipeline_correct']:9d} {c['ours_only']:10d} {c['theirs_only']:12d} {c['skipped']:5d}"
        )
    disagreements = [row for row in rows if row["theirs"] is not None and row["ours"] != row["theirs"]]
    for row in disagreements:
        print(
            f"  {row['task']}: gold {row['gold']!r} answer {row['answer']!r:.60} ours {row['ours']} "
            f"theirs {row['their_score']:.3g} ({row['reason'][:60]})"
        )
    if args.disagreements:
        Path(args.disagreements).write_text(
            "".join(json.dumps(row) + "\n" for row in disagreements), encoding="utf-8"
        )
    total = {key: sum(c[key] for c in per_task.values()) for key in keys}
    return {"per_task": per_task, **total}


def run_grpo(steps: int) -> dict[str, Any]:
    """A few GRPO steps of the tiny model on one reasoning-gym task: it runs, and how fast."""
    from reasongym.agents import preset_configs, train_grpo
    from reasongym.policy.tiny import tiny_policy

    model, tokenizer = tiny_policy(seed=0)
    configs = preset_configs("tiny", "grpo", max_steps=steps, num_prompts=4, progress_bar=False)
    start = time.perf_counter()
    result = train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        "reasoning_gym/basic_arithmetic-v0",
        run=configs["run"],
        rollout=configs["rollout"],
    )
    seconds = time.perf_counter() - start
    history = [
        {k: v for k, v in row.items() if k.startswith(("rollout/reward_mean", "loss/policy"))}
        for row in result.history
    ]
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
        out["graders_per_task"] = graders["per_task"]
    if args.grpo:
        out["grpo"] = run_grpo(args.steps)
    sys.stdout.flush()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
