"""A rule of a commitment stage: one row with a name, what it matches, and why it is there.

The stages that decide what a completion commits to (:mod:`~reasongym.verifiers.segment`,
:mod:`~reasongym.verifiers.claims`, :mod:`~reasongym.verifiers.commitment`) keep their rules as tables of
:class:`Rule` rows rather than as branches of an if-chain: adding a rule is adding a row (and a test row
that needs it). Each stage's docstring lists its rows by name, and ``tests/verifiers/test_stages.py``
checks that every row is listed there, so the prose and the table cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Rule", "earliest", "rule_names", "union"]


@dataclass(frozen=True)
class Rule:
    """One row of a stage's table.

    Attributes:
        name: A short name, as the stage's docstring lists it.
        pattern: What the rule matches (no nested unbounded quantifiers: every scan stays linear).
        why: One sentence: the completions that made the rule necessary.
        hints: Lower-case words one of which every match holds; a text that holds none is not scanned
            for the row (empty: always scanned). Scanning 17 languages' phrases costs one substring test
            each where the language does not occur.
    """

    name: str
    pattern: re.Pattern[str]
    why: str
    hints: tuple[str, ...] = ()

    def may_match(self, lowered: str) -> bool:
        """Whether a text (given lower-cased) may hold a match: it holds one of the hints, or there are none."""
        return not self.hints or any(map(lowered.__contains__, self.hints))


def union(rules: Iterable[Rule], flags: int = 0) -> re.Pattern[str]:
    """One pattern that matches where any of the rules does (each row's own flags kept inline)."""
    parts = []
    for rule in rules:
        inline = "i" if rule.pattern.flags & re.IGNORECASE else ""
        inline += "m" if rule.pattern.flags & re.MULTILINE else ""
        parts.append(f"(?{inline}:{rule.pattern.pattern})" if inline else f"(?:{rule.pattern.pattern})")
    return re.compile("|".join(parts), flags)


def earliest(
    rules: Iterable[Rule], text: str, start: int = 0, end: int | None = None
) -> tuple[Rule, re.Match[str]] | None:
    """The row whose match starts first in ``text[start:end]`` (ties: the earlier row), with its match."""
    stop = len(text) if end is None else end
    best: tuple[Rule, re.Match[str]] | None = None
    for rule in rules:
        found = rule.pattern.search(text, start, stop)
        if found is not None and (best is None or found.start() < best[1].start()):
            best = (rule, found)
    return best


def rule_names(rules: Iterable[Rule]) -> list[str]:
    """The names of a table's rows, in order."""
    return [rule.name for rule in rules]
