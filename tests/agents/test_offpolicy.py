"""The off-policy correction (truncated and masked importance sampling, per token and per sequence) on
hand-computed tensors, its place in the GRPO and DAPO losses, and its metrics."""

from __future__ import annotations

import math

import pytest
import torch

from reasongym.agents.dapo import DAPOConfig, dapo_loss
from reasongym.agents.grpo import GRPOConfig, grpo_loss
from reasongym.agents.offpolicy import (
    IMPORTANCE_SAMPLING_CORRECTIONS,
    ImportanceSamplingConfig,
    importance_weights,
)
from reasongym.agents.runtime.update import BatchTotals
from reasongym.errors import ConfigError

# rho = pi_old / mu per token, set directly: the sampler's log-probs are 0, the trainer's log(rho).
#   row 0: rho = [2, 0.5, 4]          all live; the sequence's rho is 2 * 0.5 * 4 = 4
#   row 1: rho = [1, 0.25, (9)]       last token masked; the sequence's rho is 0.25
RHO = torch.tensor([[2.0, 0.5, 4.0], [1.0, 0.25, 9.0]])
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])
LN2 = math.log(2.0)


def _weights(mode: str, **band: float | None) -> tuple[torch.Tensor, dict[str, float]]:
    cfg = ImportanceSamplingConfig(mode=mode, **band)  # type: ignore[arg-type]
    return importance_weights(RHO.log(), torch.zeros(2, 3), MASK, cfg)


@pytest.mark.parametrize(
    ("mode", "band", "expected"),
    [
        ("off", {}, [[1, 1, 1], [1, 1, 0]]),
        # clamp(rho, max=3): only the 4 is cut
        ("token_truncate", {"clip_max": 3.0}, [[2, 0.5, 3], [1, 0.25, 0]]),
        ("token_truncate", {"clip_max": 3.0, "clip_min": 0.4}, [[2, 0.5, 3], [1, 0.4, 0]]),
        # rho outside the band: 0
        ("token_mask", {"clip_max": 3.0}, [[2, 0.5, 0], [1, 0.25, 0]]),
        ("token_mask", {"clip_max": 3.0, "clip_min": 0.4}, [[2, 0.5, 0], [1, 0, 0]]),
        ("token_mask", {"clip_max": None, "clip_min": 0.4}, [[2, 0.5, 4], [1, 0, 0]]),
        # one rho per sequence (4 and 0.25), on each of its loss tokens
        ("sequence_truncate", {"clip_max": 3.0}, [[3, 3, 3], [0.25, 0.25, 0]]),
        ("sequence_truncate", {"clip_max": 3.0, "clip_min": 0.5}, [[3, 3, 3], [0.5, 0.5, 0]]),
        ("sequence_mask", {"clip_max": 3.0}, [[0, 0, 0], [0.25, 0.25, 0]]),
        ("sequence_mask", {"clip_max": 5.0, "clip_min": 0.5}, [[4, 4, 4], [0, 0, 0]]),
    ],
)
def test_weights_by_hand(mode: str, band: dict[str, float | None], expected: list[list[float]]) -> None:
    weights, _ = _weights(mode, **band)
    torch.testing.assert_close(weights, torch.tensor(expected, dtype=weights.dtype), atol=1e-6, rtol=0)


def test_every_trl_mode_is_registered() -> None:
    assert set(IMPORTANCE_SAMPLING_CORRECTIONS) == {
        "off",
        "token_truncate",
        "token_mask",
        "sequence_truncate",
        "sequence_mask",
    }


def test_mismatch_metrics_by_hand() -> None:
    _, token = _weights("token_mask", clip_max=3.0)
    # k3 per token, rho - 1 - log rho: (1 - ln2) + (ln2 - 0.5) + (3 - 2 ln2) + 0 + (2 ln2 - 0.75) = 2.75
    assert token["sampler/kl_k3"] == pytest.approx(2.75 / 5)
    assert token["sampler/logp_diff_mean"] == pytest.approx(6 * LN2 / 5)  # |log rho|: ln2, ln2, 2ln2, 0, 2ln2
    assert token["sampler/logp_diff_max"] == pytest.approx(2 * LN2)
    assert (token["sampler/ratio_min"], token["sampler/ratio_max"]) == pytest.approx((0.25, 4.0))
    assert token["sampler/masked_frac"] == pytest.approx(1 / 5)  # the 4
    assert token["sampler/truncated_frac"] == 0.0
    assert token["sampler/weight_mean"] == pytest.approx((2 + 0.5 + 1 + 0.25) / 5)
    assert token["sampler/tokens"] == 5.0
    _, sequence = _weights("sequence_mask", clip_max=3.0)
    assert (sequence["sampler/ratio_min"], sequence["sampler/ratio_max"]) == pytest.approx((0.25, 4.0))
    assert sequence["sampler/masked_frac"] == pytest.approx(3 / 5)  # row 0's three tokens
    _, truncated = _weights("sequence_truncate", clip_max=3.0)
    assert truncated["sampler/truncated_frac"] == pytest.approx(3 / 5)
    assert truncated["sampler/masked_frac"] == 0.0


def test_no_mismatch_gives_weight_one_and_zero_kl() -> None:
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]])
    for mode in IMPORTANCE_SAMPLING_CORRECTIONS:
        weights, metrics = importance_weights(
            logp, logp.clone(), torch.ones(2, 2), ImportanceSamplingConfig(mode=mode)
        )  # type: ignore[arg-type]
        assert weights.tolist() == [[1.0, 1.0], [1.0, 1.0]]
        assert metrics["sampler/kl_k3"] == 0.0 and metrics["sampler/masked_frac"] == 0.0


# The 2x3 case of test_losses.py: old_logp = 0, ratio r = exp(logp), A = [+1, -1], row 1's last token masked.
RATIOS = torch.tensor([[1.5, 1.0, 0.5], [1.1, 0.7, 1.3]])
ADV = torch.tensor([1.0, -1.0])
WEIGHTS = torch.tensor([[2.0, 0.5, 3.0], [1.0, 0.25, 0.0]])
TOTALS = BatchTotals(2, 5.0, 4)


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [
        # per-token -min(r A, clip(r, 0.8, 1.2) A) = [-1.2, -1.0, -0.5], [1.1, 0.8]; times the weights:
        # [-2.4, -0.5, -1.5] (sum -4.4) and [1.1, 0.2] (sum 1.3)
        ("token_mean", (-4.4 + 1.3) / 5),
        ("seq_mean_token_mean", (-4.4 / 3 + 1.3 / 2) / 2),  # each row still divides by its token count
    ],
)
def test_grpo_loss_weighs_each_token(aggregation: str, expected: float) -> None:
    cfg = GRPOConfig(kl="off", loss_aggregation=aggregation)  # type: ignore[arg-type]
    loss, metrics = grpo_loss(RATIOS.log(), torch.zeros(2, 3), None, ADV, MASK, TOTALS, WEIGHTS, cfg=cfg)
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    assert metrics["train/ratio_max"] == pytest.approx(1.5)  # the PPO ratio is pi_theta / pi_old, unweighted


def test_grpo_kl_term_is_not_weighted() -> None:
    logp, ref = torch.zeros(2, 3), torch.full((2, 3), math.log(2.0))  # k3 per token: 2 - 1 - ln2
    cfg = GRPOConfig(kl="k3_loss", kl_coef=0.5, loss_aggregation="token_mean")
    loss, _ = grpo_loss(logp, logp, ref, torch.zeros(2), MASK, TOTALS, torch.zeros(2, 3), cfg=cfg)
    assert loss.item() == pytest.approx(0.5 * (1 - LN2), abs=1e-6)  # the policy term is 0 (A = 0 anyway)


def test_dapo_loss_weighs_each_token() -> None:
    # clip(r, 0.8, 1.28): row 0 per-token -[1.28, 1.0, 0.5], row 1 [1.1, 0.8]; weighted:
    # [-2.56, -0.5, -1.5] and [1.1, 0.2]; token mean over the whole batch's 5 tokens
    loss, _ = dapo_loss(RATIOS.log(), torch.zeros(2, 3), None, ADV, MASK, TOTALS, WEIGHTS, cfg=DAPOConfig())
    assert loss.item() == pytest.approx((-4.56 + 1.3) / 5, abs=1e-6)


def test_weights_of_one_change_nothing() -> None:
    cfg = GRPOConfig(kl="off")
    plain, _ = grpo_loss(RATIOS.log(), torch.zeros(2, 3), None, ADV, MASK, TOTALS, cfg=cfg)
    ones, _ = grpo_loss(RATIOS.log(), torch.zeros(2, 3), None, ADV, MASK, TOTALS, torch.ones(2, 3), cfg=cfg)
    assert plain.item() == ones.item()


@pytest.mark.parametrize("policy_loss", ["ppo_clip", "gspo", "gspo_token", "cispo"])
def test_every_policy_loss_takes_the_weights(policy_loss: str) -> None:
    # Issue 25's surrogates: the correction multiplies each token's loss whichever the surrogate is, so
    # weights of one change nothing and a weight of 0 on row 1 leaves row 0's loss alone.
    cfg = GRPOConfig(kl="off", policy_loss=policy_loss, loss_aggregation="token_mean")  # type: ignore[arg-type]
    logp = RATIOS.log().requires_grad_()
    plain, _ = grpo_loss(logp, torch.zeros(2, 3), None, ADV, MASK, TOTALS, cfg=cfg)
    ones, _ = grpo_loss(logp, torch.zeros(2, 3), None, ADV, MASK, TOTALS, torch.ones(2, 3), cfg=cfg)
    assert plain.item() == pytest.approx(ones.item(), abs=1e-7)
    row_0 = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    weighted, _ = grpo_loss(logp, torch.zeros(2, 3), None, ADV, MASK, TOTALS, row_0, cfg=cfg)
    weighted.backward()
    assert logp.grad is not None and float(logp.grad[1].abs().max()) == 0.0  # row 1 gets no gradient
    assert float(logp.grad[0].abs().max()) > 0.0


def test_config_refuses_bad_values_naming_the_field() -> None:
    with pytest.raises(
        ConfigError, match=r"mode='token_trunc' is not allowed.*did you mean 'token_truncate'"
    ):
        ImportanceSamplingConfig(mode="token_trunc")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"importance_sampling.clip_max=-1.0 is not allowed"):
        ImportanceSamplingConfig(clip_max=-1.0)
    with pytest.raises(ConfigError, match=r"clip_min=2.0 is above clip_max=1.5"):
        ImportanceSamplingConfig(clip_min=2.0, clip_max=1.5)
    assert GRPOConfig().importance_sampling == ImportanceSamplingConfig(mode="sequence_mask", clip_max=3.0)
