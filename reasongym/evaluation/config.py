"""What an evaluation samples and reports: `EvalConfig`, the one place its defaults are set.

`reasongym.evaluation.evaluate` takes an `EvalConfig` (or its fields by name), ``reasongym eval`` has one
flag per field, generated from it, and a records file stores these settings with every record. The
problems an evaluation covers follow from the config and the environment: `default_eval_split` and
`problem_indices`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reasongym.errors import ConfigError
from reasongym.generation.base import SamplingParams
from reasongym.generation.engines import Engine, check_engine
from reasongym.ranges import check_ranges

DEFAULT_NUM_PROCEDURAL = 200
"""Problems taken from a procedural environment's test stream when ``num_problems`` is None."""


COMMAND_LINE_ONLY = {
    "show": "print the first problems with reasongym.evaluation.records.sample_completions(out_path, count)",
    "out": "evaluate(..., out_path=PATH)",
    "json": "report.to_dict() (evaluate returns the report)",
    "completions": "reasongym.evaluation.grade_completions(path, env_id, ...)",
    "num_samples": "n=",
    "verify_timeout": "evaluate(..., env_kwargs={'verify_timeout': SECONDS})",
}
"""``reasongym eval`` flags that are not `EvalConfig` fields, with what does their work in Python: a user who
passes one to ``evaluate`` is told where it went, not only that it is unknown."""


@dataclass(frozen=True)
class EvalConfig:
    """How many completions of which problems are sampled, how, and which pass@k / pass^k / maj@k are reported."""

    n: int = 1
    """Completions sampled per problem (also ``--num-samples``: torchrun and accelerate take ``--n`` for
    an abbreviation of their own); at most ``MAX_SAMPLES`` (2**20), as a training batch."""
    k: tuple[int, ...] = ()
    """The k values of pass@k, pass^k and maj@k, each in [1, n] (n: the samples per problem, or of stored
    completions); empty: the powers of two up to n, and n."""
    split: str | None = None
    """The split to evaluate; None: ``test`` if the environment has it, else its validation split, else
    its default split."""
    num_problems: int | None = None
    """How many problems, the first ones of the split; None: the whole split of a dataset,
    ``DEFAULT_NUM_PROCEDURAL`` (200) problems of a procedural stream."""
    difficulty: int | None = None
    """Difficulty level of the problems, where the environment has levels; None: its default."""
    temperature: float = 0.6
    """Sampling temperature; 0 is greedy (then n should be 1)."""
    top_p: float = 1.0
    """Nucleus sampling threshold; 1.0 is off."""
    max_new_tokens: int = 512
    """Most tokens per completion (per model turn in a multi-turn environment)."""
    seed: int = 0
    """Seed of the sampling; each problem derives its own seed from it and its index. In ``[0, 2**32 - 1]``,
    as a training run's seed."""
    batch_size: int | None = None
    """Problems sampled together, each with its n completions; None: 8, or for a served model twice its
    requests in flight."""
    engine: Engine = "auto"
    """Who samples a local model: ``hf`` (our KV-cached loop), ``vllm`` (an in-process vLLM engine taking
    90% of the GPU; `pip install 'reasongym[vllm]'`) or ``auto`` (vLLM when installed and on a GPU, else hf)."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        check_ranges(self)
        check_engine(self.engine)
        if not isinstance(self.k, tuple) or any(not _integer(k, 1) for k in self.k):
            raise ConfigError(f"k={self.k!r} is not allowed: each k must be an integer >= 1 (and <= n)")

    @property
    def ks(self) -> tuple[int, ...]:
        """The k values reported: ``k`` sorted, or `default_ks` of n.

        Raises:
            ConfigError: A k above n.
        """
        return check_ks(self.k or None, self.n)

    def sampling(self, seed: int) -> SamplingParams:
        """These settings as the sampler takes them (``n`` completions of each prompt), with ``seed``."""
        return SamplingParams(
            n=self.n,
            temperature=self.temperature,
            top_p=self.top_p,
            max_new_tokens=self.max_new_tokens,
            seed=seed,
        )

    def replace(self, **fields: Any) -> EvalConfig:
        """A copy with ``fields`` changed.

        Raises:
            ConfigError: A name that is not a field (naming the nearest), or a value the config refuses.
        """
        names = [item.name for item in dataclasses.fields(self)]
        for name in fields:
            if name in COMMAND_LINE_ONLY:
                raise ConfigError(
                    f"{name}={fields[name]!r}: --{name.replace('_', '-')} is an option of the `reasongym eval` "
                    f"command, not of evaluate(); in Python: {COMMAND_LINE_ONLY[name]}"
                )
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ConfigError(f"{name!r} is not a field of EvalConfig{hint}; fields: {names}")
        if isinstance(fields.get("k"), list):
            fields["k"] = tuple(fields["k"])
        return dataclasses.replace(self, **fields)


def _integer(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def default_ks(n: int) -> tuple[int, ...]:
    """Powers of two up to ``n``, and ``n`` itself: ``default_ks(6) == (1, 2, 4, 6)``."""
    ks = [1 << i for i in range(n.bit_length()) if (1 << i) <= n]
    return tuple(sorted(set(ks) | {n}))


def check_ks(ks: Sequence[int] | None, n: int) -> tuple[int, ...]:
    """Validate ``ks`` against ``n`` samples per problem; None gives :func:`default_ks`.

    Raises:
        ConfigError: A k is not an integer in ``[1, n]``.
    """
    if ks is None:
        return default_ks(n)
    ks = tuple(ks)
    bad = [k for k in ks if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= n]
    if not ks or bad:
        raise ConfigError(f"ks={list(ks)!r} is not allowed: each k must be an integer in [1, n={n}]")
    return tuple(sorted(set(int(k) for k in ks)))


def default_eval_split(env: Any) -> str:
    """``test`` if the environment has it, else a validation split, else its default split."""
    splits = env.source.splits()
    for name in ("test", "validation", "dev"):
        if name in splits:
            return name
    return env.source.default_split


def problem_indices(env: Any, split: str, num_problems: int | None, difficulty: int | None) -> list[int]:
    """Indices of the problems to evaluate: the first ``num_problems`` of the split (or all of it).

    Raises:
        ConfigError: A split the environment does not have.
    """
    if split not in env.source.splits():
        raise ConfigError(
            f"split={split!r} is not a split of this environment; splits: {list(env.source.splits())}"
        )
    size = env.source.size(split, difficulty)
    if size is None:
        return list(range(num_problems or DEFAULT_NUM_PROCEDURAL))
    return list(range(min(size, num_problems or size)))
