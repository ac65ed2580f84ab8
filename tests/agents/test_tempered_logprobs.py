"""Issue 42: the RL losses see the distribution that sampled. At a sampling temperature T the policy's, the old
policy's and the reference's log-probs (and the entropy metric) are those of softmax(logits / T), unless
``tempered_logprobs=False`` keeps the raw model. The engines' side is in test_engine_sync.py and
test_generation.py, parity with TRL at T = 0.7 in test_losses.py."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from reasongym.agents import common
from reasongym.agents.config import RolloutConfig
from reasongym.agents.runtime import learner, update
from reasongym.errors import ConfigError
from reasongym.generation import HFGenerator
from reasongym.generation.base import Completion, SamplingParams
from reasongym.generation.vllm_engine import VLLMGenerator

ENV = "reasongym/Arithmetic-v0"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"temperature": 0.7}, 0.7),
        ({"temperature": 0.7, "tempered_logprobs": False}, 1.0),
        ({"temperature": 1.3}, 1.3),
        ({"temperature": 0.0}, 1.0),  # greedy has no tempered distribution
    ],
)
def test_logprob_temperature_and_what_the_sampler_is_asked(fields: dict, expected: float) -> None:
    rollout = RolloutConfig(**fields)
    assert rollout.logprob_temperature == expected
    assert rollout.sampling(0).tempered_logprobs == rollout.tempered_logprobs


def test_tempered_logprobs_takes_only_a_bool() -> None:
    with pytest.raises(ConfigError, match=r"tempered_logprobs='yes' is not allowed; expected"):
        RolloutConfig(tempered_logprobs="yes")  # type: ignore[arg-type]


class _Spy:
    """Wraps `token_logprobs` where the loop calls it, recording each call's temperature and entropy flag."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, bool]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((kwargs.get("temperature", 1.0), kwargs.get("with_entropy", False)))
        return common.token_logprobs(*args, **kwargs)


class _TextOnly:
    """Our sampler on the policy with the token ids and log-probs dropped: a served model's text only."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any) -> None:
        self.inner = HFGenerator(model, tokenizer)

    def generate(self, prompts: Any, params: SamplingParams) -> Any:
        return [
            [Completion(c.text, None, None, c.finish_reason) for c in group]
            for group in self.inner.generate(prompts, params)
        ]


@pytest.mark.parametrize("mu", [1, 2])
@pytest.mark.parametrize(("tempered", "expected"), [(True, 0.7), (False, 1.0)])
def test_every_logprob_of_the_loop_is_at_the_loss_temperature(
    tiny, small_configs, train, monkeypatch, tempered: bool, expected: float, mu: int
) -> None:
    # A KL reference (k3 in the loss) and a sampler that is not the policy (it returns text only): the old
    # log-probs come from a scoring pass of their own (mu = 2) or from the update's forward pass (mu = 1).
    # Every kind of log-prob, and the entropy metric, goes through the spy.
    spy = _Spy()
    monkeypatch.setattr(update, "token_logprobs", spy)
    monkeypatch.setattr(learner, "token_logprobs", spy)
    model, tokenizer = tiny()
    configs = small_configs(
        "grpo", max_steps=1, mu=mu, kl="k3_loss", temperature=0.7, tempered_logprobs=tempered
    )
    result = train("grpo", configs, model, tokenizer, ENV, generator=_TextOnly(model, tokenizer))
    # the old policy's (mu = 2), the reference's, the policy's (with the entropy) at each update
    assert len(spy.calls) >= (3 if mu == 2 else 2)
    assert {temperature for temperature, _ in spy.calls} == {expected}
    assert any(with_entropy for _, with_entropy in spy.calls)
    assert result.history[0]["train/ratio_max"] == pytest.approx(
        1.0, abs=1e-4
    )  # old = policy before the step


def test_the_entropy_metric_is_the_sampling_distributions(tiny, small_configs, train) -> None:
    # Same seed, same model: the same samples either way (the flag changes only what is reported), so the
    # entropy metric of step 1 differs only by the temperature it is computed at: lower at T = 0.7 < 1.
    rows = {}
    for tempered in (True, False):
        model, tokenizer = tiny()
        configs = small_configs("grpo", max_steps=1, kl="off", temperature=0.7, tempered_logprobs=tempered)
        rows[tempered] = train("grpo", configs, model, tokenizer, ENV).history[0]
    assert rows[True]["rollout/len_mean"] == rows[False]["rollout/len_mean"]
    assert rows[True]["train/entropy"] < rows[False]["train/entropy"] - 1e-3
    for row in rows.values():  # our sampler reports what each loss computes: the PPO ratio starts at 1
        assert row["train/ratio_max"] == pytest.approx(1.0, abs=1e-4)


def test_a_vllm_engine_refuses_params_of_another_logprob_mode() -> None:
    # The engine's logprobs_mode is fixed when it is built (no vLLM needed to check the guard).
    engine = VLLMGenerator.__new__(VLLMGenerator)
    engine.tempered_logprobs = False
    params = SamplingParams(temperature=0.7, tempered_logprobs=True)
    with pytest.raises(ConfigError, match=r"tempered_logprobs=True is not allowed for this vLLM engine"):
        engine._check_logprobs_mode(params)
    for fine in (SamplingParams(temperature=0.7), SamplingParams(temperature=0.0, tempered_logprobs=True)):
        engine._check_logprobs_mode(fine)  # the same mode, or greedy: nothing to refuse
