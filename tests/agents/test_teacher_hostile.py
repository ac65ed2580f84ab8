"""Issue 51, item 5: a served teacher whose log-probs cannot be log-probs (NaN, +50), and a distillation run whose
every step was skipped. The teacher is a fault-injecting server that answers vLLM's ``prompt_logprobs`` shape."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from benchmarks.harness.fake_server import fake_server
from reasongym.agents.distill import DistillConfig, train_distill
from reasongym.agents.teacher import ServedTeacher
from reasongym.errors import ServerError
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.generation.served import OpenAIGenerator, ServedModelConfig
from reasongym.rollouts.batch import collect_rollouts

ENV = "reasongym/Arithmetic-v0"
REPO = Path(__file__).resolve().parents[2]


def prompt_logprobs(value: float, only_last: bool = False) -> Any:
    """A vLLM-shaped scorer: every token gets log-prob ``value`` (with ``only_last``: the last token of each
    sequence, a completion token; the others -1.0)."""

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        ids = request["prompt"]
        entries = [None] + [
            {str(token): {"logprob": value if not only_last or j == len(ids) - 1 else -1.0, "rank": 1}}
            for j, token in enumerate(ids[1:], start=1)
        ]
        choice = {"index": 0, "text": "x", "finish_reason": "length", "prompt_logprobs": entries}
        return {"id": "x", "object": "text_completion", "created": 0, "model": "m", "choices": [choice]}

    return answer


def _batch(tiny: Any) -> tuple[Any, Any]:
    model, tokenizer = tiny()
    params = SamplingParams(max_new_tokens=10, temperature=1.0, seed=0, n=2)
    return collect_rollouts(ENV, HFGenerator(model, tokenizer), tokenizer, [0, 1], params=params), (
        model,
        tokenizer,
    )


@pytest.mark.parametrize(
    ("value", "only_last", "shown"),
    [
        (math.nan, False, "nan"),
        (math.inf, True, "inf"),
        (-math.inf, True, "-inf"),
        (50.0, True, "50.0"),
        (0.5, False, "0.5"),
        (-1e30, True, "-1e\\+30"),  # probe: finite, <= 0, and no softmax of a model's logits
    ],
)
def test_a_log_prob_that_cannot_be_one_is_a_server_error(
    tiny: Any, value: float, only_last: bool, shown: str
) -> None:
    batch, _ = _batch(tiny)
    with fake_server(answer=prompt_logprobs(value, only_last)) as server:
        settings = ServedModelConfig(model="m", base_url=server.base_url, endpoint="completions")
        with pytest.raises(
            ServerError, match=rf"log-prob {shown} .* a log-prob is finite and <= 0 \(and >= -10000\)"
        ) as caught:
            ServedTeacher(OpenAIGenerator(settings)).sampled(batch, None, 1.0)
    assert "\n" not in str(caught.value) and server.base_url in str(caught.value)


@pytest.mark.parametrize("value", [-0.25, -9999.0, 1e-5])
def test_honest_log_probs_pass(tiny: Any, value: float) -> None:
    """-9999 is vLLM's -inf; 1e-5 above 0 is rounding, read as 0."""
    batch, _ = _batch(tiny)
    with fake_server(answer=prompt_logprobs(value)) as server:
        settings = ServedModelConfig(model="m", base_url=server.base_url, endpoint="completions")
        logp = ServedTeacher(OpenAIGenerator(settings)).sampled(batch, None, 1.0)
    assert torch.equal(logp, min(value, 0.0) * batch.completion_mask.float())


def test_the_command_line_run_on_a_nan_teacher_fails_in_one_line(tmp_path: Path) -> None:
    """Before: "distill: 2 of 2 steps", exit 0, every step skipped."""
    with fake_server(answer=prompt_logprobs(math.nan)) as server:
        command = [sys.executable, "-m", "reasongym", "train", "distill", "--env", ENV, "--model", "tiny"]
        command += [
            "--teacher",
            "m",
            "--teacher-base-url",
            server.base_url,
            "--divergence",
            "sampled_reverse_kl",
        ]
        command += ["--max-steps", "2", "--num-prompts", "2", "--group-size", "2", "--max-new-tokens", "8"]
        command += ["--no-progress-bar", "--eval-problems", "2", "--output-dir", str(tmp_path)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("reasongym: error: ") and "log-prob nan" in last, done.stderr[-2000:]


def test_a_run_whose_every_step_was_skipped_says_so(tiny: Any, tmp_path: Path) -> None:
    from reasongym.agents.algorithms import preset_configs

    configs = preset_configs(
        "tiny", "distill", max_steps=2, num_prompts=2, eval_problems=2, progress_bar=False
    )
    student, tokenizer = tiny()
    teacher, _ = tiny(seed=1)
    with torch.no_grad():
        for p in teacher.parameters():
            p.fill_(math.nan)  # a teacher whose every log-prob is NaN: every step's loss is NaN
    with pytest.raises(
        RuntimeError, match=r"every one of the 2 steps this run trained was skipped"
    ) as caught:
        train_distill(
            DistillConfig(),
            student,
            tokenizer,
            ENV,
            teacher=teacher,
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=tmp_path,
        )
    assert "\n" not in str(caught.value)
