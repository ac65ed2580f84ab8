"""The configs every trainer shares: `RunConfig` (how long, how often, what data, how batched) and
`RolloutConfig` (how completions are sampled), plus the checks that every config runs when built.

An algorithm's own config (`GRPOConfig`, `DAPOConfig`, `STaRConfig`, `SFTConfig`) holds only its
mathematics; a trainer takes ``(algo_cfg, model, tokenizer, env, run=RunConfig(...), rollout=...)``. The
defaults here suit a real pretrained model; `reasongym.agents.presets` names the settings that differ
(the tiny CPU model, the papers' full-scale values).

Every config validates its fields when it is built (``__post_init__``): the type of each field against
its annotation (so ``max_steps="abc"`` from a config file fails with the field's name, not deep inside
the loop), then its range.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from reasongym.errors import ConfigError
from reasongym.evaluation.config import default_eval_split
from reasongym.generation.base import SamplingParams
from reasongym.generation.engines import Engine, SamplerWeights, VLLMSettings, check_engine
from reasongym.ranges import MAX_SAMPLES, check_ranges

LORA_TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""The attention and MLP projections of Llama, Qwen2, Mistral and Gemma, LoRA's default targets."""
LR_SCHEDULES = ("constant", "cosine")
"""Learning-rate schedules: constant after warmup, or cosine decay to 0 at ``max_steps``."""


@dataclass(frozen=True)
class LoRAConfig:
    """Low-rank adapters (peft's LoRA): train ``rank``-r matrices beside the frozen weights instead of all of them."""

    rank: int = 0
    """r, the adapters' rank; 0: no adapters, every weight trains (full fine-tuning, the default)."""
    alpha: float = 32.0
    """The adapters' scale is ``alpha / rank`` (peft's ``lora_alpha``)."""
    dropout: float = 0.0
    """Dropout on the adapters' input while training (peft's ``lora_dropout``); 0 keeps the sampler's and the
    update's log-probs equal before a step, as the clipped ratio assumes."""
    target_modules: tuple[str, ...] = LORA_TARGET_MODULES
    """Names (last part) of the linear layers that get adapters; ``all-linear``: every linear layer but the
    output head."""

    def __post_init__(self) -> None:
        check_field_types(self)
        if not self.target_modules:
            raise ConfigError(
                "lora.target_modules=() is not allowed; name at least one layer, e.g. "
                f"{list(LORA_TARGET_MODULES)} or ['all-linear']"
            )


@dataclass(frozen=True)
class RunConfig:
    """What every trainer has: length, optimizer, cadence, seed, data splits, batching and logging."""

    max_steps: int = 200
    """Steps to train in total, counting those before a resume: optimizer steps (SFT), rollout batches
    (GRPO, DAPO; each gives ``mu`` optimizer steps) or outer iterations (STaR)."""
    lr: float = 1e-6
    """Peak AdamW learning rate (DeepSeekMath Sec. 4.2 and DAPO Sec. 4.1: 1e-6 for RL; STaR's fine-tuning
    and SFT use it too). The tiny CPU model needs about 1e-4 for RL (preset ``tiny``). Allowed: 0 (trains
    nothing) up to ``MAX_LR`` = 1."""
    lr_schedule: Literal["constant", "cosine"] = "constant"
    """``constant`` after warmup, or ``cosine`` decay to 0 at the last step."""
    warmup_steps: int = 0
    """Linear warmup steps from 0 to ``lr``."""
    weight_decay: float = 0.0
    """AdamW weight decay, on matrices only (not on norms and biases)."""
    max_grad_norm: float | None = 1.0
    """Clip the global gradient norm to this (TRL's and verl's default); None does not clip."""
    micro_batch_size: int | None = None
    """Sequences per forward/backward pass (gradient accumulation adds them up to exactly the full-batch
    gradient); None: the whole batch at once."""
    parallelism: Literal["ddp", "fsdp"] = "ddp"
    """Across processes (``torchrun``, ``accelerate launch``; one process ignores it): ``ddp``, every process
    holds the whole model and DDP averages the gradients; ``fsdp``, parameters, gradients and optimizer
    state are sharded over the processes (torch's ``fully_shard``), for a model whose training state does
    not fit one device. GRPO and DAPO only; sampling and evaluation gather the full weights on each device."""
    autocast: Literal["off", "tf32", "bf16", "fp16"] = "off"
    """Run forward passes (sampling, scoring, training) under CUDA autocast in bfloat16 or float16 (fp16
    with a gradient scaler); the weights and optimizer stay in their dtype. ``tf32``: no autocast, float32
    matrix products on TensorFloat-32 (``torch.backends.cuda.matmul.allow_tf32``, a process-wide switch set
    when the run starts: 10-bit mantissa inputs, float32 accumulation, several times faster on Ampere and
    later). CUDA only: ``off`` on a CPU, which trains in float32. With bf16, sample from a bf16 copy
    (`RolloutConfig.sampler_weights`): under autocast float32 weights are cast again at every decoding step."""
    lora: LoRAConfig = dataclasses.field(default_factory=lambda: LoRAConfig())
    """Low-rank adapters (GRPO, DAPO, SFT, STaR: fresh adapters each iteration); ``rank`` 0 (the default) trains
    every weight. With adapters the KL reference is the same model with its adapters switched off, and
    checkpoints hold only the adapters."""
    gradient_checkpointing: bool = False
    """Recompute each decoder layer's activations in the backward pass instead of keeping them (less memory,
    about a third more compute)."""
    seed: int = 0
    """Seeds the global RNGs, the order of training problems and every sampling round; an integer in
    ``[0, 2**32 - 1]``, the range NumPy's global seed takes."""
    split: str | None = None
    """Split the training problems come from; None: ``train`` if the source has it, else its default split
    (a dataset registered with ``reasongym.register_dataset`` has only ``test``)."""
    eval_split: str | None = None
    """Split held-out evaluations draw from; None: the first of ``test``/``validation`` the source has, else
    its default split."""
    difficulty: int | None = None
    """Difficulty of the training and evaluation problems; None: the environment's default."""
    eval_every: int = 0
    """Greedy pass@1 on ``eval_problems`` problems of ``eval_split`` before training, every this many steps
    and at the end; 0: never (STaR evaluates every iteration regardless)."""
    eval_problems: int = 100
    """Problems of each held-out evaluation (the first ones of ``eval_split``, fewer if it is smaller)."""
    save_every: int = 0
    """Checkpoint every this many steps (with a run folder); 0: only at the end."""
    keep_checkpoints: int = 3
    """Newest checkpoints kept on disk."""
    log_every: int = 1
    """Write a metrics line every this many steps."""
    samples_every: int = 10
    """Write a few sampled completions to ``samples.jsonl`` every this many steps (RL); 0: never."""
    entropy_collapse_ratio: float = 0.1
    """RL: warn once when the policy's token entropy falls below this fraction of its first value."""
    progress_bar: bool = True
    """Show a tqdm bar with live metrics."""
    tensorboard: bool | None = False
    """Mirror metrics to TensorBoard; None: when it is installed."""
    wandb_project: str | None = None
    """Mirror metrics to this Weights & Biases project; None: off."""

    def __post_init__(self) -> None:
        check_field_types(self)
        if self.lr_schedule not in LR_SCHEDULES:
            raise ConfigError(
                f"lr_schedule={self.lr_schedule!r} is not allowed; choose one of {LR_SCHEDULES}"
            )


MAX_ROLLOUT_ROWS = MAX_SAMPLES
"""Most completions one rollout batch may sample (``num_prompts * group_size``): 16 times DeepSeekMath's
1,024 x 64. Every completion is held in memory until the update, so a larger batch fails for memory only
after minutes of sampling (a ``group_size`` of 10**12 ran out of memory after 96 s)."""


@dataclass(frozen=True)
class RolloutConfig:
    """How completions are sampled for training: prompts per batch, samples per prompt, length, temperature."""

    num_prompts: int = 16
    """Problems per rollout batch (DAPO: groups kept after filtering). DeepSeekMath used 1,024 and DAPO
    512; ours is a single-machine default. ``num_prompts * group_size`` is at most ``MAX_ROLLOUT_ROWS``
    (2**20)."""
    group_size: int = 8
    """G, completions sampled per problem (DeepSeekMath: 64, DAPO: 16; STaR: 1); at most ``MAX_ROLLOUT_ROWS``
    (2**20) completions per batch, ``num_prompts * group_size``, so 2**20 at one prompt."""
    max_new_tokens: int = 1024
    """Longest completion in tokens (DeepSeekMath Sec. 4.2: 1,024); also Dr. GRPO's constant normaliser
    and the end of DAPO's overlong buffer."""
    temperature: float = 1.0
    """Sampling temperature; 1.0 samples from the policy itself, as the RL objectives assume. 0 is greedy
    (STaR's rationales; RL needs a temperature > 0)."""
    top_p: float = 1.0
    """Nucleus sampling threshold; 1.0 is off."""
    tempered_logprobs: bool = True
    """The RL losses see the distribution that sampled: the policy's, old policy's and reference's log-probs
    (and the entropy metric) are computed from logits / ``temperature``, and the sampler reports its
    log-probs at that temperature too (vLLM: ``processed_logprobs``), as TRL and verl do. False keeps the
    raw model (temperature 1) in the loss whatever the sampling temperature: ratios, KL and gradient are
    then those of a distribution that did not draw the samples (unless ``temperature`` is 1). STaR and
    SFT compute no sampled log-probs and ignore it."""
    generation_batch_size: int | None = None
    """Rows decoded together by the in-process sampler; None: a whole round at once."""
    engine: Engine = "auto"
    """Who samples: ``hf`` (our KV-cached loop on the policy itself), ``vllm`` (an in-process vLLM engine
    holding a copy of the weights, synced after every optimizer step; `pip install 'reasongym[vllm]'`) or
    ``auto``: vLLM when it is installed and the policy is on a GPU, else hf (README.md, "Sampling with vLLM",
    says why a CPU keeps hf)."""
    sampler_weights: SamplerWeights = "policy"
    """What our in-process sampler (``engine`` hf) decodes with: ``policy``, the trained module itself (under the
    run's autocast); ``bf16``, a bfloat16 copy of it, refreshed after every optimizer step and decoded outside
    autocast (`reasongym.generation.low_precision`). On a GPU the copy is the fast way to sample a float32
    policy: autocast over float32 weights casts every weight at every decoding step, which made a GRPO step
    slower with bf16 autocast (5.04 s) than in float32 (3.54 s) on an H200. The policy rescores each batch
    (one forward pass), so the loss sees the trained weights' log-probs. Not with vLLM (``vllm.dtype``
    sets its weights) or ``max_staleness`` >= 1."""
    max_staleness: int = 0
    """K, how many policy versions (updates) a batch may be older than the policy that trains on it
    (TRL's ``max_staleness``). 0: each batch is sampled, then trained on (the synchronous loop). K >= 1: a
    sampler process draws the next batches while the trainer updates, from weights at most K updates old
    (`reasongym.agents.runtime.async_rollouts`); GRPO, DAPO and distillation, LoRA or not, one sampler per
    torchrun rank; with ``engine`` vllm a thread has the engine sample ahead."""
    stale_old_logp: Literal["rescore", "sampler"] = "rescore"
    """With ``max_staleness`` >= 1, the PPO ratio's old log-probs of each batch: ``rescore``, the trainer's under
    its current weights (given by the update's own forward pass with one update per batch, else a scoring pass
    first) and the off-policy correction weighs the gap to the sampler's, as for vLLM (AReaL's decoupled
    objective); ``sampler``, our sampler's
    own log-probs, exact for the version that drew the batch: no extra pass, and the clip bounds the ratio
    to that older policy, as in PPO's later epochs. vLLM's log-probs are always rescored."""
    vllm: VLLMSettings = dataclasses.field(default_factory=lambda: VLLMSettings())
    """The vLLM engine's memory share, sleep between phases, dtype and length (with ``engine`` vllm)."""

    def __post_init__(self) -> None:
        check_field_types(self)
        check_engine(self.engine)
        self._check_sampler_weights()
        if self.num_prompts * self.group_size > MAX_ROLLOUT_ROWS:
            raise ConfigError(
                f"group_size={self.group_size} with num_prompts={self.num_prompts} is not allowed: "
                f"{self.num_prompts * self.group_size} completions a batch; expected num_prompts * group_size "
                f"<= 2**20 = {MAX_ROLLOUT_ROWS} (16x DeepSeekMath's 1,024 prompts x 64)"
            )

    def sampling(self, seed: int | None) -> SamplingParams:
        """These settings as the sampler takes them, the group size as ``n``: the one place a rollout config
        becomes `SamplingParams`, which then travel unchanged to the generator."""
        return SamplingParams(
            n=self.group_size,
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            seed=seed,
            tempered_logprobs=self.tempered_logprobs,
        )

    @property
    def logprob_temperature(self) -> float:
        """What a trainer divides the logits by before its log-probs: the sampling temperature with
        ``tempered_logprobs`` (1 for greedy decoding, which has no tempered distribution), else 1."""
        return self.temperature if self.tempered_logprobs and self.temperature > 0 else 1.0

    def _check_sampler_weights(self) -> None:
        """Raise ConfigError for a low-precision copy (`SAMPLER_WEIGHTS`) where none is made."""
        if self.sampler_weights == "policy":
            return
        if self.engine == "vllm":
            raise ConfigError(
                f"sampler_weights={self.sampler_weights!r} is not allowed with engine='vllm': the copy is our "
                "sampler's; vLLM holds its own weights in vllm.dtype (use engine='hf', or vllm.dtype='bfloat16')"
            )
        if self.max_staleness:
            raise ConfigError(
                f"sampler_weights={self.sampler_weights!r} is not allowed with max_staleness="
                f"{self.max_staleness}: the sampler process copies the policy itself; use sampler_weights='policy'"
            )

    def check_for_rl(self, *, groups: bool = True) -> None:
        """Raise ConfigError unless these settings can drive a policy-gradient method (GRPO, DAPO); without
        ``groups`` (distillation from a teacher alone) one sample per prompt is enough."""
        if self.temperature <= 0:
            raise ConfigError(
                f"temperature={self.temperature!r} is not allowed for RL: the objective needs samples from the "
                "policy, so use a temperature > 0 (1.0 is the policy itself)"
            )
        if groups and self.group_size < 2:
            raise ConfigError(
                f"group_size={self.group_size} is not allowed for RL: group advantages need at least 2 samples"
            )


def resolve_splits(run: RunConfig, env: Any) -> tuple[str, str]:
    """The training and evaluation splits (``run.split``, ``run.eval_split``) for ``env``'s problem source.

    ``split=None`` means ``train`` if the source has it, else its default split. ``eval_split=None`` means
    ``test``, else ``validation`` (or ``dev``), else the default split, as ``reasongym eval`` chooses.

    Raises:
        ConfigError: A split the source does not have, naming the field and the available splits.
    """

    unwrapped = getattr(env, "unwrapped", env)
    source = getattr(unwrapped, "source", None)
    if source is None:  # a duck-typed env without a problem source: nothing to check against
        return run.split or "train", run.eval_split or "test"
    splits = tuple(source.splits())
    train = run.split or ("train" if "train" in splits else source.default_split)
    evaluation = run.eval_split or default_eval_split(unwrapped)
    known = (*splits, *getattr(source, "split_aliases", ()))
    for name, value in (("split", train), ("eval_split", evaluation)):
        if value not in known:
            nearest = difflib.get_close_matches(value, known, n=1)
            hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
            raise ConfigError(
                f"{name}={value!r} is not a split of {source.name!r}; available: {list(splits)}{hint} "
                "(None picks one the source has)"
            )
    return train, evaluation


# ---------------------------------------------------------------------------------------------- checks


def check_field_types(cfg: Any) -> None:
    """Raise ConfigError naming the first field whose value does not fit its annotation, then the first
    numeric field outside its range (`reasongym.ranges.FIELD_RANGES`, one table for every config).

    Understood annotations: ``int``, ``float`` (an int is accepted), ``bool``, ``str``, ``Literal[...]``,
    ``tuple[...]``, unions with None, and nested dataclasses (checked by their own ``__post_init__``).
    """
    hints = typing.get_type_hints(type(cfg))
    for item in dataclasses.fields(cfg):
        value, tp = getattr(cfg, item.name), hints[item.name]
        if _fits(value, tp):
            continue
        names = [arg for arg in typing.get_args(tp) if isinstance(arg, str)]
        if typing.get_origin(tp) is Literal and isinstance(value, str):
            nearest = difflib.get_close_matches(value, names, n=1, cutoff=0.4)
            hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
            raise ConfigError(f"{item.name}={value!r} is not allowed; valid names: {sorted(names)}{hint}")
        raise ConfigError(f"{item.name}={value!r} is not allowed; expected {_describe(tp)}")
    check_ranges(cfg)


def _fits(value: Any, tp: Any) -> bool:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arg) for arg in args)
    if origin is Literal:
        return value in args
    if origin is tuple:
        return (
            isinstance(value, tuple)
            and (
                not args
                or all(_fits(item, args[0 if args[-1] is Ellipsis else i]) for i, item in enumerate(value))
            )
            and (args[-1] is Ellipsis or not args or len(value) == len(args))
        )
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is str:
        return isinstance(value, str)
    if isinstance(tp, type):
        return isinstance(value, tp)
    return True  # an annotation this check does not understand: the field's own checks decide


def _describe(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(arg) for arg in args)
    if origin is tuple:
        return "a tuple of " + ", ".join(_describe(arg) for arg in args if arg is not Ellipsis)
    if tp is type(None):
        return "None"
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(
        tp, getattr(tp, "__name__", str(tp))
    )


def build(cls: type, values: dict[str, Any], where: str) -> Any:
    """An instance of the config dataclass ``cls`` from (nested) ``values``; unknown names name the nearest.

    Lists become tuples where the field is a tuple, and nested dataclass fields are built from mappings.

    Raises:
        ConfigError: An unknown field, or a value the config refuses.
    """
    hints = typing.get_type_hints(cls)
    names = [item.name for item in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in values.items():
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: unknown field {key!r} of {cls.__name__}{hint}; fields: {names}")
        tp = hints[key]
        if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, dict):
            value = build(tp, value, where=f"{where}.{key}")
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[key] = value
    return cls(**kwargs)
