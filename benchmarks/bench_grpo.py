"""Seconds per optimizer step: our GRPO and DAPO against TRL's GRPOTrainer, and against a floor, on CPU.

Same tiny Llama-style model (char tokenizer), same prompts (Arithmetic-v0 level 1), same group size,
completion length and sampling temperature, one torch thread, no KL (TRL's default ``beta=0``), one
optimizer step per generation, all three trainers in one process. DAPO runs without dynamic sampling
so that every trainer does the same work per step. The floor is what a step cannot avoid: sampling the
batch's completions with our sampler plus one forward+backward over the batch's tokens.

    OMP_NUM_THREADS=1 python benchmarks/bench_grpo.py [--steps 12 --prompts 8 --group 8 --tokens 32]

Prints per-trainer timings, where our step's time goes, and last one JSON object with ``ratio`` (our
GRPO s/step over TRL's), ``ratio_dapo`` and ``floor_ratio`` (our GRPO s/step over the floor).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings

import torch

from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.dapo import DAPOConfig, train_dapo
from reasongym.agents.grpo import GRPOConfig, train_grpo
from reasongym.models import tiny_policy

ENV = "reasongym/Arithmetic-v0"


def ours(algo: str, args: argparse.Namespace) -> dict[str, float]:
    """Median seconds per step of our trainer (after ``--warmup`` steps) and its phase split."""
    model, tokenizer = tiny_policy(0)
    run = RunConfig(
        max_steps=args.warmup + args.steps, lr=1e-4, difficulty=1, progress_bar=False, samples_every=0
    )
    rollout = RolloutConfig(num_prompts=args.prompts, group_size=args.group, max_new_tokens=args.tokens)
    if algo == "grpo":
        history = train_grpo(
            GRPOConfig(kl="off", mu=1), model, tokenizer, ENV, run=run, rollout=rollout
        ).history
    else:
        cfg = DAPOConfig(dynamic_sampling=False, overlong_buffer=args.tokens // 4, mu=1)
        history = train_dapo(cfg, model, tokenizer, ENV, run=run, rollout=rollout).history
    timed = history[args.warmup :]
    out = {"step_s": statistics.median(h["perf/step_s"] for h in timed)}
    for phase in ("generate", "verify", "train"):
        out[f"{phase}_s"] = statistics.median(h.get(f"perf/{phase}_s", 0.0) for h in timed)
    out["completion_tokens"] = (
        statistics.mean(h["rollout/len_mean"] for h in timed) * args.prompts * args.group
    )
    return out


def trl_step_seconds(args: argparse.Namespace) -> dict[str, float]:
    """Median seconds per optimizer step of TRL's GRPOTrainer on the same model and prompts."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer

    import reasongym
    from reasongym.verifiers import verify

    model, tokenizer = tiny_policy(0)
    env = reasongym.make(ENV, difficulty=1).unwrapped
    problems = [env.problem_at(i, split="train") for i in range(args.prompts * (args.warmup + args.steps))]
    dataset = Dataset.from_dict(
        {"prompt": [env.prompt(p) for p in problems], "gold": [p.answer for p in problems]}
    )

    def correctness(completions: list[str], gold: list[str], **_: object) -> list[float]:
        return [float(bool(verify(c, g, "integer").correct)) for c, g in zip(completions, gold, strict=True)]

    stamps: list[float] = []
    lengths: list[float] = []

    class Clock(TrainerCallback):
        def on_step_end(self, *a: object, **k: object) -> None:
            stamps.append(time.perf_counter())

        def on_log(
            self, _args: object, _state: object, _control: object, logs: dict | None = None, **k: object
        ) -> None:  # noqa: E501
            if logs and "completions/mean_length" in logs:
                lengths.append(logs["completions/mean_length"])

    with tempfile.TemporaryDirectory() as out:
        config = TRLConfig(
            output_dir=out, per_device_train_batch_size=args.prompts * args.group, num_generations=args.group,
            max_completion_length=args.tokens, gradient_accumulation_steps=1, steps_per_generation=1,
            max_steps=args.warmup + args.steps, learning_rate=1e-4, beta=0.0, loss_type="grpo", use_cpu=True,
            report_to=[], logging_steps=1, save_strategy="no", temperature=1.0, disable_tqdm=True, seed=0,
            dataloader_num_workers=0, bf16=False, fp16=False,
        )  # fmt: skip
        trainer = GRPOTrainer(
            model=model, reward_funcs=correctness, args=config, train_dataset=dataset, processing_class=tokenizer,
            callbacks=[Clock()],
        )  # fmt: skip
        stamps.append(time.perf_counter())
        trainer.train()
    durations = [b - a for a, b in zip(stamps[:-1], stamps[1:], strict=True)][args.warmup :]
    mean_len = statistics.mean(lengths[args.warmup :]) if len(lengths) > args.warmup else float("nan")
    return {"step_s": statistics.median(durations), "completion_tokens": mean_len * args.prompts * args.group}


def floor_seconds(args: argparse.Namespace) -> dict[str, float]:
    """Sampling the completions with our sampler + one forward+backward over the batch's tokens."""
    import reasongym
    from reasongym.agents.common import token_logprobs
    from reasongym.generation import HFGenerator, SamplingParams

    model, tokenizer = tiny_policy(0)
    env = reasongym.make(ENV, difficulty=1).unwrapped
    prompts = [env.prompt(env.problem_at(i, split="train")) for i in range(args.prompts)]
    generator = HFGenerator(model, tokenizer)
    sample_s, backward_s = [], []
    for seed in range(args.warmup + args.steps):
        params = SamplingParams(max_new_tokens=args.tokens, temperature=1.0, n=args.group, seed=seed)
        started = time.perf_counter()
        batch = generator.generate_batch(prompts, params)
        sampled = time.perf_counter()
        logp, _ = token_logprobs(model, batch.input_ids, batch.attention_mask, batch.completion_start)
        (logp * batch.completion_mask).sum().backward()
        model.zero_grad(set_to_none=True)
        done = time.perf_counter()
        if seed >= args.warmup:
            sample_s.append(sampled - started)
            backward_s.append(done - sampled)
    sample, backward = statistics.median(sample_s), statistics.median(backward_s)
    return {"step_s": sample + backward, "sample_s": sample, "forward_backward_s": backward}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="timed steps per trainer")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    params = sum(p.numel() for p in tiny_policy(0)[0].parameters())
    print(f"model: {params / 1e6:.2f}M params; batch {args.prompts} prompts x {args.group} samples x "
          f"{args.tokens} tokens; 1 thread")  # fmt: skip
    results = {
        "floor": floor_seconds(args),
        "grpo": ours("grpo", args),
        "dapo": ours("dapo", args),
    }
    try:
        results["trl"] = trl_step_seconds(args)
    except ImportError as error:
        print(f"TRL not available ({error}); ratios vs TRL are null")
    for name, r in results.items():
        print(f"{name:>6}: " + ", ".join(f"{k} {v:.4f}" for k, v in r.items()))
    trl = results.get("trl", {}).get("step_s")
    summary = {
        "ratio": results["grpo"]["step_s"] / trl if trl else None,
        "ratio_dapo": results["dapo"]["step_s"] / trl if trl else None,
        "floor_ratio": results["grpo"]["step_s"] / results["floor"]["step_s"],
        "grpo_s_per_step": results["grpo"]["step_s"],
        "dapo_s_per_step": results["dapo"]["step_s"],
        "trl_s_per_step": trl,
        "floor_s": results["floor"]["step_s"],
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
