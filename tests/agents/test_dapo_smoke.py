"""A few DAPO steps on the tiny model: dynamic sampling never crashes, partial batches train, metrics are logged."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from reasongym.agents.dapo import sample_training_batch
from reasongym.agents.runtime.hooks import StepHook
from reasongym.agents.runtime.session import RLSession
from reasongym.agents.runtime.setup import start_session
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"


class Rewards(StepHook):
    """Hands the step each drawn batch with its rewards (and correctness, lengths) set by ``change``."""

    def __init__(self, change: Callable[[object], dict[str, torch.Tensor]]) -> None:
        self.change = change

    def after_sampling(self, view: object, batch: object) -> object:
        return dataclasses.replace(batch, **self.change(batch))


def _session(configs: dict[str, object], model: object, tokenizer: object, hook: StepHook) -> RLSession:
    return start_session(
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
        hooks=[hook],
    )


def _first_of_group_zero_right(batch: object) -> dict[str, torch.Tensor]:
    correct = torch.zeros_like(batch.correct)
    correct[0] = True  # an untrained model solves nothing: make group 0 informative, the rest not
    return {"rewards": correct.float(), "correct": correct}


def test_dapo_runs_and_logs_dynamic_sampling(tmp_path: object, tiny, small_configs, train) -> None:
    model, tokenizer = tiny()
    result = train(
        "dapo",
        small_configs("dapo", overlong_filtering=True, micro_batch_size=2),
        model,
        tokenizer,
        ENV,
        run_dir=tmp_path,
        hooks=[Rewards(_first_of_group_zero_right)],
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


def _constant_rewards(batch: object) -> dict[str, torch.Tensor]:
    # every group has zero variance: nothing to keep
    return {"rewards": torch.zeros_like(batch.rewards), "lengths": torch.ones_like(batch.lengths)}


def test_no_informative_group_skips_the_update_without_crashing(tiny, small_configs, train) -> None:
    model, tokenizer = tiny()
    before = [p.detach().clone() for p in model.parameters()]
    hooks = [Rewards(_constant_rewards)]
    result = train("dapo", small_configs("dapo", max_extra_rounds=2), model, tokenizer, ENV, hooks=hooks)
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

    def half_informative(batch: object) -> dict[str, torch.Tensor]:
        rewards = torch.tensor([1.0, 0.0, 0.0] + [0.0] * (len(batch.rewards) - 3))
        return {"rewards": rewards, "lengths": torch.ones_like(batch.lengths)}

    session = _session(cfg, model, tokenizer, Rewards(half_informative))
    batch, metrics = sample_training_batch(session, cfg["dapo"], cfg["rollout"])
    assert batch is not None and batch.num_groups == 1
    assert metrics["dapo/partial_batch"] == 1.0 and metrics["dapo/kept_groups"] == 1.0
    assert metrics["dapo/dropped_groups"] == 1.0


def test_dynamic_sampling_filters_on_correctness_not_on_the_length_penalty(tiny, small_configs) -> None:
    model, tokenizer = tiny()
    cfg = small_configs("dapo", num_prompts=2, max_extra_rounds=0, max_new_tokens=12, overlong_buffer=4)

    def all_wrong_then_mixed(batch: object) -> dict[str, torch.Tensor]:
        # Group 0: all wrong, one completion deep in the overlong buffer (its shaped rewards differ).
        # Group 1: one right, two wrong, all short.
        return {
            "rewards": torch.tensor([0.0, 0.0, 0.0, 1.0, 0.0, 0.0]),
            "correct": torch.tensor([False, False, False, True, False, False]),
            "lengths": torch.tensor([2, 11, 2, 2, 2, 12]),
        }

    session = _session(cfg, model, tokenizer, Rewards(all_wrong_then_mixed))
    batch, metrics = sample_training_batch(session, cfg["dapo"], cfg["rollout"])
    assert metrics["dapo/kept_groups"] == 1.0 and metrics["dapo/dropped_groups"] == 1.0
    assert batch is not None and batch.correct.tolist() == [True, False, False]  # group 1 only
    # The kept group's rewards are shaped: the 12-token completion sits at L_max and gets the full -1.
    assert batch.rewards.tolist() == [1.0, 0.0, -1.0]
