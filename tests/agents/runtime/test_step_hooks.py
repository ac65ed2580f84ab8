"""Step hooks (`reasongym.agents.runtime.hooks`): every point of the loop is seen in order with a read-only
view, a hook stops a run by its return value (RL and STaR), and a hook may hand back the batch a step uses."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.dapo import train_dapo
from reasongym.agents.distill import train_distill
from reasongym.agents.grpo import train_grpo
from reasongym.agents.runtime.hooks import Hooks, StepHook, StepView
from reasongym.agents.star import train_star

ENV = "reasongym/Arithmetic-v0"
SMALL = {"num_prompts": 2, "group_size": 2, "max_new_tokens": 8, "progress_bar": False, "eval_problems": 2}


class Recorder(StepHook):
    """Records every call as ``(point, step)``; stops before ``stop_before`` or after ``stop_after``."""

    def __init__(self, stop_before: int | None = None, stop_after: int | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.views: list[StepView] = []
        self.stop_before, self.stop_after = stop_before, stop_after

    def before_sampling(self, view: StepView) -> bool:
        self.calls.append(("before_sampling", view.step))
        return view.step == self.stop_before

    def after_sampling(self, view: StepView, batch: object) -> None:
        self.calls.append(("after_sampling", view.step))

    def after_update(self, view: StepView) -> bool:
        self.calls.append(("after_update", view.step))
        self.views.append(view)
        return view.step == self.stop_after

    def at_evaluation(self, view: StepView) -> None:
        self.calls.append(("at_evaluation", view.step))
        self.views.append(view)

    def at_end(self, view: StepView) -> None:
        self.calls.append(("at_end", view.step))


def _grpo(tiny, hooks: list[StepHook], **fields: object) -> object:
    configs = preset_configs("tiny", "grpo", **{**SMALL, **fields})
    model, tokenizer = tiny()
    run, rollout = configs["run"], configs["rollout"]
    return train_grpo(configs["grpo"], model, tokenizer, ENV, run=run, rollout=rollout, hooks=hooks)


def test_every_point_is_seen_in_order_with_a_read_only_view(tiny) -> None:
    hook = Recorder()
    result = _grpo(tiny, [hook], max_steps=2, eval_every=2)
    assert hook.calls == [
        ("at_evaluation", 0),
        ("before_sampling", 1),
        ("after_sampling", 1),
        ("after_update", 1),
        ("before_sampling", 2),
        ("after_sampling", 2),
        ("at_evaluation", 2),
        ("after_update", 2),
        ("at_end", 2),
    ]
    evaluation, step = hook.views[0], hook.views[1]
    assert set(evaluation.metrics) == {"eval/pass@1"} and evaluation.update is None
    assert dict(step.metrics) == result.history[0]  # the step's own metrics, as logged
    tokens = result.history[0]["perf/tokens_per_s"] * result.history[0]["perf/step_s"]
    assert step.sampled_tokens == pytest.approx(tokens) and step.sampled_tokens > 0
    assert step.update is not None and step.update.adv.shape == (4,) and step.update.mask.shape[0] == 4
    assert isinstance(step.metrics, MappingProxyType)
    with pytest.raises(TypeError):
        step.metrics["loss/policy"] = 0.0  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.step = 5  # type: ignore[misc]


def test_a_hook_stops_the_run_before_a_step_or_after_one(tiny) -> None:
    before = Recorder(stop_before=2)
    result = _grpo(tiny, [before], max_steps=4, eval_every=0)
    assert result.steps == 1 and len(result.history) == 1
    assert before.calls[-2:] == [("before_sampling", 2), ("at_end", 1)]  # step 2 drew nothing
    after = Recorder(stop_after=2)
    result = _grpo(tiny, [after], max_steps=4, eval_every=0)
    assert result.steps == 2 and after.calls[-1] == ("at_end", 2)


def test_every_hook_is_called_though_an_earlier_one_stops(tiny) -> None:
    first, second = Recorder(stop_before=1), Recorder()
    result = _grpo(tiny, [first, second], max_steps=2, eval_every=0)
    assert result.steps == 0
    assert second.calls == [("before_sampling", 1), ("at_end", 0)]


class Scripted(StepHook):
    """Hands each step its batch with the rewards of group 0 set to [1, 0] (the tiny model solves nothing)."""

    def after_sampling(self, view: StepView, batch: object) -> object:
        rewards = torch.zeros_like(batch.rewards)
        rewards[0] = 1.0
        return dataclasses.replace(batch, rewards=rewards, correct=rewards.bool())


def test_a_batch_a_hook_hands_back_is_the_one_the_step_trains_on(tiny) -> None:
    seen = Recorder()
    result = _grpo(tiny, [Scripted(), seen], max_steps=1, eval_every=0, kl="off")
    assert result.history[0]["rollout/reward_mean"] == 0.25  # 1 of 4 rows
    assert seen.views[0].update.batch.rewards.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert seen.views[0].update.adv[0] > 0 > seen.views[0].update.adv[1]  # group 0 now teaches something


def test_dapo_and_distillation_call_the_hooks_too(tiny) -> None:
    fields = {**SMALL, "max_steps": 1, "eval_every": 0, "dynamic_sampling": False, "overlong_buffer": 2}
    configs = preset_configs("tiny", "dapo", **fields)
    model, tokenizer = tiny()
    hook = Recorder()
    train_dapo(
        configs["dapo"], model, tokenizer, ENV, run=configs["run"], rollout=configs["rollout"], hooks=[hook]
    )
    assert [point for point, _ in hook.calls] == [
        "before_sampling",
        "after_sampling",
        "after_update",
        "at_end",
    ]
    configs = preset_configs("tiny", "distill", **{**SMALL, "max_steps": 1, "eval_every": 0})
    teacher, _ = tiny(seed=1)
    hook = Recorder(stop_after=1)
    result = train_distill(
        configs["distill"],
        model,
        tokenizer,
        ENV,
        teacher=teacher,
        run=configs["run"],
        rollout=configs["rollout"],
        hooks=[hook],
    )
    assert result.steps == 1 and hook.calls[-1] == ("at_end", 1)


def test_only_step_hooks_are_taken() -> None:
    with pytest.raises(TypeError, match=r"hooks must be StepHook instances; got function"):
        Hooks([lambda view: False])  # type: ignore[list-item]


def test_stars_on_step_hook_stops_the_run_by_returning_true(tiny, tmp_path) -> None:
    configs = preset_configs(
        "tiny",
        "star",
        max_steps=3,
        num_train_problems=4,
        eval_problems=2,
        max_new_tokens=8,
        progress_bar=False,
    )
    model, tokenizer = tiny()
    seen: list[tuple[int, str]] = []

    def stop_at_the_second_iteration(iteration: int, step: str, _: object) -> bool:
        seen.append((iteration, step))
        return iteration == 2  # before its first step: iteration 1 is done and recorded

    result = train_star(
        configs["star"],
        model,
        tokenizer,
        ENV,
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=tmp_path,
        on_step=stop_at_the_second_iteration,
    )
    assert [stats.iteration for stats in result.iterations] == [1]
    assert seen[-1] == (2, "generate") and len(seen) == 7  # six named steps of iteration 1, then the stop
