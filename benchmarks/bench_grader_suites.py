"""Agreement with the expectations of other graders' test suites: reasongym and math-verify.

Run alone: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_grader_suites [--no-peer] [--misses]``.

The cases are ours (``grader_suites_corpus.py``), written for the forms that eight public grader test
suites exercise. For each suite the report gives how often each grader's verdict equals the suite's
expectation, over all cases and over the cases whose expectation is not debatable, then lists every
case where reasongym differs from the expectation (and whether math-verify does). The last line is one
JSON object. The cases written after the grader changes (``held_out``) are also reported on their own.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from benchmarks.bench_verifiers import make_peer  # noqa: E402
from benchmarks.grader_suites_corpus import SuiteCase, suite_cases  # noqa: E402
from benchmarks.verifier_corpus import CorpusItem  # noqa: E402
from reasongym.verifiers import verify  # noqa: E402


def grade_ours(case: SuiteCase) -> bool:
    """reasongym's verdict on one case (True only for CORRECT)."""
    return verify(case.completion, case.gold, "math").correct is True


def _rate(hits: list[bool]) -> float:
    return round(sum(hits) / len(hits), 4) if hits else 0.0


def summarize(cases: list[SuiteCase], verdicts: dict[str, list[bool]]) -> dict:
    """Per-suite and overall agreement of each grader with the suites' expectations."""
    table: dict[str, dict] = {}
    for suite in dict.fromkeys(case.suite for case in cases):
        rows = [k for k, case in enumerate(cases) if case.suite == suite]
        clear = [k for k in rows if not cases[k].debatable]
        table[suite] = {"n": len(rows), "n_clear": len(clear)}
        for name, got in verdicts.items():
            table[suite][name] = _rate([got[k] == cases[k].expected for k in rows])
            table[suite][f"{name}_clear"] = _rate([got[k] == cases[k].expected for k in clear])
    overall = _group(cases, verdicts, range(len(cases)))
    held_out = _group(cases, verdicts, [k for k, case in enumerate(cases) if case.held_out])
    return {"suites": table, "overall": overall, "held_out": held_out}


def _group(cases: list[SuiteCase], verdicts: dict[str, list[bool]], rows) -> dict:
    """Agreement over some cases, all of them and the clear ones."""
    rows = list(rows)
    clear = [k for k in rows if not cases[k].debatable]
    group = {"n": len(rows), "n_clear": len(clear)}
    for name, got in verdicts.items():
        group[name] = _rate([got[k] == cases[k].expected for k in rows])
        group[f"{name}_clear"] = _rate([got[k] == cases[k].expected for k in clear])
    return group


def print_report(report: dict, names: list[str]) -> None:
    header = f"{'suite':<14} {'n':>4} {'clear':>6}" + "".join(f" {n:>12} {n + ' clr':>14}" for n in names)
    print(header)
    rows = [*report["suites"].items(), ("ALL", report["overall"]), ("held out", report["held_out"])]
    for suite, row in rows:
        cells = "".join(f" {row[n]:>12.1%} {row[n + '_clear']:>14.1%}" for n in names)
        print(f"{suite:<14} {row['n']:>4} {row['n_clear']:>6}{cells}")


def print_misses(cases: list[SuiteCase], verdicts: dict[str, list[bool]]) -> None:
    """Every case where reasongym's verdict differs from the suite's expectation."""
    by_suite: dict[str, list[str]] = defaultdict(list)
    peer = verdicts.get("math_verify")
    for k, case in enumerate(cases):
        if verdicts["reasongym"][k] == case.expected:
            continue
        theirs = "" if peer is None else f" math-verify={'right' if peer[k] == case.expected else 'wrong'}"
        note = f" [debatable: {case.debatable}]" if case.debatable else ""
        note += " [held out]" if case.held_out else ""
        by_suite[case.suite].append(
            f"  gold={case.gold!r} pred={str(case.prediction)[-90:]!r} expected={case.expected}{theirs}{note}"
        )
    for suite, lines in by_suite.items():
        print(f"\nreasongym misses in {suite}: {len(lines)}")
        print("\n".join(lines))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-peer", action="store_true", help="skip math-verify even when installed")
    parser.add_argument("--misses", action="store_true", help="list every case reasongym gets wrong")
    args = parser.parse_args(argv)
    cases = suite_cases()
    verdicts = {"reasongym": [grade_ours(case) for case in cases]}
    peer = None if args.no_peer else make_peer(1.0)
    if peer is not None:
        verdicts["math_verify"] = [
            peer(CorpusItem(case.gold, case.completion, case.expected, case.suite)).correct for case in cases
        ]
    report = summarize(cases, verdicts)
    print_report(report, list(verdicts))
    if args.misses:
        print_misses(cases, verdicts)
    overall = report["overall"]
    result = {"cases": len(cases), "clear_cases": overall["n_clear"]}
    held_out = report["held_out"]
    for name in verdicts:
        result |= {f"{name}_agreement": overall[name], f"{name}_agreement_clear": overall[f"{name}_clear"]}
        result |= {f"{name}_held_out": held_out[name], f"{name}_held_out_clear": held_out[f"{name}_clear"]}
    result["per_suite"] = {
        suite: {k: v for k, v in row.items() if k not in ("n_clear",)}
        for suite, row in report["suites"].items()
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
