"""GRPO / DAPO losses and advantages on hand-computed tensors, TRL parity, and micro-batch invariance."""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import re
from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from reasongym.agents.advantages import group_advantages, zero_variance_groups
from reasongym.agents.common import token_logprobs
from reasongym.agents.config import RolloutConfig
from reasongym.agents.dapo import (
    DAPOConfig,
    dapo_loss,
    dynamic_sampling_filter,
    overlong_buffer_tokens,
    overlong_filter,
    overlong_penalty,
)
from reasongym.agents.grpo import GRPOConfig, grpo_loss, kl_k3, kl_reward_penalty
from reasongym.agents.runtime.update import BatchTotals, accumulate_gradients
from reasongym.errors import ConfigError

# The 2x3 case used throughout: old_logp = 0, so the ratio r = exp(logp) is set directly.
#   row 0: r = [1.5, 1.0, 0.5], A = +1, all three tokens live
#   row 1: r = [1.1, 0.7, 1.3], A = -1, last token masked
RATIOS = torch.tensor([[1.5, 1.0, 0.5], [1.1, 0.7, 1.3]])
ADV = torch.tensor([1.0, -1.0])
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])
# Per-token -min(r A, clip(r, 0.8, 1.2) A), eps = 0.2:
#   row 0 (A=+1): -[min(1.5, 1.2), 1.0, min(0.5, 0.8)] = [-1.2, -1.0, -0.5]   (sum -2.7)
#   row 1 (A=-1): -[min(-1.1, -1.1), min(-0.7, -0.8)] = [1.1, 0.8]            (sum 1.9)


def _logp() -> torch.Tensor:
    return RATIOS.log()


def _grpo(**overrides: object) -> GRPOConfig:
    return GRPOConfig(**{"kl": "off", **overrides})


def _totals(mask: torch.Tensor, max_new_tokens: int = 4) -> BatchTotals:
    return BatchTotals(int(mask.shape[0]), float(mask.sum()), max_new_tokens)


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [
        ("seq_mean_token_mean", (-2.7 / 3 + 1.9 / 2) / 2),  # per-sequence means, then their mean: 0.025
        ("token_mean", (-2.7 + 1.9) / 5),  # every live token weighs the same: -0.16
        ("constant", (-2.7 + 1.9) / (2 * 4)),  # Dr. GRPO: B * max_new_tokens = 8: -0.1
    ],
)
def test_grpo_loss_aggregations(aggregation: str, expected: float) -> None:
    loss, metrics = grpo_loss(
        _logp(), torch.zeros(2, 3), None, ADV, MASK, _totals(MASK), cfg=_grpo(loss_aggregation=aggregation)
    )
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    # Clipped on both sides: 1.5 > 1.2 with A > 0 (high), 0.7 < 0.8 with A < 0 (low); 1 token of 5 each.
    assert metrics["train/clip_high_frac"] == pytest.approx(0.2)
    assert metrics["train/clip_low_frac"] == pytest.approx(0.2)
    assert metrics["train/ratio_max"] == pytest.approx(1.5)
    assert metrics["train/ratio_min"] == pytest.approx(0.5)


def test_token_mean_and_sequence_mean_weigh_long_sequences_differently() -> None:
    # Row 0 has 3 live tokens, row 1 has 1. Every per-token loss is -A = -1 (row 0) and +1 (row 1), r = 1.
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    zeros = torch.zeros(2, 3)
    seq, _ = grpo_loss(zeros, zeros, None, ADV, mask, cfg=_grpo(loss_aggregation="seq_mean_token_mean"))
    tok, _ = grpo_loss(zeros, zeros, None, ADV, mask, cfg=_grpo(loss_aggregation="token_mean"))
    assert seq.item() == pytest.approx((-1 + 1) / 2)  # each sequence counts once: 0
    assert tok.item() == pytest.approx((-3 + 1) / 4)  # each token counts once: the long row dominates, -0.5


def test_k3_kl_by_hand() -> None:
    # k3 = exp(d) - d - 1 with d = ref - logp: d = ln 2 -> 2 - ln 2 - 1; d = 0 -> 0; d = -ln 2 -> 0.5 + ln 2 - 1.
    logp = torch.zeros(1, 3)
    ref = torch.tensor([[math.log(2), 0.0, -math.log(2)]])
    expected = [1 - math.log(2), 0.0, math.log(2) - 0.5]
    assert kl_k3(logp, ref)[0].tolist() == pytest.approx(expected, abs=1e-6)
    # In the loss (r = 1, A = 0): loss = beta * seq-mean-token-mean of k3.
    cfg = _grpo(kl="k3_loss", kl_coef=0.5)
    loss, metrics = grpo_loss(logp, logp, ref, torch.zeros(1), torch.ones(1, 3), cfg=cfg)
    assert loss.item() == pytest.approx(0.5 * sum(expected) / 3, abs=1e-6)
    assert metrics["loss/kl"] == pytest.approx(sum(expected) / 3, abs=1e-6)


def test_k1_kl_goes_into_the_reward() -> None:
    old = torch.tensor([[-1.0, -2.0, -3.0]])
    ref = torch.tensor([[-1.5, -2.0, -1.0]])
    # Summed over live tokens (last masked): (-1 + 1.5) + (-2 + 2) = 0.5, times beta 0.1.
    penalty = kl_reward_penalty(old, ref, torch.tensor([[1, 1, 0]]), _grpo(kl="k1_reward", kl_coef=0.1))
    assert penalty.tolist() == pytest.approx([0.05])
    assert kl_reward_penalty(old, ref, torch.ones(1, 3), _grpo(kl="k3_loss")).tolist() == [0.0]


def test_dapo_clip_higher_by_hand() -> None:
    # eps_low 0.2, eps_high 0.28: row 0 -> -[min(1.5, 1.28), 1.0, 0.5] (sum -2.78); row 1 as before (1.9).
    loss, metrics = dapo_loss(_logp(), torch.zeros(2, 3), None, ADV, MASK, cfg=DAPOConfig())
    assert loss.item() == pytest.approx((-2.78 + 1.9) / 5, abs=1e-6)
    assert metrics["train/clip_high_frac"] == pytest.approx(0.2)
    assert metrics["train/clip_low_frac"] == pytest.approx(0.2)


def test_ratio_between_the_clips_moves_only_under_clip_higher() -> None:
    # r = 1.25 with A > 0: clipped (no gradient) at eps 0.2, live under eps_high 0.28.
    logp = torch.full((1, 1), math.log(1.25), requires_grad=True)
    grpo, _ = grpo_loss(logp, torch.zeros(1, 1), None, torch.ones(1), torch.ones(1, 1), cfg=_grpo())
    (grad_grpo,) = torch.autograd.grad(grpo, logp)
    dapo, metrics = dapo_loss(
        logp, torch.zeros(1, 1), None, torch.ones(1), torch.ones(1, 1), cfg=DAPOConfig()
    )
    (grad_dapo,) = torch.autograd.grad(dapo, logp)
    assert grad_grpo.item() == 0.0
    assert grad_dapo.item() == pytest.approx(-1.25)  # d(-r)/d(logp) = -r
    assert metrics["train/clip_high_frac"] == 0.0


def test_group_advantages_by_hand() -> None:
    rewards = torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    # Group 1: mean 1/3, centred [-1/3, 2/3, -1/3]; unbiased std = sqrt((1/9 + 4/9 + 1/9) / 2) = sqrt(1/3).
    centred = [-1 / 3, 2 / 3, -1 / 3]
    std = math.sqrt(1 / 3)
    by_group = group_advantages(rewards, 3, "group_std")
    assert by_group[:3].tolist() == [0.0, 0.0, 0.0]  # equal rewards: zero advantage
    assert by_group[3:].tolist() == pytest.approx([c / (std + 1e-4) for c in centred])
    assert group_advantages(rewards, 3, "none").tolist() == pytest.approx([0, 0, 0, *centred])
    batch_std = rewards.std().item()  # all six rewards: mean 2/3
    assert group_advantages(rewards, 3, "batch_std")[3:].tolist() == pytest.approx(
        [c / (batch_std + 1e-4) for c in centred]
    )
    assert zero_variance_groups(rewards, 3).tolist() == [True, False]


def test_group_advantages_leave_out_ungradable_rows() -> None:
    # Issue 28, item 10: a sample whose grading timed out has no reward; it must not count as a 0.
    # Group 1 [1, 0, (x), 0]: the graded rows [1, 0, 0] have mean 1/3, centred [2/3, -1/3, -1/3], unbiased
    # std sqrt((4/9 + 1/9 + 1/9) / 2) = sqrt(1/3). Group 2 [(x), 1, 1, 0]: graded [1, 1, 0], mean 2/3,
    # centred [1/3, 1/3, -2/3], the same std. The batch std is that of the six graded rewards [1,0,0,1,1,0].
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    valid = torch.tensor([True, True, False, True, False, True, True, True])
    std = math.sqrt(1 / 3)
    centred = [2 / 3, -1 / 3, 0.0, -1 / 3, 0.0, 1 / 3, 1 / 3, -2 / 3]
    assert group_advantages(rewards, 4, "none", valid=valid).tolist() == pytest.approx(centred)
    assert group_advantages(rewards, 4, "group_std", valid=valid).tolist() == pytest.approx(
        [c / (std + 1e-4) for c in centred]
    )
    batch_std = torch.tensor([1.0, 0, 0, 1, 1, 0]).std().item()
    assert group_advantages(rewards, 4, "batch_std", valid=valid).tolist() == pytest.approx(
        [c / (batch_std + 1e-4) for c in centred]
    )
    # All rows graded: the same advantages as without a mask; one graded row: no signal.
    for name in ("none", "group_std", "batch_std"):
        full = group_advantages(rewards, 4, name, valid=torch.ones(8, dtype=torch.bool))
        torch.testing.assert_close(full, group_advantages(rewards, 4, name))
    lone = torch.tensor([True, False, False, False, True, True, True, True])
    assert group_advantages(rewards, 4, "group_std", valid=lone)[:4].tolist() == [0.0] * 4
    # The estimators of issue 25 leave the same rows out. RLOO: each graded row's baseline is the mean of the
    # OTHER graded rows of its group ([1, 0, 0]: 1 - 0, 0 - 1/2, 0 - 1/2; [1, 1, 0]: 1 - 1/2, 1 - 1/2, 0 - 1).
    assert group_advantages(rewards, 4, "rloo", valid=valid).tolist() == pytest.approx(
        [1.0, -0.5, 0.0, -0.5, 0.0, 0.5, 0.5, -1.0]
    )
    # REINFORCE++: whitened over the six graded rewards only (mean 1/2), 0 on the rows left out.
    graded = torch.tensor([1.0, 0, 0, 1, 1, 0])
    whitened = [(r - 0.5) / (graded.std().item() + 1e-4) for r in (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0)]
    expected = [w if keep else 0.0 for w, keep in zip(whitened, valid.tolist(), strict=True)]
    assert group_advantages(rewards, 4, "reinforce_plus_plus", valid=valid).tolist() == pytest.approx(
        expected
    )
    # REINFORCE++-baseline: the group-centred values of the graded rows, whitened over those six.
    centred_graded = torch.tensor([c for c, keep in zip(centred, valid.tolist(), strict=True) if keep])
    scale = centred_graded.std().item() + 1e-4
    baseline = [c / scale if keep else 0.0 for c, keep in zip(centred, valid.tolist(), strict=True)]
    assert group_advantages(
        rewards, 4, "reinforce_plus_plus_baseline", valid=valid
    ).tolist() == pytest.approx(baseline)
    for name in ("rloo", "reinforce_plus_plus", "reinforce_plus_plus_baseline"):
        full = group_advantages(rewards, 4, name, valid=torch.ones(8, dtype=torch.bool))
        torch.testing.assert_close(full, group_advantages(rewards, 4, name))
    assert zero_variance_groups(rewards, 4, valid=valid).tolist() == [False, False]
    only_equal = torch.tensor([False, True, True, True, False, True, True, False])  # [0, 0, 0] and [1, 1]
    assert zero_variance_groups(rewards, 4, valid=only_equal).tolist() == [True, True]


def test_dynamic_sampling_filter_and_band() -> None:
    # Three groups of 3: all correct, one of three correct, near-equal continuous rewards.
    rewards = torch.tensor([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.5, 0.5 + 1e-9, 0.5])
    correct = torch.tensor([True, True, True, True, False, False, False, False, False])
    assert dynamic_sampling_filter(rewards, correct, 3, DAPOConfig()).tolist() == [False, True, False]
    banded = DAPOConfig(accuracy_band=(0.5, 1.0))  # group 1 has accuracy 1/3: outside the band
    assert dynamic_sampling_filter(rewards, correct, 3, banded).tolist() == [False, False, False]


def test_overlong_penalty_and_filter_by_hand() -> None:
    cfg = DAPOConfig(overlong_buffer=4, overlong_penalty=1.0)
    # Safe up to 10 - 4 = 6 tokens, then -(len - 6) / 4: 8 -> -0.5, 10 -> -1.
    assert overlong_penalty(torch.tensor([5, 6, 8, 10]), cfg, 10).tolist() == [0.0, 0.0, -0.5, -1.0]
    off = DAPOConfig(overlong_buffer=0)
    assert overlong_penalty(torch.tensor([10]), off, 10).tolist() == [0.0]
    filtered = overlong_filter(torch.ones(2, 3), torch.tensor([False, True]))
    assert filtered.tolist() == [[1, 1, 1], [0, 0, 0]]


@pytest.mark.parametrize(
    ("make", "field", "nearest"),
    [
        (lambda: GRPOConfig(loss_aggregation="token_means"), "loss_aggregation", "token_mean"),
        (lambda: GRPOConfig(advantage_normalization="group"), "advantage_normalization", "group_std"),
        (lambda: GRPOConfig(kl="k3"), "kl", "k3_loss"),
    ],
)
def test_unknown_names_list_the_valid_ones(make: object, field: str, nearest: str) -> None:
    with pytest.raises(ConfigError, match=rf"{field}=.*valid names: \[.*\].*did you mean '{nearest}'"):
        make()


@pytest.mark.parametrize(
    ("max_new_tokens", "expected"),
    [(20480, 4096), (256, 51), (12, 2), (4, 0)],  # the paper's 4096-of-20480, then a fifth of L_max
)
def test_default_overlong_buffer_fits_any_max_new_tokens(max_new_tokens: int, expected: int) -> None:
    cfg = DAPOConfig()
    assert cfg.overlong_buffer is None  # the config keeps what was asked for; the function resolves it
    assert overlong_buffer_tokens(cfg, max_new_tokens) == expected
    assert overlong_buffer_tokens(DAPOConfig(overlong_buffer=3), max_new_tokens) == 3


def test_config_errors_name_the_field() -> None:
    with pytest.raises(
        ConfigError,
        match=r"overlong_buffer=8 is not allowed; expected 0 <= overlong_buffer < max_new_tokens=8",
    ):
        overlong_buffer_tokens(DAPOConfig(overlong_buffer=8), 8)
    with pytest.raises(ConfigError, match="group_size=1 is not allowed for RL"):
        RolloutConfig(group_size=1).check_for_rl()
    with pytest.raises(ConfigError, match="temperature=0.0 is not allowed for RL"):
        RolloutConfig(temperature=0.0).check_for_rl()
    with pytest.raises(ConfigError, match="clip_eps=1.5 is not allowed"):
        GRPOConfig(clip_eps=1.5)
    with pytest.raises(ConfigError, match="accuracy_band"):
        DAPOConfig(accuracy_band=(0.9, 0.1))


# ------------------------------------------------------------------------------ micro-batch invariance


def _random_case(seed: int, rows: int = 7, cols: int = 5) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    mask = (torch.rand(rows, cols, generator=gen) > 0.3).long()
    mask[:, 0] = 1
    return {
        "theta": torch.randn(rows, cols, generator=gen) * 0.3 - 1.0,
        "old": torch.randn(rows, cols, generator=gen) * 0.3 - 1.0,
        "ref": torch.randn(rows, cols, generator=gen) * 0.3 - 1.0,
        "adv": torch.randn(rows, generator=gen),
        "mask": mask,
    }


def _loss_fns() -> dict[str, object]:
    fns: dict[str, object] = {}
    for aggregation in ("seq_mean_token_mean", "token_mean", "constant"):
        cfg = GRPOConfig(loss_aggregation=aggregation, kl="k3_loss")
        fns[f"grpo/{aggregation}"] = functools.partial(grpo_loss, cfg=cfg)
    fns["dapo"] = functools.partial(dapo_loss, cfg=DAPOConfig(overlong_buffer=1))
    return fns


@pytest.mark.parametrize("name", list(_loss_fns()))
def test_accumulated_gradient_equals_full_batch_gradient_for_random_splits(name: str) -> None:
    loss_fn = _loss_fns()[name]
    for seed in range(20):
        case = _random_case(seed)
        rows = case["theta"].shape[0]
        totals = _totals(case["mask"], max_new_tokens=5)
        ref = None if name == "dapo" else case["ref"]
        full_theta = case["theta"].clone().requires_grad_(True)
        loss_fn(full_theta, case["old"], ref, case["adv"], case["mask"], totals=totals)[0].backward()
        # A random split into uneven contiguous micro-batches (sizes 1..rows).
        cuts = sorted(
            torch.randperm(rows - 1, generator=torch.Generator().manual_seed(seed))[: seed % 4 + 1] + 1
        )
        bounds = [0, *[int(c) for c in cuts], rows]
        theta = case["theta"].clone().requires_grad_(True)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            part = slice(lo, hi)
            part_ref = None if ref is None else ref[part]
            args = (theta[part], case["old"][part], part_ref, case["adv"][part], case["mask"][part])
            loss_fn(*args, totals=totals)[0].backward()
        torch.testing.assert_close(theta.grad, full_theta.grad, rtol=1e-5, atol=1e-7)


def test_per_micro_batch_normalisation_would_break_invariance() -> None:
    """The control: normalising each micro-batch by its own token count (the trl#3021 bug) changes the gradient."""
    case = _random_case(3)
    cfg = GRPOConfig(loss_aggregation="token_mean", kl="off")
    full = case["theta"].clone().requires_grad_(True)
    grpo_loss(full, case["old"], None, case["adv"], case["mask"], cfg=cfg)[0].backward()
    split = case["theta"].clone().requires_grad_(True)
    for part in (slice(0, 2), slice(2, 7)):  # local normalisers, averaged over the 2 micro-batches
        (
            grpo_loss(split[part], case["old"][part], None, case["adv"][part], case["mask"][part], cfg=cfg)[0]
            / 2
        ).backward()
    assert not torch.allclose(split.grad, full.grad, rtol=1e-3)


# ------------------------------------------------------------------------------ parity with TRL's GRPOTrainer


def _trl_loss(
    loss_type: str,
    logp: torch.Tensor,
    old: torch.Tensor,
    ref: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    *,
    beta: float,
    eps_low: float,
    eps_high: float,
    max_len: int,
    level: str = "token",
) -> torch.Tensor:
    """Call trl/trainer/grpo_trainer.py ``GRPOTrainer._compute_loss`` itself, with a stand-in ``self``."""
    trl_grpo = pytest.importorskip("trl.trainer.grpo_trainer")
    accelerator = SimpleNamespace(
        num_processes=1, gather=lambda x: x, reduce=lambda x, reduction: x, sync_gradients=True
    )
    args = SimpleNamespace(delta=None, use_bias_correction_kl=False, steps_per_generation=1)
    fake = SimpleNamespace(
        _get_per_token_logps_and_entropies=lambda *a, **k: (logp, torch.zeros_like(logp), None),
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        importance_sampling_level=level,
        beta=beta,
        args=args,
        loss_type=loss_type,
        epsilon_low=eps_low,
        epsilon_high=eps_high,
        use_vllm=False,
        vllm_importance_sampling_correction=False,
        model=SimpleNamespace(training=True),
        current_gradient_accumulation_steps=1,
        accelerator=accelerator,
        max_completion_length=max_len,
        aux_loss_enabled=False,
        _entropy_bonus_enabled=False,
        _metrics=defaultdict(lambda: defaultdict(list)),
    )
    inputs = {
        "prompt_ids": torch.zeros(logp.shape[0], 1, dtype=torch.long),
        "prompt_mask": torch.ones(logp.shape[0], 1, dtype=torch.long),
        "completion_ids": torch.zeros(logp.shape, dtype=torch.long),
        "completion_mask": mask,
        "advantages": adv,
        "old_per_token_logps": old,
        "ref_per_token_logps": ref,
        "num_items_in_batch": mask.sum(),
    }
    try:
        return trl_grpo.GRPOTrainer._compute_loss(fake, None, inputs)
    except (AttributeError, KeyError) as error:  # TRL's internals moved: the stand-in needs updating
        pytest.skip(f"TRL's _compute_loss needs more than the stand-in provides: {error!r}")


# TRL's loss_type (with importance_sampling_level, its epsilons and beta) -> the same loss here. TRL's CISPO
# caps the weight at epsilon_high itself (ScaleRL's eps_max); its "bnpo" divides by the batch's tokens.
TRL_PARITY = {
    "grpo": ("grpo", "token", 0.2, 0.2, 0.04, lambda: GRPOConfig(kl="k3_loss")),
    "dr_grpo": ("dr_grpo", "token", 0.2, 0.2, 0.04, lambda: GRPOConfig(loss_aggregation="constant")),
    "bnpo": ("bnpo", "token", 0.2, 0.2, 0.04, lambda: GRPOConfig(loss_aggregation="token_mean")),
    "dapo": ("dapo", "token", 0.2, 0.28, 0.0, lambda: DAPOConfig(overlong_buffer=1)),
    "gspo": ("grpo", "sequence", 3e-4, 4e-4, 0.04, lambda: GRPOConfig(policy_loss="gspo")),
    "gspo_wide_clip": (
        "grpo",
        "sequence",
        0.05,
        0.08,
        0.0,
        lambda: GRPOConfig(policy_loss="gspo", gspo_clip=(0.05, 0.08), kl="off"),
    ),
    "cispo": (
        "cispo",
        "token",
        0.2,
        1.3,
        0.0,
        lambda: GRPOConfig(
            policy_loss="cispo", cispo_max_weight=1.3, loss_aggregation="token_mean", kl="off"
        ),
    ),
}


@pytest.mark.parametrize("name", list(TRL_PARITY))
def test_parity_with_trl_grpo_trainer(name: str) -> None:
    """Value and gradient of each loss equal TRL's on a random case where ratios leave every clip range."""
    loss_type, level, eps_low, eps_high, beta, make_cfg = TRL_PARITY[name]
    case = _random_case(11)
    old, ref, adv, mask = case["old"], case["ref"], case["adv"], case["mask"]
    theirs = case["theta"].clone().requires_grad_(True)
    expected = _trl_loss(
        loss_type,
        theirs,
        old,
        ref,
        adv,
        mask,
        beta=beta,
        eps_low=eps_low,
        eps_high=eps_high,
        max_len=5,
        level=level,
    )
    expected.backward()
    ours = case["theta"].clone().requires_grad_(True)
    cfg = make_cfg()
    loss = dapo_loss if isinstance(cfg, DAPOConfig) else grpo_loss
    got = loss(ours, old, None if beta == 0 else ref, adv, mask, _totals(mask, 5), cfg=cfg)[0]
    got.backward()
    assert got.item() == pytest.approx(expected.item(), rel=1e-5, abs=1e-7)
    torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-5, atol=1e-7)


def _trl_end_to_end(model: torch.nn.Module, inputs: dict[str, torch.Tensor], temperature: float) -> tuple:
    """TRL's own log-probs, entropies and GRPO loss of ``inputs`` under ``model`` at ``temperature``: its
    fused LM head (`add_fused_lm_head`, as GRPOTrainer's ``__init__`` adds it) and its
    ``_get_per_token_logps_and_entropies`` and ``_compute_loss``, with a stand-in ``self`` for the rest."""
    trl_grpo = pytest.importorskip("trl.trainer.grpo_trainer")
    add_fused_lm_head = getattr(pytest.importorskip("trl.trainer.utils"), "add_fused_lm_head", None)
    if add_fused_lm_head is None:
        pytest.skip("this TRL has no add_fused_lm_head: its log-probs are computed another way")
    add_fused_lm_head(model, temperature=temperature, outputs=("log_probs", "entropy"))
    trainer = trl_grpo.GRPOTrainer
    accelerator = SimpleNamespace(
        num_processes=1,
        gather=lambda x: x,
        reduce=lambda x, reduction: x,
        sync_gradients=True,
        autocast=contextlib.nullcontext,
        is_main_process=True,
    )
    fake = SimpleNamespace(
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        importance_sampling_level="token",
        beta=0.04,
        args=SimpleNamespace(delta=None, use_bias_correction_kl=False, steps_per_generation=1),
        loss_type="grpo",
        epsilon_low=0.2,
        epsilon_high=0.2,
        use_vllm=False,
        vllm_importance_sampling_correction=False,
        model=SimpleNamespace(training=True),
        current_gradient_accumulation_steps=1,
        accelerator=accelerator,
        max_completion_length=inputs["completion_ids"].shape[1],
        aux_loss_enabled=False,
        _entropy_bonus_enabled=False,
        _metrics=defaultdict(lambda: defaultdict(list)),
    )
    fake._get_per_token_logps_and_entropies = functools.partial(
        trainer._get_per_token_logps_and_entropies, fake
    )
    input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)  # [B, P + T]
    attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)  # [B, P + T]
    width = inputs["completion_ids"].shape[1]
    try:
        with torch.no_grad():
            logp, entropy, _ = fake._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, width, compute_entropy=True
            )  # [B, T] each
        loss = trainer._compute_loss(fake, model, inputs)
    except (
        AttributeError,
        KeyError,
        TypeError,
    ) as error:  # TRL's internals moved: the stand-in needs updating
        pytest.skip(f"TRL's GRPOTrainer needs more than the stand-in provides: {error!r}")
    return logp, entropy, loss


def test_parity_with_trl_end_to_end_at_temperature_07(tiny) -> None:
    """The same model and batch at T = 0.7: TRL's GRPOTrainer and our update agree on the per-token log-probs,
    the entropies, the loss and every parameter's gradient; our loss at T = 1 does not (the control)."""
    T = 0.7
    ours, _ = tiny()
    theirs = copy.deepcopy(ours)
    gen = torch.Generator().manual_seed(5)
    rows, prompt_len, width = 6, 5, 7
    prompt_ids = torch.randint(3, 40, (rows, prompt_len), generator=gen)  # [B, P] no padding: TRL's positions
    completion_ids = torch.randint(3, 40, (rows, width), generator=gen)  # [B, T]
    lengths = torch.tensor([7, 3, 5, 7, 1, 6])  # [B]
    mask = (torch.arange(width)[None, :] < lengths[:, None]).long()  # [B, T]
    input_ids = torch.cat([prompt_ids, completion_ids], dim=1)  # [B, P + T]
    attention_mask = torch.cat([torch.ones_like(prompt_ids), mask], dim=1)  # [B, P + T]
    with torch.no_grad():
        logp, entropy = token_logprobs(
            ours, input_ids, attention_mask, prompt_len, with_entropy=True, temperature=T
        )
    # Old and reference log-probs moved off the policy's, so that ratios leave the clip range and the KL acts.
    old = (logp + 0.4 * torch.randn(rows, width, generator=gen)) * mask  # [B, T]
    ref = (logp + 0.3 * torch.randn(rows, width, generator=gen)) * mask  # [B, T]
    adv = torch.randn(rows, generator=gen)  # [B]
    inputs = {
        "prompt_ids": prompt_ids,
        "prompt_mask": torch.ones_like(prompt_ids),
        "completion_ids": completion_ids,
        "completion_mask": mask,
        "advantages": adv,
        "old_per_token_logps": old,
        "ref_per_token_logps": ref,
        "num_items_in_batch": mask.sum(),
    }
    trl_logp, trl_entropy, trl_loss = _trl_end_to_end(theirs, inputs, T)
    live = mask.bool()  # [B, T]
    torch.testing.assert_close(logp[live], trl_logp[live].float(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(entropy[live], trl_entropy[live].float(), rtol=1e-5, atol=1e-5)
    trl_loss.backward()
    batch = SimpleNamespace(
        input_ids=input_ids, attention_mask=attention_mask, completion_start=prompt_len, old_logp=old
    )
    loss = functools.partial(grpo_loss, cfg=GRPOConfig(kl="k3_loss"))
    metrics = accumulate_gradients(
        ours, batch, adv, loss, _totals(mask, width), mask=mask, ref_logp=ref, temperature=T
    )
    assert metrics["loss/total"] == pytest.approx(trl_loss.item(), rel=1e-5, abs=1e-6)
    assert (
        metrics["train/clip_low_frac"] + metrics["train/clip_high_frac"] > 0
    )  # the clip is part of the match
    for (name, a), b in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-6, msg=name)
    # The control, at T = 1: log-probs and gradient far outside the tolerances above.
    with torch.no_grad():
        raw, _ = token_logprobs(ours, input_ids, attention_mask, prompt_len)  # [B, T]
    assert float((raw - trl_logp)[live].abs().max()) > 1e-2
    tempered_grad = ours.get_input_embeddings().weight.grad.clone()
    ours.zero_grad()
    accumulate_gradients(ours, batch, adv, loss, _totals(mask, width), mask=mask, ref_logp=ref)
    untempered_grad = ours.get_input_embeddings().weight.grad
    assert float((untempered_grad - tempered_grad).abs().max()) > 0.1 * float(tempered_grad.abs().max())


def test_group_advantages_match_trl_formula() -> None:
    # trl/trainer/grpo_trainer.py (_generate_and_score_completions): (r - group mean) / (nanstd + 1e-4),
    # nanstd Bessel-corrected (trl/trainer/utils.py); scale_rewards "batch" uses the std of all rewards.
    rewards = torch.tensor([0.0, 1.0, 1.0, 0.5, 0.2, 0.9, 0.4, 0.4])
    grouped = rewards.view(-1, 4)
    centred = (grouped - grouped.mean(1, keepdim=True)).flatten()
    trl_group = centred / (grouped.std(1).repeat_interleave(4) + 1e-4)
    trl_batch = centred / (rewards.std() + 1e-4)
    torch.testing.assert_close(group_advantages(rewards, 4, "group_std"), trl_group)
    torch.testing.assert_close(group_advantages(rewards, 4, "batch_std"), trl_batch)
    torch.testing.assert_close(group_advantages(rewards, 4, "none"), centred)


@pytest.mark.parametrize(
    ("rewards", "group_size", "expected"),
    [
        ([1.0], 1, [0.0]),  # one reward: no spread, so no advantage (not NaN from a 1-sample std)
        ([0.0, 1.0], 2, [-0.5 / (0.5**0.5 + 1e-4), 0.5 / (0.5**0.5 + 1e-4)]),  # std of two: sqrt(1/2)
    ],
)
def test_batch_std_of_the_smallest_batches(
    rewards: list[float], group_size: int, expected: list[float]
) -> None:
    advantages = group_advantages(torch.tensor(rewards), group_size, "batch_std")
    assert advantages.tolist() == pytest.approx(expected, rel=1e-6)


def test_token_mean_of_a_single_live_token_divides_by_one() -> None:
    logp = torch.zeros(1, 2)
    mask = torch.tensor([[1.0, 0.0]])
    loss, _ = grpo_loss(logp, logp, None, torch.tensor([2.0]), mask, cfg=_grpo(loss_aggregation="token_mean"))
    assert loss.item() == pytest.approx(-2.0)  # -(ratio 1 x advantage 2) over 1 token


# Two samples per group, rewards 1 and 0: mean 0.5, centred +-0.5, unbiased std sqrt(0.5).
# ------------------------------------------------ boundaries, defaults and messages, each pinning a value a surviving
# mutant changed (benchmarks/mutation.py): an inclusive bound, a default argument, a degenerate group size, a field name


PAIR = 0.5 / (math.sqrt(0.5) + 1e-4)  # 0.70700681...


VALID = "['batch_std', 'group_std', 'none', 'reinforce_plus_plus', 'reinforce_plus_plus_baseline', 'rloo']"


@pytest.mark.parametrize(
    ("rewards", "group_size", "expected"),
    [
        ([1.0, 0.0], 1, [0.0, 0.0]),  # a group of one has no spread: advantage 0, not nan
        ([1.0, 0.0], 2, [PAIR, -PAIR]),  # the smallest group that is divided by its std
        ([1.0, 0.0, 0.0, 1.0], 2, [PAIR, -PAIR, -PAIR, PAIR]),
    ],
)
def test_group_std_advantages_of_small_groups(rewards: list, group_size: int, expected: list) -> None:
    advantages = group_advantages(torch.tensor(rewards), group_size, "group_std")
    assert advantages.tolist() == pytest.approx(expected, abs=1e-6)
    assert not advantages.isnan().any()


def test_the_default_normalization_is_the_group_std() -> None:
    rewards = torch.tensor([1.0, 0.0])
    assert group_advantages(rewards, 2).tolist() == pytest.approx([PAIR, -PAIR], abs=1e-6)


@pytest.mark.parametrize(
    ("rewards", "group_size", "shape"),
    [
        (torch.zeros(4), 0, "(4,)"),  # no group size at all: a message, not a ZeroDivisionError
        (torch.zeros(5), 2, "(5,)"),  # 1-d, but not a multiple of the group size
        (torch.zeros(2, 2), 2, "(2, 2)"),  # a multiple, but not 1-d
    ],
)
def test_a_group_size_that_does_not_fit_the_rewards_is_named(
    rewards: torch.Tensor, group_size: int, shape: str
) -> None:
    message = (
        f"group_size={group_size} is not allowed for rewards of shape {shape}; "
        "expected a 1-d tensor whose length is a multiple of group_size"
    )
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        group_advantages(rewards, group_size, "none")


def test_an_unknown_normalization_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^advantage_normalization='group' is not allowed; valid names"):
        group_advantages(torch.zeros(2), 2, "group")


@pytest.mark.parametrize(
    ("rewards", "tolerance", "expected"),
    [
        ([1.0, 1.0, 1.0, 0.0], 0.0, [True, False]),  # a spread of exactly 0 is within a tolerance of 0
        ([0.0, 0.5, 0.0, 0.75], 0.5, [True, False]),  # a spread equal to the tolerance still counts
    ],
)
def test_zero_variance_includes_a_spread_equal_to_the_tolerance(
    rewards: list, tolerance: float, expected: list
) -> None:
    assert zero_variance_groups(torch.tensor(rewards), 2, tolerance).tolist() == expected


def test_dynamic_sampling_uses_the_configured_tolerance() -> None:
    rewards = torch.tensor([1.0, 0.75, 0.0, 1.0])  # spreads 0.25 and 1.0
    correct = torch.tensor([True, False, False, True])
    cfg = DAPOConfig(zero_variance_tolerance=0.5)
    assert dynamic_sampling_filter(rewards, correct, 2, cfg).tolist() == [False, True]


def test_the_accuracy_band_is_inclusive_at_both_ends_and_per_group() -> None:
    # Rewards always vary within a group, so only the band decides; accuracies 1/4, 2/4, 3/4, 4/4.
    rewards = torch.tensor([0.0, 1.0, 0.0, 1.0] * 4)
    correct = torch.tensor([[i < k for i in range(4)] for k in (1, 2, 3, 4)]).reshape(-1)
    cfg = DAPOConfig(accuracy_band=(0.25, 0.75))
    assert dynamic_sampling_filter(rewards, correct, 4, cfg).tolist() == [True, True, True, False]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mu": 0}, "mu=0 is not allowed; expected an integer in [1, 1024]"),
        ({"max_extra_rounds": -1}, "max_extra_rounds=-1 is not allowed; expected an integer in [0, 1024]"),
        (
            {"overlong_buffer": -1},
            "overlong_buffer=-1 is not allowed; expected an integer in [0, 1048576] or None",
        ),
        (
            {"eps_high": 0.0},
            "eps_high=0.0 is not allowed; expected a float in (0, 1e+06]",
        ),
        (
            {"eps_low": 0.0},
            "eps_low=0.0 is not allowed; expected a float in (0, 1)",
        ),
        (
            {"eps_low": 1.0},
            "eps_low=1.0 is not allowed; expected a float in (0, 1)",
        ),
        (
            {"eps_low": 1.5},
            "eps_low=1.5 is not allowed; expected a float in (0, 1)",
        ),
        (
            {"overlong_penalty": -0.5},
            "overlong_penalty=-0.5 is not allowed; expected a float in [0, 1e+06] (the penalty at max_new_tokens; 0: off)",
        ),
        (
            {"accuracy_band": (0.5, 1.5)},
            "accuracy_band=(0.5, 1.5) is not allowed; expected (lo, hi) with 0 <= lo <= hi <= 1",
        ),
    ],
)
def test_dapo_config_refuses_out_of_range_values(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        DAPOConfig(**overrides)


@pytest.mark.parametrize(
    "overrides",
    [
        {"mu": 1, "max_extra_rounds": 0, "overlong_buffer": 0},
        {"overlong_penalty": 0.0, "zero_variance_tolerance": 0.0},
        {"overlong_penalty": 0.5},
        {"accuracy_band": (0.0, 1.0)},
        {"accuracy_band": (0.5, 0.5)},
    ],
)
def test_dapo_config_accepts_the_ends_of_its_ranges(overrides: dict) -> None:
    cfg = DAPOConfig(**overrides)
    assert {name: getattr(cfg, name) for name in overrides} == overrides


def test_the_default_overlong_buffer_is_capped_at_4096_tokens() -> None:
    assert overlong_buffer_tokens(DAPOConfig(), 40960) == 4096  # a fifth would be 8192


def test_overlong_penalty_stops_at_its_full_value_past_the_limit() -> None:
    cfg = DAPOConfig(overlong_buffer=4, overlong_penalty=1.0)
    assert overlong_penalty(torch.tensor([12, 20]), cfg, 10).tolist() == [-1.0, -1.0]


def test_a_zero_overlong_penalty_keeps_the_device_and_float32() -> None:
    lengths = torch.empty(3, dtype=torch.long, device="meta")
    assert overlong_penalty(lengths, DAPOConfig(overlong_buffer=0), 10).device.type == "meta"
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:  # the same dtype as the non-zero branch, whatever the default
        assert overlong_penalty(torch.tensor([3]), DAPOConfig(overlong_buffer=0), 10).dtype == torch.float32
    finally:
        torch.set_default_dtype(previous)


def test_dapo_loss_refuses_a_reference_and_reports_its_loss() -> None:
    logp, adv, mask = torch.zeros(1, 2), torch.tensor([0.5]), torch.ones(1, 2)
    message = "dapo_loss got ref_logp; DAPO has no KL term (paper Sec. 2.3), pass None"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        dapo_loss(logp, logp, logp, adv, mask, cfg=DAPOConfig())
    loss, metrics = dapo_loss(logp, logp, None, adv, mask, cfg=DAPOConfig())
    assert loss.item() == pytest.approx(-0.5)  # ratio 1, every token -A
    assert metrics["loss/policy"] == pytest.approx(-0.5)


@pytest.mark.parametrize("loss", ["grpo", "dapo"])
def test_the_loss_keeps_the_dtype_of_the_log_probs(loss: str) -> None:
    logp = torch.zeros(1, 2, dtype=torch.bfloat16)
    adv, mask = torch.tensor([0.1]), torch.ones(1, 2)
    if loss == "grpo":
        value, _ = grpo_loss(logp, logp, None, adv, mask, cfg=GRPOConfig(kl="off"))
    else:
        value, _ = dapo_loss(logp, logp, None, adv, mask, cfg=DAPOConfig())
    assert value.dtype == torch.bfloat16


def test_k1_reward_without_a_reference_is_named() -> None:
    message = "kl='k1_reward' needs ref_logp (log-probs under the reference model); got None"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        kl_reward_penalty(torch.zeros(1, 2), None, torch.ones(1, 2), GRPOConfig(kl="k1_reward"))


def test_grpo_loss_names_a_missing_or_misshapen_reference() -> None:
    logp, adv, mask = torch.zeros(1, 2), torch.tensor([0.5]), torch.ones(1, 2)
    message = "kl='k3_loss' needs ref_logp (log-probs under the reference model); got None"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        grpo_loss(logp, logp, None, adv, mask, cfg=GRPOConfig(kl="k3_loss"))
    with pytest.raises(ConfigError, match=r"loss inputs disagree: .*'ref_logp': \(1, 3\)"):
        grpo_loss(logp, logp, torch.zeros(1, 3), adv, mask, cfg=GRPOConfig(kl="k3_loss"))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "group",
            f"advantage_normalization='group' is not allowed; valid names: {VALID}; did you mean 'group_std'?",
        ),
        (
            "std",
            f"advantage_normalization='std' is not allowed; valid names: {VALID}; did you mean 'group_std'?",
        ),
        ("zzz", f"advantage_normalization='zzz' is not allowed; valid names: {VALID}"),
    ],
)
def test_an_unknown_name_suggests_the_nearest_one_only_when_there_is_one(name: str, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        group_advantages(torch.zeros(2), 2, name)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mu": 0}, "mu=0 is not allowed; expected an integer in [1, 1024]"),
        ({"clip_eps": 0.0}, "clip_eps=0.0 is not allowed; expected a float in (0, 1)"),
        ({"clip_eps": 1.0}, "clip_eps=1.0 is not allowed; expected a float in (0, 1)"),
        ({"kl_coef": -0.1}, "kl_coef=-0.1 is not allowed; expected a float in [0, 1e+06]"),
        ({"kl_coef": math.inf}, "kl_coef=inf is not allowed; expected a float in [0, 1e+06]"),
    ],
)
def test_grpo_config_refuses_out_of_range_values(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        GRPOConfig(**overrides)


def test_grpo_config_accepts_no_kl_weight() -> None:
    assert GRPOConfig(kl_coef=0.0).kl_coef == 0.0


def test_grpo_loss_without_totals_divides_by_its_own_length_limit() -> None:
    # One sequence of T = 2 with one live token: -A = -0.5 summed, over B * T = 2 under "constant".
    logp, adv, mask = torch.zeros(1, 2), torch.tensor([0.5]), torch.tensor([[1, 0]])
    loss, metrics = grpo_loss(
        logp, logp, None, adv, mask, cfg=GRPOConfig(kl="off", loss_aggregation="constant")
    )
    assert loss.item() == pytest.approx(-0.25)
    assert metrics["loss/policy"] == pytest.approx(-0.25)
    assert metrics["loss/kl"] == 0.0  # no reference, no KL
