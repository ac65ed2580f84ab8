"""Grade one mixed corpus with reasongym's ``verify`` and with math-verify, side by side.

Run alone: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_verifiers [--limit N] [--no-peer]``.

Both graders run in this process, on the main thread, one item at a time (math-verify's time limit is
``signal.alarm`` and works only there). Each grader sees every item once; a few warm-up items
(one per category, plus a symbolic one) are graded once beforehand, untimed, so that neither grader
pays its imports or reasongym's worker start inside the numbers; that one-time cost is printed.
Throughput is measured on the ordinary answers (every category except ``bomb``); latency percentiles
cover all items. See benchmarks/README.md for how to read the output. The last line printed is one
JSON object with the headline numbers.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.verifier_corpus import CorpusItem, build_corpus  # noqa: E402
from reasongym.verifiers import Outcome, verify  # noqa: E402
from reasongym.verifiers.extract import extract_math_answer  # noqa: E402

BOMB = "bomb"


@dataclass
class Graded:
    """One grader's result on one item."""

    correct: bool
    seconds: float
    status: str  # ours: the Outcome value; theirs: "ok", "timeout" or "error"
    detail: str  # what the grader extracted, for the examples


@dataclass
class Summary:
    """One grader's numbers over the corpus."""

    name: str
    answers_per_s: float
    median_ms: float
    p95_ms: float
    worst_ms: float
    statuses: Counter
    accuracy: float


def grade_ours(item: CorpusItem, seconds: float) -> Graded:
    """reasongym: one ``verify`` call on the full completion."""
    start = time.perf_counter()
    try:
        verdict = verify(item.completion, item.gold, "math", timeout=seconds)
    except Exception as exc:  # verify must never raise; count it instead of stopping the run
        return Graded(False, time.perf_counter() - start, f"raised {type(exc).__name__}", str(exc)[:80])
    elapsed = time.perf_counter() - start
    return Graded(
        verdict.correct is True, elapsed, Outcome(verdict.outcome).value, str(verdict.extracted)[:80]
    )


class _TimeoutCounter(logging.Handler):
    """Counts math-verify's "Timeout during ..." warnings and keeps them off the console."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Timeout"):
            self.count += 1


def make_peer(seconds: float) -> Callable[[CorpusItem], Graded] | None:
    """math-verify's grader as its docs show it, or None when it is not installed."""
    try:
        from math_verify import parse
        from math_verify import verify as peer_verify
    except ImportError:
        return None
    counter = _TimeoutCounter()
    peer_logger = logging.getLogger("math_verify")
    peer_logger.addHandler(counter)
    peer_logger.setLevel(logging.DEBUG)
    peer_logger.propagate = False
    limit = max(1, round(seconds))  # signal.alarm takes whole seconds

    def grade(item: CorpusItem) -> Graded:
        before = counter.count
        start = time.perf_counter()
        try:
            gold = parse(f"${item.gold}$", parsing_timeout=limit) or parse(item.gold, parsing_timeout=limit)
            prediction = parse(item.completion, parsing_timeout=limit)
            correct = bool(peer_verify(gold, prediction, timeout_seconds=limit))
            status = "timeout" if counter.count > before else "ok"
        except Exception as exc:  # math-verify swallows most errors itself; keep the run going
            correct, status, prediction = False, "error", [type(exc).__name__]
        elapsed = time.perf_counter() - start
        return Graded(correct, elapsed, status, str(prediction[-1] if prediction else None)[:80])

    return grade


def warmup_items(items: list[CorpusItem]) -> list[CorpusItem]:
    """The first item of every category, plus one symbolic answer that starts reasongym's sympy worker."""
    firsts = {item.category: item for item in reversed(items)}
    # sin^2 x + cos^2 x = 1 changes the variables, so the numeric identity test cannot settle it: sympy must.
    return [CorpusItem("\\sin^2 x + \\cos^2 x", "\\boxed{1}", True, "warmup"), *firsts.values()]


def run(grader: Callable[[CorpusItem], Graded], items: list[CorpusItem], name: str) -> list[Graded]:
    """Grade every item once, after an untimed warm-up pass whose one-time cost is printed."""
    start = time.perf_counter()
    for item in warmup_items(items):
        grader(item)
    print(f"{name} warm-up (imports, worker start): {time.perf_counter() - start:.2f} s")
    return [grader(item) for item in items]


def summarize(name: str, items: list[CorpusItem], results: list[Graded]) -> Summary:
    """Throughput on ordinary answers; latency over everything; accuracy against the labels."""
    ordinary = [r.seconds for item, r in zip(items, results, strict=True) if item.category != BOMB]
    latencies_ms = sorted(r.seconds * 1000 for r in results)
    p95_index = min(len(latencies_ms) - 1, int(0.95 * len(latencies_ms)))
    right = sum(r.correct == item.expected_correct for item, r in zip(items, results, strict=True))
    return Summary(
        name=name,
        answers_per_s=len(ordinary) / sum(ordinary) if ordinary else 0.0,
        median_ms=statistics.median(latencies_ms),
        p95_ms=latencies_ms[p95_index],
        worst_ms=latencies_ms[-1],
        statuses=Counter(r.status for r in results),
        accuracy=right / len(items),
    )


def print_summaries(summaries: list[Summary]) -> None:
    print(
        f"{'grader':<12} {'answers/s':>10} {'median ms':>10} {'p95 ms':>9} {'worst ms':>9} {'accuracy':>9}  statuses"
    )
    for s in summaries:
        statuses = ", ".join(f"{k}={v}" for k, v in sorted(s.statuses.items()))
        print(
            f"{s.name:<12} {s.answers_per_s:>10.1f} {s.median_ms:>10.2f} {s.p95_ms:>9.2f} {s.worst_ms:>9.1f} "
            f"{s.accuracy:>9.1%}  {statuses}"
        )


def print_disagreements(items, ours, theirs, examples: int) -> tuple[int, int, int]:
    """Table of categories where the graders disagree; returns (total, ours right, theirs right)."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    shown: dict[str, list[str]] = defaultdict(list)
    for item, a, b in zip(items, ours, theirs, strict=True):
        if a.correct == b.correct:
            continue
        row = table[item.category]
        row[0] += 1
        row[1] += a.correct == item.expected_correct
        row[2] += b.correct == item.expected_correct
        if len(shown[item.category]) < examples:
            shown[item.category].append(
                f"    gold={item.gold!r} tail={item.completion[-70:]!r} expected={item.expected_correct} "
                f"ours={a.correct}/{a.status}/{a.detail!r} theirs={b.correct}/{b.status}/{b.detail!r}"
            )
    print(f"\n{'disagreement category':<24} {'n':>5} {'ours right':>11} {'theirs right':>13}")
    for category, (n, ours_right, theirs_right) in sorted(table.items(), key=lambda kv: -kv[1][0]):
        print(f"{category:<24} {n:>5} {ours_right:>11} {theirs_right:>13}")
        print("\n".join(shown[category]))
    totals = [sum(row[i] for row in table.values()) for i in range(3)]
    return totals[0], totals[1], totals[2]


def print_misses(items: list[CorpusItem], results: list[Graded], examples: int) -> None:
    """Where reasongym disagrees with the corpus label, by category, whatever the peer said."""
    misses: dict[str, list[tuple[CorpusItem, Graded]]] = defaultdict(list)
    for item, result in zip(items, results, strict=True):
        if result.correct != item.expected_correct:
            misses[item.category].append((item, result))
    print("\nreasongym vs the corpus labels (misses by category)")
    for category, rows in sorted(misses.items(), key=lambda kv: -len(kv[1])):
        print(f"  {category}: {len(rows)}")
        for item, r in rows[:examples]:
            print(
                f"    gold={item.gold!r} tail={item.completion[-60:]!r} expected={item.expected_correct} got={r.status}/{r.detail!r}"
            )


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="grade a category-balanced subset of N items")
    parser.add_argument("--no-peer", action="store_true", help="skip math-verify even when installed")
    parser.add_argument(
        "--timeout", type=float, default=1.0, help="per-call limit in seconds for both graders"
    )
    parser.add_argument("--examples", type=int, default=2, help="examples printed per category")
    args = parser.parse_args(argv)

    items = build_corpus(args.limit)
    categories = Counter(item.category for item in items)
    print(f"corpus: {len(items)} items, {len(categories)} categories, {categories[BOMB]} bombs")
    ours = run(lambda item: grade_ours(item, args.timeout), items, "reasongym")
    summaries = [summarize("reasongym", items, ours)]
    peer = None if args.no_peer else make_peer(args.timeout)
    theirs: list[Graded] | None = None
    if peer is not None:
        theirs = run(peer, items, "math-verify")
        summaries.append(summarize("math-verify", items, theirs))
    elif not args.no_peer:
        print("math-verify is not installed (pip install 'math-verify[antlr4_13_2]'); grading ours only")
    print_summaries(summaries)
    over_1s = [item.category for item, r in zip(items, ours, strict=True) if r.seconds > 1.0]
    print(f"reasongym answers over 1 s: {len(over_1s)} {Counter(over_1s).most_common(5)}")
    share = extraction_share(items)
    print(
        f"reasongym's extraction (the commitment stages) takes {share:.1%} of verify's time on ordinary answers"
    )
    print_misses(items, ours, args.examples)

    report = headline(summaries[0], "ours")
    disagreements = ours_right = theirs_right = None
    if theirs is not None:
        agreement = sum(a.correct == b.correct for a, b in zip(ours, theirs, strict=True)) / len(items)
        print(f"\nagreement: {agreement:.1%}")
        disagreements, ours_right, theirs_right = print_disagreements(items, ours, theirs, args.examples)
        report |= headline(summaries[1], "math_verify") | {"agreement": round(agreement, 4)}
    report["ratio"] = (
        round(summaries[0].answers_per_s / summaries[1].answers_per_s, 2) if theirs is not None else None
    )
    report |= {
        "disagreements": disagreements,
        "ours_right_on_disagreements": ours_right,
        "theirs_right_on_disagreements": theirs_right,
        "items": len(items),
        "ours_over_1s": len(over_1s),
        "ours_extraction_share": round(share, 3),
    }
    print(json.dumps(report))
    return report


def extraction_share(items: list[CorpusItem]) -> float:
    """The share of verify's time that finding the committed answer takes (segment, claims, commitment).

    Each ordinary item is verified, then only extracted, in turns, each timed; the rest of verify's time is
    the comparison (exact, numeric or symbolic).
    """
    verify_s = extract_s = 0.0
    for item in items:
        if item.category == BOMB:
            continue
        started = time.perf_counter()
        verify(item.completion, item.gold, "math")
        verify_s += time.perf_counter() - started
        started = time.perf_counter()
        extract_math_answer(item.completion)
        extract_s += time.perf_counter() - started
    return extract_s / verify_s if verify_s else 0.0


def headline(summary: Summary, prefix: str) -> dict:
    """The JSON fields of one grader."""
    return {
        f"{prefix}_answers_per_s": round(summary.answers_per_s, 1),
        f"{prefix}_median_ms": round(summary.median_ms, 3),
        f"{prefix}_p95_ms": round(summary.p95_ms, 3),
        f"{prefix}_worst_ms": round(summary.worst_ms, 1),
        f"{prefix}_timeouts": summary.statuses.get("timeout", 0),
        f"{prefix}_refused": summary.statuses.get("refused", 0),
        f"{prefix}_accuracy": round(summary.accuracy, 4),
    }


if __name__ == "__main__":
    main()
