"""Issue 36 item 15: a verdict's reason is written for a person, in the completion's own notation.

Two defects had one cause each: a token that could not be placed was named by its node's repr
(``unexpected num Num(mantissa=2, exp10=0, decimals=None)``), and two different huge values were both shown
by six significant digits (``1.000000e+400 is not 1.000000e+400``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reasongym.verifiers import verify

SETS = sorted((Path(__file__).resolve().parents[2] / "benchmarks").glob("independent_set_*.jsonl"))
INTERNALS = re.compile(r"\w+\(\w+=|Num\(|Mul\(|Fraction\(|mpf\(|<\w+ object")
"""What a repr of the grammar's nodes, fractions or mpmath numbers looks like inside a reason."""


@pytest.mark.parametrize(
    ("completion", "gold", "named"),
    [
        (r"\boxed{x 2}", "2", "unexpected number '2'"),
        (r"\boxed{1.5 2.25}", "2", "unexpected number '2.25'"),
        (r"\boxed{x 2e5}", "2", "unexpected number '2e5'"),
        (r"\boxed{x 0.(3)}", "2", "unexpected number '1/3'"),
        (r"\boxed{x 3:05}", "2", "unexpected time or ratio '3:05'"),
    ],
)
def test_an_unplaced_token_is_named_as_it_was_written(completion: str, gold: str, named: str) -> None:
    reason = verify(completion, gold, "math").reason
    assert named in reason
    assert not INTERNALS.search(reason), reason


@pytest.mark.parametrize(
    ("completion", "gold", "difference"),
    [
        (r"\boxed{10^{400}+1}", r"10^{400}", "1"),
        (r"\boxed{2^{1000}+1}", r"2^{1000}", "1"),
        (r"\boxed{10^{400}}", r"10^{400}+1", "-1"),
    ],
)
def test_values_that_print_alike_are_told_apart_by_their_difference(
    completion: str, gold: str, difference: str
) -> None:
    result = verify(completion, gold, "math")
    assert result.correct is False
    assert f"differ by {difference} " in result.reason
    assert not _contradicts_itself(result.reason), result.reason


def test_small_values_keep_the_plain_form() -> None:
    assert verify(r"\boxed{7}", "8", "math").reason == "7 is not 8"


@pytest.mark.skipif(not SETS, reason="the independent sets live in benchmarks/")
def test_no_reason_on_the_independent_sets_shows_internals_or_contradicts_itself() -> None:
    """Cases nobody wrote for this test: every completion of the independent sets, graded as stored."""
    bad = []
    for path in SETS:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            options = {"choices": row["choices"]} if row.get("choices") else {}
            reason = verify(row["completion"], row["gold"], row["kind"], **options).reason
            if INTERNALS.search(reason) or _contradicts_itself(reason):
                bad.append((path.name, row.get("id"), reason))
    assert bad == []


def _contradicts_itself(reason: str) -> bool:
    match = re.search(r"(\S+) is not (\S+)$", reason)
    return bool(match) and match.group(1) == match.group(2)
