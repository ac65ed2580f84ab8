"""Grade stored records again with today's verifiers: a new file, every changed verdict, the metric before and after.

Records carry what a regrade needs (see :mod:`reasongym.envs.core` ``step`` info and
:mod:`reasongym.verifiers.version`): the environment id with its version, the split, index, difficulty
and source seed of the problem, the verifier version and the verdicts. :func:`regrade` reads a file of
evaluation records (``reasongym eval``: one per problem, ``completions`` lists) or training samples
(``samples.jsonl``: one ``completion`` per row), rebuilds each problem, grades every completion with the
environment's grading of today (records without an environment, graded from ``gold`` and ``kind``, with
``verify``), and writes the regraded records to a new file; the old file is never written. The report
groups the changed verdicts by reason (numbers masked, so "109 is not 67" and "220 is not 129" are one
reason) and counts the records per (version they were graded under, today's version), so a record graded
under older rules (``math/v1`` read today by ``math/v2``) says so; a verdict that changed under an unchanged
version is flagged (a rules change without a version raise, or a judge answering differently). A record of a
multi-turn environment (whose completion holds tool output between turns) is copied unchanged and
counted as not regradable, as is a sample row without its replay fields (written before they existed).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError
from reasongym.evaluation.records import load_records
from reasongym.evaluation.report import MAJ_AT_K_NOTE, summarize
from reasongym.verifiers import Verdict, verify_many
from reasongym.verifiers.version import verifier_version

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass
class Change:
    """One verdict that the regrade changed."""

    line: int
    """The record's line in the file (from 1)."""
    sample: int
    """Which completion of the record (0 for a training sample)."""
    before: str
    """``outcome`` before (``correct``, ``wrong``, ...)."""
    after: str
    """``outcome`` now."""
    reason: str
    """The verifier's reason now."""
    extracted: tuple[str | None, str | None]
    """The extracted answer before and now."""
    versions: tuple[str | None, str]
    """The verifier version the record was graded under (None when it names none) and today's."""


@dataclass
class RegradeReport:
    """What a regrade found."""

    out_path: str
    records: int = 0
    verdicts: int = 0
    not_regradable: int = 0
    changes: list[Change] = field(default_factory=list)
    before: dict[str, float] = field(default_factory=dict)
    after: dict[str, float] = field(default_factory=dict)
    versions: dict[tuple[str | None, str], int] = field(default_factory=dict)
    """Regraded records per (verifier version they were graded under, today's version)."""
    settings_differ: list[str] = field(default_factory=list)
    """One line per record of another environment, or whose environment options differ from those it was
    regraded with (the registered ones)."""

    def unversioned_changes(self) -> list[Change]:
        """Changes of records graded under today's version: rules changed without a raise, or a judge."""
        return [change for change in self.changes if change.versions[0] == change.versions[1]]

    def groups(self) -> dict[tuple[str, str, str], list[Change]]:
        """Changes grouped by reason: ``(outcome before, outcome now, reason now with each number as #)``."""
        grouped: dict[tuple[str, str, str], list[Change]] = defaultdict(list)
        for change in self.changes:
            grouped[(change.before, change.after, _NUMBER.sub("#", change.reason))].append(change)
        return dict(sorted(grouped.items(), key=lambda item: -len(item[1])))

    def table(self) -> str:
        """The changes by reason, then the metrics before and after, as text."""
        lines = [
            f"{len(self.changes)} of {self.verdicts} verdicts changed ({self.records} records, "
            f"{self.not_regradable} not regradable); written to {self.out_path}"
        ]
        for (before, after, reason), changes in self.groups().items():
            lines.append(f"  {before} -> {after} ({len(changes)}): {reason}")
            for change in changes[:5]:
                old, new = change.extracted
                lines.append(f"      line {change.line} sample {change.sample}: extracted {old!r} -> {new!r}")
        for (old, new), count in sorted(self.versions.items(), key=lambda item: str(item[0])):
            changed = sum(change.versions == (old, new) for change in self.changes)
            lines.append(
                f"  graded under {old or 'an unrecorded version'}, now {new}: {count} records, "
                f"{changed} verdicts changed"
            )
        if self.unversioned_changes():
            lines.append(
                f"  warning: {len(self.unversioned_changes())} verdicts changed under an unchanged verifier "
                "version (rules changed without a version raise, or a judge that answers differently)"
            )
        if self.settings_differ:
            lines.append(
                f"  warning: {len(self.settings_differ)} records name environment settings that differ "
                "from those regraded against (a records file never chooses its environment):"
            )
            lines += [f"      {text}" for text in self.settings_differ[:5]]
        lines.append(f"  {'metric':<12}{'before':>10}{'after':>10}")
        lines += [
            f"  {k:<12}{self.before[k]:>10.4f}{self.after.get(k, float('nan')):>10.4f}" for k in self.before
        ]
        if any(key.startswith("maj@") for key in self.before):  # both columns are today's estimator
            lines.append(f"  ({MAJ_AT_K_NOTE})")
        return "\n".join(lines)


class _Environments:
    """One made environment per (id, problem seed), kept for the whole file.

    The environment is the one the user names (``env_id``), else each record's id, always with its registered
    options: a record's own ``settings.env_config`` (a data folder, a loader option) is compared, never
    obeyed, so a records file cannot choose the gold answers it is graded against.
    """

    def __init__(self, named: str | None) -> None:
        from reasongym.envs import spec

        self.named = None if named is None else spec(named).id
        self._made: dict[str, Any] = {}
        self.differ: list[str] = []
        """One line per record whose environment or settings differ from those regraded against."""

    def get(self, env_id: str, seed: int | None) -> Any:
        from reasongym.envs import make

        key = json.dumps([env_id, seed])
        if key not in self._made:
            self._made[key] = make(env_id, **({"source_kwargs": {"seed": seed}} if seed is not None else {}))
        return self._made[key].unwrapped

    def environment_of(self, record: Mapping[str, Any], line: int) -> Any:
        """The environment to regrade ``record`` in; None (and a line in ``differ``) for another env's record."""
        from reasongym.envs import spec
        from reasongym.evaluation.records import env_options

        env_id = spec(record["env_id"]).id
        if self.named is not None and env_id != self.named:
            self.differ.append(
                f"line {line}: its records are of {env_id!r}, not of {self.named!r}; not regraded"
            )
            return None
        seed = record.get("problem_seed", record.get("seed"))
        try:
            env = self.get(env_id, seed)
        except TypeError as exc:  # a seed given to a source that takes none (a dataset)
            raise ConfigError(f"line {line}: problem seed {seed!r} does not fit {env_id}: {exc}") from None
        theirs = (record.get("settings") or {}).get("env_config")
        ours = env_options(env)
        if theirs is not None and theirs != ours:
            keys = sorted(k for k in {*theirs, *(ours or {})} if theirs.get(k) != (ours or {}).get(k))
            self.differ.append(
                f"line {line}: settings.env_config differs in {keys}; regraded with {env_id}'s own"
            )
        return env


def _single_turn(env: Any) -> bool:
    from reasongym.envs.core import ReasoningEnv

    return type(env).step is ReasoningEnv.step


def _grade_record(
    record: Mapping[str, Any], envs: _Environments, line: int
) -> tuple[list[Verdict], str] | None:
    """Today's verdicts of one record and the verifier version that gave them; None if not regradable."""
    completions = record["completions"] if "completions" in record else [record.get("completion")]
    if not all(isinstance(text, str) for text in completions):
        return None
    env_id = record.get("env_id")
    if env_id is None:
        kind = record.get("kind", "math")
        if "gold" not in record:
            return None
        return verify_many(
            completions, str(record["gold"]), kind, choices=record.get("choices")
        ), verifier_version(kind)
    settings = record.get("settings") or {}
    if "split" not in record or "index" not in record:
        return None
    difficulty = settings.get("difficulty", record.get("difficulty") if "completion" in record else None)
    env = envs.environment_of(record, line)
    if env is None or not _single_turn(env):
        return None
    problem = env.problem_at(int(record["index"]), split=record["split"], difficulty=difficulty)
    return env.score_many(problem, completions), env.verifier_version(problem)


def _old_verdicts(record: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    if "completions" in record:
        return list(
            zip(
                record.get("outcomes", []),
                record.get("correct", []),
                record.get("extracted", []),
                strict=False,
            )
        )
    return [(record.get("outcome", ""), record.get("correct"), record.get("extracted"))]


def _updated(record: dict[str, Any], verdicts: list[Verdict], version: str) -> dict[str, Any]:
    previous = {
        key: record.get(key)
        for key in ("outcomes", "correct", "extracted", "outcome", "verifier")
        if key in record
    }
    fields: dict[str, Any] = {"verifier": version, "regraded_from": previous}
    if "completions" in record:
        fields.update(
            outcomes=[v.outcome.value for v in verdicts],
            correct=[v.correct for v in verdicts],
            extracted=[v.extracted for v in verdicts],
            reasons=[v.reason for v in verdicts],
        )
    else:
        verdict = verdicts[0]
        fields.update(
            outcome=verdict.outcome.value,
            correct=verdict.correct,
            extracted=verdict.extracted,
            reason=verdict.reason,
        )
    return {**record, **fields}


def _metrics(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Accuracy over gradable verdicts; pass@k and friends too for evaluation records."""
    flags = [
        c
        for r in records
        for c in (r["correct"] if isinstance(r.get("correct"), list) else [r.get("correct")])
    ]
    graded = [bool(c) for c in flags if c is not None]
    metrics = {"accuracy": sum(graded) / len(graded)} if graded else {}
    if records and all(isinstance(r.get("correct"), list) for r in records):
        try:
            metrics.update(summarize(records, resamples=10).metrics)
        except ConfigError:
            pass
    return metrics


def regrade(
    path: str | os.PathLike[str], out_path: str | os.PathLike[str] | None = None, env_id: str | None = None
) -> RegradeReport:
    """Grade the records of ``path`` again and write them to ``out_path`` (module docstring).

    Args:
        path: An evaluation file or a ``samples.jsonl``.
        out_path: The new file; default ``<path stem>.regraded.jsonl`` beside ``path``. It must not exist.
        env_id: Regrade in this environment (registered options); records of another environment are
            reported and copied unchanged. None: each record's environment, with its registered options.
            Either way a record's own environment options are reported where they differ, never used.

    Returns:
        The :class:`RegradeReport`: changed verdicts (grouped by reason with ``groups()``), metrics before
        and after.

    Raises:
        ConfigError: ``path`` is missing or holds no records, or ``out_path`` exists or is ``path``.
    """
    source, target = _paths(path, out_path)
    records = load_records(source, cut_off_last_line="error")
    if not records:
        raise ConfigError(f"regrade: {str(source)!r} holds no records")
    report, envs, regraded = RegradeReport(out_path=str(target)), _Environments(env_id), []
    for line, record in enumerate(records, start=1):
        report.records += 1
        graded = _grade_record(record, envs, line)
        if graded is None:
            report.not_regradable += 1
            regraded.append(record)
            continue
        verdicts, version = graded
        versions = (record.get("verifier"), version)
        report.versions[versions] = report.versions.get(versions, 0) + 1
        for sample, ((outcome, _, extracted), verdict) in enumerate(
            zip(_old_verdicts(record), verdicts, strict=False)
        ):
            report.verdicts += 1
            if outcome != verdict.outcome.value:
                report.changes.append(
                    Change(
                        line,
                        sample,
                        outcome,
                        verdict.outcome.value,
                        verdict.reason,
                        (extracted, verdict.extracted),
                        versions,
                    )
                )
        regraded.append(_updated(dict(record), verdicts, version))
    report.before, report.after, report.settings_differ = _metrics(records), _metrics(regraded), envs.differ
    _write_new(target, regraded)
    return report


def _paths(path: str | os.PathLike[str], out_path: str | os.PathLike[str] | None) -> tuple[Path, Path]:
    """The records file to read and the new file to write; ConfigError unless the one exists and the other not."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"regrade: {str(source)!r} is not a file")
    target = Path(out_path) if out_path is not None else source.with_name(f"{source.stem}.regraded.jsonl")
    if target.exists():
        raise ConfigError(
            f"regrade: {str(target)!r} exists; the regrade writes a new file: pass another out path"
        )
    return source, target


def _write_new(target: Path, records: list[dict[str, Any]]) -> None:
    """Write ``records`` to the new file ``target``; a write that fails leaves no partial file behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("x", encoding="utf-8") as handle:
        try:
            handle.writelines(json.dumps(record) + "\n" for record in records)
            handle.flush()
        except BaseException:  # a full disk, Ctrl-C: a partial file would block a rerun with the same --out
            target.unlink(missing_ok=True)
            raise
