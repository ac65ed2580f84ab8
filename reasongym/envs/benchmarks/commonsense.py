"""Commonsense question answering: CommonsenseQA (Talmor et al., 2019) and StrategyQA (Geva et al., 2021).

CommonsenseQA (answer type "choice", five options A-E, answer = the label). Accepted layouts:

- reasongym / shared data: ``id, question, choices [{label, text}], answer``;
- ``tau/commonsense_qa``: ``id, question, question_concept, choices {label: [...], text: [...]}, answerKey``;
- the official ``*_rand_split.jsonl``: ``id, question {stem, choices, question_concept}, answerKey``.

Neither the hub copy's ``test`` split nor the official test file has answer labels, so there is no test
split here; evaluate on ``validation`` (the shared data calls it ``dev``, accepted as an alias).

StrategyQA (answer type "yesno", answer ``"yes"``/``"no"``, solution = the annotated facts as one text).
Accepted layouts: the shared data (``id, question, answer "yes"/"no", facts, ...``) and the official JSON
/ ``ChilleD/StrategyQA`` (``qid, term, description, question, answer (bool), facts, ...``). The shared
train/dev split is the authors' 90%/10% split of the official train set; the hub copy has its own
train/test split, served here as train/validation.

Splits: CommonsenseQA train 9741, validation 1221; StrategyQA train 2061, validation 229 (shared data).
Default split: train.
"""

from __future__ import annotations

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
from reasongym.errors import ConfigError

SPLIT_ALIASES = {"dev": "validation"}
_CSQA_LAYOUTS = {
    "choices + answer/answerKey": ("question", "choices"),
    "official (nested question)": ("question",),
}
_SQA_LAYOUTS = {"question/answer": ("question", "answer")}
_YES = {"yes", "true", "1"}
_NO = {"no", "false", "0"}


def _csqa_choices(row: Row) -> tuple[tuple[str, str], ...]:
    choices = row["choices"]
    if isinstance(choices, dict):  # hub layout: a struct of parallel label/text lists
        return tuple(zip(choices["label"], choices["text"], strict=True))
    return tuple((choice["label"], choice["text"]) for choice in choices)


def _csqa_problem(row: Row, split: str, index: int) -> Problem:
    if isinstance(row["question"], dict):  # official file: question {stem, choices, question_concept}
        row = {**row, **row["question"], "question": row["question"]["stem"]}
    choices = _csqa_choices(row)
    problem_id = row_id(row, "commonsenseqa", split, index, "id")
    answer = str(first_present(row, "answer", "answerKey") or "").strip()
    if not answer:
        raise ConfigError(
            f"CommonsenseQA: row {problem_id!r} of split {split!r} has no answer label; the official and hub "
            "test splits are unlabelled, so evaluate on 'validation'"
        )
    labels = [label for label, _ in choices]
    if answer not in labels:
        raise ConfigError(f"CommonsenseQA: row {problem_id!r} has answer {answer!r}, not one of {labels}")
    concept = row.get("question_concept")
    return Problem(
        question=clean_text(row["question"]),
        answer=answer,
        answer_type="choice",
        id=problem_id,
        choices=choices,
        solution=row.get("solution") or None,
        metadata={"question_concept": concept} if concept else {},
    )


def _csqa_convert(rows: list[Row], split: str) -> list[Problem]:
    check_columns("CommonsenseQA", rows, _CSQA_LAYOUTS)
    return [_csqa_problem(row, split, index) for index, row in enumerate(rows)]


def commonsenseqa_source(
    data_dir: DataDir = None, hub_id: str | None = "tau/commonsense_qa"
) -> DatasetSource:
    """CommonsenseQA as a lazily loaded source with splits ``train`` and ``validation`` (alias ``dev``).

    Args:
        data_dir: A folder with ``train.jsonl`` and ``validation.jsonl`` or ``dev.jsonl`` (or
            .json/.csv/.parquet), one file (serves the train split), or a mapping split -> file.
            None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset to load when no local file is found; None turns the hub route off.

    Returns:
        The source; nothing is read until a split is used.
    """
    routes = {
        "train": SplitRoute("commonsenseqa/train.jsonl", hub_parts(hub_id, None, "train")),
        "validation": SplitRoute("commonsenseqa/dev.jsonl", hub_parts(hub_id, None, "validation"), ("dev",)),
    }
    return benchmark_source(
        "CommonsenseQA", "choice", routes, _csqa_convert, data_dir, "train", split_aliases=SPLIT_ALIASES
    )


def yes_no(value: object, where: str) -> str:
    """``True``/``"yes"``/``"true"`` -> ``"yes"``; ``False``/``"no"``/``"false"`` -> ``"no"``."""
    text = str(value).strip().lower()
    if text in _YES:
        return "yes"
    if text in _NO:
        return "no"
    raise ConfigError(f"StrategyQA: {where} has answer {value!r}; expected a bool or yes/no")


def facts_text(facts: list[str]) -> str:
    """The annotated facts as one text: each ends with a full stop, joined by spaces."""
    sentences = (fact.strip() for fact in facts if fact and fact.strip())
    return " ".join(s if s[-1] in ".?!" else f"{s}." for s in sentences)


def _sqa_problem(row: Row, split: str, index: int) -> Problem:
    problem_id = row_id(row, "strategyqa", split, index, "id", "qid")
    facts = row.get("facts") or []
    metadata = {key: row[key] for key in ("term", "description") if row.get(key)}
    return Problem(
        question=clean_text(row["question"]),
        answer=yes_no(row["answer"], f"row {problem_id!r}"),
        answer_type="yesno",
        id=problem_id,
        solution=row.get("solution") or facts_text(facts) or None,
        metadata=metadata,
    )


def _sqa_convert(rows: list[Row], split: str) -> list[Problem]:
    check_columns("StrategyQA", rows, _SQA_LAYOUTS)
    return [_sqa_problem(row, split, index) for index, row in enumerate(rows)]


def strategyqa_source(data_dir: DataDir = None, hub_id: str | None = "ChilleD/StrategyQA") -> DatasetSource:
    """StrategyQA as a lazily loaded source with splits ``train`` and ``validation`` (alias ``dev``).

    Args:
        data_dir: A folder with ``train.jsonl`` and ``validation.jsonl`` or ``dev.jsonl`` (or
            .json/.csv/.parquet; the official ``train.json``/``dev.json`` work too), one file (serves the
            train split), or a mapping split -> file. None: use ``REASONGYM_DATA_DIR`` or the hub.
        hub_id: Hub dataset to load when no local file is found (its ``test`` split serves
            ``validation``); None turns the hub route off.

    Returns:
        The source; nothing is read until a split is used.
    """
    routes = {
        "train": SplitRoute("strategyqa/train.jsonl", hub_parts(hub_id, None, "train")),
        "validation": SplitRoute("strategyqa/dev.jsonl", hub_parts(hub_id, None, "test"), ("dev",)),
    }
    return benchmark_source(
        "StrategyQA", "yesno", routes, _sqa_convert, data_dir, "train", split_aliases=SPLIT_ALIASES
    )
