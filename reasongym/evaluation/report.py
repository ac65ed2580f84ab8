r"""Evaluation files in, numbers out: summarise graded records, compare runs, plot pass@k against k.

An evaluation file is JSONL with one graded record per problem (written by
:func:`reasongym.evaluation.evaluate` or :func:`reasongym.evaluation.grade_completions`)::

    {"index": 0, "id": "arithmetic-test-d1-0", "env_id": "reasongym/Arithmetic-v0", "split": "test",
     "kind": "math", "gold": "152", "completions": ["...", ...], "extracted": ["152", null, ...],
     "outcomes": ["correct", "unparseable", ...], "correct": [true, false, ...],
     "difficulty": 1, "subject": null, "year": null}

``correct`` entries are ``null`` when the gold answer itself cannot be graded; such problems are left out
of every metric and counted as ``ungradable``. Metrics per problem, then averaged over problems: pass@k
(Chen et al. 2021, unbiased: any of k samples right), pass^k (tau-bench's reliability, unbiased: all k
right), maj@k (majority vote over every k-subset of the n samples, exactly: the samples graded correct vote
for the gold answer, wrong answers the verifier deems equivalent vote together, ties are split; `MAJ_AT_K_NOTE`),
and avg@n (mean accuracy of all n samples). Intervals are percentile
bootstrap intervals over problems. Nothing here imports torch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reasongym.errors import ConfigError
from reasongym.evaluation.config import check_ks
from reasongym.evaluation.estimators import (
    avg_at_n,
    bootstrap_ci,
    count_votes,
    maj_at_k,
    pass_at_k,
    pass_hat_k,
)
from reasongym.evaluation.records import load_records
from reasongym.verifiers.base import VERIFY_TIMEOUT_S

BREAKDOWN_FIELDS = ("difficulty", "subject", "year")
"""Record fields that the report breaks results down by, where records carry them."""
MAJ_AT_K_NOTE = (
    "maj@k is the exact mean over every k of the n samples (ties split evenly), so maj@1 = pass@1; earlier "
    "reasongym versions voted on the first k samples only, so maj@k figures they reported can differ"
)
"""What `compare_reports` and ``reasongym regrade`` say under a table with maj@k."""


@dataclass(frozen=True)
class EvalReport:
    """Aggregate results of one evaluation file."""

    env_id: str | None
    """The environment the problems came from, when known."""
    split: str | None
    """The split evaluated, when known."""
    n: int
    """Samples per problem (the smallest count over problems, if they differ)."""
    ks: tuple[int, ...]
    """The k values of pass@k and maj@k."""
    num_problems: int
    """Problems that entered the metrics (gradable ones)."""
    num_ungradable: int
    """Problems left out because their gold answer cannot be graded, or grading a sample ran out of time."""
    metrics: dict[str, float]
    """``pass@k``, ``pass^k``, ``maj@k`` for each k, and ``avg@n``: means over problems."""
    intervals: dict[str, tuple[float, float]]
    """Bootstrap confidence interval of each metric."""
    breakdown: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """Field (difficulty, subject, year) -> value -> ``count`` and each metric, where records have it."""
    path: str | None = None
    """The evaluation file, when there is one."""
    temperature: float | None = None
    """The sampling temperature the records were made with (their settings), when known."""
    truncated: int = 0
    """Completions cut at the length limit (finish reason ``length``): their answers may be missing."""
    completions: int = 0
    """Completions graded in all."""
    identical: int = 0
    """Problems whose samples (two or more) are all the same text."""

    @property
    def sampling_warning(self) -> str | None:
        """A warning when every problem's samples are identical although the temperature is above 0.

        A server that ignores the sampling settings (``transformers serve`` ignores ``n`` and temperature)
        returns copies, and pass@k then equals pass@1.
        """
        if not (self.n >= 2 and self.temperature and self.identical and self.identical >= self.num_problems):
            return None
        return (
            f"all {self.n} samples of each of the {self.identical} problems are identical at temperature "
            f"{self.temperature:g}, so pass@k = pass@1 and maj@k says nothing; a model server that ignores "
            "the sampling settings does this (`transformers serve` ignores n and temperature): check the "
            "server, or evaluate with --n 1"
        )

    num_timed_out: int = 0
    """Of ``num_ungradable``: problems left out because grading a sample ran out of time (outcome
    ``timeout``); ``reasongym regrade`` grades them again."""

    def table(self) -> str:
        """The report as a plain-text table (what ``evaluate`` prints)."""
        return format_report(self)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        data = asdict(self)
        data["intervals"] = {key: list(value) for key, value in self.intervals.items()}
        return data


def answer_equivalence(kind: str, *, timeout: float = VERIFY_TIMEOUT_S) -> Callable[[str, str], bool]:
    """When two extracted answers are the same maj@k candidate.

    Math answers are equivalent when the math grader accepts one as the other (``"1/2"`` and ``"0.5"``);
    for every other kind the extracted answers are already canonical (a label, an integer, yes/no), so
    equality of the strings decides.
    """
    if kind != "math":
        return lambda first, second: first == second
    from reasongym.verifiers.math.grade import verify_math_answer  # loads sympy: only when needed

    return lambda first, second: (
        first == second or bool(verify_math_answer(second, first, timeout=timeout).correct)
    )


def problem_scores(
    record: Mapping[str, Any], ks: Sequence[int], equivalent: Callable[[str, str], bool] | None = None
) -> dict[str, float] | None:
    """pass@k, pass^k, maj@k and avg@n of one graded record; None when the problem is ungradable.

    Args:
        record: A graded record with ``correct`` and ``extracted`` lists.
        ks: The k values; each at most the record's sample count.
        equivalent: Which extracted answers vote together; default from the record's ``kind``.
    """
    correct = record["correct"]
    if not correct or any(flag is None for flag in correct):
        return None
    n = len(correct)
    votes = equivalent or answer_equivalence(record.get("kind", "math"))
    extracted = record.get("extracted") or [None] * n
    scores = {f"pass@{k}": pass_at_k(n, int(sum(correct)), k) for k in ks}
    scores.update({f"pass^{k}": pass_hat_k(n, int(sum(correct)), k) for k in ks})
    counted = count_votes(extracted, correct, votes)
    scores.update({f"maj@{k}": maj_at_k(counted, k) for k in ks})
    scores["avg@n"] = avg_at_n(correct)
    return scores


def _sample_counts(records: Sequence[Mapping[str, Any]], path: str | os.PathLike[str] | None) -> list[int]:
    """Graded samples per record; ConfigError for no records, ungraded ones, or a record without samples."""
    if not records:
        raise ConfigError("no graded records to summarize (the evaluation file is empty)")
    ungraded = next(
        (i for i, record in enumerate(records) if not isinstance(record.get("correct"), list)), None
    )
    if ungraded is not None:
        where = f"{path}: record" if path is not None else "record"
        raise ConfigError(
            f"{where} {ungraded + 1} has no 'correct' list: these are not graded records (completions to "
            "grade?); grade them first with `reasongym eval --completions FILE [ENV_ID] --out graded.jsonl`"
        )
    counts = [len(record["correct"]) for record in records]
    if min(counts) < 1:
        raise ConfigError(
            f"record {records[counts.index(min(counts))].get('id')!r} has no graded completions"
        )
    return counts


def summarize(
    records: Sequence[Mapping[str, Any]],
    *,
    ks: Sequence[int] | None = None,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    path: str | os.PathLike[str] | None = None,
) -> EvalReport:
    """Aggregate graded records into an :class:`EvalReport`.

    Args:
        records: Graded records, one per problem.
        ks: The k values of pass@k and maj@k; None: powers of two up to n, and n.
        confidence: Level of the bootstrap intervals.
        resamples: Bootstrap resamples.
        seed: Seed of the bootstrap.
        path: The file the records came from, kept in the report.

    Returns:
        The report; its metric keys are ``pass@k``, ``pass^k``, ``maj@k`` and ``avg@n`` (n written out, e.g.
        ``avg@8``).

    Raises:
        ConfigError: No records, a record without samples, or a k above the sample count.
    """
    counts = _sample_counts(records, path)
    n = min(counts)
    ks = check_ks(ks, n)
    caches: dict[str, Callable[[str, str], bool]] = {}
    scored = []
    for record in records:
        kind = record.get("kind", "math")
        equivalent = caches.setdefault(kind, answer_equivalence(kind))
        scores = problem_scores(record, ks, equivalent)
        if scores is not None:
            scored.append((record, scores))
    avg_key = f"avg@{n}" if len(set(counts)) == 1 else "avg@n"
    rows = [{(avg_key if key == "avg@n" else key): value for key, value in s.items()} for _, s in scored]
    metrics, intervals = _aggregate(rows, confidence, resamples, seed)
    first = records[0]
    return EvalReport(
        env_id=first.get("env_id"),
        split=first.get("split"),
        n=n,
        ks=ks,
        num_problems=len(scored),
        num_ungradable=len(records) - len(scored),
        metrics=metrics,
        intervals=intervals,
        breakdown=_breakdown([r for r, _ in scored], rows),
        path=None if path is None else str(path),
        temperature=(first.get("settings") or {}).get("temperature"),
        completions=sum(counts),
        **_tallies(records),
    )


def _tallies(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Timed-out problems, completions cut at the length limit, problems whose samples are all alike."""
    return {
        "num_timed_out": sum(
            "timeout" in (r.get("outcomes") or ()) and None in r["correct"] for r in records
        ),
        "truncated": sum(reason == "length" for r in records for reason in r.get("finish_reasons") or ()),
        "identical": sum(
            len(r.get("completions") or ()) >= 2 and len(set(r["completions"])) == 1 for r in records
        ),
    }


def _aggregate(
    rows: Sequence[Mapping[str, float]], confidence: float, resamples: int, seed: int
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    if not rows:
        return {}, {}
    metrics, intervals = {}, {}
    for key in rows[0]:
        values = [row[key] for row in rows]
        metrics[key] = float(np.mean(values))
        intervals[key] = bootstrap_ci(values, confidence=confidence, resamples=resamples, seed=seed)
    return metrics, intervals


def _breakdown(
    records: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, float]]
) -> dict[str, dict[str, dict[str, float]]]:
    """Per-field groups of rows: field -> value -> count and mean of each metric."""
    result: dict[str, dict[str, dict[str, float]]] = {}
    for name in BREAKDOWN_FIELDS:
        groups: dict[str, list[Mapping[str, float]]] = {}
        for record, row in zip(records, rows, strict=True):
            value = record.get(name)
            if value is not None:
                groups.setdefault(str(value), []).append(row)
        if groups:
            result[name] = {
                value: {
                    "count": float(len(group)),
                    **{k: float(np.mean([r[k] for r in group])) for k in group[0]},
                }
                for value, group in sorted(groups.items(), key=lambda item: _sort_key(item[0]))
            }
    return result


def _sort_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


# ---------------------------------------------------------------------------------------------- reading


def load_report(path: str | os.PathLike[str], *, ks: Sequence[int] | None = None) -> EvalReport:
    """Summarize a graded evaluation file."""
    return summarize(load_records(path), ks=ks, path=path)


# ---------------------------------------------------------------------------------------------- text


def format_report(report: EvalReport) -> str:
    """A plain-text table: each metric with its interval, then the breakdowns."""
    where = ", ".join(
        part for part in (report.split, f"{report.num_problems} problems", f"n={report.n}") if part
    )
    sampled = f", temperature {report.temperature:g}" if isinstance(report.temperature, int | float) else ""
    lines = [f"{report.env_id or 'stored completions'} ({where}{sampled})"]
    if report.num_ungradable and not report.num_timed_out:
        lines.append(f"  {report.num_ungradable} problems left out: their gold answer cannot be graded")
    elif report.num_ungradable:
        lines.append(
            f"  {report.num_ungradable} problems left out: {report.num_ungradable - report.num_timed_out} whose "
            f"gold answer cannot be graded, {report.num_timed_out} where grading a sample ran out of time "
            "(`reasongym regrade` grades them again)"
        )
    if report.sampling_warning:
        lines.append(f"  warning: {report.sampling_warning}")
    if report.truncated:
        lines.append(
            f"  {report.truncated} of {report.completions} completions were cut at the length limit "
            "(max_new_tokens) before they ended"
        )
    lines.append(f"  {'metric':<10}{'value':>8}   95% interval (bootstrap over problems)")
    for key, value in report.metrics.items():
        low, high = report.intervals[key]
        lines.append(f"  {key:<10}{value:>8.3f}   [{low:.3f}, {high:.3f}]")
    wanted = (
        f"pass@{report.ks[0]}",
        f"pass@{report.ks[-1]}",
        f"pass^{report.ks[-1]}",
        f"maj@{report.ks[-1]}",
    )
    shown = [key for key in dict.fromkeys(wanted) if key in report.metrics]
    shown += [key for key in report.metrics if key.startswith("avg@")]
    for name, groups in report.breakdown.items():
        lines.append(f"  by {name}:")
        lines.append("    " + f"{'value':<22}{'count':>6}" + "".join(f"{key:>9}" for key in shown))
        for value, row in groups.items():
            cells = "".join(f"{row[key]:>9.3f}" for key in shown)
            lines.append(f"    {value[:21]:<22}{int(row['count']):>6}{cells}")
    return "\n".join(lines)


def compare_reports(reports: Sequence[EvalReport], labels: Sequence[str] | None = None) -> str:
    """Two or more reports side by side: one row per metric, one column per report.

    Metrics missing from a report (a k above its n) show as ``-``.
    """
    if len(reports) < 1:
        raise ConfigError("compare_reports needs at least one report")
    labels = list(labels) if labels is not None else [_label(report, i) for i, report in enumerate(reports)]
    if len(labels) != len(reports):
        raise ConfigError(f"{len(labels)} labels for {len(reports)} reports; give one label per report")
    keys: list[str] = []
    for report in reports:
        keys.extend(key for key in report.metrics if key not in keys)
    width = max(12, *(len(label) + 2 for label in labels))
    lines = [f"{'metric':<10}" + "".join(f"{label:>{width}}" for label in labels)]
    lines.append(f"{'problems':<10}" + "".join(f"{report.num_problems:>{width}}" for report in reports))
    for key in keys:
        cells = [f"{r.metrics[key]:.3f}" if key in r.metrics else "-" for r in reports]
        lines.append(f"{key:<10}" + "".join(f"{cell:>{width}}" for cell in cells))
    if any(key.startswith("maj@") for key in keys):
        lines.append(f"({MAJ_AT_K_NOTE})")
    return "\n".join(lines)


def comparability_warning(reports: Sequence[EvalReport]) -> str | None:
    """Why reports side by side may not be comparable (environments, splits, problem or sample counts).

    Returns:
        The reason, or None when the reports match.
    """
    differs = [
        f"{name} ({', '.join(str(value) for value in values)})"
        for name, values in (
            ("environments", [r.env_id for r in reports]),
            ("splits", [r.split for r in reports]),
            ("problem counts", [r.num_problems for r in reports]),
            ("samples per problem", [r.n for r in reports]),
        )
        if len(set(values)) > 1
    ]
    if not differs:
        return None
    return (
        f"the files differ in {'; '.join(differs)}: their metrics are averages over different problems or "
        "samples, so differences between columns are not only the models'"
    )


def _label(report: EvalReport, position: int) -> str:
    return Path(report.path).stem if report.path else f"run{position}"
