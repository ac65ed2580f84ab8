"""STaR: filtering, rationalization without the hint, restart from base, step growth, resume, learning."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import reasongym
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.config import RunConfig
from reasongym.agents.rationales import KeptExample, rationale_without_answer, stands_alone, write_kept
from reasongym.agents.sft import SFTConfig, sft_pairs_from_env, train_sft
from reasongym.agents.star import (
    STEP_NAMES,
    IterationStats,
    STaRConfig,
    STaRResult,
    STaRTask,
    _Loop,
    _train_indices,
    filter_correct,
    generate_rationales,
    iteration_metrics,
    rationalize,
    sft_steps_for_iteration,
    train_star,
)
from reasongym.envs.core import format_final_answer, gold_answer_text
from reasongym.errors import ConfigError
from reasongym.generation import Completion, SamplingParams
from reasongym.policy.loading import format_prompt
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model
from reasongym.runs.metrics import read_metrics

QUIET = {"lr": 1e-3, "lr_schedule": "cosine", "progress_bar": False, "tensorboard": False}
ARITHMETIC = "reasongym/Arithmetic-v0"


class _Crash(RuntimeError):
    """Raised from a hook to simulate a crash."""


class ScriptedGenerator:
    """A stand-in policy that knows the gold answers: it solves the problems it is told to solve.

    Unhinted, it answers problem ``i`` correctly when ``i in solves``, else with a wrong answer. Hinted
    (the prompt shows the gold), it answers correctly when ``i in hinted_solves`` and refers to the
    hint when ``i in mentions_hint``. Problems are recognised by their question text.
    """

    def __init__(
        self,
        problems: dict[int, object],
        *,
        solves: set[int],
        hinted_solves: set[int] = frozenset(),
        mentions_hint: set[int] = frozenset(),
        truncated: set[int] = frozenset(),
    ) -> None:
        self.problems, self.solves, self.hinted_solves = problems, solves, hinted_solves
        self.mentions_hint, self.truncated = mentions_hint, truncated
        self.hinted_prompts: list[str] = []

    def _answer(self, index: int, correct: bool, mention: bool) -> str:
        problem = self.problems[index]
        if not correct:
            return "I am not sure, so I will not answer."
        final = format_final_answer(problem.answer_type, gold_answer_text(problem))
        return ("The hint tells me the result. " if mention else "Let me work it out. ") + final

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        outputs = []
        for prompt in prompts:
            hinted = "Hint:" in prompt
            # The last question in the prompt is the one asked (few-shot examples come first).
            index = max(self.problems, key=lambda i: prompt.rfind(self.problems[i].question))
            if hinted:
                self.hinted_prompts.append(prompt)
                correct, mention = index in self.hinted_solves, index in self.mentions_hint
            else:
                correct, mention = index in self.solves, False
            text = self._answer(index, correct, mention)
            finish = "length" if index in self.truncated and not hinted else "stop"
            outputs.append([Completion(text, None, None, finish) for _ in range(params.n)])
        return outputs


def _short_arithmetic() -> object:
    return reasongym.make(ARITHMETIC, difficulty=1, prompt_template="{question}")


def _loop_config(**overrides: object) -> dict[str, object]:
    settings = dict(
        max_steps=3,
        num_train_problems=6,
        eval_problems=4,
        max_new_tokens=8,
        sft_steps=2,
        sft={"batch_size": 4},
        **QUIET,
    )
    return preset_configs("default", "star", **{**settings, **overrides})


def _star(
    configs: dict[str, object], model: object, tokenizer: object, env: object, **kwargs: object
) -> object:
    return train_star(
        configs["star"], model, tokenizer, env, run=configs["run"], rollout=configs["rollout"], **kwargs
    )


def _scripted(env: object, configs: dict[str, object], **kwargs: set[int]) -> ScriptedGenerator:
    base, cfg = env.unwrapped, configs["star"]
    indices = range(cfg.train_start, cfg.train_start + cfg.num_train_problems)
    problems = {i: base.problem_at(i, split="train") for i in indices}
    return ScriptedGenerator(problems, **kwargs)


# ---------------------------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"max_steps": 0}, "max_steps=0 is not allowed; expected an integer in [1, 2147483647]"),
        ({"group_size": 0}, "group_size=0 is not allowed"),
        ({"temperature": -0.5}, "temperature=-0.5 is not allowed; expected a float in [0, 100]"),
        ({"top_p": 0.0}, "top_p=0.0 is not allowed; expected a float in (0, 1]"),
        ({"step_growth": 0.8}, "step_growth=0.8 is not allowed; expected a float in [1, 100]"),
        (
            {"num_train_problems": 0},
            "num_train_problems=0 is not allowed; expected an integer in [1, 2147483647] or None",
        ),
        ({"patience": 0}, "patience=0 is not allowed"),
        ({"few_shot_examples": 3}, "few_shot_examples=3 is not allowed with train_start=0"),
        ({"sft": {"lr": 1e-5}}, "unknown field 'lr' of SFTConfig"),
    ],
)
def test_config_rejects_bad_values_naming_the_field(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        preset_configs("default", "star", **overrides)
    assert message in str(raised.value)
    with pytest.raises(ConfigError, match=r"sft=\{'batch_size': 4\} is not allowed; expected SFTConfig"):
        STaRConfig(sft={"batch_size": 4})


def test_an_endless_split_needs_a_problem_count(tiny) -> None:
    model, tokenizer = tiny(num_heads=2)
    with pytest.raises(ConfigError, match="num_train_problems=None is not allowed for split 'train'"):
        train_star(STaRConfig(), model, tokenizer, ARITHMETIC)


@pytest.mark.parametrize(
    ("growth", "first", "expected"),
    [(1.2, 40, [40, 48, 58, 69, 83]), (1.0, 10, [10, 10, 10, 10, 10]), (1.5, 4, [4, 6, 9, 14, 20])],
)
def test_fine_tuning_steps_grow_by_the_configured_factor(growth: float, first: int, expected: list) -> None:
    cfg = STaRConfig(step_growth=growth, sft_steps=first)
    assert [sft_steps_for_iteration(cfg, i) for i in range(1, 6)] == expected


def test_the_loop_trains_the_grown_number_of_steps(tmp_path: Path, tiny) -> None:
    env, model_and_tokenizer = _short_arithmetic(), tiny(num_heads=2)
    cfg = _loop_config(step_growth=1.5, sft_steps=2)
    generator = _scripted(env, cfg, solves={0, 1, 2})
    result = _star(cfg, *model_and_tokenizer, env, run_dir=tmp_path, generator=generator)
    assert [s.sft_steps for s in result.iterations] == [2, 3, 4]  # round(2 * 1.5 ** k)
    for iteration, steps in zip((1, 2, 3), (2, 3, 4), strict=True):
        folder = tmp_path / f"iteration-{iteration:03d}"
        assert json.loads((folder / "config.json").read_text())["run"]["max_steps"] == steps
        assert [line["step"] for line in read_metrics(folder)] == list(range(1, steps + 1))


# ---------------------------------------------------------------------------------------------- filter


def _env_cases() -> list[tuple[str, dict]]:
    return [
        (ARITHMETIC, {"difficulty": 2}),  # math, free-form integers
        ("reasongym/QuantityComparison-v0", {"difficulty": 3}),  # procedural multiple choice
        ("reasongym/LinearEquation-v0", {}),  # math, fractions
        ("reasongym/CommonsenseQA-v0", {}),  # multiple choice from data
        ("reasongym/AIME-v0", {}),  # AIME integers from data
    ]


def _make_or_skip(env_id: str, options: dict) -> object:
    try:
        env = reasongym.make(env_id, **options)
        env.unwrapped.problem_at(0, split="train")
    except (FileNotFoundError, reasongym.errors.DatasetNotFoundError) as missing:
        pytest.skip(f"{env_id} data not available: {missing}")
    return env


@pytest.mark.parametrize(("env_id", "options"), _env_cases())
def test_filter_keeps_only_verified_finished_rationales(env_id: str, options: dict, tiny) -> None:
    env = _make_or_skip(env_id, options)
    _, tokenizer = tiny(num_heads=2)
    task = STaRTask(env.unwrapped, tokenizer)
    problems = [env.unwrapped.problem_at(i, split="train") for i in range(8)]
    generator = ScriptedGenerator(dict(enumerate(problems)), solves={0, 2, 3, 6}, truncated={3})
    params = SamplingParams(n=2)
    completions = generate_rationales(task, generator, problems, params)
    kept = filter_correct(task, problems, range(8), completions, source="direct", max_per_problem=3)
    assert [example.index for example in kept] == [0, 2, 6]  # 3 was cut off; duplicates kept once
    for example in kept:
        assert env.unwrapped.score(problems[example.index], example.completion).correct is True
        assert example.prompt == format_prompt(tokenizer, env.unwrapped.messages(problems[example.index]))
        assert example.source == "direct" and example.problem_id == problems[example.index].id


@pytest.mark.parametrize(("env_id", "options"), _env_cases())
def test_rationalized_examples_are_stored_without_the_hint(env_id: str, options: dict, tiny) -> None:
    env = _make_or_skip(env_id, options)
    _, tokenizer = tiny(num_heads=2)
    task = STaRTask(env.unwrapped, tokenizer)
    problems = [env.unwrapped.problem_at(i, split="train") for i in range(6)]
    generator = ScriptedGenerator(
        dict(enumerate(problems)), solves=set(), hinted_solves={1, 2, 4}, mentions_hint={2}
    )
    kept = rationalize(
        task, generator, problems, range(6), SamplingParams(), max_per_problem=1, drop_hint_mentions=True
    )
    assert [example.index for example in kept] == [1, 4]  # 2 refers to a hint the stored prompt lacks
    assert all("Hint:" in prompt for prompt in generator.hinted_prompts)  # the model did see the gold
    for example in kept:
        assert "Hint" not in example.prompt and example.source == "rationalized"
        assert example.prompt == format_prompt(tokenizer, env.unwrapped.messages(problems[example.index]))


class StepFollowingGenerator:
    """A stand-in policy whose hinted rationales state a total and box the hinted gold.

    For problem ``i`` in ``copies`` the stated total is off by one (wrong steps, the answer copied from the
    hint); otherwise it is the gold. Asked to continue a rationale without the hint, it boxes the total the
    rationale states, as a model that follows its own steps does; asked a question plainly, it gives up.
    """

    def __init__(self, problems: dict[int, object], copies: set[int]) -> None:
        self.problems, self.copies = problems, copies
        self.check_prompts: list[str] = []

    def _text(self, prompt: str) -> str:
        index = max(self.problems, key=lambda i: prompt.rfind(self.problems[i].question))
        if "Hint:" in prompt:
            gold = int(self.problems[index].answer)
            stated = gold - 1 if index in self.copies else gold
            return f"The columns add up to {stated}. \\boxed{{{gold}}}"
        if "add up to " not in prompt:
            return "I am not sure."
        self.check_prompts.append(prompt)
        return "\\boxed{" + prompt.rsplit("add up to ", 1)[1].rstrip(". ") + "}"

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        return [[Completion(self._text(p), None, None, "stop")] * params.n for p in prompts]


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (
            "7+8=15, write 5 carry 1. 4+3+1=8, write 8. \\boxed{85}",
            "7+8=15, write 5 carry 1. 4+3+1=8, write 8. ",
        ),
        ("first \\boxed{1}, then \\boxed{2}", "first \\boxed{1}, then "),  # the last box is the answer
        ("Both are even. The answer is (B).", "Both are even. The "),
        ("x = 3 so\n#### 3", "x = 3 so\n"),
        ("no final answer at all", None),
    ],
)
def test_the_rationale_is_cut_just_before_its_final_answer(completion: str, expected: str | None) -> None:
    assert rationale_without_answer(completion) == expected


def test_a_rationale_stands_alone_only_if_its_steps_lead_to_the_answer(tiny) -> None:
    env = _short_arithmetic()
    _, tokenizer = tiny(num_heads=2)
    task = STaRTask(env.unwrapped, tokenizer)
    problems = [env.unwrapped.problem_at(i, split="train") for i in range(5)]
    generator = StepFollowingGenerator(dict(enumerate(problems)), copies={1, 3})
    kept = rationalize(task, generator, problems, range(5), SamplingParams())
    assert [example.index for example in kept] == [0, 1, 2, 3, 4]  # the answer-only filter keeps every one
    flags = stands_alone(task, generator, problems, kept, max_new_tokens=8)
    assert flags == [True, False, True, False, True]
    # The check shows the stored prompt (no hint) and the rationale without its answer, nothing more.
    assert generator.check_prompts == [
        task.prompt(problem) + f"The columns add up to {int(problem.answer) - (i in (1, 3))}. "
        for i, problem in enumerate(problems)
    ]
    unanswered = dataclasses.replace(kept[0], completion="The columns add up to 85.")
    assert stands_alone(task, generator, problems[:1], [unanswered], max_new_tokens=8) == [False]


@pytest.mark.parametrize("faithful", [False, True])
def test_the_loop_keeps_only_faithful_rationalizations_when_asked(
    tmp_path: Path, faithful: bool, tiny
) -> None:
    env = _short_arithmetic()
    cfg = _loop_config(max_steps=1, faithful_rationalization=faithful)
    base = env.unwrapped
    problems = {i: base.problem_at(i, split="train") for i in range(6)}
    generator = StepFollowingGenerator(problems, copies={1, 4})
    (stats,) = _star(cfg, *tiny(num_heads=2), env, run_dir=tmp_path, generator=generator).iterations
    kept = [json.loads(line) for line in (tmp_path / "iteration-001" / "kept.jsonl").read_text().splitlines()]
    expected = [0, 2, 3, 5] if faithful else [0, 1, 2, 3, 4, 5]
    assert [line["index"] for line in kept] == expected
    assert (stats.kept_rationalized, stats.rationalized_unfaithful) == (len(expected), 2 if faithful else 0)
    assert read_metrics(tmp_path)[-1]["star/rationalized_unfaithful"] == (2 if faithful else 0)


def test_hinted_successes_never_count_as_the_policys_own(tmp_path: Path, tiny) -> None:
    env = _short_arithmetic()
    cfg = _loop_config(max_steps=1)
    generator = _scripted(env, cfg, solves={0, 1}, hinted_solves={2, 3, 4, 5})
    result = _star(cfg, *tiny(num_heads=2), env, run_dir=tmp_path, generator=generator)
    (stats,) = result.iterations
    assert (stats.kept_direct, stats.kept_rationalized, stats.rationalization_attempts) == (2, 4, 4)
    assert stats.train_accuracy == pytest.approx(2 / 6)
    lines = [
        json.loads(line) for line in (tmp_path / "iteration-001" / "kept.jsonl").read_text().splitlines()
    ]
    assert [(line["index"], line["source"]) for line in lines] == [
        (0, "direct"),
        (1, "direct"),
        (2, "rationalized"),
        (3, "rationalized"),
        (4, "rationalized"),
        (5, "rationalized"),
    ]
    assert all("Hint" not in line["prompt"] and line["problem_id"] for line in lines)
    logged = read_metrics(tmp_path)[-1]
    assert (logged["star/kept_direct"], logged["star/kept_rationalized"], logged["star/kept_total"]) == (
        2,
        4,
        6,
    )

    without = _star(
        {**cfg, "star": dataclasses.replace(cfg["star"], rationalize=False)},
        *tiny(num_heads=2),
        env,
        generator=_scripted(env, cfg, solves={0, 1}),
    )
    assert (without.iterations[0].kept_direct, without.iterations[0].kept_rationalized) == (2, 0)


def test_few_shot_examples_come_before_the_question_and_are_hinted_with_it(tiny) -> None:
    env = _short_arithmetic()
    _, tokenizer = tiny(num_heads=2)
    task = STaRTask.from_env(env, tokenizer, RunConfig(), few_shot_examples=2, train_start=2)
    problem = env.unwrapped.problem_at(2, split="train")
    plain, hinted = task.prompt(problem, few_shot=True), task.prompt(problem, hint=True, few_shot=True)
    shots = [env.unwrapped.problem_at(i, split="train") for i in range(2)]
    assert plain.index(shots[0].question) < plain.index(shots[1].question) < plain.index(problem.question)
    assert plain.count("\\boxed{") == 2 and "Hint" not in plain
    assert hinted.count("Hint:") == 3 and task.prompt(problem) == problem.question  # zero-shot for training


# ---------------------------------------------------------------------------------------------- restart, resume


@pytest.mark.parametrize("restart", [True, False])
def test_each_fine_tune_starts_from_the_base_weights(restart: bool, tiny) -> None:
    env = _short_arithmetic()
    model, tokenizer = tiny(num_heads=2)
    base = {k: v.clone() for k, v in model.state_dict().items()}
    seen: list[bool] = []

    def check(iteration: int, step: str, m: torch.nn.Module) -> None:
        if step == "fine_tune":
            seen.append(all(torch.equal(v, base[k]) for k, v in m.state_dict().items()))

    cfg = _loop_config(restart_from_base=restart)
    _star(cfg, model, tokenizer, env, generator=_scripted(env, cfg, solves={0, 1, 2}), on_step=check)
    assert seen == ([True, True, True] if restart else [True, False, False])
    assert not all(torch.equal(v, base[k]) for k, v in model.state_dict().items())  # it did train


def test_a_crashed_run_resumes_from_the_last_completed_iteration(tmp_path: Path, tiny) -> None:
    env = _short_arithmetic()
    cfg = _loop_config()
    scripted = {"solves": {0, 1, 3}, "hinted_solves": {2, 4}}
    full_model, tokenizer = tiny(num_heads=2)
    full = _star(
        cfg, full_model, tokenizer, env, run_dir=tmp_path / "full", generator=_scripted(env, cfg, **scripted)
    )

    steps_run: list[tuple[int, str]] = []

    def crash_in_iteration_2(iteration: int, step: str, model: torch.nn.Module) -> None:
        steps_run.append((iteration, step))
        if (iteration, step) == (2, "evaluate"):
            raise _Crash("simulated crash")

    with pytest.raises(_Crash):
        _star(
            cfg,
            *tiny(num_heads=2),
            env,
            run_dir=tmp_path / "crashed",
            generator=_scripted(env, cfg, **scripted),
            on_step=crash_in_iteration_2,
        )
    steps_run.clear()
    resumed_model, _ = tiny(num_heads=2)
    resumed = _star(
        cfg,
        resumed_model,
        tokenizer,
        env,
        run_dir=tmp_path / "crashed",
        generator=_scripted(env, cfg, **scripted),
        on_step=lambda i, s, m: steps_run.append((i, s)),
    )

    assert resumed.resumed_from == 1 and [i for i, s in steps_run if s == "generate"] == [2, 3]
    assert resumed.iterations == full.iterations and resumed.initial_accuracy == full.initial_accuracy
    for name, value in full_model.state_dict().items():
        torch.testing.assert_close(resumed_model.state_dict()[name], value, rtol=0, atol=0)
    logged = read_metrics(tmp_path / "crashed")
    assert [line["step"] for line in logged] == [0, 1, 2, 3]  # the crashed attempt left no duplicate
    for iteration in (1, 2, 3):
        assert (tmp_path / "crashed" / f"iteration-{iteration:03d}" / "kept.jsonl").is_file()
    with pytest.raises(ConfigError, match="already completed 3 iterations; raise max_steps above 3"):
        _star(
            cfg,
            *tiny(num_heads=2),
            env,
            run_dir=tmp_path / "crashed",
            generator=_scripted(env, cfg, **scripted),
        )


def test_named_steps_run_in_order_and_the_plot_is_drawn(tmp_path: Path, tiny) -> None:
    env = _short_arithmetic()
    cfg = _loop_config(max_steps=1)
    steps: list[str] = []
    _star(
        cfg,
        *tiny(num_heads=2),
        env,
        run_dir=tmp_path,
        generator=_scripted(env, cfg, solves={1}),
        on_step=lambda i, s, m: steps.append(s),
    )
    assert tuple(steps) == STEP_NAMES
    assert (tmp_path / "accuracy.png").stat().st_size > 0 and (tmp_path / "base_model.safetensors").is_file()
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["env"] == ARITHMETIC and config["run"]["max_steps"] == 1 and config["algo"] == "star"


# ---------------------------------------------------------------------------------------------- learning


def _warm_start(model: torch.nn.Module, tokenizer: object, env: object, steps: int) -> None:
    """A short SFT warm start on reference solutions (a quarter of them also with the hint shown).

    It runs the first ``steps`` of a 1000-step cosine schedule, so the base stops while it is still
    learning: from a fully annealed base, a fresh optimizer first knocks accuracy back down.
    """
    base = env.unwrapped
    pairs = sft_pairs_from_env(env, 1000, tokenizer=tokenizer, start=10_000)
    hinted = [base.problem_at(10_000 + i, split="train") for i in range(len(pairs) // 4)]
    pairs += [
        (format_prompt(tokenizer, base.messages(p, hint=True)), pairs[i][1]) for i, p in enumerate(hinted)
    ]
    run = RunConfig(**{**QUIET, "lr": 3e-3, "max_steps": 1000, "warmup_steps": 10})
    train_sft(
        SFTConfig(batch_size=16), model, tokenizer, pairs, run=run, stop_when=lambda step: step >= steps
    )


LEARNING_CONFIG = preset_configs(
    "default",
    "star",
    max_steps=3,
    group_size=4,
    temperature=0.5,
    max_new_tokens=64,
    num_train_problems=256,
    eval_problems=128,
    sft_steps=40,
    warmup_steps=5,
    sft={"batch_size": 16},
    **QUIET,
)


@pytest.mark.slow
def test_star_raises_held_out_accuracy_on_arithmetic(tmp_path: Path) -> None:
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer)
    env = _short_arithmetic()
    _warm_start(model, tokenizer, env, steps=300)
    result = _star(LEARNING_CONFIG, model, tokenizer, env, run_dir=tmp_path)
    accuracies = [result.initial_accuracy] + [s.accuracy_after for s in result.iterations]
    assert accuracies[-1] > accuracies[0] + 0.05, accuracies
    assert sum(s.kept_rationalized for s in result.iterations) > 0  # examples the plain filter drops
    assert [s.kept_direct for s in result.iterations] == sorted(s.kept_direct for s in result.iterations)


class _ChatScripted(ScriptedGenerator):
    """A scripted teacher that, like a served chat endpoint, takes chat messages rather than text."""

    takes_messages = True

    def generate(self, prompts: Sequence[object], params: SamplingParams) -> list[list[Completion]]:
        assert all(isinstance(p, list) and p[-1]["role"] == "user" for p in prompts)  # messages, not text
        return super().generate([p[-1]["content"] for p in prompts], params)


def test_rationales_can_come_from_another_model_and_evaluation_stays_on_the_policy(
    tmp_path: Path, tiny
) -> None:
    env = _short_arithmetic()
    cfg = _loop_config(max_steps=1)
    train = _scripted(env, cfg, solves=set()).problems
    teacher = _ChatScripted(train, solves={0, 1, 2}, hinted_solves={3, 4})
    seen_by_policy: list[str] = []

    class _Policy(ScriptedGenerator):
        def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
            seen_by_policy.extend(prompts)
            return super().generate(prompts, params)

    result = _star(
        cfg,
        *tiny(num_heads=2),
        env,
        run_dir=tmp_path,
        generator=_Policy(train, solves=set()),
        rationale_generator=teacher,
    )
    (stats,) = result.iterations
    assert (stats.kept_direct, stats.kept_rationalized) == (3, 2)  # the teacher's rationales were kept
    assert teacher.hinted_prompts and seen_by_policy  # the policy was evaluated ...
    assert not any(
        p.question in prompt for p in train.values() for prompt in seen_by_policy
    )  # ... on held-out only


@pytest.mark.parametrize(
    ("patience", "initial", "after", "plateaued"),
    [
        (None, 0.5, [0.5, 0.5, 0.5], False),  # no patience: never stops early
        (1, 0.5, [], False),  # nothing trained yet
        (1, 0.5, [0.6], False),  # beat the base model
        (1, 0.5, [0.5], True),  # equal to the best before is not beating it
        (1, 0.5, [0.4], True),
        (2, 0.5, [0.6], False),  # fewer iterations than the patience
        (2, 0.5, [0.6, 0.6], False),  # 0.6 beat the 0.5 before the window
        (2, 0.5, [0.6, 0.6, 0.6], True),  # the last two only equal the best before them
        (2, 0.5, [0.6, 0.4, 0.7], False),
    ],
)
def test_the_plateau_rule_stops_when_the_last_iterations_did_not_beat_the_best_before(
    patience: int | None, initial: float, after: list[float], plateaued: bool
) -> None:
    from types import SimpleNamespace

    from reasongym.agents.star import _Loop

    missing = dataclasses.MISSING
    required = [f for f in dataclasses.fields(_Loop) if f.default is missing and f.default_factory is missing]
    loop = _Loop(STaRConfig(patience=patience), *[None] * (len(required) - 1), initial_accuracy=initial)
    loop.history = [SimpleNamespace(accuracy_after=value) for value in after]
    assert loop.plateaued() is plateaued


# ------------------------------------------------ the pure rules, pinned at their edges (mutation testing,
# benchmarks/mutation.py): config messages, step growth, the plateau rule, the metrics line; no model, so a mutant
# of star.py costs a fraction of a second to check


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


def _loop(patience: int | None, initial: float | None, after: list[float]) -> _Loop:
    missing = dataclasses.MISSING
    required = [f for f in dataclasses.fields(_Loop) if f.default is missing and f.default_factory is missing]
    loop = _Loop(STaRConfig(patience=patience), *[None] * (len(required) - 1), initial_accuracy=initial)
    loop.history = [SimpleNamespace(accuracy_after=value) for value in after]
    return loop


def _sized(size: int | None) -> SimpleNamespace:
    return SimpleNamespace(source=SimpleNamespace(size=lambda split, difficulty: size))


TRAIN = SimpleNamespace(split="train", difficulty=None)


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
