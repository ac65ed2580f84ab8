"""What a run's batches are drawn from, and the one way to draw one: `DrawPlan` and `draw_batch`.

A run takes its training problems in one seeded order (`problem_order`), ``num_prompts`` at a time from a
cursor that its checkpoints record, and samples each batch with a seed derived from the run's seed and that
cursor (and, across processes, the rank). A batch is then a function of (seed, cursor, rank) and of the
weights that sample it, whichever source draws it (`reasongym.agents.runtime.sources`: in the trainer, in a
sampler process, in a thread driving vLLM), and a resumed run draws what the interrupted one would have.

`DrawPlan` is that recipe, frozen: the problems (seed, split, difficulty, size), the sampling settings, this
process's rank, and where the run starts (cursor and policy version). It is what a source receives; nothing
that draws a batch reads the trainer's session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from reasongym import distributed
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.generation.base import SamplingParams
from reasongym.rollouts.batch import RolloutBatch, collect_rollouts
from reasongym.rollouts.env_pool import EnvPool

SEED_STRIDE = 1_000_003
"""A batch at cursor c of a run seeded s samples from seed ``s * SEED_STRIDE + c``, and a generated source
(no size) indexes its problems the same way: seeds and problems of two runs never overlap for nearby seeds."""


def problem_order(seed: int, cursor: int, count: int, size: int | None) -> list[int]:
    """The ``count`` training problems from position ``cursor`` of the run's seeded order: a permutation of
    a finite split per pass (wrapping around), or seed-derived indices of a generated source (no size)."""
    positions = range(cursor, cursor + count)
    if not size:
        return [seed * SEED_STRIDE + p for p in positions]
    orders: dict[int, np.ndarray] = {}
    for p in positions:
        orders.setdefault(p // size, np.random.default_rng([seed, p // size]).permutation(size))
    return [int(orders[p // size][p % size]) for p in positions]


def source_size(env: Any, split: str, difficulty: int | None) -> int | None:
    """Problems in ``split`` of ``env``'s problem source; None for a generated one (or an env without one)."""
    source = getattr(getattr(env, "unwrapped", env), "source", None)
    return source.size(split, difficulty) if source is not None else None


@dataclass(frozen=True)
class DrawPlan:
    """What every batch of a run is drawn from, and where the run starts: a source's whole instruction."""

    seed: int
    """The run's seed (`RunConfig.seed`): the problem order and each batch's sampling seed."""
    rollout: RolloutConfig
    """Prompts per batch, samples per prompt, lengths and temperature."""
    split: str
    """The training split."""
    difficulty: int | None
    """The difficulty level the problems are drawn at (None: the environment's)."""
    size: int | None
    """Problems in ``split``, drawn in seeded passes; None for a generated source (`source_size`)."""
    place: distributed.DistInfo
    """This process's rank: it draws its share of each batch (whole groups)."""
    cursor: int = 0
    """Position in the problem order of the first batch (a resumed run's checkpoint records it)."""
    version: int = 0
    """Policy version (steps done) of the weights the run starts or resumes with."""

    @classmethod
    def for_run(
        cls,
        env: Any,
        run: RunConfig,
        rollout: RolloutConfig,
        split: str,
        place: distributed.DistInfo,
        *,
        cursor: int,
        version: int,
    ) -> DrawPlan:
        """The plan of a run of ``env``'s ``split`` (its size read from the env's problem source) starting
        at ``cursor`` with the weights of ``version``."""
        size = source_size(env, split, run.difficulty)
        return cls(run.seed, rollout, split, run.difficulty, size, place, cursor, version)

    @property
    def num_prompts(self) -> int:
        """Prompts per batch, over every rank."""
        return self.rollout.num_prompts

    def following(self, cursor: int) -> int:
        """The cursor of the batch after the one at ``cursor``."""
        return cursor + self.num_prompts

    def indices(self, cursor: int) -> list[int]:
        """This rank's problems of the batch at ``cursor``."""
        order = problem_order(self.seed, cursor, self.num_prompts, self.size)
        return distributed.shard(order, self.place)

    def params(self, cursor: int) -> SamplingParams:
        """The sampling settings of the batch at ``cursor``, with its seed (this rank's)."""
        return self.rollout.sampling(distributed.rank_seed(self.seed * SEED_STRIDE + cursor, self.place))


def draw_batch(
    plan: DrawPlan,
    cursor: int,
    env: Any,
    generator: Any,
    tokenizer: Any,
    pool: EnvPool | None = None,
) -> RolloutBatch:
    """This rank's share of the batch at ``cursor``: ``group_size`` samples of each of its problems, played
    through ``env`` (copies of it, kept in ``pool`` when given) and scored."""
    return collect_rollouts(
        env,
        generator,
        tokenizer,
        plan.indices(cursor),
        params=plan.params(cursor),
        split=plan.split,
        difficulty=plan.difficulty,
        pool=pool,
    )
