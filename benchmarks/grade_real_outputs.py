"""Grade real model completions with reasongym and math-verify side by side; list every disagreement.

Run alone: ``OMP_NUM_THREADS=1 python -m benchmarks.grade_real_outputs RECORDS.jsonl [...] [--show N]``.

The records are ``reasongym eval`` JSONL lines (fields ``id``, ``gold``, ``completions``; one record per
problem, one or more completions each), for example the greedy completions of SmolLM2-135M-Instruct on
GSM8K and MATH-500. Each completion is graded by ``reasongym.verifiers.verify(completion, gold, "math")``
and by math-verify as its docs show it (``parse`` the gold as ``$gold$``, ``parse`` the completion,
``verify``). The report gives, per file, how many completions each grader accepts and every completion
on which they disagree (its id, the gold, what each grader read, and the completion's last characters),
so that each disagreement can be adjudicated by hand (benchmarks/README.md holds the table). The last
line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.bench_verifiers import make_peer  # noqa: E402
from benchmarks.verifier_corpus import CorpusItem  # noqa: E402
from reasongym.verifiers import verify  # noqa: E402


def read_records(path: Path) -> list[tuple[str, str, str]]:
    """``(id, gold, completion)`` for every completion in a ``reasongym eval`` JSONL file."""
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                for k, completion in enumerate(record["completions"]):
                    suffix = f"#{k}" if len(record["completions"]) > 1 else ""
                    rows.append((f"{record['id']}{suffix}", str(record["gold"]), completion))
    return rows


def grade_file(path: Path, peer, show: int) -> dict:
    """Grade one file with both graders; print the disagreements; return the counts."""
    rows = read_records(path)
    ours_accept = theirs_accept = 0
    accepted: dict[str, list[str]] = {"reasongym": [], "math_verify": []}
    disagreements = []
    seconds = []
    for row_id, gold, completion in rows:
        start = time.perf_counter()
        verdict = verify(completion, gold, "math")
        seconds.append(time.perf_counter() - start)
        ours = verdict.correct is True
        ours_accept += ours
        if ours:
            accepted["reasongym"].append(row_id)
        if peer is None:
            continue
        theirs = peer(CorpusItem(gold, completion, True, path.stem))
        theirs_accept += theirs.correct
        if theirs.correct:
            accepted["math_verify"].append(row_id)
        if ours != theirs.correct:
            disagreements.append((row_id, gold, ours, verdict, theirs, completion))
    slowest = max(seconds, default=0.0)
    print(
        f"\n{path.name}: {len(rows)} completions; reasongym accepts {ours_accept} (slowest {slowest * 1000:.0f} ms)",
        end="",
    )
    print(
        "" if peer is None else f", math-verify accepts {theirs_accept}; {len(disagreements)} disagreements"
    )
    for row_id, gold, ours, verdict, theirs, completion in disagreements:
        tail = completion[-show:].replace("\n", "\\n")
        print(
            f"- {row_id} gold={gold!r} reasongym={'ACCEPT' if ours else 'reject'} "
            f"({verdict.outcome.value}: {str(verdict.extracted)[:60]!r}, {verdict.reason[:80]}) "
            f"math-verify={'ACCEPT' if theirs.correct else 'reject'} ({theirs.detail[:60]!r})\n    tail: {tail!r}"
        )
    return {
        "file": path.name,
        "completions": len(rows),
        "reasongym_accept": ours_accept,
        "math_verify_accept": theirs_accept if peer is not None else None,
        "disagreements": len(disagreements) if peer is not None else None,
        "disagreement_ids": [d[0] for d in disagreements],
        "reasongym_accepted_ids": accepted["reasongym"],
        "math_verify_accepted_ids": accepted["math_verify"] if peer is not None else None,
        "reasongym_slowest_ms": round(slowest * 1000, 1),
        "reasongym_over_1s": sum(t > 1.0 for t in seconds),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", type=Path, help="reasongym eval JSONL files")
    parser.add_argument("--no-peer", action="store_true", help="skip math-verify even when installed")
    parser.add_argument("--show", type=int, default=160, help="completion characters shown per disagreement")
    args = parser.parse_args(argv)
    peer = None if args.no_peer else make_peer(1.0)
    files = [grade_file(path, peer, args.show) for path in args.records]
    summary = {"files": files}
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
