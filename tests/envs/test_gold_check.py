"""Golds no answer can match are reported when a split loads, and kept, dropped or refused as asked."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from reasongym.envs import make, register_dataset
from reasongym.envs.gold_check import UnreadableGoldWarning, gold_report, unreadable_golds
from reasongym.envs.problem import Problem
from reasongym.envs.registration import unregister
from reasongym.errors import ConfigError

ROWS = [
    {"question": "2 + 3?", "answer": "5"},
    {"question": "Name the segment.", "answer": r"\overline{CD}"},
    {"question": "Solve 2x = 1.", "answer": r"x=\frac12"},
]


@pytest.fixture
def env_id():
    name = "tests/Golds-v0"
    yield name
    unregister(name)


def test_warn_keeps_the_rows_and_names_them(env_id: str) -> None:
    with pytest.warns(UnreadableGoldWarning, match=r"1 of 3 golds of split 'test'.*row 1 .*overline\{CD\}"):
        register_dataset(env_id, ROWS)
    assert make(env_id).unwrapped.source.size("test") == 3


def test_drop_leaves_them_out(env_id: str) -> None:
    with pytest.warns(UnreadableGoldWarning, match="left out of the split"):
        register_dataset(env_id, ROWS, unreadable_golds="drop")
    rows = make(env_id).unwrapped.source.rows("test")
    assert [problem.answer for problem in rows] == ["5", r"x=\frac12"]


def test_error_refuses_at_registration(env_id: str) -> None:
    with pytest.raises(ConfigError, match=r"1 of 3 golds .* unreadable_golds='drop'"):
        register_dataset(env_id, ROWS, unreadable_golds="error")


def test_a_file_is_checked_when_first_read(env_id: str, tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    register_dataset(env_id, str(path), unreadable_golds="error")  # not read yet
    with pytest.raises(ConfigError, match="cannot be read by their verifier"):
        make(env_id).reset(seed=0)


def test_clean_rows_say_nothing(env_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableGoldWarning)
        register_dataset(env_id, [ROWS[0], ROWS[2]])


def test_a_bad_policy_names_the_choices(env_id: str) -> None:
    with pytest.raises(
        ConfigError, match="unreadable_golds='skip' is not a policy; valid: warn, drop, error"
    ):
        register_dataset(env_id, ROWS, unreadable_golds="skip")


def test_report_counts_beyond_the_examples() -> None:
    problems = [
        Problem(question="q", answer=r"\overline{AB}", answer_type="math", id=f"p{i}") for i in range(5)
    ]
    report = gold_report("Mine", "train", problems)
    assert report is not None and "5 of 5 golds" in report and "and 2 more" in report
    assert (
        gold_report("Mine", "train", [Problem(question="q", answer="4", answer_type="math", id="ok")]) is None
    )


def test_unreadable_golds_names_rows_of_each_kind() -> None:
    found = unreadable_golds("math", ["5", r"\overline{CD}", "x=1"])
    assert [(bad.index, bad.gold) for bad in found] == [(1, r"\overline{CD}")]
    assert unreadable_golds("yesno", ["yes", "perhaps"])[0].index == 1
