"""Registering your own data and generators: every accepted input shape, column mapping, and errors."""

from __future__ import annotations

import json

import datasets
import numpy as np
import pytest

import reasongym
from reasongym.envs import registration
from reasongym.envs.problem import Problem
from reasongym.errors import ConfigError

ROWS = [
    {"q": "What is 2 + 2?", "a": 4, "sol": "2 + 2 = 4", "level": 1, "key": "r0", "source": "demo"},
    {"q": "What is 10 / 4?", "a": 2.5, "sol": "10 / 4 = 2.5", "level": 2, "key": "r1", "source": "demo"},
    {"q": "What is 3 * 3?", "a": 9.0, "sol": "3 * 3 = 9", "level": 2, "key": "r2", "source": "demo"},
]
COLUMNS = {"question": "q", "answer": "a", "solution": "sol", "difficulty": "level", "id_column": "key"}


@pytest.fixture
def env_id():
    """A fresh id per test, unregistered afterwards."""
    env_id = "usertest/Mine-v0"
    yield env_id
    registration._ENTRIES.pop(env_id, None)
    registration._USER_SOURCES.pop(env_id, None)
    reasongym.envs.registration.gymnasium.registry.pop(env_id, None)


def problems_of(env_id: str, split: str = "test") -> list[Problem]:
    env = reasongym.make(env_id).unwrapped
    return [env.problem_at(i, split) for i in range(env.source.size(split))]


def write_rows(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.mark.parametrize("shape", ["list", "dataset", "jsonl", "csv", "parquet"])
def test_every_table_shape_gives_the_same_problems(shape: str, tmp_path, env_id: str) -> None:
    data = {"list": ROWS, "dataset": datasets.Dataset.from_list(ROWS)}.get(shape)
    if data is None:
        data = tmp_path / f"rows.{shape}"
        if shape == "jsonl":
            write_rows(data, ROWS)
        else:
            table = datasets.Dataset.from_list(ROWS)
            table.to_csv(str(data)) if shape == "csv" else table.to_parquet(str(data))
    reasongym.register_dataset(env_id, data, **COLUMNS)
    problems = problems_of(env_id)
    assert [p.answer for p in problems] == ["4", "2.5", "9"]
    assert [p.id for p in problems] == ["r0", "r1", "r2"] and [p.difficulty for p in problems] == [1, 2, 2]
    assert problems[0].solution == "2 + 2 = 4" and problems[0].metadata == {"source": "demo"}


def test_user_dataset_env_grades_and_filters_by_difficulty(env_id: str) -> None:
    reasongym.register_dataset(env_id, ROWS, **COLUMNS, description="three sums")
    env = reasongym.make(env_id)
    env.reset(seed=0, options={"difficulty": 2, "index": 0})
    assert env.unwrapped.problem.id == "r1"
    assert env.step("10 / 4 = 2.5, so \\boxed{2.5}")[1] == 1.0
    assert reasongym.spec(env_id).description == "three sums" and reasongym.spec(env_id).size == "test 3"


def test_split_mapping_and_dataset_dict(env_id: str) -> None:
    data = datasets.DatasetDict(
        {"train": datasets.Dataset.from_list(ROWS[:2]), "test": datasets.Dataset.from_list(ROWS[2:])}
    )
    reasongym.register_dataset(env_id, data, **COLUMNS)
    env = reasongym.make(env_id).unwrapped
    assert env.source.splits() == ("train", "test") and env.source.size("train") == 2
    assert reasongym.spec(env_id).size == "train 2, test 1"


@pytest.mark.parametrize(
    "choices",
    [
        ["Rome", "Paris"],
        [["A", "Rome"], ["B", "Paris"]],
        {"A": "Rome", "B": "Paris"},
        {"label": ["A", "B"], "text": ["Rome", "Paris"]},
        [{"label": "A", "text": "Rome"}, {"label": "B", "text": "Paris"}],  # CommonsenseQA's rows (issue 35)
    ],
)
def test_choice_columns_in_any_shape(choices, env_id: str) -> None:
    rows = [{"question": "Capital of France?", "answer": "B", "options": choices}]
    reasongym.register_dataset(env_id, rows, answer_type="choice", choices="options")
    problem = problems_of(env_id)[0]
    assert problem.choices == (("A", "Rome"), ("B", "Paris"))


def test_boolean_answers_become_yes_no(env_id: str) -> None:
    rows = [{"question": "Is 7 prime?", "answer": True}, {"question": "Is 8 prime?", "answer": False}]
    reasongym.register_dataset(env_id, rows, answer_type="yesno", split="dev")
    assert [p.answer for p in problems_of(env_id, "dev")] == ["yes", "no"]


def test_prompt_template_is_used(env_id: str) -> None:
    reasongym.register_dataset(env_id, ROWS, **COLUMNS, prompt_template="Q: {question}\n{instruction}")
    prompt, _ = reasongym.make(env_id).reset(options={"index": 0})
    assert prompt.startswith("Q: What is 2 + 2?\nReason step by step")


def test_missing_column_lists_the_columns_present(env_id: str) -> None:
    with pytest.raises(ConfigError) as caught:
        reasongym.register_dataset(env_id, ROWS, question="question", answer="a")
    assert str(caught.value) == (
        "register_dataset: question column 'question' not found in split 'test'; "
        "columns present: ['a', 'key', 'level', 'q', 'sol', 'source']"
    )


def test_missing_column_in_a_file_is_reported_on_first_use(tmp_path, env_id: str) -> None:
    path = tmp_path / "rows.jsonl"
    write_rows(path, ROWS)
    reasongym.register_dataset(env_id, path, question="q", answer="answr")
    with pytest.raises(ConfigError, match=r"answer column 'answr' not found .* columns present: \['a', "):
        reasongym.make(env_id).reset(seed=0)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("/no/such/file.jsonl", "file '/no/such/file.jsonl' (split 'test') does not exist"),
        ("rows.txt", "'rows.txt' (split 'test') is not one of ['.csv', '.json', '.jsonl', '.parquet']"),
        (42, "split 'test' is a int; expected a datasets.Dataset, a list of dicts, or a path"),
        ({}, "the data mapping has no splits"),
    ],
)
def test_bad_data_is_refused_at_registration(data, message: str, env_id: str) -> None:
    with pytest.raises(ConfigError) as caught:
        reasongym.register_dataset(env_id, data)
    assert message in str(caught.value)


def test_a_folder_is_refused_at_registration(tmp_path, env_id: str) -> None:
    (tmp_path / "rows.csv").mkdir()  # issue 28, item 11: was a FileNotFoundError from datasets on first use
    with pytest.raises(ConfigError) as caught:
        reasongym.register_dataset(env_id, tmp_path / "rows.csv")
    assert "rows.csv' (split 'test') is a folder, not a file" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        # issue 28, item 11: each was a DatasetGenerationError, UnicodeDecodeError, ValueError or RecursionError
        (
            "rows.csv",
            "question,answer\ncaf\xe9,1\n".encode("latin-1"),
            "rows.csv: line 2 is not UTF-8 text (byte 19",
        ),
        (
            "rows.jsonl",
            '{"question": "caf\xe9", "answer": "1"}\n'.encode("latin-1"),
            "rows.jsonl: line 1 is not UTF-8",
        ),
        (
            "rows.jsonl",
            ('{"question": "q", "answer": "1"}\n{"question": "q", "answer": ' + "9" * 5000 + "}\n").encode(),
            "rows.jsonl: line 2 holds an integer of more than 4300 digits",
        ),
        (
            "rows.jsonl",
            ('{"question": ' + "[" * 100_000 + "]" * 100_000 + ', "answer": "1"}\n').encode(),
            "rows.jsonl: line 1 holds arrays or objects nested deeper than Python's recursion limit",
        ),
        (
            "rows.json",
            ("[" * 100_000 + "]" * 100_000).encode(),
            "rows.json holds arrays or objects nested deeper",
        ),
    ],
)
def test_a_data_file_python_cannot_read_is_named_with_its_line(
    tmp_path, env_id: str, name: str, data: bytes, message: str
) -> None:
    (tmp_path / name).write_bytes(data)
    reasongym.register_dataset(env_id, tmp_path / name)
    with pytest.raises(ConfigError) as caught:
        reasongym.make(env_id).reset(seed=0)
    assert message in str(caught.value)


GOLD_RULE = "every problem needs a gold answer: a non-empty string or a finite number"
ONE = {"question": "What is 0 + 1?", "answer": "1"}


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        # A gold of None became the text "None", so \\boxed{None} earned reward 1 (NaN became "nan").
        (
            [ONE, {"question": "q", "answer": None}],
            {},
            f"register_dataset: split 'test' row 1: column 'answer' (the answer) is missing (None); {GOLD_RULE}",
        ),
        (
            [{"question": "q", "answer": float("nan")}],
            {},
            f"register_dataset: split 'test' row 0: column 'answer' (the answer) is nan, not a finite number; {GOLD_RULE}",
        ),
        (
            [{"question": "q", "answer": "  "}],
            {},
            f"register_dataset: split 'test' row 0: column 'answer' (the answer) is an empty string; {GOLD_RULE}",
        ),
        # Issue 28, item 9: the text of a missing value, as a CSV or a careless export writes it.
        (
            [ONE, {"question": "q", "answer": "None"}],
            {},
            "register_dataset: split 'test' row 1: column 'answer' (the answer) is 'None', the text of a "
            f"missing or non-finite value; {GOLD_RULE}",
        ),
        (
            [{"question": "q", "answer": " NaN "}],
            {},
            "register_dataset: split 'test' row 0: column 'answer' (the answer) is ' NaN ', the text of a "
            f"missing or non-finite value; {GOLD_RULE}",
        ),
        (
            [{"question": "q", "answer": ["1", "2"]}],
            {},
            f"register_dataset: split 'test' row 0: column 'answer' (the answer) is a list (['1', '2']); {GOLD_RULE}",
        ),
        # Grading by id used the last of two rows sharing one.
        (
            [{**ONE, "key": "r0"}, {**ONE, "key": "r0"}],
            {"id_column": "key"},
            "register_dataset: split 'test' rows 0 and 1 share the id 'r0'; ids must be unique within a split "
            "(results are matched to problems by id)",
        ),
        (
            [ONE, {"question": "q"}],
            {},
            "register_dataset: split 'test' row 1 has no answer column 'answer'; its columns: ['question']",
        ),
        (
            [ONE, ["q", "1"]],
            {},
            "register_dataset: split 'test' row 1 is a list (['q', '1']); every row must be a dict of column -> value",
        ),
        (
            [{**ONE, "answer": "A", "options": 5}],
            {"choices": "options", "answer_type": "choice"},
            "register_dataset: split 'test' row 0: column 'options' (the choices) is an int (5); expected a list "
            "of option texts, (label, text) pairs, {'label': ..., 'text': ...} dicts, a label -> text dict, or "
            "{'label': [...], 'text': [...]}",
        ),
        (
            [{**ONE, "level": "hard"}],
            {"difficulty": "level"},
            "register_dataset: split 'test' row 0: column 'level' (the difficulty) is 'hard'; expected a whole "
            "number (a level such as 1 to 5) or None",
        ),
        (
            [{"question": None, "answer": "1"}],
            {},
            "register_dataset: split 'test' row 0: column 'question' (the question) is missing (None); "
            "a question must be a non-empty string",
        ),
        ([], {}, "register_dataset: split 'test' has no rows"),
        ({"train": [ONE], "test": []}, {}, "register_dataset: split 'test' has no rows"),
    ],
    ids=[
        "null-gold",
        "nan-gold",
        "blank-gold",
        "none-text-gold",
        "nan-text-gold",
        "list-gold",
        "duplicate-ids",
        "missing-answer",
        "row-not-a-dict",
        "int-choices",
        "word-difficulty",
        "null-question",
        "no-rows",
        "a-split-without-rows",
    ],
)
def test_bad_rows_are_refused_at_registration_naming_the_row(
    rows: object, options: dict, message: str, env_id: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        reasongym.register_dataset(env_id, rows, **options)
    assert str(caught.value) == message
    assert env_id not in registration._ENTRIES


def test_bad_rows_in_a_file_or_dataset_are_refused_on_first_use(tmp_path, env_id: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"question": "a", "answer": "1"}\n{"question": "b", "answer": \n', encoding="utf-8")
    reasongym.register_dataset(env_id, path)
    with pytest.raises(ConfigError, match=r"rows\.jsonl: line 2 is not valid JSON \(Expecting value\)"):
        reasongym.make(env_id).reset(seed=0)
    write_rows(path, [ONE, {"question": "b", "answer": None}])
    reasongym.register_dataset(env_id, path, override=True)
    with pytest.raises(
        ConfigError, match=r"^register_dataset: split 'test' row 1: column 'answer' \(the answer\) is missing"
    ):
        reasongym.make(env_id).reset(seed=0)
    reasongym.register_dataset(
        env_id, datasets.Dataset.from_list([ONE, {**ONE, "answer": None}]), override=True
    )
    with pytest.raises(
        ConfigError, match=r"^register_dataset: split 'test' row 1: column 'answer' \(the answer\) is missing"
    ):
        reasongym.make(env_id).reset(seed=0)


# --- generators ---------------------------------------------------------------------------------


def add_dict(rng: np.random.Generator, difficulty: int) -> dict:
    a, b = (int(x) for x in rng.integers(0, 10**difficulty, size=2))
    return {"question": f"What is {a} + {b}?", "answer": a + b, "metadata": {"a": a, "b": b}}


def add_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    a, b = (int(x) for x in rng.integers(0, 10**difficulty, size=2))
    return Problem(f"What is {a} + {b}?", str(a + b), "integer")


@pytest.mark.parametrize("generate", [add_dict, add_problem])
def test_generator_registration_from_dicts_or_problems(generate, env_id: str) -> None:
    reasongym.register_generator(env_id, generate, answer_type="integer", difficulties=(1, 2))
    env = reasongym.make(env_id)
    prompt, info = env.reset(seed=4, options={"difficulty": 2})
    a, b = (int(x) for x in prompt.split("?")[0].removeprefix("What is ").split(" + "))
    assert env.step(f"\\boxed{{{a + b}}}")[1] == 1.0 and info["difficulty"] == 2


def test_generator_seed_is_a_source_kwarg(env_id: str) -> None:
    reasongym.register_generator(env_id, add_dict, answer_type="integer")
    first = reasongym.make(env_id).unwrapped.problem_at(0)
    assert reasongym.make(env_id).unwrapped.problem_at(0) == first
    assert reasongym.make(env_id, source_kwargs={"seed": 9}).unwrapped.problem_at(0) != first


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ({"question": "q"}, "a generator must return a Problem or a dict with 'question' and 'answer'"),
        (
            {"question": "q", "answer": "1", "hint": "x"},
            "generator dict keys ['hint'] are not Problem fields",
        ),
        # A None answer became the gold "None"; a list question crashed in the split hash.
        (
            {"question": "q", "answer": None},
            f"generator 'Mine': the answer it returned is missing (None); {GOLD_RULE}",
        ),
        (
            {"question": "q", "answer": float("inf")},
            f"generator 'Mine': the answer it returned is inf, not a finite number; {GOLD_RULE}",
        ),
        (
            {"question": ["q"], "answer": "1"},
            "generator 'Mine': the question it returned is a list (['q']); a question must be a non-empty string",
        ),
        (
            {"question": None, "answer": "1"},
            "generator 'Mine': the question it returned is missing (None); a question must be a non-empty string",
        ),
        (
            Problem("q", "1", "integer", difficulty=None, metadata={}),
            None,  # a ready Problem is fine
        ),
    ],
)
def test_bad_generator_output_is_a_clear_error(returned: dict, message: str | None, env_id: str) -> None:
    reasongym.register_generator(env_id, lambda rng, level: returned, answer_type="integer")
    if message is None:
        assert reasongym.make(env_id).unwrapped.problem_at(0).question == "q"
        return
    with pytest.raises(ConfigError) as caught:
        reasongym.make(env_id).reset(seed=0)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("generate", "options", "message"),
    [
        (
            42,
            {},
            "register_generator: generate must be a function (rng, difficulty) -> Problem | dict, got int 42",
        ),
        (
            add_dict,
            {"difficulties": ("easy",)},
            "Mine: difficulties must list at least one integer level, got ('easy',)",
        ),
        (add_dict, {"difficulties": ()}, "Mine: difficulties must list at least one integer level, got ()"),
    ],
    ids=["not-callable", "word-difficulty", "no-difficulty"],
)
def test_bad_generators_are_refused_at_registration(
    generate, options: dict, message: str, env_id: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        reasongym.register_generator(env_id, generate, answer_type="integer", **options)
    assert str(caught.value) == message
    assert env_id not in registration._ENTRIES


@pytest.mark.parametrize("field", ["question", "answer"])
def test_a_problem_holds_text_not_none(field: str) -> None:
    values = {"question": "q", "answer": "1", field: None}
    with pytest.raises(ConfigError, match=f"^Problem.{field} must be a str, got NoneType None$"):
        Problem(**values)
