"""Issue 50, item 5: the verifier's red team. Wrong answers in the surface form of right ones are never paid.

Every correct row we have (the clear, right cases of the five independent sets in ``benchmarks/`` and the
pinned verdicts that are correct today) is turned into wrong completions of the same shape by
:func:`reasongym.verifiers.red_team.wrong_answers` (a value moved, a sign flipped, a revision to a wrong value,
a hedge, a mention of the gold beside a wrong answer, a new turn answering with the gold, another option's
letter beside the right text, the opposite verdict). The first test tries every form of every row; the
second draws thousands more with other offsets and other ways of writing the wrong value. A failure names
the form and the completion: either the verifier pays a form nobody listed (fix a stage), or the form
is not wrong after all (fix the generator, and say why).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasongym.verifiers import verify
from reasongym.verifiers.red_team import wrong_answers

ROOT = Path(__file__).resolve().parents[2]
SETS = sorted((ROOT / "benchmarks").glob("independent_set_*.jsonl"))
TABLE = Path(__file__).with_name("fixtures") / "pinned_verdicts.jsonl"
STYLES = ["{}", "**{}**", "${}$", "$\\boxed{{{}}}$", "\\boxed{{{}}}", "{}."]


def _pairs(choices: Any) -> list[tuple[str, str]] | None:
    """(label, text) pairs from any shape a row stores its options in."""
    if not choices:
        return None
    if isinstance(choices, dict):
        return [(str(label), str(text)) for label, text in choices.items()]
    if isinstance(choices[0], dict):
        return [(item["label"], item["text"]) for item in choices]
    if isinstance(choices[0], str):
        return list(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", choices, strict=False))
    return [(str(label), str(text)) for label, text in choices]


def _candidate_rows() -> Iterator[tuple[str, str, str, Any]]:
    for path in SETS:
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if case["expected"] and not case.get("debatable"):
                yield case["kind"], case["gold"], case["completion"], case.get("choices")
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["kind"] != "tagged" and row["verdicts"][max(row["verdicts"], key=int)] == "correct":
            yield row["kind"], row["gold"], row["completion"], row.get("options", {}).get("choices")


@cache
def right_rows() -> list[tuple[str, str, str, Any]]:
    """Rows that verify pays today, whose numeric answers are written as their gold (so that moving it moves them)."""
    rows = []
    for kind, gold, completion, choices in _candidate_rows():
        options = {"choices": choices} if kind == "choice" else {}
        verdict = verify(completion, gold, kind, **options)
        written_as_gold = (verdict.extracted or "").strip("$ ") == gold.strip()
        if verdict.correct is True and (kind not in ("math", "integer") or written_as_gold):
            rows.append((kind, gold, completion, choices))
    return rows


def _paid(kind: str, gold: str, completion: str, choices: Any, **variation: Any) -> list[str]:
    options = {"choices": choices} if kind == "choice" else {}
    paid = []
    for wrong in wrong_answers(kind, gold, completion, _pairs(choices), **variation):
        if verify(wrong.completion, gold, kind, **options).correct is True:
            paid.append(f"{kind} {wrong.form} (gold {gold!r}): ...{wrong.completion[-160:]!r}")
    return paid


def test_there_are_right_rows_of_every_kind() -> None:
    kinds = {kind for kind, *_ in right_rows()}
    assert kinds == {"math", "integer", "choice", "exact", "yesno", "countdown"}
    assert len(right_rows()) > 1_000


def test_no_wrong_answer_of_a_right_row_is_paid() -> None:
    paid = [message for row in right_rows() for message in _paid(*row)]
    checked = sum(len(wrong_answers(kind, gold, text, _pairs(ch))) for kind, gold, text, ch in right_rows())
    assert checked > 4_000  # the red team is not idle
    assert not paid, f"{len(paid)} of {checked} wrong answers were paid:\n" + "\n".join(paid[:20])


@settings(max_examples=1_500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0, max_value=10**6),
    offset=st.integers(min_value=-999, max_value=999).filter(bool),
    style=st.sampled_from(STYLES),
)
def test_drawn_wrong_answers_are_never_paid(index: int, offset: int, style: str) -> None:
    rows = right_rows()
    kind, gold, completion, choices = rows[index % len(rows)]
    assert not _paid(kind, gold, completion, choices, offset=offset, style=style)
