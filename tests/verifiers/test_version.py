"""Declared verifier versions are forced up by any change of a pinned verdict (``reasongym.verifiers.version``).

``fixtures/pinned_verdicts.jsonl`` holds 2,407 real verdicts: per row a kind, the gold (and choices), a
completion, where it came from (the verifier tests' own calls, issue 23's independent sets, the grader
suites, SmolLM2's stored completions, written probes), and ``verdicts``: the verdict under each version of
the kind's rules at which it changed, e.g. ``{"1": "unparseable", "2": "wrong"}``. A verdict is the outcome
(``"correct"``, ``"wrong"``, ``"unparseable"``, ``"refused"``; ``" (ungradable)"`` when ``correct`` is None);
for ``tagged`` it is the extraction's ``[method, answer]``. The table was built by grading the same
completions with the rules of v1 (commit 63ede07) and of v2 (issue 23 merged); every row where they differ
is in it, with a stratified sample of the rest.

The rules enforced here:

- today's verdict of every row is its last pinned one;
- a kind's declared version is the newest version named in its rows (a raise is witnessed by the rows
  whose verdict it changed), and every row's versions increase, each entry differing from the one before.

So a change of rules that changes a pinned verdict fails until the version is raised and the table
re-pinned: raise ``VERIFIER_VERSIONS[kind]`` in ``reasongym/verifiers/version.py``, then run
``python tests/verifiers/test_version.py --repin`` (it appends today's verdict under the declared version to
every changed row and refuses while the version is not raised).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from reasongym.verifiers import verify
from reasongym.verifiers.tagged import extract_tagged_answer
from reasongym.verifiers.version import VERIFIER_VERSIONS, verifier_version

TABLE = Path(__file__).with_name("fixtures") / "pinned_verdicts.jsonl"
Row = dict[str, Any]
Grade = Callable[[Row], Any]


def load_table(path: Path = TABLE) -> list[Row]:
    """The pinned rows, in file order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def todays_verdict(row: Row) -> Any:
    """The verdict of ``row`` under today's rules, in the table's notation (module docstring)."""
    if row["kind"] == "tagged":
        found = extract_tagged_answer(row["completion"])
        return [found.method, found.answer]
    verdict = verify(row["completion"], row["gold"], row["kind"], **row.get("options", {}))
    return verdict.outcome.value + ("" if verdict.correct is not None else " (ungradable)")


def last_pinned(row: Row) -> tuple[int, Any]:
    """The newest (version, verdict) of a row."""
    version = max(map(int, row["verdicts"]))
    return version, row["verdicts"][str(version)]


def changed_rows(rows: Iterable[Row], grade: Grade = todays_verdict) -> list[tuple[Row, Any]]:
    """Each row whose verdict today differs from its last pinned one, with today's verdict."""
    return [(row, now) for row in rows if (now := grade(row)) != last_pinned(row)[1]]


def history_problems(rows: Iterable[Row], declared: dict[str, int]) -> list[str]:
    """What is wrong with the pinned histories against the declared versions (empty when all holds)."""
    problems, newest = [], defaultdict(int)
    for number, row in enumerate(rows, start=1):
        kind = row["kind"]
        versions = sorted(map(int, row["verdicts"]))
        newest[kind] = max(newest[kind], versions[-1])
        if kind not in declared:
            problems.append(f"row {number}: kind {kind!r} has no declared version")
        elif versions[-1] > declared[kind]:
            problems.append(
                f"row {number}: pinned under {kind} v{versions[-1]}, past the declared v{declared[kind]}"
            )
        same = [v for v, w in pairwise(versions) if row["verdicts"][str(v)] == row["verdicts"][str(w)]]
        if same:
            problems.append(f"row {number}: the verdict under v{same[0]} is pinned again unchanged")
    for kind, version in declared.items():
        if newest[kind] != version:
            problems.append(
                f"{kind} is declared v{version} but its newest pinned verdict is under v{newest[kind]}: "
                "a raise is witnessed by the verdicts it changed (re-pin), and no row may run ahead"
            )
    return problems


def _describe(kind: str, changes: list[tuple[Row, Any]]) -> str:
    lines = [f"{len(changes)} pinned verdicts of kind {kind!r} changed (declared {verifier_version(kind)}):"]
    for row, now in changes[:8]:
        version, pinned = last_pinned(row)
        gold = f"gold {row['gold']!r:.40}, " if "gold" in row else ""
        lines.append(
            f"  {gold}completion ...{row['completion'][-70:]!r}: v{version} {pinned!r}, today {now!r}"
        )
    lines.append(
        f"Raise VERIFIER_VERSIONS[{kind!r}] to {VERIFIER_VERSIONS[kind] + 1} in reasongym/verifiers/version.py "
        "(say why in its history), then run `python tests/verifiers/test_version.py --repin`."
    )
    return "\n".join(lines)


def test_the_table_covers_every_declared_kind_and_its_histories_hold() -> None:
    rows = load_table()
    assert {row["kind"] for row in rows} == set(VERIFIER_VERSIONS)
    assert history_problems(rows, VERIFIER_VERSIONS) == []


@pytest.mark.parametrize("kind", sorted(VERIFIER_VERSIONS))
def test_todays_verdicts_are_the_pinned_ones(kind: str) -> None:
    changes = changed_rows(row for row in load_table() if row["kind"] == kind)
    assert not changes, _describe(kind, changes)


def _row(completion: str, verdicts: dict[str, Any]) -> Row:
    return {"kind": "math", "gold": "3", "completion": completion, "verdicts": verdicts}


def test_a_changed_verdict_fails_until_the_version_is_raised_and_repinned() -> None:
    rows = [_row("The answer is 3.", {"1": "wrong", "2": "correct"}), _row("3, I think.", {"1": "correct"})]
    new_rules: Grade = lambda row: "correct" if row["completion"] == "The answer is 3." else "wrong"  # noqa: E731
    assert [row for row, _ in changed_rows(rows, new_rules)] == [rows[1]]
    with pytest.raises(SystemExit, match=r"raise VERIFIER_VERSIONS\['math'\] past 1 first"):
        repin(rows, {"math": 1}, new_rules)  # re-pinning under the version it was pinned under is refused
    assert repin(rows, {"math": 3}, new_rules) == 1
    assert rows[1]["verdicts"] == {"1": "correct", "3": "wrong"}
    assert rows[0]["verdicts"] == {"1": "wrong", "2": "correct"}  # unchanged rows keep their history
    assert changed_rows(rows, new_rules) == [] and history_problems(rows, {"math": 3}) == []
    assert history_problems(rows, {"math": 2})[0] == "row 2: pinned under math v3, past the declared v2"
    assert history_problems(rows, {"math": 4}) == [  # a raise that no pinned verdict witnesses
        "math is declared v4 but its newest pinned verdict is under v3: a raise is witnessed by the "
        "verdicts it changed (re-pin), and no row may run ahead"
    ]
    rows[1]["verdicts"]["3"] = "correct"  # hand-edited back to the verdict it had
    assert history_problems(rows, {"math": 3}) == ["row 2: the verdict under v1 is pinned again unchanged"]


def test_versions_are_tagged_by_kind() -> None:
    assert verifier_version("math") == f"math/v{VERIFIER_VERSIONS['math']}"
    assert verifier_version("judge") == "judge"  # graded elsewhere: the judge records its own version


def repin(rows: list[Row], declared: dict[str, int], grade: Grade = todays_verdict) -> int:
    """Append today's verdict under the declared version to each changed row; the count of rows changed.

    Raises:
        SystemExit: A changed row's newest pinned version is already the declared one (raise it first).
    """
    changes = changed_rows(rows, grade)
    for row, now in changes:
        version, _ = last_pinned(row)
        if version >= declared[row["kind"]]:
            raise SystemExit(
                f"a {row['kind']} verdict changed under v{version}: "
                f"raise VERIFIER_VERSIONS[{row['kind']!r}] past {version} first"
            )
        row["verdicts"][str(declared[row["kind"]])] = now
    return len(changes)


if __name__ == "__main__" and sys.argv[1:] == ["--repin"]:
    table = load_table()
    count = repin(table, VERIFIER_VERSIONS)
    TABLE.write_text("".join(json.dumps(row) + "\n" for row in table), encoding="utf-8")
    print(f"re-pinned {count} changed verdicts in {TABLE}")
