"""Speed on the real SmolLM2-135M-Instruct (from its GGUF): our sampler against ``model.generate``.

Generation: 16 chat-formatted GSM8K prompts (Arithmetic level 5 when the data is absent), 128 new tokens,
greedy by default so that both samplers produce the same tokens and do exactly the same work (the
script checks that they do). Both stop only when every row is done; throughput counts decoded positions
(rows x steps run), the same way for both. One short untimed warm-up each, then ``--repeats`` timed runs
that alternate the two samplers; medians are reported. CPU with one torch thread unless told otherwise.

The script is organised as one function per measurement, each returning a dict that lands under its
own key of the final JSON line. ``--grpo`` adds ``grpo_step``: one GRPO step (4 prompts x 4 samples x
64 tokens, KL 0.04) of ours and of TRL's ``GRPOTrainer``, full fine-tuning and LoRA r16 on the same
projections, each configuration in its own process (`real_grpo_step.py`) so that each peak RSS is its
own; ``ratio`` is our seconds per step over TRL's (below 1: ours is faster). ``--only-grpo`` skips the
generation measurement.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_real_model --gguf PATH/TO/SmolLM2-135M-Instruct.Q4_1.gguf
    python -m benchmarks.bench_real_model --model outputs/smollm2/model   # a dequantized folder loads faster
    python -m benchmarks.bench_real_model --model outputs/smollm2/model --grpo --only-grpo

Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads: see --threads
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

import reasongym  # noqa: E402
from reasongym.errors import DatasetNotFoundError  # noqa: E402
from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.loading import format_prompt, load_policy  # noqa: E402

GGUF_ENV = "REASONGYM_SMOLLM2_GGUF"


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gguf", default=os.environ.get(GGUF_ENV), help=f"the .gguf file (default ${GGUF_ENV})"
    )
    parser.add_argument(
        "--model", default=None, help="a model folder instead of --gguf (e.g. a dequantized copy)"
    )
    parser.add_argument("--prompts", type=int, default=16, help="prompts per batch")
    parser.add_argument("--new-tokens", type=int, default=128, help="most tokens generated per prompt")
    parser.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (same work for both)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per sampler (median reported)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--grpo", action="store_true", help="also time a GRPO step against TRL's")
    parser.add_argument("--only-grpo", action="store_true", help="skip the generation measurement")
    parser.add_argument("--grpo-steps", type=int, default=3, help="GRPO steps per configuration")
    return parser.parse_args()


def _prompts(tokenizer, count: int) -> tuple[list[str], str]:
    """Chat-formatted prompts of real tasks: GSM8K test when its data is present, else hard arithmetic."""
    try:
        env, source = reasongym.make("reasongym/GSM8K-v0").unwrapped, "GSM8K-v0 test"
        problems = [env.problem_at(index, split="test") for index in range(count)]
    except DatasetNotFoundError:
        env, source = reasongym.make("reasongym/Arithmetic-v0").unwrapped, "Arithmetic-v0 level 5"
        problems = [env.problem_at(index, difficulty=5) for index in range(count)]
    return [format_prompt(tokenizer, env.messages(problem)) for problem in problems], source


def _run_ours(
    generator: HFGenerator, prompts: list[str], params: SamplingParams
) -> tuple[float, float, torch.Tensor]:
    start, cpu_start = time.perf_counter(), time.process_time()
    batch = generator.generate_batch(prompts, params)
    return time.perf_counter() - start, time.process_time() - cpu_start, batch.completion_ids


def _run_generate(
    model, tokenizer, prompts: list[str], params: SamplingParams
) -> tuple[float, float, torch.Tensor]:
    inputs = tokenizer(prompts, padding=True, add_special_tokens=False, return_tensors="pt").to(model.device)
    sampling = (
        {"do_sample": False} if params.greedy else {"do_sample": True, "temperature": params.temperature}
    )
    torch.manual_seed(params.seed or 0)
    start, cpu_start = time.perf_counter(), time.process_time()
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=params.max_new_tokens, top_k=0, top_p=1.0, **sampling)
    return (
        time.perf_counter() - start,
        time.process_time() - cpu_start,
        out[:, inputs["input_ids"].shape[1] :],
    )


def measure_generation(model, tokenizer, args: argparse.Namespace) -> dict[str, object]:
    """Tokens per second of `HFGenerator` and of ``model.generate`` on the same batch, alternating."""
    prompts, source = _prompts(tokenizer, args.prompts)
    generator = HFGenerator(model, tokenizer)
    warm = SamplingParams(temperature=args.temperature, max_new_tokens=4, seed=0)
    _run_ours(generator, prompts, warm)  # untimed: allocator, kernels, tokenizer caches
    _run_generate(model, tokenizer, prompts, warm)
    rates: dict[str, list[float]] = {"ours": [], "generate": [], "ours_cpu": [], "generate_cpu": []}
    identical = True
    for repeat in range(args.repeats):
        params = SamplingParams(temperature=args.temperature, max_new_tokens=args.new_tokens, seed=repeat)
        ours_s, ours_cpu, ours_ids = _run_ours(generator, prompts, params)
        theirs_s, theirs_cpu, their_ids = _run_generate(model, tokenizer, prompts, params)
        identical &= ours_ids.shape == their_ids.shape and bool(torch.equal(ours_ids, their_ids))
        for key, seconds, ids in (
            ("ours", ours_s, ours_ids),
            ("generate", theirs_s, their_ids),
            ("ours_cpu", ours_cpu, ours_ids),
            ("generate_cpu", theirs_cpu, their_ids),
        ):
            rates[key].append(ids.numel() / seconds)
        print(
            f"repeat {repeat}: ours {rates['ours'][-1]:.1f} tok/s ({ours_ids.shape[1]} steps, "
            f"{rates['ours_cpu'][-1]:.1f} per CPU-s), generate {rates['generate'][-1]:.1f} tok/s "
            f"({their_ids.shape[1]} steps, {rates['generate_cpu'][-1]:.1f} per CPU-s)",
            file=sys.stderr,
            flush=True,
        )
    median = {key: statistics.median(values) for key, values in rates.items()}
    return {
        "ours_tokens_per_s": round(median["ours"], 2),
        "generate_tokens_per_s": round(median["generate"], 2),
        "ratio": round(median["ours"] / median["generate"], 3),
        # Per CPU-second of this process: steadier than wall time on a machine shared with other jobs.
        "ours_tokens_per_cpu_s": round(median["ours_cpu"], 2),
        "generate_tokens_per_cpu_s": round(median["generate_cpu"], 2),
        "cpu_ratio": round(median["ours_cpu"] / median["generate_cpu"], 3),
        "identical_outputs": identical if args.temperature == 0 else None,
        "prompts": args.prompts,
        "prompt_source": source,
        "new_tokens": args.new_tokens,
        "temperature": args.temperature,
        "repeats": args.repeats,
    }


def measure_grpo_step(source: str, steps: int) -> dict[str, object]:
    """Seconds per GRPO step and peak RSS of ours and TRL's, full and LoRA, one process each."""
    import subprocess
    from pathlib import Path

    worker = Path(__file__).with_name("real_grpo_step.py")
    rows: dict[str, dict[str, object]] = {}
    for mode in ("lora", "full"):
        for impl in ("ours", "trl"):
            command = [sys.executable, str(worker), "--impl", impl, "--mode", mode, "--model", source]
            done = subprocess.run([*command, "--steps", str(steps)], capture_output=True, text=True)
            print(done.stderr[-2000:], file=sys.stderr, flush=True)
            lines = done.stdout.strip().splitlines()
            rows[f"{impl}_{mode}"] = (
                json.loads(lines[-1])
                if done.returncode == 0 and lines
                else {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
            )
    for mode in ("lora", "full"):
        ours, trl = rows[f"ours_{mode}"], rows[f"trl_{mode}"]
        if "step_s" in ours and "step_s" in trl:
            rows[f"ratio_{mode}"] = round(ours["step_s"] / trl["step_s"], 3)
            rows[f"memory_ratio_{mode}"] = round(ours["peak_rss_mb"] / trl["peak_rss_mb"], 3)
    return rows


def main() -> None:
    """Load the model once, run each measurement, print the JSON line."""
    args = _parse_args()
    torch.set_num_threads(args.threads)
    source = args.model or args.gguf
    if not source:
        sys.exit(f"no model: pass --gguf (or set ${GGUF_ENV}) or --model")
    results: dict[str, object] = {}
    load_s = None
    if not args.only_grpo:
        start = time.perf_counter()
        model, tokenizer = load_policy(source)
        load_s = round(time.perf_counter() - start, 1)
        results["generation"] = measure_generation(model.eval(), tokenizer, args)
        del model
    if args.grpo:  # each configuration loads its own copy in its own process
        results["grpo_step"] = measure_grpo_step(source, args.grpo_steps)
    results.update(
        model="SmolLM2-135M-Instruct",
        loaded_from="gguf" if source == args.gguf else "folder",
        load_s=load_s,
        threads=args.threads,
        torch=torch.__version__,
        peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
