"""benchmarks/star_csqa/ (issue 39): its budget per sampling chunk, its random-filter control, its lucky-guess
diagnostic, one STaR arm on the tiny model (seconds), and the dry pass of every arm with resuming (slow)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks.controls import RunVerdicts
from benchmarks.harness import settings
from reasongym.generation import Completion, SamplingParams
from tests.benchmarks.conftest import run_script

SCRIPT = "benchmarks.star_csqa"


class _FixedLength:
    """A sampler whose every completion is ``length`` tokens long and finished."""

    def __init__(self, module: Any, length: int) -> None:
        self.module, self.length, self.calls = module, length, 0

    def generate(self, prompts: list[str], params: Any) -> list[list[Any]]:
        self.calls += 1
        one = Completion("x", (1,) * self.length, (0.0,) * self.length, "stop")
        return [[one] * params.n for _ in prompts]


def test_the_budget_is_checked_before_each_chunk_so_an_arm_overruns_it_by_one_chunk_at_most(
    bench: Any,
) -> None:
    inner = _FixedLength(bench, length=5)
    sampler = bench.RationaleBudget(inner, budget=23, chunk=2)
    params = SamplingParams(max_new_tokens=5, n=1, seed=0)
    groups = sampler.generate([f"p{i}" for i in range(12)], params)
    # chunks of 2 prompts x 5 tokens: 10, 20, 30 -> spent after the third; the rest are empty and unfinished
    assert sampler.tokens == 30 and inner.calls == 3 and sampler.spent
    assert len(groups) == 12
    assert [g[0].finish_reason for g in groups] == ["stop"] * 6 + ["length"] * 6
    assert all(g[0].text == "" and g[0].token_ids == () for g in groups[6:])
    assert sampler.generate(["p"], params)[0][0].text == ""  # spent: nothing more is sampled
    assert inner.calls == 3


def test_the_random_filter_keeps_as_many_as_the_verifier_would_chosen_without_it(
    bench: Any, data_dir: Path
) -> None:
    import reasongym

    env = reasongym.make(bench.ENV_ID)
    problems = [env.unwrapped.problem_at(i, split="train") for i in range(12, 24)]
    training = {f"prompt {p.id}": p for p in problems}
    control = bench.RandomFilter(env, RunVerdicts(0), training, seed=3)
    done = Completion
    groups = []
    for position, problem in enumerate(problems):
        wrong = next(label for label, _ in problem.choices if label != problem.answer)
        if position < 3:  # the verifier keeps these three
            groups.append([done(f"The answer is ({problem.answer}).", (1,), (0.0,), "stop")])
        elif position < 10:  # readable but wrong
            groups.append([done(f"The answer is ({wrong}).", (1,), (0.0,), "stop")])
        else:  # no letter: never kept, not even at random
            groups.append([done("I do not know.", (1,), (0.0,), "stop")])
    control.plan(list(training), groups)
    assert control.log == [
        {"verifier_kept": 3, "random_kept": 3, "random_kept_right": control.log[0]["random_kept_right"]}
    ]
    accepted = [
        control.score(problem, group[0].text).correct for problem, group in zip(problems, groups, strict=True)
    ]
    assert sum(accepted) == 3 and not any(accepted[10:])
    # graded for real: the run's log holds the true verdicts, three right
    assert sum(control.verdicts.correct) == 3
    # a problem outside training (STaR's own held-out check) is graded for real
    held_out = env.unwrapped.problem_at(0, split="validation")
    assert control.score(held_out, f"The answer is ({held_out.answer}).").correct is True
    assert [v.correct for v in control.score_many(held_out, [f"The answer is ({held_out.answer})."])] == [
        True
    ]
    # another seed chooses other rationales for the same count
    draws = set()
    for seed in range(8):
        other = bench.RandomFilter(env, RunVerdicts(0), training, seed=seed)
        other.plan(list(training), groups)
        draws.add(frozenset(other.accepted))
    assert len(draws) > 1 and all(len(draw) == 3 for draw in draws)


def test_a_rationale_that_reasons_toward_another_option_is_flagged_as_a_lucky_guess(
    bench: Any, data_dir: Path
) -> None:
    import reasongym

    problem = reasongym.make(bench.ENV_ID).unwrapped.problem_at(0, split="validation")
    # options: (A) bank (B) library (C) department store (D) mall (E) new york
    assert problem.choices[0] == ("A", "bank")
    elsewhere = bench.lucky_guess(
        "People keep money in a bank. So (A) fits. The answer is (B).", problem, "B"
    )
    assert elsewhere == {"names_other": True, "last_named_other": True, "names_none": False}
    dismissed = bench.lucky_guess("Not the mall. A library lends books. The answer is (B).", problem, "B")
    assert dismissed == {"names_other": True, "last_named_other": False, "names_none": False}
    bare = bench.lucky_guess("The answer is (B).", problem, "B")
    assert bare == {"names_other": False, "last_named_other": False, "names_none": True}


def test_one_star_arm_runs_on_the_tiny_model_within_its_budget(bench: Any, data_dir: Path) -> None:
    setting = dataclasses.replace(bench.dry(bench.PRESETS["cpu"]), budget_tokens=40)
    record = bench.run_arm(setting, "star_random_filter", seed=0)
    # one chunk is 2 prompts x 8 tokens at most: the budget is passed by less than one chunk
    assert 40 <= record["sampled_tokens"] < 40 + 2 * 8
    assert record["iterations"] and record["random_filter"]
    assert len(record["correct"]) == setting.eval_problems
    assert [point["tokens"] for point in record["curve"]][-1] == record["sampled_tokens"]


def test_a_star_arm_whose_budget_outlasts_its_iterations_stops_after_them(bench: Any, data_dir: Path) -> None:
    # 5 problems an iteration of 8 tokens at most: the budget is never spent, the iteration count ends the arm
    setting = dataclasses.replace(
        bench.dry(bench.PRESETS["cpu"]), budget_tokens=10_000, mean_completion_tokens=1_000
    )
    record = bench.run_arm(setting, "star_no_rationalization", seed=0)
    assert [row["iteration"] for row in record["iterations"]] == list(range(1, setting.star_iterations + 1))
    assert 0 < record["sampled_tokens"] <= setting.star_iterations * 5 * setting.max_new_tokens
    assert [row["same_kept_as_previous"] for row in record["iterations"]][0] is False


def test_the_small_preset_leaves_out_the_halfway_evaluation(bench: Any, data_dir: Path) -> None:
    small = bench.dry(bench.PRESETS["cpu-small"])
    points = {
        halfway: len(
            bench.run_arm(dataclasses.replace(small, halfway_eval=halfway), "direct_sft", 0)["curve"]
        )
        for halfway in (False, True)
    }
    assert points == {False: 1, True: 2}


def test_a_setting_field_is_a_flag_checked_by_name_and_type(
    bench: Any, capsys: pytest.CaptureFixture
) -> None:
    cpu = bench.PRESETS["cpu"]
    with pytest.raises(SystemExit):
        settings.fields(cpu, ["--budget", "5"], prog="star_csqa")
    assert "--budget-tokens" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        settings.fields(cpu, ["--budget-tokens", "lots"], prog="star_csqa")
    changed = settings.fields(
        cpu, ["--lr", "1e-5", "--engine", "vllm", "--instruction", "None"], prog="star_csqa"
    )
    assert (changed.lr, changed.engine, changed.instruction) == (1e-5, "vllm", None)


def _run(*flags: str) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *flags)


@pytest.mark.slow  # trains every arm of the study (a minute on 2 loaded cores)
def test_the_dry_pass_runs_every_arm_summarizes_and_resumes_without_retraining(
    bench: Any, tmp_path: Path, data_dir: Path
) -> None:
    flags = ("--dry", "--seeds", "0", "--out-dir", str(tmp_path))
    done = _run(*flags)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(summary["arms"]) == set(bench.ARMS)
    for arm in ("star", "star_no_rationalization", "star_random_filter", "grpo_cot"):
        assert summary["arms"][arm]["sampled_tokens"] >= 48, arm
    for name in ("table.md", "rationales.md", "accuracy.png", "summary.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "| star |" in (tmp_path / "table.md").read_text()
    assert "Always answering one letter scores" in (tmp_path / "table.md").read_text()
    assert abs(sum(summary["one_letter_accuracy"].values()) - 1) < 1e-3  # each problem: one gold letter
    runs = sorted((tmp_path / "runs").glob("*.json"))
    stamps = {path: path.stat().st_mtime_ns for path in runs}

    again = _run(*flags)  # resumable per arm and seed: nothing left to run
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout.strip().splitlines()[-1]) == summary
    assert {path: path.stat().st_mtime_ns for path in runs} == stamps

    changed = _run(*flags, "--lr", "0.001")
    assert changed.returncode != 0
    assert "lr" in changed.stderr and "another setting" in changed.stderr
