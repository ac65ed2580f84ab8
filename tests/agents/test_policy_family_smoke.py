"""The new named choices through the trainers on the tiny model: each estimator with micro-batches and with
DAPO's dynamic sampling, truncated completions left out, and the per-step diagnostics and their warning."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from reasongym.agents.advantages import group_advantages
from reasongym.agents.dapo import DAPOConfig, batch_advantages
from reasongym.agents.runtime import learner
from reasongym.agents.runtime.diagnostics import ZeroVarianceWatch, advantage_metrics, progress_postfix
from reasongym.agents.runtime.hooks import StepHook
from reasongym.distributed import SINGLE_PROCESS
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"
NEW_ESTIMATORS = ("rloo", "reinforce_plus_plus", "reinforce_plus_plus_baseline")


class HalfRight(StepHook):
    """Each drawn batch with group 0 half right and the other groups all wrong (the tiny model solves nothing)."""

    def after_sampling(self, view: object, batch: object) -> object:
        correct = torch.zeros_like(batch.correct)
        correct[: view.rollout.group_size // 2 + 1] = True
        return dataclasses.replace(batch, rewards=correct.float(), correct=correct)


@pytest.mark.slow  # a training per estimator
@pytest.mark.parametrize("estimator", NEW_ESTIMATORS)
def test_each_estimator_gives_the_full_batch_gradient_with_micro_batches(
    estimator: str, monkeypatch: pytest.MonkeyPatch, tiny, small_configs, train
) -> None:
    gradients: list[torch.Tensor] = []

    def recording_step(
        model: torch.nn.Module, *args: object, original=learner.optimizer_step, **kwargs: object
    ):  # noqa: ANN001, ANN202
        gradients.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
        return original(model, *args, **kwargs)

    monkeypatch.setattr(learner, "optimizer_step", recording_step)
    for micro in (None, 2):
        configs = small_configs(
            "grpo", max_steps=1, mu=1, kl="off", advantage_normalization=estimator, micro_batch_size=micro
        )
        history = train("grpo", configs, *tiny(), ENV, hooks=[HalfRight()]).history
    assert gradients[0].abs().max() > 0  # informative groups: the comparison says something
    torch.testing.assert_close(gradients[1], gradients[0], rtol=1e-5, atol=1e-7)
    assert history[0]["train/advantage_std"] > 0


@pytest.mark.slow  # a training per estimator
@pytest.mark.parametrize("estimator", NEW_ESTIMATORS)
def test_dynamic_sampling_keeps_working_with_each_estimator(
    estimator: str, tiny, small_configs, train
) -> None:
    model, tokenizer = tiny()
    configs = small_configs("dapo", max_steps=1, advantage_normalization=estimator, max_extra_rounds=1)
    record = train("dapo", configs, model, tokenizer, ENV, hooks=[HalfRight()]).history[0]
    # One informative group per round of 2: a second round fills the batch with 2 kept groups.
    assert record["dapo/kept_groups"] == 2 and record["train/skipped_empty"] == 0
    assert record["dapo/extra_rounds"] == 1
    # The kept groups are identical (half right): every group-baseline estimator centres each at 0.
    assert record["train/advantage_mean"] == pytest.approx(0.0, abs=1e-6)
    assert record["train/advantage_std"] > 0 and math.isfinite(record["loss/policy"])


def test_batch_advantages_in_one_process_are_group_advantages() -> None:
    rewards = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    cfg = DAPOConfig(advantage_normalization="reinforce_plus_plus_baseline")
    expected = group_advantages(rewards, 3, "reinforce_plus_plus_baseline")
    torch.testing.assert_close(batch_advantages(rewards, 3, cfg, SINGLE_PROCESS), expected)


@pytest.mark.slow  # a training
def test_truncated_completions_leave_the_loss(tiny, small_configs, train) -> None:
    # 4 new tokens: the random-init model never finishes an answer, so every completion is truncated.
    model, tokenizer = tiny()
    before = [p.detach().clone() for p in model.parameters()]
    configs = small_configs("grpo", max_steps=1, max_new_tokens=4, kl="off", mask_truncated_completions=True)
    record = train("grpo", configs, model, tokenizer, ENV).history[0]
    assert record["rollout/truncation_rate"] == 1.0
    assert record["train/tokens"] == 0.0  # no token left in the loss
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before, strict=True))
    kept = train("grpo", small_configs("grpo", max_steps=1, max_new_tokens=4, kl="off"), *tiny(), ENV)
    assert kept.history[0]["train/tokens"] > 0  # the control: without the option the same rows count


@pytest.mark.slow  # a training
def test_diagnostics_are_logged_and_hopeless_groups_warn_once(
    tmp_path: object, tiny, small_configs, train
) -> None:
    # The random-init model gets every problem wrong: every group has zero variance, all wrong, every step.
    model, tokenizer = tiny()
    configs = small_configs(
        "grpo",
        max_steps=ZeroVarianceWatch().steps + 1,
        num_prompts=2,
        group_size=2,
        max_new_tokens=4,
        kl="off",
        samples_every=0,
        eval_every=0,
    )
    with pytest.warns(RuntimeWarning, match=r"100% of the groups .*all wrong: 100%.*too hard") as caught:
        train("grpo", configs, model, tokenizer, ENV, run_dir=tmp_path)
    assert sum("teaches nothing" in str(w.message) for w in caught) == 1  # once, though the streak goes on
    logged = set().union(*read_metrics(tmp_path))
    for key in (
        "rollout/zero_std_group_frac",
        "rollout/all_correct_group_frac",
        "rollout/all_wrong_group_frac",
        "rollout/truncation_rate",
        "train/clip_low_frac",
        "train/clip_high_frac",
        "train/ratio_min",
        "train/ratio_mean",
        "train/ratio_max",
        "train/advantage_mean",
        "train/advantage_std",
    ):
        assert key in logged, key


@pytest.mark.parametrize(
    ("right", "wrong", "expected"),
    [(0.8, 0.1, "too easy"), (0.1, 0.85, "too hard"), (0.1, 0.1, "does not tell the samples apart")],
)
def test_zero_variance_watch_says_which_and_what_to_change(right: float, wrong: float, expected: str) -> None:
    watch = ZeroVarianceWatch(steps=3)
    step = {
        "rollout/zero_std_group_frac": 0.9,
        "rollout/all_correct_group_frac": right,
        "rollout/all_wrong_group_frac": wrong,
    }
    assert watch.observe(step) is None and watch.observe(step) is None
    message = watch.observe(step)
    assert message is not None and expected in message and "over the last 3 steps" in message
    assert watch.observe(step) is None  # once per run


def test_zero_variance_watch_needs_the_steps_in_a_row() -> None:
    watch = ZeroVarianceWatch(steps=2)
    busy, fine = {"rollout/zero_std_group_frac": 0.75}, {"rollout/zero_std_group_frac": 0.25}
    assert [watch.observe(m) for m in (busy, fine, busy)] == [None, None, None]  # the streak broke
    assert watch.observe(busy) is not None


def test_advantage_metrics_and_the_short_form() -> None:
    assert advantage_metrics(torch.tensor([1.0, -1.0, 3.0, 1.0])) == {
        "train/advantage_mean": 1.0,
        "train/advantage_std": pytest.approx(math.sqrt(2.0)),  # population std: sqrt((0 + 4 + 4 + 0) / 4)
    }
    postfix = progress_postfix(
        {
            "rollout/reward_mean": 0.5,
            "rollout/correct_rate": 0.25,
            "rollout/zero_std_group_frac": 0.625,
            "train/clip_low_frac": 0.01,
            "train/clip_high_frac": 0.02,
            "perf/tokens_per_s": 123.4,
        }
    )
    assert postfix == {"reward": "0.500", "acc": "0.250", "zero_var": "0.62", "clip": "0.030", "tok_s": "123"}
