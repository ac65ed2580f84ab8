"""Issue 51, items 4 and 11: what a hostile OpenEnv server can make the ``openenv://`` client do. Every field of
an answer is checked (a one-line ``ServerError`` naming the field and the value, never a reward that is not a
number), and ``timeout_s`` bounds a whole call, whatever the server does."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("websockets", reason="the openenv extra is not installed")

from reasongym.envs.remote import RemoteEnv, openenv_reward  # noqa: E402
from reasongym.errors import ServerError  # noqa: E402
from tests.envs.hostile_ws import GOOD_RESET, ping_only_server, scripted_server, step_reply  # noqa: E402

HUGE = "1" + "0" * 400  # 10^400: a JSON number no float holds


def _reset_then(step: str):
    return lambda message: GOOD_RESET if message["type"] == "reset" else step


# ---------------------------------------------------------------------------------------------- item 4

BAD_STEPS = {
    "NaN reward": (
        step_reply().replace('"reward": 1.0', '"reward": NaN'),
        r"reward must be a finite number .* nan",
    ),
    "Infinity reward": (
        step_reply().replace('"reward": 1.0', '"reward": Infinity'),
        r"reward must be a finite number .* inf",
    ),
    "text reward": (step_reply(reward="abc"), r"reward must be a finite number .* 'abc'"),
    "list reward": (step_reply(reward=[1]), r"reward must be a finite number .* \[1\]"),
    "object reward": (step_reply(reward={}), r"reward must be a finite number .* \{\}"),
    "10^400 reward": (
        step_reply().replace('"reward": 1.0', f'"reward": {HUGE}'),
        r"reward must be a finite number .* 1000000",
    ),
    "true reward": (step_reply(reward=True), r"reward must be a finite number .* True"),
    "list observation": (step_reply(observation=[1, 2]), r"observation must be a JSON object, got \[1, 2\]"),
    "null observation": (step_reply(observation=None), r"observation must be a JSON object, got None"),
    "text done": (step_reply(done="false"), r"done must be true or false, got 'false'"),
    "text truncated": (
        step_reply(observation={"text": "", "truncated": "no"}),
        r"observation.truncated must be true or false, got 'no'",
    ),
    "number text": (step_reply(observation={"text": 7}), r"observation.text must be a string, got 7"),
    "list info": (
        step_reply(observation={"text": "", "info": [1]}),
        r"observation.info must be a JSON object",
    ),
}


@pytest.mark.parametrize("name", list(BAD_STEPS))
def test_every_field_of_a_step_answer_is_checked(name: str) -> None:
    reply, message = BAD_STEPS[name]
    with scripted_server(_reset_then(reply)) as address:
        env = RemoteEnv(address, timeout_s=10)
        env.reset(seed=0)
        with pytest.raises(ServerError, match=message) as caught:
            env.step("\\boxed{2}")
        env.close()
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400
    assert "OpenEnv server http://127.0.0.1:" in str(caught.value)


def test_a_reset_answer_is_checked_too() -> None:
    with scripted_server(lambda message: step_reply(observation=None)) as address:
        env = RemoteEnv(address, timeout_s=10)
        with pytest.raises(ServerError, match=r"answered reset: observation must be a JSON object, got None"):
            env.reset(seed=0)
        env.close()


def test_trls_reward_function_never_passes_on_a_reward_that_is_not_a_number() -> None:
    nan_step = step_reply().replace('"reward": 1.0', '"reward": NaN')
    with scripted_server(_reset_then(nan_step)) as address:
        reward = openenv_reward(address, timeout_s=10)
        with pytest.raises(ServerError, match="reward must be a finite number"):
            reward(["q"], ["\\boxed{2}"], index=[0], split=["test"])


def test_a_well_formed_answer_still_plays() -> None:
    with scripted_server(_reset_then(step_reply(reward=2))) as address:
        env = RemoteEnv(address, timeout_s=10)
        assert env.reset(seed=0) == ("What is 1 + 1?", {"index": 0, "split": "test"})
        assert env.step("\\boxed{2}") == ("", 2.0, True, False, {"correct": True})
        env.close()


# ---------------------------------------------------------------------------------------------- item 11


def test_a_ping_only_server_fails_within_the_timeout_of_the_whole_call() -> None:
    """The server answers pings and nothing else (not even the close): before, 5 s took 10 to 23 s."""
    with ping_only_server() as address:
        env = RemoteEnv(address, timeout_s=3)
        started = time.monotonic()
        with pytest.raises(ServerError, match=r"did not answer reset within 3 s") as caught:
            env.reset(seed=0)
        took = time.monotonic() - started
        env.close()
        closed = time.monotonic() - started
    assert "\n" not in str(caught.value)
    assert took < 3 + 2.5, took  # the timeout, plus the scheduling slack of a loaded machine
    assert closed - took < 2.5  # dropping the dead connection waits for no closing handshake


def test_a_server_that_answers_each_request_twice_is_refused_not_read_one_answer_late() -> None:
    """The second answer would be read as the answer to the next request (a step graded as a reset)."""
    with scripted_server(
        lambda message: [GOOD_RESET, step_reply()] if message["type"] == "reset" else step_reply(reward=0.0)
    ) as address:
        env = RemoteEnv(address, timeout_s=10)
        env.reset(seed=0)
        time.sleep(0.5)  # the extra answer arrives
        with pytest.raises(ServerError, match="sent a message nobody asked for"):
            env.step("wrong")
        env.close()


def test_an_error_answer_is_one_line_and_short() -> None:
    error = json.dumps(
        {"type": "error", "data": {"message": "boom\n" + "x" * 5000, "code": "EXECUTION_ERROR"}}
    )
    with scripted_server(lambda message: error) as address:
        env = RemoteEnv(address, timeout_s=10)
        with pytest.raises(ServerError, match=r"refused reset: boom \(code EXECUTION_ERROR\)") as caught:
            env.reset(seed=0)
        env.close()
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400


def test_an_answer_sent_in_slow_fragments_is_timed_out_as_a_whole() -> None:
    """Probe: each fragment arrives in time (a reader's timeout would keep waiting), the answer does not."""
    import threading
    from collections.abc import Iterator

    from websockets.exceptions import ConnectionClosed
    from websockets.sync.server import ServerConnection, serve

    def fragments(body: str) -> Iterator[str]:
        for i in range(0, len(body), 3):
            time.sleep(0.5)
            yield body[i : i + 3]

    def handler(connection: ServerConnection) -> None:
        for raw in connection:
            if json.loads(raw)["type"] == "reset":
                connection.send(GOOD_RESET)
                continue
            try:
                connection.send(fragments(step_reply()))
            except ConnectionClosed:  # the client gave up and left
                return

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env = RemoteEnv(f"openenv://127.0.0.1:{server.socket.getsockname()[1]}", timeout_s=2)
        env.reset(seed=0)
        started = time.monotonic()
        with pytest.raises(ServerError, match="did not answer step within 2 s"):
            env.step("x")
        assert time.monotonic() - started < 2 + 2.5
        env.close()
        server.shutdown()
