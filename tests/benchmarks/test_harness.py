"""benchmarks/harness: a setting from its preset, ``--dry`` and its field flags; the machine around a figure;
the record, the table and the plot; the intervals."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from pathlib import Path

import pytest

from benchmarks.harness import report, settings, stats
from benchmarks.harness.machine import Snapshot


@dataclasses.dataclass(frozen=True)
class Sizes:
    """A study's setting, as the studies write theirs."""

    model: str = "real"
    """The model."""
    budget_tokens: int = 1000
    """Sampled tokens per arm."""
    instruction: str | None = "Reply with the number only."
    """The answer format (None: the env's own)."""
    tempered: bool = True
    """A switch."""


def _shrink(sizes: Sizes) -> Sizes:
    return settings.dry(sizes, {"model": "tiny", "budget_tokens": 8})


def _parse(*argv: str) -> tuple[argparse.Namespace, Sizes]:
    parser = argparse.ArgumentParser(prog="study")
    parser.add_argument("--out-dir", default="out")
    presets = {"cpu": Sizes(), "big": Sizes(budget_tokens=9000)}
    parser.add_argument("--preset", default="cpu", choices=sorted(presets))
    return settings.parse(parser, Sizes, lambda args: presets[args.preset], _shrink, list(argv))


def test_the_preset_then_dry_then_the_field_flags() -> None:
    args, sizes = _parse("--preset", "big", "--out-dir", "x")
    assert (args.out_dir, sizes) == ("x", Sizes(budget_tokens=9000))
    args, sizes = _parse("--dry", "--budget-tokens", "16", "--instruction", "None", "--no-tempered")
    assert args.dry and sizes == Sizes(model="tiny", budget_tokens=16, instruction=None, tempered=False)


def test_a_mistyped_flag_or_value_is_refused_naming_the_flag(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        _parse("--budget-token", "16")
    assert "--budget-tokens" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _parse("--budget-tokens", "many")
    assert "--budget-tokens" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # an abbreviated study flag is not taken for another
        _parse("--out", "x")


def test_the_help_names_the_fields(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        _parse("--help")
    assert "--budget-tokens" in capsys.readouterr().out


def test_dry_sizes_must_name_fields() -> None:
    with pytest.raises(ValueError, match=r"name no field of Sizes: \['budget'\]"):
        settings.dry(Sizes(), {"budget": 1})


def test_a_record_keeps_the_machine_it_was_measured_on(tmp_path: Path) -> None:
    started = Snapshot()
    sum(range(10_000))
    written = report.write_record(tmp_path / "r.json", {"accuracy": 0.5}, started)
    machine = json.loads((tmp_path / "r.json").read_text())["machine"]
    assert written["machine"] == machine and machine["cpu_s"] >= 0 and machine["wall_s"] >= 0
    assert len(machine["load_start"]) == len(machine["load_end"]) == 3
    for value in (1, 2):
        report.write_record(tmp_path / "runs.jsonl", {"seed": value}, append=True)
    assert [json.loads(line)["seed"] for line in (tmp_path / "runs.jsonl").read_text().splitlines()] == [1, 2]


def test_the_table_is_markdown_with_numbers_right_aligned() -> None:
    text = report.table(("arm", "accuracy"), [("grpo", 0.5), ("sft", "0.25")], right=(1,))
    assert text.splitlines() == ["| arm | accuracy |", "| --- | ---: |", "| grpo | 0.5 |", "| sft | 0.25 |"]


def test_the_plot_draws_lines_bands_error_bars_and_levels(tmp_path: Path) -> None:
    lines = [
        report.Line(
            [0, 1, 2], [0.1, 0.2, 0.3], "a", yerr=[0, 0.05, 0.05], band=([0, 0.1, 0.2], [0.2, 0.3, 0.4])
        ),
        report.Line([2], [0.3], "", yerr=[[0.1], [0.1]]),
    ]
    report.plot(tmp_path / "p.png", lines, xlabel="tokens", ylabel="accuracy", levels=[(0.2, "chance", {})])
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_the_t_interval_over_seeds() -> None:
    mean, half = stats.t_interval([0.2, 0.4])
    assert mean == pytest.approx(0.3) and half == pytest.approx(12.706 * math.sqrt(0.02) / math.sqrt(2))
    assert math.isnan(stats.t_interval([0.5])[1])


def test_the_bootstrap_pairs_problems_and_resamples_seeds() -> None:
    right, wrong = [1] * 50, [0] * 50
    assert stats.bootstrap_difference([right, right], [wrong]) == {
        "difference": 1.0,
        "ci95": [1.0, 1.0],
        "clear_of_zero": True,
    }
    half = stats.accuracy_interval([[1, 0] * 25])
    assert half["difference"] == 0.5 and half["ci95"][0] < 0.5 < half["ci95"][1]
