r"""Sample n completions per problem through an environment, grade them, and write one record per problem.

:func:`evaluate` runs a model (or any Generator) through an environment, multi-turn ones included;
:mod:`reasongym.evaluation.stored` grades completions sampled elsewhere. Both write the JSONL record
format of :mod:`reasongym.evaluation.report` and return an :class:`~reasongym.evaluation.report.EvalReport`.

Resume: with ``resume=True`` an existing output file is read, records of finished problems are kept
(a line cut off by a crash is dropped), and only the missing problems are sampled. Each batch of
``batch_size`` problems is sampled with a seed derived from ``seed`` and its first index, so a run resumed
between batches gives the same records as one that was never interrupted. Every record stores the
settings of its evaluation, and a resume with other settings (model, checkpoint, sampling, seed, length,
environment options, reasongym version) is refused; the output file is locked while it is written (see
`reasongym.evaluation.records`).

Across processes (``distributed=True`` under ``torchrun`` or ``accelerate launch``) the batches are dealt to
the ranks, each rank appends its records to a part file beside the output, and rank 0 appends them to the
output in problem order at the end (`reasongym.evaluation.sharding`); the records are those of one process,
and a resume may use another number of processes than the interrupted run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium

from reasongym.envs import make, spec
from reasongym.envs.problem import Problem
from reasongym.errors import ConfigError
from reasongym.evaluation.loading import load_generator, model_identity
from reasongym.evaluation.records import SETTINGS_KEY, EvalFile, env_options, package_version
from reasongym.evaluation.report import EvalReport, check_ks, load_records, summarize
from reasongym.evaluation.sharding import (
    Shard,
    barrier,
    batches_of,
    current_shard,
    from_main,
    gather_records,
    part_files,
    part_path,
)

DEFAULT_NUM_PROCEDURAL = 200
"""Problems taken from a procedural environment's test stream when ``num_problems`` is None."""
_SEED_STRIDE = 1_000_003  # a prime: batch seeds of different runs rarely collide


def evaluate(
    model_or_path: Any,
    env_id: str | gymnasium.Env,
    *,
    n: int = 1,
    ks: Sequence[int] | None = None,
    split: str | None = None,
    num_problems: int | None = None,
    difficulty: int | None = None,
    temperature: float = 0.6,
    top_p: float = 1.0,
    max_new_tokens: int = 512,
    seed: int = 0,
    out_path: str | os.PathLike[str] | None = None,
    resume: bool = True,
    batch_size: int = 8,
    tokenizer: Any = None,
    device: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    progress: bool = True,
    verbose: bool = True,
    distributed: bool = False,
) -> EvalReport:
    """Sample ``n`` completions per problem, grade them, write records as it goes, and summarize.

    Args:
        model_or_path: A transformers causal LM (pass ``tokenizer``), a hub id, a local model folder or
            ``.gguf`` file, a run folder or ``checkpoints/step-N`` folder of a trained run, or any
            :class:`~reasongym.generation.Generator` (e.g. ``OpenAIGenerator`` for a served model).
        env_id: A registered environment id, or a made environment (wrappers included; trainers pass
            theirs). Multi-turn environments are played turn by turn, their tools and feedback included.
        n: Completions sampled per problem.
        ks: k values of pass@k and maj@k; None: powers of two up to ``n``, and ``n``.
        split: The split to evaluate; None: ``test`` if the environment has it, else its validation split,
            else its default split.
        num_problems: How many problems (the first ones of the split); None: the whole split of a dataset,
            ``DEFAULT_NUM_PROCEDURAL`` problems of a procedural stream.
        difficulty: Difficulty level of the problems, where the environment has levels.
        temperature: Sampling temperature; 0 is greedy (then ``n`` should be 1).
        top_p: Nucleus sampling threshold.
        max_new_tokens: Most tokens per completion.
        seed: Seed of the sampling.
        out_path: JSONL file of records, appended as problems finish; None keeps records in memory only.
        resume: Keep the finished records of an existing ``out_path`` and sample only the rest; False
            overwrites it.
        batch_size: Problems sampled together (each with its ``n`` completions).
        tokenizer: The tokenizer of a model object, or of a Generator whose prompts need a chat template.
        device: Where to put a model loaded here; None: CUDA when available, else CPU.
        env_kwargs: Options for ``reasongym.make`` (``ReasoningEnvConfig`` fields).
        progress: Show a progress bar.
        verbose: Print the report table at the end.
        distributed: Share the problems among the processes of an initialised torch.distributed group:
            every process must call, each samples its batches on its own device, and every process gets
            the whole report; rank 0 alone writes ``out_path`` and prints. Without a group, one process.

    Returns:
        The :class:`EvalReport`.

    Raises:
        ConfigError: Bad arguments, or an ``out_path`` holding records of a different evaluation (the
            message names the first setting that differs).
        ResourceBusyError: Another process is writing ``out_path``.
        UnknownEnvError: ``env_id`` is not registered (the message suggests the nearest id).
        DatasetNotFoundError: The environment's data is not available (the message says how to provide it).
    """
    from reasongym.generation import SamplingParams

    env = make(env_id, **dict(env_kwargs or {})) if isinstance(env_id, str) else env_id
    base = env.unwrapped
    split = split or default_eval_split(base)
    indices = problem_indices(base, split, num_problems, difficulty)
    ks = check_ks(ks, n)
    params = SamplingParams(
        n=n, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens, seed=seed
    )
    env_name = spec(env_id).id if isinstance(env_id, str) else getattr(env.spec, "id", None)
    header = {"env_id": env_name, "split": split, "n": n}
    settings = {
        **header, **model_identity(model_or_path), "temperature": temperature, "top_p": top_p,
        "max_new_tokens": max_new_tokens, "seed": seed, "difficulty": difficulty,
        "env_config": env_options(base), "reasongym": package_version(),
    }  # fmt: skip
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size={batch_size!r} is not allowed; expected an integer >= 1")
    shard = current_shard(distributed)
    with EvalFile(out_path if shard.is_main else None, resume=resume) as file:  # rank 0 locks and checks
        done, leftover = from_main(shard, lambda: _resumed_records(file, settings, resume))
        todo = [index for index in indices if index not in done]
        if todo:  # load the model first: a model that fails to load leaves out_path as it was
            generator, tokenizer = load_generator(model_or_path, tokenizer=tokenizer, device=device)
        if shard.is_main:
            _start_output(file, leftover)
        barrier(shard)  # the old part files are gone before the ranks write new ones
        mine = batches_of(todo, batch_size, shard)
        header = {**header, SETTINGS_KEY: settings}
        if shard.world_size == 1:
            _sample_and_write(
                env, generator, tokenizer, mine, params, split, difficulty, header, batch_size, file, done,
                progress,
            )  # fmt: skip
        else:
            _sample_on_ranks(
                env, generator, tokenizer, mine, params, split, difficulty, header, batch_size, out_path, done,
                progress, shard,
            )  # fmt: skip
        if shard.is_main and (leftover or shard.world_size > 1):  # appended out of order: one file, in order
            file.write_in_order([done[index] for index in sorted(done)])
            for part in part_files(out_path) if out_path is not None else []:  # in the output now
                part.unlink(missing_ok=True)
        barrier(shard)
    records = [done[index] for index in indices]
    report = summarize(records, ks=ks, path=out_path)
    if verbose and shard.is_main:
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
    processes = current_shard(distributed).world_size
    report = evaluate(
        generator, env, n=1, ks=(1,), split=split, num_problems=num_problems, difficulty=difficulty,
        temperature=0.0, max_new_tokens=max_new_tokens, tokenizer=tokenizer, out_path=None,
        batch_size=-(-num_problems // processes), progress=False, verbose=False, distributed=distributed,
    )  # fmt: skip
    return report.metrics.get("pass@1", 0.0) if report.num_problems else 0.0


def default_eval_split(env: Any) -> str:
    """``test`` if the environment has it, else a validation split, else its default split."""
    splits = env.source.splits()
    for name in ("test", "validation", "dev"):
        if name in splits:
            return name
    return env.source.default_split


def problem_indices(env: Any, split: str, num_problems: int | None, difficulty: int | None) -> list[int]:
    """Indices of the problems to evaluate: the first ``num_problems`` of the split (or all of it)."""
    if split not in env.source.splits():
        raise ConfigError(
            f"split={split!r} is not a split of this environment; splits: {list(env.source.splits())}"
        )
    if num_problems is not None and (isinstance(num_problems, bool) or num_problems < 1):
        raise ConfigError(f"num_problems={num_problems!r} is not allowed; expected an integer >= 1 or None")
    size = env.source.size(split, difficulty)
    if size is None:
        return list(range(num_problems or DEFAULT_NUM_PROCEDURAL))
    return list(range(min(size, num_problems or size)))


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
    env: Any,
    generator: Any,
    tokenizer: Any,
    mine: Sequence[int],
    params: Any,
    split: str,
    difficulty: int | None,
    header: Mapping[str, Any],
    batch_size: int,
    out_path: str | os.PathLike[str] | None,
    done: dict[int, dict[str, Any]],
    progress: bool,
    shard: Shard,
) -> None:
    """Sample this rank's batches into its part file, then merge.

    Every rank gets every record (rank 0 then writes them all to the output, and removes the parts).
    """
    sampled: dict[int, dict[str, Any]] = {}
    target = None if out_path is None else part_path(out_path, shard.rank)
    with EvalFile(target, resume=False) as part:
        part.start()
        _sample_and_write(
            env, generator, tokenizer, mine, params, split, difficulty, header, batch_size, part, sampled,
            progress and shard.is_main,
        )  # fmt: skip
    everything = gather_records(sampled, shard)  # after every rank has closed its part file
    done.update(everything)


def _sample_and_write(
    env: Any,
    generator: Any,
    tokenizer: Any,
    todo: Sequence[int],
    params: Any,
    split: str,
    difficulty: int | None,
    header: Mapping[str, Any],
    batch_size: int,
    file: EvalFile,
    done: dict[int, dict[str, Any]],
    progress: bool,
) -> None:
    """Play the ``todo`` problems batch by batch; append each batch's records as soon as it is graded."""
    from dataclasses import replace

    from tqdm.auto import tqdm

    from reasongym.evaluation.episodes import play_episodes

    if batch_size < 1:
        raise ConfigError(f"batch_size={batch_size!r} is not allowed; expected an integer >= 1")
    bar = tqdm(total=len(todo), desc=f"eval {header['env_id']}", unit="problem", disable=not progress)
    n = params.n
    try:
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            batch_params = replace(params, seed=params.seed + _SEED_STRIDE * chunk[0])
            episodes, _ = play_episodes(
                env, generator, tokenizer, chunk, group_size=n, params=batch_params, split=split,
                difficulty=difficulty,
            )  # fmt: skip
            for position, index in enumerate(chunk):
                problem = env.unwrapped.problem_at(index, split=split, difficulty=difficulty)
                record = {"index": index, **header, **problem_fields(problem)}
                record.update(episode_fields(episodes[position * n : (position + 1) * n]))
                done[index] = record
                file.write(record)
            bar.update(len(chunk))
    finally:
        bar.close()


def episode_fields(episodes: Sequence[Any]) -> dict[str, Any]:
    """The graded record fields of one problem's finished episodes (``Episode`` objects).

    ``completions`` hold everything after the prompt (model turns and, in multi-turn environments, the
    observations between them); the verdict fields are those of each episode's last step. An episode that
    ran out of turns is wrong, with outcome ``max_turns``.
    """
    finish = ["max_turns" if e.cut_off else "length" if e.truncated else "stop" for e in episodes]
    graded: dict[str, Any] = next((e.info for e in episodes if "verifier" in e.info), {})
    return {
        "completions": ["".join(e.pieces) for e in episodes],
        "extracted": [None if e.cut_off else e.info.get("extracted") for e in episodes],
        "outcomes": ["max_turns" if e.cut_off else str(e.info.get("outcome", "")) for e in episodes],
        "correct": [False if e.cut_off else e.info.get("correct") for e in episodes],
        "reasons": ["turn cap" if e.cut_off else e.info.get("reason") for e in episodes],
        "finish_reasons": finish,
        "verifier": graded.get("verifier"),
        "problem_seed": graded.get("replay", {}).get("seed"),
    }


def problem_fields(problem: Problem) -> dict[str, Any]:
    """The record fields that describe a problem: id, kind, gold, difficulty, subject, year."""
    meta = problem.metadata or {}
    return {
        "id": problem.id,
        "kind": problem.answer_type,
        "gold": problem.answer,
        "difficulty": problem.difficulty,
        "subject": meta.get("subject"),
        "year": meta.get("year"),
    }


def grade(env: Any, problem: Problem, completions: Sequence[str]) -> dict[str, Any]:
    """Grade completions of one problem with the environment's verifier options.

    Returns:
        ``completions``, ``extracted``, ``outcomes``, ``correct`` and ``reasons`` lists (``correct`` None
        where the gold answer is ungradable), the ``verifier`` version and the source's ``problem_seed``.
    """
    verdicts = env.score_many(problem, list(completions))
    record = graded_fields(completions, verdicts)
    record["verifier"] = env.verifier_version(problem)
    record["problem_seed"] = getattr(env.source, "seed", None)
    return record


def graded_fields(completions: Sequence[str], verdicts: Sequence[Any]) -> dict[str, Any]:
    """The record fields of graded completions: the texts, extracted answers, outcomes, correctness, reasons."""
    return {
        "completions": list(completions),
        "extracted": [v.extracted for v in verdicts],
        "outcomes": [v.outcome.value for v in verdicts],
        "correct": [v.correct for v in verdicts],
        "reasons": [v.reason for v in verdicts],
    }
