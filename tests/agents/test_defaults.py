"""One source of defaults: a trainer called from Python without ``run=`` or ``rollout=`` trains with exactly the
configs ``reasongym train ALGO`` builds for a real model (the ``default`` preset), field by field."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from reasongym.agents import dapo, grpo, sft, star
from reasongym.agents.runtime.hooks import StepHook, StepView
from reasongym.cli import main
from reasongym.cli import train as cli_train

ENV = "reasongym/Arithmetic-v0"


class _Captured(Exception):
    def __init__(self, **configs: Any) -> None:
        super().__init__("captured")
        self.configs = configs


def _from_the_command_line(monkeypatch: pytest.MonkeyPatch, algo: str) -> dict[str, Any]:
    """The configs `reasongym train ALGO` hands its trainer for a model that is not the tiny one."""
    captured: dict[str, Any] = {}

    def record(algo_: str, configs: dict[str, Any], job: Any) -> dict[str, Any]:
        captured.update(configs)
        return {}

    monkeypatch.setattr(cli_train, "_train", record)
    assert main(["train", algo, "--model", "someone/a-real-model", "--env", ENV]) == 0
    return captured


def _differences(first: Any, second: Any) -> dict[str, tuple[Any, Any]]:
    a, b = dataclasses.asdict(first), dataclasses.asdict(second)
    return {key: (a[key], b[key]) for key in a if a[key] != b[key]}


@pytest.mark.parametrize(
    ("algo", "module", "config"), [("grpo", grpo, grpo.GRPOConfig), ("dapo", dapo, dapo.DAPOConfig)]
)
def test_rl_trainers_default_to_the_command_lines_configs(
    monkeypatch: pytest.MonkeyPatch, tiny: Any, algo: str, module: Any, config: type
) -> None:
    cli = _from_the_command_line(monkeypatch, algo)

    class Capture(StepHook):
        """Keeps the configs the trainer runs with, and stops it before its first batch."""

        def before_sampling(self, view: StepView) -> bool:
            self.configs = {"run": view.run, "rollout": view.rollout}
            return True

    model, tokenizer = tiny()
    python = Capture()
    result = getattr(module, f"train_{algo}")(config(), model, tokenizer, ENV, hooks=[python])
    assert result.steps == 0  # the hook stopped the run before its first step
    for section in ("run", "rollout"):
        assert _differences(python.configs[section], cli[section]) == {}, section
    assert _differences(config(), cli[algo]) == {}
    assert cli["rollout"].group_size == (16 if algo == "dapo" else 8)  # the preset, not the class default


def test_sft_defaults_to_the_command_lines_run_config(monkeypatch: pytest.MonkeyPatch, tiny: Any) -> None:
    cli = _from_the_command_line(monkeypatch, "sft")

    def capture(cfg: Any, run: Any, *args: Any) -> None:
        raise _Captured(run=run)

    monkeypatch.setattr(sft, "_check_run", capture)
    model, tokenizer = tiny()
    with pytest.raises(_Captured) as python:
        sft.train_sft(sft.SFTConfig(), model, tokenizer, [("1 + 1 =", " 2")])
    assert _differences(python.value.configs["run"], cli["run"]) == {}
    assert _differences(sft.SFTConfig(), cli["sft"]) == {}
    assert cli["run"].lr == 1e-5  # the default preset's SFT rate, not RunConfig's


def test_star_defaults_to_the_command_lines_configs(monkeypatch: pytest.MonkeyPatch, tiny: Any) -> None:
    cli = _from_the_command_line(monkeypatch, "star")

    def capture(cfg: Any, run: Any, rollout: Any, *args: Any) -> None:
        raise _Captured(run=run, rollout=rollout)

    monkeypatch.setattr(star._Loop, "build", capture)
    model, tokenizer = tiny()
    with pytest.raises(_Captured) as python:
        star.train_star(star.STaRConfig(), model, tokenizer, ENV)
    for section in ("run", "rollout"):
        assert _differences(python.value.configs[section], cli[section]) == {}, section
    assert cli["rollout"].temperature == 0.0  # greedy rationales, the preset's


def test_each_name_list_is_its_registry() -> None:
    """A config's choice list and the table it looks names up in are one list (no second copy to drift); the
    open registries' built-in entries each load the function of their name."""
    import typing

    from reasongym.agents import advantages, distill, policy_losses
    from reasongym.agents.choices import CorrectionName, KLPlacement, LossAggregationName
    from reasongym.agents.config import RolloutConfig
    from reasongym.agents.grpo import KL_MODES, LOSS_AGGREGATIONS, GRPOConfig
    from reasongym.agents.offpolicy import IMPORTANCE_SAMPLING_CORRECTIONS, ImportanceSamplingConfig
    from reasongym.agents.registries import ADVANTAGE_ESTIMATORS, DIVERGENCES, POLICY_LOSSES
    from reasongym.evaluation.config import EvalConfig
    from reasongym.generation.engines import ENGINES, Engine

    assert typing.get_args(LossAggregationName) == tuple(LOSS_AGGREGATIONS)
    assert typing.get_args(KLPlacement) == tuple(KL_MODES)
    assert typing.get_args(CorrectionName) == tuple(IMPORTANCE_SAMPLING_CORRECTIONS)
    hints = typing.get_type_hints(GRPOConfig)
    assert (hints["loss_aggregation"], hints["kl"]) == (LossAggregationName, KLPlacement)
    assert typing.get_type_hints(ImportanceSamplingConfig)["mode"] == CorrectionName
    assert [POLICY_LOSSES[name] for name in ("ppo_clip", "gspo", "gspo_token", "cispo")] == [
        policy_losses.ppo_clip,
        policy_losses.gspo,
        policy_losses.gspo_token,
        policy_losses.cispo,
    ]
    assert ADVANTAGE_ESTIMATORS["rloo"] is advantages.leave_one_out
    assert ADVANTAGE_ESTIMATORS["none"] is advantages.no_normalization
    assert DIVERGENCES["jsd"] is distill.generalized_jsd
    assert DIVERGENCES.has("sampled_reverse_kl", "token_level") and not DIVERGENCES.has("jsd", "token_level")
    batch_level = [name for name in ADVANTAGE_ESTIMATORS if ADVANTAGE_ESTIMATORS.has(name, "batch_level")]
    assert batch_level == ["batch_std", "reinforce_plus_plus", "reinforce_plus_plus_baseline"]
    assert typing.get_args(Engine) == ENGINES == ("hf", "vllm", "auto")
    for config in (RolloutConfig, EvalConfig):
        assert typing.get_type_hints(config)["engine"] == Engine
