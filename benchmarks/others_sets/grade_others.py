"""Grade other projects' labelled verifier sets with reasongym and math-verify; count against their labels.

Run alone, from the repository root:
``OMP_NUM_THREADS=1 python -m benchmarks.others_sets.grade_others [SET ...] [--source-root DIR] [--save]``.

The sets are rebuilt from local copies of their repositories (``loaders.py``, ``sources.py``). reasongym grades
each row with ``verify(completion, gold, kind)`` (accepted = CORRECT); math-verify as
``bench_independent_set.py`` does (``parse`` the gold as ``$gold$``, ``parse`` the completion, ``verify``).
Per set and grader: rows, accuracy against the labels, false accepts (accepted, labelled wrong), misses
(rejected, labelled correct) and misses as a share of the rows labelled correct; then the same without the
rows ``adjudication.jsonl`` calls mislabelled or without a gold (counted apart, never dropped from the first
line); then reasongym's misses by the theme the adjudication gives them. ``--save``
writes one line per row to ``results/SET.jsonl``: the id, the label and both verdicts (and whether math-verify timed
out), no text of the set.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent

from benchmarks.bench_verifiers import make_peer  # noqa: E402
from benchmarks.others_sets.loaders import SETS, Row  # noqa: E402
from benchmarks.others_sets.sources import source_root  # noqa: E402
from benchmarks.verifier_corpus import CorpusItem  # noqa: E402
from reasongym.verifiers import verify  # noqa: E402

ADJUDICATION = HERE / "adjudication.jsonl"
RESULTS = HERE / "results"


def read_adjudication(path: Path = ADJUDICATION) -> dict[str, dict]:
    """Our call on reviewed rows, by id: ``call`` is "mislabelled", "right" or "debatable"; ``theme``, ``why``."""
    if not path.exists():
        return {}
    with path.open(encoding="utf-8") as handle:
        return {record["id"]: record for record in map(json.loads, filter(str.strip, handle))}


def grade(rows: list[Row], peer, tolerance: str = "exact") -> list[dict]:
    """Both graders on every row: one record per row, ids and verdicts only (reasongym under ``tolerance``)."""
    records = []
    for row in rows:
        start = time.perf_counter()
        options = {"tolerance": tolerance} if row.kind == "math" else {}
        verdict = verify(row.completion, row.gold, row.kind, **options)
        seconds = time.perf_counter() - start
        theirs, status = None, None
        if peer is not None:
            graded = peer(CorpusItem(row.gold, row.completion, row.label, row.group))
            theirs, status = graded.correct, graded.status  # "timeout": math-verify gave up (its 1 s limit)
        records.append(
            {
                "id": row.id,
                "group": row.group,
                "kind": row.kind,
                "label": row.label,
                "reasongym": verdict.correct is True,
                "reasongym_outcome": verdict.outcome.value if verdict.correct is not None else "ungradable",
                "reasongym_ms": round(1000 * seconds, 2),
                "math_verify": theirs,
                "math_verify_status": status,
            }
        )
    return records


def tally(records: list[dict], grader: str) -> dict:
    """Accuracy, false accepts, misses and the miss share (of the rows labelled correct) of one grader."""
    labelled_right = sum(record["label"] for record in records)
    false_accepts = [r["id"] for r in records if r[grader] and not r["label"]]
    misses = [r["id"] for r in records if not r[grader] and r["label"]]
    right = len(records) - len(false_accepts) - len(misses)
    return {
        "rows": len(records),
        "labelled_correct": labelled_right,
        "accuracy": round(right / max(1, len(records)), 4),
        "false_accepts": len(false_accepts),
        "misses": len(misses),
        "miss_share": round(len(misses) / max(1, labelled_right), 4),
        "false_accept_ids": false_accepts,
    }


def summarize(name: str, records: list[dict], adjudication: dict[str, dict], graders: list[str]) -> dict:
    """One set's tallies, over every row and without the rows adjudicated mislabelled; printed as it goes."""
    calls = Counter(adjudication.get(r["id"], {}).get("call", "unreviewed") for r in records)
    apart = {
        r["id"] for r in records if adjudication.get(r["id"], {}).get("call") in ("mislabelled", "no gold")
    }
    kept = [r for r in records if r["id"] not in apart]
    out: dict = {"rows": len(records), "calls": dict(calls)}
    out["reasongym_outcomes"] = dict(Counter(r["reasongym_outcome"] for r in records))
    out["math_verify_timeouts"] = [r["id"] for r in records if r.get("math_verify_status") == "timeout"]
    for grader in graders:
        for subset, chosen in (("all", records), ("adjudicated", kept)):
            counts = tally(chosen, grader)
            out[f"{grader}_{subset}"] = counts
            print(
                f"{name:18} {grader:11} {subset:11}: {counts['rows']:4} rows ({counts['labelled_correct']} correct), "
                f"accuracy {counts['accuracy']:.1%}, false accepts {counts['false_accepts']}, "
                f"misses {counts['misses']} ({counts['miss_share']:.1%} of correct)"
            )
    out["reasongym_miss_themes"] = themes(records, adjudication)
    print(
        f"{name:18} reasongym misses by theme: "
        + ", ".join(f"{theme} {entry['count']}" for theme, entry in out["reasongym_miss_themes"].items())
    )
    out["reasongym_slowest_ms"] = max((r["reasongym_ms"] for r in records), default=0.0)
    return out


def themes(records: list[dict], adjudication: dict[str, dict]) -> dict[str, dict]:
    """reasongym's misses by theme (from the adjudication): count and three example ids per theme.

    Rows called mislabelled or without a gold are left out; a miss nobody reviewed counts as "unreviewed".
    """
    grouped: dict[str, list[str]] = {}
    for record in records:
        if record["reasongym"] or not record["label"]:
            continue
        call = adjudication.get(record["id"], {})
        if call.get("call") in ("mislabelled", "no gold"):
            continue
        grouped.setdefault(call.get("theme", "unreviewed"), []).append(record["id"])
    ordered = sorted(grouped.items(), key=lambda item: -len(item[1]))
    return {theme: {"count": len(ids), "examples": ids[:3]} for theme, ids in ordered}


def save(name: str, records: list[dict]) -> None:
    """``results/NAME.jsonl``: one line per row (no text of the set)."""
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def load_saved(name: str) -> list[dict]:
    """The records ``save`` wrote for one set."""
    with (RESULTS / f"{name}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(argv: list[str] | None = None) -> dict:
    """Load, grade and report every chosen set; return the JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", help=f"the sets to grade (default: all): {', '.join(SETS)}")
    parser.add_argument("--source-root", type=Path, default=None, help="where the source repositories are")
    parser.add_argument("--no-peer", action="store_true", help="skip math-verify even when installed")
    parser.add_argument("--save", action="store_true", help="write results/SET.jsonl for every set graded")
    parser.add_argument(
        "--tolerance",
        choices=("exact", "shown", "relative"),
        default="exact",
        help="reasongym's rounding policy for math rows (not with --save: the saved verdicts are exact ones)",
    )
    parser.add_argument(
        "--from-saved",
        action="store_true",
        help="tally results/SET.jsonl as saved, without grading (no sources)",
    )
    args = parser.parse_args(argv)
    if args.save and args.tolerance != "exact":
        parser.error("--save keeps the exact verdicts; grade under --tolerance without --save")
    unknown = [name for name in args.sets if name not in SETS]
    if unknown:
        parser.error(f"unknown set {unknown[0]!r}; the sets are {', '.join(SETS)}")
    adjudication = read_adjudication()
    if args.from_saved:
        summary = {
            name: summarize(name, load_saved(name), adjudication, ["reasongym", "math_verify"])
            for name in args.sets or list(SETS)
        }
        print(json.dumps(summary))
        return summary
    root = source_root(args.source_root)
    peer = None if args.no_peer else make_peer(1.0)
    graders = ["reasongym"] + ([] if peer is None else ["math_verify"])
    verify("\\boxed{\\sin^2 x + \\cos^2 x}", "1")  # start the sympy worker before any row is timed
    summary = {}
    for name in args.sets or list(SETS):
        records = grade(SETS[name](root), peer, args.tolerance)
        summary[name] = summarize(name, records, adjudication, graders)
        if args.save:
            save(name, records)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
