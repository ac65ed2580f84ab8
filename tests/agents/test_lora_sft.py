"""LoRA for SFT and STaR, as for GRPO: only the adapters train, checkpoints hold them with their optimizer state and
resume, a run loads merged; STaR fine-tunes fresh adapters on the frozen base each iteration; the command line
trains such a run and evaluates it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from test_star import ScriptedGenerator

import reasongym
from reasongym import distributed
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.config import LoRAConfig, RunConfig
from reasongym.agents.sft import SFTConfig, train_sft
from reasongym.agents.star import train_star
from reasongym.errors import ConfigError
from reasongym.policy.checkpoints import latest_checkpoint
from reasongym.policy.loading import load_policy
from reasongym.policy.lora import adapter_state, adapters_of, is_adapted
from tests.conftest import load_script

worker = load_script(Path(__file__).with_name("sft_worker.py"))

ENV = "reasongym/Arithmetic-v0"
SFT = SFTConfig(batch_size=8)
pytestmark = pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")


def _run(**fields: object) -> RunConfig:
    settings = {"lr": 1e-2, "lr_schedule": "cosine", "progress_bar": False, "tensorboard": False, "seed": 3}
    return RunConfig(**{**settings, "lora": LoRAConfig(rank=4, alpha=8.0), **fields})


def _frozen_weights_unchanged(model: torch.nn.Module, base: dict[str, torch.Tensor]) -> bool:
    state = model.state_dict()  # peft renames a wrapped weight to <layer>.base_layer.weight
    return all(
        torch.equal(state.get(name, state.get(name.replace(".weight", ".base_layer.weight"))), tensor)
        for name, tensor in base.items()
    )


def _adapters(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in adapter_state(adapters_of(model)).items()}


def _logits(model: torch.nn.Module, tokenizer: object, text: str = "3+4=7") -> torch.Tensor:
    ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        return model.eval()(input_ids=ids).logits  # [1, L, V]


# ---------------------------------------------------------------------------------------------- SFT


def test_sft_with_lora_trains_only_the_adapters_and_checkpoints_them_with_their_optimizer_state(
    tmp_path: Path,
) -> None:
    model, tokenizer = worker.tiny_setup()
    base = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    result = train_sft(
        SFT,
        model,
        tokenizer,
        worker.addition_pairs(40),
        run=_run(max_steps=8, save_every=4),
        run_dir=tmp_path,
    )
    assert _frozen_weights_unchanged(model, base)
    trained = [name for name, p in model.named_parameters() if p.requires_grad]
    layers = model.config.num_hidden_layers
    assert len(trained) == 2 * 7 * layers and all(
        ".lora_" in name for name in trained
    )  # A, B on 7 projections
    losses = [metrics["loss/sft"] for metrics in result.history]
    assert max(losses[-3:]) < 0.9 * losses[0], losses  # a random base: the adapters alone lower it ~14%
    checkpoint = latest_checkpoint(tmp_path)
    assert checkpoint.name == "step-000008"
    files = {path.name for path in checkpoint.iterdir()}
    assert {"adapter_model.safetensors", "adapter_config.json", "config.json"} <= files
    assert "model.safetensors" not in files
    adapters = load_file(str(checkpoint / "adapter_model.safetensors"))
    assert len(adapters) == len(trained)
    assert any(t.abs().sum() > 0 for n, t in adapters.items() if "lora_B" in n)  # B starts at 0: it moved
    optimizer = torch.load(checkpoint / "optimizer.pt", weights_only=False)
    assert len(optimizer["state"]) == len(trained)
    assert (tmp_path / "reference.safetensors").is_file()  # the base (the tiny model has no source to name)
    assert json.loads((tmp_path / "config.json").read_text())["run"]["lora"]["rank"] == 4


def test_a_lora_sft_run_stopped_after_a_checkpoint_resumes_to_the_uninterrupted_weights(
    tmp_path: Path,
) -> None:
    run, pairs = _run(max_steps=6, save_every=3, warmup_steps=2), worker.addition_pairs(40)
    straight_model, tokenizer = worker.tiny_setup(dropout=0.1)  # dropout: the resume must restore the RNG
    straight = train_sft(SFT, straight_model, tokenizer, pairs, run=run, run_dir=tmp_path / "straight")

    first, _ = worker.tiny_setup(dropout=0.1)
    stopped = train_sft(
        SFT, first, tokenizer, pairs, run=run, run_dir=tmp_path / "stopped", stop_when=lambda step: step == 3
    )
    assert stopped.stopped_early and stopped.steps == 3
    resumed_model, _ = worker.tiny_setup(dropout=0.1)
    resumed = train_sft(SFT, resumed_model, tokenizer, pairs, run=run, run_dir=tmp_path / "stopped")

    assert resumed.resumed_from == 3 and resumed.steps == 6
    assert [m["loss/sft"] for m in resumed.history] == [m["loss/sft"] for m in straight.history[3:]]
    expected = _adapters(straight_model)
    for name, tensor in _adapters(resumed_model).items():
        torch.testing.assert_close(tensor, expected[name], rtol=0, atol=0, msg=name)


def test_load_policy_of_a_lora_sft_run_is_the_merged_model_with_the_adapted_models_logits(
    tmp_path: Path,
) -> None:
    model, tokenizer = worker.tiny_setup()
    train_sft(SFT, model, tokenizer, worker.addition_pairs(40), run=_run(max_steps=4), run_dir=tmp_path)
    tokenizer.save_pretrained(tmp_path)
    merged, loaded_tokenizer = load_policy(tmp_path)
    assert not is_adapted(merged) and not any("lora" in name for name, _ in merged.named_parameters())
    expected = _logits(model, tokenizer)
    torch.testing.assert_close(_logits(merged, loaded_tokenizer), expected, rtol=0, atol=1e-5)
    untrained, _ = worker.tiny_setup()
    assert not torch.allclose(_logits(untrained, tokenizer), expected, atol=1e-3)  # the adapters count


def test_resuming_a_lora_sft_run_without_lora_is_refused(tmp_path: Path) -> None:
    model, tokenizer = worker.tiny_setup()
    train_sft(SFT, model, tokenizer, worker.addition_pairs(16), run=_run(max_steps=1), run_dir=tmp_path)
    fresh, _ = worker.tiny_setup()
    with pytest.raises(ConfigError, match="holds LoRA adapters but the model has no adapters"):
        run = _run(max_steps=2, lora=LoRAConfig(rank=0))
        train_sft(SFT, fresh, tokenizer, worker.addition_pairs(16), run=run, run_dir=tmp_path)


def test_lora_sft_across_processes_is_refused_before_training(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "current", lambda: distributed.DistInfo(0, 2, 0))
    model, tokenizer = worker.tiny_setup()
    with pytest.raises(
        ConfigError, match=r"lora.rank=4 is not allowed with 2 processes yet; LoRA runs in one"
    ):
        train_sft(SFT, model, tokenizer, worker.addition_pairs(16), run=_run(max_steps=1))
    assert not any(".lora_" in name for name, _ in model.named_parameters())


# ---------------------------------------------------------------------------------------------- STaR


def _star_configs() -> dict[str, object]:
    settings = {
        "max_steps": 2,
        "num_train_problems": 6,
        "eval_problems": 2,
        "max_new_tokens": 8,
        "sft_steps": 2,
        "sft": {"batch_size": 4},
        "lr": 1e-2,
        "lr_schedule": "cosine",
        "progress_bar": False,
        "tensorboard": False,
        "lora": {"rank": 4, "alpha": 8.0},
    }
    return preset_configs("default", "star", **settings)


def _star(
    configs: dict[str, object], model: object, tokenizer: object, run_dir: Path, **kwargs: object
) -> object:
    """STaR on level-1 arithmetic, its rationales from a scripted teacher that solves problems 0 to 3 (the
    policy, the tiny model with its adapters, is what the held-out evaluation samples)."""
    env = reasongym.make(ENV, difficulty=1, prompt_template="{question}")
    cfg = configs["star"]
    indices = range(cfg.train_start, cfg.train_start + cfg.num_train_problems)
    teacher = ScriptedGenerator(
        {i: env.unwrapped.problem_at(i, split="train") for i in indices}, solves={0, 1, 2, 3}
    )
    return train_star(
        cfg,
        model,
        tokenizer,
        env,
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=run_dir,
        rationale_generator=teacher,
        **kwargs,
    )


def test_star_with_lora_fine_tunes_fresh_adapters_on_the_frozen_base_each_iteration(
    tmp_path: Path, tiny
) -> None:
    model, tokenizer = tiny(num_heads=2)
    base = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    at_fine_tune: list[dict[str, torch.Tensor]] = []

    def check(iteration: int, step: str, policy: torch.nn.Module) -> None:
        assert _frozen_weights_unchanged(policy, base), (iteration, step)
        if step == "fine_tune":
            at_fine_tune.append(_adapters(policy))

    result = _star(_star_configs(), model, tokenizer, tmp_path, on_step=check)

    assert [stats.sft_steps for stats in result.iterations] == [2, 2]  # both iterations fine-tuned
    initial = load_file(str(tmp_path / "initial_adapters.safetensors"))
    for adapters in at_fine_tune:  # each fine-tune starts from the same fresh adapters: the model is the base
        assert adapters.keys() == initial.keys()
        assert all(torch.equal(adapters[n], initial[n]) for n in initial)
        assert all(not t.any() for n, t in adapters.items() if "lora_B" in n)
    assert _frozen_weights_unchanged(model, base)
    assert any(t.any() for n, t in _adapters(model).items() if "lora_B" in n)  # the last fine-tune moved B
    checkpoint = latest_checkpoint(tmp_path)
    assert checkpoint.name == "step-000002" and (checkpoint / "adapter_model.safetensors").is_file()
    assert (
        not (checkpoint / "model.safetensors").exists() and not (tmp_path / "base_model.safetensors").exists()
    )
    tokenizer.save_pretrained(tmp_path)
    merged, _ = load_policy(tmp_path)  # the recorded base with the last iteration's adapters merged in
    torch.testing.assert_close(_logits(merged, tokenizer), _logits(model, tokenizer), rtol=0, atol=1e-5)


class _Crash(Exception):
    """Raised from a hook to simulate a crash."""


def test_a_crashed_star_run_with_lora_resumes_to_the_uninterrupted_adapters(tmp_path: Path, tiny) -> None:
    straight_model, tokenizer = tiny(num_heads=2)
    straight = _star(_star_configs(), straight_model, tokenizer, tmp_path / "straight")

    def crash_in_iteration_2(iteration: int, step: str, policy: torch.nn.Module) -> None:
        if (iteration, step) == (2, "evaluate"):
            raise _Crash("simulated crash")

    with pytest.raises(_Crash):
        _star(_star_configs(), *tiny(num_heads=2), tmp_path / "crashed", on_step=crash_in_iteration_2)
    resumed_model, _ = tiny(num_heads=2)
    resumed = _star(_star_configs(), resumed_model, tokenizer, tmp_path / "crashed")

    assert resumed.resumed_from == 1 and resumed.iterations == straight.iterations
    expected = _adapters(straight_model)
    for name, tensor in _adapters(resumed_model).items():
        torch.testing.assert_close(tensor, expected[name], rtol=0, atol=0, msg=name)


# ---------------------------------------------------------------------------------------------- command line


def test_cli_trains_sft_with_lora_and_evaluates_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.cli import main

    train = ["train", "sft", "--model", "tiny", "--env", ENV, "--difficulty", "1", "--num-examples", "8"]
    flags = ["--max-steps", "2", "--batch-size", "4", "--lora.rank", "4", "--no-progress-bar"]
    assert main([*train, *flags, "--output-dir", str(tmp_path)]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    run_dir = Path(summary["run_dir"])
    assert summary["steps"] == 2
    adapter = json.loads((run_dir / "checkpoints" / "step-000002" / "adapter_config.json").read_text())
    assert adapter["r"] == 4
    evaluate = [
        "eval",
        str(run_dir),
        ENV,
        "--difficulty",
        "1",
        "--num-problems",
        "2",
        "--max-new-tokens",
        "8",
    ]
    assert main([*evaluate, "--json", "--no-progress", "--out", str(tmp_path / "eval.jsonl")]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["num_problems"] == 2
