"""Choosing the inference engine (``--engine hf|vllm|auto``), its settings and errors, without vLLM itself
(tests/with_vllm/ runs the engine where vLLM is installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reasongym.errors import ConfigError
from reasongym.generation import HFGenerator, vllm_engine
from reasongym.generation import engines as engine_module
from reasongym.generation.engines import VLLMSettings, engine_identity, resolve_engine
from reasongym.generation.sampler import make_generator
from reasongym.policy.tiny import tiny_policy


@pytest.fixture
def no_vllm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "vllm_installed", lambda: False)


@pytest.fixture
def with_vllm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "vllm_installed", lambda: True)


def test_auto_is_vllm_only_on_a_gpu_where_it_is_installed(with_vllm: None) -> None:
    assert resolve_engine("auto", "cuda") == "vllm"
    assert resolve_engine("auto", "cpu") == "hf"
    assert resolve_engine("hf", "cuda") == "hf"


def test_vllm_by_name_without_vllm_says_how_to_install_it(no_vllm: None) -> None:
    assert resolve_engine("auto", "cuda") == "hf"
    with pytest.raises(
        ConfigError, match=r"engine='vllm' needs the vllm package.*pip install 'reasongym\[vllm\]'"
    ):
        resolve_engine("vllm", "cpu")
    with pytest.raises(
        ConfigError, match=r"engine='vlm' is not allowed; choose one of \['hf', 'vllm', 'auto'\]"
    ):
        resolve_engine("vlm", "cpu")


class _Refuses:
    """Stands in for `VLLMGenerator` on a model vLLM cannot load."""

    def __init__(self, model: object, *args: object, **kwargs: object) -> None:
        raise ConfigError("vLLM cannot load the model 'weird' (LlamaForCausalLM): ValueError: head size 8")


def test_a_model_vllm_cannot_load_falls_back_only_under_auto(
    with_vllm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vllm_engine, "VLLMGenerator", _Refuses)
    monkeypatch.setattr(engine_module, "resolve_engine", lambda engine, device: "vllm")
    monkeypatch.setattr("reasongym.generation.sampler.resolve_engine", lambda engine, device: "vllm")
    model, tokenizer = tiny_policy(0)
    with pytest.warns(RuntimeWarning, match=r"engine='auto': vLLM cannot load the model 'weird'.*hf instead"):
        assert isinstance(make_generator("auto", model, tokenizer), HFGenerator)
    with pytest.raises(ConfigError, match=r"vLLM cannot load the model 'weird'"):
        make_generator("vllm", model, tokenizer)


def test_engine_identity_names_what_sampled() -> None:
    model, tokenizer = tiny_policy(0)
    assert engine_identity(HFGenerator(model, tokenizer)) == "hf"
    assert engine_identity(object()) == "object"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"gpu_memory_utilization": 1.5},
            r"vllm.gpu_memory_utilization=1.5 is not allowed; expected a float in \(0, 1\]",
        ),
        ({"kv_cache_gib": 0}, r"vllm.kv_cache_gib=0 is not allowed"),
        ({"dtype": "fp8"}, r"vllm.dtype='fp8' is not allowed; choose auto, float32, bfloat16 or float16"),
        ({"max_model_len": 0}, r"vllm.max_model_len=0 is not allowed"),
    ],
)
def test_vllm_settings_refuse_bad_values(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        VLLMSettings(**fields)  # type: ignore[arg-type]


def test_hf_weights_names_a_lora_model_by_its_plain_names() -> None:
    from reasongym.policy.lora import add_adapters

    model, _ = tiny_policy(0)
    plain = [name for name, _ in vllm_engine.hf_weights(model)]
    add_adapters(model, rank=2, alpha=4.0, dropout=0.0, target_modules=["q_proj", "v_proj"])
    assert [name for name, _ in vllm_engine.hf_weights(model)] == plain


@pytest.mark.slow  # two command-line processes
@pytest.mark.skipif(engine_module.vllm_installed(), reason="vLLM is installed here")
def test_train_and_eval_with_engine_vllm_fail_at_once_without_it(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "reasongym",
        "train",
        "grpo",
        "--model",
        "tiny",
        "--env",
        "reasongym/Arithmetic-v0",
        "--engine",
        "vllm",
        "--output-dir",
        str(tmp_path / "runs"),
    ]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "engine='vllm' needs the vllm package" in out.stderr and "pip install" in out.stderr
    assert not (tmp_path / "runs").exists()  # refused before any run folder was made
    command = [
        sys.executable,
        "-m",
        "reasongym",
        "eval",
        "tiny",
        "reasongym/Arithmetic-v0",
        "--engine",
        "vllm",
        "--num-problems",
        "1",
        "--out",
        str(tmp_path / "e.jsonl"),
    ]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "engine='vllm' needs the vllm package" in out.stderr


def test_a_folder_named_vllm_on_the_path_is_not_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest puts tests/ on sys.path, where the vLLM tests' folder would pass for an installed vllm (a
    # namespace package) and make TRL and `auto` believe vLLM is there.
    (tmp_path / "vllm").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    assert engine_module.vllm_installed() is (engine_module.vllm_version() is not None)


def test_importing_reasongym_and_its_engines_does_not_import_vllm() -> None:
    # vLLM's import takes half a minute: only building a `VLLMGenerator` may do it.
    code = (
        "import sys, reasongym, reasongym.agents, reasongym.cli.train, reasongym.evaluation, "
        "reasongym.generation.vllm_engine, reasongym.agents.runtime.engine; print('vllm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_an_evaluation_decides_its_engine_once_where_the_model_is(
    with_vllm: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With vLLM installed and a GPU in the machine, ``auto`` on a model object that sits on the CPU samples with
    ``hf``, and its records say so (they named vLLM before: the records and the sampler decided apart)."""
    import json

    import torch

    from reasongym.evaluation import evaluate
    from reasongym.evaluation.loading import eval_engine

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(vllm_engine, "VLLMGenerator", _Refuses)  # sampling with vLLM here fails the test
    model, tokenizer = tiny_policy(0)
    assert eval_engine(model, "auto", None) == "hf" and eval_engine("some/model", "auto", None) == "vllm"
    assert eval_engine(HFGenerator(model, tokenizer), "vllm", None) is None  # a Generator samples itself
    out = tmp_path / "records.jsonl"
    options = {"n": 1, "k": (1,), "num_problems": 2, "max_new_tokens": 4, "engine": "auto"}
    evaluate(
        model,
        "reasongym/Arithmetic-v0",
        tokenizer=tokenizer,
        out_path=out,
        progress=False,
        verbose=False,
        **options,
    )
    settings = json.loads(out.read_text().splitlines()[0])
    assert "engine" not in json.dumps(settings)
