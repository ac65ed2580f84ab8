"""What ``reasongym train ALGO`` is told to train and where, besides the configs: one frozen dataclass per
algorithm, whose fields are the job's flags and config-file keys, and which ``run.json`` records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reasongym.errors import ConfigError
from reasongym.verifiers.base import VERIFY_TIMEOUT_S, check_timeout

DEFAULT_OUTPUT_DIR = "runs"
"""Where new run folders go without ``--output-dir``."""
DEFAULT_NUM_EXAMPLES = 1000
"""SFT's reference solutions without ``--num-examples``."""


@dataclass(frozen=True)
class TrainJob:
    """What to train and where; a config file may hold these keys too, and ``run.json`` records them."""

    config: str | None = None
    """TOML or YAML file of config fields (flat, or in [run], [rollout], [ALGO] tables) and of these keys."""
    model: str | None = None
    """'tiny' (random-init tiny model, character tokenizer), a model or run folder, a .gguf file, or a hub
    id; None: tiny."""
    env: str | None = None
    """The environment id, e.g. reasongym/Arithmetic-v0 (required)."""
    preset: Literal["default", "tiny", "paper"] | None = None
    """Named settings; None: the preset of a run folder given as --model, tiny for --model tiny, else
    default."""
    output_dir: str = DEFAULT_OUTPUT_DIR
    """Parent folder of the new run folder."""
    run_dir: str | None = None
    """An existing run folder to resume; its saved configs are the base."""
    collective_timeout: float = 600.0
    """Under torchrun or accelerate: seconds a process waits for the others at a collective (a gather, a
    barrier) before the job stops, naming the stalled process (torch's own default is 30 minutes)."""
    verify_timeout: float = VERIFY_TIMEOUT_S
    """Seconds one verdict's symbolic work may take (the environment's verify_timeout); past it the verdict
    is ungradable: no reward, left out of the loss, never counted as a wrong answer."""

    def __post_init__(self) -> None:
        """Raise ConfigError for a collective or verifier timeout that is not a positive number of seconds."""
        value = self.collective_timeout
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
            raise ConfigError(f"collective_timeout={value!r} is not allowed; expected seconds > 0 (e.g. 600)")
        check_timeout("verify_timeout", self.verify_timeout)


@dataclass(frozen=True)
class SFTJob(TrainJob):
    """What to train and where (SFT: on reference solutions of the environment's train split)."""

    num_examples: int = DEFAULT_NUM_EXAMPLES
    """Reference solutions taken from the train split (SFT)."""


@dataclass(frozen=True)
class STaRJob(TrainJob):
    """What to train and where (STaR: rationales from the policy, or from a served model)."""

    rationale_base_url: str | None = None
    """Draw the rationales from a served model at this OpenAI-compatible URL."""
    rationale_model: str | None = None
    """The served model's name (with --rationale-base-url)."""


@dataclass(frozen=True)
class DistillJob(TrainJob):
    """What to train and where (on-policy distillation: the student samples, the teacher scores)."""

    teacher: str | None = None
    """The teacher (required): a model or run folder, a .gguf file, or a hub id, with the student's
    tokenizer; with --teacher-base-url, the name of the model the server serves."""
    teacher_base_url: str | None = None
    """Score with a teacher behind this OpenAI-compatible URL instead (a server that reports prompt
    log-probs: vLLM's); it gives log-probs of the sampled tokens only, so --divergence sampled_reverse_kl."""


JOBS: dict[str, type[TrainJob]] = {
    "sft": SFTJob,
    "grpo": TrainJob,
    "dapo": TrainJob,
    "star": STaRJob,
    "distill": DistillJob,
}
"""The job keys of each algorithm."""
