"""GSM8K: 8.5k grade-school math word problems with integer answers (Cobbe et al., 2021).

Answer type "math": answers are integers but can be negative or above 999, outside the "integer" kind.

Accepted layouts (detected from the columns):

- reasongym / shared data: ``id, question, answer, solution`` (answer already final, e.g. ``"1080"``);
- ``openai/gsm8k`` and the original release: ``question, answer`` where answer is
  ``"<rationale>\\n#### <final>"``; the final answer loses its thousands separators (``1,080`` -> ``1080``)
  and the rationale becomes the solution. Rows without ids get ``gsm8k-<split>-NNNN`` (NNNN = row number),
  the id scheme of the shared data.

Splits: train 7473, test 1319. Default split: train.
"""

from __future__ import annotations

from reasongym.envs.benchmarks._common import (
    DataDir,
    Row,
    SplitRoute,
    benchmark_source,
    canonical_number,
    check_columns,
    clean_text,
    hub_parts,
)
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource
from reasongym.errors import ConfigError

_LAYOUTS = {"question/answer": ("question", "answer")}
_MARKER = "####"


def split_rationale(answer: str) -> tuple[str | None, str]:
    """``"rationale\\n#### 1,080"`` -> ``("rationale", "1080")``; an answer without ``####`` is final."""
    if _MARKER not in answer:
        return None, canonical_number(answer)
    rationale, final = answer.rsplit(_MARKER, 1)
    return rationale.strip(), canonical_number(final)


def _convert(rows: list[Row], split: str) -> list[Problem]:
    check_columns("GSM8K", rows, _LAYOUTS)
    problems = []
    for index, row in enumerate(rows):
        rationale, answer = split_rationale(str(row["answer"]))
        if not answer:
            raise ConfigError(f"GSM8K: row {index} of split {split!r} has an empty final answer")
        problems.append(
            Problem(
                question=clean_text(row["question"]),
                answer=answer,
                answer_type="math",
                id=str(row.get("id") or f"gsm8k-{split}-{index:04d}"),
                solution=row.get("solution") or rationale,
            )
        )
    return problems


def source(
    data_dir: DataDir = None, hub_id: str | None = "openai/gsm8k", config: str = "main"
) -> DatasetSource:
    """GSM8K as a lazily loaded source with splits ``train`` and ``test``.

    Args:
        data_dir: A folder with ``train.jsonl``/``test.jsonl`` (or .json/.csv/.parquet), one file (serves
            the train split), or a mapping split -> file. None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset to load when no local file is found; None turns the hub route off.
        config: Hub config: ``"main"`` or ``"socratic"``.

    Returns:
        The source; nothing is read until a split is used.
    """
    routes = {
        split: SplitRoute(f"gsm8k/{split}.jsonl", hub_parts(hub_id, config, split))
        for split in ("train", "test")
    }
    return benchmark_source("GSM8K", "math", routes, _convert, data_dir, default_split="train")
