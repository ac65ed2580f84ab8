"""A run's batches are drawn one way (`DrawPlan`, `draw_batch`) and paced ahead by one staleness window
(`draw_ahead`), whichever source draws them: the synchronous loop, a sampler process, a thread driving vLLM."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.runtime.draw import SEED_STRIDE, DrawPlan, draw_batch, problem_order
from reasongym.agents.runtime.window import STOP, draw_ahead
from reasongym.distributed import DistInfo, rank_seed
from reasongym.generation import HFGenerator

ENV = "reasongym/Arithmetic-v0"


def _plan(size: int | None, place: DistInfo, **fields: Any) -> DrawPlan:
    rollout = preset_configs("tiny", "grpo", num_prompts=4, group_size=2, max_new_tokens=8)["rollout"]
    return DrawPlan(7, rollout, "train", 1, size, place, **fields)


def test_a_plan_gives_each_rank_its_share_of_the_runs_order_and_seed() -> None:
    ranks = [DistInfo(rank=r, world_size=2, local_rank=r) for r in (0, 1)]
    plans = [_plan(10, place) for place in ranks]
    order = problem_order(7, 4, 4, 10)
    assert plans[0].indices(4) + plans[1].indices(4) == order[0::2] + order[1::2]
    assert sorted(plans[0].indices(4) + plans[1].indices(4)) == sorted(order)
    assert plans[0].params(4).seed == 7 * SEED_STRIDE + 4  # rank 0 samples as one process would
    assert plans[1].params(4).seed == rank_seed(7 * SEED_STRIDE + 4, ranks[1]) != plans[0].params(4).seed
    assert plans[0].following(4) == 8 and plans[0].params(4).n == 2


def test_draw_batch_is_the_synchronous_loops_batch(tiny) -> None:
    from reasongym.distributed import SINGLE_PROCESS
    from reasongym.rollouts.batch import collect_rollouts

    model, tokenizer = tiny()
    plan = _plan(None, SINGLE_PROCESS)
    batch = draw_batch(plan, 8, ENV, HFGenerator(model, tokenizer), tokenizer)
    indices = [7 * SEED_STRIDE + p for p in range(8, 12)]  # a generated source: seed-derived indices
    by_hand = collect_rollouts(
        ENV,
        HFGenerator(model, tokenizer),
        tokenizer,
        indices,
        params=plan.params(8),
        split="train",
        difficulty=1,
    )
    assert batch.problem_ids == by_hand.problem_ids and batch.texts == by_hand.texts
    assert torch.equal(batch.input_ids, by_hand.input_ids)


class Versions:
    """The weights channel of a slow trainer: each version arrives just when the sampler waits for it."""

    def __init__(self) -> None:
        self.version, self.stopped = 0, False

    def take(self, at_least: int) -> float:
        self.version = max(self.version, at_least)
        return 0.0


def _serve(requests: list[int], max_staleness: int) -> tuple[list[dict[str, Any]], list[int]]:
    """Run the window against scripted requests; the answers and the cursors drawn at."""
    weights, drawn, answers = Versions(), [], []
    queue = list(requests)

    def draw(cursor: int) -> tuple[str, int]:
        drawn.append(cursor)
        return f"batch@{cursor}", weights.version

    plan = _plan(None, DistInfo(rank=0, world_size=1, local_rank=0))
    draw_ahead(plan, max_staleness, weights, draw, lambda: queue.pop(0), answers.append)
    return answers, drawn


@pytest.mark.parametrize("max_staleness", [1, 2])
def test_no_batch_is_more_than_k_versions_older_than_its_request(max_staleness: int) -> None:
    requests = [0, 1, 2, 3, 3, 4, STOP]  # step 4 takes two batches (DAPO's extra round)
    answers, drawn = _serve(requests, max_staleness)
    assert [a["cursor"] for a in answers] == [0, 4, 8, 12, 16, 20]  # the run's order, one batch each
    for request, answer in zip(requests, answers, strict=False):
        assert 0 <= request - answer["version"] <= max_staleness
    assert all(a["dropped"] == 0 for a in answers) and drawn == [0, 4, 8, 12, 16, 20, 24]


def test_a_batch_found_too_old_is_drawn_again_and_counted() -> None:
    # The trainer jumps from version 0 to 3 (a trainer of steps that take no batch): at K = 1 the batch the
    # sampler drew ahead at version 1 is too old and drawn again, at version 2 or newer.
    answers, drawn = _serve([0, 3, STOP], 1)
    assert answers[1]["dropped"] == 1 and answers[1]["version"] >= 2 and answers[1]["cursor"] == 4
    assert drawn.count(4) == 2
