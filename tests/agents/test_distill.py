"""On-policy distillation: each divergence by hand, a teacher equal to the student, micro-batches, the loop,
resume after SIGKILL, and the refusals (another tokenizer, no teacher)."""

from __future__ import annotations

import copy
import functools
import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from reasongym.agents.distill import DistillConfig, distill_backward_part, distill_loss, train_distill
from reasongym.agents.runtime.update import BatchTotals, accumulate_gradients
from reasongym.agents.teacher import as_teacher, check_same_tokenizer
from reasongym.errors import ConfigError
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.policy.checkpoints import latest_checkpoint
from reasongym.rollouts.batch import collect_rollouts
from reasongym.runs.metrics import read_metrics

ENV = "reasongym/Arithmetic-v0"
WORKER = Path(__file__).with_name("distill_worker.py")
STUDENT = torch.log(torch.tensor([0.5, 0.5]))
TEACHER = torch.log(torch.tensor([0.75, 0.25]))
BY_HAND = {
    # divergence: (value, d value / d student logits), one position, student (1/2, 1/2), teacher (3/4, 1/4)
    # reverse: 1/2 ln(2/3) + 1/2 ln 2; gradient p_i (ln(p_i/q_i) - KL)
    "reverse_kl": (0.5 * math.log(2 / 3) + 0.5 * math.log(2), 0.5 * (math.log(2) - math.log(2 / 3)) / 2),
    # forward: 3/4 ln(3/2) + 1/4 ln(1/2); gradient p - q
    "forward_kl": (0.75 * math.log(1.5) + 0.25 * math.log(0.5), 0.25),
    # JSD(1/2) with m = (5/8, 3/8); gradient p_i (g_i - sum_j p_j g_j), g = (1 - beta) ln(p / m)
    "jsd": (
        0.5 * (0.75 * math.log(0.75 / 0.625) + 0.25 * math.log(0.25 / 0.375))
        + 0.5 * (0.5 * math.log(0.5 / 0.625) + 0.5 * math.log(0.5 / 0.375)),
        0.5 * 0.5 * (math.log(0.5 / 0.375) - math.log(0.5 / 0.625)) / 2,
    ),
    # token 0 sampled: k = ln(1/2) - ln(3/4); loss k ln p_0, gradient k (onehot - p); value reported: k
    "sampled_reverse_kl": (math.log(0.5) - math.log(0.75), -(math.log(0.5) - math.log(0.75)) * 0.5),
}
"""Each divergence's value at one position and the gradient of its loss on the student's second logit (the
first is its negative): worked out by hand in the comments."""


def _one_position(divergence: str, **fields: float) -> tuple[torch.Tensor, dict[str, float], torch.Tensor]:
    logits = STUDENT.clone().reshape(1, 1, 2).requires_grad_(True)  # [b=1, T=1, V=2]
    student = torch.log_softmax(logits, dim=-1)
    teacher = TEACHER.reshape(1, 1, 2) if divergence != "sampled_reverse_kl" else TEACHER[:1].reshape(1, 1)
    cfg = DistillConfig(divergence=divergence, **fields)  # type: ignore[arg-type]
    loss, metrics = distill_loss(
        student,
        teacher,
        torch.zeros((1, 1), dtype=torch.long),
        torch.tensor([fields.get("adv", 0.0)]) if "adv" in fields else torch.zeros(1),
        torch.ones((1, 1)),
        BatchTotals(1, 1.0, 1),
        cfg=cfg,
    )
    loss.backward()
    assert logits.grad is not None
    return loss, metrics, logits.grad.reshape(2)


@pytest.mark.parametrize("divergence", list(BY_HAND))
def test_each_divergence_by_hand(divergence: str) -> None:
    value, slope = BY_HAND[divergence]
    loss, metrics, grad = _one_position(divergence)
    assert metrics["distill/divergence"] == pytest.approx(value, abs=1e-6)
    if divergence != "sampled_reverse_kl":  # the sampled loss is a surrogate whose value is k * ln p_0
        assert float(loss.detach()) == pytest.approx(value, abs=1e-6)
    torch.testing.assert_close(grad, torch.tensor([-slope, slope]), rtol=1e-5, atol=1e-6)


def test_the_verifiers_term_adds_its_policy_gradient() -> None:
    base = _one_position("forward_kl")[2]
    cfg = DistillConfig(divergence="forward_kl", reward_weight=0.5)
    logits = STUDENT.clone().reshape(1, 1, 2).requires_grad_(True)
    loss, metrics = distill_loss(
        torch.log_softmax(logits, dim=-1),
        TEACHER.reshape(1, 1, 2),
        torch.zeros((1, 1), dtype=torch.long),
        torch.tensor([2.0]),  # advantage of the sequence
        torch.ones((1, 1)),
        BatchTotals(1, 1.0, 1),
        cfg=cfg,
    )
    loss.backward()
    assert logits.grad is not None
    # -w A d ln p_0 / dz = -0.5 * 2 * (onehot_0 - p) = (-0.5, 0.5)
    torch.testing.assert_close(logits.grad.reshape(2) - base, torch.tensor([-0.5, 0.5]))
    assert metrics["loss/reward"] == pytest.approx(-2.0 * math.log(0.5))


def test_jsd_beta_and_names_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"jsd_beta=1\.0 .*forward_kl"):
        DistillConfig(divergence="jsd", jsd_beta=1.0)
    with pytest.raises(
        ConfigError, match=r"divergence='reverse-kl' is not allowed.*did you mean 'reverse_kl'"
    ):
        DistillConfig(divergence="reverse-kl")  # type: ignore[arg-type]


def _rollouts(model: torch.nn.Module, tokenizer: object) -> object:
    params = SamplingParams(max_new_tokens=10, temperature=1.0, seed=0, n=3)
    return collect_rollouts(ENV, HFGenerator(model, tokenizer), tokenizer, [0, 1], params=params)


def _gradient(model: torch.nn.Module, teacher: object, batch: object, divergence: str, size: int | None):
    cfg = DistillConfig(divergence=divergence)  # type: ignore[arg-type]
    mask = batch.completion_mask  # type: ignore[attr-defined]
    sampled = teacher.sampled(batch, None, 1.0) if divergence == "sampled_reverse_kl" else None  # type: ignore[attr-defined]
    model.zero_grad()
    metrics = accumulate_gradients(
        model,
        batch,
        torch.zeros(mask.shape[0]),
        functools.partial(distill_loss, cfg=cfg),  # type: ignore[arg-type]
        BatchTotals(mask.shape[0], float(mask.sum()), 10),
        mask=mask,
        ref_logp=sampled,
        micro_batch_size=size,
        backward_part=functools.partial(distill_backward_part, teacher=teacher, divergence=divergence),
    )
    return metrics, torch.cat([p.grad.flatten() for p in model.parameters()])


@pytest.mark.parametrize("divergence", list(BY_HAND))
def test_a_teacher_equal_to_the_student_gives_zero_loss_and_gradient(divergence: str, tiny) -> None:
    model, tokenizer = tiny()
    batch = _rollouts(model, tokenizer)
    teacher = as_teacher(copy.deepcopy(model), model, tokenizer)
    metrics, grad = _gradient(model, teacher, batch, divergence, None)
    assert abs(metrics["distill/divergence"]) < 1e-6 and abs(metrics["loss/total"]) < 1e-6
    assert float(grad.abs().max()) < 1e-6
    other = as_teacher(tiny(seed=1)[0], model, tokenizer)  # the same test sees a different teacher
    metrics, grad = _gradient(model, other, batch, divergence, None)
    assert abs(metrics["distill/divergence"]) > 1e-3 and float(grad.abs().max()) > 1e-4


@pytest.mark.parametrize("divergence", ["reverse_kl", "jsd", "sampled_reverse_kl"])
def test_micro_batches_give_the_full_batch_gradient(divergence: str, tiny) -> None:
    model, tokenizer = tiny()
    batch = _rollouts(model, tokenizer)
    teacher = as_teacher(tiny(seed=1)[0], model, tokenizer)
    whole = _gradient(model, teacher, batch, divergence, None)[1]
    for size in (1, 4):
        torch.testing.assert_close(
            _gradient(model, teacher, batch, divergence, size)[1], whole, rtol=1e-4, atol=1e-7
        )


def test_another_tokenizer_is_refused_with_the_reason(tiny) -> None:
    _, tokenizer = tiny()
    other = SimpleNamespace(get_vocab=lambda: {**tokenizer.get_vocab(), "<extra>": 10_000})
    with pytest.raises(ConfigError, match=r"tokenizer is not the student's .*'<extra>'.*SFT on the teacher"):
        check_same_tokenizer(tokenizer, other)
    check_same_tokenizer(tokenizer, tiny()[1])  # the same vocabulary passes


def test_distillation_moves_the_student_toward_the_teacher_and_logs_its_cost(tmp_path: Path, tiny) -> None:
    from reasongym.agents.algorithms import preset_configs

    configs = preset_configs(
        "tiny", "distill", max_steps=6, num_prompts=8, lr=3e-3, eval_problems=4, progress_bar=False
    )
    student, tokenizer = tiny()
    teacher, teacher_tokenizer = tiny(seed=1)
    result = train_distill(
        configs["distill"],
        student,
        tokenizer,
        ENV,
        teacher=teacher,
        teacher_tokenizer=teacher_tokenizer,
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=tmp_path,
    )
    divergences = [row["distill/divergence"] for row in result.history]
    assert divergences[-1] < 0.7 * divergences[0], divergences
    logged = read_metrics(tmp_path)
    assert all(row["perf/teacher_s"] > 0 and row["perf/teacher_memory_mb"] > 0 for row in logged)
    assert json.loads((tmp_path / "config.json").read_text())["algo"] == "distill"
    assert (tmp_path / "metrics.png").is_file()


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_to_the_uninterrupted_run(tmp_path: Path) -> None:
    killed, straight = tmp_path / "killed", tmp_path / "straight"
    first = subprocess.run(
        [sys.executable, str(WORKER), str(killed), "--kill-at-step", "3"], capture_output=True, text=True
    )
    assert first.returncode == -9, first.stderr[-2000:]  # SIGKILL in step 3, past the step-2 checkpoint
    assert latest_checkpoint(killed).name == "step-000002"
    for folder in (killed, straight):
        done = subprocess.run([sys.executable, str(WORKER), str(folder)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
    ours, theirs = (json.loads((f / "final.json").read_text()) for f in (killed, straight))
    assert ours["resumed_from"] == 2 and theirs["resumed_from"] is None
    assert ours["weights"] == pytest.approx(theirs["weights"], rel=1e-5, abs=1e-6)
    without_time = [
        {k: v for k, v in r.items() if not k.startswith(("perf/", "time"))} for r in read_metrics(killed)
    ]
    assert without_time == [
        {k: v for k, v in r.items() if not k.startswith(("perf/", "time"))} for r in read_metrics(straight)
    ]


def test_the_command_line_needs_a_teacher(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reasongym", "train", "distill", "--env", ENV, "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--teacher is required for distill" in done.stderr
    assert not any(tmp_path.iterdir())  # refused before any run folder


def test_a_served_teacher_that_reports_no_prompt_logprobs_is_a_one_line_error(tiny) -> None:
    from benchmarks.harness.fake_server import fake_server
    from reasongym.agents.teacher import ServedTeacher
    from reasongym.errors import ServerError
    from reasongym.generation.served import OpenAIGenerator, ServedModelConfig

    model, tokenizer = tiny()
    batch = _rollouts(model, tokenizer)
    with fake_server() as server:  # well-formed completions, without prompt_logprobs (not vLLM's)
        settings = ServedModelConfig(
            model="m", base_url=server.base_url, endpoint="completions", max_concurrency=2
        )
        teacher = ServedTeacher(OpenAIGenerator(settings))
        with pytest.raises(
            ServerError, match=r"without their prompt log-probs .*vLLM's OpenAI server does"
        ) as caught:
            teacher.sampled(batch, None, 1.0)
        assert "\n" not in str(caught.value)
        assert server.requests[0]["prompt_logprobs"] == 0 and server.requests[0]["max_tokens"] == 1
        with pytest.raises(ConfigError, match="raw log-probs .* at temperature 0.7"):
            teacher.sampled(batch, None, 0.7)
        with pytest.raises(ConfigError, match="divergence='reverse_kl' needs the teacher's whole next-token"):
            train_distill(DistillConfig(), model, tokenizer, ENV, teacher=teacher)
