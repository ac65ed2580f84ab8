"""GSPO, GSPO-token, CISPO, RLOO and REINFORCE++ on hand-computed tensors, and micro-batch invariance for each.

TRL parity for GSPO and CISPO is in test_losses.py, beside the other losses'.
"""

from __future__ import annotations

import functools
import math

import pytest
import torch

from reasongym.agents.advantages import group_advantages
from reasongym.agents.grpo import GRPOConfig, grpo_loss, mask_truncated
from reasongym.agents.runtime.update import BatchTotals
from reasongym.errors import ConfigError

# The 2x3 case of test_losses.py: old_logp = 0, so the ratio r = exp(logp) is set directly.
#   row 0: r = [1.5, 1.0, 0.5], A = +1, all three tokens live
#   row 1: r = [1.1, 0.7, 1.3], A = -1, last token masked
RATIOS = torch.tensor([[1.5, 1.0, 0.5], [1.1, 0.7, 1.3]])
ADV = torch.tensor([1.0, -1.0])
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])


def _loss_and_grad(**fields: object) -> tuple[float, torch.Tensor, dict[str, float]]:
    logp = RATIOS.log().requires_grad_(True)
    loss, metrics = grpo_loss(logp, torch.zeros(2, 3), None, ADV, MASK, cfg=GRPOConfig(kl="off", **fields))
    loss.backward()
    return loss.item(), logp.grad, metrics


# ------------------------------------------------------------------------------ GSPO


def test_gspo_clips_whole_sequences_by_hand() -> None:
    # s_0 = (1.5 * 1.0 * 0.5)^(1/3) = 0.75^(1/3) = 0.90856; s_1 = (1.1 * 0.7)^(1/2) = 0.77^(1/2) = 0.87750.
    # Clip range [1 - 3e-4, 1 + 4e-4] = [0.9997, 1.0004]:
    #   row 0 (A = +1): -min(s_0, 0.9997) = -s_0 (unclipped: the upper clip only binds above 1.0004)
    #   row 1 (A = -1): -min(-s_1, -0.9997) = +0.9997 (clipped low: the whole sequence loses its gradient)
    # seq_mean_token_mean: (-0.90856 + 0.9997) / 2.
    s0, s1 = 0.75 ** (1 / 3), 0.77**0.5
    loss, grad, metrics = _loss_and_grad(policy_loss="gspo")
    assert loss == pytest.approx((-s0 + (1 - 3e-4)) / 2, abs=1e-6)
    # d/dlogp_t of -s_0 / 2 is -s_0 / (3 * 2) on each of row 0's tokens; row 1 is clipped: 0.
    assert grad[0].tolist() == pytest.approx([-s0 / 6] * 3, abs=1e-6)
    assert grad[1].tolist() == [0.0, 0.0, 0.0]
    assert metrics["train/clip_low_frac"] == pytest.approx(2 / 5)  # row 1's two live tokens
    assert metrics["train/clip_high_frac"] == 0.0
    assert metrics["train/ratio_max"] == pytest.approx(s0, abs=1e-6)
    assert metrics["train/ratio_min"] == pytest.approx(s1, abs=1e-6)
    assert metrics["train/ratio_mean"] == pytest.approx((3 * s0 + 2 * s1) / 5, abs=1e-6)  # token-weighted


def test_gspo_ratio_is_the_geometric_mean_of_the_token_ratios() -> None:
    # A wide clip leaves both rows live: row 1 (A = -1) contributes +s_1, and the gradient is s_i A / |o_i|.
    s0, s1 = 0.75 ** (1 / 3), 0.77**0.5
    loss, grad, _ = _loss_and_grad(policy_loss="gspo", gspo_clip=(0.5, 0.5))
    assert loss == pytest.approx((-s0 + s1) / 2, abs=1e-6)
    assert grad[1].tolist() == pytest.approx([s1 / 4, s1 / 4, 0.0], abs=1e-6)


def test_gspo_token_equals_gspo_in_value_and_gradient() -> None:
    # GSPO Eq. 13-14: with one advantage per sequence the two objectives and their gradients coincide.
    gen = torch.Generator().manual_seed(5)
    old = torch.randn(6, 7, generator=gen) * 0.1
    theta = old + torch.randn(6, 7, generator=gen) * 0.002  # ratios near 1: some sequences clipped, some not
    adv, mask = torch.randn(6, generator=gen), (torch.rand(6, 7, generator=gen) > 0.3).long()
    mask[:, 0] = 1
    results = {}
    for name in ("gspo", "gspo_token"):
        logp = theta.clone().requires_grad_(True)
        loss, metrics = grpo_loss(logp, old, None, adv, mask, cfg=GRPOConfig(kl="off", policy_loss=name))
        loss.backward()
        results[name] = (loss.item(), logp.grad, metrics)
    assert results["gspo_token"][0] == pytest.approx(results["gspo"][0], rel=1e-6)
    torch.testing.assert_close(results["gspo_token"][1], results["gspo"][1], rtol=1e-5, atol=1e-8)
    clipped = results["gspo"][2]["train/clip_low_frac"] + results["gspo"][2]["train/clip_high_frac"]
    assert 0 < clipped < 1  # the case has both kinds of sequence
    assert results["gspo_token"][2]["train/clip_high_frac"] == results["gspo"][2]["train/clip_high_frac"]


# ------------------------------------------------------------------------------ CISPO


def test_cispo_caps_the_weight_and_keeps_every_gradient_by_hand() -> None:
    # Cap 1.2: weights sg(min(r, 1.2)) = row 0 [1.2, 1.0, 0.5], row 1 [1.1, 0.7] (its 1.3 is masked).
    # Per-token loss -w A logp: row 0 -[1.2 ln 1.5, 0, 0.5 ln 0.5]; row 1 +[1.1 ln 1.1, 0.7 ln 0.7].
    # token_mean over 5 tokens. Gradient -w A / 5 per token: the r = 1.5 token keeps -1.2 / 5.
    loss, grad, metrics = _loss_and_grad(
        policy_loss="cispo", cispo_max_weight=1.2, loss_aggregation="token_mean"
    )
    per_token = [-1.2 * math.log(1.5), 0.0, -0.5 * math.log(0.5), 1.1 * math.log(1.1), 0.7 * math.log(0.7)]
    assert loss == pytest.approx(sum(per_token) / 5, abs=1e-6)
    assert grad.flatten().tolist() == pytest.approx([-0.24, -0.2, -0.1, 0.22, 0.14, 0.0], abs=1e-6)
    assert metrics["train/clip_high_frac"] == pytest.approx(
        1 / 5
    )  # r = 1.5 > 1.2; the masked 1.3 not counted
    assert metrics["train/clip_low_frac"] == 0.0  # CISPO has no lower cap
    # The same token under ppo_clip (eps 0.2): r = 1.5 > 1.2 with A > 0 is dropped, gradient 0.
    _, ppo_grad, _ = _loss_and_grad(policy_loss="ppo_clip", loss_aggregation="token_mean")
    assert ppo_grad[0, 0].item() == 0.0 and grad[0, 0].item() != 0.0


def test_cispo_on_policy_is_the_reinforce_gradient() -> None:
    # At r = 1 every weight is 1: the gradient is -A / |tokens| per token, the plain policy gradient.
    logp = torch.full((2, 2), -0.7, requires_grad=True)
    cfg = GRPOConfig(kl="off", policy_loss="cispo", loss_aggregation="token_mean")
    grpo_loss(logp, logp.detach(), None, torch.tensor([2.0, -1.0]), torch.ones(2, 2), cfg=cfg)[0].backward()
    assert logp.grad.flatten().tolist() == pytest.approx([-0.5, -0.5, 0.25, 0.25])


# ------------------------------------------------------------------------------ advantage estimators

REWARDS = torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 0.0])  # two groups of 3: all right, one of three right


def test_rloo_leaves_each_sample_out_of_its_baseline() -> None:
    # Group 1: baselines (1 + 0) / 2 = 0.5, (0 + 0) / 2 = 0, 0.5 -> advantages -0.5, 1, -0.5 (= 3/2 x centred).
    assert group_advantages(REWARDS, 3, "rloo").tolist() == pytest.approx([0, 0, 0, -0.5, 1.0, -0.5])
    assert group_advantages(torch.tensor([3.0, 5.0]), 1, "rloo").tolist() == [0.0, 0.0]  # no other sample


def test_reinforce_plus_plus_whitens_across_the_batch() -> None:
    # mean 2/3; Bessel std of [1,1,1,0,1,0] = sqrt((4 x 1/9 + 2 x 4/9) / 5) = sqrt(4/15) = 0.516398.
    std = math.sqrt(4 / 15)
    expected = [(r - 2 / 3) / (std + 1e-4) for r in REWARDS.tolist()]
    got = group_advantages(REWARDS, 3, "reinforce_plus_plus")
    assert got.tolist() == pytest.approx(expected, rel=1e-6)
    assert got[0].item() > 0  # no group baseline: the all-right group is pushed up against the batch


def test_reinforce_plus_plus_baseline_centres_by_group_then_whitens() -> None:
    # Centred [0, 0, 0, -1/3, 2/3, -1/3]: mean 0, Bessel std sqrt((1/9 + 4/9 + 1/9) / 5) = sqrt(2/15).
    centred = [0.0, 0.0, 0.0, -1 / 3, 2 / 3, -1 / 3]
    std = math.sqrt(2 / 15)
    got = group_advantages(REWARDS, 3, "reinforce_plus_plus_baseline")
    assert got.tolist() == pytest.approx([c / (std + 1e-4) for c in centred], rel=1e-6, abs=1e-6)
    # batch_std divides the same centred rewards by the std of the RAW rewards (sqrt(4/15)) instead.
    batch_std = group_advantages(REWARDS, 3, "batch_std")
    assert batch_std.tolist() == pytest.approx([c / (math.sqrt(4 / 15) + 1e-4) for c in centred], rel=1e-6)


# ------------------------------------------------------------------------------ truncated completions, config


def test_mask_truncated_zeroes_whole_rows() -> None:
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    assert mask_truncated(mask, torch.tensor([False, True])).tolist() == [[1, 1, 0], [0, 0, 0]]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"policy_loss": "gpso"}, r"policy_loss='gpso' is not allowed; valid names: .*did you mean 'gspo'"),
        ({"advantage_normalization": "rlo"}, r"advantage_normalization='rlo' .*did you mean 'rloo'"),
        ({"gspo_clip": (0.0, 4e-4)}, r"gspo_clip=\(0.0, 0.0004\) is not allowed; expected \(left, right\)"),
        (
            {"cispo_max_weight": 0.5},
            r"cispo_max_weight=0.5 is not allowed; expected a float in \[1, 1e\+06\]",
        ),
    ],
)
def test_new_choices_refuse_bad_values(fields: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GRPOConfig(**fields)


# ------------------------------------------------------------------------------ micro-batch invariance


def _case(seed: int, rows: int = 7, cols: int = 5) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    mask = (torch.rand(rows, cols, generator=gen) > 0.3).long()
    mask[:, 0] = 1
    old = torch.randn(rows, cols, generator=gen) * 0.3 - 1.0
    return {
        "theta": old + torch.randn(rows, cols, generator=gen) * 0.05,  # some sequences in GSPO's range
        "old": old,
        "ref": torch.randn(rows, cols, generator=gen) * 0.3 - 1.0,
        "adv": torch.randn(rows, generator=gen),
        "mask": mask,
    }


@pytest.mark.parametrize("policy_loss", ["gspo", "gspo_token", "cispo"])
@pytest.mark.parametrize("aggregation", ["seq_mean_token_mean", "token_mean", "constant"])
def test_micro_batches_give_the_full_batch_gradient(policy_loss: str, aggregation: str) -> None:
    cfg = GRPOConfig(
        policy_loss=policy_loss, loss_aggregation=aggregation, gspo_clip=(0.01, 0.01), cispo_max_weight=1.05
    )
    loss_fn = functools.partial(grpo_loss, cfg=cfg)
    for seed in range(10):
        case = _case(seed)
        totals = BatchTotals(7, float(case["mask"].sum()), 5)
        full = case["theta"].clone().requires_grad_(True)
        loss_fn(full, case["old"], case["ref"], case["adv"], case["mask"], totals)[0].backward()
        split = case["theta"].clone().requires_grad_(True)
        for part in (slice(0, 1), slice(1, 4), slice(4, 7)):
            args = (split[part], case["old"][part], case["ref"][part], case["adv"][part], case["mask"][part])
            loss_fn(*args, totals)[0].backward()
        torch.testing.assert_close(split.grad, full.grad, rtol=1e-5, atol=1e-7)
