"""STaR: the Self-Taught Reasoner (Zelikman et al., 2022), on any single-turn reasongym environment.

Read top to bottom: config, result, the named steps (generate, filter, rationalize, fine_tune,
evaluate), then the outer loop. Each iteration the current model writes rationales for the training
problems; the ones whose final answer the environment's verifier accepts are kept. For the problems it
missed, the model is asked again with the gold answer shown as a hint (``env.prompt(problem,
hint=True)``) and the rationales that now reach the gold are kept too, stored under the prompt
*without* the hint. Hinted successes never count as the policy's own (``star/train_accuracy`` counts
direct ones only). The model is then fine-tuned on the kept set, from the original base weights
(``restart_from_base``), for ``sft.max_steps * step_growth ** (iteration - 1)`` steps, and evaluated
greedily on a held-out split.

Run folder: ``base_model.safetensors`` (the weights every iteration restarts from), ``metrics.jsonl``
(step = iteration, 0 = the base model), ``accuracy.png``, ``iteration-NNN/kept.jsonl`` (what the model
learned from) with that iteration's SFT ``config.json`` and ``metrics.jsonl``, and
``checkpoints/step-NNNNNN`` (step = completed iteration) that a crashed run resumes from.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from transformers import PreTrainedModel, PreTrainedTokenizerBase

import reasongym
from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft
from reasongym.errors import ConfigError
from reasongym.generation import Generator, HFGenerator, SamplingParams
from reasongym.metrics import MetricsWriter, plot_metrics
from reasongym.models import format_prompt
from reasongym.runs import RunDir, latest_checkpoint, load_checkpoint, save_checkpoint

__all__ = [
    "IterationStats",
    "KeptExample",
    "STEP_NAMES",
    "STaRConfig",
    "STaRResult",
    "STaRTask",
    "evaluate_accuracy",
    "filter_correct",
    "generate_rationales",
    "rationalize",
    "fine_tune",
    "sft_steps_for_iteration",
    "train_star",
]

BASE_WEIGHTS_FILE = "base_model.safetensors"
STEP_NAMES = ("generate", "filter", "rationalize", "restore_base", "fine_tune", "evaluate")
"""The named steps of one outer iteration, in order; ``on_step`` hooks see these names."""


@dataclass(frozen=True)
class STaRConfig:
    """Hyperparameters of ``train_star``; defaults follow the paper where it states a value."""

    iterations: int = 10
    """Outer iterations (generate, filter, rationalize, fine-tune, evaluate). The paper runs until
    held-out accuracy stops improving; see ``patience``."""
    samples_per_problem: int = 1
    """Rationales sampled per training problem (and per hinted retry). Paper: 1."""
    temperature: float = 0.0
    """Sampling temperature of rationale generation; 0 is greedy. The paper decodes greedily and
    reports that higher temperatures hurt (more right answers from wrong reasoning)."""
    top_p: float = 1.0
    """Nucleus sampling threshold of rationale generation; 1 = off."""
    max_new_tokens: int = 256
    """Longest rationale, in tokens; a rationale cut off at this length is never kept."""
    rationalize: bool = True
    """Retry missed problems with the gold answer as a hint and keep verified rationales. Paper: on."""
    max_kept_per_problem: int = 1
    """Distinct verified rationales kept per problem and source (direct or rationalized)."""
    drop_hint_mentions: bool = True
    """Drop rationalized completions that mention the word "hint": stored without the hint they
    would refer to something the prompt no longer shows."""
    num_train_problems: int | None = None
    """Training problems per iteration (the same ones every iteration, as in the paper, which uses the
    whole training set); None: every problem of ``train_split`` (finite splits only)."""
    train_split: str = "train"
    """Split the training problems come from."""
    train_start: int = 0
    """Index of the first training problem; the few-shot examples come from the indices before it."""
    difficulty: int | None = None
    """Difficulty level of training and evaluation problems; None: the environment's own setting."""
    few_shot_examples: int = 0
    """Worked examples (reference solutions of ``train_split`` problems ``0 .. train_start - 1``) shown
    before each question when generating; hinted prompts show hinted examples. 0: zero-shot through
    the chat template, the natural choice for instruction-tuned models (the paper gives GPT-J, a base
    model, 10 for CommonsenseQA). Fine-tuning and evaluation prompts are always zero-shot."""
    sft: SFTConfig = SFTConfig(lr=1e-6, batch_size=8, max_steps=40, progress_bar=False)
    """Fine-tuning settings of iteration 1 (paper: 40 steps of batch 8 at learning rate 1e-6); later
    iterations grow ``max_steps`` by ``step_growth`` and shift ``seed`` by the iteration."""
    step_growth: float = 1.2
    """Factor by which fine-tuning steps grow per iteration. Paper: about 20% (1.2)."""
    restart_from_base: bool = True
    """Fine-tune every iteration from the original base weights (paper), not from the last model."""
    eval_split: str = "test"
    """Held-out split for accuracy before and after each iteration."""
    eval_size: int = 200
    """Held-out problems (the first ones of ``eval_split``, fewer if the split is smaller)."""
    patience: int | None = None
    """Stop after this many iterations without a new best held-out accuracy; None runs them all."""
    generation_batch_size: int | None = None
    """Rows decoded together by the default ``HFGenerator``; None: all at once."""
    seed: int = 0
    """Seeds the sampling of each iteration (``seed``, iteration and step derive the sampler seed)."""
    plot: bool = True
    """Redraw ``accuracy.png`` in the run folder after each iteration."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        at_least = {
            "iterations": 1, "samples_per_problem": 1, "max_new_tokens": 1, "max_kept_per_problem": 1,
            "eval_size": 1, "train_start": 0, "few_shot_examples": 0,
        }  # fmt: skip
        for name, low in at_least.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{name}={value!r} is not allowed; expected an integer >= {low}")
        for name in ("num_train_problems", "patience"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{name}={value!r} is not allowed; expected an integer >= 1 or None")
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ConfigError(f"temperature={self.temperature!r} is not allowed; expected a float >= 0")
        if not 0 < self.top_p <= 1:
            raise ConfigError(f"top_p={self.top_p!r} is not allowed; expected a float in (0, 1]")
        if not (self.step_growth >= 1 and math.isfinite(self.step_growth)):
            raise ConfigError(
                f"step_growth={self.step_growth!r} is not allowed; expected a float >= 1 (1.2 = +20%/iteration)"
            )
        if self.few_shot_examples > self.train_start:
            raise ConfigError(
                f"few_shot_examples={self.few_shot_examples} is not allowed with train_start={self.train_start}; "
                "few-shot examples come from the problems before train_start, so set "
                f"train_start >= {self.few_shot_examples}"
            )
        if not isinstance(self.sft, SFTConfig):
            raise ConfigError(f"sft={self.sft!r} is not allowed; expected an SFTConfig")


def sft_steps_for_iteration(cfg: STaRConfig, iteration: int) -> int:
    """Fine-tuning steps of ``iteration`` (1-based): ``sft.max_steps * step_growth ** (iteration - 1)``, rounded."""
    if iteration < 1:
        raise ConfigError(f"iteration={iteration} is not allowed; iterations count from 1")
    return max(1, round(cfg.sft.max_steps * cfg.step_growth ** (iteration - 1)))


@dataclass(frozen=True)
class KeptExample:
    """One verified rationale, as written to ``kept.jsonl`` and fine-tuned on."""

    problem_id: str
    """The problem's id."""
    index: int
    """The problem's index in the training split."""
    prompt: str
    """The zero-shot prompt without any hint, formatted for the policy (chat template applied)."""
    completion: str
    """The model's rationale and final answer."""
    source: str
    """``"direct"`` (the policy's own success) or ``"rationalized"`` (found with the hint shown)."""


@dataclass(frozen=True)
class IterationStats:
    """What one outer iteration did; one line of ``metrics.jsonl``."""

    iteration: int
    """1-based iteration number."""
    accuracy_before: float
    """Held-out accuracy of the model that generated this iteration's rationales."""
    accuracy_after: float
    """Held-out accuracy after this iteration's fine-tune."""
    train_accuracy: float
    """Share of training problems with at least one verified rationale *without* the hint."""
    kept_direct: int
    """Rationales kept from unhinted generation (what the plain filter keeps)."""
    kept_rationalized: int
    """Rationales kept only thanks to the hint (the plain filter would have dropped these problems)."""
    rationalization_attempts: int
    """Missed problems retried with the hint."""
    sft_steps: int
    """Fine-tuning steps run (0 when nothing was kept)."""
    sft_final_loss: float | None
    """SFT loss of the last fine-tuning step."""


@dataclass(frozen=True)
class STaRResult:
    """What ``train_star`` did."""

    initial_accuracy: float
    """Held-out accuracy of the base model."""
    iterations: tuple[IterationStats, ...]
    """Every completed iteration, in order (including those before a resume)."""
    resumed_from: int | None
    """Last completed iteration found in the run folder, or None for a fresh start."""
    run_dir: Path | None
    """The run folder, when there was one."""

    @property
    def final_accuracy(self) -> float:
        """Held-out accuracy after the last iteration (the base accuracy if none ran)."""
        return self.iterations[-1].accuracy_after if self.iterations else self.initial_accuracy

    @property
    def accuracy_gain(self) -> float:
        """Final minus initial held-out accuracy, as a fraction."""
        return self.final_accuracy - self.initial_accuracy


# ---------------------------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class STaRTask:
    """The environment and the policy's prompt format: what every step needs to build prompts and grade."""

    env: Any
    """The unwrapped single-turn ``ReasoningEnv``."""
    tokenizer: PreTrainedTokenizerBase
    """The policy's tokenizer (its chat template formats the prompts)."""
    shots: tuple[tuple[Any, str], ...] = ()
    """Few-shot examples: (problem, verified reference completion)."""

    @classmethod
    def from_env(cls, env: Any, tokenizer: PreTrainedTokenizerBase, cfg: STaRConfig) -> STaRTask:
        """Take ``cfg.few_shot_examples`` verified reference solutions from the problems before ``train_start``."""
        env = getattr(env, "unwrapped", env)
        shots = []
        for index in range(cfg.train_start):
            if len(shots) == cfg.few_shot_examples:
                break
            pair = sft_pairs_from_env(env, 1, split=cfg.train_split, start=index)
            if pair:
                problem = env.problem_at(index, split=cfg.train_split, difficulty=cfg.difficulty)
                shots.append((problem, pair[0][1]))
        return cls(env, tokenizer, tuple(shots))

    def prompt(self, problem: Any, *, hint: bool = False, few_shot: bool = False) -> str:
        """The formatted prompt; few-shot examples are hinted too when ``hint`` is set."""
        messages = self.env.messages(problem, hint=hint)
        turns = []
        for example, completion in self.shots if few_shot else ():
            turns += [
                {"role": "user", "content": self.env.prompt(example, hint=hint)},
                {"role": "assistant", "content": completion},
            ]
        return format_prompt(self.tokenizer, [*messages[:-1], *turns, messages[-1]])


def generate_rationales(
    task: STaRTask,
    generator: Generator,
    problems: Sequence[Any],
    params: SamplingParams,
    *,
    hint: bool = False,
) -> list[list[Any]]:
    """Sample ``params.n`` completions per problem (``Completion`` objects), hinted or not."""
    prompts = [task.prompt(problem, hint=hint, few_shot=True) for problem in problems]
    return generator.generate(prompts, params)


def filter_correct(
    task: STaRTask,
    problems: Sequence[Any],
    indices: Sequence[int],
    completions: Sequence[Sequence[Any]],
    *,
    source: str,
    max_per_problem: int,
    drop_hint_mentions: bool = False,
) -> list[KeptExample]:
    """Keep finished completions whose final answer the environment's verifier accepts.

    Each kept example carries the zero-shot prompt without a hint, whatever prompt produced it.
    """
    kept = []
    for problem, index, samples in zip(problems, indices, completions, strict=True):
        texts: list[str] = []
        for sample in samples:
            if sample.finish_reason != "stop" or sample.text in texts:
                continue
            if drop_hint_mentions and "hint" in sample.text.lower():
                continue
            if task.env.score(problem, sample.text).correct and len(texts) < max_per_problem:
                texts.append(sample.text)
        prompt = task.prompt(problem) if texts else ""
        kept += [KeptExample(problem.id, index, prompt, text, source) for text in texts]
    return kept


def rationalize(
    task: STaRTask,
    generator: Generator,
    problems: Sequence[Any],
    indices: Sequence[int],
    params: SamplingParams,
    cfg: STaRConfig,
) -> list[KeptExample]:
    """Retry ``problems`` with the gold answer as a hint; keep verified rationales, stored without it."""
    if not problems:
        return []
    completions = generate_rationales(task, generator, problems, params, hint=True)
    return filter_correct(
        task, problems, indices, completions, source="rationalized",
        max_per_problem=cfg.max_kept_per_problem, drop_hint_mentions=cfg.drop_hint_mentions,
    )  # fmt: skip


def evaluate_accuracy(task: STaRTask, generator: Generator, cfg: STaRConfig) -> float:
    """Greedy zero-shot accuracy on the first ``eval_size`` problems of ``eval_split`` (never hinted)."""
    size = task.env.source.size(cfg.eval_split, cfg.difficulty)
    count = cfg.eval_size if size is None else min(cfg.eval_size, size)
    problems = [task.env.problem_at(i, split=cfg.eval_split, difficulty=cfg.difficulty) for i in range(count)]
    params = SamplingParams(max_new_tokens=cfg.max_new_tokens, temperature=0.0)
    outputs = generator.generate([task.prompt(problem) for problem in problems], params)
    correct = sum(
        bool(task.env.score(p, out[0].text).correct) for p, out in zip(problems, outputs, strict=True)
    )
    return correct / max(count, 1)


def fine_tune(
    cfg: STaRConfig,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    kept: Sequence[KeptExample],
    iteration: int,
    folder: Path | None = None,
) -> tuple[int, float | None]:
    """Fine-tune ``model`` in place on the kept set for the steps of ``iteration``; log the curve in ``folder``.

    Returns:
        ``(steps, final SFT loss)``; ``(0, None)`` when nothing was kept (nothing to train on).
    """
    if not kept:
        return 0, None
    steps = sft_steps_for_iteration(cfg, iteration)
    sft_cfg = dataclasses.replace(cfg.sft, max_steps=steps, seed=cfg.sft.seed + iteration)
    result = train_sft(sft_cfg, model, tokenizer, [(k.prompt, k.completion) for k in kept])
    if folder is not None:  # the SFT curve of this iteration, beside its data
        with MetricsWriter(folder, tensorboard=False, config=sft_cfg) as writer:
            for step, metrics in enumerate(result.history, start=1):
                writer.log(step, metrics)
    return result.steps, result.final_loss


# ---------------------------------------------------------------------------------------------- loop


@dataclass
class _Loop:
    """What stays fixed across iterations, and what a checkpoint restores (``initial_accuracy``, ``history``)."""

    cfg: STaRConfig
    model: PreTrainedModel
    task: STaRTask
    generator: Generator
    indices: list[int]
    problems: list[Any]
    run: RunDir | None
    hook: Callable[[int, str, PreTrainedModel], None]
    base: dict[str, torch.Tensor] = field(default_factory=dict)
    initial_accuracy: float | None = None
    history: list[IterationStats] = field(default_factory=list)

    def iteration(self, iteration: int) -> IterationStats:
        """One outer iteration, as its named steps."""
        cfg, model, task, hook = self.cfg, self.model, self.task, self.hook
        before = self.history[-1].accuracy_after if self.history else self.initial_accuracy
        params = SamplingParams(
            max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p,
            n=cfg.samples_per_problem, seed=cfg.seed * 1_000_003 + 2 * iteration,
        )  # fmt: skip
        hook(iteration, "generate", model)
        completions = generate_rationales(task, self.generator, self.problems, params)
        hook(iteration, "filter", model)
        direct = filter_correct(
            task, self.problems, self.indices, completions, source="direct", max_per_problem=cfg.max_kept_per_problem
        )  # fmt: skip
        hook(iteration, "rationalize", model)
        solved = {example.index for example in direct}
        missed = [i for i, index in enumerate(self.indices) if index not in solved]
        rationalized = []
        if cfg.rationalize and missed:
            rationalized = rationalize(
                task, self.generator, [self.problems[i] for i in missed], [self.indices[i] for i in missed],
                dataclasses.replace(params, seed=params.seed + 1), cfg,
            )  # fmt: skip
        kept = direct + rationalized
        folder = None if self.run is None else _write_kept(self.run, iteration, kept)
        hook(iteration, "restore_base", model)
        if cfg.restart_from_base:
            model.load_state_dict(self.base)
        hook(iteration, "fine_tune", model)
        steps, loss = fine_tune(cfg, model, task.tokenizer, kept, iteration, folder)
        hook(iteration, "evaluate", model)
        return IterationStats(
            iteration=iteration, accuracy_before=before, accuracy_after=evaluate_accuracy(task, self.generator, cfg),
            train_accuracy=len(solved) / len(self.problems), kept_direct=len(direct),
            kept_rationalized=len(rationalized), rationalization_attempts=len(missed) if cfg.rationalize else 0,
            sft_steps=steps, sft_final_loss=loss,
        )  # fmt: skip

    def plateaued(self) -> bool:
        """Whether the last ``patience`` iterations all failed to beat the best accuracy before them."""
        patience = self.cfg.patience
        if patience is None or len(self.history) < patience:
            return False
        accuracies = [self.initial_accuracy] + [stats.accuracy_after for stats in self.history]
        return max(accuracies[-patience:]) <= max(accuracies[:-patience])

    def complete(self, writer: MetricsWriter | None, iteration: int, metrics: dict[str, Any]) -> None:
        """Log a finished iteration (0: the base model), redraw the plot, checkpoint it."""
        if self.run is None or writer is None:
            return
        writer.log(iteration, metrics)
        if self.cfg.plot:
            plot_metrics(
                self.run.metrics_path, self.run.path / "accuracy.png", keys=("eval/accuracy", "star/kept_")
            )
        state = {
            "initial_accuracy": self.initial_accuracy,
            "history": [dataclasses.asdict(s) for s in self.history],
        }
        save_checkpoint(self.run, iteration, model=self.model, trainer_state=state, keep_last=1)


def train_star(
    cfg: STaRConfig,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    env_id: str | Any,
    *,
    run_dir: RunDir | str | Path | None = None,
    generator: Generator | None = None,
    on_step: Callable[[int, str, PreTrainedModel], None] | None = None,
) -> STaRResult:
    """Run STaR on ``model`` for ``cfg.iterations`` outer iterations, resuming when the run folder allows.

    Args:
        cfg: Hyperparameters.
        model: The base causal LM, on its device; trained in place (it ends as the last iteration's
            model). On resume its weights are replaced by the run folder's base and latest weights.
        tokenizer: Its tokenizer.
        env_id: A single-turn environment id (``reasongym.make``) or a made environment.
        run_dir: Run folder for metrics, kept sets, plot and iteration checkpoints; one that holds a
            checkpoint is resumed from its last completed iteration. None: no files, no resume.
        generator: Samples completions; default ``HFGenerator(model, tokenizer)``. Must follow ``model``.
        on_step: Called before each named step (``STEP_NAMES``) with ``(iteration, step, model)``;
            for inspection and tests (an exception raised here aborts the run like a crash).

    Returns:
        A ``STaRResult``.

    Raises:
        ConfigError: ``num_train_problems`` is None on an endless split, or a finished run is resumed.
    """
    env = (reasongym.make(env_id) if isinstance(env_id, str) else env_id).unwrapped
    run = RunDir.open(run_dir, create=True) if isinstance(run_dir, str | Path) else run_dir
    indices = _train_indices(env, cfg)
    loop = _Loop(
        cfg, model, STaRTask.from_env(env, tokenizer, cfg),
        generator or HFGenerator(model, tokenizer, batch_size=cfg.generation_batch_size), indices,
        [env.problem_at(i, split=cfg.train_split, difficulty=cfg.difficulty) for i in indices], run,
        on_step or (lambda *_: None),
    )  # fmt: skip
    resumed_from = _start_or_resume(loop)
    writer = None
    if run is not None:
        config = {"star": dataclasses.asdict(cfg), "env": getattr(env.spec, "id", None)}
        config["env_config"] = dataclasses.asdict(env.config)
        # Lines after the last completed iteration belong to an attempt that is about to be redone.
        resume_from = -1 if resumed_from is None else resumed_from
        writer = MetricsWriter(run.path, tensorboard=False, config=config, resume_from_step=resume_from)
    try:
        if loop.initial_accuracy is None:
            loop.initial_accuracy = evaluate_accuracy(loop.task, loop.generator, cfg)
            loop.complete(writer, 0, {"eval/accuracy": loop.initial_accuracy})
        for iteration in range(len(loop.history) + 1, cfg.iterations + 1):
            if loop.plateaued():
                break
            loop.history.append(loop.iteration(iteration))
            loop.complete(writer, iteration, _iteration_metrics(loop.history[-1]))
    finally:
        if writer is not None:
            writer.close()
    path = None if run is None else run.path
    return STaRResult(loop.initial_accuracy, tuple(loop.history), resumed_from, path)


def _iteration_metrics(stats: IterationStats) -> dict[str, float]:
    return {
        "eval/accuracy": stats.accuracy_after,
        "star/accuracy_before": stats.accuracy_before,
        "star/train_accuracy": stats.train_accuracy,
        "star/kept_direct": stats.kept_direct,
        "star/kept_rationalized": stats.kept_rationalized,
        "star/kept_total": stats.kept_direct + stats.kept_rationalized,
        "star/rationalization_attempts": stats.rationalization_attempts,
        "star/sft_steps": stats.sft_steps,
        "star/sft_final_loss": float("nan") if stats.sft_final_loss is None else stats.sft_final_loss,
    }


def _train_indices(env: Any, cfg: STaRConfig) -> list[int]:
    size = env.source.size(cfg.train_split, cfg.difficulty)
    if cfg.num_train_problems is None and size is None:
        raise ConfigError(
            f"num_train_problems=None is not allowed for split {cfg.train_split!r}, which is endless "
            "(procedural); set num_train_problems to an integer >= 1"
        )
    stop = cfg.train_start + (cfg.num_train_problems or size - cfg.train_start)
    if size is not None:
        stop = min(stop, size)
    if stop <= cfg.train_start:
        raise ConfigError(
            f"train_start={cfg.train_start} leaves no training problems in split {cfg.train_split!r} "
            f"({size} problems); choose train_start < {size}"
        )
    return list(range(cfg.train_start, stop))


def _start_or_resume(loop: _Loop) -> int | None:
    """Snapshot the base weights (CPU, and the run folder); restore the last completed iteration, if any."""
    run, model = loop.run, loop.model
    base_path = None if run is None else run.path / BASE_WEIGHTS_FILE
    if base_path is not None and base_path.is_file():
        loop.base = load_file(str(base_path))
    else:
        loop.base = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        if base_path is not None:  # written whole, then renamed: a crash never leaves half a base
            tmp = base_path.with_name(f".{BASE_WEIGHTS_FILE}.tmp")
            save_file({k: v.contiguous() for k, v in loop.base.items()}, str(tmp))
            tmp.replace(base_path)
    checkpoint = None if run is None else latest_checkpoint(run)
    if checkpoint is None:
        model.load_state_dict(loop.base)
        return None
    step, saved = load_checkpoint(checkpoint, model=model)
    if step >= loop.cfg.iterations:
        raise ConfigError(
            f"the run in {str(run.path)!r} already completed {step} iterations; raise iterations above {step} "
            "to continue it"
        )
    loop.initial_accuracy = saved["initial_accuracy"]
    loop.history = [IterationStats(**stats) for stats in saved["history"]]
    return step


def _write_kept(run: RunDir, iteration: int, kept: Sequence[KeptExample]) -> Path:
    """Write ``iteration-NNN/kept.jsonl`` (replacing a copy left by a crashed attempt); returns the folder."""
    folder = run.path / f"iteration-{iteration:03d}"
    folder.mkdir(exist_ok=True)
    for stale in ("metrics.jsonl", "config.json"):
        (folder / stale).unlink(missing_ok=True)
    lines = [{"iteration": iteration, **dataclasses.asdict(example)} for example in kept]
    tmp = folder / ".kept.jsonl.tmp"
    tmp.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    tmp.replace(folder / "kept.jsonl")
    return folder
