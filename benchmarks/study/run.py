"""The command: every (arm, seed) not yet in ``results.jsonl``, then the tables, the plots and the JSON line."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks.harness import report, settings
from benchmarks.study.arms import (
    run_rl,
    run_sft,
    run_star,
    warm_model,
)
from benchmarks.study.measuring import (
    Meter,
)
from benchmarks.study.setting import (
    ARMS,
    ASYNC_ARMS,
    FAMILY_ARMS,
    QUICK_ARMS,
    TEMPERED_ARMS,
    StudySetting,
    dry,
)
from benchmarks.study.summary import diagnostics_table, plot, plot_wall, summarize, wall_table
from reasongym.policy.tiny import (
    make_char_tokenizer,
)


def seeds_from(text: str) -> list[int]:
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def load_records(path: Path, settings: dict) -> list[dict]:
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("settings") == settings]


def _parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, StudySetting, list[str]]:
    """The flags, the sizes (`StudySetting`; ``--dry`` shrinks them) and the arms the flags name."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="study_out")
    parser.add_argument("--seeds", default="0,1,2", help="e.g. 0,1,2 or 0-9")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_ARMS)}")
    parser.add_argument("--family", action="store_true", help=f"only {', '.join(FAMILY_ARMS)}")
    parser.add_argument("--tempered", action="store_true", help=f"only {', '.join(TEMPERED_ARMS)}")
    parser.add_argument("--async", action="store_true", help=f"only {', '.join(ASYNC_ARMS)}")
    args, setting = settings.parse(parser, StudySetting, lambda _: StudySetting(), dry, argv)
    named = {"quick": QUICK_ARMS, "family": FAMILY_ARMS, "tempered": TEMPERED_ARMS, "async": ASYNC_ARMS}
    chosen = [arms for flag, arms in named.items() if getattr(args, flag)]
    arms = list(chosen[0]) if chosen else args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        parser.error(f"unknown arms {unknown}; choose from {list(ARMS)}")
    return args, setting, arms


def _report(records: list[dict], warm: dict[int, dict], out: Path, settings: dict) -> None:
    """Write and print the tables and the plot; end with the JSON line."""
    table, numbers = summarize(records, warm)
    (out / "table.md").write_text(table + "\n")
    (out / "diagnostics.md").write_text(diagnostics_table(records) + "\n")
    plot(records, warm, out / "accuracy_vs_tokens.png")
    print(table)
    print(diagnostics_table(records))
    if any("wall_s" in r for r in records):
        (out / "wall.md").write_text(wall_table(records) + "\n")
        plot_wall(records, warm, out / "accuracy_vs_wall.png")
        print(wall_table(records))
    cpu = sum(r["cpu_s"] + r.get("eval_cpu_s", 0.0) for r in records) + sum(w["cpu_s"] for w in warm.values())
    print(json.dumps({"arms": numbers, "settings": settings, "seeds": sorted(warm), "cpu_s_total": cpu}))


def main(argv: list[str] | None = None) -> None:
    args, setting, arms = _parse_args(argv)
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kept = setting.record()
    results = out / "results.jsonl"
    records = load_records(results, kept)
    done = {(r["arm"], r["seed"]) for r in records}
    warm: dict[int, dict] = {}
    runners: dict[str, Callable[..., dict]] = {"rl": run_rl, "sft": run_sft}
    for seed in seeds_from(args.seeds):
        meter = Meter(make_char_tokenizer(), setting.eval_problems)
        base, tokenizer, warm[seed] = warm_model(seed, meter, out / "warm", setting.warm_max_steps)
        print(
            f"seed {seed}: warm start {warm[seed]['sft_steps']} SFT steps, held-out {warm[seed]['accuracy']:.3f}"
        )
        state = {k: v.clone() for k, v in base.state_dict().items()}
        for name in arms:
            if (name, seed) in done:
                continue
            arm = ARMS[name]
            base.load_state_dict(state)
            if arm.kind == "star":
                record = run_star(arm, base, tokenizer, seed, setting, out / "runs" / name / f"seed-{seed}")
            else:
                record = runners[arm.kind](arm, base, tokenizer, seed, setting)
            record.update({"arm": name, "seed": seed, "settings": kept})
            records.append(report.write_record(results, record, append=True))
            print(
                f"  {name:>26}: pass@1 {record['curve'][-1]['accuracy']:.3f} after {record['tokens']:,.0f} tokens, "
                f"{record['cpu_s']:.0f} CPU-s (+{record.get('eval_cpu_s', 0):.0f} evaluating), "
                f"{record.get('wall_s', math.nan):.0f} wall-s",
                flush=True,
            )
    _report(records, warm, out, kept)
