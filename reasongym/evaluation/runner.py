r"""Sample n completions per problem through an environment, grade them, and write one record per problem.

:func:`evaluate` runs a model; :func:`grade_completions` grades completions sampled elsewhere (vLLM, an
API) without any model. Both write the JSONL record format of :mod:`reasongym.evaluation.report` and
return an :class:`~reasongym.evaluation.report.EvalReport`.

Input of :func:`grade_completions`: JSONL, one object per problem, in one of two shapes.

- With ``env_id``: ``{"index": 3, "completions": ["...", ...]}`` (problem 3 of the split), or
  ``{"id": "2024-I-1", "completions": [...]}`` (problem id, dataset environments only). An optional
  ``"split"`` key overrides the split for that row.
- Without ``env_id``: ``{"gold": "42", "kind": "integer", "completions": [...]}``, with optional ``"id"``,
  ``"choices"`` (for kind ``choice``), ``"difficulty"``, ``"subject"`` and ``"year"``.

A single ``"completion"`` string may stand in for a one-element ``"completions"`` list.

Resume: with ``resume=True`` an existing output file is read, records of finished problems are kept
(a line cut off by a crash is dropped), and only the missing problems are sampled. Each batch of
``batch_size`` problems is sampled with a seed derived from ``seed`` and its first index, so a run resumed
between batches gives the same records as one that was never interrupted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reasongym.envs import make, spec
from reasongym.envs.problem import Problem
from reasongym.errors import ConfigError
from reasongym.evaluation.loading import load_generator
from reasongym.evaluation.report import EvalReport, check_ks, load_records, summarize
from reasongym.verifiers import verify_many

DEFAULT_NUM_PROCEDURAL = 200
"""Problems taken from a procedural environment's test stream when ``num_problems`` is None."""
_SEED_STRIDE = 1_000_003  # a prime: batch seeds of different runs rarely collide


def evaluate(
    model_or_path: Any,
    env_id: str,
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
) -> EvalReport:
    """Sample ``n`` completions per problem, grade them, write records as it goes, and summarize.

    Args:
        model_or_path: A transformers causal LM (pass ``tokenizer``), a hub id, a local model folder or
            ``.gguf`` file, a run folder or ``checkpoints/step-N`` folder of a trained run, or any
            :class:`~reasongym.generation.Generator` (e.g. a vLLM wrapper).
        env_id: A registered environment id.
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

    Returns:
        The :class:`EvalReport`.

    Raises:
        ConfigError: Bad arguments, or an ``out_path`` holding records of a different evaluation.
        UnknownEnvError: ``env_id`` is not registered (the message suggests the nearest id).
        DatasetNotFoundError: The environment's data is not available (the message says how to provide it).
    """
    from reasongym.generation import SamplingParams

    env = make(env_id, **dict(env_kwargs or {})).unwrapped
    split = split or default_eval_split(env)
    indices = problem_indices(env, split, num_problems, difficulty)
    ks = check_ks(ks, n)
    params = SamplingParams(
        n=n, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens, seed=seed
    )
    header = {"env_id": spec(env_id).id, "split": split, "n": n}
    done = _finished_records(out_path, resume, header)
    todo = [index for index in indices if index not in done]
    if todo:  # load the model first: a model that fails to load leaves out_path untouched
        generator, tokenizer = load_generator(model_or_path, tokenizer=tokenizer, device=device)
    if out_path is not None:  # keep finished records only: drops a line cut off by a crash
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        _rewrite(Path(out_path), done.values())
    if todo:
        _sample_and_write(
            env,
            generator,
            tokenizer,
            todo,
            params,
            split,
            difficulty,
            header,
            batch_size,
            out_path,
            done,
            progress,
        )
    records = [done[index] for index in indices]
    report = summarize(records, ks=ks, path=out_path)
    if verbose:
        print(report.table())
    return report


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


def _finished_records(
    out_path: str | os.PathLike[str] | None, resume: bool, header: Mapping[str, Any]
) -> dict[int, dict[str, Any]]:
    """Records of ``out_path`` by index when resuming (read only); they must match ``header``."""
    if out_path is None or not resume or not Path(out_path).exists():
        return {}
    path = Path(out_path)
    records = load_records(path)
    for record in records:
        found = {
            "env_id": record.get("env_id"),
            "split": record.get("split"),
            "n": len(record["completions"]),
        }
        if found != dict(header):
            raise ConfigError(
                f"out_path={str(path)!r} holds records of another evaluation ({found}, this one is "
                f"{dict(header)}); pass another out_path, or resume=False (--no-resume) to overwrite it"
            )
    return {int(record["index"]): record for record in records}


def _rewrite(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    os.replace(tmp, path)


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
    out_path: str | os.PathLike[str] | None,
    done: dict[int, dict[str, Any]],
    progress: bool,
) -> None:
    """Sample the ``todo`` problems batch by batch; append each batch's records as soon as it is graded."""
    from dataclasses import replace

    from tqdm.auto import tqdm

    if batch_size < 1:
        raise ConfigError(f"batch_size={batch_size!r} is not allowed; expected an integer >= 1")
    handle = None if out_path is None else Path(out_path).open("a", encoding="utf-8")
    bar = tqdm(total=len(todo), desc=f"eval {header['env_id']}", unit="problem", disable=not progress)
    try:
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            problems = [env.problem_at(index, split=split, difficulty=difficulty) for index in chunk]
            prompts = [_prompt_text(env, problem, tokenizer) for problem in problems]
            batch_params = replace(params, seed=params.seed + _SEED_STRIDE * chunk[0])
            samples = generator.generate(prompts, batch_params)
            for index, problem, completions in zip(chunk, problems, samples, strict=True):
                record = {"index": index, **header, **problem_fields(problem)}
                record.update(grade(env, problem, [c.text for c in completions]))
                record["finish_reasons"] = [c.finish_reason for c in completions]
                done[index] = record
                if handle is not None:
                    handle.write(json.dumps(record) + "\n")
            if handle is not None:
                handle.flush()
            bar.update(len(chunk))
    finally:
        bar.close()
        if handle is not None:
            handle.close()


def _prompt_text(env: Any, problem: Problem, tokenizer: Any) -> str:
    if tokenizer is None:
        return env.prompt(problem)
    from reasongym.models import format_prompt

    return format_prompt(tokenizer, env.messages(problem))


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
        ``completions``, ``extracted``, ``outcomes`` and ``correct`` lists (``correct`` None where the
        gold answer is ungradable).
    """
    verdicts = verify_many(
        list(completions),
        problem.answer,
        problem.answer_type,
        choices=problem.choices or None,
        last_number_fallback=env.config.last_number_fallback,
        timeout=env.config.verify_timeout,
    )
    return _graded(completions, verdicts)


def _graded(completions: Sequence[str], verdicts: Sequence[Any]) -> dict[str, Any]:
    return {
        "completions": list(completions),
        "extracted": [v.extracted for v in verdicts],
        "outcomes": [v.outcome.value for v in verdicts],
        "correct": [v.correct for v in verdicts],
    }


# ---------------------------------------------------------------------------------------------- stored


def grade_completions(
    jsonl_path: str | os.PathLike[str],
    env_id: str | None = None,
    *,
    ks: Sequence[int] | None = None,
    split: str | None = None,
    out_path: str | os.PathLike[str] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    timeout: float = 1.0,
    progress: bool = True,
    verbose: bool = True,
) -> EvalReport:
    """Grade completions produced elsewhere (no model needed); the input format is in the module docstring.

    Args:
        jsonl_path: The stored completions.
        env_id: The environment the rows index into; None: every row carries ``gold`` and ``kind``.
        ks: k values of pass@k and maj@k; None: powers of two up to n, and n.
        split: Split of the environment the rows index into; None as in :func:`evaluate`.
        out_path: Write the graded records here (the evaluation file format).
        env_kwargs: Options for ``reasongym.make``.
        timeout: Seconds per symbolic comparison, for rows graded without an environment.
        progress: Show a progress bar.
        verbose: Print the report table.

    Returns:
        The :class:`EvalReport`.

    Raises:
        ConfigError: A row lacks what its shape needs (the message names the line and the key).
    """
    from tqdm.auto import tqdm

    rows = load_records(jsonl_path)
    if not rows:
        raise ConfigError(f"{str(jsonl_path)!r} holds no rows")
    env = make(env_id, **dict(env_kwargs or {})).unwrapped if env_id is not None else None
    split = (split or default_eval_split(env)) if env is not None else None
    ids_by_split: dict[str, dict[str, int]] = {}
    records = []
    for line, row in enumerate(tqdm(rows, desc="grade", unit="problem", disable=not progress), start=1):
        completions = _completions_of(row, line)
        if env is None:
            records.append(_grade_with_gold(row, completions, line, timeout))
            continue
        row_split = row.get("split", split)
        if "index" not in row and row_split not in ids_by_split:
            ids_by_split[row_split] = _id_index(env, row_split)
        index = _index_of(row, ids_by_split.get(row_split), line)
        problem = env.problem_at(index, split=row_split)
        header = {"index": index, "env_id": spec(env_id).id, "split": row_split, "n": len(completions)}
        records.append({**header, **problem_fields(problem), **grade(env, problem, completions)})
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        _rewrite(Path(out_path), records)
    report = summarize(records, ks=ks, path=out_path)
    if verbose:
        print(report.table())
    return report


def _completions_of(row: Mapping[str, Any], line: int) -> list[str]:
    completions = row.get("completions", [row["completion"]] if "completion" in row else None)
    if (
        not isinstance(completions, list)
        or not completions
        or not all(isinstance(c, str) for c in completions)
    ):
        raise ConfigError(
            f"line {line}: needs 'completions' (a non-empty list of strings) or 'completion' (a string); "
            f"keys present: {sorted(row)}"
        )
    return completions


def _grade_with_gold(
    row: Mapping[str, Any], completions: list[str], line: int, timeout: float
) -> dict[str, Any]:
    if "gold" not in row:
        raise ConfigError(
            f"line {line}: without env_id every row needs 'gold' (and 'kind', default 'math'); keys present: "
            f"{sorted(row)}. Or pass env_id and give 'index' or 'id' per row"
        )
    kind = row.get("kind", "math")
    choices = row.get("choices") or None
    verdicts = verify_many(completions, str(row["gold"]), kind, choices=choices, timeout=timeout)
    extras = {key: row.get(key) for key in ("difficulty", "subject", "year")}
    record = {"index": line - 1, "id": str(row.get("id", line - 1)), "kind": kind, "gold": str(row["gold"])}
    return {**record, "n": len(completions), **extras, **_graded(completions, verdicts)}


def _id_index(env: Any, split: str) -> dict[str, int]:
    size = env.source.size(split)
    if size is None:
        raise ConfigError(
            "rows of a procedural environment must give 'index', not 'id' (the stream is infinite)"
        )
    return {env.problem_at(index, split=split).id: index for index in range(size)}


def _index_of(row: Mapping[str, Any], ids: Mapping[str, int] | None, line: int) -> int:
    if "index" in row:
        index = row["index"]
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ConfigError(f"line {line}: 'index' must be a non-negative integer, got {index!r}")
        return index
    if "id" not in row:
        raise ConfigError(
            f"line {line}: with env_id every row needs 'index' or 'id'; keys present: {sorted(row)}"
        )
    if ids is None or str(row["id"]) not in ids:
        raise ConfigError(f"line {line}: problem id {row['id']!r} is not in this split of the environment")
    return ids[str(row["id"])]
