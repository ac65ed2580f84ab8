"""SFT: completion-only loss, packing, accumulation invariance, non-finite skips, learning, kill-and-resume."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from reasongym.agents.config import RunConfig
from reasongym.agents.sft import (
    IGNORE_INDEX,
    SFTConfig,
    build_sft_batches,
    collate,
    completion_loss,
    sft_pairs_from_env,
    sft_step,
    tokenize_pairs,
    train_sft,
)
from reasongym.errors import ConfigError
from reasongym.policy.checkpoints import latest_checkpoint
from reasongym.runs.folder import RunDir
from reasongym.runs.metrics import read_metrics
from tests.conftest import load_script

WORKER_PATH = Path(__file__).with_name("sft_worker.py")
worker = load_script(WORKER_PATH)

QUIET = {"progress_bar": False, "tensorboard": False, "lr_schedule": "cosine"}


def _run(**fields: object) -> RunConfig:
    return RunConfig(**{**QUIET, **fields})


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"batch_size": 0}, "batch_size=0 is not allowed; expected an integer in [1, 1048576]"),
        ({"max_length": 1}, "max_length=1 is not allowed; expected an integer in [2, 2097152]"),
        ({"packing": "yes"}, "packing='yes' is not allowed; expected true or false"),
    ],
)
def test_config_rejects_bad_values_naming_the_field(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        SFTConfig(**overrides)
    assert message in str(raised.value)


def test_a_micro_batch_must_divide_the_batch() -> None:
    model, tokenizer = worker.tiny_setup()
    with pytest.raises(
        ConfigError, match="micro_batch_size=3 is not allowed with batch_size=4; it must divide it"
    ):
        train_sft(
            SFTConfig(batch_size=4), model, tokenizer, worker.addition_pairs(8), run=_run(micro_batch_size=3)
        )


def test_labels_cover_completion_and_eos_only() -> None:
    _, tokenizer = worker.tiny_setup()
    cfg = SFTConfig(batch_size=2)
    (batch,) = build_sft_batches(tokenizer, [("12+3=", "15"), ("1+1=", "2")], cfg)
    eos = tokenizer.eos_token_id
    for row, (prompt, completion) in enumerate([("12+3=", "15"), ("1+1=", "2")]):
        expected = tokenizer(completion, add_special_tokens=False)["input_ids"] + [eos]
        labelled = batch.labels[row][batch.labels[row] != IGNORE_INDEX].tolist()
        assert labelled == expected
        assert batch.labels[row, : len(prompt)].eq(IGNORE_INDEX).all()  # char tokenizer: 1 token per char
    assert batch.attention_mask[1].sum() == len("1+1=2") + 1  # the shorter row is right-padded
    assert batch.num_tokens == 3 + 2


def test_long_sequences_are_cut_and_prompts_that_leave_no_room_are_refused() -> None:
    _, tokenizer = worker.tiny_setup()
    (example,) = tokenize_pairs(tokenizer, [("abc", "defghij")], max_length=5)
    assert len(example.input_ids) == 5 and example.completion_start == 3
    with pytest.raises(ConfigError, match=r"pairs\[0\] has a prompt of 6 tokens; with max_length=6"):
        tokenize_pairs(tokenizer, [("abcdef", "g")], max_length=6)


def test_packed_rows_give_the_same_loss_as_padded_rows() -> None:
    model, tokenizer = worker.tiny_setup()
    examples = tokenize_pairs(tokenizer, worker.addition_pairs(12), max_length=64)
    padded = collate(examples, batch_size=12, pad_id=tokenizer.pad_token_id)
    packed = collate(examples, batch_size=12, pad_id=tokenizer.pad_token_id, packing=True, max_length=20)
    assert len(padded) == 1 and len(packed) == 1 and packed[0].input_ids.shape[0] < 12  # really packed
    assert packed[0].num_tokens == padded[0].num_tokens
    with torch.no_grad():
        padded_loss, _ = completion_loss(model, padded[0])
        packed_loss, _ = completion_loss(model, packed[0])
    torch.testing.assert_close(packed_loss, padded_loss, rtol=1e-5, atol=1e-5)


class _GradRecorder(torch.optim.SGD):
    """An optimizer that only remembers the gradient it was asked to apply."""

    def step(self, closure=None):  # noqa: ANN001, ANN201 - matches torch's signature
        self.grads = [p.grad.detach().clone() for group in self.param_groups for p in group["params"]]


def test_gradient_accumulation_gives_the_full_batch_gradient() -> None:
    model, tokenizer = worker.tiny_setup()
    # Completions of different lengths, so a per-micro-batch mean would weight tokens unequally.
    pairs = [
        (f"{a}*{b}=", str(a * b) * (1 + a % 3)) for a, b in [(1, 2), (3, 4), (5, 6), (7, 8), (9, 9), (2, 2)]
    ]
    pairs += [("8*8=", "64"), ("0*1=", "0")]
    examples = tokenize_pairs(tokenizer, pairs, max_length=64)
    gradients = []
    for batch_size in (8, 2):
        recorder = _GradRecorder(model.parameters(), lr=0.0)
        micro_batches = collate(examples, batch_size=batch_size, pad_id=tokenizer.pad_token_id)
        sft_step(model, micro_batches, recorder, _run(max_grad_norm=None))
        gradients.append(recorder.grads)
    for full, accumulated in zip(*gradients, strict=True):
        torch.testing.assert_close(accumulated, full, rtol=1e-4, atol=1e-6)


def test_a_non_finite_step_is_skipped_and_leaves_the_weights_alone(tmp_path: Path) -> None:
    model, tokenizer = worker.tiny_setup()
    calls = {"n": 0}
    poisoned_step = 2

    def poison(module, args, output):  # noqa: ANN001, ANN202 - forward hook signature
        calls["n"] += 1
        if calls["n"] == poisoned_step:  # one forward per step (one micro-batch)
            output.logits = output.logits * float("inf")
        return output

    snapshots = []
    model.register_forward_hook(poison)
    result = train_sft(
        SFTConfig(batch_size=4),
        model,
        tokenizer,
        worker.addition_pairs(12),
        run=_run(lr=1e-2, max_steps=3),
        run_dir=tmp_path,
        stop_when=lambda step: (
            snapshots.append({k: v.clone() for k, v in model.state_dict().items()}) or False
        ),
    )
    skipped = [m["train/skipped_nonfinite"] for m in result.history]
    assert skipped == [0.0, 1.0, 0.0]
    for name, before in snapshots[0].items():
        torch.testing.assert_close(snapshots[1][name], before, rtol=0, atol=0)  # step 2 changed nothing
    assert any(
        not torch.equal(snapshots[2][k], snapshots[1][k]) for k in snapshots[1]
    )  # step 3 trained again
    assert all(torch.isfinite(v).all() for v in snapshots[2].values())
    logged = read_metrics(tmp_path / "metrics.jsonl")
    assert [line["train/skipped_nonfinite"] for line in logged] == [0.0, 1.0, 0.0]
    assert logged[1]["loss/sft"] is None  # non-finite values are written as null


def _greedy_accuracy(model: torch.nn.Module, tokenizer: object, pairs: list[tuple[str, str]]) -> float:
    model.eval()
    encoded = tokenizer([p for p, _ in pairs], return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        out = model.generate(
            **encoded, max_new_tokens=3, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    texts = tokenizer.batch_decode(out[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True)
    model.train()
    return sum(text == gold for text, (_, gold) in zip(texts, pairs, strict=True)) / len(pairs)


@pytest.mark.slow
def test_sft_learns_single_digit_addition_and_stops_on_accuracy(tmp_path: Path) -> None:
    model, tokenizer = worker.tiny_setup()
    pairs = worker.addition_pairs()
    before = _greedy_accuracy(model, tokenizer, pairs)
    run = _run(lr=3e-3, max_steps=300, warmup_steps=10, eval_every=25)
    accuracy = {"value": before}

    def eval_fn(m: torch.nn.Module) -> dict[str, float]:
        accuracy["value"] = _greedy_accuracy(m, tokenizer, pairs)
        return {"accuracy": accuracy["value"]}

    result = train_sft(
        SFTConfig(batch_size=16),
        model,
        tokenizer,
        pairs,
        run=run,
        run_dir=tmp_path,
        eval_fn=eval_fn,
        stop_when=lambda _: accuracy["value"] >= 0.8,
    )
    assert result.history[-1]["loss/sft"] < 0.5 * result.history[0]["loss/sft"]
    assert before <= 0.1 and _greedy_accuracy(model, tokenizer, pairs) >= 0.8
    assert result.stopped_early and result.steps < run.max_steps and result.steps % run.eval_every == 0
    logged = read_metrics(tmp_path)
    assert (
        logged[-1]["eval/accuracy"] >= 0.8 and latest_checkpoint(tmp_path).name == f"step-{result.steps:06d}"
    )


def _without_timings(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "time" and not k.startswith("perf/")} for r in records]


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_weights_and_metrics(tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    command = [sys.executable, str(WORKER_PATH), "resume", str(killed)]
    first = subprocess.run([*command, "--kill-after", "3"], capture_output=True, text=True, timeout=120)
    assert first.returncode == -9, first.stderr  # SIGKILL after step 3, one step past the step-2 checkpoint
    assert latest_checkpoint(killed).name == "step-000002" and len(read_metrics(killed)) == 3
    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr

    worker.run_resumable(str(tmp_path / "straight"))  # the same run, uninterrupted, in this process
    resumed = load_file(latest_checkpoint(killed) / "model.safetensors")
    straight = load_file(latest_checkpoint(tmp_path / "straight") / "model.safetensors")
    assert latest_checkpoint(killed).name == "step-000006" and resumed.keys() == straight.keys()
    for name in straight:
        torch.testing.assert_close(resumed[name], straight[name], rtol=1e-5, atol=1e-6)
    assert _without_timings(read_metrics(killed)) == _without_timings(read_metrics(tmp_path / "straight"))
    assert [r["step"] for r in read_metrics(killed)] == [1, 2, 3, 4, 5, 6]


def test_a_resume_with_no_steps_left_is_refused_before_touching_the_model(tmp_path: Path) -> None:
    model, tokenizer = worker.tiny_setup()
    cfg = SFTConfig(batch_size=4)
    train_sft(
        cfg, model, tokenizer, worker.addition_pairs(8), run=_run(lr=1e-2, max_steps=2), run_dir=tmp_path
    )
    fresh, _ = worker.tiny_setup()
    before = {k: v.clone() for k, v in fresh.state_dict().items()}
    with pytest.raises(ConfigError, match="already trained 2 of 2 steps; raise total steps to continue"):
        train_sft(
            cfg,
            fresh,
            tokenizer,
            worker.addition_pairs(8),
            run=_run(lr=1e-2, max_steps=2),
            run_dir=RunDir.open(tmp_path),
        )
    assert all(torch.equal(before[k], v) for k, v in fresh.state_dict().items())
    result = train_sft(
        cfg, fresh, tokenizer, worker.addition_pairs(8), run=_run(lr=1e-2, max_steps=3), run_dir=tmp_path
    )
    assert result.resumed_from == 2 and result.steps == 3 and len(result.history) == 1


def test_pairs_from_an_env_use_its_prompt_and_verify_as_correct() -> None:
    from reasongym.envs.core import ReasoningEnv
    from reasongym.envs.problem import Problem
    from reasongym.envs.sources import DatasetSource

    rows = [
        Problem("What is 6 times 7?", "42", "integer", id="p0", solution="6 times 7 is 42."),
        Problem("What is 2 plus 2?", "4", "integer", id="p1"),
        Problem("What is 9 minus 3?", "6", "integer", id="p2", solution="Take 3 away from 9."),
    ]
    env = ReasoningEnv(DatasetSource.from_problems("demo", "integer", {"train": rows}))
    pairs = sft_pairs_from_env(env, 3)
    assert [prompt for prompt, _ in pairs] == [env.prompt(problem) for problem in rows]
    assert all(
        env.score(problem, completion).correct for problem, (_, completion) in zip(rows, pairs, strict=True)
    )
    assert pairs[0][1] == "6 times 7 is 42."  # a solution that already verifies is used as it is
    assert pairs[2][1].startswith("Take 3 away from 9.\n")  # the solution is kept, the answer line added
