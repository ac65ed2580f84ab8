"""STaR's pure rules, pinned at their edges: config messages, step growth, the plateau rule, the metrics line.

Written against the survivors of mutation testing (benchmarks/README.md, "Mutation testing"); these tests
need no model, so a mutant of star.py costs a fraction of a second to check.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from reasongym.agents.rationales import KeptExample, write_kept
from reasongym.agents.star import (
    IterationStats,
    STaRConfig,
    STaRResult,
    _Loop,
    _train_indices,
    iteration_metrics,
    sft_steps_for_iteration,
)
from reasongym.errors import ConfigError


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"step_growth": 0.99},
            "step_growth=0.99 is not allowed; expected a float in [1, 100] (1.2 = +20%/iteration)",
        ),
        (
            {"step_growth": math.inf},
            "step_growth=inf is not allowed; expected a float in [1, 100] (1.2 = +20%/iteration)",
        ),
        (
            {"step_growth": math.nan},
            "step_growth=nan is not allowed; expected a float in [1, 100] (1.2 = +20%/iteration)",
        ),
        (
            {"few_shot_examples": 3, "train_start": 2},
            "few_shot_examples=3 is not allowed with train_start=2; few-shot examples come from the problems "
            "before train_start, so set train_start >= 3",
        ),
        (
            {"max_kept_per_problem": 0},
            "max_kept_per_problem=0 is not allowed; expected an integer in [1, 1048576]",
        ),
        ({"train_start": -1}, "train_start=-1 is not allowed; expected an integer in [0, 2147483647]"),
        ({"few_shot_examples": -1}, "few_shot_examples=-1 is not allowed; expected an integer in [0, 1024]"),
        ({"sft_steps": 0}, "sft_steps=0 is not allowed; expected an integer in [1, 2147483647]"),
        (
            {"num_train_problems": 0},
            "num_train_problems=0 is not allowed; expected an integer in [1, 2147483647] or None",
        ),
        ({"patience": 0}, "patience=0 is not allowed; expected an integer in [1, 2147483647] or None"),
    ],
)
def test_star_config_messages_are_pinned_whole(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        STaRConfig(**overrides)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "overrides",
    [
        {"step_growth": 1.0},  # the bound is inclusive
        {"few_shot_examples": 3, "train_start": 3},  # as many examples as problems before the start
        {"max_kept_per_problem": 1, "train_start": 0, "few_shot_examples": 0, "sft_steps": 1},
        {"num_train_problems": 1, "patience": 1},
        {"num_train_problems": None, "patience": None},
    ],
)
def test_star_config_accepts_the_edges(overrides: dict) -> None:
    cfg = STaRConfig(**overrides)
    assert {name: getattr(cfg, name) for name in overrides} == overrides


def test_star_config_defaults_are_the_papers() -> None:
    cfg = STaRConfig()
    assert (
        cfg.rationalize,
        cfg.max_kept_per_problem,
        cfg.drop_hint_mentions,
        cfg.faithful_rationalization,
    ) == (
        True,
        1,
        True,
        False,
    )
    assert (cfg.num_train_problems, cfg.train_start, cfg.few_shot_examples) == (None, 0, 0)
    assert (cfg.sft_steps, cfg.step_growth, cfg.restart_from_base, cfg.patience) == (40, 1.2, True, None)
    assert cfg.sft.batch_size == 8


@pytest.mark.parametrize(
    ("sft_steps", "growth", "iteration", "expected"),
    [
        (40, 1.2, 1, 40),  # 40 * 1.2^0
        (40, 1.2, 2, 48),  # 40 * 1.2
        (40, 1.2, 3, 58),  # 57.6 rounds up
        (1, 1.0, 7, 1),
        (5, 1.1, 2, 6),  # 5.5 rounds half to even: 6
        (3, 1.5, 2, 4),  # 4.5 rounds half to even: 4
        (2, 1.25, 3, 3),  # 3.125
    ],
)
def test_sft_steps_rows_by_hand(sft_steps: int, growth: float, iteration: int, expected: int) -> None:
    cfg = STaRConfig(sft_steps=sft_steps, step_growth=growth)
    assert sft_steps_for_iteration(cfg, iteration) == expected


@pytest.mark.parametrize("iteration", [0, -1])
def test_sft_steps_refuse_iterations_before_the_first(iteration: int) -> None:
    with pytest.raises(ConfigError) as raised:
        sft_steps_for_iteration(STaRConfig(), iteration)
    assert str(raised.value) == f"iteration={iteration} is not allowed; iterations count from 1"


def _stats(**overrides: object) -> IterationStats:
    values = dict(
        iteration=2,
        accuracy_before=0.25,
        accuracy_after=0.5,
        train_accuracy=0.75,
        kept_direct=3,
        kept_rationalized=4,
        rationalization_attempts=5,
        sft_steps=6,
        sft_final_loss=0.125,
    )
    return IterationStats(**{**values, **overrides})


def test_the_metrics_line_names_every_count() -> None:
    assert iteration_metrics(_stats(rationalized_unfaithful=2)) == {
        "eval/pass@1": 0.5,
        "star/accuracy_before": 0.25,
        "star/train_accuracy": 0.75,
        "star/kept_direct": 3,
        "star/kept_rationalized": 4,
        "star/kept_total": 7,
        "star/rationalization_attempts": 5,
        "star/rationalized_unfaithful": 2,
        "star/sft_steps": 6,
        "star/sft_final_loss": 0.125,
    }
    assert _stats().rationalized_unfaithful == 0
    assert math.isnan(iteration_metrics(_stats(sft_final_loss=None))["star/sft_final_loss"])


@pytest.mark.parametrize(
    ("initial", "after", "final", "gain"),
    [(0.25, [], 0.25, 0.0), (0.25, [0.5, 0.375], 0.375, 0.125), (0.5, [0.25], 0.25, -0.25)],
)
def test_the_result_reports_the_last_accuracy_and_the_gain(
    initial: float, after: list, final: float, gain: float
) -> None:
    result = STaRResult(initial, tuple(_stats(accuracy_after=value) for value in after), None, None)
    assert (result.final_accuracy, result.accuracy_gain) == (final, gain)


def _loop(patience: int | None, initial: float | None, after: list[float]) -> _Loop:
    missing = dataclasses.MISSING
    required = [f for f in dataclasses.fields(_Loop) if f.default is missing and f.default_factory is missing]
    loop = _Loop(STaRConfig(patience=patience), *[None] * (len(required) - 1), initial_accuracy=initial)
    loop.history = [SimpleNamespace(accuracy_after=value) for value in after]
    return loop


@pytest.mark.parametrize(
    ("patience", "initial", "after", "plateaued"),
    [
        (None, 0.5, [0.1] * 5, False),  # no patience: never stops early
        (1, 0.5, [], False),
        (1, 0.5, [0.5], True),  # equal to the best before is no gain
        (1, 0.5, [0.75], False),
        (1, None, [0.0], True),  # an unknown base accuracy counts as 0
        (1, None, [0.25], False),
        (3, 0.5, [0.25, 0.25], False),  # fewer iterations than the patience
        (3, 0.5, [0.25, 0.25, 0.25], True),  # window of 3 against the base alone
        (2, 0.25, [0.75, 0.5, 0.5], True),  # the best (0.75) lies before the window
        (2, 0.25, [0.75, 0.5, 1.0], False),
    ],
)
def test_the_plateau_rule_rows_by_hand(
    patience: int | None, initial: float | None, after: list, plateaued: bool
) -> None:
    assert _loop(patience, initial, after).plateaued() is plateaued


def _sized(size: int | None) -> SimpleNamespace:
    return SimpleNamespace(source=SimpleNamespace(size=lambda split, difficulty: size))


TRAIN = SimpleNamespace(split="train", difficulty=None)


@pytest.mark.parametrize(
    ("size", "overrides", "expected"),
    [
        (10, {}, list(range(10))),  # every problem of a finite split
        (10, {"train_start": 3}, [3, 4, 5, 6, 7, 8, 9]),
        (10, {"num_train_problems": 4}, [0, 1, 2, 3]),
        (10, {"train_start": 8, "num_train_problems": 4}, [8, 9]),  # cut at the split's end
        (None, {"train_start": 1, "num_train_problems": 2}, [1, 2]),  # an endless split
    ],
)
def test_training_indices_rows_by_hand(size: int | None, overrides: dict, expected: list) -> None:
    assert _train_indices(_sized(size), STaRConfig(**overrides), TRAIN) == expected


@pytest.mark.parametrize(
    ("size", "overrides", "message"),
    [
        (
            10,
            {"train_start": 10},
            "train_start=10 leaves no training problems in split 'train' (10 problems); choose train_start < 10",
        ),
        (
            10,
            {"train_start": 12, "num_train_problems": 2},
            "train_start=12 leaves no training problems in split 'train' (10 problems); choose train_start < 10",
        ),
        (
            None,
            {},
            "num_train_problems=None is not allowed for split 'train', which is endless (procedural); "
            "set num_train_problems to an integer >= 1",
        ),
    ],
)
def test_training_indices_refusals_are_pinned_whole(size: int | None, overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _train_indices(_sized(size), STaRConfig(**overrides), TRAIN)
    assert str(raised.value) == message


def test_kept_examples_are_written_whole_replacing_a_crashed_attempt(tmp_path: Path) -> None:
    folder = tmp_path / "iteration-007"
    folder.mkdir()
    for stale in ("metrics.jsonl", "config.json", "kept.jsonl"):
        (folder / stale).write_text("stale", encoding="utf-8")
    kept = [
        KeptExample("p1", 4, "Q1", "A1", "direct"),
        KeptExample("p2", 9, "Q2", "A2 \u00e9", "rationalized"),
    ]
    assert write_kept(tmp_path, 7, kept) == folder
    assert sorted(path.name for path in folder.iterdir()) == ["kept.jsonl"]  # stale files gone, no temp left
    lines = (folder / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "iteration": 7,
            "problem_id": "p1",
            "index": 4,
            "prompt": "Q1",
            "completion": "A1",
            "source": "direct",
        },
        {
            "iteration": 7,
            "problem_id": "p2",
            "index": 9,
            "prompt": "Q2",
            "completion": "A2 \u00e9",
            "source": "rationalized",
        },
    ]
    assert write_kept(tmp_path, 7, []) == folder  # the folder exists: no error
    assert (folder / "kept.jsonl").read_text(encoding="utf-8") == ""


@pytest.mark.parametrize(
    ("patience", "initial", "after", "plateaued"),
    [
        (2, 0.5, [0.75, 0.25], False),  # the window is the LAST two: 0.75 in it beat the 0.5 before
        (2, 0.75, [0.5, 0.25], True),
        (1, 0.5, [0.75, 0.25, 0.5], True),  # the window is the last one: 0.5 does not beat 0.75
    ],
)
def test_the_plateau_window_is_counted_from_the_end(
    patience: int, initial: float, after: list, plateaued: bool
) -> None:
    assert _loop(patience, initial, after).plateaued() is plateaued


def test_training_indices_count_the_problems_of_the_tasks_split_and_difficulty() -> None:
    sizes = {("train", None): 10, ("train", 2): 3, ("test", 2): 5}
    env = SimpleNamespace(source=SimpleNamespace(size=lambda split, difficulty: sizes[split, difficulty]))
    task = SimpleNamespace(split="train", difficulty=2)
    assert _train_indices(env, STaRConfig(), task) == [0, 1, 2]


class _Recorder:
    """Stands in for `rationales.rationalize` / `stands_alone`: records each call, returns a fixed answer."""

    def __init__(self, result: object) -> None:
        self.result, self.calls = result, []

    def __call__(self, *args: object, **kwargs: object) -> object:
        self.calls.append((args, kwargs))
        return self.result


def _rationalize_loop(monkeypatch: pytest.MonkeyPatch, keep: list[bool], **cfg: object) -> tuple:
    import reasongym.agents.star as star

    kept = [KeptExample(f"p{i}", i, f"Q{i}", f"A{i}", "rationalized") for i in (7, 3, 9)]
    hinted, faithful = _Recorder(kept), _Recorder(keep)
    monkeypatch.setattr(star, "rationalize", hinted)
    monkeypatch.setattr(star, "stands_alone", faithful)
    loop = _loop(None, 0.0, [])
    loop.cfg = STaRConfig(**cfg)
    loop.task, loop.generator, loop.rationale_generator = "TASK", "POLICY", "RATIONALE-MODEL"
    return loop, kept, hinted, faithful


def test_the_faithfulness_check_keeps_the_rationales_that_stand_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop, kept, hinted, faithful = _rationalize_loop(
        monkeypatch,
        [True, False, False],
        faithful_rationalization=True,
        max_kept_per_problem=2,
        drop_hint_mentions=False,
    )
    params = SimpleNamespace(max_new_tokens=33)
    problems = ["problem 9", "problem 3", "problem 7"]  # indices 9, 3, 7: matched back by index, not order
    assert loop.rationalize(problems, [9, 3, 7], params) == ([kept[0]], 2)
    assert hinted.calls == [
        (
            ("TASK", "RATIONALE-MODEL", problems, [9, 3, 7], params),
            {"max_per_problem": 2, "drop_hint_mentions": False},
        )
    ]
    # the policy (not the rationale model) judges each kept example, shown its own problem
    assert faithful.calls == [
        (("TASK", "POLICY", ["problem 7", "problem 3", "problem 9"], kept), {"max_new_tokens": 33})
    ]


@pytest.mark.parametrize(
    ("cfg", "problems", "expected_calls"),
    [
        ({"faithful_rationalization": False}, ["problem 7", "problem 3", "problem 9"], (1, 0)),  # kept as is
        (
            {"rationalize": False, "faithful_rationalization": True},
            ["problem 7", "problem 3", "problem 9"],
            (0, 0),
        ),
        ({"faithful_rationalization": True}, [], (0, 0)),  # nothing missed: nothing to retry
    ],
)
def test_rationalization_is_skipped_when_off_or_empty(
    monkeypatch: pytest.MonkeyPatch, cfg: dict, problems: list, expected_calls: tuple
) -> None:
    loop, kept, hinted, faithful = _rationalize_loop(monkeypatch, [False, False, False], **cfg)
    result = loop.rationalize(problems, [7, 3, 9][: len(problems)], SimpleNamespace(max_new_tokens=5))
    expected = (kept, 0) if expected_calls == (1, 0) else ([], 0)
    assert result == expected
    assert (len(hinted.calls), len(faithful.calls)) == expected_calls
    assert hinted.calls == [] or hinted.calls[0][1] == {"max_per_problem": 1, "drop_hint_mentions": True}


def test_no_verified_hinted_rationale_skips_the_faithfulness_check(monkeypatch: pytest.MonkeyPatch) -> None:
    loop, _, hinted, faithful = _rationalize_loop(monkeypatch, [], faithful_rationalization=True)
    hinted.result = []
    assert loop.rationalize(["problem 7"], [7], SimpleNamespace(max_new_tokens=5)) == ([], 0)
    assert (len(hinted.calls), len(faithful.calls)) == (1, 0)


def test_held_out_accuracy_is_greedy_pass_at_1_on_the_tasks_eval_split(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import reasongym.agents.star as star

    greedy = _Recorder(0.375)
    monkeypatch.setattr(star, "greedy_pass_at_1", greedy)
    task = SimpleNamespace(env="ENV", tokenizer="TOK", eval_split="test", difficulty=3)
    run, rollout = SimpleNamespace(eval_problems=12), SimpleNamespace(max_new_tokens=77)
    assert star.evaluate_accuracy(task, "POLICY", run, rollout) == 0.375
    assert greedy.calls == [
        (
            ("POLICY", "ENV"),
            {
                "tokenizer": "TOK",
                "split": "test",
                "num_problems": 12,
                "difficulty": 3,
                "max_new_tokens": 77,
                "distributed": False,  # one process here
            },
        )
    ]


@pytest.mark.parametrize(("world_size", "shared"), [(1, False), (2, True), (3, True)])
def test_held_out_evaluation_is_shared_across_two_or_more_processes(
    monkeypatch: pytest.MonkeyPatch, world_size: int, shared: bool
) -> None:
    import reasongym.agents.star as star

    greedy = _Recorder(0.5)
    monkeypatch.setattr(star, "greedy_pass_at_1", greedy)
    monkeypatch.setattr(star.distributed, "current", lambda: SimpleNamespace(world_size=world_size))
    task = SimpleNamespace(env="ENV", tokenizer="TOK", eval_split="test", difficulty=None)
    star.evaluate_accuracy(
        task, "POLICY", SimpleNamespace(eval_problems=4), SimpleNamespace(max_new_tokens=8)
    )
    assert greedy.calls[0][1]["distributed"] is shared
