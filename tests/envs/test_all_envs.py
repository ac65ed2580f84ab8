"""Every registered environment, whatever is registered when the tests run, passes the same checks.

For each id: reasongym's conformance checker (determinism across fresh instances, gold answer correct,
empty / garbage / near-miss / gold-then-another-answer wrong, JSON-serialisable info, step time budget,
Gymnasium's check_env), plus Gymnasium's check_env on an instance made directly and one from
``gymnasium.make``. Dataset environments skip when the benchmark data is not available.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import reasongym
from reasongym.envs.catalog import CatalogEntry
from reasongym.envs.checker import ConformanceError, check_reasoning_env, negative_completions
from reasongym.envs.core import ReasoningEnv, format_final_answer
from reasongym.envs.problem import Problem
from reasongym.envs.sources import GeneratorSource
from reasongym.verifiers import Outcome, Verdict

# Missing data must fail fast instead of retrying the (unreachable) Hugging Face hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

ENTRIES = reasongym.list_envs()


def _is_reasoning_gym(entry: CatalogEntry) -> bool:
    return entry.id.startswith("reasoning_gym/")


def _skip_without_data(entry: CatalogEntry) -> None:
    if _is_reasoning_gym(entry):
        pytest.importorskip("reasoning_gym", reason="needs the reasoning-gym extra")
        return
    if entry.size == "procedural":
        return
    root = os.environ.get("REASONGYM_DATA_DIR")
    if not root or not Path(root).is_dir():
        pytest.skip(f"{entry.id}: benchmark data not available (set REASONGYM_DATA_DIR)")


@pytest.fixture(params=ENTRIES, ids=[entry.id for entry in ENTRIES])
def entry(request: pytest.FixtureRequest) -> CatalogEntry:
    _skip_without_data(request.param)
    return request.param


def test_conformance(entry: CatalogEntry) -> None:
    # reasoning-gym's ~100 tasks: one problem each (their generators take up to a second per problem).
    check_reasoning_env(reasongym.make(entry.id), n=1 if _is_reasoning_gym(entry) else 3)


def test_gymnasium_check_env_through_make(entry: CatalogEntry) -> None:
    if _is_reasoning_gym(entry):
        pytest.skip("check_reasoning_env runs Gymnasium's check_env on every reasoning-gym task")
    env = gymnasium.make(entry.id)
    check_env(env.unwrapped)  # render and close checks included: they go through env.spec
    env.close()


def test_gymnasium_check_env_on_a_directly_made_instance(entry: CatalogEntry) -> None:
    if _is_reasoning_gym(entry):
        pytest.skip("check_reasoning_env runs Gymnasium's check_env on every reasoning-gym task")
    env = ReasoningEnv(entry.source, entry.source_kwargs, **entry.env_kwargs)
    check_env(env, skip_render_check=True)


def test_registered_answer_type_matches_the_problems(entry: CatalogEntry) -> None:
    env = reasongym.make(entry.id).unwrapped
    assert {env.reset(seed=s)[1]["answer_type"] for s in range(3)} == {entry.answer_type}


# --- the checker catches broken environments ------------------------------------------------------


def _sum_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    a, b = (int(x) for x in rng.integers(0, 100, size=2))
    return Problem(f"What is {a} + {b}?", str(a + b), "integer")


def _unseeded_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    a = random.randint(0, 10**9)  # noqa: S311 - the bug under test: a global RNG ignores the seed
    return Problem(f"What is {a} + 1?", str(a + 1), "integer")


class SubstringCreditEnv(ReasoningEnv):
    """Gives credit whenever the gold answer appears anywhere: the lenient-verifier anti-pattern."""

    def score(self, problem: Problem, completion: str) -> Verdict:
        hit = problem.answer in completion
        return Verdict(hit, Outcome.CORRECT if hit else Outcome.WRONG, None, "substring")


class HalfRewardEnv(ReasoningEnv):
    """Grades honestly but pays half the configured reward for a correct answer."""

    def compute_reward(self, verdict: Verdict, completion: str) -> float:
        return 0.5 * super().compute_reward(verdict, completion)


class NumpyMetadataEnv(ReasoningEnv):
    """Leaks a numpy array into info, which is not JSON-serialisable."""

    def reset(self, *, seed=None, options=None):
        prompt, info = super().reset(seed=seed, options=options)
        info["metadata"]["array"] = np.arange(3)
        return prompt, info


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            ReasoningEnv(GeneratorSource("g", _unseeded_problem, "integer")),
            "showed different problems in two fresh",
        ),
        (SubstringCreditEnv(GeneratorSource("g", _sum_problem, "integer")), "must be wrong"),
        (NumpyMetadataEnv(GeneratorSource("g", _sum_problem, "integer")), "is not JSON-serialisable"),
        (
            HalfRewardEnv(GeneratorSource("g", _sum_problem, "integer")),
            r"was graded 'correct' with reward 0\.5 ",
        ),
    ],
    ids=["unseeded", "substring-credit", "numpy-metadata", "half-reward"],
)
def test_checker_rejects_broken_envs(env: ReasoningEnv, message: str) -> None:
    with pytest.raises(ConformanceError, match=message):
        check_reasoning_env(env, n=2)


def test_checker_accepts_a_sound_env_made_directly() -> None:
    check_reasoning_env(ReasoningEnv(GeneratorSource("g", _sum_problem, "integer")), n=3)


@pytest.mark.parametrize(
    ("problem", "last_line"),
    [
        (Problem("q", "B", "choice", choices=(("A", "x"), ("B", "y"))), "The answer is (A)."),
        (Problem("q", "yes", "yesno"), "The answer is no."),
        (Problem("q", "1", "integer"), "The final answer is \\boxed{2}."),
        (Problem("q", "42", "math"), "The final answer is \\boxed{1}."),
    ],
)
def test_gold_plus_junk_ends_in_a_different_answer(problem: Problem, last_line: str) -> None:
    negatives = negative_completions(problem)
    assert negatives["empty text"] == ""
    junk = negatives["the gold answer followed by a different final answer"]
    assert junk.splitlines()[0] == format_final_answer(problem.answer_type, problem.answer)
    assert junk.splitlines()[-1] == last_line
