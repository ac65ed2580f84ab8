"""The judge's verdicts kept across runs (`reasongym.verifiers.judge`, ``JudgeConfig.cache_path``)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any


class CacheFile:
    """A JSONL file of verdicts, ``{"key": str, "correct": true|false}`` a line, kept across runs.

    A line that is not such a row (cut off by a crash, edited by hand, bytes that are not text) is skipped
    with one warning naming the file and the line, never trusted (``"correct": "false"`` is not a verdict)
    and never fatal; a file that cannot be written is a warning too, and the verdicts stay in memory.
    """

    def __init__(self, path: Path) -> None:
        """Nothing is read or written yet."""
        self.path, self._newline_first, self._broken = path, False, False

    def read(self) -> dict[str, bool]:
        """The verdicts in the file (none when there is no file)."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace") if self.path.is_file() else ""
        except OSError as exc:
            warnings.warn(
                f"judge cache {self.path}: cannot be read ({exc}); starting without it",
                RuntimeWarning,
                stacklevel=3,
            )
            return {}
        self._newline_first = bool(text) and not text.endswith("\n")  # a row cut off: the next starts afresh
        verdicts, skipped = {}, []
        for number, line in enumerate(text.splitlines(), start=1):
            row = _cache_row(line)
            if isinstance(row, str):
                skipped.append(f"line {number}: {row}")
            else:
                verdicts[row[0]] = row[1]
        if skipped:
            more = f" ({len(skipped) - 1} more such lines skipped)" if len(skipped) > 1 else ""
            warnings.warn(
                f"judge cache {self.path} {skipped[0]}; skipped{more}", RuntimeWarning, stacklevel=3
            )
        return verdicts

    def append(self, key: str, correct: bool) -> None:
        """Add one verdict (a warning, once, if the file cannot be written)."""
        if self._broken:
            return
        row = ("\n" if self._newline_first else "") + json.dumps({"key": key, "correct": correct}) + "\n"
        try:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(row)
        except OSError as exc:
            self._broken = True
            warnings.warn(
                f"judge cache {self.path}: cannot be written ({exc}); verdicts are kept in memory only",
                RuntimeWarning,
                stacklevel=3,
            )
            return
        self._newline_first = False


def _cache_row(line: str) -> tuple[str, bool] | str:
    """``(key, correct)`` of a cache line, or what is wrong with it."""
    try:
        row: Any = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return f"not a JSON row ({str(exc)[:80]})"
    if (
        not isinstance(row, dict)
        or not isinstance(row.get("key"), str)
        or not isinstance(row.get("correct"), bool)
    ):
        text = line if len(line) <= 80 else line[:77] + "..."
        return f'not a row {{"key": string, "correct": true or false}} ({text})'
    return row["key"], row["correct"]
