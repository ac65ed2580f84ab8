r"""Grade completions sampled elsewhere (vLLM, an API, another system), without any model.

Input of :func:`grade_completions`: JSONL, one object per problem, in one of two shapes.

- With ``env_id``: ``{"index": 3, "completions": ["...", ...]}`` (problem 3 of the split), or
  ``{"id": "2024-I-1", "completions": [...]}`` (problem id, dataset environments only). An optional
  ``"split"`` key overrides the split for that row.
- Without ``env_id``: ``{"gold": "42", "kind": "integer", "completions": [...]}``, with optional ``"id"``,
  ``"choices"`` (for kind ``choice``), ``"difficulty"``, ``"subject"`` and ``"year"``.

A single ``"completion"`` string may stand in for a one-element ``"completions"`` list. Graded records are
written one by one as they are graded, and a rerun on the same ``out_path`` resumes after the last one,
like :func:`~reasongym.evaluation.evaluate`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasongym.envs import make, spec
from reasongym.envs.rows import gold_text
from reasongym.errors import ConfigError
from reasongym.evaluation.config import default_eval_split
from reasongym.evaluation.records import (
    SETTINGS_KEY,
    EvalFile,
    env_options,
    grade,
    graded_fields,
    load_records,
    package_version,
    problem_fields,
)
from reasongym.evaluation.report import EvalReport, summarize
from reasongym.verifiers import verify_many
from reasongym.verifiers.base import VERIFY_TIMEOUT_S
from reasongym.verifiers.tolerance import check_tolerance
from reasongym.verifiers.version import verifier_version


def grade_completions(
    jsonl_path: str | os.PathLike[str],
    env_id: str | None = None,
    *,
    ks: Sequence[int] | None = None,
    split: str | None = None,
    out_path: str | os.PathLike[str] | None = None,
    resume: bool = True,
    env_kwargs: Mapping[str, Any] | None = None,
    timeout: float = VERIFY_TIMEOUT_S,
    tolerance: str = "exact",
    progress: bool = True,
    verbose: bool = True,
) -> EvalReport:
    """Grade completions produced elsewhere (no model needed); the input format is in the module docstring.

    Args:
        jsonl_path: The stored completions.
        env_id: The environment the rows index into; None: every row carries ``gold`` and ``kind``.
        ks: k values of pass@k, pass^k and maj@k; None: powers of two up to n, and n.
        split: Split of the environment the rows index into; None as in :func:`evaluate`.
        out_path: Write the graded records here, one by one (the file is locked while it is written).
        resume: Keep the records of ``out_path`` graded from the same input and environment, and grade
            only the rows after them; False overwrites it.
        env_kwargs: Options for ``reasongym.make``.
        timeout: Seconds per symbolic comparison, for rows graded without an environment.
        tolerance: The rounding policy of math answers (:mod:`reasongym.verifiers.tolerance`), recorded.
        progress: Show a progress bar.
        verbose: Print the report table.

    Raises:
        ConfigError: A row lacks what its shape needs, or its gold is null, NaN or empty (naming the line
            and the key); the input's last line is cut off; ``out_path`` holds records of another input.
        ResourceBusyError: Another process is writing ``out_path``.
    """
    from tqdm.auto import tqdm

    rows = _stored_rows(jsonl_path)
    env = _environment(env_id, env_kwargs, check_tolerance(tolerance))
    split = (split or default_eval_split(env)) if env is not None else None
    settings = _settings(jsonl_path, env_id, env, split, timeout, tolerance)
    grader = _RowGrader(env, split, settings, timeout, tolerance)
    with EvalFile(out_path, resume=resume) as file:
        file.check_settings(settings)
        records = _reusable(file.records, rows, out_path)
        file.start()
        todo = list(enumerate(rows, start=1))[len(records) :]
        for line, row in tqdm(todo, desc="grade", unit="problem", disable=not progress):
            record = grader.record(row, line)
            records.append(record)
            file.write(record)
    report = summarize(records, ks=ks, path=out_path)
    if verbose:
        print(report.table())
    return report


@dataclass
class _RowGrader:
    """How one stored row becomes a graded record, which carries the grading's settings.

    In the environment, by the row's index or id; without one, against the gold the row carries.
    """

    env: Any
    split: str | None
    settings: dict[str, Any]
    timeout: float
    tolerance: str
    ids_by_split: dict[str, dict[str, int]] = field(default_factory=dict)

    def record(self, row: Mapping[str, Any], line: int) -> dict[str, Any]:
        """The graded record of ``row`` (input line ``line``, counted from 1)."""
        completions = _completions_of(row, line)
        if self.env is None:
            record = _grade_with_gold(row, completions, line, self.timeout, self.tolerance)
        else:
            assert self.split is not None  # an environment always has the split its rows index into
            env_id = self.settings["env_id"]
            record = _grade_in_env(self.env, row, completions, line, self.split, env_id, self.ids_by_split)
        record[SETTINGS_KEY] = self.settings
        return record


def _stored_rows(jsonl_path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of the completions file; ConfigError when it holds none or its last line is cut off."""
    rows = load_records(jsonl_path, cut_off_last_line="error")
    if not rows:
        raise ConfigError(f"{str(jsonl_path)!r} holds no rows")
    return rows


def _environment(env_id: str | None, env_kwargs: Mapping[str, Any] | None, tolerance: str) -> Any:
    """The environment the rows index into (None without ``env_id``), grading under ``tolerance``."""
    if env_id is None:
        return None
    options = {**({"tolerance": tolerance} if tolerance != "exact" else {}), **dict(env_kwargs or {})}
    return make(env_id, **options).unwrapped


def _settings(
    jsonl_path: str | os.PathLike[str],
    env_id: str | None,
    env: Any,
    split: str | None,
    timeout: float,
    tolerance: str,
) -> dict[str, Any]:
    """What defines a grading of stored completions: input file, environment, options, timeout, tolerance."""
    return {
        "completions": str(Path(jsonl_path).resolve()),
        "env_id": spec(env_id).id if env is not None else None,
        "split": split,
        "env_config": env_options(env) if env is not None else None,
        "timeout": None if env is not None else timeout,
        **({"tolerance": tolerance} if env is None and tolerance != "exact" else {}),
        "reasongym": package_version(),
    }


def _grade_in_env(
    env: Any,
    row: Mapping[str, Any],
    completions: list[str],
    line: int,
    split: str,
    env_id: str,
    ids_by_split: dict[str, dict[str, int]],
) -> dict[str, Any]:
    """The graded record of a row that indexes into ``env`` by ``index`` or by problem ``id``.

    The ids of a split are looked up once and kept in ``ids_by_split``.
    """
    row_split = row.get("split", split)
    if "index" not in row and row_split not in ids_by_split:
        ids_by_split[row_split] = _id_index(env, row_split)
    index = _index_of(row, ids_by_split.get(row_split), line)
    problem = env.problem_at(index, split=row_split)
    header = {"index": index, "env_id": env_id, "split": row_split, "n": len(completions)}
    return {**header, **problem_fields(problem), **grade(env, problem, completions)}


def _reusable(
    records: list[dict[str, Any]], rows: list[dict[str, Any]], out_path: str | os.PathLike[str] | None
) -> list[dict[str, Any]]:
    """The graded records of a resumed ``out_path``: one per input row, in order, for the same completions.

    Raises:
        ConfigError: The output holds more records than the input has rows, or a record's completions are
            not those of its input row (the input changed since).
    """
    if len(records) > len(rows):
        raise ConfigError(
            f"out_path={str(out_path)!r} holds {len(records)} graded records but the input has {len(rows)} "
            "rows; pass another out_path (--out), or resume=False (--no-resume) to overwrite it"
        )
    for line, (record, row) in enumerate(zip(records, rows[: len(records)], strict=True), start=1):
        if record.get("completions") != _completions_of(row, line):
            raise ConfigError(
                f"out_path={str(out_path)!r} holds graded records of other completions (input line {line} "
                "differs); pass another out_path (--out), or resume=False (--no-resume) to overwrite it"
            )
    return list(records)


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
    row: Mapping[str, Any], completions: list[str], line: int, timeout: float, tolerance: str
) -> dict[str, Any]:
    """The graded record of a row that carries its own gold; ``tolerance`` applies to math rows only."""
    if "gold" not in row:
        raise ConfigError(
            f"line {line}: without env_id every row needs 'gold' (and 'kind', default 'math'); keys present: "
            f"{sorted(row)}. Or pass env_id and give 'index' or 'id' per row"
        )
    kind = row.get("kind", "math")
    tolerance = tolerance if kind == "math" else "exact"
    choices = row.get("choices") or None
    gold = gold_text(row["gold"], kind, f"line {line}: 'gold'")  # a null gold is refused, never "None"
    try:
        verdicts = verify_many(completions, gold, kind, choices=choices, timeout=timeout, tolerance=tolerance)
    except ConfigError as exc:  # a kind or choices the verifiers refuse: name the row
        raise ConfigError(f"line {line}: {exc}") from exc
    extras = {key: row.get(key) for key in ("difficulty", "subject", "year")}
    record = {"index": line - 1, "id": str(row.get("id", line - 1)), "kind": kind, "gold": gold}
    graded = {**graded_fields(completions, verdicts), "verifier": verifier_version(kind, tolerance)}
    return {**record, "n": len(completions), **extras, **({"choices": choices} if choices else {}), **graded}


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
