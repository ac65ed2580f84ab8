"""Benchmark loaders: every layout, every route, lazy loading, answer canonicalisation, shared data."""

from __future__ import annotations

import importlib
import json
import os
import warnings
from pathlib import Path

import pytest

from reasongym.envs.benchmarks import (
    BENCHMARK_ENVS,
    _common,
    commonsense,
    contests,
    gsm8k,
    math_problems,
    svamp,
)
from reasongym.envs.problem import ANSWER_TYPES
from reasongym.errors import ConfigError, DatasetNotFoundError

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"
SHARED_FIXTURES = FIXTURES / "shared"
HUB = FIXTURES / "hub"
REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("REASONGYM_DATA_DIR") or REPO.parent / "shared" / "data")
needs_shared_data = pytest.mark.skipif(
    not (SHARED_DATA / "README.md").is_file(), reason=f"shared benchmark data not found at {SHARED_DATA}"
)


def _source_of(entry, **kwargs):
    module, function = entry.source.split(":")
    return getattr(importlib.import_module(module), function)(**{**entry.source_kwargs, **kwargs})


@pytest.fixture
def no_routes(monkeypatch):
    """No data root and no network: only explicit data can be found."""
    monkeypatch.delenv("REASONGYM_DATA_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    """Route ``datasets.load_dataset(repo, config, split=...)`` to local fixture files read by datasets."""
    import datasets

    real_load = datasets.load_dataset
    files: dict[tuple[str, str | None, str], Path] = {}
    calls: list[tuple[str, str | None, str]] = []

    def load(path, name=None, split=None, **kwargs):
        calls.append((path, name, split))
        if (path, name, split) not in files:
            raise FileNotFoundError(f"fake hub has no {(path, name, split)}")
        file = files[path, name, split]
        builder = "csv" if file.suffix == ".csv" else "json"
        return real_load(builder, data_files=str(file), split="train", cache_dir=str(tmp_path))

    monkeypatch.delenv("REASONGYM_DATA_DIR", raising=False)
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(datasets, "load_dataset", load)
    monkeypatch.setattr(_common, "hub_unreachable", lambda: None)  # the stand-in hub is always there
    return files, calls


# --- catalog -------------------------------------------------------------------------------------------


def test_catalog_rows_are_wellformed():
    ids = [entry.id for entry in BENCHMARK_ENVS]
    assert len(ids) == len(set(ids)) == 9
    for entry in BENCHMARK_ENVS:
        assert entry.id.startswith("reasongym/") and entry.id.endswith("-v0")
        assert entry.answer_type in ANSWER_TYPES
        module, function = entry.source.split(":")
        assert callable(getattr(importlib.import_module(module), function))


def test_catalog_splits_and_answer_types_match_the_sources(no_routes):
    for entry in BENCHMARK_ENVS:
        source = _source_of(entry, data_dir="/nonexistent")
        assert source.answer_type == entry.answer_type
        size_splits = [part.split()[0] for part in entry.size.split(", ")]
        assert list(source.splits()) == size_splits, entry.id
        assert source.default_split == ("train" if "train" in size_splits else "test")


def test_importing_the_catalog_stays_light():
    import subprocess
    import sys

    heavy = ("datasets", "pyarrow", "torch", "transformers")
    code = f"import sys, reasongym.envs.benchmarks; print(sorted(set({heavy!r}) & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- canonicalisation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (27.0, "27"),
        ("27.0", "27"),
        ("025", "25"),
        ("1,080", "1080"),
        ("-1.0", "-1"),
        (0.5, "0.5"),
        ("0.50", "0.5"),
        (" 12 ", "12"),
        ("1,2", "1,2"),  # not a thousands group: left alone
        ("\\frac{1}{2}", "\\frac{1}{2}"),
        ("080 or 081", "080 or 081"),
    ],
)
def test_canonical_number(raw, expected):
    assert _common.canonical_number(raw) == expected


@pytest.mark.parametrize(
    ("answer", "rationale", "final"),
    [
        ("So 3 + 4 = <<3+4=7>>7.\n#### 7", "So 3 + 4 = <<3+4=7>>7.", "7"),
        ("Total 8,400.\n#### 8,400", "Total 8,400.", "8400"),
        ("#### -2", "", "-2"),
        ("42", None, "42"),
    ],
)
def test_gsm8k_split_rationale(answer, rationale, final):
    assert gsm8k.split_rationale(answer) == (rationale, final)


@pytest.mark.parametrize(
    ("level", "expected"), [(3, 3), ("Level 5", 5), ("Level ?", None), (None, None), (9, None)]
)
def test_parse_level(level, expected):
    assert math_problems.parse_level(level) == expected


@pytest.mark.parametrize(
    ("body", "question", "joined"),
    [
        ("He has 3 pens", "How many?", "He has 3 pens, How many?"),
        ("He has 3 pens.", "How many?", "He has 3 pens. How many?"),
    ],
)
def test_svamp_join_body(body, question, joined):
    assert svamp.join_body(body, question) == joined


# --- shared layout, through the REASONGYM_DATA_DIR route ------------------------------------------------

SHARED_CASES = [
    # (source function, split, number of rows, first id, first answer)
    (gsm8k.source, "train", 3, "gsm8k-train-0000", "36"),
    (gsm8k.source, "test", 2, "gsm8k-test-0000", "13"),
    (math_problems.math_source, "train", 3, "train/algebra/10.json", "5"),
    (math_problems.math500_source, "test", 2, "test/precalculus/5.json", "1"),
    (contests.aime_source, "train", 3, "1985-3", "45"),
    (contests.aime_source, "test", 2, "2024-I-4", "1"),
    (contests.aime24_source, "test", 2, "2024-I-4", "1"),
    (contests.amc23_source, "test", 2, "2023-AMC12A-3", "17"),
    (commonsense.commonsenseqa_source, "validation", 1, "c0ffee0000000000000000000000000c", "B"),
    (commonsense.strategyqa_source, "train", 2, "aa11bb22cc33dd44ee55", "yes"),
    (svamp.source, "test", 2, "chal-1", "15"),
]


@pytest.mark.parametrize(("make", "split", "rows", "first_id", "first_answer"), SHARED_CASES)
def test_shared_layout_via_data_root(monkeypatch, make, split, rows, first_id, first_answer):
    monkeypatch.setenv("REASONGYM_DATA_DIR", str(SHARED_FIXTURES))
    source = make(hub_id=None) if "hub_id" in make.__code__.co_varnames else make()
    assert source.size(split) == rows
    problem = source.problem(split, 0)
    assert (problem.id, problem.answer) == (first_id, first_answer)
    assert problem.answer_type == source.answer_type and problem.question
    json.dumps(problem.metadata)  # metadata must be JSON-serialisable


def test_shared_layout_details(monkeypatch):
    monkeypatch.setenv("REASONGYM_DATA_DIR", str(SHARED_FIXTURES))
    math_test = math_problems.math_source().problem("test", 0)
    assert math_test.difficulty == 1 and math_test.metadata == {"subject": "Precalculus", "in_math500": True}
    assert math_problems.math_source().problem("train", 2).difficulty is None  # "Level ?"
    assert math_problems.math_source().difficulties() == (1, 2)
    csqa = commonsense.commonsenseqa_source().problem("train", 1)
    assert csqa.choices[2] == ("C", "sleep") and len(csqa.choices) == 5
    aime = contests.aime_source().problem("train", 1)
    assert aime.metadata == {"year": 2005, "contest": "AIME II", "number": 7}
    assert commonsense.strategyqa_source().problem("validation", 0).solution == (
        "Ice cream melts when hot. It is served frozen."
    )


def test_dev_is_an_alias_of_validation(monkeypatch):
    monkeypatch.setenv("REASONGYM_DATA_DIR", str(SHARED_FIXTURES))
    source = commonsense.commonsenseqa_source()
    assert source.splits() == ("train", "validation")
    assert source.problem("dev", 0) == source.problem("validation", 0)
    mapped = commonsense.strategyqa_source(data_dir={"dev": SHARED_FIXTURES / "strategyqa" / "dev.jsonl"})
    assert mapped.problem("dev", 0).id == "aa11bb22cc33dd44ee57"


# --- hub layouts, through a local stand-in for datasets.load_dataset --------------------------------------


def test_gsm8k_hub_layout(fake_hub):
    files, calls = fake_hub
    files["openai/gsm8k", "main", "test"] = HUB / "gsm8k_main_test.jsonl"
    source = gsm8k.source()
    assert [(p.id, p.answer) for p in source.rows("test")] == [
        ("gsm8k-test-0000", "8400"),
        ("gsm8k-test-0001", "5"),
        ("gsm8k-test-0002", "-2"),
    ]
    assert source.problem("test", 0).solution == "The hens lay 1,200 * 7 = <<1200*7=8400>>8,400 eggs a week."
    assert calls == [("openai/gsm8k", "main", "test")]


def test_hendrycks_math_hub_layout_concatenates_subjects_and_drops_unboxed_rows(fake_hub):
    files, _ = fake_hub
    repo = "EleutherAI/hendrycks_math"
    files[repo, "algebra", "train"] = HUB / "hendrycks_math_algebra_train.jsonl"
    files[repo, "geometry", "train"] = HUB / "hendrycks_math_geometry_train.jsonl"
    source = math_problems.math_source(subjects=("algebra", "geometry"))
    with pytest.warns(UserWarning, match=r"dropped 1 row\(s\) of split 'train'.*math-train-2"):
        rows = source.rows("train")
    assert [(p.answer, p.difficulty, p.metadata["subject"]) for p in rows] == [
        ("4", 1, "Algebra"),
        ("x", 2, "Algebra"),  # the last box wins
        ("6", 1, "Geometry"),
        ("\\frac{\\pi}{4}", None, "Geometry"),
    ]
    assert [p.id for p in rows] == ["math-train-0", "math-train-1", "math-train-3", "math-train-4"]


def test_math500_hub_layout(fake_hub):
    files, _ = fake_hub
    files["HuggingFaceH4/MATH-500", None, "test"] = HUB / "math500_test.jsonl"
    problem = math_problems.math500_source().problem("test", 1)
    assert (problem.id, problem.answer, problem.difficulty) == ("test/algebra/99.json", "(1,2)", 3)


def test_aime_hub_layouts(fake_hub):
    files, _ = fake_hub
    files["HuggingFaceH4/aime_2024", None, "train"] = HUB / "aime_2024_train.jsonl"
    files["di-zhang-fdu/AIME_1983_2024", None, "train"] = HUB / "AIME_Dataset_1983_2024.csv"
    test = contests.aime24_source().rows("test")
    assert [(p.id, p.answer, p.metadata["number"]) for p in test] == [
        ("2024-I-2", "10", 2),
        ("2024-II-1", "225", 1),
    ]
    train = contests.aime_source().rows("train")  # the CSV's 2024 row belongs to the test split
    assert [(p.id, p.answer) for p in train] == [("1983-1", "64"), ("2002-II-6", "143"), ("2022-II-8", "80")]
    assert train[0].question == "Find $x$ if $\\log_2 x = 6$."
    assert train[1].question == "Find the integer closest to $1000/7$.\nGive the integer."
    assert train[2].metadata["answer_raw"] == "080 or 081 (both were accepted)"
    assert train[0].metadata == {"year": 1983, "contest": "AIME", "number": 1}
    assert train[1].metadata == {"year": 2002, "contest": "AIME II", "number": 6}


def test_amc23_hub_layout(fake_hub):
    files, _ = fake_hub
    files["math-ai/amc23", None, "test"] = HUB / "amc23_test.jsonl"
    rows = contests.amc23_source().rows("test")
    assert [(p.id, p.answer, p.metadata["contest"]) for p in rows] == [
        ("2023-AMC12A-1", "2", "AMC 12A"),
        ("2023-AMC12B-2", "0.5", "AMC 12B"),
    ]


def test_commonsenseqa_hub_layout_and_unlabelled_test_split(fake_hub):
    files, _ = fake_hub
    files["tau/commonsense_qa", None, "train"] = HUB / "commonsense_qa_train.jsonl"
    files["tau/commonsense_qa", None, "validation"] = HUB / "commonsense_qa_test.jsonl"
    source = commonsense.commonsenseqa_source()
    problem = source.problem("train", 1)
    assert (problem.answer, problem.choices[3], problem.metadata) == (
        "D",
        ("D", "temperature"),
        {"question_concept": "thermometer"},
    )
    with pytest.raises(ConfigError, match="has no answer label.*evaluate on 'validation'"):
        source.rows("validation")


def test_commonsenseqa_official_layout(no_routes):
    source = commonsense.commonsenseqa_source(
        data_dir={"validation": HUB / "commonsense_qa_official_dev.jsonl"}
    )
    problem = source.problem("validation", 0)
    assert (problem.question, problem.answer, problem.choices[4]) == (
        "What keeps you dry in the rain?",
        "E",
        ("E", "umbrella"),
    )


def test_strategyqa_hub_layout(fake_hub):
    files, _ = fake_hub
    files["ChilleD/StrategyQA", None, "train"] = HUB / "strategyqa_train.jsonl"
    rows = commonsense.strategyqa_source().rows("train")
    assert [(p.id, p.answer) for p in rows] == [
        ("f00dfeed000000000001", "no"),
        ("f00dfeed000000000002", "yes"),
    ]
    assert rows[1].solution == "Whales are mammals. Mammals breathe air with lungs."
    assert rows[0].metadata == {"term": "Sun", "description": "star at the center of the Solar System"}


def test_svamp_hub_layout_joins_both_hub_splits(fake_hub):
    files, calls = fake_hub
    files["ChilleD/SVAMP", None, "train"] = HUB / "svamp_train.jsonl"
    files["ChilleD/SVAMP", None, "test"] = HUB / "svamp_test.jsonl"
    rows = svamp.source().rows("test")
    assert [(p.id, p.answer) for p in rows] == [("chal-10", "5"), ("chal-11", "27")]
    assert rows[0].question == "Jack had 8 pens. He gave 3 pens to Tim, How many pens does Jack have now?"
    assert calls == [("ChilleD/SVAMP", None, "train"), ("ChilleD/SVAMP", None, "test")]


# --- explicit files and folders ---------------------------------------------------------------------------


def test_explicit_file_formats_serve_the_default_split(no_routes, tmp_path):
    import pyarrow
    import pyarrow.parquet

    rows = [json.loads(line) for line in (HUB / "svamp_test.jsonl").read_text().splitlines()]
    (tmp_path / "list.json").write_text(json.dumps(rows))
    (tmp_path / "lines.json").write_text((HUB / "svamp_test.jsonl").read_text())
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), tmp_path / "rows.parquet")
    for name in ("list.json", "lines.json", "rows.parquet"):
        assert svamp.source(data_dir=tmp_path / name).problem("test", 0).answer == "27", name
    assert contests.aime_source(data_dir=HUB / "AIME_Dataset_1983_2024.csv").size("train") == 3


def test_explicit_folder_wins_over_the_data_root(monkeypatch, tmp_path):
    monkeypatch.setenv("REASONGYM_DATA_DIR", str(SHARED_FIXTURES))
    (tmp_path / "test.jsonl").write_text((HUB / "gsm8k_main_test.jsonl").read_text())
    source = gsm8k.source(data_dir=tmp_path)
    assert source.size("test") == 3  # from tmp_path, not the 2-row data root
    with pytest.raises(DatasetNotFoundError, match=r"data_dir: none of .*train\.jsonl"):
        source.size("train")  # an explicit folder never falls through to other data


def test_unknown_layout_names_the_columns(no_routes, tmp_path):
    (tmp_path / "test.jsonl").write_text('{"prompt": "1+1", "target": "2"}\n')
    with pytest.raises(ConfigError, match=r"columns \['prompt', 'target'\], which match no known layout"):
        gsm8k.source(data_dir=tmp_path).size("test")


@pytest.mark.parametrize(
    ("answer", "reads"),
    [(None, "'None'"), (float("nan"), "'nan'"), (float("inf"), "'inf'")],
    ids=["null", "nan", "infinity"],
)
def test_a_row_without_a_gold_answer_is_refused_naming_it(no_routes, tmp_path, answer, reads):
    # The gold used to become the text "None" (or "nan"), which \\boxed{None} matched for reward 1.
    rows = [
        {"question": "What is 2 + 3?", "answer": "#### 5"},
        {"question": "What is 1 + 1?", "answer": answer},
    ]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    source = gsm8k.source(data_dir=path)
    with pytest.raises(ConfigError) as caught:
        source.size("train")
    assert str(caught.value).startswith(
        f"GSM8K: problem 'gsm8k-train-0001' (position 1 of split 'train', from {path}) has no gold answer: "
        f"it reads {reads}, a missing or non-finite value"
    )


def test_a_malformed_json_line_is_named(no_routes, tmp_path):
    (tmp_path / "test.jsonl").write_text('{"question": "a", "answer": "1"}\n{"question": "b", "answer": \n')
    with pytest.raises(ConfigError, match=r"test\.jsonl: line 2 is not valid JSON \(Expecting value\)"):
        gsm8k.source(data_dir=tmp_path).size("test")


# --- laziness and the missing-data error --------------------------------------------------------------------


@pytest.mark.parametrize("entry", BENCHMARK_ENVS, ids=lambda entry: entry.id)
def test_construction_reads_nothing(no_routes, entry):
    source = _source_of(entry, data_dir="/does/not/exist")
    assert source.splits()  # building and inspecting the source touches no file
    with pytest.raises(DatasetNotFoundError, match="/does/not/exist"):
        source.size(source.default_split)


def test_missing_data_message(no_routes):
    with pytest.raises(DatasetNotFoundError) as caught:
        gsm8k.source(hub_id=None).size("test")
    assert str(caught.value) == (
        "GSM8K: split 'test' was not found. Tried:\n"
        "  - data_dir: not given\n"
        "  - REASONGYM_DATA_DIR: not set\n"
        "  - hub: no hub copy configured (hub_id=None)\n"
        "Provide it in one of these ways: `reasongym data` (downloads where the hub is reachable, or converts "
        "a file you have) writes a data root; set REASONGYM_DATA_DIR to a data root holding gsm8k/test.jsonl; "
        "pass data_dir=<folder with test.jsonl, or a file> to the source function; or "
        'make(env_id, source_kwargs={"data_dir": ...}).'
    )


def test_hub_failure_and_offline_skip_are_reported(monkeypatch, tmp_path):
    import datasets

    def unreachable(*args, **kwargs):
        raise ConnectionError("Couldn't reach 'openai/gsm8k' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setenv("REASONGYM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(datasets, "load_dataset", unreachable)
    monkeypatch.setattr(_common, "hub_unreachable", lambda: None)  # the host answers; the load fails
    with pytest.raises(DatasetNotFoundError) as caught:
        gsm8k.source().size("test")
    assert f"  - REASONGYM_DATA_DIR: {tmp_path / 'gsm8k' / 'test.jsonl'} does not exist\n" in str(
        caught.value
    )
    assert (
        "  - hub: datasets.load_dataset('openai/gsm8k', 'main', split='test') failed: ConnectionError: "
        "Couldn't reach 'openai/gsm8k' on the Hub (LocalEntryNotFoundError)\n"
    ) in str(caught.value)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    with pytest.raises(
        DatasetNotFoundError, match="skipped \\(HF_HUB_OFFLINE set after datasets was imported\\)"
    ):
        gsm8k.source().size("test")


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9", "https://no-such-host.invalid"])
def test_an_unreachable_hub_fails_at_once(monkeypatch, tmp_path, endpoint):
    import time

    import datasets

    calls = []
    monkeypatch.setattr(datasets, "load_dataset", lambda *args, **kwargs: calls.append(args))
    monkeypatch.setenv("HF_ENDPOINT", endpoint)  # a closed port; a name that does not resolve
    for name in ("REASONGYM_DATA_DIR", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    started = time.monotonic()
    with pytest.raises(DatasetNotFoundError, match=r"split='test'\) skipped at once: .* cannot be reached"):
        gsm8k.source().size("test")
    assert time.monotonic() - started < 5 and calls == []  # no 30 s of the datasets client's retries
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")  # behind a proxy the client decides
    assert _common.hub_unreachable() is None


# --- years and argument checks ---------------------------------------------------------------------------------


def test_aime_years_filter(monkeypatch):
    monkeypatch.setenv("REASONGYM_DATA_DIR", str(SHARED_FIXTURES))
    assert [p.id for p in contests.aime_source(years=(1985, 2022)).rows("train")] == ["1985-3", "2022-I-2"]
    only_2024 = contests.aime_source(years=(2024,))
    assert only_2024.size("test") == 2
    with pytest.raises(
        ConfigError,
        match=r"split 'train' has no problem from years \[2024\] \(years in its data: 1985-2022\)",
    ):
        only_2024.size("train")


@pytest.mark.parametrize("years", [2024, "2024", (2024.0,), (1900,)])
def test_aime_rejects_bad_years(years):
    with pytest.raises(ConfigError, match="years must be a tuple of ints from 1983 on"):
        contests.aime_source(years=years)


def test_data_dir_mapping_rejects_unknown_splits():
    with pytest.raises(
        ConfigError,
        match=r"unknown split\(s\) \['tset'\]; splits are \['train', 'test'\]; did you mean 'test'\?",
    ):
        gsm8k.source(data_dir={"tset": "x.jsonl"})


# --- the real shared data (skipped when absent) ---------------------------------------------------------------


@needs_shared_data
@pytest.mark.parametrize("entry", BENCHMARK_ENVS, ids=lambda entry: entry.id)
def test_shared_data_row_counts_match_the_catalog(monkeypatch, entry):
    monkeypatch.setenv("REASONGYM_DATA_DIR", str(SHARED_DATA))
    source = _source_of(entry)
    assert ", ".join(f"{split} {source.size(split)}" for split in source.splits()) == entry.size
    ids = [p.id for split in source.splits() for p in source.rows(split)]
    assert len(ids) == len(set(ids)) and all(p.answer for p in source.rows(source.default_split))


ORIGINALS = [
    (gsm8k.source, "test", "gsm8k/original/test.jsonl", "gsm8k/test.jsonl"),
    (math_problems.math500_source, "test", "math500/original/test.jsonl", "math500/test.jsonl"),
    (contests.aime24_source, "test", "aime24/original/test.jsonl", "aime24/test.jsonl"),
    (contests.amc23_source, "test", "amc23/original/test.jsonl", "amc23/test.jsonl"),
    (
        contests.aime_source,
        "train",
        "aime_1983_2023/original/AIME_Dataset_1983_2024.csv",
        "aime_1983_2023/train.jsonl",
    ),
    (
        commonsense.commonsenseqa_source,
        "validation",
        "commonsenseqa/original/dev_rand_split.jsonl",
        "commonsenseqa/dev.jsonl",
    ),
    (commonsense.strategyqa_source, "validation", "strategyqa/original/dev.json", "strategyqa/dev.jsonl"),
    (svamp.source, "test", "svamp/original/SVAMP.json", "svamp/test.jsonl"),
]


@needs_shared_data
@pytest.mark.parametrize(
    ("make", "split", "original", "converted"), ORIGINALS, ids=lambda v: getattr(v, "__name__", None)
)
def test_upstream_layouts_give_the_same_problems_as_the_shared_files(
    no_routes, make, split, original, converted
):
    upstream = {p.id: p for p in make(data_dir={split: SHARED_DATA / original}).rows(split)}
    shared = {p.id: p for p in make(data_dir={split: SHARED_DATA / converted}).rows(split)}
    assert upstream.keys() == shared.keys()
    fields = ("question", "answer", "solution", "choices", "difficulty")
    differing = [k for k in shared if any(getattr(upstream[k], f) != getattr(shared[k], f) for f in fields)]
    assert differing == []


@needs_shared_data
def test_math_answers_from_boxes_match_the_shared_answers(no_routes, tmp_path):
    # Rebuild the Hendrycks layout (no answer column) from the shared rows, then compare answers.
    shared = [
        json.loads(line) for line in (SHARED_DATA / "math" / "train.jsonl").read_text().split("\n") if line
    ]
    hendrycks = [
        {"problem": r["question"], "level": r["level_raw"], "type": r["subject"], "solution": r["solution"]}
        for r in shared
    ]
    (tmp_path / "train.jsonl").write_text("\n".join(json.dumps(r) for r in hendrycks))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = math_problems.math_source(data_dir=tmp_path).rows("train")
    assert len(rows) == len(shared) - 2 and "dropped 2 row(s)" in str(
        caught[0].message
    )  # the two empty boxes
    by_question = {r["question"].strip(): r["answer"].strip() for r in shared}
    assert [p.question for p in rows if p.answer != by_question[p.question]] == []
