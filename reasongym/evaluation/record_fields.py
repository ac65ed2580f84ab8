"""The one check of a stored record's fields, for every command that reads records.

eval --completions, verify --file, compare, regrade and the resume of an evaluation file all read records
through `reasongym.evaluation.records.load_records`, which runs `check_record` on each: a record is data
from a file anyone can write, so each field it has is checked against its type before any command uses it, and a wrong one is named
by file, line and field (``r.jsonl:2: field 'index' = None is not allowed; expected an integer >= 0``)
instead of failing later as a traceback, or worse, being read as something else (``"no"`` is a true value).

Only the fields a record has are checked: what a command needs and misses is its own message. NaN and
infinity are not integers or booleans, so they fail every field here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reasongym.errors import ConfigError


def _is_int(value: Any, low: int | None = None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and (low is None or value >= low)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(check(item) for item in value)


def _or_none(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _str(value: Any) -> bool:
    return isinstance(value, str)


def _flag(value: Any) -> bool:
    return value is None or isinstance(value, bool)


def _mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


RECORD_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "completions": (_list_of(_str), "a list of strings"),
    "completion": (_str, "a string"),
    "correct": (
        lambda v: _flag(v) or _list_of(_flag)(v),
        "a list of true, false or null (one per completion; a training sample: one of them)",
    ),
    "outcomes": (_list_of(_str), "a list of strings"),
    "outcome": (_str, "a string"),
    "extracted": (lambda v: _or_none(_str)(v) or _list_of(_or_none(_str))(v), "a list of strings or nulls"),
    "reasons": (_list_of(_or_none(_str)), "a list of strings or nulls"),
    "index": (lambda v: _is_int(v, 0), "an integer >= 0"),
    "n": (lambda v: _is_int(v, 0), "an integer >= 0"),
    "split": (_or_none(_str), "a string"),
    "env_id": (_or_none(_str), "a string (an environment id)"),
    "kind": (_str, "a string (an answer kind)"),
    "verifier": (_or_none(_str), "a string (a verifier version such as 'math/v2') or null"),
    "difficulty": (_or_none(_is_int), "an integer or null"),
    "problem_seed": (_or_none(lambda v: _is_int(v, 0)), "an integer >= 0 or null"),
    "seed": (_or_none(lambda v: _is_int(v, 0)), "an integer >= 0 or null"),
    "settings": (_or_none(_mapping), "a mapping of the evaluation's settings, or null"),
    "settings.env_config": (_or_none(_mapping), "a mapping of environment options, or null"),
    "settings.difficulty": (_or_none(_is_int), "an integer or null"),
}
"""Field (dotted: inside ``settings``) -> (check, what is allowed)."""

PER_COMPLETION = ("correct", "outcomes", "extracted", "reasons")
"""Lists that hold one entry per completion of an evaluation record."""


def check_record(record: Mapping[str, Any], where: str) -> None:
    """Raise ConfigError naming ``where`` (``file:line``) and the first field of ``record`` that is not allowed.

    Raises:
        ConfigError: A field of the wrong type or range (`RECORD_FIELDS`), or a per-completion list whose
            length is not that of ``completions``.
    """
    for name, (check, allowed) in RECORD_FIELDS.items():
        parent, _, leaf = name.rpartition(".")
        holder = record.get(parent) if parent else record
        if not isinstance(holder, Mapping) or leaf not in holder:
            continue
        value = holder[leaf]
        if not check(value):
            raise ConfigError(f"{where}: field {name!r} = {_short(value)} is not allowed; expected {allowed}")
    completions = record.get("completions")
    if not isinstance(completions, list):
        return
    for name in PER_COMPLETION:
        value = record.get(name)
        if isinstance(value, list) and len(value) != len(completions):
            raise ConfigError(
                f"{where}: field {name!r} holds {len(value)} entries but 'completions' holds {len(completions)}; "
                "expected one per completion"
            )


def _short(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 3]}..."
