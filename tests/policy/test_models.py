"""The character tokenizer, the tiny model factory, policy loading and prompt formatting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from reasongym.errors import ConfigError
from reasongym.policy.loading import end_of_turn_id, format_prompt, load_policy
from reasongym.policy.tiny import SPECIAL_TOKENS, make_char_tokenizer, make_tiny_model
from tests.conftest import TINY_SHAPE


@pytest.fixture(scope="module")
def tokenizer():
    return make_char_tokenizer()


@pytest.mark.parametrize(
    "text",
    ["12 + 34 = 46\n\\boxed{46}", "  two  spaces\tand a tab ", "x² − 3 ≤ π·r", "<answer>-7/2</answer>"],
)
def test_char_tokenizer_round_trips_text_exactly(tokenizer, text: str) -> None:
    ids = tokenizer(text)["input_ids"]
    assert len(ids) == len(text)  # one token per character, no BOS/EOS added
    assert tokenizer.decode(ids) == text


def test_char_tokenizer_special_tokens(tokenizer) -> None:
    assert [tokenizer.pad_token, tokenizer.bos_token, tokenizer.eos_token, tokenizer.unk_token] == list(
        SPECIAL_TOKENS
    )
    assert tokenizer.convert_tokens_to_ids(list(SPECIAL_TOKENS)) == [0, 1, 2, 3]
    assert tokenizer("€")["input_ids"] == [tokenizer.unk_token_id]
    assert (
        tokenizer.decode(tokenizer("ab")["input_ids"] + [tokenizer.eos_token_id], skip_special_tokens=True)
        == "ab"
    )
    assert tokenizer.padding_side == "left"


def test_tiny_model_is_deterministic_in_seed_and_leaves_global_rng(tokenizer) -> None:
    rng_before = torch.get_rng_state()
    first, again, other = (make_tiny_model(tokenizer, seed=s) for s in (0, 0, 1))
    assert torch.equal(torch.get_rng_state(), rng_before)
    weights = [m.model.embed_tokens.weight for m in (first, again, other)]
    assert torch.equal(weights[0], weights[1])
    assert not torch.equal(weights[0], weights[2])


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_tiny_model_config_matches_tokenizer(tokenizer, arch: str) -> None:
    model = make_tiny_model(tokenizer, **TINY_SHAPE, arch=arch)
    assert model.config.model_type == arch
    assert model.config.vocab_size == len(tokenizer)
    assert (model.config.pad_token_id, model.config.eos_token_id) == (
        tokenizer.pad_token_id,
        tokenizer.eos_token_id,
    )
    logits = model(input_ids=torch.tensor([tokenizer("1+1=")["input_ids"]])).logits
    assert logits.shape == (1, 4, len(tokenizer))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"arch": "lama"},
            "arch='lama' is not supported; allowed: ['llama', 'qwen2']; did you mean 'llama'?",
        ),
        ({"hidden_size": 30, "num_heads": 4}, "hidden_size=30 must be divisible by num_heads=4"),
        ({"num_layers": 0}, "num_layers=0 must be a positive integer"),
    ],
)
def test_tiny_model_rejects_bad_settings(tokenizer, kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make_tiny_model(tokenizer, **kwargs)


def test_save_and_load_policy_round_trip(tiny, tmp_path: Path) -> None:
    model, tokenizer = tiny(seed=3)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    loaded_model, loaded_tokenizer = load_policy(str(tmp_path))
    text = "12 + 34 = 46\n\\boxed{46}"
    assert loaded_tokenizer.decode(loaded_tokenizer(text)["input_ids"]) == text
    assert loaded_tokenizer.padding_side == "left"
    assert loaded_tokenizer.pad_token_id == tokenizer.pad_token_id
    ids = torch.tensor([tokenizer(text)["input_ids"]])
    torch.testing.assert_close(loaded_model(input_ids=ids).logits, model(input_ids=ids).logits)


def test_load_policy_sets_a_pad_token_when_missing(tiny, tmp_path: Path) -> None:
    tiny()[0].save_pretrained(tmp_path)
    no_pad = make_char_tokenizer()
    no_pad.pad_token = None
    no_pad.save_pretrained(tmp_path)
    _, loaded = load_policy(str(tmp_path))
    assert loaded.pad_token == loaded.eos_token


def test_load_policy_explains_a_missing_folder(tmp_path: Path) -> None:
    missing = str(tmp_path / "no_such_model")
    with pytest.raises(
        ConfigError, match=r"name_or_path='.*no_such_model' does not exist: no such file or folder"
    ):
        load_policy(missing)


def test_load_policy_explains_an_unreachable_hub_id() -> None:
    # HF_HUB_OFFLINE is read when huggingface_hub is imported, hence a fresh interpreter.
    code = (
        "from reasongym.policy.loading import load_policy\n"
        "try:\n    load_policy('no-such-org/no-such-model')\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.startswith("ConfigError name_or_path='no-such-org/no-such-model' could not be loaded")
    assert "pass its path" in out.stdout


CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


@pytest.mark.parametrize(
    ("prompt", "plain", "templated"),
    [
        ("What is 2+2?", "What is 2+2?", "<user>What is 2+2?<assistant>"),
        (
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}],
            "Be brief.\n2+2?",
            "<system>Be brief.<user>2+2?<assistant>",
        ),
    ],
)
def test_format_prompt(tokenizer, prompt, plain: str, templated: str) -> None:
    assert format_prompt(tokenizer, prompt) == plain
    templated_tokenizer = make_char_tokenizer()
    templated_tokenizer.chat_template = CHAT_TEMPLATE
    assert format_prompt(templated_tokenizer, prompt) == templated


# ---------------------------------------------------------------------------------------------- GGUF


def _touch(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")
    return folder


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (
            lambda tmp: (str(tmp / "missing.gguf"), None),
            r"name_or_path='.*missing.gguf' is not an existing .gguf file$",
        ),
        (
            lambda tmp: (str(_touch(tmp / "m", "a.Q4.gguf") / "a.Q8.gguf"), None),
            r"is not an existing .gguf file; .gguf files there: \['a.Q4.gguf'\]",
        ),
        (
            lambda tmp: (str(_touch(tmp / "m", "a.Q4.gguf", "a.Q8.gguf")), None),
            r"holds 2 .gguf files \['a.Q4.gguf', 'a.Q8.gguf'\] and no config.json; name one with gguf_file=",
        ),
        (
            lambda tmp: (str(_touch(tmp / "m", "a.Q4.gguf")), "a.Q5.gguf"),
            r"gguf_file='a.Q5.gguf' is not a file in .*; .gguf files there: \['a.Q4.gguf'\]; "
            r"did you mean 'a.Q4.gguf'\?",
        ),
        (
            lambda tmp: (str(_touch(tmp / "m", "a.gguf") / "a.gguf"), "a.gguf"),
            r"gguf_file='a.gguf' given with name_or_path='.*a.gguf', itself a .gguf file",
        ),
        (
            lambda tmp: (str(_touch(tmp / "m", "weights.bin") / "weights.bin"), None),
            r"is a file but not a .gguf file",
        ),
    ],
)
def test_load_policy_explains_bad_gguf_paths(tmp_path: Path, make_args, message: str) -> None:
    name_or_path, gguf_file = make_args(tmp_path)
    with pytest.raises(ConfigError, match=message):
        load_policy(name_or_path, gguf_file=gguf_file)


def test_load_policy_names_the_extra_when_gguf_is_missing(tmp_path: Path, monkeypatch) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real_find_spec(name, *a)
    )
    with pytest.raises(ConfigError, match=r"needs the `gguf` package; `pip install 'reasongym\[gguf\]'`"):
        load_policy(_touch(tmp_path, "model.gguf") / "model.gguf")


def test_load_policy_rejects_a_file_that_is_not_gguf(tmp_path: Path) -> None:
    pytest.importorskip("gguf")
    (tmp_path / "fake.gguf").write_bytes(b"not a gguf file" * 10)
    with pytest.raises(ConfigError, match=r"gguf_file='fake.gguf' in '.*' could not be read as a GGUF model"):
        load_policy(tmp_path / "fake.gguf")


# Turns end with a special token other than EOS: <bos> here plays <|im_end|>'s part.
END_WITH_BOS = "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}<bos>\n{% endfor %}"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (None, None),
        (CHAT_TEMPLATE, None),  # turns end with ordinary text
        (END_WITH_BOS, 1),
        (END_WITH_BOS.replace("<bos>", "<eos>"), 2),
        ("{{ raise_exception('only user messages') }}", None),
    ],
)
def test_end_of_turn_id(template: str | None, expected: int | None) -> None:
    tokenizer = make_char_tokenizer()
    tokenizer.chat_template = template
    assert end_of_turn_id(tokenizer) == expected


def test_load_policy_stops_generation_on_the_end_of_turn_token(tmp_path: Path, tiny) -> None:
    model, tokenizer = tiny()
    tokenizer.chat_template = END_WITH_BOS
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    model, _ = load_policy(tmp_path)
    assert model.generation_config.eos_token_id == [2, 1]  # EOS kept, end-of-turn added
