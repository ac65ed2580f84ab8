"""benchmarks/others_sets/: the loaders read a set from a git copy at the pinned commit (and say what is
missing when they cannot), Math-Verify's parametrized cases keep their options, and the tallies count misses
against the rows labelled correct, with the adjudicated rows counted apart and the misses grouped by theme."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks.others_sets import grade_others, loaders, sources


def _git(directory: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def tinyv_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local git copy of a two-item HardVerify-Math, laid out as OWNER+NAME, pinned at its one commit."""
    repo = tmp_path / "uw-nsl+TinyV"
    (repo / "benchmarks").mkdir(parents=True)
    items = [
        {
            "id": 0,
            "source": "Olympiad",
            "ground_truth": "$\\frac{1}{2}$",
            "fn_output": "0.5",
            "tn_output": "2",
        },
        {"id": 1, "source": "cn_k12", "ground_truth": "7", "fn_output": "7", "tn_output": "8"},
    ]
    (repo / "benchmarks" / "HardVerify-Math.json").write_text(json.dumps(items), encoding="utf-8")
    _git(repo.parent, "init", "-q", str(repo))
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "set")
    pinned = sources.Source("uw-nsl/TinyV", _git(repo, "rev-parse", "HEAD"), "MIT")
    monkeypatch.setitem(sources.SOURCES, "tinyv", pinned)
    return tmp_path


def test_hardverify_rows_come_from_the_pinned_commit(tinyv_copy: Path) -> None:
    rows = loaders.hardverify(tinyv_copy)
    assert [(row.id, row.completion, row.label) for row in rows] == [
        ("hardverify-0-fn", "0.5", True),
        ("hardverify-0-tn", "2", False),
        ("hardverify-1-fn", "7", True),
        ("hardverify-1-tn", "8", False),
    ]
    assert loaders.hardverify(tinyv_copy, boxed=True)[0].completion == "\\boxed{0.5}"


def test_a_missing_copy_or_commit_says_where_it_looked(
    tinyv_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(
        sources.SourceMissing, match=r"no local copy of uw-nsl/Nope .*clone https://github.com/"
    ):
        sources.read_text(sources.Source("uw-nsl/Nope", "0" * 40, "MIT"), "x.json", tinyv_copy)
    monkeypatch.setitem(sources.SOURCES, "tinyv", sources.Source("uw-nsl/TinyV", "1" * 40, "MIT"))
    with pytest.raises(
        sources.SourceMissing, match="has no 'benchmarks/HardVerify-Math.json' at commit 111111111111"
    ):
        loaders.hardverify(tinyv_copy)


def test_math_verify_cases_keep_their_options_and_skip_computed_golds() -> None:
    source = """
import pytest
@pytest.mark.parametrize("gold,pred,expected,precision", [("1", "1.0", 1, 2), ("2", "3", 0, 6)])
def test_numbers(gold, pred, expected, precision): ...
@pytest.mark.parametrize("gold, pred, expected", [(f"{1/3:.3f}", "1/3", 1), ("$x$", "$y$", 0)])
def test_computed(gold, pred, expected): ...
@pytest.mark.parametrize("pred,expected", [("A", ["a"])])
def test_no_gold(pred, expected): ...
"""
    cases = loaders._parametrized_cases(source)
    assert [(name, index, values.get("precision")) for name, index, values in cases] == [
        ("test_numbers", 0, 2),
        ("test_numbers", 1, 6),
        ("test_computed", 0, None),  # the f-string gold is not a literal: no values, left out by the loader
        ("test_computed", 1, None),
    ]
    assert cases[2][2] == {} and cases[3][2]["pred"] == "$y$"


def _record(row_id: str, label: bool, ours: bool, theirs: bool) -> dict:
    return {"id": row_id, "label": label, "reasongym": ours, "math_verify": theirs, "reasongym_outcome": "x"}


def test_tallies_count_misses_against_correct_rows_and_set_adjudicated_rows_apart() -> None:
    records = [
        _record("a", True, ours=True, theirs=True),
        _record("b", True, ours=False, theirs=True),  # a reasongym miss, themed
        _record("c", True, ours=False, theirs=False),  # a miss on a row called mislabelled
        _record("d", False, ours=True, theirs=False),  # a reasongym false accept
        _record("e", False, ours=False, theirs=True),  # a math-verify false accept
        {**_record("f", True, ours=False, theirs=False), "reasongym_ms": 1.0},  # a miss nobody reviewed
    ]
    for record in records:
        record.setdefault("reasongym_ms", 0.5)
    adjudication = {
        "b": {"id": "b", "call": "right", "theme": "rounding"},
        "c": {"id": "c", "call": "mislabelled"},
    }
    out = grade_others.summarize("t", records, adjudication, ["reasongym", "math_verify"])
    mine = out["reasongym_all"]
    assert (mine["rows"], mine["labelled_correct"], mine["misses"], mine["false_accepts"]) == (6, 4, 3, 1)
    assert mine["miss_share"] == 0.75 and mine["accuracy"] == round(2 / 6, 4)
    assert out["reasongym_adjudicated"]["misses"] == 2 and out["reasongym_adjudicated"]["rows"] == 5
    assert out["math_verify_all"]["false_accept_ids"] == ["e"]
    assert out["reasongym_miss_themes"] == {
        "rounding": {"count": 1, "examples": ["b"]},
        "unreviewed": {"count": 1, "examples": ["f"]},
    }
    assert out["calls"] == {"right": 1, "mislabelled": 1, "unreviewed": 4}


def test_grade_keeps_ids_and_verdicts_only() -> None:
    rows = [
        loaders.Row("r1", "math", "\\frac{1}{2}", "So the answer is \\boxed{0.5}.", True, "g"),
        loaders.Row("r2", "math", "7", "The answer is 8.", False, "g"),
    ]
    records = grade_others.grade(rows, peer=None)
    assert [(r["id"], r["reasongym"], r["math_verify"]) for r in records] == [
        ("r1", True, None),
        ("r2", False, None),
    ]
    assert not any("completion" in r or "gold" in r for r in records)
