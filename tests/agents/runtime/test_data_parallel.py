"""GRPO, DAPO, STaR and evaluation across processes: the pieces by hand, then 2 gloo processes against 1.

The slow tests launch ``tests/agents/runtime/dp_worker.py`` under torchrun (2 CPU processes, DDP or FSDP) and compare
with the same run in this process: the float64 weights after 2 steps must agree within 1e-6 (they agree to
~1e-16), and the logged gradient norms, which would show a missing or doubled normaliser, to 1e-9.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from reasongym import distributed
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.dapo import first_kept
from reasongym.agents.runtime.optimizer import check_autocast
from reasongym.agents.runtime.update import merge_rank_metrics
from reasongym.agents.sft import SFTConfig, train_sft
from reasongym.errors import ConfigError
from reasongym.runs.metrics import read_metrics
from tests.conftest import load_script

WORKER_PATH = Path(__file__).with_name("dp_worker.py")
worker = load_script(WORKER_PATH)
SFT_WORKER_PATH = Path(__file__).parents[1] / "sft_worker.py"
sft_worker = load_script(SFT_WORKER_PATH)
TOLERANCE = 1e-6


# ---------------------------------------------------------------------------------------------- pieces


@pytest.mark.parametrize("world_size", [1, 2, 3])
@pytest.mark.parametrize("count", [0, 1, 4, 7])
def test_unshard_puts_every_share_back_in_order(world_size: int, count: int) -> None:
    items = list(range(count))
    shares = [distributed.shard(items, distributed.DistInfo(r, world_size, r)) for r in range(world_size)]
    assert distributed.unshard(shares) == items


def test_unshard_refuses_shares_that_shard_cannot_make() -> None:
    with pytest.raises(ConfigError, match=r"shares of sizes \[1, 2\] do not come from shard\(\)"):
        distributed.unshard([[0], [1, 2]])


@pytest.mark.parametrize(
    ("keep", "already", "wanted", "chosen"),
    [
        ([True, False, True, True], 0, 4, [True, False, True, True]),  # room for all
        ([True, False, True, True], 0, 2, [True, False, True, False]),  # the first two kept ones
        ([True, True], 3, 4, [True, False]),  # earlier rounds filled 3 of 4
        ([True, True], 4, 4, [False, False]),  # already full
        ([False, False], 0, 4, [False, False]),
    ],
)
def test_first_kept_takes_kept_groups_in_problem_order_up_to_the_batch(
    keep: list[bool], already: int, wanted: int, chosen: list[bool]
) -> None:
    assert first_kept(keep, already, wanted) == chosen


def test_each_rank_samples_with_its_own_seed_and_rank_0_with_the_seed_itself() -> None:
    seeds = [distributed.rank_seed(1234, distributed.DistInfo(r, 4, r)) for r in range(4)]
    assert seeds[0] == 1234 and len(set(seeds)) == 4
    assert seeds == [distributed.rank_seed(1234, distributed.DistInfo(r, 4, r)) for r in range(4)]
    assert all(0 <= seed < 1 << 63 for seed in seeds)
    assert distributed.rank_seed(1235, distributed.DistInfo(1, 4, 1)) != seeds[1]


def test_rank_metrics_merge_as_one_batch() -> None:
    merged = merge_rank_metrics(
        [
            {"loss/policy": 0.25, "train/tokens": 3.0, "train/ratio_mean": 1.0, "train/ratio_max": 1.2},
            {"loss/policy": 0.5, "train/tokens": 1.0, "train/ratio_mean": 2.0, "train/ratio_max": 1.1},
            {"train/tokens": 0.0, "train/entropy": 0.0},  # a rank without rows weighs nothing
        ]
    )
    # losses are shares of one normalised loss: 0.25 + 0.5; means weigh 3 and 1 tokens: (3 + 2) / 4
    assert merged == {
        "loss/policy": 0.75,
        "train/tokens": 4.0,
        "train/ratio_mean": 1.25,
        "train/ratio_max": 1.2,
        "train/entropy": 0.0,
    }


def test_fewer_prompts_than_processes_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "current", lambda: distributed.DistInfo(0, 4, 0))
    model, tokenizer = worker.tiny_model()
    configs = preset_configs("tiny", "grpo", num_prompts=3, progress_bar=False)
    with pytest.raises(ConfigError, match=r"num_prompts=3 is not allowed with 4 processes; .* >= 4"):
        worker.train_grpo(
            configs["grpo"],
            model,
            tokenizer,
            worker.counting_env(),
            run=configs["run"],
            rollout=configs["rollout"],
            generator=worker.ScriptedPolicy(),
        )


def test_fsdp_is_refused_where_it_is_not_implemented(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "current", lambda: distributed.DistInfo(0, 2, 0))
    model, tokenizer = worker.tiny_model()
    run = preset_configs("tiny", "sft", parallelism="fsdp")["run"]
    with pytest.raises(ConfigError, match=r"parallelism='fsdp' is not allowed for SFT \(nor STaR.*'ddp'"):
        train_sft(SFTConfig(batch_size=2), model, tokenizer, [("1+1=", "2")] * 4, run=run)


def test_autocast_on_a_cpu_model_is_refused_with_the_way_out() -> None:
    model, _ = worker.tiny_model()
    run = preset_configs("tiny", "grpo", autocast="bf16")["run"]
    with pytest.raises(
        ConfigError, match=r"autocast='bf16' is not allowed for a model on cpu: .*autocast='off'"
    ):
        check_autocast(run, model)
    with pytest.raises(
        ConfigError, match=r"autocast='fp32' is not allowed; valid names: \['bf16', 'fp16', 'off', 'tf32'\]"
    ):
        preset_configs("tiny", "grpo", autocast="fp32")


# ---------------------------------------------------------------------------------------------- 2 processes


def _launch(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [*command, str(WORKER_PATH), *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def _ranks(out: Path) -> list[dict[str, torch.Tensor]]:
    return [torch.load(out / f"rank{rank}.pt", weights_only=True) for rank in (0, 1)]


def _assert_same_update(ranks: list[dict[str, torch.Tensor]], one: torch.nn.Module) -> None:
    initial, _ = worker.tiny_model()
    moved = max(
        (p - q).abs().max().item() for p, q in zip(one.parameters(), initial.parameters(), strict=True)
    )
    assert moved > 100 * TOLERANCE  # the steps moved the weights far more than the tolerance
    for name, tensor in one.state_dict().items():
        assert torch.equal(ranks[0][name], ranks[1][name]), name  # DDP kept the ranks identical
        torch.testing.assert_close(ranks[0][name], tensor, rtol=0, atol=TOLERANCE, msg=name)


def _assert_same_metrics(two: Path, one: Path, keys: tuple[str, ...]) -> None:
    logged, expected = read_metrics(two), read_metrics(one)
    assert [r["step"] for r in logged] == [r["step"] for r in expected] == [0, 1, 2]  # rank 0 alone logs
    for got, want in zip(logged[1:], expected[1:], strict=True):
        assert got["train/grad_norm"] == pytest.approx(want["train/grad_norm"], rel=1e-9)
        assert {key: got[key] for key in keys} == {key: want[key] for key in keys}


@pytest.fixture(scope="module")
def one_process_grpo(tmp_path_factory: pytest.TempPathFactory) -> tuple[torch.nn.Module, Path]:
    folder = tmp_path_factory.mktemp("grpo-one") / "run"
    model, _ = worker.train("grpo", folder)
    return model, folder


@pytest.mark.slow  # two processes under torchrun
def test_two_grpo_processes_take_the_steps_of_one(tmp_path: Path, one_process_grpo: tuple) -> None:
    done = _launch("grpo", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    one, folder = one_process_grpo
    _assert_same_update(_ranks(tmp_path), one)
    _assert_same_metrics(
        tmp_path / "run", folder, ("rollout/reward_mean", "rollout/len_mean", "train/tokens")
    )
    assert sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir()) == [
        "latest",
        "step-000001",
        "step-000002",
    ]


@pytest.mark.slow  # two processes under torchrun
def test_two_distill_processes_take_the_steps_of_one(tmp_path: Path) -> None:
    done = _launch("distill", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    one, _ = worker.train("distill", tmp_path / "one")
    _assert_same_update(_ranks(tmp_path), one)
    keys = ("rollout/reward_mean", "train/tokens")
    _assert_same_metrics(tmp_path / "run", tmp_path / "one", keys)
    logged = read_metrics(tmp_path / "run")
    assert all(row["distill/divergence"] > 0 for row in logged[1:])  # the teacher is another model
    assert any(row["train/advantage_std"] > 0 for row in logged[1:])  # the verifier's term acted too


@pytest.mark.slow  # two processes under torchrun
@pytest.mark.parametrize("parallelism", ["ddp", "fsdp"])
def test_two_dapo_processes_take_the_steps_of_one_when_dynamic_sampling_drops_groups(
    tmp_path: Path, parallelism: str
) -> None:
    done = _launch("dapo", str(tmp_path), "--parallelism", parallelism)
    assert done.returncode == 0, done.stderr[-3000:]
    one, _ = worker.train("dapo", tmp_path / "one")
    _assert_same_update(_ranks(tmp_path), one)
    keys = (
        "dapo/kept_groups",
        "dapo/dropped_groups",
        "dapo/extra_rounds",
        "rollout/reward_mean",
        "train/tokens",
    )
    _assert_same_metrics(tmp_path / "run", tmp_path / "one", keys)
    assert read_metrics(tmp_path / "run")[1]["dapo/dropped_groups"] == len(worker.HOPELESS)
    # In step 1 rank 0 kept none of its groups: it joined the update with an empty share.
    rows = [json.loads((tmp_path / f"rank{rank}.json").read_text())["rows"] for rank in (0, 1)]
    assert rows[0][0] == 0 and rows[1][0] > 0


@pytest.mark.slow  # two processes under torchrun
@pytest.mark.parametrize("parallelism", ["ddp", "fsdp"])
def test_a_killed_two_process_run_resumes_to_the_weights_of_one_process(
    tmp_path: Path, one_process_grpo: tuple, parallelism: str
) -> None:
    # rank 0 dies evaluating step 2; under FSDP the checkpoint of step 1 was gathered from both ranks
    killed = _launch("grpo", str(tmp_path), "--kill-at-eval", "3", "--parallelism", parallelism)
    assert killed.returncode != 0 and "SIGKILL" in killed.stderr, killed.stderr[-3000:]
    checkpoints = tmp_path / "run" / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == ["latest", "step-000001"]
    resumed = _launch("grpo", str(tmp_path), "--parallelism", parallelism)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    one, folder = one_process_grpo
    _assert_same_update(_ranks(tmp_path), one)
    _assert_same_metrics(tmp_path / "run", folder, ("rollout/reward_mean", "train/tokens"))


@pytest.mark.slow  # two processes under torchrun
def test_star_processes_fine_tune_on_every_ranks_rationales(tmp_path: Path) -> None:
    # Per-process batch 6 on 2 processes is the batch of 12 of one process: all 12 kept rationales.
    done = _launch("star", str(tmp_path), "--sft-batch-size", "6")
    assert done.returncode == 0, done.stderr[-3000:]
    one, _ = worker.train("star", tmp_path / "one", sft={"batch_size": 12})
    _assert_same_update(_ranks(tmp_path), one)
    for iteration in ("iteration-001", "iteration-002"):  # the same kept set, gathered in problem order
        kept = (tmp_path / "run" / iteration / "kept.jsonl").read_text()
        assert kept == (tmp_path / "one" / iteration / "kept.jsonl").read_text()
    sources = [json.loads(line)["source"] for line in kept.splitlines()]
    assert sources == ["direct"] * 8 + ["rationalized"] * 4
    assert [r["step"] for r in read_metrics(tmp_path / "run")] == [0, 1, 2]


@pytest.mark.slow  # two processes under torchrun
def test_an_evaluation_killed_on_two_processes_resumes_on_one(tmp_path: Path) -> None:
    expected = tmp_path / "one" / "eval.jsonl"
    worker.evaluate_counting(expected, distributed=False)
    killed = _launch("eval", str(tmp_path), "--kill-at-eval", "2")  # rank 0 dies in its second batch
    assert killed.returncode != 0
    parts = sorted(p.name for p in tmp_path.glob(".eval.jsonl.rank*.jsonl"))
    assert parts == [".eval.jsonl.rank0.jsonl", ".eval.jsonl.rank1.jsonl"]
    sampled = []

    policy = worker.SeededPolicy()  # the same model as before (the resume checks its identity), counted
    sample = policy.generate

    def counting(prompts, params):  # noqa: ANN001, ANN202
        sampled.extend(prompts)
        return sample(prompts, params)

    policy.generate = counting  # type: ignore[method-assign]
    worker.evaluate_counting(tmp_path / "eval.jsonl", distributed=False, generator=policy)
    assert 0 < len(sampled) < 10  # only the batches no rank had finished
    # The same records (seeds included) in problem order, and the part files merged away.
    assert (tmp_path / "eval.jsonl").read_text() == expected.read_text()
    assert not list(tmp_path.glob(".eval.jsonl.rank*"))


@pytest.mark.slow  # two processes under torchrun
def test_two_ranks_average_their_gradients_and_keep_identical_weights(tmp_path: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    done = subprocess.run(
        [*command, str(SFT_WORKER_PATH), "ddp", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    checksums = [json.loads((tmp_path / f"rank{r}.json").read_text())["checksum"] for r in (0, 1)]
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1)]
    assert checksums[0] == checksums[1]
    for name in ranks[0]:
        assert torch.equal(ranks[0][name], ranks[1][name]), name

    # Adam's first update is lr * g / (|g| + eps): float reordering moves it by at most a few % of lr
    # where g is tiny, while a different gradient moves whole tensors by up to 2 * lr.
    tolerance = 0.01 * sft_worker.DDP_RUN.lr
    pairs = sft_worker.addition_pairs(8)
    alone, tokenizer = sft_worker.tiny_setup()  # rank 0's shard only: what no averaging would give
    shard = distributed.shard(pairs, distributed.DistInfo(0, 2, 0))
    train_sft(sft_worker.DDP_CONFIG, alone, tokenizer, shard, run=sft_worker.DDP_RUN)
    largest_gap = max(
        (tensor - ranks[0][name]).abs().max().item() for name, tensor in alone.state_dict().items()
    )
    assert largest_gap > 10 * tolerance

    full, _ = sft_worker.tiny_setup()  # one process over both shards in one batch: the same gradient as DDP
    train_sft(
        dataclasses.replace(sft_worker.DDP_CONFIG, batch_size=8),
        full,
        tokenizer,
        pairs,
        run=sft_worker.DDP_RUN,
    )
    for name, tensor in full.state_dict().items():
        torch.testing.assert_close(ranks[0][name], tensor, rtol=0, atol=tolerance)
