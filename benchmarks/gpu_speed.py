"""`gpu_check.py`'s speed sections of issue 56, which need no model file: the decode loop against
``model.generate``, a GRPO step in float32, under bf16 autocast and on the bf16 path, and a GRPO step of ours
against TRL's ``GRPOTrainer``. All on a 135M-parameter-shaped Llama with random weights over the character
tokenizer (`gpu_check.SIZES`), so that a window can run them before (or without) the kit's model.

- ``decode``: tokens/s at 64 rows x 256 new tokens, temperature 1, bf16 weights, of ``model.generate``, of our
  sampler looking at the finished rows every step (the old loop), every 8 steps (the lean loop, the GPU
  default) and on a static cache with CUDA graphs; medians of interleaved repeats after a warm-up of each (the
  graphs' capture is in the warm-up). Goal (issue 56): the lean or graphed loop at least 1.2x ``generate``.
- ``grpo_precision``: a GRPO step (16 prompts x 8, 128 tokens, KL reference on) in float32 with TF32, with
  bf16 autocast sampling from the float32 weights (the first GPU run's slow path: 5.04 s against 3.54 s), and
  on the bf16 path (autocast for the update, sampling from a bf16 copy): step, sampling and update seconds,
  peak memory. Goal: the bf16 path faster than float32.
- ``trl``: the same GRPO step (KL off, one update per batch) of ``train_grpo`` and of TRL's ``GRPOTrainer``,
  both in bf16, the median of the steps after the first. Goal: ours at most 0.7x TRL's.

The dry pass (CPU, `gpu_check.py --dry`) runs each at the tiny size: no autocast on a CPU, so
``grpo_precision`` reports float32 and the bf16 path only, and TRL runs in float32 on the CPU.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from typing import Any

import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.grpo import train_grpo
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

ENV = "reasongym/Arithmetic-v0"


def _model(
    sizes: dict[str, Any], device: torch.device, dtype: torch.dtype = torch.float32
) -> tuple[Any, Any]:
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, max_position_embeddings=1024, **sizes["model"])
    return model.to(device=device, dtype=dtype), tokenizer


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _prompts(rows: int) -> list[str]:
    return [f"Q: what is {17 * i + 3} + {(31 * i) % 1000}? A:" + " " * (i % 7) for i in range(rows)]


def check_decode(sizes: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Median tokens/s of ``model.generate`` and of our sampler's three loops (bf16 weights on a GPU)."""
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    model, tokenizer = _model(sizes, device, dtype)
    model.eval()
    work = sizes["sampler"]
    prompts, new = _prompts(work["batch"]), work["new_tokens"]
    ours = {
        "each_step": HFGenerator(model, tokenizer, sync_every=1),
        "lean": HFGenerator(model, tokenizer),
        "graphs": HFGenerator(model, tokenizer, static_cache=True),
    }
    runs = {name: _ours_run(sampler, prompts, new, device) for name, sampler in ours.items()}
    runs["generate"] = lambda seed: _generate_run(model, tokenizer, prompts, new, seed, device)
    report: dict[str, Any] = {"warmup_s": {}}
    for name, run in runs.items():  # warm-up: allocator, kernels, the graphs' capture
        started = time.perf_counter()
        try:
            run(10_000)
        except Exception as error:  # one variant failing (a compile error) must not hide the others
            report[f"{name}_error"] = f"{type(error).__name__}: {error}"[:300]
        report["warmup_s"][name] = round(time.perf_counter() - started, 1)
    runs = {name: run for name, run in runs.items() if f"{name}_error" not in report}
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for seed in range(work["repeats"]):
        for name, run in runs.items():
            rates[name].append(run(seed))
    medians = {name: statistics.median(values) for name, values in rates.items()}
    report.update({f"{name}_tokens_per_s": round(value, 1) for name, value in medians.items()})
    for name in ("each_step", "lean", "graphs"):
        if name in medians and "generate" in medians:
            report[f"{name}_over_generate"] = round(medians[name] / medians["generate"], 3)
    return {**report, **work}


def _ours_run(sampler: HFGenerator, prompts: list[str], new: int, device: torch.device) -> Any:
    def run(seed: int) -> float:
        started = time.perf_counter()
        batch = sampler.generate_batch(prompts, SamplingParams(max_new_tokens=new, seed=seed))
        _synchronize(device)
        return float(batch.completion_mask.sum()) / (time.perf_counter() - started)

    return run


def _generate_run(
    model: Any, tokenizer: Any, prompts: list[str], new: int, seed: int, device: torch.device
) -> float:
    """Real (non-padding) tokens per second of ``model.generate`` at temperature 1, full softmax."""
    inputs = tokenizer(prompts, padding=True, return_tensors="pt").to(device)
    torch.manual_seed(seed)
    started = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            **inputs,
            do_sample=True,
            max_new_tokens=new,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    _synchronize(device)
    completion = out[:, inputs["input_ids"].shape[1] :]
    return float((completion != tokenizer.pad_token_id).sum()) / (time.perf_counter() - started)


PRECISIONS = {
    "float32": {"autocast": "tf32", "sampler_weights": "policy"},
    "autocast": {"autocast": "bf16", "sampler_weights": "policy"},
    "bf16_path": {"autocast": "bf16", "sampler_weights": "bf16"},
}
"""The GRPO step's precisions: float32 (TF32 matrix products), bf16 autocast over float32 weights (sampling
too), and the bf16 path (autocast for scoring and the update, sampling from a bfloat16 copy)."""


def grpo_steps(
    sizes: dict[str, Any], device: torch.device, steps: int, **fields: Any
) -> list[dict[str, float]]:
    """``steps`` GRPO steps of a fresh random model with ``sizes["grpo"]`` and ``fields``; their metrics."""
    model, tokenizer = _model(sizes, device)
    configs = preset_configs(
        "tiny",
        "grpo",
        max_steps=steps,
        difficulty=1,
        progress_bar=False,
        samples_every=0,
        **{"kl": "k3_loss", **sizes["grpo"], **fields},
    )
    result = train_grpo(
        configs["grpo"], model, tokenizer, ENV, run=configs["run"], rollout=configs["rollout"]
    )
    return list(result.history)


def check_grpo_precision(sizes: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Step seconds (mean after a warm-up step), their sampling and update parts, and peak memory per precision."""
    report: dict[str, Any] = {}
    for name, fields in PRECISIONS.items():
        if device.type != "cuda":  # a CPU refuses autocast and TF32: float32, and float32 with the bf16 copy
            if name == "autocast":
                continue
            fields = {**fields, "autocast": "off"}
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
        history = grpo_steps(sizes, device, 3, **fields)[1:]
        peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
        report[name] = {
            "step_s": round(statistics.mean(h["perf/step_s"] for h in history), 3),
            "generate_s": round(statistics.mean(h.get("perf/generate_s", 0.0) for h in history), 3),
            "old_logp_s": round(statistics.mean(h.get("perf/old_logp_s", 0.0) for h in history), 3),
            "train_s": round(statistics.mean(h.get("perf/train_s", 0.0) for h in history), 3),
            "sampler_kl_k3": float(
                f"{max(h.get('sampler/kl_k3', 0.0) for h in history):.3g}"
            ),  # ~1e-7 on a CPU
            "peak_memory_gib": None if peak is None else round(peak, 3),
        }
    if "float32" in report and "bf16_path" in report:
        report["bf16_path_over_float32"] = round(
            report["bf16_path"]["step_s"] / report["float32"]["step_s"], 3
        )
    return report


def check_trl(sizes: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Median step seconds (after the first) of ours and of TRL's ``GRPOTrainer``, same batch, bf16 on a GPU."""
    import transformers

    cuda, work = device.type == "cuda", sizes["grpo"]
    steps = 4 if cuda else 2
    precision = PRECISIONS["bf16_path"] if cuda else {"autocast": "off"}  # a CPU: float32
    ours = grpo_steps(sizes, device, steps, kl="off", mu=1, **precision)
    model, tokenizer = _model(sizes, device)
    transformers.set_seed(0)
    trl = _trl_steps(model, tokenizer, work, steps, cuda)
    mine = statistics.median(h["perf/step_s"] for h in ours[1:])
    theirs = statistics.median(trl[1:])
    return {
        "ours_step_s": round(mine, 3),
        "trl_step_s": round(theirs, 3),
        "ours_over_trl": round(mine / theirs, 3),
        "steps": steps,
        **work,
    }


def _trl_steps(model: Any, tokenizer: Any, work: dict[str, Any], steps: int, cuda: bool) -> list[float]:
    """Seconds of each of ``steps`` steps of TRL's ``GRPOTrainer`` on ``work``'s batch (plain-text prompts)."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    import reasongym

    env = reasongym.make(ENV).unwrapped
    prompts = work["num_prompts"] * steps
    problems = [env.problem_at(i, difficulty=1) for i in range(prompts)]
    # Plain text: the character tokenizer has no chat template (ours formats the same way, `format_prompt`).
    texts = [env.messages(p)[-1]["content"] for p in problems]
    dataset = Dataset.from_list([{"prompt": text, "index": i} for i, text in enumerate(texts)])

    def reward(completions: list, index: list, **_: object) -> list[float]:
        return [float(env.score(problems[i], text).score) for i, text in zip(index, completions, strict=True)]

    seconds: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *args: object, **kwargs: object) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, *args: object, **kwargs: object) -> None:
            seconds.append(time.perf_counter() - self.started)

    rows, micro = work["num_prompts"] * work["group_size"], work["micro_batch_size"]
    config = GRPOConfig(  # one optimizer step per batch of rows, accumulated over micro-batches as ours
        output_dir=tempfile.mkdtemp(),
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=rows // micro,
        num_generations=work["group_size"],
        max_completion_length=work["max_new_tokens"],
        max_steps=steps,
        beta=0.0,
        learning_rate=1e-6,
        num_iterations=1,
        use_cpu=not cuda,
        bf16=cuda,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        gradient_checkpointing=False,
        temperature=1.0,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[Timer()],
    )
    trainer.train()
    return seconds
