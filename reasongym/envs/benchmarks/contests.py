"""AIME and AMC contest problems (problems (c) MAA, texts from the AoPS wiki).

AIME answers are integers 0-999 (answer type "integer"); AMC 2023 answers are the numeric value of the
correct option (answer type "math"; the options themselves are not given).

Accepted AIME layouts (detected from the columns):

- reasongym / shared data: ``id, question, answer, year, contest, problem_number``;
- ``HuggingFaceH4/aime_2024`` and the Qwen2.5-Math file: ``id (int), problem, solution, answer, url``
  (year, contest and number are read from the AoPS url);
- the AIME 1983-2024 CSV (Kaggle, ``di-zhang-fdu/AIME_1983_2024``): ``ID, Year, Problem Number, Question,
  Answer, Part``. Its one non-integer answer, ``"080 or 081 (both were accepted)"``, becomes ``"80"``
  (the raw text is kept in ``metadata["answer_raw"]``).

AIME-v0 has two splits: ``train`` = 1983-2023 (919 problems in the shared data; any row from 2024 on is
dropped from it, since those are the test split) and ``test`` = AIME 2024 (30). ``years=(...)`` keeps only
those years in every split. AMC 2023 accepts the shared layout and ``math-ai/amc23`` / Qwen2.5-Math
(``question`` or ``problem``, ``answer`` as a float: ``27.0`` -> ``"27"``, ``url``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reasongym.envs.benchmarks._common import (
    DataDir,
    Row,
    SplitRoute,
    benchmark_source,
    canonical_number,
    check_columns,
    clean_text,
    first_present,
    hub_parts,
)
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource
from reasongym.errors import ConfigError

TEST_YEAR = 2024
"""AIME-v0's test split is this year's contest; its train split keeps only earlier years."""

_AIME_LAYOUTS = {
    "question/answer": ("question", "answer"),
    "problem/answer": ("problem", "answer"),
    "AIME CSV": ("Question", "Answer", "Year", "Problem Number"),
}
_AMC_LAYOUTS = {"question/answer": ("question", "answer"), "problem/answer": ("problem", "answer")}
_AIME_URL = re.compile(r"(\d{4})_AIME(?:_(I{1,2}))?_Problems/Problem_(\d+)")
_AMC_URL = re.compile(r"(\d{4})_AMC_(\d+[AB]?)_Problems/Problem_(\d+)")
_LEADING_INTEGER = re.compile(r"\s*(\d+)\b")


def _aime_answer(raw: object, where: str) -> str:
    text = str(raw).strip()
    canonical = canonical_number(text)
    if canonical.lstrip("-").isdigit():
        return canonical
    match = _LEADING_INTEGER.match(text)
    if match is None:
        raise ConfigError(f"AIME: {where} has answer {text!r}, which is not an integer")
    return str(int(match.group(1)))


def _aime_facts(row: Row) -> tuple[int | None, str, int | None]:
    """(year, contest, problem number) from whichever columns the layout has."""
    if "Year" in row:  # AIME CSV
        part = str(row.get("Part") or "").strip()
        return int(row["Year"]), f"AIME {part}" if part else "AIME", int(row["Problem Number"])
    match = _AIME_URL.search(str(row.get("url") or ""))
    year = first_present(row, "year") or (match and match.group(1))
    contest = (
        first_present(row, "contest") or (match and match.group(2) and f"AIME {match.group(2)}") or "AIME"
    )
    number = first_present(row, "problem_number") or (match and match.group(3))
    return (int(year) if year else None), contest, (int(number) if number else None)


def _aime_id(row: Row, year: int | None, contest: str, number: int | None, split: str, index: int) -> str:
    own = first_present(row, "ID", "id")
    if isinstance(own, str):
        return own
    if year is None or number is None:
        return f"aime-{split}-{index}"
    part = contest.removeprefix("AIME").strip()
    return f"{year}-{part}-{number}" if part else f"{year}-{number}"


def _aime_problem(row: Row, split: str, index: int) -> Problem:
    year, contest, number = _aime_facts(row)
    problem_id = _aime_id(row, year, contest, number, split, index)
    raw = first_present(row, "Answer", "answer")
    answer = _aime_answer(raw, f"row {problem_id!r}")
    metadata = {"year": year, "contest": contest, "number": number}
    if str(raw).strip() != answer and canonical_number(raw) != answer:
        metadata["answer_raw"] = str(raw)
    if row.get("alt_answers"):
        metadata["alt_answers"] = list(row["alt_answers"])
    return Problem(
        question=clean_text(first_present(row, "question", "problem", "Question")),
        answer=answer,
        answer_type="integer",
        id=problem_id,
        solution=row.get("solution") or None,
        metadata=metadata,
    )


def _aime_converter(years: Sequence[int] | None):
    wanted = None if years is None else {int(year) for year in years}

    def convert(rows: list[Row], split: str) -> list[Problem]:
        check_columns("AIME", rows, _AIME_LAYOUTS)
        problems = [_aime_problem(row, split, index) for index, row in enumerate(rows)]
        present = sorted({p.metadata["year"] for p in problems if p.metadata["year"] is not None})
        if split == "train":
            problems = [p for p in problems if p.metadata["year"] is None or p.metadata["year"] < TEST_YEAR]
        if wanted is not None:
            problems = [p for p in problems if p.metadata["year"] in wanted]
        if not problems:
            raise ConfigError(
                f"AIME: split {split!r} has no problem from years {sorted(wanted or [])} "
                f"(years in its data: {present[0]}-{present[-1]}); pick another split or other years"
                if present
                else f"AIME: split {split!r} has no problem with a known year"
            )
        return problems

    return convert


def _check_years(years: Sequence[int] | None) -> None:
    if years is not None and (
        isinstance(years, (str, int)) or not all(isinstance(y, int) and 1983 <= y <= 2100 for y in years)
    ):
        raise ConfigError(f"AIME: years must be a tuple of ints from 1983 on, e.g. (2024,), got {years!r}")


def aime_source(
    data_dir: DataDir = None,
    years: Sequence[int] | None = None,
    train_hub_id: str | None = "di-zhang-fdu/AIME_1983_2024",
    test_hub_id: str | None = "HuggingFaceH4/aime_2024",
) -> DatasetSource:
    """AIME as a lazily loaded source: ``train`` (1983-2023) and ``test`` (2024).

    Args:
        data_dir: A folder with ``train.jsonl``/``test.jsonl`` (or .json/.csv/.parquet), one file (serves
            the train split), or a mapping split -> file. None: use ``REASONGYM_DATA_DIR`` or the hub.
        years: Keep only problems from these years, e.g. ``(2022, 2023)``; None keeps all.
        train_hub_id: Hub copy of the 1983-2024 CSV (its 2024 rows are dropped); None: no hub route.
        test_hub_id: Hub copy of AIME 2024 (its only split is called "train"); None: no hub route.

    Returns:
        The source; nothing is read until a split is used.
    """
    _check_years(years)
    routes = {
        "train": SplitRoute("aime_1983_2023/train.jsonl", hub_parts(train_hub_id, None, "train")),
        "test": SplitRoute("aime24/test.jsonl", hub_parts(test_hub_id, None, "train")),
    }
    return benchmark_source(
        "AIME", "integer", routes, _aime_converter(years), data_dir, default_split="train"
    )


def aime24_source(data_dir: DataDir = None, hub_id: str | None = "HuggingFaceH4/aime_2024") -> DatasetSource:
    """AIME 2024 (I and II, 30 problems) as a lazily loaded source with the split ``test``.

    Args:
        data_dir: A folder with ``test.jsonl`` (or .json/.csv/.parquet), or one file.
            None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset to load when no local file is found; None turns the hub route off.

    Returns:
        The source; nothing is read until the split is used.
    """
    routes = {"test": SplitRoute("aime24/test.jsonl", hub_parts(hub_id, None, "train"))}
    return benchmark_source(
        "AIME 2024", "integer", routes, _aime_converter(None), data_dir, default_split="test"
    )


def _amc_problem(row: Row, split: str, index: int) -> Problem:
    match = _AMC_URL.search(str(row.get("url") or ""))
    year = first_present(row, "year") or (match and int(match.group(1)))
    contest = first_present(row, "contest") or (match and f"AMC {match.group(2)}")
    number = first_present(row, "problem_number") or (match and int(match.group(3)))
    own = row.get("id")
    if isinstance(own, str) and own:
        problem_id = own
    elif match:
        problem_id = f"{match.group(1)}-AMC{match.group(2)}-{match.group(3)}"
    else:
        problem_id = f"amc23-{split}-{index}"
    return Problem(
        question=clean_text(first_present(row, "question", "problem")),
        answer=canonical_number(row["answer"]),
        answer_type="math",
        id=problem_id,
        solution=row.get("solution") or None,
        metadata={"year": year or None, "contest": contest or None, "number": number or None},
    )


def _amc_convert(rows: list[Row], split: str) -> list[Problem]:
    check_columns("AMC 2023", rows, _AMC_LAYOUTS)
    return [_amc_problem(row, split, index) for index, row in enumerate(rows)]


def amc23_source(data_dir: DataDir = None, hub_id: str | None = "math-ai/amc23") -> DatasetSource:
    """AMC 2023 (40 problems of AMC 12A/12B) as a lazily loaded source with the split ``test``.

    Args:
        data_dir: A folder with ``test.jsonl`` (or .json/.csv/.parquet), or one file.
            None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset to load when no local file is found; None turns the hub route off.

    Returns:
        The source; nothing is read until the split is used.
    """
    routes = {"test": SplitRoute("amc23/test.jsonl", hub_parts(hub_id, None, "test"))}
    return benchmark_source("AMC 2023", "math", routes, _amc_convert, data_dir, default_split="test")
