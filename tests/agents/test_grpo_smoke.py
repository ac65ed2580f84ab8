"""A few GRPO steps on the tiny model: the loop runs, logs, checkpoints, resumes, and micro-batches change nothing."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

import reasongym
from reasongym.agents.grpo import GRPOConfig, grpo_loss, train_grpo
from reasongym.agents.rl_loop import accumulate_gradients
from reasongym.agents.rollout import collect_rollouts
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.metrics import read_metrics
from reasongym.models import make_char_tokenizer, make_tiny_model

ENV = "reasongym/Arithmetic-v0"


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def _tiny() -> tuple[torch.nn.Module, object]:
    tokenizer = make_char_tokenizer()
    return make_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64), tokenizer


def _cfg(**overrides: object) -> GRPOConfig:
    base = {
        "max_steps": 2, "num_prompts": 2, "group_size": 3, "max_new_tokens": 12, "lr": 1e-3, "mu": 2,
        "difficulty": 1, "progress_bar": False, "samples_every": 1, "eval_problems": 3,
    }  # fmt: skip
    return GRPOConfig(**{**base, **overrides})


@pytest.mark.parametrize("kl", ["off", "k3_loss", "k1_reward"])
def test_grpo_runs_logs_and_checkpoints(tmp_path: object, kl: str) -> None:
    model, tokenizer = _tiny()
    before = [p.detach().clone() for p in model.parameters()]
    result = train_grpo(
        _cfg(kl=kl, eval_every=2, micro_batch_size=4), model, tokenizer, ENV, run_dir=tmp_path
    )
    assert result.steps == 2 and len(result.history) == 2
    assert [e["step"] for e in result.evals] == [0.0, 2.0]  # before training, and at the end
    records = read_metrics(tmp_path)
    logged = set().union(*records)
    for key in (
        "rollout/reward_mean", "rollout/correct_rate", "rollout/zero_std_group_frac", "rollout/truncation_rate",
        "rollout/len_correct_mean", "train/clip_low_frac", "train/clip_high_frac", "train/entropy",
        "train/ratio_max", "train/approx_kl_old", "perf/generate_s", "perf/verify_s", "perf/train_s",
        "perf/tokens_per_s", "eval/pass@1", "loss/policy",
    ):  # fmt: skip
        assert key in logged, key
    assert (tmp_path / "metrics.png").exists()
    assert (tmp_path / "reference.safetensors").exists() == (kl != "off")
    assert json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])["completion"] is not None
    assert result.history[-1]["train/skipped_nonfinite"] == 0.0
    # With random rewards mostly 0 the weights may stay put; the loop still ran mu optimizer steps per batch.
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert len(before) == len(list(model.parameters()))


def test_grpo_resume_continues_and_zero_steps_left_is_an_error(tmp_path: object) -> None:
    model, tokenizer = _tiny()
    train_grpo(_cfg(max_steps=1), model, tokenizer, ENV, run_dir=tmp_path)
    resumed = train_grpo(_cfg(max_steps=2), model, tokenizer, ENV, run_dir=tmp_path)
    assert resumed.resumed_from == 1 and resumed.steps == 2 and len(resumed.history) == 1
    assert [r["step"] for r in read_metrics(tmp_path)] == [1, 2]
    with pytest.raises(reasongym.errors.ConfigError, match="already trained 2 of 2"):
        train_grpo(_cfg(max_steps=2), model, tokenizer, ENV, run_dir=tmp_path)


def test_resume_reproduces_an_uninterrupted_run(tmp_path: object) -> None:
    straight, tokenizer = _tiny()
    train_grpo(_cfg(max_steps=2, lr=1e-2), straight, tokenizer, ENV, run_dir=tmp_path / "a")
    split, _ = _tiny()
    train_grpo(_cfg(max_steps=1, lr=1e-2), split, tokenizer, ENV, run_dir=tmp_path / "b")
    fresh, _ = _tiny()  # a new process would start from the initial weights and load the checkpoint
    train_grpo(_cfg(max_steps=2, lr=1e-2), fresh, tokenizer, ENV, run_dir=tmp_path / "b")
    for p, q in zip(straight.parameters(), fresh.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
    a, b = read_metrics(tmp_path / "a"), read_metrics(tmp_path / "b")
    assert [r["rollout/reward_mean"] for r in a] == [r["rollout/reward_mean"] for r in b]


@pytest.mark.parametrize("aggregation", ["seq_mean_token_mean", "token_mean", "constant"])
def test_micro_batches_through_the_model_give_the_full_batch_gradient(aggregation: str) -> None:
    model, tokenizer = _tiny()
    params = SamplingParams(max_new_tokens=10, temperature=1.0, seed=0)
    batch = collect_rollouts(
        ENV, HFGenerator(model, tokenizer), tokenizer, [0, 1], group_size=3, params=params
    )
    adv = torch.linspace(-1.0, 1.0, len(batch))
    cfg = _cfg(loss_aggregation=aggregation, max_new_tokens=10)

    def loss_fn(logp, old, ref, adv, mask, **scale):  # noqa: ANN001, ANN003, ANN202
        return grpo_loss(logp, old - 0.05, old + 0.1, adv, mask, cfg, **scale)  # ratio != 1: clipping, KL

    grads = {}
    for size in (None, 1, 4):
        model.zero_grad()
        accumulate_gradients(model, batch, adv, loss_fn, mask=batch.completion_mask, micro_batch_size=size)
        grads[size] = torch.cat([p.grad.flatten() for p in model.parameters()])
    torch.testing.assert_close(grads[1], grads[None], rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(grads[4], grads[None], rtol=1e-4, atol=1e-7)


def test_accumulate_gradients_reports_entropy() -> None:
    model, _ = _tiny()
    batch = SimpleNamespace(
        input_ids=torch.randint(5, 60, (2, 6)), attention_mask=torch.ones(2, 6, dtype=torch.long),
        completion_start=3, old_logp=torch.zeros(2, 3),
    )  # fmt: skip
    cfg = _cfg(kl="off")
    metrics = accumulate_gradients(
        model, batch, torch.zeros(2), lambda *a, **s: grpo_loss(*a, cfg, **s),
        mask=torch.ones(2, 3), with_entropy=True,
    )  # fmt: skip
    vocab = model.config.vocab_size
    assert 0 < metrics["train/entropy"] <= torch.log(torch.tensor(float(vocab))).item() + 1e-4
