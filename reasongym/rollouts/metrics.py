"""What a trainer logs of its rollouts each step: ``rollout/`` statistics and the ``reward/<term>`` means.

The rows of a step's batches (`batch_rows`: rewards, correctness, lengths, ... and the reward's terms as the
environment reported them) are gathered from every rank (`merge_rows`) and summed up by `rollout_metrics`,
so that the logged figures cover the whole batch whatever the number of processes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor

from reasongym.rollouts.batch import ROW_TENSORS, RolloutBatch, joined_tensor, joined_terms

EQUAL_REWARD_ATOL = 1e-6
"""Rewards of a group closer than this count as equal (a group without learning signal)."""


def batch_rows(batches: Sequence[RolloutBatch]) -> dict[str, Any]:
    """The per-row values of ``batches`` joined on the CPU (`ROW_TENSORS` and ``reward_terms``): what
    `rollout_metrics` reads, and what a trainer gathers from every rank (`merge_rows`)."""
    rows: dict[str, Any] = {
        name: joined_tensor([None if getattr(b, name) is None else getattr(b, name).cpu() for b in batches])
        for name in ROW_TENSORS
    }
    rows["reward_terms"] = joined_terms([b.reward_terms for b in batches])
    return rows


def merge_rows(per_rank: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every rank's `batch_rows` as one set of rows, in rank order."""
    merged: dict[str, Any] = {name: joined_tensor([rows[name] for rows in per_rank]) for name in ROW_TENSORS}
    merged["reward_terms"] = joined_terms([rows["reward_terms"] for rows in per_rank])
    return merged


def rollout_metrics(rows: Mapping[str, Any], group_size: int) -> dict[str, float]:
    """``rollout/`` statistics (nan where undefined) of batches' `ROW_TENSORS` (every rank's too), in group
    layout: ``reward_std`` is the population std; ungradable rows count as not correct; ``len_*`` count model
    tokens; ``zero_std_group_frac``: groups whose rewards are equal within `EQUAL_REWARD_ATOL` (they teach a
    group-baseline estimator nothing), ``all_correct_group_frac`` / ``all_wrong_group_frac``: groups with every
    sample correct (too easy) / none correct (too hard); ``ungradable_frac`` and, of those, ``timeout_frac``:
    rows the trainers leave out of the loss; ``reward/<term>``: the mean unweighted value of each term of the
    environment's reward (``rows["reward_terms"]``, when the rows carry them)."""
    rewards = rows["rewards"].float().cpu()  # [B]
    lengths = rows["lengths"].float().cpu()  # [B]
    correct, gradable = rows["correct"].cpu(), rows["gradable"].cpu()  # [B]
    count = len(rewards)
    wrong = gradable & ~correct  # [B]
    right_per_group = correct.view(-1, group_size).sum(dim=1)  # [B // G]
    grouped = rewards.view(-1, group_size)  # [B // G, G]
    spread = grouped.max(dim=1).values - grouped.min(dim=1).values if count else grouped.sum(1)
    values = {
        "reward_mean": _mean(rewards),
        "reward_std": rewards.std(correction=0).item() if count else math.nan,
        "correct_rate": _mean(correct.float()),
        "len_mean": _mean(lengths),
        "len_max": lengths.max().item() if count else math.nan,
        "truncation_rate": _mean(rows["truncated"].float().cpu()),
        "zero_std_group_frac": _mean((spread <= EQUAL_REWARD_ATOL).float()),
        "all_correct_group_frac": _mean((right_per_group == group_size).float()),
        "all_wrong_group_frac": _mean((right_per_group == 0).float()),
        "len_correct_mean": _mean(lengths[correct]),
        "len_wrong_mean": _mean(lengths[wrong]),
        "ungradable_frac": _mean((~gradable).float()),
    }
    if rows.get("turns") is not None:
        values["turns_mean"] = _mean(rows["turns"].float().cpu())
    if rows.get("timed_out") is not None:  # left out of the loss, as every ungradable row: counted here
        values["timeout_frac"] = _mean(rows["timed_out"].float().cpu())
    terms = rows.get("reward_terms") or {}
    return {
        **{f"rollout/{name}": float(value) for name, value in values.items()},
        **{f"reward/{name}": _mean(value.float()) for name, value in terms.items() if count},
    }


def _mean(x: Tensor) -> float:
    return x.mean().item() if x.numel() else math.nan
