"""The judge verifier against the rule verifier on StrategyQA yes/no answers: agreement, ungradable rate, cache.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_judge [--questions 20] [--max-new-tokens 96]``
(about 5 minutes on two busy cores; needs ``$REASONGYM_SMOLLM2_GGUF``, StrategyQA under
``$REASONGYM_DATA_DIR`` and ``transformers serve``; without any of them it prints why and skips).

``transformers serve`` serves SmolLM2-135M-Instruct (dequantized from the GGUF, as the tests do:
``benchmarks/harness/openai_server.py``) on 127.0.0.1 on a free port, on CPU with one thread, and is stopped by
its pid at the end. For the first ``--questions`` problems of ``reasongym/StrategyQA-v0`` (validation), four
answers each:

- ``real``: SmolLM2's own greedy answer, sampled through the same server (``reasongym.evaluate`` with the
  served model, the environment's prompt, ``--max-new-tokens`` tokens);
- ``right``: the annotated facts, then "So the answer is <gold>.";
- ``wrong``: the same facts, then the other answer (a conclusion the justification contradicts);
- ``right_first``: "<Gold>. " then the facts (the answer first, justification after).

Each answer is graded by the rule verifier (``reasongym.make("reasongym/StrategyQA-v0")``, kind ``yesno``)
and by the judge (the same environment made with ``judge=JudgeConfig(...)``, SmolLM2 itself judging: a weak
judge; this measures the path and its failure rates, not a good judge). Reported: per kind of answer and
overall, how often the judge says CORRECT / INCORRECT / nothing parseable, its agreement with the rule
verdict where it gave one (and Cohen's kappa), the ungradable rate, the seconds per judge request; then
the cache: the same items graded again in the same process (answered from the cache: requests sent, time)
and by a fresh judge reading the cache file (a later run). Ungradable verdicts are not cached, so both
repeats ask again exactly for those.

The last line is one JSON object (``{"skipped": reason}`` when it cannot run).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.harness import openai_server

os.environ.setdefault("OMP_NUM_THREADS", "1")

ENV = "reasongym/StrategyQA-v0"
KINDS = ("real", "right", "wrong", "right_first")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20, help="StrategyQA validation problems")
    parser.add_argument("--max-new-tokens", type=int, default=96, help="tokens of SmolLM2's own answers")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per judge request")
    return parser.parse_args()


def skip_reason(server_module: ModuleType) -> str | None:
    """Why the benchmark cannot run here, or None."""
    if importlib.util.find_spec("openai") is None:
        return "the openai package is missing (pip install 'reasongym[serve]')"
    if server_module.transformers_cli() is None:
        return "`transformers serve` is not installed (pip install 'transformers[serving]')"
    gguf = os.environ.get("REASONGYM_SMOLLM2_GGUF")
    if not gguf or not Path(gguf).is_file():
        return f"the real model is missing (REASONGYM_SMOLLM2_GGUF={gguf!r})"
    import reasongym

    try:
        reasongym.make(ENV).unwrapped.problem_at(0, split="validation")
    except Exception as exc:  # noqa: BLE001 - any failure to load the data is a reason to skip
        return f"StrategyQA is not available ({type(exc).__name__}: {str(exc)[:120]})"
    return None


def constructed(problem: Any) -> dict[str, str]:
    """The three written answers of one problem (module docstring)."""
    gold = problem.answer
    other = "no" if gold == "yes" else "yes"
    facts = (problem.solution or "").strip()
    return {
        "right": f"{facts} So the answer is {gold}.",
        "wrong": f"{facts} So the answer is {other}.",
        "right_first": f"{gold.capitalize()}. {facts}",
    }


def real_answers(server: Any, args: argparse.Namespace, records: Path) -> list[str]:
    """SmolLM2's greedy answers to the first ``--questions`` problems, through the server."""
    from reasongym.evaluation import evaluate, load_records
    from reasongym.generation import OpenAIGenerator, ServedModelConfig

    settings = ServedModelConfig(model=server.model, base_url=server.base_url, max_concurrency=1)
    with OpenAIGenerator(settings) as generator:
        evaluate(
            generator,
            ENV,
            split="validation",
            num_problems=args.questions,
            n=1,
            temperature=0.0,
            max_new_tokens=args.max_new_tokens,
            out_path=records,
            progress=False,
            verbose=False,
        )
    by_index = {int(record["index"]): record["completions"][0] for record in load_records(records)}
    return [by_index[i] for i in range(args.questions)]


def kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of (rule, judge) verdict pairs; None when chance agreement is total."""
    if not pairs:
        return None
    observed = sum(a == b for a, b in pairs) / len(pairs)
    rule_yes = sum(a for a, _ in pairs) / len(pairs)
    judge_yes = sum(b for _, b in pairs) / len(pairs)
    chance = rule_yes * judge_yes + (1 - rule_yes) * (1 - judge_yes)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, agreement and kappa of graded rows (each with ``rule`` and ``judge`` verdicts)."""
    judged = [(row["rule"], row["judge"]) for row in rows if row["judge"] is not None]
    outcomes = Counter(row["judge_outcome"] for row in rows)
    return {
        "n": len(rows),
        "rule_correct": sum(row["rule"] for row in rows),
        "judge_correct": sum(row["judge"] is True for row in rows),
        "judge_incorrect": sum(row["judge"] is False for row in rows),
        "ungradable": len(rows) - len(judged),
        "ungradable_rate": (len(rows) - len(judged)) / len(rows) if rows else None,
        "ungradable_outcomes": {k: v for k, v in outcomes.items() if k not in ("correct", "wrong")},
        "agreement": sum(a == b for a, b in judged) / len(judged) if judged else None,
        "kappa": kappa(judged),
    }


def grade(
    server: Any, problems: list[Any], answers: list[dict[str, str]], cache: Path, timeout: float
) -> dict[str, Any]:
    """Grade every answer by rule and by judge, then again from the cache, then by a judge reading the file."""
    import reasongym
    from reasongym.verifiers.judge import JudgeConfig, judge_for

    config = JudgeConfig(
        model=server.model,
        base_url=server.base_url,
        timeout=timeout,
        max_concurrency=1,
        cache_path=str(cache),
    )
    rule_env, judge_env = reasongym.make(ENV).unwrapped, reasongym.make(ENV, judge=config).unwrapped
    judge = judge_for(config)
    start = time.perf_counter()
    rows = _graded_rows(rule_env, judge_env, problems, answers)
    first_s, first_requests = time.perf_counter() - start, judge.requests
    items = [
        (p.question, p.answer, text)
        for p, texts in zip(problems, answers, strict=True)
        for text in texts.values()
    ]
    return {
        "rows": rows,
        "first": {
            "items": len(items),
            "requests": first_requests,
            "seconds": first_s,
            "s_per_request": first_s / max(first_requests, 1),
        },
        **_cached_passes(judge, config, items, rows),
        "cached_verdicts": sum(row["judge"] is not None for row in rows),
    }


def _graded_rows(
    rule_env: Any, judge_env: Any, problems: list[Any], answers: list[dict[str, str]]
) -> list[dict[str, Any]]:
    """One row per answer: its kind, the rule verifier's verdict and the judge's (with its raw reply)."""
    rows = []
    for problem, texts in zip(problems, answers, strict=True):
        kinds, completions = list(texts), list(texts.values())
        for kind, text, rule, verdict in zip(
            kinds,
            completions,
            rule_env.score_many(problem, completions),
            judge_env.score_many(problem, completions),
            strict=True,
        ):
            rows.append(
                {
                    "id": problem.id,
                    "kind": kind,
                    "gold": problem.answer,
                    "completion": text,
                    "rule": bool(rule.correct),
                    "judge": verdict.correct,
                    "judge_outcome": verdict.outcome.value,
                    "judge_reply": verdict.extracted,
                }
            )
    return rows


def _cached_passes(judge: Any, config: Any, items: list[tuple], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The same items again: by the same judge (its memory), then by a new judge reading the cache file."""
    from reasongym.verifiers.judge import JudgeVerifier

    first_requests, start = judge.requests, time.perf_counter()
    again = judge.verify_many(items)
    again_s, again_requests = time.perf_counter() - start, judge.requests - first_requests
    later = JudgeVerifier(config)
    start = time.perf_counter()
    from_file = later.verify_many(items)
    file_s = time.perf_counter() - start
    later.close()
    cache = Path(config.cache_path)  # absent when no verdict could be cached (all ungradable)
    cached_lines = len(cache.read_text().splitlines()) if cache.exists() else 0

    def same(verdicts: list[Any]) -> int:
        return sum(
            v.correct == r["judge"] for v, r in zip(verdicts, rows, strict=True) if r["judge"] is not None
        )

    def hits(verdicts: list[Any]) -> int:
        return sum(v.reason == "The judge's cached verdict." for v in verdicts)

    return {
        "same_process": {
            "requests": again_requests,
            "seconds": again_s,
            "hits": hits(again),
            "same_verdicts": same(again),
        },
        "from_file": {
            "requests": later.requests,
            "seconds": file_s,
            "cached_lines": cached_lines,
            "hits": hits(from_file),
            "same_verdicts": same(from_file),
        },
    }


def _print(result: dict[str, Any]) -> None:
    print(
        f"{'answers':<12}{'n':>4}{'rule ok':>9}{'CORRECT':>9}{'INCORRECT':>11}{'none':>6}{'agree':>7}{'kappa':>7}"
    )
    for name, row in result["by_kind"].items():
        agree = "-" if row["agreement"] is None else f"{row['agreement']:.2f}"
        kap = "-" if row["kappa"] is None else f"{row['kappa']:.2f}"
        print(
            f"{name:<12}{row['n']:4d}{row['rule_correct']:9d}{row['judge_correct']:9d}{row['judge_incorrect']:11d}"
            f"{row['ungradable']:6d}{agree:>7}{kap:>7}"
        )
    print(
        f"cache: first pass {result['first']}, same process {result['same_process']}, "
        f"from the file {result['from_file']}"
    )


def main() -> None:
    args = _parse_args()
    reason = skip_reason(openai_server)
    if reason is not None:
        print(json.dumps({"skipped": reason}))
        return
    import reasongym

    env = reasongym.make(ENV).unwrapped
    problems = [env.problem_at(i, split="validation") for i in range(args.questions)]
    folder = openai_server.smollm2_folder(Path(os.environ["REASONGYM_SMOLLM2_GGUF"]))
    with tempfile.TemporaryDirectory() as tmp:
        with openai_server.running_server(folder, Path(tmp) / "serve.log") as server:
            start = time.perf_counter()
            real = real_answers(server, args, Path(tmp) / "answers.jsonl")
            sampling_s = time.perf_counter() - start
            answers = [{"real": text, **constructed(p)} for p, text in zip(problems, real, strict=True)]
            result = grade(server, problems, answers, Path(tmp) / "judge_cache.jsonl", args.timeout)
    rows = result.pop("rows")
    result["by_kind"] = {kind: summarize([r for r in rows if r["kind"] == kind]) for kind in KINDS}
    result["by_kind"]["all"] = summarize(rows)
    result["questions"], result["sampling_s"] = args.questions, sampling_s
    result["judge_replies"] = dict(Counter(str(r["judge_reply"]) for r in rows).most_common(8))
    _print(result)
    for row in rows:
        if row["judge"] is not None and row["judge"] != row["rule"]:
            print(
                f"  disagree {row['kind']}: gold {row['gold']} rule {row['rule']} judge {row['judge']}: "
                f"{row['completion'][-90:]!r}"
            )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
