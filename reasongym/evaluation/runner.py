r"""Sample n completions per problem through an environment, grade them, and write one record per problem.

:func:`evaluate` runs a model (or any Generator) through an environment, multi-turn ones included, with
the settings of an `~reasongym.evaluation.config.EvalConfig`; the episodes are played by the same engine
the trainers sample with (`reasongym.rollouts.episodes`). :mod:`reasongym.evaluation.stored` grades
completions sampled elsewhere. Both write the JSONL record format of :mod:`reasongym.evaluation.records`
and return an :class:`~reasongym.evaluation.report.EvalReport`.

Resume: with ``resume=True`` an existing output file is read, records of finished problems are kept
(a line cut off by a crash is dropped), and only the missing problems are sampled. Each problem is sampled
with a seed of its own, derived from ``seed`` and its index (`SamplingParams.prompt_seeds`), never from the
batch it falls in: a run resumed anywhere, even in the middle of a batch or with another ``batch_size``,
gives the records of one that was never interrupted. Every record stores the settings of its evaluation,
and a resume with other settings (model and the hash of its weights, checkpoint, sampling, seed, length,
environment options, reasongym version) is refused; the output file is locked while it is written (see
`reasongym.evaluation.records`).

Across processes (``distributed=True`` under ``torchrun`` or ``accelerate launch``) the batches are dealt to
the ranks, each rank appends its records to a part file beside the output, and rank 0 appends them to the
output in problem order at the end (`reasongym.evaluation.sharding`); the records are those of one process,
and a resume may use another number of processes than the interrupted run.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium

from reasongym import distributed as dist
from reasongym.envs import make, spec
from reasongym.evaluation.config import EvalConfig, default_eval_split, problem_indices
from reasongym.evaluation.loading import eval_engine, load_generator, model_identity
from reasongym.evaluation.records import (
    SETTINGS_KEY,
    EvalFile,
    env_options,
    episode_fields,
    load_records,
    package_version,
    problem_fields,
)
from reasongym.evaluation.report import EvalReport, summarize
from reasongym.evaluation.sharding import batches_of, gather_records, part_files, part_path
from reasongym.generation.progress import TokenCount
from reasongym.rollouts.episodes import play_episodes

_SEED_STRIDE = 1_000_003  # a prime: problem seeds of different runs rarely collide
_LOCAL_BATCH = 8
"""Problems per batch of a local model when ``batch_size`` is None."""


def evaluate(
    model_or_path: Any,
    env_id: str | gymnasium.Env,
    config: EvalConfig | None = None,
    *,
    out_path: str | os.PathLike[str] | None = None,
    resume: bool = True,
    tokenizer: Any = None,
    device: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    progress: bool = True,
    verbose: bool = True,
    distributed: bool = False,
    **fields: Any,
) -> EvalReport:
    """Sample ``n`` completions per problem, grade them, write records as it goes, and summarize.

    Args:
        model_or_path: A transformers causal LM (pass ``tokenizer``); a hub id, model folder, ``.gguf`` file,
            run folder or checkpoint; or any :class:`~reasongym.generation.Generator` (a served model too).
        env_id: A registered id, or a made environment (wrappers included; multi-turn ones are played turn
            by turn).
        config: What to sample and report; None: ``EvalConfig()``.
        out_path: JSONL records, appended as problems finish; None keeps them in memory only.
        resume: Keep the finished records of ``out_path`` and sample only the rest; False overwrites it.
        tokenizer: The tokenizer of a model object (or of a Generator whose prompts need a chat template).
        device: Where a model loaded here goes; None: CUDA when available, else CPU.
        env_kwargs: Options for ``reasongym.make``.
        progress: Show a progress bar.
        verbose: Print the report table.
        distributed: Share the problems among the processes of a torch.distributed group (every process
            calls and gets the whole report; rank 0 alone writes and prints).
        **fields: `EvalConfig` fields on top of ``config``: ``evaluate(model, env, n=8)``.

    Raises:
        ConfigError: Bad settings (naming the field), or an ``out_path`` holding records of another
            evaluation (naming the first setting that differs).
        ResourceBusyError: Another process is writing ``out_path``.
        UnknownEnvError, DatasetNotFoundError: The environment is unknown, or its data is missing.
    """
    cfg = (config or EvalConfig()).replace(**fields)
    env = make(env_id, **dict(env_kwargs or {})) if isinstance(env_id, str) else env_id
    engine = eval_engine(model_or_path, cfg.engine, device)  # the evaluation's one decision, carried below
    plan = _Plan.of(cfg, env, env_id, model_or_path, engine)
    info = dist.current() if distributed else dist.SINGLE_PROCESS
    with EvalFile(out_path if info.is_main else None, resume=resume) as file:  # rank 0 locks and checks
        load = functools.partial(
            load_generator,
            model_or_path,
            tokenizer=tokenizer,
            device=device,
            engine=engine,
            fall_back=cfg.engine == "auto",
        )
        done = _sample_missing(plan, env, load, file, out_path, resume=resume, progress=progress, info=info)
    report = summarize([done[index] for index in plan.indices], ks=cfg.ks, path=out_path)
    if verbose and info.is_main:
        print(report.table())
    return report


def greedy_pass_at_1(
    generator: Any,
    env: str | gymnasium.Env,
    *,
    tokenizer: Any,
    split: str | None = None,
    num_problems: int = 100,
    difficulty: int | None = None,
    max_new_tokens: int = 512,
    distributed: bool = False,
) -> float:
    """Held-out greedy pass@1 of ``generator`` on the first ``num_problems`` problems of ``split``.

    The one held-out measurement of the trainers (GRPO, DAPO, STaR, the SFT warm start): `evaluate` with
    one greedy sample per problem, nothing written, problems sampled in one batch (one per process with
    ``distributed``, where every process must call and gets the same number). Problems whose gold is
    ungradable are left out, as in every evaluation report.
    """
    processes = (dist.current() if distributed else dist.SINGLE_PROCESS).world_size
    cfg = EvalConfig(
        n=1,
        k=(1,),
        split=split,
        num_problems=num_problems,
        difficulty=difficulty,
        temperature=0.0,
        max_new_tokens=max_new_tokens,
        batch_size=-(-num_problems // processes),
    )
    report = evaluate(
        generator, env, cfg, tokenizer=tokenizer, progress=False, verbose=False, distributed=distributed
    )
    return report.metrics.get("pass@1", 0.0) if report.num_problems else 0.0


@dataclass(frozen=True)
class _Plan:
    """What one evaluation covers: its settings, split, problems, and the fields every record starts with."""

    cfg: EvalConfig
    split: str
    indices: list[int]
    header: dict[str, Any]
    settings: dict[str, Any]

    @classmethod
    def of(cls, cfg: EvalConfig, env: Any, env_id: Any, model_or_path: Any, engine: str | None) -> _Plan:
        base = env.unwrapped
        cfg.ks  # noqa: B018  (a k above n fails here, before anything is loaded or written)
        split = cfg.split or default_eval_split(base)
        indices = problem_indices(base, split, cfg.num_problems, cfg.difficulty)
        env_name = spec(env_id).id if isinstance(env_id, str) else getattr(env.spec, "id", None)
        header = {"env_id": env_name, "split": split, "n": cfg.n}
        settings = {
            **header,
            **model_identity(model_or_path),
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "max_new_tokens": cfg.max_new_tokens,
            "seed": cfg.seed,
            "difficulty": cfg.difficulty,
            "env_config": env_options(base),
            "reasongym": package_version(),
        }
        if engine not in (
            None,
            "hf",
        ):  # another engine's samples are others (our own sampler's records omit it)
            settings["engine"] = engine
        return cls(cfg, split, indices, {**header, SETTINGS_KEY: settings}, settings)


@dataclass(frozen=True)
class _Sampler:
    """Plays batches of problems and turns each problem's episodes into its record."""

    env: Any
    generator: Any
    tokenizer: Any
    plan: _Plan
    batch_size: int
    progress: bool

    def run(self, todo: Sequence[int], file: EvalFile, done: dict[int, dict[str, Any]]) -> None:
        """Play the ``todo`` problems batch by batch; append each batch's records as soon as it is graded."""
        from tqdm.auto import tqdm

        cfg, n = self.plan.cfg, self.plan.cfg.n
        bar = tqdm(
            total=len(todo),
            desc=f"eval {self.plan.header['env_id']}",
            unit="problem",
            disable=not self.progress,
        )
        counting = self.progress and getattr(self.generator, "progress", False) is None
        if counting:  # tokens sampled, while a batch runs
            self.generator.progress = TokenCount(lambda: bar)
        try:
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start : start + self.batch_size]
                episodes, _ = play_episodes(
                    self.env,
                    self.generator,
                    self.tokenizer,
                    chunk,
                    params=cfg.sampling(seed=cfg.seed),
                    split=self.plan.split,
                    difficulty=cfg.difficulty,
                    problem_seeds=[cfg.seed + _SEED_STRIDE * index for index in chunk],
                )
                for position, index in enumerate(chunk):
                    problem = self.env.unwrapped.problem_at(
                        index, split=self.plan.split, difficulty=cfg.difficulty
                    )
                    record = {"index": index, **self.plan.header, **problem_fields(problem)}
                    record.update(episode_fields(episodes[position * n : (position + 1) * n]))
                    done[index] = record
                    file.write(record)
                bar.update(len(chunk))
        finally:
            bar.close()
            if counting:
                self.generator.progress = None


def _sample_missing(
    plan: _Plan,
    env: Any,
    load: Callable[[], tuple[Any, Any]],
    file: EvalFile,
    out_path: str | os.PathLike[str] | None,
    *,
    resume: bool,
    progress: bool,
    info: dist.DistInfo,
) -> dict[int, dict[str, Any]]:
    """Sample the problems ``file`` does not hold yet, on every rank; returns every record by index."""
    done, leftover = dist.on_main(lambda: _resumed_records(file, plan.settings, resume), info)
    todo = [index for index in plan.indices if index not in done]
    generator = tokenizer = None
    if todo:  # load the model first: a model that fails to load leaves the output as it was
        generator, tokenizer = load()
    if info.is_main:
        _start_output(file, leftover)
    dist.barrier(info)  # the old part files are gone before the ranks write new ones
    in_flight = getattr(getattr(generator, "settings", None), "max_concurrency", 0)  # a served model's
    batch_size = plan.cfg.batch_size or max(_LOCAL_BATCH, 2 * in_flight)
    sampler = _Sampler(env, generator, tokenizer, plan, batch_size, progress and info.is_main)
    mine = batches_of(todo, batch_size, info)
    if info.world_size == 1:
        sampler.run(mine, file, done)
    else:
        _sample_on_ranks(sampler, mine, out_path, done, info)
    if info.is_main and (leftover or info.world_size > 1):  # appended out of order: one file, in order
        file.write_in_order([done[index] for index in sorted(done)])
        for part in part_files(out_path) if out_path is not None else []:  # in the output now
            part.unlink(missing_ok=True)
    dist.barrier(info)
    return done


def _resumed_records(
    file: EvalFile, settings: Mapping[str, Any], resume: bool
) -> tuple[dict[int, dict[str, Any]], list[dict[str, Any]]]:
    """Rank 0's reading of what is finished, checked against ``settings``.

    Returns the finished records by index (the output's, and those of the part files a multi-process run
    left, with any number of ranks), and the part files' records the output does not hold yet.
    """
    if file.path is None or not resume:
        file.check_settings(settings)
        return {int(record["index"]): record for record in file.records}, []
    in_file = {int(record["index"]) for record in file.records}
    leftover = {
        int(record["index"]): record
        for part in part_files(file.path)
        for record in load_records(part, cut_off_last_line="skip")
        if int(record["index"]) not in in_file
    }
    file.records += list(leftover.values())
    file.check_settings(settings)
    return {int(record["index"]): record for record in file.records}, list(leftover.values())


def _start_output(file: EvalFile, leftover: Sequence[Mapping[str, Any]]) -> None:
    """Rank 0 opens the output to append, moves the part files' records into it, and removes the parts."""
    file.start()
    for record in sorted(leftover, key=lambda record: int(record["index"])):
        file.write(record)
    for part in part_files(file.path) if file.path is not None else []:
        part.unlink(missing_ok=True)


def _sample_on_ranks(
    sampler: _Sampler,
    mine: Sequence[int],
    out_path: str | os.PathLike[str] | None,
    done: dict[int, dict[str, Any]],
    info: dist.DistInfo,
) -> None:
    """Sample this rank's batches into its part file, then merge.

    Every rank gets every record (rank 0 then writes them all to the output, and removes the parts).
    """
    sampled: dict[int, dict[str, Any]] = {}
    target = None if out_path is None else part_path(out_path, info.rank)
    with EvalFile(target, resume=False) as part:
        part.start()
        sampler.run(mine, part, sampled)
    done.update(gather_records(sampled, info))  # after every rank has closed its part file
