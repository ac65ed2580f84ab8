"""The one script to run when a GPU is at hand for a few minutes: it checks and times what CPUs cannot.

1. ``sampler``: tokens/s of our sampler (`HFGenerator`) against ``model.generate`` on the same model, batch
   and settings (temperature 1, full softmax), the median of interleaved repeats.
2. ``grpo``: a GRPO step (KL reference on, micro-batches) in float32 (TF32), under bf16 autocast, and on the
   bf16 path (sampling from a bfloat16 copy): the mean step time after a warm-up step, its sampling and update
   parts and the peak GPU memory of each (`gpu_speed.check_grpo_precision`).
3. ``nccl``: the data-parallel path in a process group of ONE process on the NCCL backend: two GRPO steps
   with DDP, then with FSDP (``fully_shard``), each checkpointed and resumed for one more step, so every
   collective, the DDP and FSDP wrappers and the gathered checkpoint run on the GPU.

Two more speed sections need no model either (`gpu_speed.py`, issue 56): ``decode`` (our decode loop, lean and
with CUDA graphs, against ``model.generate``) and ``trl`` (a GRPO step of ours against TRL's ``GRPOTrainer``).

``--only SECTION [SECTION ...]`` runs just those sections, in that order (any of `SECTIONS`); without it the
default ones run (sampler, grpo, nccl) and those the flags add.

The order for a GPU window (README.md, "Running a GPU window"): with only about 4 usable minutes, the speed
sections, which need no model: ``--only decode grpo trl`` (about 3 minutes on one H100 or H200, untested);
with 15, the kit's first command with the same speed sections, then the kit's second command and the window
runner (benchmarks/gpu_window/window.py) for the rest.

Without CUDA (or with ``--dry``) it makes a dry pass: the same code on the CPU with a tiny model, gloo
instead of NCCL and autocast off (mixed precision is CUDA-only); a test runs it so this script cannot rot.
On one GPU the full pass takes about 2 minutes (a 135M-parameter-shaped random-init Llama over the
character tokenizer, so the LM head is small; a real tokenizer's head costs more). Each section reports
``ok`` or its error and the rest still run; the exit code is 1 if any section failed.

With ``--engine vllm`` (vLLM installed: README.md, "Sampling with vLLM") two more sections run:

4. ``engines``: tokens/s of vLLM (`VLLMGenerator`), our sampler and ``model.generate`` at 1, 16 and 64 rows on
   a 0.5B-parameter-shaped Llama in bf16 (the same three, interleaved; medians of repeats);
5. ``grpo_engines``: a GRPO step with LoRA r16 (bf16 autocast) sampled by our sampler and by vLLM
   (``--engine vllm``: colocated, ``gpu_memory_utilization`` 0.3, asleep during the update): mean step
   time after a warm-up step, the share of it spent sampling and syncing weights, peak memory, and the
   sampler-trainer mismatch (``sampler/kl_k3``). On a GPU the step with vLLM is expected to be several
   times faster; this has not been measured (no GPU was at hand when it was written).

The dry pass runs them on the CPU with vLLM's CPU build (a test runs it where vLLM is installed).

With ``--async``, a section ``async``: GRPO at ``max_staleness`` 0 and 1 on the one GPU, sampled by vLLM with
``--engine vllm`` (a thread of the trainer drives the engine, which shares the GPU with the trainer; issue 38)
or by our sampler in a process of its own: the step time of each, how long each side waited, the staleness
seen and the sampler-trainer mismatch. The dry pass runs it on the CPU (with vLLM's CPU build where installed).

With ``--learning``, one more section:

6. ``learning``: the GPU recipe of `real_learning` (``--gpu``: SmolLM2-135M-Instruct from the device kit,
   GRPO on 2-digit additions, held out there and on GSM8K, the bf16 sampler copy, our sampler unless vLLM is
   installed) as a smoke run of ``LEARNING_STEPS`` steps: step time, tokens/s, the reward curve, and held-out
   accuracy before and after on ``LEARNING_EVAL_PROBLEMS`` problems of each (the older recipe took 6 minutes
   on one H200: benchmarks/gpu_window/README.md, "The first GPU run"). The model is ``--learning-model``, else the kit's
   (``$REASONGYM_KIT_MODEL``). The dry pass runs the same recipe with the tiny random model on the CPU. The
   learning curve itself is `gpu_window/window.py`'s.
7. ``star_csqa``: the GPU preset of `star_csqa` (``--gpu``: STaR with rationalization on CommonsenseQA,
   the same model, our sampler unless vLLM is installed) for about one iteration (``STAR_CSQA_BUDGET`` sampled
   tokens): held-out accuracy on ``LEARNING_EVAL_PROBLEMS`` validation problems before and after, the tokens
   sampled and the share of training problems kept. Not yet run on a GPU. The dry pass: the tiny model.

Run: ``python -m benchmarks.gpu_check [--only SECTION ...] [--engine vllm] [--async] [--learning]`` (``--dry``
forces the CPU pass). Last line: one JSON object.

Why this file is long: it is the one command a short GPU window runs, and each section is its own short
function over the same dry pass and the same one-line report; the speed sections already live in
`gpu_speed.py`, and the learning sections call the studies' own smoke passes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import socket
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from reasongym.agents.algorithms import preset_configs  # noqa: E402
from reasongym.agents.grpo import train_grpo  # noqa: E402
from reasongym.generation import HFGenerator, SamplingParams  # noqa: E402
from reasongym.policy.tiny import (
    make_char_tokenizer,
    make_tiny_model,  # noqa: E402
)

ENV = "reasongym/Arithmetic-v0"
SIZES = {  # model shape and workload of the real pass and of the dry pass
    "gpu": {
        "model": {"hidden_size": 576, "num_layers": 30, "num_heads": 9, "intermediate_size": 1536},
        "sampler": {"batch": 64, "new_tokens": 256, "repeats": 3},
        "grpo": {"num_prompts": 16, "group_size": 8, "max_new_tokens": 128, "micro_batch_size": 32},
    },
    "dry": {
        "model": {"hidden_size": 32, "num_layers": 1, "num_heads": 2, "intermediate_size": 64},
        "sampler": {"batch": 4, "new_tokens": 8, "repeats": 1},
        "grpo": {"num_prompts": 2, "group_size": 2, "max_new_tokens": 8, "micro_batch_size": 2},
    },
}
ENGINE_SIZES = {  # --engine vllm: a 0.5B-shaped model (vLLM's CPU attention needs a head size of 32 or more)
    "gpu": {
        "model": {"hidden_size": 896, "num_layers": 24, "num_heads": 14, "intermediate_size": 4864},
        "rows": (1, 16, 64),
        "new_tokens": 256,
        "repeats": 3,
        "grpo": {"num_prompts": 16, "group_size": 8, "max_new_tokens": 256, "micro_batch_size": 16},
    },
    "dry": {
        "model": {"hidden_size": 64, "num_layers": 1, "num_heads": 2, "intermediate_size": 128},
        "rows": (1, 4),
        "new_tokens": 8,
        "repeats": 1,
        "grpo": {"num_prompts": 2, "group_size": 2, "max_new_tokens": 8, "micro_batch_size": 2},
    },
}


def _model(sizes: dict[str, Any], device: torch.device) -> tuple[torch.nn.Module, Any]:
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, max_position_embeddings=1024, **sizes["model"])
    return model.to(device), tokenizer


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def check_sampler(sizes: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Median tokens/s of `HFGenerator` and ``model.generate`` (bf16 weights on a GPU, float32 on a CPU)."""
    model, tokenizer = _model(sizes, device)
    model = model.to(torch.bfloat16 if device.type == "cuda" else torch.float32).eval()
    work = sizes["sampler"]
    prompts = [
        f"Q: what is {17 * i + 3} + {(31 * i) % 1000}? A:" + " " * (i % 7) for i in range(work["batch"])
    ]
    generator = HFGenerator(model, tokenizer)

    def ours(seed: int) -> float:
        started = time.perf_counter()
        batch = generator.generate_batch(
            prompts, SamplingParams(max_new_tokens=work["new_tokens"], seed=seed)
        )
        _synchronize(device)
        return batch.completion_ids.numel() / (time.perf_counter() - started)

    def theirs(seed: int) -> float:
        inputs = tokenizer(prompts, padding=True, return_tensors="pt").to(device)
        torch.manual_seed(seed)
        started = time.perf_counter()
        with torch.no_grad():
            out = model.generate(
                **inputs,
                do_sample=True,
                max_new_tokens=work["new_tokens"],
                temperature=1.0,
                top_k=0,
                top_p=1.0,
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
            )
        _synchronize(device)
        return out[:, inputs["input_ids"].shape[1] :].numel() / (time.perf_counter() - started)

    ours(-1), theirs(-1)  # warm-up: allocator, kernels
    rates = [(ours(seed), theirs(seed)) for seed in range(work["repeats"])]
    mine, generate = statistics.median(r[0] for r in rates), statistics.median(r[1] for r in rates)
    return {
        "ours_tokens_per_s": round(mine, 1),
        "generate_tokens_per_s": round(generate, 1),
        "ratio": round(mine / generate, 3),
        **work,
    }


def _grpo(
    sizes: dict[str, Any], device: torch.device, steps: int, run_dir: Path | None = None, **fields: Any
) -> tuple[list[dict[str, float]], torch.nn.Module]:
    """``steps`` GRPO steps of a fresh model (resumed from ``run_dir`` when it holds a checkpoint)."""
    model, tokenizer = _model(sizes, device)
    configs = preset_configs(
        "tiny",
        "grpo",
        max_steps=steps,
        kl="k3_loss",
        difficulty=1,
        progress_bar=False,
        samples_every=0,
        **sizes["grpo"],
        **fields,
    )
    result = train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        ENV,
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=run_dir,
    )
    return list(result.history), model


def check_process_group(sizes: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """DDP and FSDP GRPO steps in a one-process group (NCCL on a GPU, gloo on a CPU), checkpoint and resume."""
    import torch.distributed as dist

    backend = "nccl" if device.type == "cuda" else "gloo"
    with socket.socket() as probe:  # a free port for the rendezvous
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0", "LOCAL_RANK": "0"})
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend=backend, rank=0, world_size=1)
    report: dict[str, Any] = {"backend": backend}
    try:
        for parallelism in ("ddp", "fsdp"):
            with tempfile.TemporaryDirectory() as folder:
                first, model = _grpo(sizes, device, steps=2, run_dir=Path(folder), parallelism=parallelism)
                wrapped = type(model).__name__
                resumed, _ = _grpo(sizes, device, steps=3, run_dir=Path(folder), parallelism=parallelism)
            report[parallelism] = {
                "model_class": wrapped,
                "steps": len(first) + len(resumed),
                "step_s": round(statistics.mean(h["perf/step_s"] for h in first + resumed), 3),
            }
            if parallelism == "fsdp" and not wrapped.startswith("FSDP"):
                raise RuntimeError(
                    f"parallelism='fsdp' left the model a {wrapped}, not a sharded FSDP module"
                )
    finally:
        dist.destroy_process_group()
    return report


def check_engines(sizes: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Median tokens/s of vLLM, our sampler and ``model.generate`` at each row count (bf16 on a GPU)."""
    from reasongym.generation.engines import VLLMSettings
    from reasongym.generation.vllm_engine import VLLMGenerator

    model, tokenizer = _model(sizes, device)
    model = model.to(torch.bfloat16 if device.type == "cuda" else torch.float32).eval()
    started = time.perf_counter()
    engine = VLLMGenerator(model, tokenizer, VLLMSettings(gpu_memory_utilization=0.5, sleep=False))
    report: dict[str, Any] = {"engine_start_s": round(time.perf_counter() - started, 1)}
    ours = HFGenerator(model, tokenizer)
    for rows in sizes["rows"]:
        prompts = [f"Q: what is {17 * i + 3} + {(31 * i) % 1000}? A:" for i in range(rows)]
        runs = {
            "vllm": lambda seed, p=prompts: _sampled(engine, p, sizes["new_tokens"], seed),
            "ours": lambda seed, p=prompts: _sampled(ours, p, sizes["new_tokens"], seed),
            "generate": lambda seed, p=prompts: _generated(model, tokenizer, p, sizes["new_tokens"], seed),
        }
        for run in runs.values():
            run(10_000)  # warm-up round, not counted
        rates = {name: [] for name in runs}
        for seed in range(sizes["repeats"]):
            for name, run in runs.items():
                begun = time.perf_counter()
                tokens = run(seed)
                _synchronize(device)
                rates[name].append(tokens / (time.perf_counter() - begun))
        medians = {name: statistics.median(values) for name, values in rates.items()}
        report[f"rows_{rows}"] = {
            **{f"{name}_tokens_per_s": round(value, 1) for name, value in medians.items()},
            "vllm_over_ours": round(medians["vllm"] / medians["ours"], 2),
        }
    engine.close()
    return report


def _sampled(sampler: Any, prompts: list[str], new_tokens: int, seed: int) -> float:
    """Tokens a sampler generates for ``prompts`` (temperature 1)."""
    batch = sampler.generate_batch(prompts, SamplingParams(max_new_tokens=new_tokens, seed=seed))
    return float(batch.completion_mask.sum())


def _generated(model: Any, tokenizer: Any, prompts: list[str], new_tokens: int, seed: int) -> float:
    """Tokens ``model.generate`` samples for ``prompts`` (temperature 1, full softmax), padding excluded."""
    inputs = tokenizer(prompts, padding=True, return_tensors="pt").to(model.device)
    torch.manual_seed(max(seed, 0))
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
    return float((out[:, inputs["input_ids"].shape[1] :] != tokenizer.pad_token_id).sum())


def check_grpo_engines(sizes: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """A GRPO step with LoRA r16 sampled by our sampler and by vLLM: step time, its sampling share, memory."""
    report: dict[str, Any] = {}
    autocast = "bf16" if device.type == "cuda" else "off"
    for engine in ("hf", "vllm"):
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
        history, _ = _grpo(
            sizes,
            device,
            steps=3,
            autocast=autocast,
            engine=engine,
            lora={"rank": 16, "alpha": 32.0},
        )
        steady = history[1:]
        peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
        report[engine] = {
            "step_s": round(statistics.mean(h["perf/step_s"] for h in steady), 3),
            "generate_s": round(statistics.mean(h.get("perf/generate_s", 0.0) for h in steady), 3),
            "weight_sync_s": round(statistics.mean(h.get("perf/weight_sync_s", 0.0) for h in steady), 3),
            "old_logp_s": round(statistics.mean(h.get("perf/old_logp_s", 0.0) for h in steady), 3),
            "sampler_kl_k3": max((h.get("sampler/kl_k3", 0.0) for h in history), default=0.0),
            "peak_memory_gib": None if peak is None else round(peak, 3),
        }
    report["step_hf_over_vllm"] = round(report["hf"]["step_s"] / report["vllm"]["step_s"], 2)
    return report


def check_async(engine: str, device: torch.device, dry: bool) -> dict[str, Any]:
    """GRPO at ``max_staleness`` 0 and 1 on the same device (``engine`` vllm: a thread drives the engine while
    the trainer updates; hf: a sampler process with its own copy): step time after a warm-up step, the
    waits on each side, and the staleness the steps saw."""
    sizes = (ENGINE_SIZES if engine == "vllm" else SIZES)["dry" if dry else "gpu"]
    report: dict[str, Any] = {"engine": engine}
    for staleness in (0, 1):
        # vLLM keeps one parallel state per process, which a dropped engine takes with it when it is collected:
        # collect the earlier sections' engines before this one starts, not while it does.
        gc.collect()
        history, _ = _grpo(
            sizes,
            device,
            steps=4,
            autocast="bf16" if device.type == "cuda" else "off",
            engine=engine,
            max_staleness=staleness,
        )
        steady = history[1:]
        report[f"k{staleness}"] = {
            "step_s": round(statistics.mean(h["perf/step_s"] for h in steady), 3),
            "train_s": round(statistics.mean(h["perf/train_s"] for h in steady), 3),
            "trainer_wait_s": round(statistics.mean(h.get("async/trainer_wait_s", 0.0) for h in steady), 3),
            "sampler_wait_s": round(statistics.mean(h.get("async/sampler_wait_s", 0.0) for h in steady), 3),
            "staleness_max": max(h.get("async/staleness_max", 0.0) for h in history),
            "sampler_kl_k3": max((h.get("sampler/kl_k3", 0.0) for h in history), default=0.0),
        }
    report["speedup_k1"] = round(report["k0"]["step_s"] / report["k1"]["step_s"], 2)
    return report


LEARNING_STEPS = 4
LEARNING_EVAL_PROBLEMS = 32


def check_learning(dry: bool, model: str | None) -> dict[str, Any]:
    """`real_learning --gpu --smoke`: a few GRPO steps of the GPU recipe (the CPU dry pass: tiny model)."""
    import dataclasses

    from benchmarks import real_learning

    setting = real_learning.PRESETS["gpu"]
    setting = real_learning.dry(setting) if dry else setting
    setting = dataclasses.replace(setting, eval_problems=LEARNING_EVAL_PROBLEMS if not dry else 4)
    setting = dataclasses.replace(setting, model=model) if model else setting
    setting = real_learning.resolve_offline(setting)  # the kit's model; the engine decided first
    return {"engine": setting.engine, **real_learning.smoke(setting, LEARNING_STEPS if not dry else 2)}


STAR_CSQA_BUDGET = 16_000
"""Sampled tokens of the STaR smoke run: about 80 problems' rationales of 200 tokens, one iteration."""


def check_star_csqa(dry: bool, model: str | None) -> dict[str, Any]:
    """`star_csqa.smoke`: about one STaR iteration of the GPU preset (the CPU dry pass: tiny model)."""
    import dataclasses

    from benchmarks import real_learning, star_csqa

    setting = star_csqa.PRESETS["gpu"]
    sizes = {"budget_tokens": STAR_CSQA_BUDGET, "star_iterations": 1, "eval_problems": LEARNING_EVAL_PROBLEMS}
    setting = star_csqa.dry(setting) if dry else dataclasses.replace(setting, **sizes)
    setting = dataclasses.replace(setting, model=model) if model else setting
    setting = real_learning.resolve_offline(setting)  # the kit's model; the engine decided first
    return {"engine": setting.engine, **star_csqa.smoke(setting)}


def _vllm_installed() -> bool:
    from reasongym.generation.engines import vllm_installed

    return vllm_installed()


def _section(name: str, check: Callable[[], dict[str, Any]], results: dict[str, Any]) -> None:
    started = time.perf_counter()
    try:
        results[name] = {"ok": True, **check()}
    except Exception as error:  # a failed section must not hide the others: report it and go on
        traceback.print_exc()
        results[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"[:500]}
    results[name]["seconds"] = round(time.perf_counter() - started, 1)
    print(f"{name}: {json.dumps(results[name])}", file=sys.stderr)


SECTIONS = (
    "sampler",
    "decode",
    "grpo",
    "trl",
    "nccl",
    "engines",
    "grpo_engines",
    "async",
    "learning",
    "star_csqa",
)
"""Every section, in the order a full pass runs them (``--only`` picks some)."""


def _sections(args: argparse.Namespace, dry: bool, device: torch.device) -> dict[str, Callable[[], dict]]:
    """Each section's check, by name (the process-group section is ``process_group`` in the dry pass)."""
    from benchmarks import gpu_speed

    sizes = SIZES["dry" if dry else "gpu"]
    engine_sizes = ENGINE_SIZES["dry" if dry else "gpu"]
    ahead = args.engine if args.engine == "hf" or _vllm_installed() else "hf"
    return {
        "sampler": lambda: check_sampler(sizes, device),
        "decode": lambda: gpu_speed.check_decode(sizes, device),
        "grpo": lambda: gpu_speed.check_grpo_precision(sizes, device),
        "trl": lambda: gpu_speed.check_trl(sizes, device),
        "nccl": lambda: check_process_group(sizes, device),
        "engines": lambda: check_engines(engine_sizes, device),
        "grpo_engines": lambda: check_grpo_engines(engine_sizes, device),
        "async": lambda: check_async(ahead, device, dry),
        "learning": lambda: check_learning(dry, args.learning_model),
        "star_csqa": lambda: check_star_csqa(dry, args.learning_model),
    }


def _chosen(args: argparse.Namespace) -> list[str]:
    """``--only``'s sections, else the default ones and those the flags add."""
    if args.only:
        return list(args.only)
    chosen = ["sampler", "grpo", "nccl"]
    chosen += ["engines", "grpo_engines"] if args.engine == "vllm" else []
    chosen += ["async"] if args.run_async else []
    return chosen + (["learning", "star_csqa"] if args.learning else [])


def main() -> int:
    """Run the chosen sections; print one JSON line; return 1 if any section failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry", action="store_true", help="the CPU pass even when CUDA is available")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, metavar="SECTION", help=f"of {list(SECTIONS)}")
    parser.add_argument(
        "--engine", choices=["hf", "vllm"], default="hf", help="vllm: also time vLLM against our sampler"
    )
    parser.add_argument("--learning", action="store_true", help="also a smoke run of the GPU learning recipe")
    parser.add_argument(
        "--async", dest="run_async", action="store_true", help="also GRPO with the sampler one version ahead"
    )
    parser.add_argument(
        "--learning-model", default=None, help="the recipe's model (default: $REASONGYM_KIT_MODEL, the kit's)"
    )
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    dry = args.dry or not torch.cuda.is_available()
    device = torch.device("cpu") if dry else torch.device("cuda", 0)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "dry": dry,
        "device": torch.cuda.get_device_name(device) if not dry else "cpu",
        "torch": torch.__version__,
    }
    checks = _sections(args, dry, device)
    for name in _chosen(args):
        _section("process_group" if name == "nccl" and dry else name, checks[name], results)
    results["seconds"] = round(time.perf_counter() - started, 1)
    results["ok"] = all(value.get("ok", True) for value in results.values() if isinstance(value, dict))
    print(json.dumps(results))
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
