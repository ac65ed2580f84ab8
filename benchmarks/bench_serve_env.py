"""Episodes per second of an environment served by ``reasongym serve-env`` over loopback, against in-process.

Three ways to play the same episodes (``reset(seed=i)``, then a step with the gold answer written as the
prompt asks), on one environment id:
- ``in_process``: ``env.reset`` + ``env.step`` on ``reasongym.make(ENV_ID)``;
- ``websocket``: the same through ``reasongym.make("openenv://127.0.0.1:PORT")`` (one OpenEnv WebSocket
  session, the way a trainer would hold one per rollout worker);
- ``http``: one stateless ``POST /step`` per episode carrying the reset's seed (no session).
The server is a real ``reasongym serve-env`` process on a free loopback port, stopped by pid at the end.
Per-step latency is the median and 95th percentile of the step call alone (the reset not counted).
Last line: one JSON object.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_serve_env`` (``--episodes 200`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import reasongym  # noqa: E402
from reasongym.envs.core import format_final_answer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="reasongym/Arithmetic-v0", help="environment id")
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per way of playing")
    return parser.parse_args()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(env_id: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    command = [sys.executable, "-m", "reasongym", "serve-env", env_id, "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1):
                return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("serve-env did not start within 120 s")


def _play(env: Any, episodes: int) -> dict[str, float]:
    """Episodes per second and step latency of ``env`` (a gymnasium env, local or remote)."""
    steps: list[float] = []
    start = time.perf_counter()
    for seed in range(episodes):
        _, info = env.reset(seed=seed, options={"include_answer": True})
        answer = format_final_answer(info["answer_type"], info["answer"])
        before = time.perf_counter()
        reward = env.step(answer)[1]
        steps.append(time.perf_counter() - before)
        assert reward == 1.0, (seed, info)
    return _summary(episodes, time.perf_counter() - start, steps)


def _play_http(url: str, env_id: str, episodes: int) -> dict[str, float]:
    """One stateless POST /step per episode, with the reset's seed in the action."""
    local = reasongym.make(env_id)
    answers = []
    for seed in range(episodes):  # the gold answers, worked out before the clock starts
        _, info = local.reset(seed=seed, options={"include_answer": True})
        answers.append(format_final_answer(info["answer_type"], info["answer"]))
    steps: list[float] = []
    start = time.perf_counter()
    for seed, answer in enumerate(answers):
        body = json.dumps({"action": {"completion": answer, "seed": seed}}).encode()
        request = urllib.request.Request(
            f"{url}/step", data=body, headers={"content-type": "application/json"}
        )
        before = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as response:
            reward = json.loads(response.read())["reward"]
        steps.append(time.perf_counter() - before)
        assert reward == 1.0, seed
    return _summary(episodes, time.perf_counter() - start, steps)


def _summary(episodes: int, seconds: float, steps: list[float]) -> dict[str, float]:
    ordered = sorted(steps)
    return {
        "episodes_per_s": round(episodes / seconds, 1),
        "step_ms_median": round(1000 * statistics.median(ordered), 3),
        "step_ms_p95": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 3),
    }


def _timed(name: str, run: Callable[[], dict[str, float]]) -> dict[str, float]:
    result = run()
    print(
        f"{name:>10}: {result['episodes_per_s']:>8.1f} episodes/s, step median {result['step_ms_median']} ms, "
        f"p95 {result['step_ms_p95']} ms",
        flush=True,
    )
    return result


def main() -> None:
    args = _parse_args()
    results: dict[str, Any] = {"env": args.env, "episodes": args.episodes}
    results["in_process"] = _timed("in-process", lambda: _play(reasongym.make(args.env), args.episodes))
    process, url = _start_server(args.env)
    try:
        remote = reasongym.make(f"openenv://{url.removeprefix('http://')}")
        _play(remote, 20)  # warm the session and the server's first-call paths
        results["websocket"] = _timed("websocket", lambda: _play(remote, args.episodes))
        remote.close()
        results["http"] = _timed("http", lambda: _play_http(url, args.env, args.episodes))
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    results["websocket_vs_in_process"] = round(
        results["websocket"]["episodes_per_s"] / results["in_process"]["episodes_per_s"], 4
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
