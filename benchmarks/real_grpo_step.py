"""One GRPO configuration on SmolLM2-135M-Instruct, in its own process so that its peak memory is its own:
ours (`train_grpo`) or TRL's ``GRPOTrainer``, full fine-tuning or LoRA. `bench_real_model.py --grpo` runs
it once per configuration; it can also run alone.

The batch is the same for both: 4 Arithmetic-v0 level-1 prompts (chat-formatted) x 4 samples of at most 64
new tokens, temperature 1, KL to the starting model with coefficient 0.04, one optimizer step per batch
(mu 1), AdamW at lr 1e-6, float32, no gradient checkpointing and the whole batch in one pass (TRL turns bf16
and gradient checkpointing on by default, our ``default`` preset checkpointing and micro-batches of 2 rows;
all are off here). LoRA: rank 16, alpha 32, dropout 0, on the seven attention and MLP projections.
``--steps`` steps run (default 3); the first warms caches up and the median of the others is reported.

``--engine vllm`` samples with an in-process vLLM engine (ours: ``RolloutConfig.engine``; TRL: ``use_vllm`` in
colocate mode); `bench_engines.py --grpo` runs each engine. ``cpu_s_per_step`` then includes building the
engine; ``steady_cpu_s_per_step`` (the median CPU seconds of the steps after the first) and ``step_s`` do not.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.real_grpo_step --impl ours --mode lora --model outputs/smollm2/model

Last line: one JSON object (seconds per step, peak RSS of the process).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

import reasongym  # noqa: E402
from reasongym.agents.config import LORA_TARGET_MODULES  # noqa: E402
from reasongym.agents.runtime.hooks import StepHook, StepView  # noqa: E402
from reasongym.policy.loading import load_policy  # noqa: E402

ENV = "reasongym/Arithmetic-v0"
PROMPTS, GROUP, NEW_TOKENS, KL, LR, RANK, ALPHA = 4, 4, 64, 0.04, 1e-6, 16, 32.0
STEP_ENDS: list[float] = []
"""CPU seconds of the process (``time.process_time``) at the end of each step, for CPU-seconds per step."""


class StepEnds(StepHook):
    """A step hook: appends the process's CPU seconds to `STEP_ENDS` at the end of each of our steps."""

    def after_update(self, view: StepView) -> bool:
        STEP_ENDS.append(time.process_time())
        return False


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["ours", "trl"], required=True)
    parser.add_argument("--mode", choices=["full", "lora"], required=True)
    parser.add_argument("--model", required=True, help="a .gguf file or a model folder")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument(
        "--engine",
        choices=["hf", "vllm"],
        default="hf",
        help="who samples: ours, our sampler (hf) or an in-process vLLM engine; TRL: vLLM in colocate mode",
    )
    parser.add_argument(
        "--memory-saving",
        action="store_true",
        help="ours only: the default preset's gradient checkpointing and micro-batches of 2 rows (what it costs)",
    )
    return parser.parse_args()


def run_ours(
    model, tokenizer, mode: str, steps: int, memory_saving: bool = False, engine: str = "hf"
) -> list[float]:
    """Seconds of each of ``steps`` GRPO steps of `train_grpo`; ``memory_saving``: the ``default`` preset's
    gradient checkpointing and micro-batches of 2 rows instead of the whole batch without recompute;
    ``engine``: who samples (``vllm``: the engine is built before the first step, outside its time)."""
    history = train_ours(model, tokenizer, mode, steps, memory_saving, engine)
    return [row["perf/step_s"] for row in history]


def train_ours(
    model,
    tokenizer,
    mode: str,
    steps: int,
    memory_saving: bool = False,
    engine: str = "hf",
    max_staleness: int = 0,
    stale_old_logp: str = "rescore",
    hooks: Sequence[Any] = (),
) -> list[dict[str, float]]:
    """`run_ours`'s run, its per-step metrics (``perf/``, ``async/``...); ``max_staleness`` K >= 1: a sampler
    process draws the batches ahead (`bench_async.py` measures it); ``hooks``: more step hooks."""
    memory = {} if memory_saving else {"gradient_checkpointing": False, "micro_batch_size": None}
    from reasongym.agents import preset_configs, train_grpo

    configs = preset_configs(
        "default",
        "grpo",
        max_steps=steps,
        num_prompts=PROMPTS,
        group_size=GROUP,
        max_new_tokens=NEW_TOKENS,
        difficulty=1,
        lr=LR,
        kl="k3_loss",
        kl_coef=KL,
        mu=1,
        progress_bar=False,
        samples_every=0,
        lora={"rank": RANK if mode == "lora" else 0, "alpha": ALPHA},
        engine=engine,
        max_staleness=max_staleness,
        stale_old_logp=stale_old_logp,
        **memory,
    )
    result = train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        ENV,
        run=configs["run"],
        rollout=configs["rollout"],
        hooks=[StepEnds(), *hooks],
    )
    return result.history


def run_trl(model, tokenizer, mode: str, steps: int, engine: str = "hf") -> list[float]:
    """Seconds of each of ``steps`` steps of TRL's ``GRPOTrainer`` on the same batch shape; ``engine='vllm'``:
    TRL samples with vLLM in colocate mode (its engine loads the model from ``model.name_or_path``)."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOTrainer

    env = reasongym.make(ENV).unwrapped
    problems = [env.problem_at(i, difficulty=1) for i in range(PROMPTS * steps)]
    dataset = Dataset.from_list([{"prompt": env.messages(p), "index": i} for i, p in enumerate(problems)])

    def reward(completions: list, index: list, **_: object) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        return [float(env.score(problems[i], text).score) for i, text in zip(index, texts, strict=True)]

    class Timer(TrainerCallback):
        seconds: list[float] = []

        def on_step_begin(self, *args: object, **kwargs: object) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, *args: object, **kwargs: object) -> None:
            self.seconds.append(time.perf_counter() - self.started)
            STEP_ENDS.append(time.process_time())

    timer = Timer()
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=_trl_config(steps, engine),
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=_trl_lora(mode),
        callbacks=[timer],
    )
    trainer.train()
    return timer.seconds


def _trl_config(steps: int, engine: str) -> Any:
    """TRL's GRPOConfig for our batch shape and settings (float32, one update per batch, on the CPU)."""
    import tempfile

    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=tempfile.mkdtemp(),
        per_device_train_batch_size=PROMPTS * GROUP,
        num_generations=GROUP,
        max_completion_length=NEW_TOKENS,
        max_steps=steps,
        beta=KL,
        learning_rate=LR,
        num_iterations=1,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        gradient_checkpointing=False,
        temperature=1.0,
        disable_dropout=True,
        seed=0,
        bf16=False,  # TRL turns bf16 on by default: float32 like ours
        **(
            {"use_vllm": True, "vllm_mode": "colocate", "vllm_max_model_length": 1024}
            if engine == "vllm"
            else {}
        ),
    )


def _trl_lora(mode: str) -> Any:
    """Our LoRA settings as peft's config for TRL (None for full fine-tuning)."""
    if mode != "lora":
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=RANK,
        lora_alpha=ALPHA,
        lora_dropout=0.0,
        target_modules=list(LORA_TARGET_MODULES),
        task_type="CAUSAL_LM",
    )


def _steady_cpu() -> float | None:
    """Median CPU seconds of the steps after the first (None with fewer than two)."""
    gaps = [later - earlier for earlier, later in zip(STEP_ENDS, STEP_ENDS[1:], strict=False)]
    return round(statistics.median(gaps), 2) if gaps else None


def main() -> None:
    """Run one configuration and print its JSON line."""
    args = _args()
    torch.set_num_threads(1)
    model, tokenizer = load_policy(args.model)
    started = time.process_time()
    if args.impl == "ours":
        seconds = run_ours(model, tokenizer, args.mode, args.steps, args.memory_saving, args.engine)
    else:
        seconds = run_trl(model, tokenizer, args.mode, args.steps, args.engine)
    print(f"{args.impl} {args.mode}: step seconds {[round(s, 1) for s in seconds]}", file=sys.stderr)
    steady = seconds[1:] or seconds
    print(
        json.dumps(
            {
                "impl": args.impl,
                "mode": args.mode,
                "engine": args.engine,
                "memory_saving": args.memory_saving,
                "step_s": round(statistics.median(steady), 2),
                "first_step_s": round(seconds[0], 2),
                "steps": len(seconds),
                "cpu_s_per_step": round((time.process_time() - started) / max(len(seconds), 1), 2),
                "steady_cpu_s_per_step": _steady_cpu(),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            }
        )
    )


if __name__ == "__main__":
    main()
