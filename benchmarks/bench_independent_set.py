"""Grade a labelled independent set of completions with reasongym and math-verify; count the errors.

Run alone: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_independent_set [SET.jsonl] [--save OUT.jsonl]``.

The set (default ``benchmarks/independent_set_23.jsonl``) is data, one JSON object a line: ``id``,
``source`` ("written" or "smollm2"), ``family`` (whose habits the completion imitates), ``form`` (what it
probes), ``kind`` (any kind ``verify`` grades: "math", "integer", "choice", "yesno", "exact", "countdown";
``choices`` for "choice"), ``gold``, ``completion``,
``expected`` (what a careful grader says from the completion and the gold alone) and ``debatable`` (empty,
or why a careful grader could decide otherwise). It was written before the grader changes it measures and
is graded as it stands, before and after; it is never edited to suit a grader.

reasongym grades each case with ``verify(completion, gold, kind, choices=...)``; math-verify grades every
case as its docs show (``parse`` the gold as ``$gold$``, ``parse`` the completion, ``verify``), since it has
no multiple-choice, yes/no, exact-string or Countdown mode. The report gives, per grader, the accept and reject
rates, false accepts (accepted, expected wrong) and misses (rejected, expected right), over all cases and over
the clear ones (not debatable); then the same on the clear cases of each kind, and of the math and integer
rows together (the only rows math-verify is built for); then every case where the two graders disagree,
with the expected verdict. ``--save``
writes one line per case (id, both verdicts, what reasongym extracted, its time) for a before/after record.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bench_verifiers import make_peer  # noqa: E402
from benchmarks.verifier_corpus import CorpusItem  # noqa: E402
from reasongym.verifiers import KINDS, verify  # noqa: E402

DEFAULT_SET = Path(__file__).resolve().parent / "independent_set_23.jsonl"


@dataclass
class Row:
    """One case and both graders' verdicts on it."""

    case: dict
    ours: bool
    ours_detail: str
    ours_seconds: float
    theirs: bool | None


def read_set(path: Path) -> list[dict]:
    """The cases of a set file, in order."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def grade(cases: list[dict], peer) -> list[Row]:
    """Both graders on every case; math-verify's verdict is None without the peer."""
    rows = []
    for case in cases:
        options = {"choices": case["choices"]} if case.get("choices") else {}
        start = time.perf_counter()
        verdict = verify(case["completion"], case["gold"], case.get("kind", "math"), **options)
        seconds = time.perf_counter() - start
        detail = f"{verdict.outcome.value}: {str(verdict.extracted)[:60]!r}"
        theirs = None
        if peer is not None:
            theirs = peer(
                CorpusItem(case["gold"], case["completion"], case["expected"], case["family"])
            ).correct
        rows.append(Row(case, verdict.correct is True, detail, seconds, theirs))
    return rows


def tally(rows: list[Row], verdict_of) -> dict:
    """Accepts, rejects, false accepts and misses of one grader; ``verdict_of(row)`` is its verdict."""
    accepted = [row for row in rows if verdict_of(row)]
    false_accepts = [row.case["id"] for row in accepted if not row.case["expected"]]
    misses = [row.case["id"] for row in rows if not verdict_of(row) and row.case["expected"]]
    right = len(rows) - len(false_accepts) - len(misses)
    return {
        "cases": len(rows),
        "accept_rate": round(len(accepted) / max(1, len(rows)), 4),
        "reject_rate": round(1 - len(accepted) / max(1, len(rows)), 4),
        "accuracy": round(right / max(1, len(rows)), 4),
        "false_accepts": len(false_accepts),
        "misses": len(misses),
        "false_accept_ids": false_accepts,
        "miss_ids": misses,
    }


def by_kind(clear: list[Row], graders: dict) -> dict:
    """Each grader's tally on the clear cases of each kind, and of the math and integer rows together."""
    subsets = {kind: [row for row in clear if row.case.get("kind", "math") == kind] for kind in KINDS}
    subsets["math+integer"] = subsets["math"] + subsets["integer"]
    out: dict = {}
    print("clear cases by kind:")
    for subset, chosen in subsets.items():
        if not chosen:
            continue
        for name, verdict_of in graders.items():
            counts = tally(chosen, verdict_of)
            out[f"{name}_{subset}"] = counts
            print(
                f"  {subset:12} {name:12}: {counts['cases']:3} cases, accuracy {counts['accuracy']:.1%}, "
                f"false accepts {counts['false_accepts']}, misses {counts['misses']}"
            )
    return out


def report(rows: list[Row], has_peer: bool, show: int) -> dict:
    """Print the tallies and the disagreements; return the JSON summary."""
    clear = [row for row in rows if not row.case["debatable"]]
    graders = {"reasongym": lambda row: row.ours}
    if has_peer:
        graders["math_verify"] = lambda row: bool(row.theirs)
    summary: dict = {"cases": len(rows), "clear": len(clear)}
    expected_right = sum(row.case["expected"] for row in rows)
    print(f"{len(rows)} cases ({len(clear)} clear), {expected_right} expected right")
    for name, verdict_of in graders.items():
        for subset, chosen in (("all", rows), ("clear", clear)):
            counts = tally(chosen, verdict_of)
            summary[f"{name}_{subset}"] = counts
            print(
                f"{name:12} {subset:5}: accuracy {counts['accuracy']:.1%}, accepts {counts['accept_rate']:.1%}, "
                f"false accepts {counts['false_accepts']}, misses {counts['misses']}"
            )
    summary["clear_by_kind"] = by_kind(clear, graders)
    seconds = [row.ours_seconds for row in rows]
    summary["reasongym_slowest_ms"] = round(1000 * max(seconds, default=0.0), 1)
    summary["reasongym_over_1s"] = sum(s > 1.0 for s in seconds)
    print(
        f"reasongym slowest verdict {summary['reasongym_slowest_ms']} ms, over 1 s: {summary['reasongym_over_1s']}"
    )
    if has_peer:
        disagreements = [row for row in rows if row.ours != row.theirs]
        summary["disagreements"] = len(disagreements)
        summary["reasongym_right_on_disagreements"] = sum(
            row.ours == row.case["expected"] for row in disagreements
        )
        summary["math_verify_right_on_disagreements"] = sum(
            row.theirs == row.case["expected"] for row in disagreements
        )
        print(f"\n{len(disagreements)} disagreements (expected verdict first):")
        for row in disagreements:
            case = row.case
            tail = case["completion"][-show:].replace("\n", "\\n")
            flag = f" [debatable: {case['debatable']}]" if case["debatable"] else ""
            print(
                f"- {case['id']} expected={'ACCEPT' if case['expected'] else 'reject'}{flag} gold={case['gold']!r} "
                f"reasongym={'ACCEPT' if row.ours else 'reject'} ({row.ours_detail}) "
                f"math-verify={'ACCEPT' if row.theirs else 'reject'}\n    tail: {tail!r}"
            )
    return summary


def save(rows: list[Row], path: Path) -> None:
    """One line per case: id, both verdicts, what reasongym read, its time."""
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            record = {
                "id": row.case["id"],
                "expected": row.case["expected"],
                "reasongym": row.ours,
                "reasongym_read": row.ours_detail,
                "reasongym_ms": round(1000 * row.ours_seconds, 2),
                "math_verify": row.theirs,
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> dict:
    """Grade the set, print the report and its JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", nargs="?", type=Path, default=DEFAULT_SET, help="the labelled set (JSONL)")
    parser.add_argument("--no-peer", action="store_true", help="skip math-verify even when installed")
    parser.add_argument("--save", type=Path, default=None, help="write every case's verdicts here (JSONL)")
    parser.add_argument("--show", type=int, default=140, help="completion characters shown per disagreement")
    args = parser.parse_args(argv)
    peer = None if args.no_peer else make_peer(1.0)
    cases = read_set(args.set)
    verify("\\boxed{\\sin^2 x + \\cos^2 x}", "1")  # start the sympy worker before the clock runs
    rows = grade(cases, peer)
    summary = report(rows, peer is not None, args.show)
    if args.save is not None:
        save(rows, args.save)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
