"""to_dataset and reward_function: TRL's GRPOTrainer dataset format and reward-function contract."""

from __future__ import annotations

import re

import numpy as np
import pytest

from reasongym.envs.core import ReasoningEnv
from reasongym.envs.export import completion_text, reward_function, to_dataset
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource, GeneratorSource
from reasongym.errors import ConfigError


def add_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    a, b = (int(x) for x in rng.integers(0, 10 ** (difficulty + 1), size=2))
    return Problem(f"What is {a} + {b}?", str(a + b), "integer", solution=f"{a} + {b} = {a + b}")


QUIZ = [
    Problem("Capital of France?", "B", "choice", id="c0", choices=(("A", "Rome"), ("B", "Paris"))),
    Problem(
        "Largest planet?", "A", "choice", id="c1", choices=(("A", "Jupiter"), ("B", "Mars"), ("C", "Venus"))
    ),
    Problem("Is 7 prime?", "yes", "yesno", id="y0"),
]


@pytest.fixture(scope="module")
def adder() -> ReasoningEnv:
    return ReasoningEnv(GeneratorSource("adder", add_problem, "integer"), system_prompt="Think.")


@pytest.fixture(scope="module")
def quiz() -> ReasoningEnv:
    return ReasoningEnv(DatasetSource.from_problems("quiz", "choice", {"test": QUIZ}))


def test_dataset_has_trl_conversational_prompts_and_gold_columns(adder: ReasoningEnv) -> None:
    data = to_dataset(adder, 8, seed=1)
    assert data.column_names == [
        "prompt",
        "answer",
        "answer_type",
        "choices",
        "problem_id",
        "solution",
        "difficulty",
        "split",
        "index",
    ]
    assert len(data) == 8 and len(set(data["problem_id"])) == 8
    row = data[0]
    assert [m["role"] for m in row["prompt"]] == ["system", "user"] and row["answer_type"] == "integer"
    assert row["prompt"][1]["content"] == adder.prompt(
        adder.source.problem("train", int(row["problem_id"].split("-")[-1]))
    )
    assert (row["split"], row["index"]) == ("train", int(row["problem_id"].split("-")[-1]))


def test_dataset_is_seeded(adder: ReasoningEnv) -> None:
    assert to_dataset(adder, 5, seed=3)["problem_id"] == to_dataset(adder, 5, seed=3)["problem_id"]
    assert to_dataset(adder, 5, seed=3)["problem_id"] != to_dataset(adder, 5, seed=4)["problem_id"]


def test_trl_recognises_the_prompt_format(adder: ReasoningEnv) -> None:
    data_utils = pytest.importorskip("trl.data_utils")
    assert data_utils.is_conversational(to_dataset(adder, 2)[0])


def test_plain_text_prompts_for_a_model_without_a_chat_template(adder: ReasoningEnv) -> None:
    from reasongym.policy.loading import format_prompt
    from reasongym.policy.tiny import tiny_policy

    data_utils = pytest.importorskip("trl.data_utils")
    _, tokenizer = tiny_policy(0)  # no chat template: TRL's chat formatting would fail on messages
    plain, chat = to_dataset(adder, 3, seed=2, chat=False), to_dataset(adder, 3, seed=2)
    assert not data_utils.is_conversational(plain[0])
    # the text reasongym itself gives the model, so TRL trains on the prompts our trainers use
    assert plain["prompt"] == [format_prompt(tokenizer, messages) for messages in chat["prompt"]]
    assert data_utils.maybe_apply_chat_template(plain[0], tokenizer)["prompt"] == plain["prompt"][0]
    assert plain["answer"] == chat["answer"]


def test_finite_split_sizes(quiz: ReasoningEnv) -> None:
    whole = to_dataset(quiz, None, split="test")
    assert sorted(whole["problem_id"]) == ["c0", "c1", "y0"]
    assert whole[whole["problem_id"].index("c1")]["choices"] == [
        ["A", "Jupiter"],
        ["B", "Mars"],
        ["C", "Venus"],
    ]
    with pytest.raises(ConfigError, match="n=4 is more than the 3 problems in the split"):
        to_dataset(quiz, 4, split="test")


def test_whole_infinite_split_is_refused(adder: ReasoningEnv) -> None:
    with pytest.raises(
        ConfigError, match="to_dataset: n=None means .* this split is infinite; pass a number"
    ):
        to_dataset(adder, None)


def test_reward_function_grades_string_and_chat_completions(adder: ReasoningEnv) -> None:
    data = to_dataset(adder, 3)
    reward = reward_function(adder)
    gold = [f"so \\boxed{{{a}}}" for a in data["answer"]]
    wrong = ["\\boxed{-1}", "no idea", ""]
    columns = {k: data[k] for k in ("answer", "answer_type", "choices", "problem_id")}
    assert reward(prompts=data["prompt"], completions=gold, **columns) == [1.0, 1.0, 1.0]
    assert reward(prompts=data["prompt"], completions=wrong, **columns) == [0.0, 0.0, 0.0]
    chats = [[{"role": "assistant", "content": text}] for text in gold[:2] + wrong[:1]]
    assert reward(data["prompt"], chats, completion_ids=[[1]] * 3, trainer_state=None, **columns) == [
        1.0,
        1.0,
        0.0,
    ]


def test_reward_function_uses_each_rows_choices_and_kind(quiz: ReasoningEnv) -> None:
    data = to_dataset(quiz, None, split="test")
    by_id = {pid: i for i, pid in enumerate(data["problem_id"])}
    texts = {"c0": "The answer is (B).", "c1": "The answer is (B).", "y0": "The answer is yes."}
    completions = [texts[pid] for pid in data["problem_id"]]
    rewards = reward_function(quiz)(
        data["prompt"], completions, **{k: data[k] for k in ("answer", "answer_type", "choices")}
    )
    assert [rewards[by_id[k]] for k in ("c0", "c1", "y0")] == [1.0, 0.0, 1.0]


def test_ungradable_gold_gives_none_and_shaping_applies() -> None:
    env = ReasoningEnv(GeneratorSource("adder", add_problem, "integer"), format_reward=0.5)
    reward = reward_function(env)
    # AIME-style integers are 0-999: a gold of 5000 cannot be graded, so TRL must skip that sample.
    got = reward(
        ["p"] * 3,
        ["\\boxed{12}", "\\boxed{13}", "\\boxed{5000}"],
        answer=["12", "12", "5000"],
        answer_type=["integer"] * 3,
    )
    assert got == [1.5, 0.5, None]


def test_reward_function_needs_the_answer_column(adder: ReasoningEnv) -> None:
    with pytest.raises(ConfigError, match="no 'answer' column"):
        reward_function(adder)(["p"], ["\\boxed{1}"])


@pytest.mark.parametrize(
    ("completion", "text"),
    [
        ("plain", "plain"),
        ([], ""),
        ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "b"),
    ],
)
def test_completion_text(completion, text: str) -> None:
    assert completion_text(completion) == text


def test_reward_function_grades_a_reasoning_gym_task_with_its_own_scorer() -> None:
    pytest.importorskip("reasoning_gym", reason="needs the reasoning-gym extra")
    import reasongym
    from reasongym.envs.core import format_final_answer

    env = reasongym.make("reasoning_gym/ab-v0").unwrapped  # answer type "task": no verifier kind grades it
    data = to_dataset(env, 3, seed=2)
    gold = [format_final_answer("task", answer) for answer in data["answer"]]
    wrong = [format_final_answer("task", "#A") for _ in data["answer"]]
    columns = {k: data[k] for k in ("answer", "answer_type", "choices", "split", "index", "difficulty")}
    reward = reward_function(env)
    assert reward(data["prompt"], gold, **columns) == [1.0, 1.0, 1.0]
    assert reward(data["prompt"], wrong, **columns) == [0.0, 0.0, 0.0]
    expected = [
        env.compute_reward(env.score(env.source.problem("train", i), t), t)
        for i, t in zip(data["index"], gold, strict=True)
    ]
    assert expected == [1.0, 1.0, 1.0]


def test_reward_function_refuses_a_dataset_of_another_environment(
    adder: ReasoningEnv, quiz: ReasoningEnv
) -> None:
    data = to_dataset(quiz, None, split="test")
    columns = {k: data[k] for k in ("answer", "split", "index")}
    with pytest.raises(ConfigError, match="was the dataset made from another environment"):
        reward_function(ReasoningEnv(DatasetSource.from_problems("quiz", "choice", {"test": QUIZ[::-1]})))(
            data["prompt"], ["(A)"] * len(QUIZ), **columns
        )


def test_a_config_given_where_the_source_options_go_is_refused_by_name() -> None:
    from reasongym.envs.core import ReasoningEnvConfig

    with pytest.raises(ConfigError, match=r"passed by keyword: ReasoningEnv\(source, config=\.\.\.\)"):
        ReasoningEnv(DatasetSource.from_problems("quiz", "choice", {"test": QUIZ}), ReasoningEnvConfig())  # type: ignore[arg-type]


def test_a_reasoning_gym_task_without_the_split_and_index_columns_names_them() -> None:
    """Issue 51, item 12: its scorer needs the task's own item (rebuilt from the problem's metadata), which the
    answer columns cannot give. Before: KeyError: 'rg_index'."""
    pytest.importorskip("reasoning_gym", reason="needs the reasoning-gym extra")
    import reasongym
    from reasongym.envs.core import format_final_answer

    env = reasongym.make("reasoning_gym/ab-v0").unwrapped
    data = to_dataset(env, 2, seed=2)
    gold = [format_final_answer("task", answer) for answer in data["answer"]]
    for columns in ({"answer": data["answer"]}, {"answer": data["answer"], "split": data["split"]}):
        with pytest.raises(ConfigError) as caught:
            reward_function(env)(data["prompt"], gold, **columns)
        message = str(caught.value)
        assert "'split' and 'index' columns" in message and "to_dataset" in message and "\n" not in message
        assert "reasoning_gym/ab" in message or "ab" in message


@pytest.mark.parametrize("bad", [1.5, None, "3", -1, True])
def test_a_row_index_that_is_not_an_integer_is_refused_by_row(adder: ReasoningEnv, bad: object) -> None:
    """Probe: 1.5 was read as problem 1 (graded against another problem when there is no answer column), None was
    a TypeError."""
    data = to_dataset(adder, 2, seed=0)
    with pytest.raises(
        ConfigError, match=rf"row 1's 'index' must be an integer >= 0, got {re.escape(repr(bad))}"
    ):
        reward_function(adder)(data["prompt"], ["a", "b"], split=data["split"], index=[data["index"][0], bad])


@pytest.mark.parametrize("completion", [5, {"content": "x"}, [{"role": "assistant", "content": 7}]])
def test_a_completion_that_is_neither_text_nor_messages_is_refused(completion: object) -> None:
    with pytest.raises(ConfigError, match="a completion must be a string or a list of chat messages"):
        completion_text(completion)  # type: ignore[arg-type]
    assert (
        completion_text([{"role": "assistant", "content": None}]) == ""
    )  # a tool call's message has no text


def test_the_readmes_own_dataset_exports_without_naming_its_split() -> None:
    """register_dataset's rows are one split (``test``); to_dataset serves it rather than asking for ``train``."""
    import reasongym
    from reasongym.envs.export import reward_function, to_dataset

    rows = [{"q": "What is 2 + 2?", "a": "4"}, {"q": "What is 3 * 3?", "a": "9"}]
    reasongym.register_dataset(
        "me/TinyExport-v0", rows, question="q", answer="a", answer_type="math", override=True
    )
    env = reasongym.make("me/TinyExport-v0")
    data = to_dataset(env, None)
    assert sorted(data["answer"]) == ["4", "9"] and set(data["split"]) == {"test"}
    columns = {key: data[key] for key in ("answer", "split", "index")}
    assert reward_function(env)(data["prompt"], [f"\\boxed{{{a}}}" for a in data["answer"]], **columns) == [
        1.0,
        1.0,
    ]
    generated = reasongym.make("reasongym/Arithmetic-v0")
    assert set(to_dataset(generated, 3)["split"]) == {"train"}  # an environment with a train split keeps it
