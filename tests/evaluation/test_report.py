"""summarize, compare and plot: numbers from hand-made records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasongym.cli import main
from reasongym.errors import ConfigError
from reasongym.evaluation import (
    compare_reports,
    load_report,
    pass_at_k,
    pass_hat_k,
    plot_pass_at_k,
    summarize,
)
from reasongym.evaluation.config import default_ks


def _record(correct: list, *, extracted: list | None = None, **extra: object) -> dict:
    answers = extracted or [("right" if flag else f"wrong{i}") for i, flag in enumerate(correct)]
    return {"id": extra.pop("id", "p"), "kind": "exact", "correct": correct, "extracted": answers, **extra}


@pytest.mark.parametrize(
    ("n", "expected"), [(1, (1,)), (6, (1, 2, 4, 6)), (8, (1, 2, 4, 8)), (32, (1, 2, 4, 8, 16, 32))]
)
def test_default_ks(n: int, expected: tuple[int, ...]) -> None:
    assert default_ks(n) == expected


def test_metrics_are_means_of_per_problem_estimates() -> None:
    records = [
        _record([True, False, False, False]),
        _record([True, True, False, False]),
        _record([False] * 4),
    ]
    report = summarize(records, ks=[1, 2])
    assert report.metrics["pass@2"] == pytest.approx((pass_at_k(4, 1, 2) + pass_at_k(4, 2, 2) + 0) / 3)
    assert report.metrics["avg@4"] == pytest.approx((0.25 + 0.5 + 0) / 3)
    # pass^2: both of 2 draws right: 0 (one right of 4), C(2,2)/C(4,2) = 1/6, 0.
    assert report.metrics["pass^2"] == pytest.approx((0 + 1 / 6 + 0) / 3)
    assert report.metrics["pass^1"] == pytest.approx(report.metrics["pass@1"])
    low, high = report.intervals["avg@4"]
    assert low <= report.metrics["avg@4"] <= high


def test_ungradable_problems_are_left_out_and_counted() -> None:
    report = summarize([_record([True, True]), _record([None, None])])
    assert report.num_problems == 1 and report.num_ungradable == 1
    assert report.metrics["pass@1"] == 1.0
    assert "cannot be graded" in report.table()


def test_problems_whose_grading_ran_out_of_time_are_left_out_and_named_apart() -> None:
    timed_out = _record([True, None], outcomes=["correct", "timeout"])  # issue 28, item 10: never a 0
    report = summarize([_record([True, False]), timed_out, _record([None, None])])
    assert (report.num_problems, report.num_ungradable, report.num_timed_out) == (1, 2, 1)
    assert report.metrics["pass@1"] == 0.5
    assert (
        "2 problems left out: 1 whose gold answer cannot be graded, 1 where grading a sample ran out of time"
        in (report.table())
    )


def test_breakdown_by_difficulty_subject_and_year() -> None:
    records = [
        _record([True], difficulty=1, subject="Algebra", year=2024),
        _record([False], difficulty=2, subject="Algebra", year=2023),
        _record([True], difficulty=2, subject="Geometry", year=None),
    ]
    report = summarize(records)
    assert report.breakdown["difficulty"]["2"] == pytest.approx(
        {"count": 2, "pass@1": 0.5, "pass^1": 0.5, "maj@1": 0.5, "avg@1": 0.5}
    )
    assert report.breakdown["subject"]["Algebra"]["count"] == 2
    assert set(report.breakdown["year"]) == {"2023", "2024"}


@pytest.mark.parametrize("ks", [[0], [5], []])
def test_a_k_above_n_is_refused(ks: list[int]) -> None:
    with pytest.raises(ConfigError, match="each k must be an integer in"):
        summarize([_record([True, False, True, False])], ks=ks)


def test_compare_and_plot(tmp_path: Path) -> None:
    paths = []
    for name, flags in (("before", [False, False, True, False]), ("after", [True, True, True, False])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(_record(flags)) + "\n", encoding="utf-8")
        paths.append(path)
    table = compare_reports([load_report(p) for p in paths])
    header, problems, *rows = table.splitlines()
    assert header.split() == ["metric", "before", "after"]
    pass1 = next(row for row in rows if row.startswith("pass@1 "))
    assert pass1.split()[1:] == ["0.250", "0.750"]
    # pass^4 (all four right): 0 for both; pass^2: C(1,2)/C(4,2) = 0 and C(3,2)/C(4,2) = 1/2.
    assert next(row for row in rows if row.startswith("pass^2 ")).split()[1:] == ["0.000", "0.500"]
    assert next(row for row in rows if row.startswith("pass^4 ")).split()[1:] == ["0.000", "0.000"]
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    png = plot_pass_at_k(paths, tmp_path / "plot.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_maj_at_1_equals_pass_at_1_on_every_record_and_compare_says_how_maj_is_estimated() -> None:
    import random

    from reasongym.evaluation.report import MAJ_AT_K_NOTE, problem_scores

    rng = random.Random(3)
    records = []
    for index in range(60):
        n = rng.randint(1, 10)
        extracted = [rng.choice(["1", "2", "3", None]) for _ in range(n)]
        correct = [rng.random() < 0.4 for _ in range(n)]  # correct ones vote for the gold whatever their text
        records.append(_record(correct, extracted=extracted, id=str(index)))
    for record in records:
        scores = problem_scores(record, [1])
        assert scores["maj@1"] == pytest.approx(scores["pass@1"], abs=1e-15), record
    # the old estimator voted on the first sample alone: 0.167 against a pass@1 of 0.146 in a user's report
    first_wrong = _record([False, True, True], extracted=["7", "5", "5"])
    report = summarize([first_wrong], ks=[1, 2])
    assert report.metrics["maj@1"] == pytest.approx(2 / 3) == pytest.approx(report.metrics["pass@1"])
    assert report.metrics["maj@2"] == pytest.approx(1 / 3 + 2 / 3 * 1 / 2)  # 1 pair both right, 2 ties
    table = compare_reports([report, report], labels=["a", "b"])
    assert f"({MAJ_AT_K_NOTE})" in table and "first k samples" in MAJ_AT_K_NOTE


ENV = "reasongym/Arithmetic-v0"


def test_the_evaluation_table_says_how_it_sampled_and_what_it_means(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.evaluation.report import comparability_warning, format_report, summarize

    records = [
        {
            "index": i,
            "env_id": ENV,
            "split": "test",
            "kind": "math",
            "completions": ["a", "b"],
            "extracted": ["1", "2"],
            "correct": [i == 0, False],
            "finish_reasons": ["length", "stop"],
            "settings": {"temperature": 0.7},
        }
        for i in range(3)
    ]
    report = summarize(records, ks=(1,))
    table = format_report(report)
    assert table.splitlines()[0] == f"{ENV} (test, 3 problems, n=2, temperature 0.7)"
    assert "  3 of 6 completions were cut at the length limit (max_new_tokens) before they ended" in table
    assert "95% interval (bootstrap over problems)" in table and report.sampling_warning is None
    other = summarize(records[:2], ks=(1,))
    assert comparability_warning([report, report]) is None
    assert comparability_warning([report, other]) == (
        "the files differ in problem counts (3, 2): their metrics are averages over different problems or "
        "samples, so differences between columns are not only the models'"
    )
    for name, rows in (("three", records), ("two", records[:2])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["compare", str(tmp_path / "three.jsonl"), str(tmp_path / "two.jsonl")]) == 0
    assert "reasongym: warning: the files differ in problem counts (3, 2)" in capsys.readouterr().err
