r"""Rows of problems: reading them from files, and turning a user's rows or generator output into Problems.

Benchmark loaders and ``register_dataset`` read files here, so a malformed JSON line is named by its
line number (counted from 1) everywhere. Every row is checked as it becomes a :class:`Problem` (a dict,
with a question and a gold answer; choices, difficulty and id of the right shape; ids unique in a split),
and an error names the split, the row (counted from 0, as in the generated ids ``<Name>-<split>-<row>``),
the column and what is allowed. A missing or non-finite gold answer is refused, never turned into
the text "None" or "nan", which ``\boxed{None}`` would then match for full reward.

Why this file is long: reading a user's file and checking its rows are one path that every data source
takes (a file that is a FIFO, a CSV field past Python's default limit, a gold that reads as a missing
value); split, each half would need the other's line and column bookkeeping.
"""

from __future__ import annotations

import csv
import decimal
import difflib
import io
import json
import math
import numbers
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, NamedTuple

from reasongym.envs.problem import Problem
from reasongym.envs.sources import check_unique_ids
from reasongym.errors import ConfigError

__all__ = [
    "MISSING_GOLD_TEXTS",
    "Columns",
    "choice_pairs",
    "gold_text",
    "json_value",
    "problem_maker",
    "read_rows",
    "split_tables",
    "table_loader",
    "table_size",
    "utf8_text",
]

DATA_FORMATS = (".jsonl", ".json", ".csv", ".parquet")
_PROBLEM_FIELDS = tuple(f.name for f in fields(Problem))
_GOLD_RULE = "every problem needs a gold answer: a non-empty string or a finite number"
MISSING_GOLD_TEXTS = frozenset(
    {"none", "null", "nan", "-nan", "+nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
)
"""Gold texts (case and outer spaces aside) that are a missing or non-finite value written out (``str(None)``,
a NaN through pandas): refused wherever a gold enters (datasets, generators, benchmark files, stored
completions, ``reasongym verify``), since ``\\boxed{None}`` would match them for full reward."""
_CHOICE_SHAPES = (
    "a list of option texts, (label, text) pairs, {'label': ..., 'text': ...} dicts, a label -> text dict, "
    "or {'label': [...], 'text': [...]}"
)


# --- reading files ---------------------------------------------------------------------------------


def read_rows(path: Path) -> list[Any]:
    """Rows of a local ``.jsonl`` / ``.json`` / ``.csv`` / ``.parquet`` file as dicts.

    A ``.json`` file may hold a list of rows, an object with one list of rows (``{"data": [...]}``), or
    JSON lines (what ``datasets.Dataset.to_json`` writes).

    Raises:
        ConfigError: The path is not a regular file (a folder, a FIFO that would block), the file is not
            UTF-8 text, a CSV line is not valid CSV, or a line of a JSON lines file is not valid JSON, holds an
            integer too long to read or is nested too deeply (the message names the file and line).
    """
    _check_regular_file(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_rows(path)
    if suffix == ".parquet":
        import pyarrow.parquet

        return pyarrow.parquet.read_table(path).to_pylist()
    text = utf8_text(path)
    if suffix == ".json":
        try:
            data = json_value(text, f"{path}")
        except json.JSONDecodeError:
            data = None  # JSON lines under a .json name
        if isinstance(data, list):
            return data
        if isinstance(data, dict):
            tables = [v for v in data.values() if isinstance(v, list) and v and isinstance(v[0], dict)]
            return tables[0] if len(tables) == 1 else [data]  # else: a one-line JSON lines file
    return _json_lines(path, text)


def _check_regular_file(path: Path) -> None:
    """Raise ConfigError unless ``path`` is a regular file: reading a FIFO blocks until a writer comes (forever,
    for a command run by hand), and a folder or device is not a data file."""
    if not path.exists():
        raise ConfigError(f"data file {str(path)!r} does not exist")
    if not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file (a pipe, device or socket)"
        raise ConfigError(f"data file {str(path)!r} is {kind}; expected a {', '.join(DATA_FORMATS)} file")


_CSV_FIELD_LIMIT = 1 << 30
"""Longest CSV field read: Python's csv refuses fields over 131,072 characters by default, which a long
solution or a problem with an embedded table passes; a gigabyte is beyond any row and bounds the memory."""


def _csv_rows(path: Path) -> list[Any]:
    text = utf8_text(path)
    previous = csv.field_size_limit(_CSV_FIELD_LIMIT)  # process-wide: restored below
    try:
        with io.StringIO(text, newline="") as handle:
            reader = csv.DictReader(handle)
            try:
                return list(reader)
            except csv.Error as exc:
                raise ConfigError(f"{path}: line {reader.line_num} is not valid CSV: {exc}") from None
    finally:
        csv.field_size_limit(previous)


def utf8_text(path: Path) -> str:
    """The text of a user's data file, which must be UTF-8.

    Raises:
        ConfigError: It is not, naming the file, the line and the first byte that is not.
    """
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}: line {line} is not UTF-8 text (byte {exc.start} is {data[exc.start : exc.start + 1]!r}); data "
            "files must be UTF-8 (re-save it as UTF-8, e.g. `iconv -f latin1 -t utf-8`)"
        ) from None


def json_value(text: str, where: str) -> Any:
    """``json.loads(text)``, where ``text`` is a line or file of a user's data named by ``where``.

    Raises:
        json.JSONDecodeError: ``text`` is not JSON (the caller words it: a cut-off last line is not an error
            everywhere).
        ConfigError: An integer of more digits than Python reads (``sys.get_int_max_str_digits``), or arrays
            and objects nested deeper than Python's recursion limit: JSON, but no data a row can hold.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        limit = sys.get_int_max_str_digits()
        raise ConfigError(
            f"{where} holds an integer of more than {limit} digits, which Python does not read"
        ) from exc
    except RecursionError:
        raise ConfigError(
            f"{where} holds arrays or objects nested deeper than Python's recursion limit "
            f"({sys.getrecursionlimit()}); a row is a flat object of columns"
        ) from None


def _json_lines(path: Path, text: str) -> list[Any]:
    rows = []
    # split on "\n" only: str.splitlines would also split at U+2028 inside strings (GSM8K has some).
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                rows.append(json_value(line, f"{path}: line {number}"))
            except json.JSONDecodeError as error:
                raise ConfigError(f"{path}: line {number} is not valid JSON ({error.msg})") from error
    return rows


# --- checking values -------------------------------------------------------------------------------


def gold_text(value: Any, answer_type: str, where: str) -> str:
    """A gold value as the verifier's string: booleans as yes/no, integral floats without ``.0``.

    Args:
        value: The gold answer as stored (str, number or bool).
        answer_type: The verifier kind (booleans become "yes"/"no" for "yesno").
        where: What holds the value, for the message (``"split 'test' row 3: column 'a' (the answer)"``).

    Raises:
        ConfigError: The value is None, an empty string, NaN or infinite, the text of one of these
            (`MISSING_GOLD_TEXTS`), or not a string or number.
    """
    if value is None:
        raise ConfigError(f"{where} is missing (None); {_GOLD_RULE}")
    if isinstance(value, bool):
        return ("yes" if value else "no") if answer_type == "yesno" else str(value)
    if isinstance(value, numbers.Integral):
        return str(value)
    if isinstance(value, (numbers.Real, decimal.Decimal)):
        if not _finite(value):
            raise ConfigError(f"{where} is {value!r}, not a finite number; {_GOLD_RULE}")
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value).strip()
    if isinstance(value, numbers.Number):  # a complex number: its text is the answer
        return str(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where} is {_described(value)}; {_GOLD_RULE}")
    if not value.strip():
        raise ConfigError(f"{where} is an empty string; {_GOLD_RULE}")
    if value.strip().casefold() in MISSING_GOLD_TEXTS:
        raise ConfigError(f"{where} is {value!r}, the text of a missing or non-finite value; {_GOLD_RULE}")
    return value.strip()


def _finite(value: numbers.Real | decimal.Decimal) -> bool:
    if isinstance(value, decimal.Decimal):
        return value.is_finite()
    try:
        return math.isfinite(float(value))  # numpy floats too, which are not all subclasses of float
    except OverflowError:  # a Fraction past the float range is still a finite number
        return True


def _id_text(value: Any, where: str) -> str:
    if value is None or isinstance(value, (bool, float)) or not str(value).strip():
        raise ConfigError(f"{where} is {value!r:.60}; an id must be a non-empty string or an integer")
    return str(value).strip()


def _described(value: Any) -> str:
    """``an int (5)``, ``a list (['a'])``: the type and the start of the value."""
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({value!r:.60})"


def _question_text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        shown = _described(value) if value is not None else "missing (None)"
        raise ConfigError(f"{where} is {shown}; a question must be a non-empty string")
    return value


def choice_pairs(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """Options in any accepted shape as ``(label, text)`` pairs (labels A, B, ... for a bare list)."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        if set(value) != {"label", "text"}:
            return tuple((str(lab), str(txt)) for lab, txt in value.items())
        if len(value["label"]) != len(value["text"]):
            raise ConfigError(f"{where} has {len(value['label'])} labels for {len(value['text'])} texts")
        return tuple((str(lab), str(txt)) for lab, txt in zip(value["label"], value["text"], strict=True))
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ConfigError(f"{where} is {_described(value)}; expected {_CHOICE_SHAPES}")
    pairs = []
    for position, item in enumerate(value):
        if isinstance(item, str):
            pairs.append((chr(ord("A") + position), item))
        elif isinstance(item, Sequence) and len(item) == 2:
            pairs.append((str(item[0]), str(item[1])))
        elif isinstance(item, Mapping) and {"label", "text"} <= set(item):
            pairs.append(
                (str(item["label"]), str(item["text"]))
            )  # CommonsenseQA's {"label": "A", "text": ...}
        else:
            raise ConfigError(f"{where}: option {position} is {item!r:.60}; expected {_CHOICE_SHAPES}")
    return tuple(pairs)


def _difficulty(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)  # CSV cells are text
    raise ConfigError(f"{where} is {value!r:.60}; expected a whole number (a level such as 1 to 5) or None")


# --- generator output -> Problem -------------------------------------------------------------------


def problem_maker(name: str, answer_type: str) -> Callable[[Any], Problem]:
    """A function turning what a user generator returns (Problem or dict) into a checked Problem."""
    where = f"generator {name!r}"

    def to_problem(made: Any) -> Problem:
        if isinstance(made, Problem):
            return made
        if not isinstance(made, Mapping) or "question" not in made or "answer" not in made:
            raise ConfigError(
                f"a generator must return a Problem or a dict with 'question' and 'answer', got {made!r:.200}"
            )
        unknown = sorted(set(made) - set(_PROBLEM_FIELDS))
        if unknown:
            raise ConfigError(f"generator dict keys {unknown} are not Problem fields {list(_PROBLEM_FIELDS)}")
        values = dict(made)
        kind = values.setdefault("answer_type", answer_type)
        values["question"] = _question_text(values["question"], f"{where}: the question it returned")
        values["answer"] = gold_text(values["answer"], kind, f"{where}: the answer it returned")
        values["choices"] = choice_pairs(values.get("choices"), f"{where}: the choices it returned")
        values["difficulty"] = _difficulty(values.get("difficulty"), f"{where}: the difficulty it returned")
        return Problem(**values)

    return to_problem


# --- user tables -> Problems -----------------------------------------------------------------------


class Columns(NamedTuple):
    """The columns of a user table that hold each field of a Problem (None: not given)."""

    question: str
    answer: str
    choices: str | None
    solution: str | None
    difficulty: str | None
    id: str | None


def split_tables(data: Any, split: str) -> dict[str, Any]:
    """``data`` as split name -> one table (list of dicts, Dataset, or path); empty tables are refused."""
    if isinstance(data, Mapping):
        if not data:
            raise ConfigError("register_dataset: the data mapping has no splits")
        tables = {str(name): table for name, table in data.items()}
    else:
        tables = {split: data}
    for name, table in tables.items():
        if isinstance(table, (str, os.PathLike)):
            path = Path(table)
            if path.suffix.lower() not in DATA_FORMATS:
                raise ConfigError(
                    f"register_dataset: {str(path)!r} (split {name!r}) is not one of {sorted(DATA_FORMATS)}"
                )
            if not path.exists():
                raise ConfigError(f"register_dataset: file {str(path)!r} (split {name!r}) does not exist")
            if not path.is_file():
                raise ConfigError(
                    f"register_dataset: {str(path)!r} (split {name!r}) is a folder, not a file; give one "
                    f"{'/'.join(DATA_FORMATS)} file per split (a mapping split name -> file)"
                )
        elif not (isinstance(table, Sequence) or hasattr(table, "column_names")):
            raise ConfigError(
                f"register_dataset: split {name!r} is a {type(table).__name__}; expected a datasets.Dataset, "
                "a list of dicts, or a path to a .jsonl/.json/.csv/.parquet file"
            )
        elif len(table) == 0:
            raise ConfigError(f"register_dataset: split {name!r} has no rows")
    return tables


def table_size(table: Any) -> str:
    """The size of a table for ``list_envs``: its row count, or the file name of a file."""
    return f"file {Path(table).name}" if isinstance(table, (str, os.PathLike)) else str(len(table))


def _read_table(table: Any) -> list[Any]:
    if isinstance(table, (str, os.PathLike)):
        path = Path(table)
        if path.suffix.lower() in (".jsonl", ".json"):
            return read_rows(path)  # names the line of a malformed JSON line
        if path.suffix.lower() == ".csv":
            utf8_text(path)  # datasets would fail deep inside with a DatasetGenerationError
        import datasets  # heavy: only when a user file is actually read

        return datasets.load_dataset(path.suffix.lower()[1:], data_files=str(table), split="train").to_list()
    return table.to_list() if hasattr(table, "to_list") else list(table)


def _check_columns(split: str, present: Sequence[str], columns: Columns) -> None:
    for role, column in columns._asdict().items():
        if column is not None and column not in present:
            near = difflib.get_close_matches(column, list(present), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ConfigError(
                f"register_dataset: {role} column {column!r} not found in split {split!r}; "
                f"columns present: {sorted(present)}{hint}"
            )


def table_loader(
    name: str, split: str, table: Any, answer_type: str, columns: Columns
) -> Callable[[], list[Problem]]:
    """A zero-argument loader for one split.

    A list of rows is converted (so checked) right away; a Dataset has its columns checked right
    away and its rows at first use; a file is read and checked at first use.
    """
    if hasattr(table, "column_names"):
        _check_columns(split, table.column_names, columns)

    def load() -> list[Problem]:
        rows = _read_table(table)
        if not rows:
            raise ConfigError(f"register_dataset: split {split!r} ({table_size(table)}) has no rows")
        if isinstance(rows[0], Mapping):
            _check_columns(split, list(rows[0]), columns)
        problems = [_row_problem(name, split, i, row, answer_type, columns) for i, row in enumerate(rows)]
        check_unique_ids("register_dataset", split, problems)
        return problems

    if isinstance(table, Sequence) and not isinstance(table, str):
        converted = load()
        return lambda: converted
    return load


def _row_problem(name: str, split: str, index: int, row: Any, answer_type: str, columns: Columns) -> Problem:
    where = f"register_dataset: split {split!r} row {index}"
    if not isinstance(row, Mapping):
        raise ConfigError(f"{where} is {_described(row)}; every row must be a dict of column -> value")
    for role, column in (("question", columns.question), ("answer", columns.answer), ("id", columns.id)):
        if column is not None and column not in row:
            raise ConfigError(f"{where} has no {role} column {column!r}; its columns: {sorted(row)}")
    where_of = {role: f"{where}: column {name_!r} (the {role})" for role, name_ in columns._asdict().items()}
    solution = row.get(columns.solution) if columns.solution else None
    return Problem(
        question=_question_text(row[columns.question], where_of["question"]),
        answer=gold_text(row[columns.answer], answer_type, where_of["answer"]),
        answer_type=answer_type,
        id=_id_text(row[columns.id], where_of["id"]) if columns.id else f"{name}-{split}-{index}",
        choices=choice_pairs(row.get(columns.choices), where_of["choices"]) if columns.choices else (),
        solution=None if solution is None else str(solution),
        difficulty=_difficulty(row.get(columns.difficulty), where_of["difficulty"])
        if columns.difficulty
        else None,
        metadata={
            k: v for k, v in row.items() if k not in columns and isinstance(v, (str, int, float, bool))
        },
    )
