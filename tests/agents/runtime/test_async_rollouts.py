"""Rollouts drawn ahead by a sampler process (max_staleness K >= 1): every batch at most K versions old, the
synchronous loop untouched at K = 0, the unsupported combinations refused, and a killed run resumed."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import gymnasium
import pytest
import torch

import reasongym
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.config import LoRAConfig
from reasongym.agents.dapo import train_dapo
from reasongym.agents.grpo import train_grpo
from reasongym.agents.runtime.async_rollouts import SamplerJob, _flat, _load_flat, _pushed, sampler_policy
from reasongym.agents.runtime.draw import problem_order
from reasongym.agents.star import train_star
from reasongym.errors import ConfigError
from reasongym.generation import HFGenerator
from reasongym.policy.checkpoints import latest_checkpoint
from reasongym.policy.lora import adapters_merged, add_adapters
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"
WORKER = Path(__file__).with_name("async_worker.py")
SMALL = {"num_prompts": 4, "group_size": 4, "max_new_tokens": 16, "eval_every": 0, "progress_bar": False}


def _grpo(tiny, env: object = ENV, **fields: object) -> tuple[torch.nn.Module, list[dict[str, float]]]:
    configs = preset_configs("tiny", "grpo", **{**SMALL, **fields})
    model, tokenizer = tiny()
    result = train_grpo(
        configs["grpo"], model, tokenizer, env, run=configs["run"], rollout=configs["rollout"]
    )
    return model, list(result.history)


def test_with_k_1_every_batch_is_at_most_one_version_old_and_the_sampler_ends(tiny) -> None:
    _, history = _grpo(tiny, max_steps=4, max_staleness=1)
    staleness = [row["async/staleness_max"] for row in history]
    assert staleness[0] == 0 and max(staleness) == 1 and all(s in (0, 1) for s in staleness), staleness
    assert [row["async/staleness_mean"] for row in history] == staleness  # one batch per step
    assert all(row["async/dropped"] == 0 for row in history)
    assert all(row["perf/tokens_per_s"] > 0 and row["train/tokens"] > 0 for row in history)
    # the stale batches' sampler log-probs differ from the trainer's: the off-policy correction measured it
    stale = [row for row in history if row["async/staleness_max"] == 1]
    assert all(row["sampler/logp_diff_max"] > 0 for row in stale)
    assert all(row["sampler/logp_diff_max"] < 1e-4 for row in history if row["async/staleness_max"] == 0)
    time.sleep(0.5)
    assert multiprocessing.active_children() == []  # the sampler process is gone


@pytest.mark.parametrize("old_logp", ["rescore", "sampler"])
def test_a_stale_batch_is_rescored_or_its_ratio_is_to_the_sampler_that_drew_it(tiny, old_logp: str) -> None:
    rewarded = reasongym.make(
        ENV, format_reward=1.0
    )  # a random model's completions differ in reward: it moves
    _, history = _grpo(tiny, rewarded, max_steps=3, max_staleness=1, stale_old_logp=old_logp, lr=3e-3)
    stale = [row for row in history if row["async/staleness_max"] == 1]
    assert len(stale) == 2
    if old_logp == "rescore":  # the ratio starts at 1; the correction weighs the sampler's older log-probs
        # mu = 1: the update's own forward pass gives the old log-probs, no scoring pass of their own
        assert not any("perf/old_logp_s" in row for row in history)
        assert all(row["train/ratio_max"] == row["train/ratio_min"] == 1.0 for row in history)
        assert all(row["sampler/logp_diff_max"] > 1e-4 for row in stale)
    else:  # no rescoring pass: the ratio is to the version that drew the batch, which the clip bounds
        assert not any("perf/old_logp_s" in row for row in history)
        assert not any("sampler/logp_diff_max" in row for row in history)  # as the synchronous loop's sampler
        assert all(abs(row["train/ratio_max"] - 1) > 1e-4 for row in stale)


def test_k_0_is_the_synchronous_loop(tiny) -> None:
    explicit, first = _grpo(tiny, max_steps=2, max_staleness=0)
    default, second = _grpo(tiny, max_steps=2)
    for p, q in zip(explicit.parameters(), default.parameters(), strict=True):
        assert torch.equal(p, q)
    assert "async/staleness_max" not in first[0] and first[0]["loss/policy"] == second[0]["loss/policy"]


def test_the_sampler_draws_the_synchronous_loops_problems() -> None:
    # a finite split: each pass is a seeded permutation; a generated source: seed-derived indices
    order = problem_order(3, 0, 10, 4)
    assert sorted(order[:4]) == [0, 1, 2, 3] and sorted(order[4:8]) == [0, 1, 2, 3]
    assert problem_order(3, 4, 6, 4) == order[4:]
    assert problem_order(3, 5, 2, None) == [3 * 1_000_003 + 5, 3 * 1_000_003 + 6]


def test_dapo_takes_several_rounds_a_step_from_the_sampler_none_too_old(tiny) -> None:
    # dynamic sampling on a random model: most groups are all wrong, so each step asks for extra rounds
    configs = preset_configs("tiny", "dapo", **{**SMALL, "max_staleness": 1, "max_steps": 3})
    model, tokenizer = tiny()
    history = train_dapo(
        configs["dapo"], model, tokenizer, ENV, run=configs["run"], rollout=configs["rollout"]
    ).history
    assert sum(row["dapo/extra_rounds"] for row in history) > 0
    assert all(row["async/staleness_max"] <= 1 and row["async/dropped"] == 0 for row in history)
    assert all(0 <= row["async/staleness_mean"] <= row["async/staleness_max"] for row in history)


def test_lora_sends_only_the_adapters_and_the_sampler_follows_them(tiny) -> None:
    _, history = _grpo(tiny, max_steps=3, max_staleness=1, lora=LoRAConfig(rank=4, alpha=8.0))
    assert [row["async/staleness_max"] for row in history] == [0, 1, 1]
    # the sampler's base and adapters are the trainer's: its first batch's log-probs are the trainer's
    fresh = [row for row in history if row["async/staleness_max"] == 0]
    assert fresh and all(row["sampler/logp_diff_max"] < 1e-4 for row in fresh)


def test_what_k_1_does_not_support_is_refused_with_the_reason(tiny) -> None:
    configs = preset_configs("tiny", "grpo", **{**SMALL, "max_staleness": 1, "max_steps": 1})
    model, tokenizer = tiny()
    with pytest.raises(ConfigError, match=r"max_staleness=1 is not allowed with a generator passed in"):
        train_grpo(
            configs["grpo"],
            model,
            tokenizer,
            ENV,
            run=configs["run"],
            rollout=configs["rollout"],
            generator=HFGenerator(model, tokenizer),
        )
    with pytest.raises(ConfigError, match=r"max_staleness=-1 is not allowed"):
        preset_configs("tiny", "grpo", max_staleness=-1)


class Doubled(gymnasium.RewardWrapper):
    def reward(self, reward: float) -> float:
        return 2 * reward


def test_an_environment_wrapped_in_python_is_refused_not_rebuilt_without_its_wrapper(tiny) -> None:
    configs = preset_configs("tiny", "grpo", **{**SMALL, "max_staleness": 1, "max_steps": 1})
    model, tokenizer = tiny()
    env = Doubled(reasongym.make(ENV))
    assert env.spec is not None and env.spec.id == ENV  # the wrapper passes the id through
    with pytest.raises(ConfigError, match=r"an environment wrapped in Python \(Doubled;"):
        train_grpo(configs["grpo"], model, tokenizer, env, run=configs["run"], rollout=configs["rollout"])


@pytest.mark.slow  # three runs in subprocesses, each with its sampler process
def test_a_killed_run_resumes_and_its_sampler_does_not_outlive_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    killed = subprocess.run(
        [sys.executable, str(WORKER), str(run), "--kill-at-step", "3"], capture_output=True, text=True
    )
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert latest_checkpoint(run).name == "step-000002"
    samplers = [int(pid) for pid in (run / "sampler.pid").read_text().split()]
    assert samplers  # the trainer had its sampler process
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in samplers) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(_alive(pid) for pid in samplers)  # it ended with its trainer
    resumed = subprocess.run([sys.executable, str(WORKER), str(run)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    logged = read_metrics(run)
    assert [row["step"] for row in logged if "async/staleness_max" in row] == [1, 2, 3, 4, 5]
    assert all(row["async/staleness_max"] <= 1 for row in logged if "async/staleness_max" in row)
    assert latest_checkpoint(run).name == "step-000005"
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert {row["step"] for row in samples} == {1, 2, 3, 4, 5}  # step 3's, lost with the kill, written again
    assert all(0 <= row["step"] - 1 - row["policy_version"] <= 1 for row in samples)  # each row's version


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped) has no command line left to run
        return Path(f"/proc/{pid}/cmdline").read_bytes() != b""
    except OSError:
        return False


def test_with_lora_only_the_adapters_travel_and_the_sampler_then_computes_the_trainers_policy(tiny) -> None:
    model, _ = tiny()
    lora = LoRAConfig(rank=4, alpha=8.0)
    add_adapters(model, rank=4, alpha=8.0, dropout=0.0, target_modules=lora.target_modules)
    model.eval()
    pushed = tuple(name for name, p in model.named_parameters() if p.requires_grad)
    assert pushed and all(".lora_A." in name or ".lora_B." in name for name in pushed)
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    job = SamplerJob(0, type(model), model.config, lora, start, pushed, None, None, None, "cpu")
    copy, adapted = sampler_policy(job)
    with torch.no_grad():  # an update: lora_B leaves zero, so the adapters now change the outputs
        for name, p in model.named_parameters():
            if ".lora_B." in name:
                p.normal_(0, 0.5)
    ids = torch.tensor([[1, 5, 9, 3, 7]])
    with torch.no_grad():
        trained = model(ids).logits
        assert not torch.allclose(copy(ids).logits, trained, atol=1e-3)  # before the push
        _load_flat(_pushed(copy, pushed), _flat(_pushed(model, pushed)))
        torch.testing.assert_close(copy(ids).logits, trained)
        with adapters_merged(adapted):  # how the sampler decodes
            torch.testing.assert_close(copy(ids).logits, trained, rtol=1e-4, atol=1e-4)


def _two_nodes(out: Path, staleness: int) -> list[subprocess.CompletedProcess]:
    """The async worker under ``torchrun --nnodes 2`` (one process per "node", both on this machine, a c10d
    rendezvous on a loopback port), for 3 steps at ``max_staleness``."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    launch = [sys.executable, "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=1"]
    launch += ["--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", f"--rdzv-id=k{staleness}"]
    launch += ["--max-restarts=0", "--local-addr=127.0.0.1"]
    worker = [str(WORKER), str(out / "run"), "--max-staleness", str(staleness), "--steps", "3"]
    worker += ["--format-reward", "1"]  # a random model's completions differ in reward: the steps move it
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    nodes = [
        subprocess.Popen(
            [*launch, *worker], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)
    ]
    done = []
    for node in nodes:
        stdout, stderr = node.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(node.args, node.returncode, stdout, stderr))
    return done


@pytest.mark.slow  # two torchrun agents, two trainers (and two samplers at K = 1)
@pytest.mark.parametrize("staleness", [0, 1])
def test_a_two_node_launch_trains_with_each_rank_its_own_share(tiny, tmp_path: Path, staleness: int) -> None:
    nodes = _two_nodes(tmp_path, staleness)
    assert all(node.returncode == 0 for node in nodes), [node.stderr[-3000:] for node in nodes]
    ranks = [torch.load(tmp_path / f"rank{rank}.pt", weights_only=True) for rank in (0, 1)]
    initial, _ = tiny(seed=0)  # the worker's model
    moved = False
    for name, tensor in ranks[0].items():
        assert torch.equal(tensor, ranks[1][name]), name  # DDP over the two nodes kept them identical
        moved = moved or not torch.equal(tensor, initial.state_dict()[name])
    assert moved
    logged = [row for row in read_metrics(tmp_path / "run") if row["step"] > 0]
    assert [row["step"] for row in logged] == [1, 2, 3]  # rank 0 alone logs
    if staleness:
        assert [row["async/staleness_max"] for row in logged] == [0, 1, 1]
        assert all(row["async/dropped"] == 0 for row in logged)
    else:
        assert "async/staleness_max" not in logged[0]


def test_star_refuses_to_sample_ahead_and_says_why(tiny) -> None:
    configs = preset_configs("tiny", "star", max_staleness=1, max_steps=1)
    model, tokenizer = tiny()
    with pytest.raises(
        ConfigError, match=r"max_staleness=1 is not allowed for STaR: an iteration's rationales"
    ):
        train_star(configs["star"], model, tokenizer, ENV, run=configs["run"], rollout=configs["rollout"])


def test_distillation_learns_from_batches_drawn_ahead(tiny) -> None:
    from reasongym.agents.distill import train_distill

    configs = preset_configs(
        "tiny",
        "distill",
        max_steps=6,
        num_prompts=8,
        lr=3e-3,
        eval_every=0,
        progress_bar=False,
        max_staleness=1,
    )
    student, tokenizer = tiny()
    teacher, teacher_tokenizer = tiny(seed=1)
    history = train_distill(
        configs["distill"],
        student,
        tokenizer,
        ENV,
        teacher=teacher,
        teacher_tokenizer=teacher_tokenizer,
        run=configs["run"],
        rollout=configs["rollout"],
    ).history
    assert [row["async/staleness_max"] for row in history] == [0, 1, 1, 1, 1, 1]
    divergences = [row["distill/divergence"] for row in history]
    assert divergences[-1] < 0.7 * divergences[0], divergences  # as it does synchronously
