"""The served (OpenAI-compatible) client: Ctrl-C sends no queued request and leaves a working client."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from tests.cli.running import cli_env


@pytest.mark.slow  # interrupts a client process against a fake server
def test_ctrl_c_sends_no_queued_request_and_leaves_a_working_client() -> None:
    from benchmarks.harness.fake_server import Reply, fake_server

    child = (  # six prompts, two in flight; Ctrl-C; then one more call on the same generator
        "import signal, sys, time; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from reasongym.generation import SamplingParams\n"
        "from reasongym.generation.served import OpenAIGenerator, ServedModelConfig\n"
        "params = SamplingParams(n=1, max_new_tokens=4, temperature=1.0, seed=0)\n"
        "generator = OpenAIGenerator(ServedModelConfig(model='m', base_url=sys.argv[1], max_concurrency=2))\n"
        "try:\n    generator.generate([f'p{i}' for i in range(6)], params)\n"
        "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n"
        "time.sleep(1)\nprint(len(generator.generate(['again'], params)), flush=True)\n"
    )
    with fake_server([Reply(delay=60)] * 2) as server:
        process = subprocess.Popen(
            [sys.executable, "-c", child, server.base_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)  # not the 60 s the requests in flight would take
    assert out.split() == ["interrupted", "1"], err
    # the four queued requests were never sent; the call after Ctrl-C got a fresh connection pool
    assert [request["messages"][0]["content"] for request in server.requests][2:] == ["again"]
