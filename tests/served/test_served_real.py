"""Served evaluation against a real server (``transformers serve`` on CPU): records, sampling, a kill, SmolLM2."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.harness.openai_server import (
    Server,
    running_server,
    save_tiny_model,
    smollm2_folder,
    transformers_cli,
)
from reasongym.cli import main
from reasongym.evaluation import evaluate, load_records
from reasongym.generation import OpenAIGenerator, RequestCounts, ServedModelConfig
from reasongym.generation import served as served_module

pytest.importorskip("openai", reason="served models need the openai package (the serve extra)")
ENV = "reasongym/Arithmetic-v0"
pytestmark = pytest.mark.skipif(transformers_cli() is None, reason="`transformers serve` is not installed")


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def tiny_server(tiny_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tiny_folder, tmp_path_factory.mktemp("logs") / "tiny.log") as server:
        yield server


def _served(server: Server, **settings: Any) -> OpenAIGenerator:
    return OpenAIGenerator(ServedModelConfig(model=server.model, base_url=server.base_url, **settings))


def _evaluate(model: Any, out: Path, **options: Any) -> list[dict[str, Any]]:
    options = {
        "n": 2,
        "num_problems": 3,
        "max_new_tokens": 16,
        "progress": False,
        "verbose": False,
        **options,
    }
    evaluate(model, ENV, out_path=out, **options)
    return load_records(out)


def test_served_records_equal_the_local_models(
    tiny_server: Server, tiny_folder: Path, tmp_path: Path
) -> None:
    # Greedy, and one prompt per batch on the local side (no padding): the same model gives the same text.
    local = _evaluate(str(tiny_folder), tmp_path / "local.jsonl", temperature=0, batch_size=1, device="cpu")
    chat = _evaluate(_served(tiny_server), tmp_path / "chat.jsonl", temperature=0)
    text = _evaluate(_served(tiny_server, endpoint="completions"), tmp_path / "text.jsonl", temperature=0)
    assert _without_settings(chat) == _without_settings(local)
    assert _without_settings(text) == _without_settings(local)
    assert [len(r["completions"]) for r in local] == [2, 2, 2]
    assert {tuple(r["finish_reasons"]) for r in local} == {("length", "length")}


def test_a_server_that_ignores_n_gets_one_request_per_sample(tiny_server: Server, tmp_path: Path) -> None:
    generator = _served(tiny_server, max_concurrency=4)
    records = _evaluate(generator, tmp_path / "sampled.jsonl", n=3, temperature=1.0)
    # The first request per problem asks n=3 and gets 1 choice; the 2 missing come from n=1 requests.
    assert generator.counts == RequestCounts(requests=9)
    assert [len(r["completions"]) for r in records] == [3, 3, 3]
    assert all(len(set(r["completions"])) > 1 for r in records)  # each sample has its own seed


def _kill_when(path: Path, lines: int, server: Server, stop: threading.Event) -> None:
    while not stop.is_set():
        if path.exists() and path.read_text(encoding="utf-8").count("\n") >= lines:
            os.kill(server.process.pid, signal.SIGKILL)
            return
        time.sleep(0.01)


def test_a_killed_server_stops_the_command_and_the_next_run_resumes(
    tiny_server: Server,
    tiny_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The command's retries (4 tries) ms apart, to keep the failing run short.
    fast = lambda **settings: ServedModelConfig(**{"retry_backoff": 0.01, **settings})  # noqa: E731
    monkeypatch.setattr(served_module, "ServedModelConfig", fast)
    out = tmp_path / "killed.jsonl"
    argv = [ENV, "--num-problems", "12", "--n", "2", "--max-new-tokens", "24", "--batch-size", "1"]
    argv += ["--temperature", "1.0", "--out", str(out), "--no-progress"]
    with running_server(tiny_folder, tmp_path / "victim.log") as victim:
        stop = threading.Event()
        killer = threading.Thread(target=_kill_when, args=(out, 2, victim, stop))
        killer.start()
        code = main(["eval", "--base-url", victim.base_url, "--model", victim.model, *argv])
        stop.set()
        killer.join()
    assert code == 1
    error = capsys.readouterr().err
    assert error.startswith(
        f"reasongym: error: POST {victim.base_url}/chat/completions failed after 4 attempts: "
    )
    assert "is the server running?" in error and error.count("\n") == 1
    before = load_records(out)
    assert 2 <= len(before) < 12 and [r["index"] for r in before] == list(range(len(before)))

    sent: list[int] = []
    generate = OpenAIGenerator.generate
    monkeypatch.setattr(
        OpenAIGenerator, "generate", lambda self, p, s: sent.append(len(p)) or generate(self, p, s)
    )
    assert main(["eval", "--base-url", tiny_server.base_url, "--model", tiny_server.model, *argv]) == 0
    after = load_records(out)
    assert [r["index"] for r in after] == list(range(12))  # none lost, none twice
    assert after[: len(before)] == before  # finished problems kept as they were
    assert sum(sent) == 12 - len(before)  # and not sampled again


def test_the_real_smollm2_through_the_chat_endpoint(
    smollm2_gguf: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = smollm2_folder(smollm2_gguf)
    options = {"n": 1, "num_problems": 2, "max_new_tokens": 32, "temperature": 0}
    local = _evaluate(str(folder), tmp_path / "local.jsonl", batch_size=1, device="cpu", **options)
    with running_server(folder, tmp_path_factory.mktemp("logs") / "smollm2.log") as server:
        # The server applies SmolLM2's own chat template; the local path applies it through format_prompt.
        served = _evaluate(_served(server), tmp_path / "served.jsonl", **options)
    assert _without_settings(served) == _without_settings(local)
    assert all(r["completions"][0].strip() for r in served)


def _without_settings(records: list[dict]) -> list[dict]:
    """Records without the settings that name the model (a folder locally, a name on the server)."""
    return [{key: value for key, value in record.items() if key != "settings"} for record in records]


def test_a_server_that_does_not_come_up_in_time_fails_the_fixture_instead_of_hanging(tmp_path: Path) -> None:
    with (
        pytest.raises(RuntimeError) as info,
        running_server(tmp_path / "no-model", tmp_path / "s.log", startup_timeout=0.5),
    ):
        pass
    assert "/health within 0.5 s:" in str(info.value)  # then the end of its log


def test_star_draws_its_rationales_from_a_served_model(tiny_server: Server, tmp_path: Path) -> None:
    """`train star --rationale-base-url`: the served model writes the rationales, the local policy learns."""
    from reasongym.cli import main

    args = [
        "train",
        "star",
        "--model",
        "tiny",
        "--env",
        "reasongym/Arithmetic-v0",
        "--output-dir",
        str(tmp_path),
        "--rationale-base-url",
        tiny_server.base_url,
        "--rationale-model",
        tiny_server.model,
        "--max-steps",
        "1",
        "--num-train-problems",
        "3",
        "--eval-problems",
        "2",
        "--max-new-tokens",
        "8",
        "--sft-steps",
        "1",
        "--no-progress-bar",
    ]
    assert main(args) == 0
    (run,) = (path for path in tmp_path.iterdir() if path.name != "latest")
    kept = run / "iteration-001" / "kept.jsonl"
    assert kept.is_file()  # the iteration ran on the served rationales (a random model: few or none kept)
    log = tiny_server.log.read_text(encoding="utf-8", errors="replace")
    assert log.count("/v1/chat/completions") >= 3  # one request per training problem at least
