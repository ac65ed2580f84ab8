"""STaR: the Self-Taught Reasoner (Zelikman et al., 2022), on any single-turn reasongym environment.

Read top to bottom (the config, `STaRConfig`, is in the torch-free `reasongym.agents.algorithm_configs`):
result, the named steps (generate, filter, rationalize, fine_tune, evaluate), then the outer loop. Each iteration the current model writes rationales for the training
problems; the ones whose final answer the environment's verifier accepts are kept. For the problems it
missed, the model is asked again with the gold answer shown as a hint (``env.prompt(problem,
hint=True)``) and the rationales that now reach the gold are kept too, stored under the prompt
*without* the hint (with ``faithful_rationalization``, only those whose reasoning also leads the policy to
the answer without the hint). Hinted successes never count as the policy's own (``star/train_accuracy`` counts
direct ones only). The model is then fine-tuned on the kept set, from the original base weights
(``restart_from_base``), for ``sft.max_steps * step_growth ** (iteration - 1)`` steps, and evaluated
greedily on a held-out split.

With ``run.lora.rank`` > 0 the model gets LoRA adapters once (`run_adapters`, as GRPO's) and its own weights
stay frozen for the whole run; each iteration fine-tunes **fresh adapters on that frozen base**: with
``restart_from_base`` the adapters are reset to their initial weights (B = 0, so the model is exactly the base
again) before every fine-tune, the LoRA reading of the paper's restart from the pre-trained model (without it
the same adapters keep training). The adapters' initial weights take the place of ``base_model.safetensors``
(``initial_adapters.safetensors``), the run folder records the base (``base_model.json`` or
``reference.safetensors``), checkpoints hold the adapters, and ``load_policy`` of the run merges them in.

Run folder: ``base_model.safetensors`` (the weights every iteration restarts from), ``metrics.jsonl``
(step = iteration, 0 = the base model; ``eval/pass@1`` is held-out greedy accuracy, as GRPO's), ``accuracy.png``, ``iteration-NNN/kept.jsonl`` (what the model
learned from) with that iteration's SFT ``config.json`` and ``metrics.jsonl``, and
``checkpoints/step-NNNNNN`` (step = completed iteration) that a crashed run resumes from.

Across processes (``torchrun``, ``accelerate launch``) each rank generates, filters and rationalizes its
round-robin share of the training problems with its own sampling seed; the kept rationales of every rank
are gathered in problem order, so that every rank fine-tunes on the same set (data-parallel, through
`train_sft`: ``sft.batch_size`` per process), and held-out evaluation is shared too. Rank 0 alone writes.

Why this file is long: it is one algorithm read top to bottom in run order (config, results, the named
steps, the loop, resume), as every algorithm here is; splitting the steps from the loop would make a reader
jump between files to follow one iteration.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from reasongym import distributed
from reasongym.agents.algorithm_configs import STaRConfig
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.presets import shared_configs
from reasongym.agents.rationales import (
    KeptExample,
    STaRTask,
    by_index,
    filter_correct,
    generate_rationales,
    rationalize,
    stands_alone,
    write_kept,
)
from reasongym.agents.runtime.draw import SEED_STRIDE
from reasongym.agents.runtime.engine import following_engine
from reasongym.agents.runtime.setup import run_adapters
from reasongym.agents.sft import train_sft
from reasongym.envs import make
from reasongym.errors import ConfigError, TrainingInterrupted
from reasongym.evaluation.runner import greedy_pass_at_1
from reasongym.generation import Generator, HFGenerator, SamplingParams
from reasongym.generation.engines import engine_identity
from reasongym.policy.checkpoints import load_checkpoint
from reasongym.policy.lora import adapter_state, set_adapter_state
from reasongym.runs.folder import RunDir
from reasongym.runs.lifecycle import Plot, RunLife
from reasongym.runs.metrics import MetricsWriter

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
    "iteration_metrics",
    "sft_steps_for_iteration",
    "train_star",
]

BASE_WEIGHTS_FILE = "base_model.safetensors"
INITIAL_ADAPTERS_FILE = "initial_adapters.safetensors"
"""With LoRA, the adapters every iteration restarts from (the base itself is frozen)."""
STAR_PLOT_PANELS = ("eval/pass@1", "star/kept_", "star/train_accuracy")
"""Panels of ``accuracy.png``: held-out accuracy, rationales kept (direct, rationalized, total), and the share
of training problems solved without the hint."""
STEP_NAMES = ("generate", "filter", "rationalize", "restore_base", "fine_tune", "evaluate")
"""The named steps of one outer iteration, in order; ``on_step`` hooks see these names."""
StepHookFn = Callable[[int, str, PreTrainedModel], "bool | None"]
"""``on_step(iteration, step, model)``, called before each named step; True stops the run there."""


class _Stopped(Exception):
    """An ``on_step`` hook returned True: the loop unwinds to `_Loop.train`, which ends the run there."""


def sft_steps_for_iteration(cfg: STaRConfig, iteration: int) -> int:
    """Fine-tuning steps of ``iteration`` (1-based): ``sft_steps * step_growth ** (iteration - 1)``, rounded."""
    if iteration < 1:
        raise ConfigError(f"iteration={iteration} is not allowed; iterations count from 1")
    return max(1, round(cfg.sft_steps * cfg.step_growth ** (iteration - 1)))


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
    rationalized_unfaithful: int = 0
    """Hinted rationales the verifier accepted but the faithfulness check dropped (0 with it off)."""


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
# The data-generating steps (generate, filter, rationalize) are `reasongym.agents.rationales`'s.


def evaluate_accuracy(task: STaRTask, generator: Generator, run: RunConfig, rollout: RolloutConfig) -> float:
    """Greedy zero-shot pass@1 on the first ``eval_problems`` problems of the held-out split (never hinted),
    through `reasongym.evaluation.evaluate` like every held-out number."""
    return greedy_pass_at_1(
        generator,
        task.env,
        tokenizer=task.tokenizer,
        split=task.eval_split,
        num_problems=run.eval_problems,
        difficulty=task.difficulty,
        max_new_tokens=rollout.max_new_tokens,
        distributed=distributed.current().world_size > 1,
    )


def fine_tune(
    cfg: STaRConfig,
    run: RunConfig,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    kept: Sequence[KeptExample],
    iteration: int,
    folder: Path | None = None,
) -> tuple[int, float | None]:
    """Fine-tune ``model`` in place on the kept set for the steps of ``iteration``; log the curve in ``folder``.

    The fine-tuning run takes the optimizer settings of ``run`` (lr, schedule, warmup, weight decay,
    clipping, micro-batch) and its own length (`sft_steps_for_iteration`) and seed (``seed + iteration``).

    Returns:
        ``(steps, final SFT loss)``; ``(0, None)`` when nothing was kept (nothing to train on).
    """
    if not kept:
        return 0, None
    sft_run = dataclasses.replace(
        run,
        max_steps=sft_steps_for_iteration(cfg, iteration),
        seed=run.seed + iteration,
        eval_every=0,
        save_every=0,
        log_every=1,
        progress_bar=False,
        tensorboard=False,
        wandb_project=None,
    )
    result = train_sft(cfg.sft, model, tokenizer, [(k.prompt, k.completion) for k in kept], run=sft_run)
    if folder is not None:  # the SFT curve of this iteration, beside its data
        with MetricsWriter(folder, tensorboard=False, config={"run": sft_run, "sft": cfg.sft}) as writer:
            for step, metrics in enumerate(result.history, start=1):
                writer.log(step, metrics)
    return result.steps, result.final_loss


# ---------------------------------------------------------------------------------------------- loop


@dataclass
class _Loop:
    """What stays fixed across iterations, and what a checkpoint restores (``initial_accuracy``, ``history``)."""

    cfg: STaRConfig
    run_cfg: RunConfig
    rollout: RolloutConfig
    model: PreTrainedModel
    task: STaRTask
    generator: Generator
    rationale_generator: Generator
    indices: list[int]
    problems: list[Any]
    life: RunLife
    hook: StepHookFn
    adapted: Any = None
    """With LoRA, the ``PeftModel`` around ``model`` whose adapters train; None: every weight trains."""
    base: dict[str, torch.Tensor] = field(default_factory=dict)
    """What every fine-tune restarts from: the whole weights, or with LoRA the adapters' initial weights."""
    initial_accuracy: float | None = None
    history: list[IterationStats] = field(default_factory=list)
    bar: Any = None

    @classmethod
    def build(
        cls,
        cfg: STaRConfig,
        run: RunConfig,
        rollout: RolloutConfig,
        model: PreTrainedModel,
        tokenizer: Any,
        env: Any,
        generator: Generator | None,
        rationale_generator: Generator | None,
        life: RunLife,
        on_step: StepHookFn | None,
    ) -> _Loop:
        """The loop's fixed parts: the adapters (with LoRA), the task, its training problems, the samplers, the
        hook."""
        adapted = run_adapters(model, run, life)
        sampler = generator or HFGenerator(model, tokenizer, batch_size=rollout.generation_batch_size)
        if rationale_generator is None and generator is None:  # --engine vllm: an engine samples rationales
            rationale_generator = following_engine(
                model, tokenizer, rollout, run.seed, distributed.current(), adapted
            )
        task = STaRTask.from_env(
            env, tokenizer, run, few_shot_examples=cfg.few_shot_examples, train_start=cfg.train_start
        )
        indices = _train_indices(env, cfg, task)
        problems = [env.problem_at(i, split=task.split, difficulty=task.difficulty) for i in indices]
        return cls(
            cfg,
            run,
            rollout,
            model,
            task,
            sampler,
            rationale_generator or sampler,
            indices,
            problems,
            life,
            on_step or (lambda *_: None),
            adapted,
        )

    def train(self) -> None:
        """Evaluate the base model (unless a resume did), then iterate until ``max_steps`` or a plateau."""
        from tqdm.auto import tqdm

        shown = self.run_cfg.progress_bar and distributed.current().is_main
        self.bar = tqdm(
            total=self.run_cfg.max_steps, initial=len(self.history), desc="star", disable=not shown
        )
        try:
            if self.initial_accuracy is None:
                self.bar.set_postfix_str("evaluating the base model")
                self.initial_accuracy = evaluate_accuracy(
                    self.task, self.generator, self.run_cfg, self.rollout
                )
                self.complete(0, {"eval/pass@1": self.initial_accuracy})
            for iteration in range(len(self.history) + 1, self.run_cfg.max_steps + 1):
                if self.plateaued():
                    break
                self.history.append(self.iteration(iteration))
                self.complete(iteration, iteration_metrics(self.history[-1]))
                self.bar.update(1)
        except _Stopped:
            pass  # an on_step hook ended the run; the iterations finished before are recorded
        finally:
            self.bar.close()

    def iteration(self, iteration: int) -> IterationStats:
        """One outer iteration, as its named steps."""
        cfg, rollout, model, task, hook = self.cfg, self.rollout, self.model, self.task, self.enter
        before = self.history[-1].accuracy_after if self.history else self.initial_accuracy
        assert before is not None  # the base model is evaluated before the first iteration
        seed = distributed.rank_seed(self.run_cfg.seed * SEED_STRIDE + 2 * iteration)
        params = rollout.sampling(seed)
        problems, indices = distributed.shard(self.problems), distributed.shard(self.indices)  # this rank's
        hook(iteration, "generate", model)
        completions = generate_rationales(task, self.rationale_generator, problems, params)
        hook(iteration, "filter", model)
        direct = filter_correct(
            task, problems, indices, completions, source="direct", max_per_problem=cfg.max_kept_per_problem
        )
        direct = distributed.all_gather_ordered(direct, key=by_index)  # every rank's, in problem order
        hook(iteration, "rationalize", model)
        solved = {example.index for example in direct}
        missed = [i for i, index in enumerate(indices) if index not in solved]
        rationalized, unfaithful = self.rationalize(
            [problems[i] for i in missed],
            [indices[i] for i in missed],
            dataclasses.replace(params, seed=seed + 1),
        )
        rationalized = distributed.all_gather_ordered(rationalized, key=by_index)
        unfaithful = int(distributed.all_reduce_sum({"unfaithful": unfaithful})["unfaithful"])
        kept = direct + rationalized
        folder = self.life.write(lambda root: write_kept(root, iteration, kept))  # rank 0's, else None
        hook(iteration, "restore_base", model)
        if cfg.restart_from_base:
            self.restore_base()
        hook(iteration, "fine_tune", model)
        steps, loss = fine_tune(cfg, self.run_cfg, model, task.tokenizer, kept, iteration, folder)
        hook(iteration, "evaluate", model)
        accuracy = evaluate_accuracy(task, self.generator, self.run_cfg, rollout)
        return IterationStats(
            iteration=iteration,
            accuracy_before=before,
            accuracy_after=accuracy,
            train_accuracy=len(solved) / len(self.problems),
            kept_direct=len(direct),
            kept_rationalized=len(rationalized),
            rationalization_attempts=len(self.problems) - len(solved) if cfg.rationalize else 0,
            sft_steps=steps,
            sft_final_loss=loss,
            rationalized_unfaithful=unfaithful,
        )

    def rationalize(
        self, problems: list[Any], indices: list[int], params: SamplingParams
    ) -> tuple[list[KeptExample], int]:
        """The rationalize step on this process's missed problems: the verified hinted rationales, those
        that stand on their own with ``faithful_rationalization``, and how many it dropped."""
        cfg = self.cfg
        if not cfg.rationalize or not problems:
            return [], 0
        rationalized = rationalize(
            self.task,
            self.rationale_generator,
            problems,
            indices,
            params,
            max_per_problem=cfg.max_kept_per_problem,
            drop_hint_mentions=cfg.drop_hint_mentions,
        )
        if not cfg.faithful_rationalization or not rationalized:
            return rationalized, 0
        by_index = dict(zip(indices, problems, strict=True))
        keep = stands_alone(
            self.task,
            self.generator,
            [by_index[example.index] for example in rationalized],
            rationalized,
            max_new_tokens=params.max_new_tokens,
        )
        return [example for example, ok in zip(rationalized, keep, strict=True) if ok], keep.count(False)

    def restart_state(self) -> dict[str, torch.Tensor]:
        """The weights a fine-tune restarts from, as they are now: the model's, or with LoRA its adapters'."""
        return adapter_state(self.adapted) if self.adapted is not None else self.model.state_dict()

    def restore_base(self) -> None:
        """Put ``base`` back: the base weights, or with LoRA the adapters' initial weights (fresh adapters)."""
        if self.adapted is not None:
            set_adapter_state(self.adapted, self.base, INITIAL_ADAPTERS_FILE)
        else:
            self.model.load_state_dict(self.base)

    def enter(self, iteration: int, name: str, model: PreTrainedModel) -> None:
        """Before each named step: the progress bar names it, then the ``on_step`` hook sees it (and may stop
        the run: the iteration in progress is left unfinished, unrecorded)."""
        if self.bar is not None:
            last = self.history[-1].accuracy_after if self.history else self.initial_accuracy
            self.bar.set_postfix_str(f"iteration {iteration}: {name}; held-out pass@1 {last or 0.0:.2f}")
        if self.hook(iteration, name, model):
            raise _Stopped

    def interrupted(self) -> TrainingInterrupted:
        """After Ctrl-C or SIGTERM: every finished iteration is checkpointed already; say which one is last."""
        why = "; the iteration in progress is run again on resume"
        return self.life.interrupted(len(self.history), why=why)

    def plateaued(self) -> bool:
        """Whether the last ``patience`` iterations all failed to beat the best accuracy before them."""
        patience = self.cfg.patience
        if patience is None or len(self.history) < patience:
            return False
        accuracies = [self.initial_accuracy or 0.0] + [stats.accuracy_after for stats in self.history]
        return max(accuracies[-patience:]) <= max(accuracies[:-patience])

    def complete(self, iteration: int, metrics: dict[str, Any]) -> None:
        """Log a finished iteration (0: the base model), redraw the plot, checkpoint it (rank 0)."""
        distributed.barrier()  # after every rank's part of the iteration, before rank 0 checkpoints it
        self.life.log(iteration, metrics)
        self.life.draw()
        state = {
            "initial_accuracy": self.initial_accuracy,
            "history": [dataclasses.asdict(s) for s in self.history],
        }
        self.life.save(iteration, model=self.adapted or self.model, trainer_state=state)


def train_star(
    cfg: STaRConfig,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    env_id: str | Any,
    *,
    run: RunConfig | None = None,
    rollout: RolloutConfig | None = None,
    run_dir: RunDir | str | Path | None = None,
    generator: Generator | None = None,
    rationale_generator: Generator | None = None,
    on_step: StepHookFn | None = None,
) -> STaRResult:
    """Run STaR on ``model`` for ``run.max_steps`` outer iterations, resuming when the run folder allows.

    Args:
        cfg: STaR's own settings.
        model: The base causal LM, on its device; trained in place (on resume, its weights are replaced by
            the run folder's).
        tokenizer: Its tokenizer.
        env_id: A single-turn environment id (``reasongym.make``) or a made environment.
        run: Iterations, fine-tuning optimizer, splits, held-out size, seed; None: the ``default`` preset's.
        rollout: Rationale sampling; None: the ``default`` preset's (one greedy rationale).
        run_dir: Run folder for metrics, kept sets, plot and checkpoints; one holding a checkpoint resumes
            from its last completed iteration. None: no files, no resume.
        generator: Samples the policy (rationales, unless ``rationale_generator`` is given, and the held-out
            evaluations); default ``HFGenerator(model, tokenizer)``. Must follow ``model``.
        rationale_generator: Samples the rationales instead of the policy, e.g. a served teacher model:
            STaR's data generation is off-policy anyway. Evaluation still samples the policy.
        on_step: Called before each named step (``STEP_NAMES``) with ``(iteration, step, model)``; returning
            True stops the run there, as after its last iteration (a budget), the one in progress unrecorded.

    Returns:
        A ``STaRResult``.

    Raises:
        ConfigError: ``num_train_problems`` is None on an endless split, or a finished run is resumed.
    """
    default = shared_configs("default", "star")
    run, rollout = run or default["run"], rollout or default["rollout"]
    _refuse_sampling_ahead(rollout)
    plot = Plot("accuracy.png", STAR_PLOT_PANELS, "STaR", x_label="iteration")
    with RunLife.open(run_dir, run, plot=plot) as life:  # a second trainer on the folder fails here
        env = (make(env_id) if isinstance(env_id, str) else env_id).unwrapped
        loop = _Loop.build(
            cfg, run, rollout, model, tokenizer, env, generator, rationale_generator, life, on_step
        )
        resumed_from = _start_or_resume(loop)
        # Lines after the last completed iteration belong to an attempt that is about to be redone.
        life.open_writers(
            _config_record(cfg, run, rollout, env, loop.rationale_generator), resumed_from or -1
        )
        try:
            loop.train()
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: finished iterations are checkpointed; say which
            raise loop.interrupted() from None
        return STaRResult(loop.initial_accuracy, tuple(loop.history), resumed_from, life.path)


def _refuse_sampling_ahead(rollout: RolloutConfig) -> None:
    if rollout.max_staleness:  # each iteration samples from the model the one before fine-tuned
        raise ConfigError(
            f"max_staleness={rollout.max_staleness} is not allowed for STaR: an iteration's rationales come from "
            "the model the previous iteration fine-tuned, so there is nothing to sample ahead; use 0"
        )


def _config_record(
    cfg: STaRConfig, run: RunConfig, rollout: RolloutConfig, env: Any, rationale_generator: Generator
) -> dict[str, Any]:
    """What ``config.json`` records: every config, the environment, and the engine of the rationales."""
    return {
        "algo": "star",
        "run": run,
        "rollout": rollout,
        "star": cfg,
        "env": getattr(env.spec, "id", None),
        "env_config": dataclasses.asdict(env.config),
        "engine": engine_identity(rationale_generator),
    }


def iteration_metrics(stats: IterationStats) -> dict[str, float]:
    """One iteration's line of ``metrics.jsonl``: ``eval/pass@1`` (held-out greedy, as GRPO's) and ``star/``."""
    return {
        "eval/pass@1": stats.accuracy_after,
        "star/accuracy_before": stats.accuracy_before,
        "star/train_accuracy": stats.train_accuracy,
        "star/kept_direct": stats.kept_direct,
        "star/kept_rationalized": stats.kept_rationalized,
        "star/kept_total": stats.kept_direct + stats.kept_rationalized,
        "star/rationalization_attempts": stats.rationalization_attempts,
        "star/rationalized_unfaithful": stats.rationalized_unfaithful,
        "star/sft_steps": stats.sft_steps,
        "star/sft_final_loss": float("nan") if stats.sft_final_loss is None else stats.sft_final_loss,
    }


def _train_indices(env: Any, cfg: STaRConfig, task: STaRTask) -> list[int]:
    size = env.source.size(task.split, task.difficulty)
    if cfg.num_train_problems is None and size is None:
        raise ConfigError(
            f"num_train_problems=None is not allowed for split {task.split!r}, which is endless "
            "(procedural); set num_train_problems to an integer >= 1"
        )
    stop = cfg.train_start + (cfg.num_train_problems or size - cfg.train_start)
    if size is not None:
        stop = min(stop, size)
    if stop <= cfg.train_start:
        raise ConfigError(
            f"train_start={cfg.train_start} leaves no training problems in split {task.split!r} "
            f"({size} problems); choose train_start < {size}"
        )
    return list(range(cfg.train_start, stop))


def _start_or_resume(loop: _Loop) -> int | None:
    """Snapshot the weights every fine-tune restarts from (CPU, and the run folder: the base weights, or with
    LoRA the adapters' initial ones); restore the last completed iteration, if any."""
    life = loop.life
    name = BASE_WEIGHTS_FILE if loop.adapted is None else INITIAL_ADAPTERS_FILE
    saved_base = life.on_main(lambda folder: (folder / name).is_file())
    if saved_base and life.path is not None:
        loop.base = load_file(str(life.path / name))
    else:
        loop.base = {k: v.detach().to("cpu", copy=True) for k, v in loop.restart_state().items()}
        life.write(lambda folder: _write_base(folder, loop.base, name))
    checkpoint = life.checkpoint_to_resume(functools.partial(_refuse_finished, life.path))
    if checkpoint is None:
        loop.restore_base()
        return None
    step, saved = load_checkpoint(checkpoint, model=loop.adapted or loop.model)
    loop.initial_accuracy = saved["initial_accuracy"]
    loop.history = [IterationStats(**stats) for stats in saved["history"]]
    return step


def _write_base(folder: Path, base: dict[str, torch.Tensor], name: str) -> None:
    """``name`` (``base_model.safetensors``, or with LoRA ``initial_adapters.safetensors``), the weights every
    iteration restarts from: written whole, then renamed."""
    tmp = folder / f".{name}.tmp"
    save_file({k: v.contiguous() for k, v in base.items()}, str(tmp))
    tmp.replace(folder / name)


def _refuse_finished(path: Path | None, step: int, max_steps: int) -> None:
    if step >= max_steps:
        raise ConfigError(
            f"the run in {str(path)!r} already completed {step} iterations; raise max_steps above {step} "
            "to continue it"
        )
