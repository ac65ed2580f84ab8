"""The evaluation file while it is being written: one writer, records of one evaluation, resumable.

`evaluate` and `grade_completions` write through an `EvalFile`:

- **One writer.** The file itself is locked (`reasongym.runs.locks.exclusive_lock`) for as long as it is
  open, so a second evaluation on the same ``out_path`` fails at once instead of interleaving its records.
- **Records of one evaluation.** Every record carries the ``settings`` that define its evaluation (model
  and checkpoint, sampling parameters, seed, length limit, environment options, reasongym version, or the
  input file of stored completions). Resuming into a file whose records were made with other settings
  fails, naming the first field that differs; a file written before records carried their settings
  cannot be checked and is refused too. ``--no-resume`` (``resume=False``) or another ``--out`` starts
  fresh.
- **No temporary files.** A line cut off by a crash is cut away in place (the file is truncated after
  its last complete record), and new records are appended and flushed one by one, so a killed process
  leaves the file it was writing and nothing else. The one exception is the merge at the end of a
  multi-process evaluation (`EvalFile.write_in_order`): the records in problem order are written beside
  the file and renamed over it, so that a crash leaves the old file or the new one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal

from reasongym.envs.problem import Problem
from reasongym.envs.rows import json_value
from reasongym.errors import ConfigError
from reasongym.evaluation.record_fields import check_record
from reasongym.runs.locks import check_free, exclusive_lock
from reasongym.version import __version__

SETTINGS_KEY = "settings"
"""The record field holding what defines the evaluation."""


class EvalFile:
    """An evaluation file opened for writing: locked, its finished records read, ready to append."""

    def __init__(self, path: str | os.PathLike[str] | None, *, resume: bool) -> None:
        """Lock ``path`` (None: records stay in memory) and read its records when resuming.

        Raises:
            ConfigError: ``path`` cannot be written (the message names it), or it is not JSONL.
            ResourceBusyError: Another process is writing ``path``.
        """
        self.path = None if path is None else Path(path)
        self.records: list[dict[str, Any]] = []
        self._keep_bytes = 0
        self._newline_missing = False
        self._lock: Any = None
        self._handle: IO[str] | None = None
        if self.path is None:
            return
        self._created = not self.path.exists()
        if self.path.is_dir():
            raise ConfigError(f"out_path={str(self.path)!r} is a folder; pass the path of a .jsonl file")
        self._new_folders = [p for p in self.path.parents if not p.exists()]  # removed again if it fails
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the folder of out_path={str(self.path)!r}: {exc.strerror}"
            ) from exc
        self._lock = exclusive_lock(
            self.path, what=f"evaluation file {str(self.path)!r}", hint="pass another out_path (--out)"
        )
        self._lock.__enter__()
        if resume:
            self.records, self._keep_bytes, self._newline_missing = _complete_records(self.path)

    @staticmethod
    def check_free(path: str | os.PathLike[str]) -> None:
        """Raise ResourceBusyError at once if another process is writing ``path`` (before a model loads)."""
        check_free(path, what=f"evaluation file {str(path)!r}", hint="pass another out_path (--out)")

    def check_settings(self, settings: Mapping[str, Any]) -> None:
        """Refuse to resume into records made with other ``settings``, naming the first field that differs.

        Raises:
            ConfigError: A record's settings differ from ``settings``, or a record has none.
        """
        for record in self.records:
            theirs = record.get(SETTINGS_KEY)
            if not isinstance(theirs, dict):
                raise ConfigError(
                    f"out_path={str(self.path)!r} holds records that do not say how they were made (written by an "
                    "older reasongym), so they cannot be checked against this evaluation; pass another out_path "
                    "(--out), or resume=False (--no-resume) to overwrite it"
                )
            for key in sorted(set(theirs) | set(settings)):
                if plain(theirs.get(key)) != plain(settings.get(key)):
                    raise ConfigError(
                        f"out_path={str(self.path)!r} holds records of another evaluation: {key}="
                        f"{theirs.get(key)!r} there, {key}={settings.get(key)!r} now; pass another out_path "
                        "(--out) to keep both, or resume=False (--no-resume) to overwrite it"
                    )

    def start(self) -> None:
        """Cut the file back to the kept records (all of them, or none without resume) and open it to append."""
        if self.path is None:
            return
        try:
            self._handle = self.path.open("r+", encoding="utf-8")
            self._handle.truncate(self._keep_bytes)
            self._handle.seek(self._keep_bytes)
            if self._newline_missing:  # a last record whose newline the crash cut off
                self._handle.write("\n")
        except OSError as exc:
            raise ConfigError(f"cannot write out_path={str(self.path)!r}: {exc.strerror}") from exc

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record and flush it."""
        if self._handle is not None:
            self._handle.write(json.dumps(record) + "\n")
            self._handle.flush()

    def write_in_order(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Replace the file's contents with ``records`` (every record of the evaluation, in problem order).

        For the merge of a resumed multi-process evaluation, whose appended records would otherwise follow
        the order the ranks finished in. Written beside the file and renamed over it, so that a crash leaves
        either the old file or the new one, never a part of it.
        """
        if self.path is None:
            return
        if self._handle is not None:
            self._handle.close()
        temporary = self.path.with_name(f".{self.path.name}.merge-{os.getpid()}")
        with temporary.open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(record) + "\n" for record in records)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        self._handle = self.path.open("a", encoding="utf-8")

    def close(self, *, failed: bool = False) -> None:
        """Close and unlock; a file (and folders) this call created and never wrote to is removed when it failed."""
        if self._handle is not None:
            self._handle.close()
        if self._lock is not None:
            if failed and self._created and self.path.stat().st_size == 0:
                self.path.unlink()
                for folder in self._new_folders:  # innermost first
                    if not any(folder.iterdir()):
                        folder.rmdir()
            self._lock.__exit__(None, None, None)
            self._lock = None

    def __enter__(self) -> EvalFile:
        """The file itself."""
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        """Close; on an error, remove the file if this call created it and wrote nothing."""
        self.close(failed=exc_type is not None)


_LATER_OPTIONS = {"tolerance": "exact"}
"""Environment options added after records first stored their settings, with the default they had before."""


def env_options(env: Any) -> dict[str, Any] | None:
    """An environment's options (prompt template, rewards, grading) as JSON, for an evaluation's settings."""
    config = getattr(env, "config", None)
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        return None
    options = json.loads(json.dumps(dataclasses.asdict(config), default=str))
    for name, default in _LATER_OPTIONS.items():
        if options.get(name, default) == default:
            options.pop(name, None)  # records written before the option existed still match
    return options


def package_version() -> str:
    """The reasongym version, for an evaluation's settings (grading rules change with it)."""
    return __version__


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


def _complete_records(path: Path) -> tuple[list[dict[str, Any]], int, bool]:
    """The records of ``path``, the bytes of the lines holding them, and whether the last lacks its newline.

    A last line cut off mid-record by a crash is not kept.
    """
    records = load_records(path, cut_off_last_line="skip")
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return records, len(data), False
    last = data.rfind(b"\n") + 1
    try:
        json.loads(data[last:])
    except ValueError:  # cut off mid-line by a crash: drop it
        return records, last, False
    return records, len(data), True


def plain(value: Any) -> Any:
    """Tuples as lists (recursively), so that settings and configs compare equal to what JSON gave back."""
    if isinstance(value, tuple | list):
        return [plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    return value


def load_records(
    path: str | os.PathLike[str], *, cut_off_last_line: Literal["skip", "warn", "error"] = "warn"
) -> list[dict[str, Any]]:
    """Read a JSONL file of records.

    Args:
        path: The file.
        cut_off_last_line: What to do with a last line that is not valid JSON (a writer killed mid-line):
            ``skip`` it (resuming a file we write), ``warn`` and skip it, or ``error`` (an input file, where
            a lost row must not pass unnoticed).

    Raises:
        ConfigError: The file does not exist or is not UTF-8, a line other than the last is not a JSON
            object, a record's field has the wrong type (`reasongym.evaluation.record_fields`), or (with
            ``error``) the last line is cut off. Each message names the file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"evaluation file {str(path)!r} does not exist")
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{str(path)!r} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start : exc.start + 1]!r}); "
            "JSONL files must be UTF-8"
        ) from exc
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json_value(line, f"{path}:{number}")
        except json.JSONDecodeError as exc:
            if number != len(lines):
                raise ConfigError(f"{path}:{number} is not valid JSON: {exc}") from exc
            message = f"{path}:{number}, the last line, is cut off (not valid JSON: {exc})"
            if cut_off_last_line == "error":
                raise ConfigError(f"{message}; complete or remove it") from exc
            if cut_off_last_line == "warn":
                warnings.warn(f"{message}; it is left out", RuntimeWarning, stacklevel=2)
            break
        if not isinstance(record, dict):
            raise ConfigError(f"{path}:{number} is not a JSON object")
        check_record(record, f"{path}:{number}")
        records.append(record)
    return records


def sample_completions(path: str | os.PathLike[str], count: int, width: int = 400) -> str:
    """The first ``count`` records of an evaluation file as text, as ``reasongym eval --show COUNT`` prints them.

    Each: the problem, its gold answer, the first completion (cut at ``width`` characters), what was extracted
    from it and the verdict's reason; for an evaluation run from Python (``evaluate(..., out_path=PATH)``).

    Example:
        >>> print(sample_completions("evals/aime.jsonl", 2))  # doctest: +SKIP
    """
    blocks = []
    for record in load_records(path)[:count]:
        text = (record.get("completions") or [""])[0]
        cut = f"... ({len(text)} characters)" if len(text) > width else ""
        verdict = (record.get("outcomes") or ["?"])[0]
        reason = (record.get("reasons") or [""])[0]
        blocks.append(
            f"--- problem {record.get('index')} ({record.get('id')}), gold {record.get('gold')!r}\n"
            f"{text[:width]}{cut}\n"
            f"=> extracted {(record.get('extracted') or [None])[0]!r}: {verdict}; {reason}"
        )
    return "\n".join(blocks)
