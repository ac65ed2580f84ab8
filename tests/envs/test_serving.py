"""``reasongym serve-env``: a real server process on a free loopback port, driven by OpenEnv's own client."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("openenv.core", reason="the openenv extra is not installed")

from openenv.core.generic_client import GenericEnvClient  # noqa: E402

import reasongym  # noqa: E402
from reasongym.envs.serving import ServeConfig  # noqa: E402
from reasongym.errors import ConfigError  # noqa: E402
from tests.envs.openenv_server import serve_env  # noqa: E402

ENV_ID = "reasongym/Arithmetic-v0"


@pytest.fixture(scope="module")
def server():
    """One server for the module (starting one takes seconds); two sessions at most, 64 KiB bodies."""
    with serve_env(ENV_ID, "--max-sessions", "2", "--max-body-bytes", "65536") as (url, process):
        yield url, process


def _post(url: str, payload: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=payload, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _local(seed: int, options: dict) -> tuple[str, dict]:
    return reasongym.make(ENV_ID).reset(seed=seed, options=options)


def test_openenv_client_plays_an_episode_with_seed_and_options(server) -> None:
    url, _ = server
    prompt, info = _local(7, {"index": 11})
    with GenericEnvClient(base_url=url).sync() as client:
        result = client.reset(seed=7, options={"index": 11})
        assert result.observation["text"] == prompt
        assert result.observation["info"]["problem_id"] == info["problem_id"]
        assert result.done is False
        gold = reasongym.make(ENV_ID).unwrapped.problem_at(11, split=info["split"]).answer
        result = client.step({"completion": f"The final answer is \\boxed{{{gold}}}."})
        assert (result.reward, result.done, result.observation["info"]["correct"]) == (1.0, True, True)
        client.reset(seed=7, options={"index": 11})
        result = client.step({"completion": f"The final answer is \\boxed{{{gold}1}}."})
        assert (result.reward, result.observation["info"]["outcome"]) == (0.0, "wrong")


def test_the_same_seed_gives_the_same_problem_as_in_process(server) -> None:
    url, _ = server
    with GenericEnvClient(base_url=url).sync() as client:
        assert client.reset(seed=123).observation["text"] == _local(123, {})[0]


def test_sessions_are_concurrent_and_independent(server) -> None:
    url, _ = server

    def play(index: int) -> tuple[str, float]:
        with GenericEnvClient(base_url=url).sync() as client:
            info = client.reset(seed=0, options={"index": index}).observation["info"]
            gold = reasongym.make(ENV_ID).unwrapped.problem_at(index, split=info["split"]).answer
            answer = gold if index % 2 == 0 else f"{gold}9"
            result = client.step({"completion": f"\\boxed{{{answer}}}"})
            return info["problem_id"], result.reward

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(play, [2, 3]))
    assert [reward for _, reward in results] == [1.0, 0.0]
    assert results[0][0] != results[1][0]


def test_a_session_past_the_limit_is_refused(server) -> None:
    url, _ = server
    with GenericEnvClient(base_url=url).sync() as first:
        first.reset(seed=0)
        with GenericEnvClient(base_url=url).sync() as second:
            second.reset(seed=0)
            # openenv-core sends CAPACITY_REACHED and closes at once: the client sees the message, or (when the
            # close wins the race with its first send) the normal close (code 1000), depending on timing.
            with (
                GenericEnvClient(base_url=url).sync() as third,
                pytest.raises(Exception, match=r"CAPACITY_REACHED|received 1000 \(OK\)"),
            ):
                third.reset(seed=0)
        # the refusal was the limit, not a broken server: with the second session gone, a new one is served
        _served_within(url, seconds=10.0)  # the server frees the slot when it sees the close: give it time
        first.reset(seed=1)


def _served_within(url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with GenericEnvClient(base_url=url).sync() as client:
                client.reset(seed=0)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_bad_action_or_option_is_a_clear_error(server) -> None:
    url, _ = server
    with GenericEnvClient(base_url=url).sync() as client:
        client.reset(seed=0)
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"text": "42"})  # the field is "completion"
        with pytest.raises(RuntimeError, match="unknown reset option 'indx'.*did you mean 'index'"):
            client.reset(seed=0, options={"indx": 1})
    status, body = _post(f"{url}/step", json.dumps({"action": {"answer": "4"}}).encode())
    assert status == 422
    assert {error["loc"][-1] for error in body["detail"]} == {"completion", "answer"}


def test_http_step_is_stateless_and_takes_the_reset_with_the_action(server) -> None:
    url, _ = server
    status, body = _post(f"{url}/step", json.dumps({"action": {"completion": "4"}}).encode())
    assert status == 400
    assert "no open episode" in body["detail"]
    info = _local(5, {"index": 4})[1]
    gold = reasongym.make(ENV_ID).unwrapped.problem_at(4, split=info["split"]).answer
    action = {"completion": f"\\boxed{{{gold}}}", "seed": 5, "options": {"index": 4}}
    status, body = _post(f"{url}/step", json.dumps({"action": action}).encode())
    assert (status, body["reward"], body["observation"]["info"]["problem_id"]) == (
        200,
        1.0,
        info["problem_id"],
    )


def test_a_body_over_the_limit_is_refused_unread(server) -> None:
    url, _ = server
    action = {"action": {"completion": "7" * 70_000, "seed": 0}}  # 70 kB > the 64 KiB limit
    status, body = _post(f"{url}/step", json.dumps(action).encode())
    assert status == 413
    assert "over 65536 bytes" in body["detail"]


@pytest.mark.slow  # a server of its own (the module's server serves the quick tests)
def test_the_server_stops_on_sigterm() -> None:
    with serve_env(ENV_ID) as (_, process):
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_serve_config_refuses_bad_limits() -> None:
    with pytest.raises(ConfigError, match=r"ServeConfig.port must be an int from 1 to 65535, got 70000"):
        ServeConfig(ENV_ID, port=70000)
    with pytest.raises(ConfigError, match=r"ServeConfig.max_sessions .* got 0"):
        ServeConfig(ENV_ID, max_sessions=0)
