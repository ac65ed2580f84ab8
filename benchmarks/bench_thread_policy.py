"""Wall time of a few tiny GRPO steps under each CPU thread policy, beside one busy process.

torch's CPU threads come from OpenMP, whose default lets an idle thread spin (busy-wait) before it sleeps.
On a small machine with one other busy process the spinning threads take the cores the working ones need.
`import reasongym` sets ``OMP_WAIT_POLICY=PASSIVE`` when the user set neither ``OMP_WAIT_POLICY`` nor
``OMP_NUM_THREADS`` (``reasongym._quiet_threads``); this measures what that buys. The same command,
``reasongym train grpo --model tiny`` for ``--steps`` steps, runs once per policy in a fresh process:
- ``spinning``: ``OMP_WAIT_POLICY=ACTIVE``, OpenMP's default behaviour (the opt-out);
- ``reasongym_default``: neither variable set, so reasongym's PASSIVE applies;
- ``one_thread``: ``OMP_NUM_THREADS=1``;
each beside one busy process (a Python loop on one core, started before and stopped after each run), plus
``spinning_quiet`` without it. The ratios divide the spinning time by each other policy's, in one sitting.
Last line: one JSON object.

Run: ``python -m benchmarks.bench_thread_policy`` (``--steps 2`` for a quick look).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

from benchmarks.harness.machine import Snapshot

POLICIES = {
    "spinning": {"OMP_WAIT_POLICY": "ACTIVE"},
    "reasongym_default": {},
    "one_thread": {"OMP_NUM_THREADS": "1"},
}
"""Environment variables set for each policy's run (both variables are removed first)."""


@contextlib.contextmanager
def _busy_neighbour() -> Iterator[None]:
    """One other process keeping one core busy, as another user's job would."""
    neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        neighbour.kill()
        neighbour.wait()


def _train_seconds(policy: dict[str, str], steps: int) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")}
    env.update(policy)
    with tempfile.TemporaryDirectory() as folder:
        command = [
            *(sys.executable, "-m", "reasongym", "train", "grpo", "--model", "tiny"),
            *("--env", "reasongym/Arithmetic-v0", "--max-steps", str(steps), "--eval-problems", "4"),
            *("--no-progress-bar", "--output-dir", folder),
        ]
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps per run")
    args = parser.parse_args()
    measured = Snapshot()
    seconds = {}
    for name, policy in POLICIES.items():
        with _busy_neighbour():
            seconds[name] = _train_seconds(policy, args.steps)
        print(f"{name:>18}: {seconds[name]:6.1f} s (beside one busy process)", flush=True)
    seconds["spinning_quiet"] = _train_seconds(POLICIES["spinning"], args.steps)
    print(f"{'spinning_quiet':>18}: {seconds['spinning_quiet']:6.1f} s (alone)", flush=True)
    result = {
        "bench": "thread_policy",
        "steps": args.steps,
        "cpus": os.cpu_count(),
        "seconds": {name: round(value, 1) for name, value in seconds.items()},
        "spinning_over_reasongym_default": round(seconds["spinning"] / seconds["reasongym_default"], 2),
        "spinning_over_one_thread": round(seconds["spinning"] / seconds["one_thread"], 2),
        "machine": measured.since(),  # the load at the start and the end (the busy neighbour's included)
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
