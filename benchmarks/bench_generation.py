"""Tokens per second of our sampler (`HFGenerator`) against plain `model.generate` on the same model and batch.

Both sample from the full softmax (temperature 1, no top-k/top-p), start from the same left-padded
prompts, stop a row on EOS and stop early only when every row is done; with a random-init model
the batch practically always runs all ``--new-tokens`` steps. Throughput counts every decoded
position (rows x steps executed), the same way for both. Repeats interleave the two samplers, and
the median is reported. Last line: one JSON object.

Run: ``python -m benchmarks.bench_generation`` (add ``--threads N`` to use more CPU threads).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads: see --threads

import torch  # noqa: E402

from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.tiny import (
    make_char_tokenizer,
    make_tiny_model,  # noqa: E402
)


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32, help="prompts per batch")
    parser.add_argument("--new-tokens", type=int, default=64, help="tokens generated per prompt")
    parser.add_argument("--hidden", type=int, default=128, help="tiny model hidden size")
    parser.add_argument("--layers", type=int, default=4, help="tiny model decoder layers")
    parser.add_argument("--heads", type=int, default=4, help="tiny model attention heads")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per sampler (median reported)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="auto", help="'auto' (cuda when available), 'cpu' or 'cuda'")
    return parser.parse_args()


def _prompts(batch: int) -> list[str]:
    """Arithmetic questions of varying length, so the batch needs left padding."""
    return [f"Q: what is {17 * i + 3} + {(31 * i) % 1000}? A:" + " " * (i % 7) for i in range(batch)]


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _time_ours(generator: HFGenerator, prompts: list[str], new_tokens: int, seed: int) -> tuple[float, int]:
    start = time.perf_counter()
    batch = generator.generate_batch(prompts, SamplingParams(max_new_tokens=new_tokens, seed=seed))
    _synchronize(batch.completion_ids.device)
    return time.perf_counter() - start, batch.completion_ids.numel()


def _time_generate(model, tokenizer, prompts: list[str], new_tokens: int, seed: int) -> tuple[float, int]:
    inputs = tokenizer(prompts, padding=True, return_tensors="pt").to(model.device)
    torch.manual_seed(seed)
    start = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            **inputs,
            do_sample=True,
            max_new_tokens=new_tokens,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    _synchronize(out.device)
    return time.perf_counter() - start, out[:, inputs["input_ids"].shape[1] :].numel()


def main() -> None:
    """Run both samplers, print one line per repeat and a JSON summary as the last line."""
    args = _parse_args()
    torch.set_num_threads(args.threads)
    wanted = "cuda" if args.device == "auto" and torch.cuda.is_available() else args.device
    device = torch.device("cpu" if wanted == "auto" else wanted)
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(
        tokenizer, hidden_size=args.hidden, num_layers=args.layers, num_heads=args.heads, seed=0
    ).to(device)
    model.eval()
    generator = HFGenerator(model, tokenizer)
    prompts = _prompts(args.batch)
    _time_ours(generator, prompts, args.new_tokens, seed=-1)  # warm-up: allocator, kernels, caches
    _time_generate(model, tokenizer, prompts, args.new_tokens, seed=-1)
    ours, theirs = [], []
    for repeat in range(args.repeats):
        seconds, tokens = _time_ours(generator, prompts, args.new_tokens, seed=repeat)
        ours.append(tokens / seconds)
        seconds, tokens = _time_generate(model, tokenizer, prompts, args.new_tokens, seed=repeat)
        theirs.append(tokens / seconds)
        print(f"repeat {repeat}: ours {ours[-1]:,.0f} tok/s, generate {theirs[-1]:,.0f} tok/s")
    ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
    summary = {
        "ours_tokens_per_s": round(ours_median, 1),
        "generate_tokens_per_s": round(theirs_median, 1),
        "ratio": round(ours_median / theirs_median, 3),
        "device": str(device),
        "threads": args.threads,
        "batch": args.batch,
        "new_tokens": args.new_tokens,
        "model": {"hidden": args.hidden, "layers": args.layers, "heads": args.heads},
        "repeats": args.repeats,
        "torch": torch.__version__,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
