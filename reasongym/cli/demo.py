"""``reasongym demo``: watch a tiny model get better at arithmetic from a verifier alone, on a CPU.

Read top to bottom: config, then the steps in run order. The demo builds a random-init tiny Llama over a
character tokenizer, warm-starts it with a short SFT on reference solutions of 2-digit additions
(``reasongym/Arithmetic-v0``, level 1) until a probe accuracy shows the format is learnt, measures pass@1 and
pass@8 on held-out test problems, trains with GRPO (or DAPO) for a fixed number of steps, measures again,
and prints a before/after table. The run folder holds the metrics, their plot, the two evaluation files
with a pass@k plot, the tokenizer, and the final checkpoint, which ``reasongym eval RUN_DIR ...`` loads.

Every phase is a fixed amount of work (the warm start stops at a probe accuracy, which a seed fixes; the RL
phase runs ``rl_steps`` steps), so a fresh clone prints the same figures on a busy machine as on a quiet
one, only later.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, make_dataclass, replace
from pathlib import Path
from typing import Any, Literal

from reasongym.errors import ConfigError

ENV_ID = "reasongym/Arithmetic-v0"
"""The demo's environment (at its default level 1: 2-digit addition written column by column)."""
MAX_NEW_TOKENS = 72
"""Longest completion (level-1 solutions take 40-56 characters plus EOS; the ``tiny`` preset's limit)."""
ALGOS = ("grpo", "dapo")


@dataclass(frozen=True)
class DemoConfig:
    """Settings of ``reasongym demo``: what is trained, how long, and how it is measured."""

    algo: Literal["grpo", "dapo"] = "grpo"
    """RL algorithm: ``grpo`` or ``dapo``."""
    rl_steps: int = 100
    """RL steps, each a rollout batch of 16 prompts x 8 samples (the ``tiny`` preset's): a fixed amount of
    work, so the figures do not depend on how busy the machine is, only on its CPU (README.md, "Train", has the
    range measured on three machines)."""
    eval_problems: int = 200
    """Held-out test problems of each evaluation."""
    eval_samples: int = 8
    """Samples per problem at each evaluation (pass@1 is their mean accuracy, pass@8 needs 8)."""
    eval_temperature: float = 1.0
    """Sampling temperature of the evaluations: the policy's own distribution, which RL trains."""
    warm_start_target: float = 0.4
    """Stop the warm start once greedy accuracy on the validation probe reaches this. At 0.3 one seed in two
    started with most groups at zero reward and gained under 10 points; at 0.4 both seeds tried gained > 20."""
    seed: int = 0
    """Seed of the model, the data order and the sampling."""
    quick: bool = False
    """A few steps of each phase on a handful of problems, for tests: seconds, and no real gain."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        if self.algo not in ALGOS:
            raise ConfigError(f"algo={self.algo!r} is not allowed; choose one of {list(ALGOS)}")
        if self.rl_steps < 1:
            raise ConfigError(f"rl_steps={self.rl_steps!r} is not allowed; expected an integer >= 1")
        if self.eval_samples < 8:
            raise ConfigError(f"eval_samples={self.eval_samples} is not allowed; pass@8 needs at least 8")


@dataclass(frozen=True)
class DemoOutput:
    """Where the demo writes."""

    out: str = "runs"
    """Parent folder of the demo's run folder."""
    progress: bool = True
    """Show progress bars."""
    real: bool = False
    """A real pretrained model instead: SmolLM2-135M-Instruct learns 2-digit additions with GRPO (about 10
    CPU-minutes; `reasongym demo --real --help` lists its own settings; `reasongym.cli.demo_real`)."""


def cmd_demo(argv: list[str]) -> int:
    """``reasongym demo [flags]``: run the demo and print its summary as the last line (one JSON object)."""
    from reasongym.cli.flags import flat_section, parse
    from reasongym.runs.metrics import dumps_strict

    command = make_dataclass(
        "Demo",
        [
            ("output", flat_section(DemoOutput, "where the demo writes")),
            ("demo", flat_section(DemoConfig, "what is trained and measured (DemoConfig)")),
        ],
        frozen=True,
    )
    parsed = parse(
        command,
        argv,
        default=command(output=DemoOutput(), demo=DemoConfig()),
        prog="reasongym demo",
        description="A tiny model: warm start, evaluate, GRPO or DAPO, evaluate again; on a CPU.",
    )
    summary = run_demo(parsed.demo, out_dir=parsed.output.out, progress=parsed.output.progress)
    print(dumps_strict(summary))
    return 0


def run_demo(
    cfg: DemoConfig | None = None, out_dir: str | Path = "runs", *, progress: bool = True
) -> dict[str, Any]:
    """Run the demo and return its summary (also the last line the CLI prints).

    Args:
        cfg: The demo's settings; None: ``DemoConfig()``.
        out_dir: Parent folder of the new run folder.
        progress: Show progress bars.

    Returns:
        ``pass@1_before``, ``pass@1_after``, ``pass@8_before``, ``pass@8_after`` (fractions), ``run_dir``,
        and the seconds each phase took.
    """
    cfg = cfg or DemoConfig()
    if cfg.quick:
        cfg = replace(cfg, eval_problems=4, rl_steps=1)
    from reasongym import distributed
    from reasongym.policy.tiny import tiny_policy
    from reasongym.runs.lifecycle import job_folder

    model, tokenizer = tiny_policy(cfg.seed)
    with job_folder(
        out_dir,
        resume=None,
        name=(f"demo-{cfg.algo}", ENV_ID, cfg.seed),
        run_info=run_info(cfg),
        info=distributed.SINGLE_PROCESS,
    ) as job:  # stopped before RL logged or saved anything: no empty run folder is left
        job.keep_tokenizer(tokenizer)
        return _phases(cfg, model, tokenizer, job.folder, progress)


def run_info(cfg: DemoConfig) -> dict[str, Any]:
    """The demo run's ``run.json``: its RL phase is a ``tiny``-preset run of the tiny model, so a run started
    from it (``reasongym train grpo --model runs/latest``) takes the ``tiny`` settings, as from any tiny run."""
    return {"algo": cfg.algo, "model": "tiny", "env": ENV_ID, "preset": "tiny", "command": "reasongym demo"}


def _phases(cfg: DemoConfig, model: Any, tokenizer: Any, run: Any, progress: bool) -> dict[str, Any]:
    """Warm start, evaluate, RL, evaluate, plots, table: the demo's phases in order, in the run folder ``run``;
    its summary (also ``demo.json`` there)."""
    run_dir = run.path
    clock = [time.perf_counter()]
    _say(
        "warm start: SFT on reference solutions until the held-out probe reaches "
        f"{cfg.warm_start_target} (the bar's held-out column)",
        progress,
    )
    warm = warm_start(cfg, model, tokenizer, progress)
    timings = {"warm_start_s": _lap(clock)}
    _say(f"warm start: {warm.steps} SFT steps, greedy probe accuracy {warm.probe_accuracy:.2f}", progress)
    before = measure(cfg, model, tokenizer, run_dir / "eval_before.jsonl", progress)
    timings["eval_before_s"] = _lap(clock)
    rl_steps = train_rl(cfg, model, tokenizer, run_dir, progress)
    timings["rl_s"] = _lap(clock)
    after = measure(cfg, model, tokenizer, run_dir / "eval_after.jsonl", progress)
    timings["eval_after_s"] = _lap(clock)
    plots = write_plots(run_dir, cfg.algo)
    print(before_after_table(before, after))
    summary = {
        "pass@1_before": round(before.metrics["pass@1"], 4),
        "pass@1_after": round(after.metrics["pass@1"], 4),
        "pass@8_before": round(before.metrics["pass@8"], 4),
        "pass@8_after": round(after.metrics["pass@8"], 4),
        "run_dir": str(run_dir),
        "algo": cfg.algo,
        "warm_start_steps": warm.steps,
        "rl_steps": rl_steps,
        **{key: round(value, 1) for key, value in timings.items()},
        "total_s": round(sum(timings.values()), 1),
        "plots": [str(p) for p in plots],
    }
    run.write_json("demo.json", {"config": asdict(cfg), **summary})
    return summary


def _lap(clock: list[float]) -> float:
    """Seconds since the last lap (``clock`` holds the last lap's time)."""
    now = time.perf_counter()
    elapsed, clock[0] = now - clock[0], now
    return elapsed


def _say(message: str, show: bool) -> None:
    if show:
        print(message, file=sys.stderr, flush=True)


def warm_start(cfg: DemoConfig, model: Any, tokenizer: Any, progress: bool = False) -> Any:
    """SFT on reference solutions until the greedy validation probe reaches ``cfg.warm_start_target``."""
    from reasongym.agents.algorithms import preset_configs
    from reasongym.agents.warm_start import warm_start as sft_warm_start

    sft_run = preset_configs("tiny", "sft", seed=cfg.seed, progress_bar=progress)["run"]
    if cfg.quick:
        sft_run = replace(sft_run, max_steps=2, eval_every=1, eval_problems=2)
        return sft_warm_start(model, tokenizer, ENV_ID, run=sft_run, num_pairs=16)
    return sft_warm_start(model, tokenizer, ENV_ID, target_accuracy=cfg.warm_start_target, run=sft_run)


def measure(cfg: DemoConfig, model: Any, tokenizer: Any, out_path: Path, progress: bool) -> Any:
    """pass@1 and pass@8 (from ``eval_samples`` samples) on held-out test problems."""
    from reasongym.evaluation import evaluate

    return evaluate(
        model,
        ENV_ID,
        tokenizer=tokenizer,
        n=cfg.eval_samples,
        k=(1, 8),
        num_problems=cfg.eval_problems,
        temperature=cfg.eval_temperature,
        max_new_tokens=MAX_NEW_TOKENS,
        seed=cfg.seed,
        out_path=out_path,
        resume=False,
        batch_size=16,
        progress=progress,
        verbose=False,
    )


def rl_configs(cfg: DemoConfig, max_steps: int, progress: bool) -> dict[str, Any]:
    """The ``tiny`` preset's GRPO or DAPO configs (16 prompts x 8 samples, lr 1e-4) at ``max_steps``."""
    from reasongym.agents.algorithms import preset_configs

    run = {"max_steps": max_steps, "seed": cfg.seed, "progress_bar": progress, "tensorboard": False}
    rollout = {"num_prompts": 2, "group_size": 2} if cfg.quick else {}
    return preset_configs("tiny", cfg.algo, {"run": run, "rollout": rollout})


def train_rl(cfg: DemoConfig, model: Any, tokenizer: Any, run_dir: Path, progress: bool) -> int:
    """``cfg.rl_steps`` steps of GRPO or DAPO in the run folder; returns the steps done."""
    from reasongym.agents.algorithms import ALGORITHMS

    configs = rl_configs(cfg, cfg.rl_steps, progress)
    result = ALGORITHMS[cfg.algo].train(
        configs[cfg.algo],
        model,
        tokenizer,
        ENV_ID,
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=run_dir,
    )
    return int(result.steps)


def write_plots(run_dir: Path, algo: str = "grpo") -> list[Path]:
    """Reward, accuracy and entropy over steps; pass@k against k before and after."""
    from reasongym.evaluation import plot_pass_at_k
    from reasongym.runs.plots import plot_metrics, plot_title

    panels = ("rollout/reward_mean", "rollout/correct_rate", "train/entropy", "rollout/len_mean")
    title = plot_title(run_dir, f"demo, {algo}", ENV_ID)
    curves = plot_metrics(run_dir / "metrics.jsonl", run_dir / "metrics.png", keys=panels, title=title)
    pass_k = plot_pass_at_k(
        [run_dir / "eval_before.jsonl", run_dir / "eval_after.jsonl"],
        run_dir / "pass_at_k.png",
        labels=["before RL", "after RL"],
    )
    return [Path(curves), pass_k]


def before_after_table(before: Any, after: Any) -> str:
    """The printed table: each metric before and after RL, and the change in points."""
    lines = [f"{'metric':<10}{'before':>10}{'after':>10}{'change':>10}"]
    for key in ("pass@1", "pass@8", "maj@8", f"avg@{before.n}"):
        if key in before.metrics and key in after.metrics:
            old, new = before.metrics[key], after.metrics[key]
            lines.append(f"{key:<10}{old:>10.3f}{new:>10.3f}{100 * (new - old):>+9.1f}p")
    return "\n".join(lines)
