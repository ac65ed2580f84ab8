"""Real results: SmolLM2-135M-Instruct (from its GGUF file) on six benchmarks, greedy pass@1 and pass@8.

Every task runs through ``reasongym.evaluate`` with the environment's own prompt (the user message,
which asks for a ``\\boxed{}`` answer) under the model's chat template, zero-shot, and writes the
``reasongym eval`` record format (one JSONL line per problem, completions included) into ``--out-dir``.
Resumable: rerun the same command and finished problems are kept, so the job can be stopped at any time.
Tasks run in the order of ``TASKS`` (greedy first, then pass@8 at T=0.7 on a few subsets).

The GGUF is dequantized once into ``<out-dir>/model`` (a float32 safetensors folder); later runs load
that folder in under a second instead of dequantizing again.

Run (from the repository root; about 4 CPU-hours on one core for everything)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python -m benchmarks.real_model_results \\
        --gguf PATH/TO/SmolLM2-135M-Instruct.Q4_1.gguf --out-dir outputs/smollm2
    python -m benchmarks.real_model_results --out-dir outputs/smollm2 --summary-only   # table from the files

Last line: one JSON object with, per task, pass@1 (and pass@8), the share of completions cut off at
``max_new_tokens`` (``truncated``), the share that write ``\\boxed{}`` as asked (``boxed``), the share with
no parseable answer, how many correct completions were cut off (graded on the environment's last-number
fallback), the mean completion length in tokens and the wall time; plus the whole run's wall time and
peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

GGUF_ENV = "REASONGYM_SMOLLM2_GGUF"


@dataclass(frozen=True)
class Task:
    """One evaluation: which environment, which problems, how to sample."""

    name: str
    env_id: str
    num_problems: int
    max_new_tokens: int
    n: int = 1
    temperature: float = 0.0
    difficulty: int | None = None
    split: str | None = None


# Math tasks get 512 tokens: SmolLM2's finished GSM8K answers run 150-250 tokens, and what runs past 512
# is, in the samples read, a repetition loop that would not end. Arithmetic and CommonsenseQA answers
# are short, so 256 covers them (the truncation rate in the output checks that claim).
TASKS: tuple[Task, ...] = (
    Task("gsm8k_greedy", "reasongym/GSM8K-v0", 200, 512),
    Task("math500_greedy", "reasongym/MATH500-v0", 100, 512),
    Task("arith1_greedy", "reasongym/Arithmetic-v0", 200, 256, difficulty=1),
    Task("arith2_greedy", "reasongym/Arithmetic-v0", 200, 256, difficulty=2),
    Task("csqa_greedy", "reasongym/CommonsenseQA-v0", 200, 256, split="validation"),
    Task("aime24_greedy", "reasongym/AIME24-v0", 30, 512),
    # pass@8 at T=0.7 costs 8x: subsets only (GSM8K at 512 tokens takes ~8 min per 4 problems on a busy core).
    Task("arith1_pass8", "reasongym/Arithmetic-v0", 50, 256, n=8, temperature=0.7, difficulty=1),
    Task("arith2_pass8", "reasongym/Arithmetic-v0", 50, 256, n=8, temperature=0.7, difficulty=2),
    Task("gsm8k_pass8", "reasongym/GSM8K-v0", 24, 512, n=8, temperature=0.7),
)


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gguf", default=os.environ.get(GGUF_ENV), help=f"the .gguf file (default ${GGUF_ENV})"
    )
    parser.add_argument("--out-dir", default="outputs/smollm2", help="where the JSONL files (and model/) go")
    parser.add_argument("--only", nargs="*", default=None, help="task names to run (default: all, in order)")
    parser.add_argument("--batch-rows", type=int, default=16, help="sequences decoded together")
    parser.add_argument(
        "--summary-only", action="store_true", help="summarize existing files, sample nothing"
    )
    return parser.parse_args()


def _load(gguf: str | None, model_dir: Path):
    """The model and tokenizer, dequantizing the GGUF into ``model_dir`` the first time."""
    from reasongym.policy.loading import load_policy

    if not (model_dir / "config.json").is_file():
        if not gguf:
            sys.exit(f"no model at {model_dir} and no GGUF given (--gguf or ${GGUF_ENV})")
        from reasongym.policy.loading import dequantize_gguf

        dequantize_gguf(gguf, model_dir)
    return load_policy(str(model_dir))


def _tokenizer_only(model_dir: Path, gguf: str | None):
    from transformers import AutoTokenizer

    if (model_dir / "tokenizer_config.json").is_file():
        return AutoTokenizer.from_pretrained(str(model_dir))
    if gguf and Path(gguf).is_file():
        return AutoTokenizer.from_pretrained(str(Path(gguf).parent), gguf_file=Path(gguf).name)
    return None


def _run_task(task: Task, generator, tokenizer, out_dir: Path, batch_rows: int) -> float:
    from reasongym.evaluation import evaluate

    start = time.perf_counter()
    evaluate(
        generator,
        task.env_id,
        n=task.n,
        k=(1, task.n) if task.n > 1 else (1,),
        split=task.split,
        num_problems=task.num_problems,
        difficulty=task.difficulty,
        temperature=task.temperature,
        max_new_tokens=task.max_new_tokens,
        seed=0,
        out_path=out_dir / f"{task.name}.jsonl",
        batch_size=max(1, batch_rows // task.n),
        tokenizer=tokenizer,
        progress=False,
        verbose=False,
    )
    return time.perf_counter() - start


def _summarize(task: Task, path: Path, tokenizer) -> dict[str, object]:
    """pass@k, truncation and no-answer rates and mean length, read back from the records."""
    from reasongym.evaluation import load_report

    report = load_report(path, ks=[1, task.n] if task.n > 1 else [1])
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    reasons = [reason for record in records for reason in record.get("finish_reasons", [])]
    outcomes = [outcome for record in records for outcome in record["outcomes"]]
    texts = [text for record in records for text in record["completions"]]
    lengths = (
        [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]] if tokenizer else []
    )
    row: dict[str, object] = {
        "env_id": task.env_id,
        "difficulty": task.difficulty,
        "problems": len(records),
        "n": task.n,
        "temperature": task.temperature,
        "max_new_tokens": task.max_new_tokens,
        "truncated": round(reasons.count("length") / max(1, len(reasons)), 3),
        "boxed": round(sum("\\boxed{" in text for text in texts) / max(1, len(texts)), 3),
        "no_answer": round(outcomes.count("unparseable") / max(1, len(outcomes)), 3),
        # Correct completions cut off at max_new_tokens: graded on a last-number fallback, not an answer.
        "correct_but_truncated": sum(
            bool(ok) and reason == "length"
            for record in records
            for ok, reason in zip(record["correct"], record.get("finish_reasons", []), strict=False)
        ),
        "mean_tokens": round(sum(lengths) / len(lengths), 1) if lengths else None,
    }
    for key, value in report.metrics.items():
        if key.startswith("pass@"):
            row[key] = round(value, 4)
    return row


def main() -> None:
    """Run the tasks in order (skipping finished problems), then print the summary and the JSON line."""
    args = _parse_args()
    started = time.perf_counter()
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = [task for task in TASKS if args.only is None or task.name in args.only]
    model, tokenizer = (None, None) if args.summary_only else _load(args.gguf, out_dir / "model")
    if tokenizer is None:  # token counts only; the model folder, else the GGUF file's own tokenizer
        tokenizer = _tokenizer_only(out_dir / "model", args.gguf)
    results: dict[str, dict[str, object]] = {}
    for task in tasks:
        path = out_dir / f"{task.name}.jsonl"
        wall = None
        if not args.summary_only:
            from reasongym.generation import HFGenerator

            wall = _run_task(task, HFGenerator(model, tokenizer), tokenizer, out_dir, args.batch_rows)
        if not path.is_file():
            continue
        results[task.name] = {
            **_summarize(task, path, tokenizer),
            "wall_s": None if wall is None else round(wall),
        }
        print(task.name, json.dumps(results[task.name]), file=sys.stderr, flush=True)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    summary = {"model": "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantized to float32)", "tasks": results}
    summary.update(wall_s=round(time.perf_counter() - started), peak_rss_mb=round(peak_mb))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
