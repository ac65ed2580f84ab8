"""Problems graded per second when grading stored completions: reasongym against math-verify, in one run.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_eval [--problems 300] [--n 8] [--repeats 3]``.

The corpus is ``--problems`` procedural math problems (arithmetic, fractions, linear equations and
systems, polynomial roots, number theory; test splits) with ``--n`` stored completions each, written to a
JSONL file in the ``gold``/``kind``/``completions`` shape of ``grade_completions``: the reference solution,
the bare boxed gold, an equivalent form (``\\frac{a}{b}`` for ``a/b``, the decimal of a terminating
fraction), a wrong answer (a digit appended), a sign error, a plain "the answer is" line, no answer, and a
last-number fallback. Both graders see every completion:

- ours: ``grade_completions(path)``, end to end (read the file, extract, grade, and summarize with
  pass@k, maj@k with equivalent answers voting together, avg@n and bootstrap intervals);
- math-verify: ``parse`` of the boxed gold and of each completion, then ``verify``, then pass@k from the
  counts (math-verify has no maj@k or intervals, so it does strictly less work).

Each grader runs ``--repeats`` times alternately after one untimed warm-up pass over the first problems
(imports, reasongym's sympy worker, math-verify's parser caches); medians are reported. The last line is
one JSON object with ``ours_problems_per_s``, ``mathverify_problems_per_s``, ``ratio`` (ours over
math-verify) and ``agreement`` (fraction of completions both graders call the same way).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import reasongym
from reasongym.evaluation import grade_completions, load_records, pass_at_k

ENVS = (
    "reasongym/Arithmetic-v0",
    "reasongym/Fractions-v0",
    "reasongym/LinearEquation-v0",
    "reasongym/LinearSystem-v0",
    "reasongym/PolynomialRoots-v0",
    "reasongym/NumberTheory-v0",
)


def equivalent_form(gold: str) -> str:
    """Another way to write ``gold`` that a math grader should accept."""
    if "/" in gold and "," not in gold:
        value = Fraction(gold)
        decimal = float(value)
        numerator, denominator = gold.split("/")
        if value.denominator in (2, 4, 5, 8, 10, 20, 25):
            return f"{decimal:g}"
        return f"\\frac{{{numerator.strip()}}}{{{denominator.strip()}}}"
    if gold.startswith("(") and gold.endswith(")"):
        return f"x = {gold[1:-1].split(',')[0].strip()}, y = {gold[1:-1].split(',')[1].strip()}"
    return f"{gold}.0" if gold.lstrip("-").isdigit() else gold


def completions_for(solution: str, gold: str, n: int) -> list[str]:
    """``n`` stored completions of mixed correctness for one problem."""
    variants = [
        solution,
        f"The final answer is \\boxed{{{gold}}}.",
        f"Writing it differently: \\boxed{{{equivalent_form(gold)}}}",
        f"So the answer is \\boxed{{{gold}1}}.",
        f"Careful with signs: \\boxed{{-{gold}}}",
        f"The answer is {gold}.",
        "I am not sure how to finish this.",
        f"Adding up, we get {gold.split(',')[0].strip('() ')}",
    ]
    return [variants[i % len(variants)] for i in range(n)]


def build_corpus(path: Path, problems: int, n: int) -> None:
    rows = []
    envs = [reasongym.make(env_id).unwrapped for env_id in ENVS]
    for i in range(problems):
        env = envs[i % len(envs)]
        problem = env.problem_at(i // len(envs), split="test")
        completions = completions_for(problem.solution or "", problem.answer, n)
        rows.append({"id": problem.id, "gold": problem.answer, "kind": "math", "completions": completions})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def grade_ours(path: Path) -> tuple[float, list[list[bool]]]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "graded.jsonl"
        grade_completions(path, out_path=out, progress=False, verbose=False)
        elapsed = time.perf_counter() - started
        return elapsed, [[bool(flag) for flag in record["correct"]] for record in load_records(out)]


def grade_math_verify(path: Path) -> tuple[float, list[list[bool]]]:
    from math_verify import parse, verify

    started = time.perf_counter()
    flags: list[list[bool]] = []
    for row in load_records(path):
        gold = parse(f"\\boxed{{{row['gold']}}}")
        graded = [bool(verify(gold, parse(completion))) for completion in row["completions"]]
        [pass_at_k(len(graded), sum(graded), k) for k in (1, len(graded))]
        flags.append(graded)
    return time.perf_counter() - started, flags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=300, help="problems in the corpus")
    parser.add_argument("--n", type=int, default=8, help="stored completions per problem")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each grader")
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)  # it logs every unparseable completion
    with tempfile.TemporaryDirectory() as folder:
        corpus, warm = Path(folder) / "corpus.jsonl", Path(folder) / "warm.jsonl"
        build_corpus(corpus, args.problems, args.n)
        build_corpus(warm, min(12, args.problems), args.n)
        grade_ours(warm), grade_math_verify(warm)  # untimed: imports, worker start-up, caches
        ours_s, theirs_s = [], []
        for repeat in range(args.repeats):
            ours_time, ours_flags = grade_ours(corpus)
            theirs_time, theirs_flags = grade_math_verify(corpus)
            ours_s.append(ours_time)
            theirs_s.append(theirs_time)
            print(
                f"repeat {repeat}: ours {ours_time:.2f} s, math-verify {theirs_time:.2f} s ({args.problems} problems)"
            )
    pairs = [
        (a, b)
        for mine, theirs in zip(ours_flags, theirs_flags, strict=True)
        for a, b in zip(mine, theirs, strict=True)
    ]
    agreement = sum(a == b for a, b in pairs) / len(pairs)
    ours_rate = args.problems / statistics.median(ours_s)
    theirs_rate = args.problems / statistics.median(theirs_s)
    print(
        f"ours: {ours_rate:.1f} problems/s ({ours_rate * args.n:.0f} completions/s), end to end with maj@k and CIs"
    )
    print(
        f"math-verify: {theirs_rate:.1f} problems/s ({theirs_rate * args.n:.0f} completions/s), grading only"
    )
    print(
        f"accuracy: ours {sum(a for a, _ in pairs) / len(pairs):.3f}, math-verify {sum(b for _, b in pairs) / len(pairs):.3f}"
    )
    summary = {
        "ours_problems_per_s": round(ours_rate, 1),
        "mathverify_problems_per_s": round(theirs_rate, 1),
        "ratio": round(ours_rate / theirs_rate, 2),
        "agreement": round(agreement, 4),
        "problems": args.problems,
        "n": args.n,
        "repeats": args.repeats,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
