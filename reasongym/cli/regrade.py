"""``reasongym regrade FILE``: grade stored records again with today's verifiers, into a new file."""

from __future__ import annotations

import argparse
import json
from typing import Any

from reasongym.cli.args import EXIT_OK


def cmd_regrade(args: argparse.Namespace) -> int:
    """Regrade ``args.file``; print the changed verdicts by reason and the metrics before and after."""
    from reasongym.evaluation.regrade import regrade

    report = regrade(args.file, args.out, env_id=args.env_id)
    print(report.table())
    summary = {
        "out": report.out_path,
        "records": report.records,
        "verdicts": report.verdicts,
        "changed": len(report.changes),
        "not_regradable": report.not_regradable,
        "by_reason": {f"{b} -> {a}: {r}": len(c) for (b, a, r), c in report.groups().items()},
        "before": report.before,
        "after": report.after,
        "versions": {f"{old} -> {new}": count for (old, new), count in report.versions.items()},
        "changed_under_same_version": len(report.unversioned_changes()),
        "settings_differ": len(report.settings_differ),
    }
    print(json.dumps(summary))
    return EXIT_OK


def add_regrade_parser(commands: Any) -> None:
    """Add the ``regrade`` command to the ``reasongym`` subcommands."""
    sub = commands.add_parser("regrade", help="grade stored records again with today's verifiers (new file)")
    sub.add_argument("file", metavar="FILE", help="an evaluation file (eval --out) or a run's samples.jsonl")
    sub.add_argument(
        "env_id",
        metavar="ENV_ID",
        nargs="?",
        help="regrade in this environment, with its registered options (default: each record's environment, "
        "with its registered options; a record's own options are reported, never used)",
    )
    sub.add_argument("--out", help="the new file (default FILE's name with .regraded.jsonl); must not exist")
    sub.set_defaults(run=cmd_regrade)
