"""A few DAPO steps on the tiny model: dynamic sampling never crashes, partial batches train, metrics are logged."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from reasongym.agents.dapo import sample_training_batch
from reasongym.agents.runtime import session as rl_loop
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"


def _session(configs: dict[str, object], model: object, tokenizer: object) -> rl_loop.RLSession:
    return rl_loop.RLSession.start(
        configs["run"],
        configs["rollout"],
        model,
        tokenizer,
        ENV,
        algo="dapo",
        config_record={},
        run_dir=None,
        generator=None,
        with_reference=False,
    )


def _first_of_group_zero_right(
    session: rl_loop.RLSession, num_prompts: int, original=rl_loop.RLSession.rollouts
) -> object:  # noqa: ANN001
    batch = original(session, num_prompts)
    correct = torch.zeros_like(batch.correct)
    correct[0] = True  # an untrained model solves nothing: make group 0 informative, the rest not
    return dataclasses.replace(batch, rewards=correct.float(), correct=correct)


def test_dapo_runs_and_logs_dynamic_sampling(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch, tiny, small_configs, train
) -> None:
    monkeypatch.setattr(rl_loop.RLSession, "rollouts", _first_of_group_zero_right)
    model, tokenizer = tiny()
    result = train(
        "dapo",
        small_configs("dapo", overlong_filtering=True, micro_batch_size=2),
        model,
        tokenizer,
        ENV,
        run_dir=tmp_path,
    )
    assert result.steps == 2
    logged = set().union(*read_metrics(tmp_path))
    for key in (
        "dapo/dropped_groups",
        "dapo/extra_rounds",
        "dapo/partial_batch",
        "dapo/kept_groups",
        "train/clip_high_frac",
        "rollout/len_wrong_mean",
        "perf/generate_s",
    ):
        assert key in logged, key
    for record in result.history:
        assert record["dapo/extra_rounds"] == 1  # one group per round: a second round was needed
        assert record["dapo/kept_groups"] == 2 and record["train/skipped_empty"] == 0


def _constant_rewards(
    session: rl_loop.RLSession, num_prompts: int, original=rl_loop.RLSession.rollouts
) -> object:  # noqa: ANN001
    batch = original(session, num_prompts)
    return dataclasses.replace(
        batch, rewards=torch.zeros_like(batch.rewards), lengths=torch.ones_like(batch.lengths)
    )  # every group has zero variance: nothing to keep


def test_no_informative_group_skips_the_update_without_crashing(
    monkeypatch: pytest.MonkeyPatch, tiny, small_configs, train
) -> None:
    monkeypatch.setattr(rl_loop.RLSession, "rollouts", _constant_rewards)
    model, tokenizer = tiny()
    before = [p.detach().clone() for p in model.parameters()]
    result = train("dapo", small_configs("dapo", max_extra_rounds=2), model, tokenizer, ENV)
    for record in result.history:
        assert record["train/skipped_empty"] == 1.0
        assert record["dapo/extra_rounds"] == 2.0  # the cap was hit
        assert record["dapo/dropped_groups"] == 3 * 2  # three rounds of two groups
        assert record["dapo/partial_batch"] == 1.0
    for p, q in zip(before, model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_partial_batch_trains_on_what_it_has(tiny, small_configs) -> None:
    model, tokenizer = tiny()
    # Rewards 0/1 alternating inside each group: every group informative, but ask for more groups than one
    # round gives and allow no extra round.
    cfg = small_configs("dapo", num_prompts=2, max_extra_rounds=0)
    session = _session(cfg, model, tokenizer)
    original = rl_loop.RLSession.rollouts

    def half_informative(self: rl_loop.RLSession, num_prompts: int) -> object:
        batch = original(self, num_prompts)
        rewards = torch.tensor([1.0, 0.0, 0.0] + [0.0] * (len(batch.rewards) - 3))
        return dataclasses.replace(batch, rewards=rewards, lengths=torch.ones_like(batch.lengths))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rl_loop.RLSession, "rollouts", half_informative)
        batch, metrics = sample_training_batch(session, cfg["dapo"], cfg["rollout"])
    assert batch is not None and batch.num_groups == 1
    assert metrics["dapo/partial_batch"] == 1.0 and metrics["dapo/kept_groups"] == 1.0
    assert metrics["dapo/dropped_groups"] == 1.0


def test_dynamic_sampling_filters_on_correctness_not_on_the_length_penalty(tiny, small_configs) -> None:
    model, tokenizer = tiny()
    cfg = small_configs("dapo", num_prompts=2, max_extra_rounds=0, max_new_tokens=12, overlong_buffer=4)
    session = _session(cfg, model, tokenizer)
    original = rl_loop.RLSession.rollouts

    def all_wrong_then_mixed(self: rl_loop.RLSession, num_prompts: int) -> object:
        batch = original(self, num_prompts)
        # Group 0: all wrong, one completion deep in the overlong buffer (its shaped rewards differ).
        # Group 1: one right, two wrong, all short.
        return dataclasses.replace(
            batch,
            rewards=torch.tensor([0.0, 0.0, 0.0, 1.0, 0.0, 0.0]),
            correct=torch.tensor([False, False, False, True, False, False]),
            lengths=torch.tensor([2, 11, 2, 2, 2, 12]),
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rl_loop.RLSession, "rollouts", all_wrong_then_mixed)
        batch, metrics = sample_training_batch(session, cfg["dapo"], cfg["rollout"])
    assert metrics["dapo/kept_groups"] == 1.0 and metrics["dapo/dropped_groups"] == 1.0
    assert batch is not None and batch.correct.tolist() == [True, False, False]  # group 1 only
    # The kept group's rewards are shaped: the 12-token completion sits at L_max and gets the full -1.
    assert batch.rewards.tolist() == [1.0, 0.0, -1.0]
