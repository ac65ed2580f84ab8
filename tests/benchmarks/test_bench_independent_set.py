"""benchmarks/bench_independent_set.py: the per-kind tallies (each kind's clear cases, and math and integer
together) count false accepts and misses per grader, and skip kinds the set does not hold."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

SCRIPT = "benchmarks.bench_independent_set"


def _row(bench: Any, kind: str, expected: bool, ours: bool, theirs: bool) -> Any:
    case = {"id": f"{kind}-{expected}-{ours}", "kind": kind, "expected": expected, "debatable": ""}
    return bench.Row(case, ours, "", 0.0, theirs)


def test_by_kind_tallies_each_kind_and_math_with_integer(bench: Any) -> None:
    rows = [
        _row(bench, "math", True, ours=True, theirs=False),  # a math-verify miss
        _row(bench, "math", False, ours=True, theirs=False),  # a reasongym false accept
        _row(bench, "integer", True, ours=False, theirs=True),  # a reasongym miss
        _row(bench, "countdown", False, ours=False, theirs=True),  # a math-verify false accept
    ]
    graders = {"reasongym": lambda row: row.ours, "math_verify": lambda row: bool(row.theirs)}
    out = bench.by_kind(rows, graders)
    assert out["reasongym_math"]["false_accept_ids"] == ["math-False-True"]
    assert out["math_verify_math"]["miss_ids"] == ["math-True-True"]
    assert out["reasongym_integer"]["misses"] == 1
    both = out["reasongym_math+integer"]
    assert (both["cases"], both["false_accepts"], both["misses"], both["accuracy"]) == (
        3,
        1,
        1,
        round(1 / 3, 4),
    )
    assert out["math_verify_countdown"]["false_accepts"] == 1
    assert "reasongym_yesno" not in out  # no yes/no rows: no empty tally


SMOLLM2 = "benchmarks.make_smollm2_cot_completions"


def test_smollm2_script_reads_row_ranges_and_keeps_the_set_c_default(tmp_path: Path) -> None:
    script = importlib.import_module(SMOLLM2)
    args = script.parse_args([str(tmp_path / "out.jsonl"), "--gsm8k", "400:414", "--max-new-tokens", "300"])
    assert (args.gsm8k, args.csqa, args.max_new_tokens) == (range(400, 414), None, 300)
    default = script.parse_args([str(tmp_path / "out.jsonl")])
    assert (default.csqa, default.strategyqa) == (range(300, 325), range(100, 125))
    data = tmp_path / "gsm8k"
    data.mkdir()
    (data / "test.jsonl").write_text('{"id": "g0", "question": "1+1?", "answer": "2"}\n' * 3)
    chosen = script.parse_args([str(tmp_path / "out.jsonl"), "--gsm8k", "1:2"])
    [(record, prompt)] = script.prompts(tmp_path, chosen)
    assert (record["kind"], record["gold"], record["src"]) == ("math", "2", "gsm8k test")
    assert prompt.endswith(script.MATH_INSTRUCTION)


def test_smollm2_script_names_a_bad_row_range(tmp_path: Path, capsys: Any) -> None:
    import pytest

    script = importlib.import_module(SMOLLM2)
    with pytest.raises(SystemExit):
        script.parse_args([str(tmp_path / "out.jsonl"), "--svamp", "4-14"])
    assert "row range '4-14' is not A:B" in capsys.readouterr().err
