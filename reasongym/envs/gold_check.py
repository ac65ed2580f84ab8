"""Golds that no answer can match: found when a split loads, reported, and left in, dropped or refused.

A gold the verifier cannot read (:func:`unreadable_golds`: for math, no form that
:func:`reasongym.verifiers.golds.readable_gold` tries parses; for other kinds, the gold graded against
itself is ungradable) makes every answer to its problem ungradable: reward 0 whatever the model writes. A
split is checked once, when it is first loaded (a dataset source's rows, ``register_dataset``'s rows,
``reasongym data``'s files), and what happens to such rows is the source's policy:

- ``"warn"`` (the default): keep them, and warn once per split with the count and the first examples;
- ``"drop"``: leave them out of the split, with the same warning (the split's indices shift);
- ``"error"``: refuse the split with a ConfigError naming the rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reasongym.envs.problem import Problem
from reasongym.errors import ConfigError
from reasongym.verifiers import verify
from reasongym.verifiers.golds import readable_gold

__all__ = [
    "GOLD_POLICIES",
    "UnreadableGold",
    "UnreadableGoldWarning",
    "check_gold_policy",
    "checked_golds",
    "gold_report",
    "unreadable_golds",
]

GOLD_POLICIES = ("warn", "drop", "error")
"""What a source does with rows whose gold its verifier cannot read."""
_EXAMPLES = 3


class UnreadableGoldWarning(UserWarning):
    """Some golds of a split cannot be read by its verifier: answers to those problems are never paid."""


@dataclass(frozen=True)
class UnreadableGold:
    """A row whose gold answer its kind cannot read.

    Attributes:
        index: The row's position in its split.
        gold: The gold as written.
        reason: What the kind said.
    """

    index: int
    gold: str
    reason: str


def unreadable_golds(
    kind: str, golds: Iterable[str], choices: Sequence[object] | None = None
) -> list[UnreadableGold]:
    """The rows of a split whose gold the kind cannot grade (every answer to them would be ungradable).

    Args:
        kind: The verifier kind of the split.
        golds: The split's gold answers, in row order.
        choices: For kind "choice", each row's options (in row order); else None.

    Returns:
        One :class:`UnreadableGold` per such row, in row order.
    """
    found = []
    for index, gold in enumerate(golds):
        if kind == "math":  # reading is the whole question for math, and a tenth of the cost of grading
            if readable_gold(gold) is None:
                found.append(UnreadableGold(index, gold, "no form of it is read by the math grammar"))
            continue
        options = {"choices": choices[index]} if choices is not None else {}
        verdict = verify(gold, gold, kind, **options)
        if verdict.correct is None and verdict.outcome.value != "timeout":
            found.append(UnreadableGold(index, gold, verdict.reason))
    return found


def check_gold_policy(where: str, policy: object) -> str:
    """``policy`` when it is one of :data:`GOLD_POLICIES`, else ConfigError naming ``where`` and the value."""
    if policy not in GOLD_POLICIES:
        raise ConfigError(
            f"{where}: unreadable_golds={policy!r} is not a policy; valid: {', '.join(GOLD_POLICIES)}"
        )
    return str(policy)


def _unreadable(problems: Sequence[Problem]) -> list[UnreadableGold]:
    """The rows of ``problems`` whose gold their own kind cannot read, in row order."""
    found: list[UnreadableGold] = []
    for kind in sorted({problem.answer_type for problem in problems}):
        positions = [i for i, problem in enumerate(problems) if problem.answer_type == kind]
        golds = [problems[i].answer for i in positions]
        choices = [tuple(problems[i].choices) for i in positions] if kind == "choice" else None
        if kind == "choice" and not any(choices or ()):
            continue  # options come with the prompt elsewhere: a label alone has nothing to be read against
        for bad in unreadable_golds(kind, golds, choices):
            found.append(UnreadableGold(positions[bad.index], bad.gold, bad.reason))
    return sorted(found, key=lambda bad: bad.index)


def gold_report(name: str, split: str, problems: Sequence[Problem]) -> str | None:
    """One line on the unreadable golds of a split (count and first examples), or None when all read."""
    found = _unreadable(problems)
    return _report(name, split, problems, found) if found else None


def _report(name: str, split: str, problems: Sequence[Problem], found: list[UnreadableGold]) -> str:
    examples = "; ".join(
        f"row {bad.index} ({problems[bad.index].id}): {bad.gold!r}" for bad in found[:_EXAMPLES]
    )
    more = f" and {len(found) - _EXAMPLES} more" if len(found) > _EXAMPLES else ""
    return (
        f"{name}: {len(found)} of {len(problems)} golds of split {split!r} cannot be read by their verifier, "
        f"so no answer to them is ever paid: {examples}{more}"
    )


def checked_golds(name: str, split: str, problems: Sequence[Problem], policy: str) -> Sequence[Problem]:
    """``problems`` under the unreadable-gold ``policy`` (module docstring): kept, dropped, or refused."""
    found = _unreadable(problems)
    if not found:
        return problems
    report = _report(name, split, problems, found)
    if policy == "error":
        raise ConfigError(f"{report}. Fix those golds, or register with unreadable_golds='drop' or 'warn'")
    if policy == "drop":
        unreadable = {bad.index for bad in found}
        warnings.warn(f"{report}; left out of the split", UnreadableGoldWarning, stacklevel=3)
        return [problem for i, problem in enumerate(problems) if i not in unreadable]
    warnings.warn(report, UnreadableGoldWarning, stacklevel=3)
    return problems
