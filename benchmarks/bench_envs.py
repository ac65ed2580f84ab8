"""Problems per second of every procedural environment (reset + gold step), beside reasoning-gym.

For each procedural id (``reasongym.list_envs()`` rows with size "procedural"), at its easiest and its
hardest level: ``env.reset(seed=i)`` then ``env.step(gold)`` with the gold answer written as the
prompt's instruction asks, on the unwrapped environment, until ``--problems`` problems or
``--seconds`` per measurement. A breakdown splits the time into problem generation
(``source.problem``), the rest of ``reset`` (seeding, prompt, chat messages, info) and ``step`` (the
verifier; measured as the episode time minus the reset time). When ``reasoning_gym`` is importable, its comparable tasks are timed the same way:
``dataset[i]`` (generation) then ``dataset.score_answer(entry["answer"], entry)`` (scoring the gold).
Last line: one JSON object (see benchmarks/README.md for ``ratio``).

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_envs`` (``--seconds 0.5`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import reasongym  # noqa: E402
from reasongym.envs.core import format_final_answer, gold_answer_text  # noqa: E402

# Our environment -> the reasoning-gym task that generates and scores the most similar problems.
COMPARABLE = {
    "reasongym/Arithmetic-v0": "basic_arithmetic",
    "reasongym/Fractions-v0": "fraction_simplification",
    "reasongym/LinearEquation-v0": "simple_equations",
    "reasongym/PolynomialRoots-v0": "polynomial_equations",
    "reasongym/NumberTheory-v0": "gcd",
    "reasongym/Countdown-v0": "countdown",
}


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=5000, help="most problems per measurement")
    parser.add_argument("--seconds", type=float, default=1.5, help="time budget per measurement")
    parser.add_argument("--no-peer", action="store_true", help="skip reasoning-gym")
    return parser.parse_args()


def _timed_loop(body: Callable[[int], Any], problems: int, seconds: float) -> tuple[float, int]:
    """Run ``body(i)`` for i = 0, 1, ... until ``problems`` or ``seconds``; (rate per second, count)."""
    start = time.perf_counter()
    deadline, count = start + seconds, 0
    while count < problems:
        body(count)
        count += 1
        if count % 16 == 0 and time.perf_counter() > deadline:
            break
    return count / (time.perf_counter() - start), count


def _measure_env(env_id: str, level: int, args: argparse.Namespace) -> dict[str, Any]:
    env = reasongym.make(env_id, difficulty=level).unwrapped
    correct = 0

    def episode(i: int) -> None:
        nonlocal correct
        env.reset(seed=i)
        problem = env.problem
        gold = format_final_answer(problem.answer_type, gold_answer_text(problem))
        correct += env.step(gold)[4]["correct"] is True

    for i in range(8):  # untimed: imports, the verifier's worker process, caches
        episode(10**6 + i)
    correct = 0
    rate, count = _timed_loop(episode, args.problems, args.seconds)
    # breakdown on the same seeds: generation alone, reset alone; step = episode - reset
    source, split = env.source, env.source.default_split
    problem_rate, _ = _timed_loop(lambda i: source.problem(split, i, level), count, args.seconds)
    reset_rate, _ = _timed_loop(lambda i: env.reset(seed=i), count, args.seconds)
    return {
        "level": level,
        "problems_per_s": round(rate, 1),
        "problems": count,
        "gold_correct": correct / count,
        "us_generate": round(1e6 / problem_rate, 1),
        "us_reset": round(1e6 / reset_rate, 1),
        "us_step": round(1e6 / rate - 1e6 / reset_rate, 1),
    }


def _measure_peer(task: str, args: argparse.Namespace) -> dict[str, Any]:
    import reasoning_gym

    built = time.perf_counter()
    dataset = reasoning_gym.create_dataset(task, seed=0, size=args.problems + 16)
    built = time.perf_counter() - built
    scores = []

    def item(i: int) -> None:
        entry = dataset[i]
        scores.append(dataset.score_answer(entry["answer"], entry))

    for i in range(8):
        item(args.problems + i)
    scores.clear()
    rate, count = _timed_loop(item, args.problems, args.seconds)
    return {
        "problems_per_s": round(rate, 1),
        "problems": count,
        "gold_score_mean": round(sum(scores) / len(scores), 4),
        "create_s": round(built, 3),
    }


def _peer_available(args: argparse.Namespace) -> bool:
    if args.no_peer:
        return False
    try:
        import reasoning_gym  # noqa: F401
    except ImportError:
        return False
    return True


def _summary(ours: dict[str, dict], peer: dict[str, dict]) -> dict[str, Any]:
    pairs = []
    for env_id, task in COMPARABLE.items():
        if env_id in ours and task in peer:
            rate = ours[env_id]["easiest"]["problems_per_s"]
            pairs.append(
                {
                    "ours": env_id,
                    "reasoning_gym": task,
                    "ours_per_s": rate,
                    "theirs_per_s": peer[task]["problems_per_s"],
                    "ratio": round(rate / peer[task]["problems_per_s"], 3),
                }
            )
    if not pairs:
        return {"pairs": [], "ratio": None, "min_pair_ratio": None}
    slowest = min(pairs, key=lambda p: p["ours_per_s"])
    worst = min(pairs, key=lambda p: p["ratio"])
    return {
        "pairs": pairs,
        "ratio": slowest["ratio"],
        "ratio_env": slowest["ours"],
        "min_pair_ratio": worst["ratio"],
        "min_pair": f"{worst['ours']} vs {worst['reasoning_gym']}",
        "pairs_at_least_as_fast": sum(p["ratio"] >= 1 for p in pairs),
    }


def main() -> None:
    """Measure every procedural environment and the comparable reasoning-gym tasks; print JSON last."""
    args = _parse_args()
    ours: dict[str, dict] = {}
    print(
        f"{'environment':36s} {'level':>5s} {'problems/s':>11s} {'gen us':>8s} {'reset us':>9s} {'step us':>8s}"
    )
    for entry in reasongym.list_envs():
        if entry.size != "procedural" or not entry.id.startswith("reasongym/"):
            continue
        levels = reasongym.make(entry.id).unwrapped.source.difficulties()
        ours[entry.id] = {}
        for name, level in (("easiest", levels[0]), ("hardest", levels[-1])):
            row = _measure_env(entry.id, level, args)
            ours[entry.id][name] = row
            print(
                f"{entry.id:36s} {level:5d} {row['problems_per_s']:11,.0f} {row['us_generate']:8.1f} "
                f"{row['us_reset']:9.1f} {row['us_step']:8.1f}"
                + ("" if row["gold_correct"] == 1 else f"   GOLD CORRECT ONLY {row['gold_correct']:.1%}")
            )
    peer: dict[str, dict] = {}
    if _peer_available(args):
        print(f"\n{'reasoning-gym task':36s} {'problems/s':>11s} {'gold score':>10s}")
        for task in dict.fromkeys(COMPARABLE.values()):
            peer[task] = _measure_peer(task, args)
            print(f"{task:36s} {peer[task]['problems_per_s']:11,.0f} {peer[task]['gold_score_mean']:10.3f}")
    summary = _summary(ours, peer)
    if summary["pairs"]:
        print(
            f"\n{'ours (easiest level)':36s} {'reasoning-gym':24s} {'ours/s':>9s} {'theirs/s':>9s} {'ratio':>7s}"
        )
        for pair in summary["pairs"]:
            print(
                f"{pair['ours']:36s} {pair['reasoning_gym']:24s} {pair['ours_per_s']:9,.0f} "
                f"{pair['theirs_per_s']:9,.0f} {pair['ratio']:7.2f}"
            )
    print(json.dumps({"ours": ours, "reasoning_gym": peer, **summary, "seconds": args.seconds}))


if __name__ == "__main__":
    main()
