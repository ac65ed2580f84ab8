"""A few GRPO steps on the tiny model: the loop runs, logs, checkpoints, resumes, and micro-batches change nothing."""

from __future__ import annotations

import functools
import json
from types import SimpleNamespace

import pytest
import torch
from reward_wrappers import DigitReward

import reasongym
from reasongym.agents.common import enable_checkpointing, token_logprobs
from reasongym.agents.grpo import grpo_loss
from reasongym.agents.runtime.hooks import StepHook, StepView
from reasongym.agents.runtime.setup import start_session
from reasongym.agents.runtime.update import BatchTotals, accumulate_gradients
from reasongym.envs.core import ReasoningEnv
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource
from reasongym.errors import ConfigError
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.rollouts.batch import collect_rollouts
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"


@pytest.mark.parametrize("kl", ["off", "k3_loss", "k1_reward"])
def test_grpo_runs_logs_and_checkpoints(tmp_path: object, kl: str, tiny, small_configs, train) -> None:
    model, tokenizer = tiny()
    before = [p.detach().clone() for p in model.parameters()]
    result = train(
        "grpo",
        small_configs("grpo", kl=kl, eval_every=2, micro_batch_size=4),
        model,
        tokenizer,
        ENV,
        run_dir=tmp_path,
    )
    assert result.steps == 2 and len(result.history) == 2
    assert [e["step"] for e in result.evals] == [0.0, 2.0]  # before training, and at the end
    records = read_metrics(tmp_path)
    logged = set().union(*records)
    for key in (
        "rollout/reward_mean",
        "rollout/correct_rate",
        "rollout/zero_std_group_frac",
        "rollout/truncation_rate",
        "rollout/len_correct_mean",
        "train/clip_low_frac",
        "train/clip_high_frac",
        "train/entropy",
        "train/ratio_max",
        "train/approx_kl_old",
        "perf/generate_s",
        "perf/verify_s",
        "perf/train_s",
        "perf/forward_backward_s",
        "perf/optimizer_s",
        "perf/housekeeping_s",
        "perf/tokens_per_s",
        "eval/pass@1",
        "loss/policy",
    ):
        assert key in logged, key
    phases = ("generate", "verify", "reference", "forward_backward", "optimizer", "housekeeping")
    for row in result.history:  # the phases add up to the step (what bench_grpo.py prints per phase)
        assert sum(row.get(f"perf/{p}_s", 0.0) for p in phases) == pytest.approx(row["perf/step_s"], rel=1e-6)
        assert row["perf/train_s"] == pytest.approx(row["perf/forward_backward_s"] + row["perf/optimizer_s"])
    assert (tmp_path / "metrics.png").exists()
    assert (tmp_path / "reference.safetensors").exists() == (kl != "off")
    assert json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])["completion"] is not None
    assert result.history[-1]["train/skipped_nonfinite"] == 0.0
    # With random rewards mostly 0 the weights may stay put; the loop still ran mu optimizer steps per batch.
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert len(before) == len(list(model.parameters()))


def test_grpo_resume_continues_and_zero_steps_left_is_an_error(
    tmp_path: object, tiny, small_configs, train
) -> None:
    model, tokenizer = tiny()
    train("grpo", small_configs("grpo", max_steps=1), model, tokenizer, ENV, run_dir=tmp_path)
    resumed = train("grpo", small_configs("grpo", max_steps=2), model, tokenizer, ENV, run_dir=tmp_path)
    assert resumed.resumed_from == 1 and resumed.steps == 2 and len(resumed.history) == 1
    assert [r["step"] for r in read_metrics(tmp_path)] == [1, 2]
    with pytest.raises(reasongym.errors.ConfigError, match="already trained 2 of 2"):
        train("grpo", small_configs("grpo", max_steps=2), model, tokenizer, ENV, run_dir=tmp_path)


def _prompts_per_step(run_dir: object) -> list[tuple[int, str]]:
    return [(row["step"], row["prompt"]) for row in map(json.loads, (run_dir / "samples.jsonl").open())]


def test_resume_reproduces_an_uninterrupted_run(tmp_path: object, tiny, small_configs, train) -> None:
    settings = {"max_steps": 3, "lr": 1e-2, "kl": "off", "num_prompts": 2, "samples_every": 1}
    initial, tokenizer = tiny()
    straight, _ = tiny()
    train(
        "grpo",
        small_configs("grpo", **settings),
        straight,
        tokenizer,
        DigitReward(reasongym.make(ENV)),
        run_dir=tmp_path / "a",
    )
    split, _ = tiny()
    train(
        "grpo",
        small_configs("grpo", **{**settings, "max_steps": 1}),
        split,
        tokenizer,
        DigitReward(reasongym.make(ENV)),
        run_dir=tmp_path / "b",
    )
    fresh, _ = tiny()  # a new process would start from the initial weights and load the checkpoint
    train(
        "grpo",
        small_configs("grpo", **settings),
        fresh,
        tokenizer,
        DigitReward(reasongym.make(ENV)),
        run_dir=tmp_path / "b",
    )
    a, b = read_metrics(tmp_path / "a"), read_metrics(tmp_path / "b")
    assert all(row["rollout/reward_std"] > 0 for row in a)  # informative rewards: the loss is not 0
    moved = max(
        (p - q).abs().max().item() for p, q in zip(straight.parameters(), initial.parameters(), strict=True)
    )
    assert moved > 1e-3  # so the comparison below says something
    for p, q in zip(straight.parameters(), fresh.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
    assert [r["rollout/reward_mean"] for r in a] == [r["rollout/reward_mean"] for r in b]
    seen = _prompts_per_step(tmp_path / "a")
    assert seen == _prompts_per_step(tmp_path / "b")  # the resumed run trained on the same problems
    assert len({prompt for _, prompt in seen}) == 6  # 2 new problems per step: the data cursor moved on


@pytest.mark.parametrize(
    ("aggregation", "policy_loss"),
    [
        ("seq_mean_token_mean", "ppo_clip"),
        ("token_mean", "ppo_clip"),
        ("constant", "ppo_clip"),
        ("seq_mean_token_mean", "gspo"),
        ("token_mean", "gspo_token"),
        ("token_mean", "cispo"),
    ],
)
def test_micro_batches_through_the_model_give_the_full_batch_gradient(
    aggregation: str, policy_loss: str, tiny, small_configs
) -> None:
    model, tokenizer = tiny()
    params = SamplingParams(max_new_tokens=10, temperature=1.0, seed=0, n=3)
    batch = collect_rollouts(ENV, HFGenerator(model, tokenizer), tokenizer, [0, 1], params=params)
    adv = torch.linspace(-1.0, 1.0, len(batch))
    clips = {
        "gspo_clip": (0.1, 0.1),
        "cispo_max_weight": 1.03,
    }  # GSPO's sequences live, CISPO's weights capped
    cfg = small_configs("grpo", loss_aggregation=aggregation, policy_loss=policy_loss, **clips)["grpo"]
    totals = BatchTotals(len(batch), float(batch.completion_mask.sum()), 10)

    def loss_fn(logp, old_logp, ref_logp, adv, mask, totals):  # noqa: ANN001, ANN202
        # ratio != 1 and a reference: clipping and KL both act
        return grpo_loss(logp, old_logp - 0.05, old_logp + 0.1, adv, mask, totals, cfg=cfg)

    grads = {}
    for size in (None, 1, 4):
        model.zero_grad()
        accumulate_gradients(
            model, batch, adv, loss_fn, totals, mask=batch.completion_mask, micro_batch_size=size
        )
        grads[size] = torch.cat([p.grad.flatten() for p in model.parameters()])
    torch.testing.assert_close(grads[1], grads[None], rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(grads[4], grads[None], rtol=1e-4, atol=1e-7)


def test_gradient_checkpointing_recomputes_the_same_gradient_and_refuses_other_models(
    tiny, small_configs
) -> None:
    model, tokenizer = tiny()
    params = SamplingParams(max_new_tokens=10, temperature=1.0, seed=0, n=3)
    batch = collect_rollouts(ENV, HFGenerator(model, tokenizer), tokenizer, [0, 1], params=params)
    adv = torch.linspace(-1.0, 1.0, len(batch))
    cfg = small_configs("grpo", kl="off")["grpo"]
    totals = BatchTotals(len(batch), float(batch.completion_mask.sum()), 10)
    loss_fn = functools.partial(grpo_loss, cfg=cfg)

    def gradient() -> torch.Tensor:
        model.train().zero_grad()
        accumulate_gradients(
            model, batch, adv, loss_fn, totals, mask=batch.completion_mask, micro_batch_size=2
        )
        return torch.cat([p.grad.flatten() for p in model.parameters()])

    kept = gradient()
    enable_checkpointing(model)
    assert model.is_activation_checkpointing
    torch.testing.assert_close(gradient(), kept, rtol=1e-5, atol=1e-8)
    with pytest.raises(
        ConfigError, match=r"gradient_checkpointing=True is not allowed for this model \(Linear\)"
    ):
        enable_checkpointing(torch.nn.Linear(2, 2))


def test_accumulate_gradients_reports_entropy(tiny, small_configs) -> None:
    model, _ = tiny()
    batch = SimpleNamespace(
        input_ids=torch.randint(5, 60, (2, 6)),
        attention_mask=torch.ones(2, 6, dtype=torch.long),
        completion_start=3,
        old_logp=torch.zeros(2, 3),
    )
    cfg = small_configs("grpo", kl="off")["grpo"]
    metrics = accumulate_gradients(
        model,
        batch,
        torch.zeros(2),
        functools.partial(grpo_loss, cfg=cfg),
        BatchTotals(2, 6.0, 3),
        mask=torch.ones(2, 3),
        with_entropy=True,
    )
    vocab = model.config.vocab_size
    assert 0 < metrics["train/entropy"] <= torch.log(torch.tensor(float(vocab))).item() + 1e-4


def _dataset_env(*splits: str) -> ReasoningEnv:
    rows = [Problem(f"What is {i} + 1?", str(i + 1), id=f"p{i}") for i in range(3)]
    return ReasoningEnv(DatasetSource.from_problems("mine", "math", {name: rows for name in splits}))


@pytest.mark.parametrize(
    ("splits", "train_split", "eval_split"),
    [
        (("test",), "test", "test"),  # register_dataset's single split: train and evaluate on it
        (("train", "validation"), "train", "validation"),  # CommonsenseQA / StrategyQA: no test split
        (("train", "test"), "train", "test"),
    ],
)
def test_default_splits_are_ones_the_source_has(
    splits: tuple, train_split: str, eval_split: str, tiny, small_configs, train
) -> None:
    model, tokenizer = tiny()
    cfg = small_configs(
        "grpo",
        max_steps=1,
        num_prompts=1,
        group_size=2,
        max_new_tokens=4,
        kl="off",
        eval_every=1,
        mu=1,
        difficulty=None,
    )
    seen = Seen()
    result = train("grpo", cfg, model, tokenizer, _dataset_env(*splits), hooks=[seen])
    assert (seen.views[0].train_split, seen.views[0].eval_split) == (train_split, eval_split)
    assert result.steps == 1 and [e["step"] for e in result.evals] == [0.0, 1.0]


class Seen(StepHook):
    """Keeps every view the run shows it, and each step's batch."""

    def __init__(self) -> None:
        self.views: list[StepView] = []
        self.batches: list[object] = []

    def before_sampling(self, view: StepView) -> bool:
        self.views.append(view)
        return False

    def after_sampling(self, view: StepView, batch: object) -> None:
        self.batches.append(batch)

    def after_update(self, view: StepView) -> bool:
        self.views.append(view)
        return False


@pytest.mark.parametrize(
    ("field", "value", "available"),
    [("split", "trian", r"\['train', 'validation'\]"), ("eval_split", "test", r"\['train', 'validation'\]")],
)
def test_a_split_the_source_lacks_names_the_available_ones(
    field: str, value: str, available: str, tiny, small_configs, train
) -> None:
    model, tokenizer = tiny()
    with pytest.raises(ConfigError, match=rf"{field}='{value}' is not a split of .*available: {available}"):
        train(
            "grpo",
            small_configs("grpo", **{field: value}),
            model,
            tokenizer,
            _dataset_env("train", "validation"),
        )


def _with_dropout(arch: str, tiny) -> tuple[torch.nn.Module, object]:
    """The tiny model with 0.5 attention dropout (llama), or a GPT-2 of its width and depth (0.1 dropout
    everywhere)."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaForCausalLM

    tiny_model, tokenizer = tiny()
    config = tiny_model.config
    torch.manual_seed(0)
    if arch == "llama":
        config.attention_dropout = 0.5
        return LlamaForCausalLM(config), tokenizer
    gpt2 = GPT2Config(
        n_embd=config.hidden_size,
        n_layer=config.num_hidden_layers,
        n_head=config.num_attention_heads,
        n_positions=64,
        vocab_size=config.vocab_size,
        bos_token_id=config.bos_token_id,
        eos_token_id=config.eos_token_id,
    )
    return GPT2LMHeadModel(gpt2), tokenizer


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_rl_disables_dropout_so_the_first_ratio_is_one(arch: str, tiny, small_configs) -> None:
    model, tokenizer = _with_dropout(arch, tiny)
    cfg = small_configs("grpo", kl="off")
    start_session(
        cfg["run"],
        cfg["rollout"],
        model,
        tokenizer,
        ENV,
        algo="grpo",
        config_record={},
        run_dir=None,
        generator=None,
        with_reference=False,
    )
    ids = torch.randint(5, 60, (2, 10))
    mask = torch.ones_like(ids)
    model.eval()
    with torch.no_grad():
        old_logp, _ = token_logprobs(model, ids, mask, 4)  # how the sampler scores: eval mode
    model.train()  # how the update runs
    logp, _ = token_logprobs(model, ids, mask, 4)
    assert torch.equal(logp.detach(), old_logp)  # ratio exp(logp - old_logp) is exactly 1 on step one


def test_the_loop_subtracts_the_k1_penalty_from_rewards(tmp_path: object, tiny, small_configs, train) -> None:
    """k1_reward puts ``kl_coef * sum_t (old_logp - ref_logp)`` into the reward with a minus sign. A reference
    that differs from the policy (another model's weights as the run's saved reference) makes it non-zero
    from the first step, so the sign shows in the rewards the advantages are computed from."""
    from safetensors.torch import save_model

    import reasongym.agents.grpo as grpo

    model, tokenizer = tiny()
    other, _ = tiny(seed=1)
    save_model(other, str(tmp_path / "reference.safetensors"))
    seen: dict[str, object] = {}

    def advantages(rewards, group_size, normalization, *, valid=None):  # noqa: ANN001, ANN202
        seen["rewards"] = rewards.clone()
        return grpo_advantages(rewards, group_size, normalization, valid=valid)

    grpo_advantages = grpo.group_advantages
    hook = Seen()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grpo, "group_advantages", advantages)
        train(
            "grpo",
            small_configs("grpo", max_steps=1, kl="k1_reward", kl_coef=0.5, mu=1),
            model,
            tokenizer,
            ENV,
            run_dir=tmp_path,
            hooks=[hook],
        )
    update = hook.views[-1].update  # what the step's update trained on, and the reference's log-probs
    batch = update.batch
    log_ratio = ((batch.old_logp - update.ref_logp) * batch.completion_mask).sum(dim=1)  # [B]
    assert log_ratio.abs().min() > 1e-3  # the reference really differs
    torch.testing.assert_close(seen["rewards"], batch.rewards - 0.5 * log_ratio)


@pytest.mark.parametrize("algo", ["grpo", "dapo"])
def test_timed_out_verdicts_are_counted_and_left_out_of_the_loss(
    tiny, small_configs, train, monkeypatch: pytest.MonkeyPatch, algo: str
) -> None:
    # Issue 28, item 10: a verdict that ran out of time is ungradable, never a wrong answer worth 0.
    import itertools

    from reasongym.verifiers import Outcome, Verdict

    calls, original = itertools.count(), ReasoningEnv.score

    def score(self: ReasoningEnv, problem: Problem, completion: str) -> Verdict:
        verdict = original(self, problem, completion)
        return Verdict(None, Outcome.TIMEOUT, None, "ran past 1 s") if next(calls) % 2 else verdict

    monkeypatch.setattr(ReasoningEnv, "score", score)
    model, tokenizer = tiny()
    fields = {"max_steps": 1, "eval_every": 0, **({"dynamic_sampling": False} if algo == "dapo" else {})}
    hook = Seen()
    result = train(algo, small_configs(algo, **fields), model, tokenizer, ENV, hooks=[hook])
    assert result.history[0]["rollout/timeout_frac"] == 0.5  # 3 of the 6 samples
    assert result.history[0]["rollout/ungradable_frac"] == 0.5
    update = hook.views[-1].update
    left_out, adv, mask = ~update.batch.gradable, update.adv, update.mask
    assert int(left_out.sum()) == 3
    assert adv[left_out].tolist() == [0.0] * 3 and int(mask[left_out].sum()) == 0
    assert int(mask[~left_out].sum()) > 0
