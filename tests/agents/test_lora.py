"""LoRA through peft: only adapters train, the KL reference is the model with its adapters off, checkpoints
hold adapters and their optimizer state and resume, a LoRA run loads merged for evaluation and export."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import torch
from reward_wrappers import DigitReward
from safetensors.torch import load_file

import reasongym
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.common import token_logprobs
from reasongym.agents.config import LoRAConfig
from reasongym.agents.grpo import train_grpo
from reasongym.agents.runtime.setup import start_session
from reasongym.errors import ConfigError
from reasongym.policy.loading import load_policy, save_policy
from reasongym.policy.lora import adapters_merged, add_adapters, is_adapted

ENV = "reasongym/Arithmetic-v0"
pytestmark = pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")


def _configs(**overrides: object) -> dict[str, object]:
    base = {
        "max_steps": 2,
        "num_prompts": 2,
        "group_size": 3,
        "max_new_tokens": 12,
        "lr": 1e-2,
        "mu": 2,
        "difficulty": 1,
        "progress_bar": False,
        "samples_every": 0,
        "lora": {"rank": 4},
    }
    return preset_configs("default", "grpo", **{**base, **overrides})


def _train(configs: dict[str, object], model: object, tokenizer: object, run_dir: Path) -> object:
    tokenizer.save_pretrained(run_dir)
    return train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        DigitReward(reasongym.make(ENV)),
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=run_dir,
    )


def _logp(model: torch.nn.Module, tokenizer: object, text: str = "12+30=42") -> torch.Tensor:
    ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        return token_logprobs(model.eval(), ids, torch.ones_like(ids), 1)[0][0]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"rank": -1}, "rank=-1 is not allowed; expected an integer in [0, 65536]"),
        ({"alpha": 0.0}, "lora.alpha=0.0 is not allowed; expected a float in (0, 65536]"),
        ({"dropout": 1.0}, "lora.dropout=1.0 is not allowed; expected a float in [0, 1)"),
        ({"target_modules": ()}, "lora.target_modules=() is not allowed"),
    ],
)
def test_lora_config_refuses_bad_values(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        LoRAConfig(**overrides)


def test_target_modules_that_match_nothing_name_the_linear_layers(tiny) -> None:
    model, _ = tiny()
    with pytest.raises(ConfigError, match=r"matches no layer of this model.*'q_proj'.*'up_proj'"):
        add_adapters(model, rank=2, alpha=4.0, dropout=0.0, target_modules=("c_attn",))


def test_only_adapters_train_and_checkpoints_hold_adapters_with_their_optimizer_state(
    tmp_path: Path, tiny
) -> None:
    model, tokenizer = tiny()
    base = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    _train(_configs(), model, tokenizer, tmp_path)
    state = model.state_dict()
    for name, tensor in base.items():  # peft renames a wrapped weight to <layer>.base_layer.weight
        now = state.get(name, state.get(name.replace(".weight", ".base_layer.weight")))
        # frozen: moved only by float32 rounding (sampling merges the adapters in and takes them out)
        torch.testing.assert_close(now, tensor, rtol=0, atol=1e-6, msg=name)
    trained = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trained and all(".lora_" in n for n in trained)
    assert len(trained) == 2 * 7  # A and B on the 7 projections of the one layer
    checkpoint = tmp_path / "checkpoints" / "step-000002"
    files = {p.name for p in checkpoint.iterdir()}
    assert {"adapter_model.safetensors", "adapter_config.json", "config.json"} <= files
    assert "model.safetensors" not in files
    adapters = load_file(str(checkpoint / "adapter_model.safetensors"))
    assert len(adapters) == len(trained)
    assert any(t.abs().sum() > 0 for n, t in adapters.items() if "lora_B" in n)  # B starts at 0: it moved
    optimizer = torch.load(checkpoint / "optimizer.pt", weights_only=False)
    assert len(optimizer["state"]) == len(trained)
    assert (tmp_path / "reference.safetensors").exists()  # the tiny model has no source: its weights


def test_kl_reference_is_the_model_with_its_adapters_off_and_a_resume_restores_the_adapters(
    tmp_path: Path, tiny
) -> None:
    model, tokenizer = tiny()
    pristine = copy.deepcopy(model)
    _train(_configs(max_steps=1), model, tokenizer, tmp_path)
    trained_logp = _logp(model, tokenizer)
    fresh, _ = tiny()  # the same seed: the same base weights
    session = start_session(
        *(_configs(max_steps=2)[key] for key in ("run", "rollout")),
        fresh,
        tokenizer,
        ENV,
        algo="grpo",
        config_record={},
        run_dir=tmp_path,
        generator=None,
        with_reference=True,
    )
    try:
        assert (
            session.resumed_from == 1
            and session.learner.reference is None
            and is_adapted(session.learner.adapted)
        )
        torch.testing.assert_close(_logp(fresh, tokenizer), trained_logp, rtol=0, atol=0)
        ids = torch.tensor([tokenizer("12+30=42", add_special_tokens=False)["input_ids"]])
        batch = type("Batch", (), {"input_ids": ids, "attention_mask": torch.ones_like(ids)})()
        batch.completion_start, batch.completion_mask = 1, torch.ones(1, ids.shape[1] - 1)
        reference = session.reference_logprobs(batch)[0]
        torch.testing.assert_close(reference, _logp(pristine, tokenizer), rtol=0, atol=1e-6)
        assert not torch.allclose(reference, trained_logp, atol=1e-4)  # the adapters are back on after it
        torch.testing.assert_close(_logp(fresh, tokenizer), trained_logp, rtol=0, atol=0)
    finally:
        session.close()


def test_sampling_merges_the_adapters_in_and_takes_them_out_again_even_after_an_error(tiny) -> None:
    model, tokenizer = tiny()
    adapted = add_adapters(model, rank=4, alpha=8.0, dropout=0.0, target_modules=["q_proj", "down_proj"])
    with torch.no_grad():
        for name, weight in adapted.named_parameters():
            if "lora_B" in name:
                weight.normal_(std=0.5)  # B starts at 0: give the adapters an effect to merge

    def base_weights() -> dict[str, torch.Tensor]:
        return {n: w.detach().clone() for n, w in adapted.named_parameters() if "base_layer" in n}

    adapted_logp, before = _logp(model, tokenizer), base_weights()
    with adapters_merged(adapted):
        inside = base_weights()
        assert any(not torch.equal(inside[n], before[n]) for n in before)  # the adapters are in the weights
        torch.testing.assert_close(
            _logp(model, tokenizer), adapted_logp, rtol=0, atol=1e-5
        )  # not counted twice
    with pytest.raises(RuntimeError, match="while sampling"), adapters_merged(adapted):
        raise RuntimeError("while sampling")
    for name, weight in base_weights().items():  # out again, twice, within float32 rounding
        torch.testing.assert_close(weight, before[name], rtol=0, atol=1e-6)
    torch.testing.assert_close(_logp(model, tokenizer), adapted_logp, rtol=0, atol=1e-5)
    with adapters_merged(None):  # no adapters: nothing to do
        torch.testing.assert_close(_logp(model, tokenizer), adapted_logp, rtol=0, atol=1e-5)


def test_a_lora_run_loads_merged_for_evaluation_and_exports_a_plain_model(tmp_path: Path, tiny) -> None:
    model, tokenizer = tiny()
    _train(_configs(), model, tokenizer, tmp_path / "run")
    expected = _logp(model, tokenizer)
    merged, loaded_tokenizer = load_policy(tmp_path / "run")
    assert not is_adapted(merged) and not any("lora" in n for n, _ in merged.named_parameters())
    torch.testing.assert_close(_logp(merged, loaded_tokenizer), expected, rtol=0, atol=1e-5)
    exported = save_policy(model, tokenizer, tmp_path / "export")  # the trained (adapted) model, merged
    assert not (exported / "adapter_config.json").exists()
    plain, _ = load_policy(exported)
    torch.testing.assert_close(_logp(plain, tokenizer), expected, rtol=0, atol=1e-5)


def test_resuming_a_lora_run_without_lora_is_refused(tmp_path: Path, tiny) -> None:
    model, tokenizer = tiny()
    _train(_configs(max_steps=1), model, tokenizer, tmp_path)
    fresh, _ = tiny()
    with pytest.raises(ConfigError, match="holds LoRA adapters but the model has no adapters"):
        _train(_configs(max_steps=2, lora={"rank": 0}), fresh, tokenizer, tmp_path)


def test_lora_grpo_on_the_real_model_records_its_source_and_keeps_the_base_as_reference(
    smollm2: tuple[object, object], tmp_path: Path
) -> None:
    base, tokenizer = smollm2
    model = copy.deepcopy(base)  # the fixture's model is shared: adapters go on a copy
    configs = _configs(
        max_steps=1, num_prompts=1, group_size=2, max_new_tokens=8, lr=1e-3, mu=1, lora={"rank": 4}
    )
    _train(configs, model, tokenizer, tmp_path)
    record = json.loads((tmp_path / "base_model.json").read_text())
    assert record["source"].endswith(".gguf") or record["gguf_file"].endswith(".gguf")
    assert not (tmp_path / "reference.safetensors").exists()
    size = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert size < 20e6, size  # adapters and their optimizer state, not a 538 MB model
    text = "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4"
    adapted = _logp(model, tokenizer, text)
    session_model = add_adapters(
        copy.deepcopy(base), rank=4, alpha=32.0, dropout=0.0, target_modules=["q_proj"]
    )
    with session_model.disable_adapter():
        torch.testing.assert_close(_logp(session_model, tokenizer, text), _logp(base, tokenizer, text))
    merged, _ = load_policy(tmp_path)  # rebuilt from the recorded GGUF, adapters merged
    torch.testing.assert_close(_logp(merged, tokenizer, text), adapted, rtol=0, atol=1e-4)


def test_cli_trains_with_lora_flags_and_evaluates_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasongym.cli import main

    args = [
        "train",
        "grpo",
        "--env",
        ENV,
        "--difficulty",
        "1",
        "--max-steps",
        "1",
        "--num-prompts",
        "2",
        "--group-size",
        "2",
        "--max-new-tokens",
        "8",
        "--lora.rank",
        "2",
        "--lora.alpha",
        "4",
        "--lora.target-modules",
        "q_proj",
        "v_proj",
        "--output-dir",
        str(tmp_path),
        "--no-progress-bar",
    ]
    assert main(args) == 0
    run_dir = Path(json.loads(capsys.readouterr().out.splitlines()[-1])["run_dir"])
    saved = json.loads((run_dir / "config.json").read_text())["run"]["lora"]
    assert saved == {"rank": 2, "alpha": 4.0, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
    adapter = json.loads((run_dir / "checkpoints" / "step-000001" / "adapter_config.json").read_text())
    assert adapter["r"] == 2 and sorted(adapter["target_modules"]) == ["q_proj", "v_proj"]
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
