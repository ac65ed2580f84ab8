"""SVAMP (Patel et al., 2021): 1000 one-unknown arithmetic word problems built by varying ASDiv-A ones.

Accepted layouts (detected from the columns):

- reasongym / shared data: ``id, question, answer, equation, type, body, question_only``;
- the original ``SVAMP.json`` and ``ChilleD/SVAMP``: ``ID, Body, Question, Equation, Answer (float), Type``.
  The question is the body and the question joined the way the shared data joins them: with ``", "``
  when the body has no final punctuation (``"... on each pack, How much ..."``), else with a space.

Answers are canonical numbers (``51.0`` -> ``"51"``; all SVAMP answers are integers), answer type "math".
SVAMP is an evaluation set: one split, ``test`` (1000). The hub copy splits it 700/300 into train/test;
both are concatenated here into the full 1000-problem test split.
"""

from __future__ import annotations

from reasongym.envs.benchmarks._common import (
    DataDir,
    Row,
    SplitRoute,
    benchmark_source,
    canonical_number,
    check_columns,
    first_present,
    hub_parts,
    row_id,
)
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource

_LAYOUTS = {"question/answer": ("question", "answer"), "Body/Question/Answer": ("Body", "Question", "Answer")}


def join_body(body: str, question: str) -> str:
    """Body and question as one text; a body without final punctuation is continued with ``", "``."""
    body, question = body.strip(), question.strip()
    return f"{body} {question}" if body[-1:] in ".?!" else f"{body}, {question}"


def _problem(row: Row, split: str, index: int) -> Problem:
    if "Body" in row:
        question = join_body(row["Body"], row["Question"])
        metadata = {"equation": row.get("Equation"), "type": row.get("Type")}
    else:
        question = row["question"]
        metadata = {"equation": row.get("equation"), "type": row.get("type")}
    return Problem(
        question=question,
        answer=canonical_number(first_present(row, "Answer", "answer")),
        answer_type="math",
        id=row_id(row, "svamp", split, index, "id", "ID"),
        solution=row.get("solution") or None,
        metadata=metadata,
    )


def _convert(rows: list[Row], split: str) -> list[Problem]:
    check_columns("SVAMP", rows, _LAYOUTS)
    return [_problem(row, split, index) for index, row in enumerate(rows)]


def source(data_dir: DataDir = None, hub_id: str | None = "ChilleD/SVAMP") -> DatasetSource:
    """SVAMP as a lazily loaded source with the split ``test``.

    Args:
        data_dir: A folder with ``test.jsonl`` (or .json/.csv/.parquet), or one file (``SVAMP.json`` works).
            None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset whose train and test splits together form the test split; None turns the
            hub route off.

    Returns:
        The source; nothing is read until the split is used.
    """
    routes = {"test": SplitRoute("svamp/test.jsonl", hub_parts(hub_id, None, "train", "test"))}
    return benchmark_source("SVAMP", "math", routes, _convert, data_dir, default_split="test")
