"""MATH (Hendrycks et al., 2021): 12,500 competition problems, and its 500-problem test subset MATH-500.

Accepted layouts (detected from the columns):

- reasongym / shared data and ``HuggingFaceH4/MATH-500``: ``question`` or ``problem``, ``answer``,
  ``solution``, ``subject``, ``level`` (int 1-5), ``id`` or ``unique_id``;
- the Hendrycks release and ``EleutherAI/hendrycks_math`` (one config per subject, concatenated here):
  ``problem, level ("Level 3"), type, solution``. The answer is the content of the last ``\\boxed{}`` of the
  solution; a row whose solution has no usable box is dropped with a warning (two training rows of the
  release have an empty ``\\boxed{}``; the shared data repairs them by hand).

Problems carry ``difficulty`` = level (None for the two "Level ?" rows) and ``metadata["subject"]``; MATH
test rows from the shared data also carry ``metadata["in_math500"]``. MATH's test split contains all of
MATH-500: train on ``train``.

Splits: MATH train 7500, test 5000 (default train); MATH-500 test 500.
"""

from __future__ import annotations

import re
import warnings

from reasongym.envs.benchmarks._common import (
    DataDir,
    Row,
    SplitRoute,
    benchmark_source,
    check_columns,
    clean_text,
    first_present,
    hub_parts,
    row_id,
)
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource
from reasongym.verifiers.extract import extract_boxed

MATH_SUBJECTS = (
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
)
"""The per-subject configs of ``EleutherAI/hendrycks_math``."""

_LAYOUTS = {
    "question/answer": ("question", "answer"),
    "problem/answer": ("problem", "answer"),
    "problem/solution (answer boxed in the solution)": ("problem", "solution"),
}
_LEVEL = re.compile(r"(?:Level\s*)?([1-5])")


def parse_level(value: object) -> int | None:
    """MATH level as an int: ``3`` or ``"Level 3"`` -> 3; ``"Level ?"``, None or anything else -> None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1 <= value <= 5 else None
    match = _LEVEL.fullmatch(str(value).strip()) if value is not None else None
    return int(match.group(1)) if match else None


def _answer_of(row: Row) -> str | None:
    answer = row.get("answer")
    if answer is not None and str(answer).strip():
        return str(answer).strip()
    boxed = extract_boxed(row.get("solution") or "")
    return boxed or None


def _converter(name: str, prefix: str):
    def convert(rows: list[Row], split: str) -> list[Problem]:
        check_columns(name, rows, _LAYOUTS)
        problems, dropped = [], []
        for index, row in enumerate(rows):
            problem_id = row_id(row, prefix, split, index, "id", "unique_id")
            answer = _answer_of(row)
            if answer is None:
                dropped.append(problem_id)
                continue
            metadata = {"subject": first_present(row, "subject", "type")}
            if "in_math500" in row:
                metadata["in_math500"] = bool(row["in_math500"])
            problems.append(
                Problem(
                    question=clean_text(first_present(row, "question", "problem")),
                    answer=answer,
                    answer_type="math",
                    id=problem_id,
                    solution=row.get("solution"),
                    difficulty=parse_level(row.get("level")),
                    metadata=metadata,
                )
            )
        if dropped:
            warnings.warn(
                f"{name}: dropped {len(dropped)} row(s) of split {split!r} whose solution has no usable "
                f"\\boxed{{}} answer: {dropped[:5]}",
                stacklevel=2,
            )
        return problems

    return convert


def math_source(
    data_dir: DataDir = None,
    hub_id: str | None = "EleutherAI/hendrycks_math",
    subjects: tuple[str, ...] = MATH_SUBJECTS,
) -> DatasetSource:
    """MATH as a lazily loaded source with splits ``train`` and ``test``.

    Args:
        data_dir: A folder with ``train.jsonl``/``test.jsonl`` (or .json/.csv/.parquet), one file (serves
            the train split), or a mapping split -> file. None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset with one config per subject; None turns the hub route off.
        subjects: The hub configs loaded and concatenated, in this order.

    Returns:
        The source; nothing is read until a split is used.
    """
    routes = {
        split: SplitRoute(
            f"math/{split}.jsonl", tuple(part for s in subjects for part in hub_parts(hub_id, s, split))
        )
        for split in ("train", "test")
    }
    return benchmark_source(
        "MATH", "math", routes, _converter("MATH", "math"), data_dir, default_split="train"
    )


def math500_source(data_dir: DataDir = None, hub_id: str | None = "HuggingFaceH4/MATH-500") -> DatasetSource:
    """MATH-500 (the PRM800K test subset of MATH) as a lazily loaded source with the split ``test``.

    Args:
        data_dir: A folder with ``test.jsonl`` (or .json/.csv/.parquet), or one file.
            None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset to load when no local file is found; None turns the hub route off.

    Returns:
        The source; nothing is read until the split is used.
    """
    routes = {"test": SplitRoute("math500/test.jsonl", hub_parts(hub_id, None, "test"))}
    convert = _converter("MATH-500", "math500")
    return benchmark_source("MATH-500", "math", routes, convert, data_dir, default_split="test")
