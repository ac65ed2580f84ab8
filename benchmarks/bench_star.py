"""STaR with and without rationalization, side by side, from the same warm-started tiny model.

A random-init tiny model over a character tokenizer gets a short SFT warm start on reference solutions
of reasongym/Arithmetic-v0 level 1 (a quarter of them also shown with the hint, so the model has seen
what a hinted prompt asks for). Then ``train_star`` runs twice from that same base with the same budget
(iterations, problems, samples, fine-tuning steps): once with rationalization, once without. Per
iteration it prints held-out greedy accuracy and how many rationales were kept directly and through
rationalization. Last line: one JSON object; ``accuracy_gain`` is final minus initial held-out accuracy
(a fraction) of the run with rationalization.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_star.py`` (a few minutes on 2 CPU cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads

import torch  # noqa: E402

import reasongym  # noqa: E402
from reasongym.agents.config import RolloutConfig, RunConfig  # noqa: E402
from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft  # noqa: E402
from reasongym.agents.star import STaRConfig, STaRResult, train_star  # noqa: E402
from reasongym.models import format_prompt, make_char_tokenizer, make_tiny_model  # noqa: E402


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--warm-steps", type=int, default=300, help="warm-start SFT steps (of a 1000-step schedule)"
    )
    parser.add_argument("--iterations", type=int, default=3, help="STaR outer iterations")
    parser.add_argument("--train-problems", type=int, default=256, help="training problems per iteration")
    parser.add_argument("--samples", type=int, default=4, help="rationales sampled per problem")
    parser.add_argument("--temperature", type=float, default=0.5, help="sampling temperature of rationales")
    parser.add_argument(
        "--sft-steps", type=int, default=40, help="fine-tuning steps of iteration 1 (+20%%/iteration)"
    )
    parser.add_argument("--lr", type=float, default=1e-3, help="fine-tuning learning rate per iteration")
    parser.add_argument("--eval-size", type=int, default=128, help="held-out test problems")
    parser.add_argument("--seed", type=int, default=0, help="seed of model init, warm start and sampling")
    parser.add_argument("--device", default="cpu", help="'cpu', 'cuda' or 'auto'")
    parser.add_argument(
        "--run-root", default=None, help="keep the two run folders here (default: a temp dir)"
    )
    return parser.parse_args()


def _warm_start(model: torch.nn.Module, tokenizer: object, env: object, steps: int, seed: int) -> None:
    """SFT on 1,000 reference solutions plus 250 hinted copies; stops mid-schedule, while still learning."""
    base = env.unwrapped
    pairs = sft_pairs_from_env(env, 1000, tokenizer=tokenizer, start=10_000)
    hinted = [base.problem_at(10_000 + i, split="train") for i in range(len(pairs) // 4)]
    pairs += [
        (format_prompt(tokenizer, base.messages(p, hint=True)), pairs[i][1]) for i, p in enumerate(hinted)
    ]
    run = RunConfig(
        max_steps=1000, lr=3e-3, lr_schedule="cosine", warmup_steps=10, seed=seed, progress_bar=False
    )
    train_sft(
        SFTConfig(batch_size=16), model, tokenizer, pairs, run=run, stop_when=lambda step: step >= steps
    )


def _table(with_r: STaRResult, without_r: STaRResult) -> str:
    header = (
        f"{'iter':>4} | {'acc (rationalize)':>17} {'kept direct':>11} {'kept rationalized':>17} "
        f"{'train acc':>9} | {'acc (filter only)':>17} {'kept direct':>11} {'train acc':>9}"
    )
    rows = [header, "-" * len(header)]
    rows.append(
        f"{0:>4} | {with_r.initial_accuracy:>17.3f} {'':>11} {'':>17} {'':>9} | {without_r.initial_accuracy:>17.3f}"
    )
    for a, b in zip(with_r.iterations, without_r.iterations, strict=True):
        rows.append(
            f"{a.iteration:>4} | {a.accuracy_after:>17.3f} {a.kept_direct:>11d} {a.kept_rationalized:>17d} "
            f"{a.train_accuracy:>9.3f} | {b.accuracy_after:>17.3f} {b.kept_direct:>11d} {b.train_accuracy:>9.3f}"
        )
    return "\n".join(rows)


def main() -> None:
    """Warm-start once, run STaR with and without rationalization, print both, end with a JSON line."""
    args = _parse_args()
    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else args.device
    if device == "auto":
        device = "cpu"
    started = time.perf_counter()
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, seed=args.seed).to(device)
    env = reasongym.make("reasongym/Arithmetic-v0", difficulty=1, prompt_template="{question}")
    _warm_start(model, tokenizer, env, args.warm_steps, args.seed)
    warm_seconds = time.perf_counter() - started
    base = {k: v.detach().clone() for k, v in model.state_dict().items()}
    # Fine-tuning: cosine over each iteration's steps after 5 warmup steps, at --lr.
    run = RunConfig(
        max_steps=args.iterations, lr=args.lr, lr_schedule="cosine", warmup_steps=5,
        eval_problems=args.eval_size, seed=args.seed, progress_bar=False,
    )  # fmt: skip
    rollout = RolloutConfig(group_size=args.samples, temperature=args.temperature, max_new_tokens=64)
    cfg = STaRConfig(
        num_train_problems=args.train_problems, sft_steps=args.sft_steps, sft=SFTConfig(batch_size=16)
    )
    root = args.run_root or tempfile.mkdtemp(prefix="bench_star_")
    results, seconds = {}, {}
    for name, rationalize in (("rationalize", True), ("filter_only", False)):
        model.load_state_dict(base)  # both runs start from the same warm-started base
        run_started = time.perf_counter()
        star_cfg = dataclasses.replace(cfg, rationalize=rationalize)
        results[name] = train_star(
            star_cfg, model, tokenizer, env, run=run, rollout=rollout, run_dir=os.path.join(root, name)
        )
        seconds[name] = time.perf_counter() - run_started
    with_r, without_r = results["rationalize"], results["filter_only"]
    print(f"device {device}; warm start {args.warm_steps} steps in {warm_seconds:.1f}s; runs in {root}")
    print(_table(with_r, without_r))
    print(f"seconds: rationalize {seconds['rationalize']:.1f}, filter only {seconds['filter_only']:.1f}")
    summary = {
        "accuracy_gain": round(with_r.accuracy_gain, 4),
        "accuracy_gain_filter_only": round(without_r.accuracy_gain, 4),
        "initial_accuracy": round(with_r.initial_accuracy, 4),
        "accuracy_by_iteration": [round(s.accuracy_after, 4) for s in with_r.iterations],
        "accuracy_by_iteration_filter_only": [round(s.accuracy_after, 4) for s in without_r.iterations],
        "kept_direct": [s.kept_direct for s in with_r.iterations],
        "kept_rationalized": [s.kept_rationalized for s in with_r.iterations],
        "kept_direct_filter_only": [s.kept_direct for s in without_r.iterations],
        "seconds": round(time.perf_counter() - started, 1),
        "device": device,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
