"""OpenAIGenerator against a fault injector: retries and their counts, timeouts, 4xx, n, tokens, fields."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.harness.fake_server import Reply, chat_body, completion_body, fake_server
from reasongym.cli import main
from reasongym.errors import ConfigError, ServerError
from reasongym.evaluation import load_records
from reasongym.generation import Completion, OpenAIGenerator, RequestCounts, SamplingParams, ServedModelConfig

pytest.importorskip("openai", reason="served models need the openai package (the serve extra)")
ENV = "reasongym/Arithmetic-v0"


def _generator(base_url: str, **settings: Any) -> OpenAIGenerator:
    return OpenAIGenerator(ServedModelConfig(model="m", base_url=base_url, retry_backoff=0.01, **settings))


# ------------------------------------------------------------------------------------------------ retries


def test_500_twice_then_200_is_retried_and_counted() -> None:
    boom = Reply(500, {"error": {"message": "boom"}})
    with fake_server([boom, boom]) as server:
        generator = _generator(server.base_url)
        out = generator.generate(["q"], SamplingParams())
    assert [c.text for c in out[0]] == ["seed=None choice=0"]
    assert generator.counts == RequestCounts(requests=3, retries=2, server_errors=2)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            [Reply(429, {"error": {"message": "slow down"}}, headers={"retry-after": "0"})],
            RequestCounts(requests=2, retries=1, rate_limited=1),
        ),
        ([Reply(drop=True)], RequestCounts(requests=2, retries=1, connection_errors=1)),
        (
            [Reply(503, "overloaded"), Reply(drop=True)],
            RequestCounts(requests=3, retries=2, server_errors=1, connection_errors=1),
        ),
    ],
)
def test_retryable_failures_are_retried_and_counted_by_kind(
    script: list[Reply], expected: RequestCounts
) -> None:
    with fake_server(script) as server:
        generator = _generator(server.base_url)
        out = generator.generate(["q"], SamplingParams())
    assert [c.text for c in out[0]] == ["seed=None choice=0"]
    assert generator.counts == expected


def test_retries_run_out_naming_the_last_failure() -> None:
    with fake_server([Reply(500, {"error": {"message": "boom"}})] * 3) as server:
        generator = _generator(server.base_url, max_retries=2)
        with pytest.raises(ServerError) as info:
            generator.generate(["q"], SamplingParams())
    assert str(info.value) == (
        f"POST {server.base_url}/chat/completions failed after 3 attempts: 500 Internal Server Error: boom"
    )
    assert generator.counts == RequestCounts(requests=3, retries=2, server_errors=3)


def test_a_slow_server_times_out_and_says_so() -> None:
    with fake_server([Reply(delay=1.5)]) as server:
        generator = _generator(server.base_url, request_timeout=0.2, max_retries=0)
        with pytest.raises(ServerError) as info:
            generator.generate(["q"], SamplingParams())
    assert str(info.value) == (
        f"POST {server.base_url}/chat/completions failed after 1 attempt: timed out after 0.2 s (request_timeout)"
    )
    assert generator.counts == RequestCounts(requests=1, timeouts=1)


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (
            401,
            {"error": {"message": "Invalid API key", "type": "auth"}},
            "401 Unauthorized to POST {url}: Invalid API key",
        ),
        (
            422,
            {"detail": "Unexpected fields in the request: {'top_k'}"},
            "422 Unprocessable Entity to POST {url}: Unexpected fields in the request: {'top_k'}",
        ),
        (
            400,
            {"error": {"message": "prompt is too long:\n 9000 tokens > 4096"}},
            "400 Bad Request to POST {url}: prompt is too long: 9000 tokens > 4096",
        ),
        (404, "no such route", "404 Not Found to POST {url}: no such route"),
    ],
)
def test_a_4xx_fails_at_once_with_one_line(status: int, body: Any, message: str) -> None:
    with fake_server([Reply(status, body)]) as server:
        generator = _generator(server.base_url)
        with pytest.raises(ServerError) as info:
            generator.generate(["q"], SamplingParams())
    url = f"{server.base_url}/chat/completions"
    assert str(info.value) == "server answered " + message.replace("{url}", url)
    assert generator.counts == RequestCounts(requests=1)


def test_the_first_failure_cancels_the_requests_still_queued() -> None:
    with fake_server([Reply(401, {"error": {"message": "no"}})]) as server:
        generator = _generator(server.base_url, max_concurrency=1)
        with pytest.raises(ServerError, match="401 Unauthorized"):
            generator.generate(["a", "b", "c", "d"], SamplingParams())
    assert generator.counts.requests == 1


# ------------------------------------------------------------------------------------------------ n samples


def test_the_servers_n_is_used_when_it_honours_it() -> None:
    with fake_server() as server:
        out = _generator(server.base_url).generate(["a", "b"], SamplingParams(n=3, seed=10))
    assert sorted((r["n"], r["seed"]) for r in server.requests) == [(3, 10), (3, 13)]
    assert [c.text for c in out[1]] == ["seed=13 choice=0", "seed=13 choice=1", "seed=13 choice=2"]


def test_samples_a_server_leaves_out_come_from_parallel_requests_with_their_own_seeds() -> None:
    ignores_n = Reply(body=chat_body(["first"]))
    with fake_server([ignores_n, ignores_n]) as server:
        generator = _generator(server.base_url)
        out = generator.generate(["a", "b"], SamplingParams(n=3, seed=10))
        assert sorted((r["n"], r["seed"]) for r in server.requests) == [
            (1, 11),
            (1, 12),
            (1, 14),
            (1, 15),
            (3, 10),
            (3, 13),
        ]
        assert [c.text for c in out[0]] == ["first", "seed=11 choice=0", "seed=12 choice=0"]
        assert [c.text for c in out[1]] == ["first", "seed=14 choice=0", "seed=15 choice=0"]
        server.requests.clear()
        generator.generate(["a"], SamplingParams(n=2, seed=0))  # learnt: n=1 requests from the start
        assert sorted((r["n"], r["seed"]) for r in server.requests) == [(1, 0), (1, 1)]


# ------------------------------------------------------------------------------------------------ answers


LOGPROBS_COMPLETIONS = {
    "tokens": ["token_id:5", "token_id:7"],
    "token_logprobs": [-0.5, -1.0],
    "top_logprobs": None,
    "text_offset": [0, 1],
}
LOGPROBS_CHAT = {
    "content": [
        {"token": "token_id:5", "logprob": -0.5, "bytes": None, "top_logprobs": []},
        {"token": "token_id:7", "logprob": -1.0, "bytes": None, "top_logprobs": []},
    ]
}
PLAIN_TOKENS = {
    "tokens": ["a", "b"],
    "token_logprobs": [-0.5, -1.0],
    "top_logprobs": None,
    "text_offset": [0, 1],
}


@pytest.mark.parametrize(
    ("endpoint", "choice_fields", "token_ids", "logprobs"),
    [
        # vLLM with return_tokens_as_token_ids: ids in the token strings
        ("completions", {"logprobs": LOGPROBS_COMPLETIONS}, (5, 7), (-0.5, -1.0)),
        ("chat", {"logprobs": LOGPROBS_CHAT}, (5, 7), (-0.5, -1.0)),
        # vLLM with return_token_ids: a token_ids list beside plain token strings
        ("completions", {"logprobs": PLAIN_TOKENS, "token_ids": [5, 7]}, (5, 7), (-0.5, -1.0)),
        # log-probs without ids, or nothing: text only, never zeros
        ("completions", {"logprobs": PLAIN_TOKENS}, None, None),
        ("completions", {}, None, None),
        ("chat", {"logprobs": None}, None, None),
        # ids without log-probs: text only
        ("completions", {"token_ids": [5, 7]}, None, None),
    ],
)
def test_token_ids_and_logprobs_are_kept_only_when_the_server_gives_both(
    endpoint: str, choice_fields: dict[str, Any], token_ids: Any, logprobs: Any
) -> None:
    make_body = chat_body if endpoint == "chat" else completion_body
    with fake_server([Reply(body=make_body(["ab"], **choice_fields))]) as server:
        generator = _generator(server.base_url, endpoint=endpoint, logprobs=True)
        (completion,) = generator.generate(["q"], SamplingParams())[0]
    assert (completion.token_ids, completion.logprobs, completion.text_only) == (
        token_ids,
        logprobs,
        token_ids is None,
    )
    sent = server.requests[0]
    assert (sent["logprobs"], sent["return_tokens_as_token_ids"]) == (
        (True, True) if endpoint == "chat" else (1, True)
    )


@pytest.mark.parametrize(
    ("server_reason", "stop_reason", "ours", "text"),
    [
        ("stop", None, "stop", "x = 4"),
        ("length", None, "length", "x = 4"),
        ("tool_calls", None, "stop", "x = 4"),
        ("stop", "</answer>", "stop", "x = 4</answer>"),  # vLLM names the stop string it cut off
        ("stop", 128001, "stop", "x = 4"),  # ... or the stop token id (not text)
    ],
)
def test_finish_reasons_map_to_ours_and_a_named_stop_string_is_kept(
    server_reason: str, stop_reason: Any, ours: str, text: str
) -> None:
    with fake_server(
        [Reply(body=completion_body(["x = 4"], server_reason, stop_reason=stop_reason))]
    ) as server:
        generator = _generator(server.base_url, endpoint="completions")
        (completion,) = generator.generate(["q"], SamplingParams(stop=("</answer>",)))[0]
    assert (completion.finish_reason, completion.text) == (ours, text)


def test_an_unknown_finish_reason_is_an_error() -> None:
    with fake_server([Reply(body=chat_body(["x"], "content_filter"))]) as server:
        with pytest.raises(ServerError) as info:
            _generator(server.base_url).generate(["q"], SamplingParams())
    assert str(info.value) == (
        f"POST {server.base_url}/chat/completions (prompt 0, 1 sample) answered 200 with "
        "choices[0].finish_reason='content_filter'; understood: ['eos', 'function_call', 'length', 'stop', "
        "'tool_calls']"
    )


# ------------------------------------------------------------------------------------------------ requests


def test_requests_carry_the_prompt_and_the_sampling_fields() -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "2+2?"}]
    params = SamplingParams(max_new_tokens=7, temperature=0.5, top_p=0.9, stop=("\n\n",))
    with fake_server() as server:
        chat = _generator(server.base_url, max_concurrency=1)  # one at a time: requests in prompt order
        chat.generate(["plain", messages], params)
        _generator(server.base_url, endpoint="completions").generate(["text"], SamplingParams(top_k=20))
    sampling = {"model": "m", "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "stop": ["\n\n"], "n": 1}
    assert server.requests[0] == {**sampling, "messages": [{"role": "user", "content": "plain"}]}
    assert server.requests[1] == {**sampling, "messages": messages}
    # top_k is not OpenAI's: sent (as vLLM's field) only when set; no logprobs fields unless asked
    assert server.requests[2] == {
        "model": "m",
        "max_tokens": 256,
        "temperature": 1.0,
        "top_p": 1.0,
        "n": 1,
        "prompt": "text",
        "top_k": 20,
    }
    assert chat.takes_messages and not _generator(server.base_url, endpoint="completions").takes_messages


def test_the_completions_endpoint_refuses_chat_messages() -> None:
    generator = _generator("http://127.0.0.1:9/v1", endpoint="completions")
    with pytest.raises(ConfigError, match="the completions endpoint takes prompt text, not chat messages"):
        generator.generate([[{"role": "user", "content": "x"}]], SamplingParams())


def test_url_and_key_come_from_the_standard_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_server() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        OpenAIGenerator(ServedModelConfig(model="m")).generate(["q"], SamplingParams())
        monkeypatch.delenv("OPENAI_API_KEY")
        OpenAIGenerator(ServedModelConfig(model="m")).generate(["q"], SamplingParams())
        OpenAIGenerator(ServedModelConfig(model="m", api_key="flag")).generate(["q"], SamplingParams())
    assert [h["authorization"] for h in server.headers] == ["Bearer sk-test", "Bearer EMPTY", "Bearer flag"]
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ConfigError) as info:
        OpenAIGenerator(ServedModelConfig(model="m"))
    assert str(info.value) == "no server given: pass base_url (--base-url URL) or set OPENAI_BASE_URL"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"model": ""}, "model='' is not allowed; expected a non-empty name"),
        ({"endpoint": "chats"}, "endpoint='chats' is not allowed; expected one of ['chat', 'completions']"),
        (
            {"base_url": "localhost:8000"},
            "base_url='localhost:8000' is not allowed; expected an http:// or https:// URL",
        ),
        ({"max_concurrency": 0}, "max_concurrency=0 is not allowed; expected an integer >= 1"),
        ({"request_timeout": 0}, "request_timeout=0 is not allowed; expected seconds > 0"),
        ({"max_retries": -1}, "max_retries=-1 is not allowed; expected an integer >= 0"),
        ({"retry_backoff": -1.0}, "retry_backoff=-1.0 is not allowed; expected seconds >= 0"),
    ],
)
def test_settings_are_validated(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        ServedModelConfig(**{"model": "m", **fields})
    assert str(info.value) == message


def test_a_completion_is_text_only_or_has_one_logprob_per_token() -> None:
    assert Completion("t", None, None, "stop").text_only
    assert not Completion("t", (1, 2), (-0.1, -0.2), "stop").text_only
    with pytest.raises(ConfigError) as info:
        Completion("t", (1, 2), None, "stop")
    assert str(info.value) == (
        "token_ids (2 entries) and logprobs (None) must both be None (a text-only completion) or both be "
        "given with one log-prob per token"
    )
    with pytest.raises(ConfigError, match=r"token_ids \(2 entries\) and logprobs \(1 entries\)"):
        Completion("t", (1, 2), (0.0,), "stop")


# ------------------------------------------------------------------------------------------------ command line


def test_eval_of_a_served_model_writes_the_usual_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "served.jsonl"
    with fake_server() as server:
        code = main(
            [
                "eval",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                ENV,
                "--num-problems",
                "3",
                "--n",
                "2",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
    assert code == 0
    records = load_records(out)
    assert [(r["index"], r["n"], len(r["completions"]), r["finish_reasons"]) for r in records] == [
        (i, 2, 2, ["stop", "stop"]) for i in range(3)
    ]
    assert all(r["messages"][-1]["role"] == "user" for r in server.requests)  # chat endpoint by default
    assert "served: RequestCounts(requests=3, retries=0" in capsys.readouterr().err


def test_eval_stops_at_a_401_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with fake_server([Reply(401, {"error": {"message": "Invalid API key"}})]) as server:
        code = main(
            [
                "eval",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                ENV,
                "--num-problems",
                "2",
                "--max-concurrency",
                "1",
                "--out",
                str(tmp_path / "o.jsonl"),
                "--no-progress",
            ]
        )
    assert code == 1
    assert capsys.readouterr().err == (
        f"reasongym: error: server answered 401 Unauthorized to POST {server.base_url}/chat/completions: Invalid API key\n"
    )
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--base-url", "http://127.0.0.1:9/v1", ENV],
            "--base-url needs --model NAME, the model's name on the server",
        ),
        (
            ["--model", "m", "MODEL", ENV],
            "a served model takes one positional argument: eval --model NAME ENV_ID",
        ),
    ],
)
def test_eval_usage_errors_of_the_served_flags(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # a server and an interrupted process
def test_ctrl_c_stops_a_served_eval_without_waiting_for_the_requests_in_flight(tmp_path: Path) -> None:
    # SIGINT may be ignored where the tests run (a background job); the child restores Python's handler.
    argv = [
        "eval",
        "--base-url",
        "URL",
        "--model",
        "m",
        ENV,
        "--num-problems",
        "4",
        "--out",
        str(tmp_path / "o.jsonl"),
    ]
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from reasongym.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    with fake_server([Reply(delay=60)] * 4) as server:
        argv[2] = server.base_url
        process = subprocess.Popen(
            [sys.executable, "-c", code, *argv, "--no-progress"], stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 4 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)  # until all four requests are in flight
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=30)  # the requests in flight would hold it for 60 s
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail("the command kept running 30 s after Ctrl-C")
    assert len(server.requests) == 4
    assert (process.returncode, err) == (130, "reasongym: interrupted\n")


# ----------------------------------------------------------------- issue 28, items 4 and 5: what a server sends


def _choice(**fields: Any) -> dict[str, Any]:
    return {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop", **fields}


MALFORMED = [
    (
        Reply(raw=b"<html><body>502 Bad Gateway</body></html>", headers={"content-type": "text/html"}),
        "a body that is not JSON (text/html: '<html><body>502 Bad Gateway</body></html>')",
    ),
    (
        Reply(raw=b'{"choices": [{"index": 0, '),
        "invalid JSON (Expecting property name enclosed in double quotes",
    ),
    (Reply(raw=b"\xff\xfe{}"), "invalid JSON (not UTF-8"),
    (Reply(body=[1, 2]), "a JSON list, not an object"),
    (Reply(body={"choices": "abc"}), "'choices' that is a str, not a list"),
    (Reply(body={"object": "chat.completion"}), "no 'choices'"),
    (Reply(body={"choices": [5]}), "choices[0] that is an int, not an object"),
    (Reply(body={"choices": [{"index": 0, "finish_reason": "stop"}]}), "choices[0] without a 'message'"),
    (
        Reply(body={"choices": [_choice(message={"content": [{"type": "text", "text": "x"}]})]}),
        "choices[0].message.content that is a list, not a string",
    ),
    (
        Reply(body={"choices": [_choice(message={"content": 5})]}),
        "choices[0].message.content that is an int, not a string",
    ),
    (
        Reply(body={"choices": [{k: v for k, v in _choice().items() if k != "index"}]}),
        "choices[0] without an 'index'",
    ),
    (Reply(body={"choices": [_choice(index="0")]}), "choices[0].index that is a str ('0'), not an integer"),
    (Reply(body={"choices": [_choice(index=7)]}), "choices[0].index 7 for a request of 1 sample"),
]


@pytest.mark.parametrize(("reply", "problem"), MALFORMED)
def test_a_malformed_answer_is_one_line_naming_the_server_the_request_and_the_problem(
    reply: Reply, problem: str
) -> None:
    with fake_server([reply]) as server:
        generator = _generator(server.base_url)
        with pytest.raises(ServerError) as info:
            generator.generate(["q"], SamplingParams())
    message = str(info.value)
    assert message.startswith(
        f"POST {server.base_url}/chat/completions (prompt 0, 1 sample) answered 200 with "
    ), message
    assert problem in message and "\n" not in message, message
    assert generator.counts == RequestCounts(requests=1)  # a malformed answer is not retried


def test_a_completions_answer_without_text_is_one_line() -> None:
    body = {"choices": [{"index": 0, "text": 5, "finish_reason": "stop"}]}
    with fake_server([Reply(body=body)]) as server:
        with pytest.raises(ServerError, match=r"choices\[0\].text that is an int, not a string"):
            _generator(server.base_url, endpoint="completions").generate(["q"], SamplingParams())


def test_request_timeout_caps_the_whole_request_not_each_read() -> None:
    # Issue 28, item 5: a server that drips its answer (one byte every 20 ms: about 4 s) kept a 0.5 s timeout
    # waiting for all of it, and counted no timeout.
    with fake_server([Reply(drip=0.02)]) as server:
        generator = _generator(server.base_url, request_timeout=0.5, max_retries=0)
        started = time.monotonic()
        with pytest.raises(ServerError, match=r"timed out after 0.5 s \(request_timeout\)"):
            generator.generate(["q"], SamplingParams())
        elapsed = time.monotonic() - started
    assert elapsed < 0.5 + 1.0, elapsed
    assert generator.counts == RequestCounts(requests=1, timeouts=1)


def test_a_dripping_answer_within_the_timeout_is_read_whole() -> None:
    with fake_server([Reply(drip=0.001)]) as server:
        out = _generator(server.base_url, request_timeout=30).generate(["q"], SamplingParams())
    assert [c.text for c in out[0]] == ["seed=None choice=0"]


def test_eval_stops_at_a_malformed_answer_with_one_line_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.jsonl"
    argv = ["eval", "--base-url", "URL", "--model", "m", ENV, "--num-problems", "3", "--batch-size", "1"]
    argv += ["--max-concurrency", "1", "--out", str(out), "--no-progress"]
    html = Reply(raw=b"<html>oops</html>", headers={"content-type": "text/html"})
    with fake_server([Reply(), html]) as server:
        argv[2] = server.base_url
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith(
            f"reasongym: error: POST {server.base_url}/chat/completions (prompt 0, 1 sample)"
        )
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert [r["index"] for r in load_records(out)] == [0]
        assert main(argv) == 0
    assert [r["index"] for r in load_records(out)] == [0, 1, 2]
