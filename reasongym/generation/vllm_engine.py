"""`VLLMGenerator`: sample with an in-process (colocated) vLLM engine that holds a copy of the policy's weights.

The engine is built from the policy's config and tokenizer only (``load_format="dummy"``: nothing is read
from disk) and receives the weights as tensors through vLLM's in-place reload (`load_weights`), the same
call that pushes the updated weights after every optimizer step. Prompts go in as token ids, tokenized and
decoded with the policy's own tokenizer exactly as `HFGenerator` does, so both samplers see the same
tokens; completions come back in the same `Completion` / `GenerationBatch` contract: token ids up to and
including the EOS token or the token that completed a stop string, the sampled tokens' raw (temperature 1)
log-probs (vLLM's ``raw_logprobs``) or, for an engine built with ``tempered_logprobs``, those of the
distribution that sampled (``processed_logprobs``: after temperature, top-k and top-p), finish reasons.
Sample ``j`` of prompt ``i`` is seeded with
``seed + i * n + j``, or ``prompt_seeds[i] + j`` when the call gives one seed per prompt (evaluation does):
each request has its own random stream in vLLM, so a prompt's samples never depend on the others batched
with it. The same seed gives the same samples from vLLM again, but not the samples `HFGenerator` draws
(another sampler, other random numbers); greedy decoding agrees token for token (tests/with_vllm).

vLLM runs in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``, set here unless the caller set it), so that
weights pass as tensors without a copy through a pipe; its CPU build binds no threads of its own here
(``VLLM_CPU_OMP_THREADS_BIND=nobind``: it uses the process's OpenMP threads). On a GPU the engine takes
``gpu_memory_utilization`` of the memory and, with ``sleep``, frees it between rollouts (`sleep` / `wake`).
Import costs about half a minute and building the engine 15-20 s on a CPU: one engine lives for a whole run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import torch

from reasongym.errors import ConfigError
from reasongym.generation.base import (
    Completion,
    FinishReason,
    GenerationBatch,
    SamplingParams,
    prompt_token_ids,
)
from reasongym.generation.engines import VLLM_INSTALL, VLLMSettings

_IN_PROCESS = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
"""Environment vLLM reads at import: one process, and no CPU thread binding of its own."""
_CPU_KV_CACHE_GIB = 1.0
"""KV cache of an engine on a CPU when ``kv_cache_gib`` is None (vLLM would otherwise reserve a share of RAM)."""
_GIB = 1 << 30


def import_vllm() -> Any:
    """The vllm module, imported in-process.

    Raises:
        ConfigError: vLLM is not installed, with how to install it.
    """
    for name, value in _IN_PROCESS.items():
        os.environ.setdefault(name, value)
    try:
        import vllm
    except ImportError as error:
        raise ConfigError(f"engine='vllm' needs the vllm package ({error}): {VLLM_INSTALL}") from error
    return vllm


def hf_weights(model: torch.nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    """``(name, tensor)`` of every parameter by its transformers checkpoint name, what vLLM loads.

    A model with LoRA adapters (peft, injected in place) names a wrapped layer's weight ``x.base_layer.weight``
    and adds ``lora_A`` / ``lora_B`` weights: the adapters are skipped and ``base_layer`` dropped from the
    name, so with the adapters merged (`reasongym.policy.lora.adapters_merged`) this is the merged model.
    """
    for name, tensor in model.named_parameters():
        if ".lora_" in name or ".lora_magnitude_vector" in name:
            continue
        yield name.replace(".base_layer.", ".").removeprefix("base_model.model."), tensor.detach()


class VLLMGenerator:
    """Sample completions with a vLLM engine holding the policy's weights (implements `Generator`).

    Args:
        model: The policy (a transformers causal LM); its config and current weights build the engine.
        tokenizer: Its tokenizer (needs an EOS token); prompts are tokenized and completions decoded with it.
        settings: Memory, sleep, dtype and length settings.
        seed: The engine's seed (sampling seeds come from `SamplingParams.seed`).
        tempered_logprobs: Report log-probs at the sampling temperature (vLLM's ``logprobs_mode``
            ``processed_logprobs``, an engine-wide setting); sampling then needs
            `SamplingParams.tempered_logprobs` to match.

    Raises:
        ConfigError: vLLM is missing, or cannot build an engine for this model (naming it and why).
    """

    takes_token_ids = True
    """Prompts may be token id lists (a multi-turn episode's context), taken as they are."""
    engine_name = "vllm"
    """The engine's name in run folders and records (`reasongym.generation.engines.engine_identity`)."""

    def __init__(
        self,
        model: torch.nn.Module,
        tokenizer: Any,
        settings: VLLMSettings | None = None,
        *,
        seed: int = 0,
        tempered_logprobs: bool = False,
    ) -> None:
        """Build the engine from the model's config and tokenizer, then load the model's weights into it."""
        vllm = import_vllm()
        if tokenizer.eos_token_id is None:
            raise ConfigError("tokenizer.eos_token_id is None; generation needs an EOS token to stop on")
        self.model = model
        """The policy the weights came from (what `reasongym.evaluation.loading.model_identity` names)."""
        self.tokenizer = tokenizer
        self.settings = settings or VLLMSettings()
        self.device = next(model.parameters()).device
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        config_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        extra = config_eos if isinstance(config_eos, list) else [] if config_eos is None else [config_eos]
        self.eos_ids = sorted({tokenizer.eos_token_id, *extra})
        self.asleep = False
        self.tempered_logprobs = tempered_logprobs
        """Whether the engine reports ``processed_logprobs`` (tempered) rather than ``raw_logprobs``."""
        self._vllm = vllm
        self._folder = tempfile.mkdtemp(prefix="reasongym-vllm-")
        path = getattr(getattr(model, "config", None), "_name_or_path", "")
        name = f"{path!r}" if path else "built in memory"
        try:  # build, load the weights and run one token: vLLM refuses some models only when it runs them
            self.llm = vllm.LLM(model=self._write_folder(model), **self._engine_kwargs(model, seed))
            self.load_weights(hf_weights(model))
            self.generate_batch(
                [[int(tokenizer.eos_token_id)]], SamplingParams(max_new_tokens=1, temperature=0)
            )
        except Exception as error:  # vLLM raises many kinds (unknown architecture, head size, memory)
            shutil.rmtree(self._folder, ignore_errors=True)
            raise ConfigError(
                f"vLLM cannot load the model {name} ({type(model).__name__}): {type(error).__name__}: {error}"
            ) from error

    def _write_folder(self, model: torch.nn.Module) -> str:
        """The model's config, generation config and tokenizer in a folder (no weights): what vLLM reads."""
        model.config.save_pretrained(self._folder)
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.save_pretrained(self._folder)
        self.tokenizer.save_pretrained(self._folder)
        return self._folder

    def _engine_kwargs(self, model: torch.nn.Module, seed: int) -> dict[str, Any]:
        settings, cuda = self.settings, self.device.type == "cuda"
        dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
        max_len = settings.max_model_len or int(getattr(model.config, "max_position_embeddings", 2048))
        kv_gib = settings.kv_cache_gib or (None if cuda else _CPU_KV_CACHE_GIB)
        kwargs: dict[str, Any] = {
            "load_format": "dummy",
            "dtype": dtype if settings.dtype == "auto" else settings.dtype,
            "max_model_len": max_len,
            "seed": seed,
            "enforce_eager": settings.enforce_eager,
            "gpu_memory_utilization": settings.gpu_memory_utilization,
            "enable_sleep_mode": settings.sleep and cuda,
        }
        if kv_gib is not None:
            kwargs["kv_cache_memory_bytes"] = int(kv_gib * _GIB)
        if self.tempered_logprobs:  # raw_logprobs is vLLM's default: left unnamed, as before
            kwargs["logprobs_mode"] = "processed_logprobs"
        return kwargs

    # ------------------------------------------------------------------------------ weights and memory

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy ``(checkpoint name, tensor)`` pairs into the engine's weights, in place (no disk, no rebuild).

        Pass every weight of the model (`hf_weights`): vLLM fuses q/k/v and gate/up projections, and a layer
        given only part of its weights would keep stale values in the rest. The prefix cache is cleared, so
        no KV computed with the old weights is reused.
        """
        self.wake()
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": iter(weights)})
        if getattr(self.model.config, "tie_word_embeddings", False):
            self.llm.apply_model(_refresh_tied_head)
        self.llm.reset_prefix_cache()

    def sleep(self) -> None:
        """Free the engine's GPU memory (weights and KV cache) until `wake`; nothing on a CPU."""
        if self.settings.sleep and self.device.type == "cuda" and not self.asleep:
            self.llm.sleep(level=2)
            self.asleep = True

    def wake(self) -> None:
        """Take the GPU memory `sleep` freed back (the weights are then stale: load them next)."""
        if self.asleep:
            self.llm.wake_up()
            self.asleep = False

    def close(self) -> None:
        """Drop the engine and its folder."""
        self.llm = None
        shutil.rmtree(self._folder, ignore_errors=True)

    # ------------------------------------------------------------------------------ sampling

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        """Sample ``params.n`` completions for each prompt (see `HFGenerator.generate`)."""
        return self.generate_batch(prompts, params).completions(params.n)

    def generate_batch(
        self, prompts: Sequence[str] | Sequence[Sequence[int]], params: SamplingParams
    ) -> GenerationBatch:
        """Sample completions and return them as padded tensors in GRPO group layout, on the policy's device.

        Raises:
            ConfigError: No prompts, or a prompt that tokenizes to nothing.
        """
        if self.asleep:
            raise ConfigError("the vLLM engine is asleep; wake it and load the weights before sampling")
        self._check_logprobs_mode(params)
        encoded = prompt_token_ids(self.tokenizer, prompts)
        params.check_prompt_seeds(len(encoded))
        vllm = self._vllm
        requests = [vllm.TokensPrompt(prompt_token_ids=ids) for ids in encoded]
        settings = [self._sampling(params, index) for index in range(len(encoded))]
        outputs = self.llm.generate(requests, settings, use_tqdm=False)
        rows = [
            (list(ids), sample)
            for ids, output in zip(encoded, outputs, strict=True)
            for sample in output.outputs
        ]
        return self._assemble(rows, params)

    def _check_logprobs_mode(self, params: SamplingParams) -> None:
        """Raise ConfigError when ``params`` ask for log-probs of another temperature than the engine reports.

        Its ``logprobs_mode`` is fixed when it is built; greedy decoding and temperature 1 agree anyway.
        """
        if params.greedy or params.temperature == 1.0 or params.tempered_logprobs == self.tempered_logprobs:
            return
        reported = "processed (tempered)" if self.tempered_logprobs else "raw (temperature 1)"
        raise ConfigError(
            f"tempered_logprobs={params.tempered_logprobs!r} is not allowed for this vLLM engine, which reports "
            f"{reported} log-probs; build it with tempered_logprobs={params.tempered_logprobs!r}"
        )

    def score(self, prompt_ids: Sequence[int], completion_ids: Sequence[int]) -> list[float]:
        """The engine's log-probs of ``completion_ids`` after ``prompt_ids`` (a fixed completion, not sampled)."""
        sampling = self._vllm.SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=0.0)
        ids = [*prompt_ids, *completion_ids]
        output = self.llm.generate([self._vllm.TokensPrompt(prompt_token_ids=ids)], sampling, use_tqdm=False)[
            0
        ]
        scored = output.prompt_logprobs[len(prompt_ids) :]
        return [entry[token].logprob for entry, token in zip(scored, completion_ids, strict=True)]

    def _sampling(self, params: SamplingParams, index: int) -> Any:
        """VLLM's sampling settings of prompt ``index``.

        Its ``n`` samples get seeds ``seed + index * n + j``, or with ``prompt_seeds`` ``prompt_seeds[index] + j``
        (vLLM seeds sample j of a request ``seed + j``).
        """
        if params.prompt_seeds is not None:
            seed = params.prompt_seeds[index]
        else:
            seed = None if params.seed is None else params.seed + index * params.n
        return self._vllm.SamplingParams(
            n=params.n,
            max_tokens=params.max_new_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k,
            seed=seed,
            stop=list(params.stop) or None,
            include_stop_str_in_output=True,
            stop_token_ids=self.eos_ids,
            logprobs=0,
            skip_special_tokens=True,
        )

    def _assemble(self, rows: list[tuple[list[int], Any]], params: SamplingParams) -> GenerationBatch:
        """Left-pad the prompts, right-pad the completions; decode each text with our tokenizer."""
        width_p = max(len(ids) for ids, _ in rows)
        completions = [_completion_of(sample, self.eos_ids) for _, sample in rows]
        width_t = max(1, *(len(tokens) for tokens, _, _ in completions))
        prompt_ids = torch.full((len(rows), width_p), self.pad_id, dtype=torch.long)
        prompt_mask = torch.zeros((len(rows), width_p), dtype=torch.long)
        completion_ids = torch.full((len(rows), width_t), self.pad_id, dtype=torch.long)
        completion_mask = torch.zeros((len(rows), width_t), dtype=torch.long)
        logprobs = torch.zeros((len(rows), width_t), dtype=torch.float32)
        for row, ((ids, _), (tokens, token_logprobs, _)) in enumerate(zip(rows, completions, strict=True)):
            prompt_ids[row, width_p - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            prompt_mask[row, width_p - len(ids) :] = 1
            completion_ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
            completion_mask[row, : len(tokens)] = 1
            logprobs[row, : len(tokens)] = torch.tensor(token_logprobs, dtype=torch.float32)
        texts = self.tokenizer.batch_decode(
            [tokens for tokens, _, _ in completions], skip_special_tokens=True
        )
        reasons: tuple[FinishReason, ...] = tuple(reason for _, _, reason in completions)
        if params.stop:
            texts = [
                _cut_after_stop(t, params.stop) if r == "stop" else t
                for t, r in zip(texts, reasons, strict=True)
            ]
        device = self.device
        return GenerationBatch(
            prompt_ids=prompt_ids.to(device),
            prompt_mask=prompt_mask.to(device),
            completion_ids=completion_ids.to(device),
            completion_mask=completion_mask.to(device),
            logprobs=logprobs.to(device),
            texts=tuple(texts),
            finish_reasons=reasons,
        )


def _refresh_tied_head(model: torch.nn.Module) -> None:
    """Re-process a tied LM head after a reload.

    vLLM (0.32) skips the head of a model whose head is its embedding when reloading, so the head's own
    processed copy of the weights (on a CPU, the packed oneDNN matrix it multiplies with) would keep the old
    values while the shared tensor holds the new ones.
    """
    head = getattr(model, "lm_head", None)
    method = getattr(head, "quant_method", None)
    if head is not None and hasattr(method, "process_weights_after_loading"):
        method.process_weights_after_loading(head)


def _completion_of(sample: Any, eos_ids: Sequence[int]) -> tuple[list[int], list[float], FinishReason]:
    """A vLLM sample's token ids, the sampled tokens' log-probs, and its finish reason in our terms."""
    tokens = list(sample.token_ids)
    logprobs = [entry[token].logprob for entry, token in zip(sample.logprobs or [], tokens, strict=True)]
    reason: FinishReason = "length" if sample.finish_reason == "length" else "stop"
    if reason == "length" and tokens and tokens[-1] in eos_ids:
        reason = "stop"  # the last token allowed was an EOS: the completion ended, as `HFGenerator` says
    return tokens, logprobs, reason


def _cut_after_stop(text: str, stops: tuple[str, ...]) -> str:
    """Cut ``text`` right after the earliest-ending stop string, if any (as `HFGenerator` does)."""
    ends = [text.find(stop) + len(stop) for stop in stops if stop in text]
    return text[: min(ends)] if ends else text
