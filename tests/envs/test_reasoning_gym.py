"""reasoning-gym's tasks as environments: the table, every task's make / reset / right / wrong, splits, levels,
the per-task graders and their safety rules. Skips when reasoning-gym is not installed (the extra)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import reasongym
from reasongym.envs.core import format_final_answer, gold_answer_text
from reasongym.envs.rgym import REASONING_GYM_ENVS
from reasongym.envs.rgym.grading import ANSWER_FORMS, reaches_eval_safely
from reasongym.envs.rgym.table import EVAL_GUARDED, TASKS, levels_of
from reasongym.errors import ConfigError
from reasongym.verifiers.version import verifier_version

reasoning_gym = pytest.importorskip("reasoning_gym", reason="needs the reasoning-gym extra")
IDS = [entry.id for entry in REASONING_GYM_ENVS]
_TIMES: dict[str, float] = {}


def _env(task: str, **options):  # noqa: ANN202 - a gymnasium env
    return reasongym.make(f"reasoning_gym/{task}-v0", **options).unwrapped


def _gold(env) -> str:  # noqa: ANN001
    return format_final_answer(env.problem.answer_type, gold_answer_text(env.problem))


# --- the table ------------------------------------------------------------------------------------


def test_the_table_names_every_installed_task_but_the_mixture() -> None:
    from reasoning_gym.factory import CURRICULA, DATASETS

    assert set(TASKS) == set(DATASETS) - {"composite"}
    for name in TASKS:
        if levels_of(name):
            curriculum = CURRICULA[name]()
            most = max(len(attribute.levels) for attribute in curriculum.attributes.values())
            assert set(levels_of(name)) <= set(range(1, most + 1)), name


def test_listing_imports_no_reasoning_gym_task() -> None:
    code = (
        "import sys, reasongym; ids = [e.id for e in reasongym.list_envs()]; "
        "print(sum(i.startswith('reasoning_gym/') for i in ids), 'reasoning_gym' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(len(TASKS)), "False"]


def test_list_shows_the_source_of_each_environment() -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "reasongym", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    rows = {row["id"]: row for row in map(json.loads, out.stdout.splitlines())}
    assert rows["reasoning_gym/gcd-v0"]["source"].startswith("reasoning-gym ")
    assert rows["reasongym/Arithmetic-v0"]["source"] == "reasongym"


def test_without_reasoning_gym_making_one_says_which_extra_to_install() -> None:
    code = (
        "import sys; sys.modules['reasoning_gym'] = None\n"
        "import reasongym\n"
        "try:\n    reasongym.make('reasoning_gym/gcd-v0')\nexcept Exception as e:\n    print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'reasongym[reasoning-gym]'" in out.stdout


# --- every task: make, reset, a right and a wrong answer -------------------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_every_task_grades_its_gold_right_and_another_answer_wrong(env_id: str) -> None:
    start = time.perf_counter()
    env = reasongym.make(env_id).unwrapped
    prompt, info = env.reset(seed=0)
    assert "<answer>" in prompt and info["split"] == "train"
    assert env.step(_gold(env))[1] == 1.0, env.step.__doc__
    env.reset(seed=0)
    _, reward, terminated, _, step_info = env.step("<answer>zzz qqq 123</answer>")
    assert (reward, terminated, step_info["correct"]) == (0.0, True, False)
    assert step_info["verifier"].startswith(f"reasoning_gym/{env_id.split('/')[1][:-3]}:")
    _TIMES[env_id] = time.perf_counter() - start


def test_the_task_checks_take_seconds_in_all() -> None:
    if len(_TIMES) < len(IDS):
        pytest.skip("runs after the per-task tests, in the same session")
    slowest = sorted(_TIMES.items(), key=lambda item: -item[1])[:5]
    assert sum(_TIMES.values()) < 60, slowest  # 11 s on two shared cores, 5 s of it sokoban


# --- streams: pure functions of (seed, split, level, index); splits disjoint ---------------------------


def test_problem_i_is_a_pure_function_of_seed_split_level_and_index() -> None:
    one, two, other = (
        _env("basic_arithmetic"),
        _env("basic_arithmetic"),
        reasongym.make("reasoning_gym/basic_arithmetic-v0", source_kwargs={"seed": 1}).unwrapped,
    )
    for index in range(5):
        assert one.problem_at(index, "test", 2) == two.problem_at(index, "test", 2)
    assert [one.problem_at(i, "train").question for i in range(5)] != [
        other.problem_at(i, "train").question for i in range(5)
    ]


def test_train_validation_and_test_streams_share_no_question() -> None:
    env = _env("gcd")  # level 1: small numbers, so a question repeats within a split
    questions = {
        split: {env.problem_at(i, split, 1).question for i in range(150)}
        for split in ("train", "validation", "test")
    }
    assert not questions["train"] & questions["test"]
    assert not questions["train"] & questions["validation"]
    assert not questions["validation"] & questions["test"]


def test_a_level_is_the_curriculum_level_and_a_bad_one_lists_the_levels() -> None:
    env = _env("basic_arithmetic")
    easy, hard = env.problem_at(0, "train", 1), env.problem_at(0, "train", 5)
    assert (easy.difficulty, hard.difficulty) == (1, 5)
    assert easy.metadata["rg_difficulty"] != hard.metadata["rg_difficulty"]
    with pytest.raises(ConfigError, match=r"difficulty 9 is not one of \[1, 2, 3, 4, 5\]"):
        env.problem_at(0, "train", 9)
    with pytest.raises(ConfigError, match="no curriculum"):
        _env("gsm_symbolic").problem_at(0, "train", 1)


def test_an_unknown_task_names_the_nearest() -> None:
    from reasongym.envs.rgym.source import ReasoningGymSource

    with pytest.raises(ConfigError, match="did you mean 'basic_arithmetic'"):
        ReasoningGymSource("basic_arithmetc")


# --- graders ---------------------------------------------------------------------------------------


def test_math_graded_tasks_accept_equivalent_forms_their_scorer_refuses() -> None:
    env = _env("products")
    env.reset(seed=3)
    gold, entry = env.problem.answer, env.rg_source.entry_of(env.problem)
    written = f"{int(gold):,}" if abs(int(gold)) >= 1000 else f"{gold}.0"
    assert env.step(f"<answer>{written}</answer>")[4]["correct"] is True
    dataset = env.rg_source.dataset(None)
    assert dataset.score_answer(gold, entry) == 1.0


def test_game_of_life_halting_garbage_is_wrong_although_their_scorer_gives_it_1() -> None:
    env = _env("game_of_life_halting")
    env.reset(seed=0)
    entry = env.rg_source.entry_of(env.problem)
    assert env.rg_source.dataset(None).score_answer("zzz", entry) == 1.0  # their bool("zzz") == bool("False")
    assert env.step("<answer>zzz</answer>")[4]["correct"] is False


def test_code_never_reaches_their_eval() -> None:
    env = _env("binary_matrix")
    env.reset(seed=0)
    info = env.step("<answer>__import__('os').system('echo pwned')</answer>")[4]
    assert (info["correct"], info["outcome"]) == (False, "refused")
    assert "eval" in info["reason"]
    assert reaches_eval_safely("1 0 1\n0 1 0") and reaches_eval_safely("[[1, 0], [0, -1]]")
    assert not reaches_eval_safely("9**9**9") and not reaches_eval_safely("().__class__")
    assert EVAL_GUARDED <= set(TASKS)


def test_a_scorer_that_raises_refuses_the_answer_and_partial_credit_is_wrong() -> None:
    env = _env("prime_factorization")
    env.reset(seed=0)
    info = env.step("<answer>zzz</answer>")[4]
    assert (info["outcome"], info["reason"]) == (
        "refused",
        "prime_factorization's score_answer raised ValueError.",
    )
    env = _env("power_function")
    env.reset(seed=0)
    info = env.step("<answer>1</answer>")[4]
    assert info["outcome"] == "wrong" and "gave 0.01 (correct only at 1)" in info["reason"]


def test_lenient_scorers_need_the_answer_form() -> None:
    env = _env("quantum_lock")
    env.reset(seed=0)
    gold = env.problem.answer
    assert env.step(f"<answer>{gold}</answer>")[4]["correct"] is True
    env.reset(seed=0)
    info = env.step(f"<answer>{gold} CAB</answer>")[4]  # their scorer keeps the letters A-C of any text
    assert info["correct"] is False and "answer form" in info["reason"]
    assert set(ANSWER_FORMS) <= set(TASKS)


def test_countdown_tasks_use_our_countdown_verifier() -> None:
    env = _env("puzzle24")
    env.reset(seed=0)
    assert env.problem.answer.startswith("target=24; numbers=")
    assert env.step(f"<answer>{env.problem.metadata['reference']}</answer>")[4]["correct"] is True


def test_no_oracle_tasks_get_a_reference_that_their_scorer_accepts() -> None:
    for task in ("rush_hour", "boxnet", "graph_color", "propositional_logic", "rubiks_cube"):
        env = _env(task)
        env.reset(seed=1)
        entry = env.rg_source.entry_of(env.problem)
        assert entry["answer"] is None
        assert env.rg_source.dataset(None).score_answer(env.problem.answer, entry) == 1.0, task


def test_hint_shows_a_reference_answer() -> None:
    env = _env("countdown")
    prompt, _ = env.reset(seed=0, options={"hint": True})
    assert env.problem.metadata["reference"] in prompt


def test_a_judge_is_refused_with_the_reason_not_ignored() -> None:
    from reasongym.verifiers.judge import JudgeConfig

    judge = JudgeConfig(model="m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="reject other valid solutions; leave judge unset"):
        _env("sudoku", judge=judge)
    env = _env("gcd")
    env.reset(seed=0)
    assert env.step(_gold(env))[4]["verifier"].startswith(
        f"reasoning_gym/gcd:{verifier_version('math')}+tagged/v2@rg"
    )


def test_each_grader_names_the_rules_that_decide_its_verdicts() -> None:
    problems = {
        task: _env(task).problem_at(0) for task in ("gcd", "sudoku", "game_of_life_halting", "puzzle24")
    }
    versions = {
        task: _env(task).verifier_version(problem).split("@")[0] for task, problem in problems.items()
    }
    assert versions == {
        "gcd": f"reasoning_gym/gcd:{verifier_version('math')}+tagged/v2",
        "sudoku": "reasoning_gym/sudoku:task+tagged/v2",
        "game_of_life_halting": f"reasoning_gym/game_of_life_halting:{verifier_version('exact')}+tagged/v2",
        "puzzle24": f"reasoning_gym/puzzle24:{verifier_version('countdown')}",
    }
