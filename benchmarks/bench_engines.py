"""Inference engines side by side, in one sitting: vLLM (`VLLMGenerator`), our sampler (`HFGenerator`) and
``model.generate``, and a GRPO step with each engine and with TRL's ``GRPOTrainer`` using vLLM.

Sampling (always): SmolLM2-135M-Instruct in float32, chat-formatted Arithmetic-v0 prompts (a different one
per row), temperature 1, at most ``--new-tokens`` (64) new tokens, at 1, 16 and 64 rows. The three engines
run interleaved (``--repeats`` rounds after a warm-up round), in one process with one torch thread, so a
busy machine slows them alike; each figure is tokens generated per CPU-second of the process
(``time.process_time``: what one core does, whatever else runs) and per wall-second, with the median over
the rounds. vLLM's import and engine start are timed apart (once per run, not per batch).

GRPO (``--grpo``): `real_grpo_step.py` in its own process per configuration (4 prompts x 4 samples x 64
tokens, LoRA r16, KL on, float32): ours with ``--engine hf`` and ``--engine vllm``, and TRL's
``GRPOTrainer`` with ``use_vllm=True, vllm_mode="colocate"``; the median of the steps after the first (an
engine's start is not in it), and CPU-seconds per step.

Run (from the repository root, in an environment with vLLM: README.md, "Sampling with vLLM")::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_engines --model outputs/smollm2/model [--grpo]

``--model``: a .gguf file or a model folder (a folder saves the ~45 s of dequantizing a GGUF; TRL's vLLM
needs one). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

import torch  # noqa: E402

import reasongym  # noqa: E402
from benchmarks.harness.machine import Snapshot  # noqa: E402
from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.loading import end_of_turn_id, format_prompt, load_policy  # noqa: E402

ENV = "reasongym/Arithmetic-v0"
HERE = Path(__file__).resolve().parent


def _prompts(tokenizer: Any, rows: int) -> list[str]:
    env = reasongym.make(ENV, difficulty=1)
    prompts = []
    for index in range(rows):
        observation, _ = env.reset(options={"index": index, "split": "test"})
        prompts.append(format_prompt(tokenizer, observation))
    return prompts


def _timed(run: Any) -> dict[str, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    tokens = run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"tokens": tokens, "cpu_s": cpu, "wall_s": wall}


def _generate_tokens(model: Any, tokenizer: Any, prompts: list[str], new_tokens: int, seed: int) -> int:
    """Tokens ``model.generate`` samples (up to and including each row's end of turn)."""
    stop = end_of_turn_id(tokenizer) or tokenizer.eos_token_id
    tokenizer.padding_side = "left"
    inputs = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(
            **inputs,
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            max_new_tokens=new_tokens,
            eos_token_id=stop,
            pad_token_id=tokenizer.pad_token_id or stop,
        )
    new = out[:, inputs["input_ids"].shape[1] :]
    counted = 0
    for row in new.tolist():
        counted += row.index(stop) + 1 if stop in row else len(row)
    return counted


def sampling(model: Any, tokenizer: Any, rows: list[int], new_tokens: int, repeats: int) -> dict[str, Any]:
    """Tokens per CPU-second and per wall-second of each engine at each row count (medians over rounds)."""
    started = time.perf_counter()
    import vllm  # noqa: F401  (timed: the import is a cost of the engine)

    imported = time.perf_counter()
    from reasongym.generation.vllm_engine import VLLMGenerator

    engine = VLLMGenerator(model, tokenizer)
    built = time.perf_counter()
    ours = HFGenerator(model, tokenizer)
    report: dict[str, Any] = {
        "vllm_import_s": round(imported - started, 1),
        "vllm_engine_start_s": round(built - imported, 1),
    }
    for count in rows:
        prompts = _prompts(tokenizer, count)
        runs = _runs(engine, ours, model, tokenizer, prompts, new_tokens)
        for run in runs.values():
            run(10_000)  # warm-up round (caches, allocator), not counted
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
        for seed in range(repeats):
            for name, run in runs.items():
                rounds[name].append(_timed(lambda run=run, seed=seed: run(seed)))
        report[f"rows_{count}"] = _summary(rounds)
        print(f"rows {count}: {json.dumps(report[f'rows_{count}'])}", file=sys.stderr)
    return report


def _runs(
    engine: Any, ours: Any, model: Any, tokenizer: Any, prompts: list[str], new_tokens: int
) -> dict[str, Any]:
    """Each engine as ``seed -> tokens sampled`` on ``prompts``."""

    def vllm_run(seed: int) -> int:
        return int(engine.generate_batch(prompts, _params(new_tokens, seed)).completion_mask.sum())

    def ours_run(seed: int) -> int:
        return int(ours.generate_batch(prompts, _params(new_tokens, seed)).completion_mask.sum())

    def generate_run(seed: int) -> int:
        return _generate_tokens(model, tokenizer, prompts, new_tokens, seed)

    return {"vllm": vllm_run, "ours": ours_run, "generate": generate_run}


def _params(new_tokens: int, seed: int) -> SamplingParams:
    return SamplingParams(temperature=1.0, max_new_tokens=new_tokens, seed=seed)


def _summary(rounds: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, runs in rounds.items():
        out[name] = {
            "tokens_per_cpu_s": round(statistics.median(r["tokens"] / r["cpu_s"] for r in runs), 1),
            "tokens_per_wall_s": round(statistics.median(r["tokens"] / r["wall_s"] for r in runs), 1),
            "tokens": int(statistics.median(r["tokens"] for r in runs)),
        }
    for name in ("vllm", "generate"):
        out[f"{name}_over_ours_cpu"] = round(
            out[name]["tokens_per_cpu_s"] / out["ours"]["tokens_per_cpu_s"], 2
        )
    return out


def grpo(model_path: str, steps: int) -> dict[str, Any]:
    """`real_grpo_step.py` per configuration (LoRA r16), each in its own process."""
    report: dict[str, Any] = {}
    for impl, engine in (("ours", "hf"), ("ours", "vllm"), ("trl", "vllm")):
        command = [
            sys.executable,
            str(HERE / "real_grpo_step.py"),
            "--impl",
            impl,
            "--mode",
            "lora",
            "--engine",
            engine,
            "--model",
            model_path,
            "--steps",
            str(steps),
        ]
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1")}
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        key = f"{impl}_{engine}"
        try:
            report[key] = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
            report[key] = {"error": f"exit {done.returncode}", "tail": tail}
        print(f"{key}: {json.dumps(report[key])}", file=sys.stderr)
    ours = report.get("ours_hf", {}).get("steady_cpu_s_per_step")
    for key in ("ours_vllm", "trl_vllm"):
        theirs = report.get(key, {}).get("steady_cpu_s_per_step")
        report[f"{key}_over_ours_hf_cpu"] = round(theirs / ours, 2) if ours and theirs else None
    return report


def main() -> None:
    """Measure; print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", required=True, help="a .gguf file or a model folder (SmolLM2-135M-Instruct)"
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--grpo", action="store_true", help="also a GRPO step with each engine and with TRL")
    parser.add_argument("--grpo-steps", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    measured = Snapshot()
    model, tokenizer = load_policy(args.model)
    model.eval()
    results: dict[str, Any] = {
        "model": args.model,
        "new_tokens": args.new_tokens,
        "torch_threads": torch.get_num_threads(),
    }
    results["sampling"] = sampling(model, tokenizer, args.rows, args.new_tokens, args.repeats)
    if args.grpo:
        results["grpo"] = grpo(args.model, args.grpo_steps)
    results["machine"] = measured.since()  # wall and CPU seconds, the load at the start and the end
    print(json.dumps(results))


if __name__ == "__main__":
    main()
