"""``reasongym data ENV_ID --out DIR``: a benchmark's splits as files in the data-root layout, downloaded from the
hub where it is reachable or converted from a file you have (``--from FILE --split SPLIT``); then
``REASONGYM_DATA_DIR=DIR`` serves them offline. The layout is `reasongym.envs.benchmarks.data`'s.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

from reasongym.cli.args import EXIT_OK, UsageError


def cmd_data(args: argparse.Namespace) -> int:
    """Write the asked splits of ``args.env_id`` under ``args.out``; one line per file, then how to use them."""
    from reasongym.envs.benchmarks.data import benchmark_entry, entry_source, write_split
    from reasongym.envs.gold_check import UnreadableGoldWarning

    entry = benchmark_entry(args.env_id)
    if entry is None:
        from reasongym.envs.benchmarks import BENCHMARK_ENVS

        raise UsageError(
            f"{args.env_id!r} is not a benchmark with data files (generated environments need none); "
            f"benchmarks: {[e.id for e in BENCHMARK_ENVS]}"
        )
    splits = args.split or list(entry_source(entry).routes)
    if args.from_file is not None and len(splits) != 1:
        raise UsageError(f"--from converts one split: name it with --split (one of {splits})")
    for split in splits:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UnreadableGoldWarning)
            path, count = write_split(entry.id, split, args.out, from_file=args.from_file)
        print(f"wrote {path}: {count} problems ({entry.id}, split {split})")
        for warning in caught:  # golds no answer can match: said beside the file, never found in training
            print(f"  warning: {warning.message}")
    print(f"use it: export REASONGYM_DATA_DIR={args.out}")
    return EXIT_OK


def add_data_parser(commands: Any) -> None:
    """Add the ``data`` command to the ``reasongym`` subcommands."""
    sub = commands.add_parser(
        "data", help="write a benchmark's data files (from the hub, or converted from a file you have)"
    )
    sub.add_argument("env_id", metavar="ENV_ID", help="a benchmark id, e.g. reasongym/GSM8K-v0")
    sub.add_argument("--out", required=True, help="the data root to write into (REASONGYM_DATA_DIR)")
    sub.add_argument("--split", action="append", help="a split to write (repeatable); default: every split")
    sub.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help="convert this file (JSONL, JSON, CSV or Parquet, in any layout the benchmark reads) instead "
        "of downloading; needs --split",
    )
    sub.set_defaults(run=cmd_data)
